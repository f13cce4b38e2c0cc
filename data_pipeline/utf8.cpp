#include "data_pipeline/utf8.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace data {

size_t code_point_length(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[pos + i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;  // 0xxxxxxx: ASCII
  size_t length;              // of a lead 110xxxxx, 1110xxxx or 11110xxx
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
  } else {
    return 0;  // a continuation byte, or 0xF8..0xFF
  }
  uint32_t value = lead & (0x7F >> length);  // the lead's x bits
  if (pos + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;  // 10xxxxxx
    value = (value << 6) | (byte(i) & 0x3F);
  }
  static constexpr uint32_t kMinValue[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool overlong = value < kMinValue[length];
  const bool surrogate = value >= 0xD800 && value <= 0xDFFF;
  return (overlong || surrogate || value > 0x10FFFF) ? 0 : length;
}

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
    const size_t length = code_point_length(text, pos);
    if (length == 0) {
      throw std::invalid_argument("invalid UTF-8 at byte " + std::to_string(pos));
    }
    points.push_back(text.substr(pos, length));
    pos += length;
  }
  return points;
}

}  // namespace data
