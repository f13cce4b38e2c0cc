#include "trainer/runtime/cgroup_memory.h"

#include <exception>
#include <fstream>
#include <sstream>
#include <vector>

namespace runtime {

namespace {

// Where a cgroup hierarchy is mounted: `mount_point` shows the hierarchy's
// directory `root` ("/" unless the mount shows a subtree).
struct Mount {
  std::string mount_point, root;
};

// mountinfo(5) writes a space, tab, newline or backslash in a path as \ooo.
std::string unescape(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '\\' && i + 4 <= path.size() &&
        path.find_first_not_of("01234567", i + 1) >= i + 4) {
      out += static_cast<char>(std::stoi(path.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += path[i];
    }
  }
  return out;
}

// mountinfo(5) lines: ID parent major:minor root mount-point options
// [optional fields...] - fstype source super-options. v1: the cgroup mounts
// whose super-options list `memory`; v2: the cgroup2 mounts.
std::vector<Mount> find_mounts(const std::string& mountinfo, bool v1) {
  std::vector<Mount> mounts;
  std::ifstream in(mountinfo);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, mount_point, word;
    fields >> id >> parent >> device >> root >> mount_point;
    while (fields >> word && word != "-") {
    }
    std::string fstype, source, options;
    fields >> fstype >> source >> options;
    if ((v1 && fstype == "cgroup" && ("," + options + ",").find(",memory,") != std::string::npos) ||
        (!v1 && fstype == "cgroup2"))
      mounts.push_back(Mount{unescape(mount_point), unescape(root)});
  }
  return mounts;
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

// The first word of a file, if it can be read.
std::optional<std::string> read_word(const std::string& file) {
  std::ifstream in(file);
  std::string word;
  if (in >> word) return word;
  return std::nullopt;
}

// A limit file's value: bytes, or nullopt for none ("max" in v2; v1 writes
// the largest page-aligned int64, ~9.2e18, and such values mean none either).
std::optional<double> read_limit(const std::string& file) {
  const auto value = read_word(file);
  if (!value || *value == "max") return std::nullopt;
  try {
    const double bytes = std::stod(*value);
    if (bytes >= 1e18) return std::nullopt;
    return bytes;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Whether `root` is `path` or a directory above it.
bool is_at_or_above(const std::string& root, const std::string& path) {
  if (root == "/") return true;
  return path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

}  // namespace

std::optional<CgroupMemoryLimit> cgroup_memory_limit(const std::string& mountinfo,
                                                     const std::string& self_cgroup) {
  for (const bool v1 : {true, false}) {
    const auto cgroup = find_cgroup(self_cgroup, v1);
    const auto mounts = find_mounts(mountinfo, v1);
    if (!cgroup || mounts.empty()) continue;
    // A cgroup outside this process's cgroup namespace shows as "/../x": no
    // directory of ours to read.
    if (cgroup->empty() || (*cgroup)[0] != '/' || (*cgroup + "/").find("/../") != std::string::npos)
      return std::nullopt;
    // The mount that shows the cgroup: its root at or above it, the deepest
    // such root. None: the cgroup is not under any mount, nothing to read.
    const Mount* mount = nullptr;
    for (const auto& m : mounts)
      if (is_at_or_above(m.root, *cgroup) && (!mount || m.root.size() > mount->root.size()))
        mount = &m;
    if (!mount) return std::nullopt;
    const std::string root = mount->root == "/" ? "" : mount->root;
    const std::string file = v1 ? "memory.limit_in_bytes" : "memory.max";
    std::optional<CgroupMemoryLimit> least;
    // This cgroup, then each one above it up to the mount's root; `dir` is
    // the path below the root ("" for the root itself).
    std::string dir = cgroup->substr(root.size());
    if (dir == "/") dir.clear();
    for (;;) {
      const auto limit = read_limit(mount->mount_point + dir + "/" + file);
      const std::string name = root + dir;
      if (limit && (!least || *limit < least->bytes))
        least = CgroupMemoryLimit{*limit, name.empty() ? "/" : name, file};
      if (dir.empty()) break;
      const std::string parent = dir.substr(0, dir.rfind('/'));
      // v1 with memory.use_hierarchy 0 (kernels before 5.16 allowed it): the
      // parent does not count its children, its limit does not bind them.
      if (v1 && read_word(mount->mount_point + parent + "/memory.use_hierarchy") == "0") break;
      dir = parent;
    }
    return least;
  }
  return std::nullopt;
}

}  // namespace runtime
