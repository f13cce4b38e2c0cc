#include "trainer/runtime/cgroup_memory.h"

#include <exception>
#include <fstream>
#include <sstream>

namespace runtime {

namespace {

// Where a cgroup hierarchy is mounted: `mount_point` shows the hierarchy's
// directory `root` ("/" unless the mount shows a subtree).
struct Mount {
  std::string mount_point, root;
};

// mountinfo(5) lines: ID parent major:minor root mount-point options
// [optional fields...] - fstype source super-options. v1: the cgroup mount
// whose super-options list `memory`; v2: the cgroup2 mount.
std::optional<Mount> find_mount(const std::string& mountinfo, bool v1) {
  std::ifstream in(mountinfo);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, mount_point, word;
    fields >> id >> parent >> device >> root >> mount_point;
    while (fields >> word && word != "-") {
    }
    std::string fstype, source, options;
    fields >> fstype >> source >> options;
    if (v1 && fstype == "cgroup" && ("," + options + ",").find(",memory,") != std::string::npos)
      return Mount{mount_point, root};
    if (!v1 && fstype == "cgroup2") return Mount{mount_point, root};
  }
  return std::nullopt;
}

// cgroup(7) lines of /proc/self/cgroup: hierarchy-ID:controllers:path. v1:
// the line whose controllers list `memory`; v2: the line "0::path".
std::optional<std::string> find_cgroup(const std::string& self_cgroup, bool v1) {
  std::ifstream in(self_cgroup);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (v1 && ("," + controllers + ",").find(",memory,") != std::string::npos) return path;
    if (!v1 && line.compare(0, first, "0") == 0 && controllers.empty()) return path;
  }
  return std::nullopt;
}

// A limit file's value: bytes, or nullopt for none ("max" in v2; v1 writes
// the largest page-aligned int64, ~9.2e18, and such values mean none either).
std::optional<double> read_limit(const std::string& file) {
  std::ifstream in(file);
  std::string value;
  if (!(in >> value) || value == "max") return std::nullopt;
  try {
    const double bytes = std::stod(value);
    if (bytes >= 1e18) return std::nullopt;
    return bytes;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<CgroupMemoryLimit> cgroup_memory_limit(const std::string& mountinfo,
                                                     const std::string& self_cgroup) {
  for (const bool v1 : {true, false}) {
    const auto mount = find_mount(mountinfo, v1);
    const auto cgroup = find_cgroup(self_cgroup, v1);
    if (!mount || !cgroup) continue;
    // The cgroup's directory under the mount point: its path below the
    // mount's root (the mount's root itself if it is not below it).
    std::string below = "/";
    const std::string root = mount->root == "/" ? "" : mount->root;
    if (cgroup->compare(0, root.size(), root) == 0 &&
        (cgroup->size() == root.size() || (*cgroup)[root.size()] == '/'))
      below = cgroup->size() == root.size() ? "/" : cgroup->substr(root.size());
    const std::string file = v1 ? "memory.limit_in_bytes" : "memory.max";
    std::optional<CgroupMemoryLimit> least;
    for (std::string dir = below;;) {  // this cgroup, then each one above it
      const auto limit = read_limit(mount->mount_point + (dir == "/" ? "" : dir) + "/" + file);
      if (limit && (!least || *limit < least->bytes))
        least = CgroupMemoryLimit{*limit, root + (dir == "/" && !root.empty() ? "" : dir), file};
      if (dir == "/") break;
      const auto slash = dir.rfind('/');
      dir = slash == 0 ? "/" : dir.substr(0, slash);
    }
    return least;
  }
  return std::nullopt;
}

}  // namespace runtime
