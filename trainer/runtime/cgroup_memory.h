// The memory limit of the control groups this process runs in: what a batch
// system gives a job (Slurm's --mem or --mem-per-cpu, enforced by its cgroup
// plugin; a container's memory limit). Past it the kernel's OOM killer ends
// the process (Slurm: OUT_OF_MEMORY, exit 137) without a word, however much
// memory the host has free.
//
// The hierarchy is found as the kernel describes it: /proc/self/mountinfo
// names where the cgroup file system is mounted and which of its directories
// the mount shows (a container sees its own cgroup as the root);
// /proc/self/cgroup names this process's cgroup. Both versions: cgroup v1's
// memory controller (memory.limit_in_bytes) where it is mounted, else
// cgroup v2 (memory.max). A limit applies to a cgroup and everything below
// it, so the one that binds is the least from this process's cgroup up to
// the mount's root (v1: up to a parent with memory.use_hierarchy 0, which
// does not count its children). Where no mount shows this process's cgroup
// (outside its cgroup namespace: "/../x") nothing is read: a limit of
// another cgroup would be no limit of this process's.
#pragma once
#include <optional>
#include <string>

namespace runtime {

struct CgroupMemoryLimit {
  double bytes = 0;
  std::string cgroup;  // the cgroup that sets it, as /proc/self/cgroup names cgroups
  std::string file;    // memory.limit_in_bytes or memory.max
};

// The least memory limit over this process's cgroup and those above it;
// nullopt where none is set or the files cannot be read. The two files are
// parameters for tests.
std::optional<CgroupMemoryLimit> cgroup_memory_limit(
    const std::string& mountinfo = "/proc/self/mountinfo",
    const std::string& self_cgroup = "/proc/self/cgroup");

}  // namespace runtime
