// The current time in UTC, as ISO 8601 text: for files and messages, and for
// names of files and directories (no ':', which some tools and file systems
// refuse in a path).
#pragma once
#include <string>

namespace base {

std::string utc_now();           // 2026-11-26T09:14:03Z
std::string utc_now_for_path();  // 2026-11-26T09-14-03Z

}  // namespace base
