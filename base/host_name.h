// This machine's host name, as messages and file names give it.
#pragma once
#include <unistd.h>

#include <string>

namespace base {

inline std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? name : "(unknown host)";
}

}  // namespace base
