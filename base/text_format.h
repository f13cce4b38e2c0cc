// "{}" formatting for log lines and messages, without fmt in the header: the
// torch translation units include this, and LibTorch ships an fmt of its own
// that must never meet the system's (see base/logging.h).
//
//   text::format("step {:>6} | loss {:.4f} | {}", step, loss, name)
//
// A placeholder is {} or {:[[fill]align][0][width][.precision][type]}, with
// align < > ^, type d f e g s, as in fmt/std::format; {{ and }} are braces.
// Numbers align right by default, everything else left.
#pragma once
#include <array>
#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

namespace text {

// One argument, type-erased: a pointer to it and how to write it.
struct FormatArg {
  const void* value;
  void (*write)(std::ostream& out, const void* value);
  bool is_number;
};

template <class T>
void write_value(std::ostream& out, const void* value) {
  const T& v = *static_cast<const T*>(value);
  if constexpr (std::is_same_v<T, std::filesystem::path>) {
    out << v.string();  // unquoted, like fmt
  } else if constexpr (std::is_same_v<T, bool>) {
    out << (v ? "true" : "false");
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1 && !std::is_same_v<T, char>) {
    out << static_cast<int>(v);  // int8_t/uint8_t are numbers, not characters
  } else {
    out << v;
  }
}

// T as given (an array stays an array: `value` points at its characters).
template <class T>
FormatArg format_arg(const T& value) {
  constexpr bool number =
      std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>;
  return {&value, &write_value<T>, number};
}

// Throws std::invalid_argument for a malformed pattern or too few arguments.
std::string format_args(std::string_view pattern, const FormatArg* args, size_t count);

// A duration as H:MM:SS ("0:01:05"), rounded to the second.
std::string clock_time(double seconds);

template <class... Args>
std::string format(std::string_view pattern, const Args&... args) {
  const std::array<FormatArg, sizeof...(Args)> erased{format_arg(args)...};
  return format_args(pattern, erased.data(), erased.size());
}

}  // namespace text
