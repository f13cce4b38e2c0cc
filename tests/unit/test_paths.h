// Where tests find things: the programs, the source tree and the Python with
// torch and h5py. ctest gives them in the environment (tests/CMakeLists.txt)
// rather than compiled in, so that the tests compiled for one checkout are
// the compiler cache's for a clone in another folder.
#pragma once
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace test_paths {

inline std::string from_environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0')
    throw std::runtime_error(std::string(name) +
                             " is not set: run the test through ctest, which sets it");
  return value;
}

inline const std::string kBinDir = from_environment("TEST_BIN_DIR");
inline const std::string kSourceDir = from_environment("TEST_SOURCE_DIR");
inline const std::string kPython = from_environment("TEST_PYTHON");

}  // namespace test_paths
