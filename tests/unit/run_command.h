// Runs a shell command from a test and captures what it printed.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace test_util {

struct CommandResult {
  int status;          // exit status, -1 if it did not exit normally
  std::string output;  // stdout and stderr
};

inline CommandResult run_command(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed: " + command};
  std::string output;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace test_util
