#include "base/text_format.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace text {
namespace {

struct Spec {
  char fill = ' ';
  char align = 0;  // '<', '>', '^', or 0: by the argument's kind
  bool zero_pad = false;
  int width = 0;
  int precision = -1;
  char type = 0;
};

[[noreturn]] void bad_pattern(std::string_view pattern, const std::string& why) {
  throw std::invalid_argument("format pattern \"" + std::string(pattern) + "\": " + why);
}

int parse_int(std::string_view spec, size_t& i) {
  int value = 0;
  while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])))
    value = value * 10 + (spec[i++] - '0');
  return value;
}

bool is_align(char c) { return c == '<' || c == '>' || c == '^'; }

Spec parse_spec(std::string_view pattern, std::string_view spec) {
  Spec s;
  size_t i = 0;
  if (spec.size() >= 2 && is_align(spec[1])) {
    s.fill = spec[0];
    s.align = spec[1];
    i = 2;
  } else if (!spec.empty() && is_align(spec[0])) {
    s.align = spec[0];
    i = 1;
  }
  if (i < spec.size() && spec[i] == '0') {
    s.zero_pad = true;
    ++i;
  }
  s.width = parse_int(spec, i);
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    s.precision = parse_int(spec, i);
  }
  if (i < spec.size()) s.type = spec[i++];
  if (i != spec.size() ||
      (s.type && std::string_view("dfegs").find(s.type) == std::string_view::npos))
    bad_pattern(pattern, "unsupported spec '" + std::string(spec) + "'");
  return s;
}

std::string render(const FormatArg& arg, const Spec& s) {
  std::ostringstream out;
  if (s.type == 'f') out << std::fixed;
  if (s.type == 'e') out << std::scientific;
  if (s.precision >= 0) out << std::setprecision(s.precision);
  arg.write(out, arg.value);
  std::string body = out.str();
  if (static_cast<int>(body.size()) >= s.width) return body;
  const size_t pad = s.width - body.size();
  if (s.zero_pad && arg.is_number && !s.align) {
    const size_t sign = (!body.empty() && (body[0] == '-' || body[0] == '+')) ? 1 : 0;
    return body.insert(sign, pad, '0');
  }
  const char align = s.align ? s.align : (arg.is_number ? '>' : '<');
  if (align == '>') return std::string(pad, s.fill) + body;
  if (align == '<') return body + std::string(pad, s.fill);
  return std::string(pad / 2, s.fill) + body + std::string(pad - pad / 2, s.fill);
}

}  // namespace

std::string format_args(std::string_view pattern, const FormatArg* args, size_t count) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if ((c == '{' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') bad_pattern(pattern, "unmatched '}'");
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = pattern.find('}', i);
    if (close == std::string_view::npos) bad_pattern(pattern, "unmatched '{'");
    std::string_view field = pattern.substr(i + 1, close - i - 1);
    if (!field.empty() && field[0] != ':')
      bad_pattern(pattern, "only automatic indexing ({}) is supported");
    if (next == count) bad_pattern(pattern, "more placeholders than arguments");
    out += render(args[next++], parse_spec(pattern, field.empty() ? field : field.substr(1)));
    i = close;
  }
  return out;
}

std::string clock_time(double seconds) {
  const auto s = static_cast<int64_t>(std::llround(seconds));
  return format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace text
