#include "data_pipeline/utf8.h"

#include <cstdint>
#include <stdexcept>

namespace data {
namespace {

struct CodePoint {
  size_t length = 0;  // bytes; 0: not valid UTF-8
  char32_t value = 0;
};

CodePoint decode_at(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[pos + i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return {1, lead};  // 0xxxxxxx: ASCII
  size_t length;                      // of a lead 110xxxxx, 1110xxxx or 11110xxx
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
  } else {
    return {};  // a continuation byte, or 0xF8..0xFF
  }
  char32_t value = lead & (0x7F >> length);  // the lead's x bits
  if (pos + length > text.size()) return {};
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return {};  // 10xxxxxx
    value = (value << 6) | (byte(i) & 0x3F);
  }
  static constexpr char32_t kMinValue[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool overlong = value < kMinValue[length];
  const bool surrogate = value >= 0xD800 && value <= 0xDFFF;
  if (overlong || surrogate || value > 0x10FFFF) return {};
  return {length, value};
}

// The code point at text[pos]; throws on invalid UTF-8 there.
CodePoint checked_decode_at(std::string_view text, size_t pos) {
  const CodePoint point = decode_at(text, pos);
  if (point.length == 0) {
    throw std::invalid_argument("invalid UTF-8 at byte " + std::to_string(pos));
  }
  return point;
}

}  // namespace

size_t code_point_length(std::string_view text, size_t pos) { return decode_at(text, pos).length; }

size_t find_invalid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = code_point_length(text, pos);
    if (length == 0) return pos;
    pos += length;
  }
  return std::string_view::npos;
}

std::vector<std::string_view> split_code_points(std::string_view text) {
  std::vector<std::string_view> points;
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = checked_decode_at(text, pos).length;
    points.push_back(text.substr(pos, length));
    pos += length;
  }
  return points;
}

std::u32string decode_utf8(std::string_view text) {
  std::u32string points;
  for (size_t pos = 0; pos < text.size();) {
    const CodePoint point = checked_decode_at(text, pos);
    points.push_back(point.value);
    pos += point.length;
  }
  return points;
}

std::string encode_utf8(std::u32string_view points) {
  std::string text;
  for (const char32_t c : points) {
    if (c < 0x80) {  // 0xxxxxxx
      text.push_back(static_cast<char>(c));
    } else if (c < 0x800) {  // 110xxxxx 10xxxxxx
      text.push_back(static_cast<char>(0xC0 | (c >> 6)));
      text.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {  // 1110xxxx 10xxxxxx 10xxxxxx
      text.push_back(static_cast<char>(0xE0 | (c >> 12)));
      text.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      text.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {  // 11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
      text.push_back(static_cast<char>(0xF0 | (c >> 18)));
      text.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      text.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      text.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return text;
}

}  // namespace data
