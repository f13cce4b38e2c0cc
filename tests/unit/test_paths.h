// Where tests find things: the programs, the source tree and the Python with
// torch and h5py. ctest gives them in the environment (tests/CMakeLists.txt)
// rather than compiled in, so that the tests compiled for one checkout are
// the compiler cache's for a clone in another folder.
#pragma once
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace test_paths {

// Throws (failing the test that asks) when the variable is not set.
inline std::string from_environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0')
    throw std::runtime_error(std::string(name) +
                             " is not set: run the test through ctest, which sets it, or set it "
                             "as tests/CMakeLists.txt does (docs/testing.md)");
  return value;
}

inline std::string bin_dir() { return from_environment("TEST_BIN_DIR"); }        // build/bin
inline std::string source_dir() { return from_environment("TEST_SOURCE_DIR"); }  // the checkout
inline std::string python() { return from_environment("TEST_PYTHON"); }  // with torch and h5py

}  // namespace test_paths
