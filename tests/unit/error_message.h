// Checking errors in tests: what an action throws, and what its message names.
#pragma once
#include <exception>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace test_util {

// The message of the exception `action` throws; a test failure if it throws none.
template <typename Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// Each of `parts` must occur in `message`.
inline void expect_mentions(const std::string& message, const std::vector<std::string>& parts) {
  for (const auto& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

}  // namespace test_util
