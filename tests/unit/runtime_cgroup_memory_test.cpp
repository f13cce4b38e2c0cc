// cgroup_memory_limit on hand-written trees laid out as the kernel lays them
// out (mountinfo(5), cgroup(7)): v1's memory controller and v2, a limit set
// above the process's cgroup, a container's mount of its own subtree, no
// limit ("max", v1's largest value), and nothing to read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "temp_dir_test.h"
#include "trainer/runtime/cgroup_memory.h"

namespace {

namespace fs = std::filesystem;

// v1's "no limit": the largest page-aligned int64.
const std::string kNone = "9223372036854771712";

class CgroupMemoryLimit : public test_util::TempDirTest {
 protected:
  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  // A mountinfo of a host with cgroup v1 (memory among other controllers)
  // and v2's unified hierarchy beside it, or v2 alone, mounted under dir_.
  std::string v1_mountinfo(const std::string& memory_root = "/") {
    return "31 23 0:28 / " + (dir_ / "cg").string() +
           " rw,relatime - tmpfs tmpfs rw,mode=755\n"
           "32 31 0:29 / " +
           (dir_ / "cg/cpu").string() +
           " rw,relatime shared:9 - cgroup cgroup rw,cpu\n"
           "35 31 0:32 " +
           memory_root + " " + (dir_ / "cg/memory").string() +
           " rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,memory\n"
           "41 31 0:38 / " +
           (dir_ / "cg/unified").string() + " rw,relatime - cgroup2 cgroup2 rw\n";
  }
  // v1 limits: {cgroup below the memory hierarchy's root, memory.limit_in_bytes}.
  void v1_limits(const std::vector<std::pair<std::string, std::string>>& limits) {
    for (const auto& [cgroup, bytes] : limits)
      write(dir_ / ("cg/memory" + cgroup) / "memory.limit_in_bytes", bytes + "\n");
  }
  std::string v2_mountinfo() {
    return "30 24 0:26 / " + (dir_ / "cg").string() +
           " rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
  }
  std::optional<runtime::CgroupMemoryLimit> limit(const std::string& mountinfo,
                                                  const std::string& self_cgroup) {
    write(dir_ / "mountinfo", mountinfo);
    write(dir_ / "cgroup", self_cgroup);
    return runtime::cgroup_memory_limit((dir_ / "mountinfo").string(), (dir_ / "cgroup").string());
  }
};

// Slurm's cgroup v1 layout: the job's limit (4 GiB) binds, its step's (8 GiB)
// and the task's (none) do not.
TEST_F(CgroupMemoryLimit, V1TheLeastFromTheProcesssCgroupUp) {
  v1_limits({{"", kNone},
             {"/slurm", kNone},
             {"/slurm/uid_0/job_7", "4294967296"},
             {"/slurm/uid_0/job_7/step_0", "8589934592"},
             {"/slurm/uid_0/job_7/step_0/task_1", kNone}});
  write(dir_ / "cg/unified/memory.max", "1024\n");  // not the memory controller's hierarchy
  const auto found = limit(v1_mountinfo(),
                           "12:cpu,cpuacct:/slurm/uid_0/job_7/step_0/task_1\n"
                           "4:memory:/slurm/uid_0/job_7/step_0/task_1\n"
                           "0::/\n");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->bytes, 4294967296.0);
  EXPECT_EQ(found->cgroup, "/slurm/uid_0/job_7");
  EXPECT_EQ(found->file, "memory.limit_in_bytes");
}

// A container whose mount shows its own cgroup (/docker/abc) as the root.
TEST_F(CgroupMemoryLimit, V1AMountOfTheProcesssOwnSubtree) {
  v1_limits({{"", "2147483648"}});
  const auto found = limit(v1_mountinfo("/docker/abc"), "4:memory:/docker/abc\n");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->bytes, 2147483648.0);
  EXPECT_EQ(found->cgroup, "/docker/abc");
}

TEST_F(CgroupMemoryLimit, V2MemoryMaxAndNoLimit) {
  write(dir_ / "cg/user.slice/memory.max", "max\n");
  write(dir_ / "cg/user.slice/job/memory.max", "1073741824\n");
  write(dir_ / "cg/user.slice/job/task/memory.max", "max\n");
  const auto found = limit(v2_mountinfo(), "0::/user.slice/job/task\n");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->bytes, 1073741824.0);
  EXPECT_EQ(found->cgroup, "/user.slice/job");
  EXPECT_EQ(found->file, "memory.max");

  write(dir_ / "cg/user.slice/job/memory.max", "max\n");
  EXPECT_FALSE(limit(v2_mountinfo(), "0::/user.slice/job/task\n"));
}

// mountinfo lines with no optional field and with two; a space in a path
// written as \040; the process in the hierarchy's root.
TEST_F(CgroupMemoryLimit, MountinfoAsTheKernelWritesIt) {
  write(dir_ / "c g/memory.max", "536870912\n");
  const std::string mountinfo =
      "22 1 0:21 / /proc rw - proc proc rw\n"
      "30 24 0:26 / " +
      (dir_ / "c\\040g").string() + " rw,nosuid shared:4 master:1 - cgroup2 cgroup2 rw\n";
  const auto found = limit(mountinfo, "0::/\n");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->bytes, 536870912.0);
  EXPECT_EQ(found->cgroup, "/");
}

// v1 with memory.use_hierarchy 0 above the process: that parent's limit
// does not bind it.
TEST_F(CgroupMemoryLimit, V1AParentThatDoesNotCountItsChildren) {
  v1_limits({{"", kNone}, {"/a", "1073741824"}, {"/a/b", kNone}});
  write(dir_ / "cg/memory/a/memory.use_hierarchy", "0\n");
  EXPECT_FALSE(limit(v1_mountinfo(), "4:memory:/a/b\n"));
  write(dir_ / "cg/memory/a/memory.use_hierarchy", "1\n");
  EXPECT_EQ(limit(v1_mountinfo(), "4:memory:/a/b\n")->bytes, 1073741824.0);
}

// A cgroup that no mount shows (outside the cgroup namespace, or under
// another subtree than the mount's): the mount root's limit is not its.
TEST_F(CgroupMemoryLimit, NoneForACgroupNoMountShows) {
  v1_limits({{"", "1073741824"}});
  EXPECT_FALSE(limit(v1_mountinfo("/docker/abc"), "4:memory:/docker/other\n"));
  EXPECT_FALSE(limit(v1_mountinfo(), "4:memory:/../elsewhere\n"));
}

TEST_F(CgroupMemoryLimit, NothingToRead) {
  EXPECT_FALSE(limit("", ""));
  EXPECT_FALSE(limit(v2_mountinfo(), "0::/gone\n"));  // no memory.max anywhere
  EXPECT_FALSE(runtime::cgroup_memory_limit((dir_ / "none").string(), (dir_ / "none").string()));
}

}  // namespace
