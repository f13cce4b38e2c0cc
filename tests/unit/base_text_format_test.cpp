// text::format (base/text_format.h) against printf, the reference for
// widths, precision and alignment of numbers, and hand-written cases for text.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "base/text_format.h"

namespace {

std::string printf_text(const char* spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

std::string printf_int(const char* spec, long value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

TEST(TextFormat, NumbersAsPrintfWritesThem) {
  for (double v : {0.0, 3.14159265, -2.5, 1234567.891, 1e-7, 6.02e23}) {
    EXPECT_EQ(text::format("{:.4f}", v), printf_text("%.4f", v)) << v;
    EXPECT_EQ(text::format("{:8.3f}", v), printf_text("%8.3f", v)) << v;
    EXPECT_EQ(text::format("{:.3e}", v), printf_text("%.3e", v)) << v;
    EXPECT_EQ(text::format("{:.0f}", v), printf_text("%.0f", v)) << v;
    EXPECT_EQ(text::format("{:g}", v), printf_text("%g", v)) << v;
  }
  for (long v : {0L, 7L, -42L, 123456L}) {
    EXPECT_EQ(text::format("{:>6}", v), printf_int("%6ld", v)) << v;
    EXPECT_EQ(text::format("{:05d}", v), printf_int("%05ld", v)) << v;
    EXPECT_EQ(text::format("{:<4}|", v), printf_int("%-4ld", v) + "|") << v;
    EXPECT_EQ(text::format("{}", v), printf_int("%ld", v)) << v;
  }
}

TEST(TextFormat, TextAndPlaceholders) {
  EXPECT_EQ(text::format("{} of {}: {}", 3, 10, "done"), "3 of 10: done");
  EXPECT_EQ(text::format("{:5}|", "ab"), "ab   |");  // text aligns left by default
  EXPECT_EQ(text::format("{:>5}|{:^6}|{:*<4}", "ab", "mid", "x"), "   ab| mid  |x***");
  EXPECT_EQ(text::format("{{}} {}", true), "{} true");
  EXPECT_EQ(text::format("{}", std::filesystem::path("runs/a b")), "runs/a b");
  EXPECT_EQ(text::format("{}", std::string("x")), "x");
  EXPECT_EQ(text::format("no placeholders"), "no placeholders");
}

TEST(TextFormat, ClockTime) {
  EXPECT_EQ(text::clock_time(0), "0:00:00");
  EXPECT_EQ(text::clock_time(65.4), "0:01:05");
  EXPECT_EQ(text::clock_time(3725.6), "1:02:06");
  EXPECT_EQ(text::clock_time(100 * 3600), "100:00:00");
}

TEST(TextFormat, MalformedPatternsAreErrors) {
  EXPECT_THROW(text::format("{} {}", 1), std::invalid_argument);
  EXPECT_THROW(text::format("{", 1), std::invalid_argument);
  EXPECT_THROW(text::format("}", 1), std::invalid_argument);
  EXPECT_THROW(text::format("{0}", 1), std::invalid_argument);
  EXPECT_THROW(text::format("{:q}", 1), std::invalid_argument);
}

}  // namespace
