#include "trainer/runtime/host_memory.h"

#include "trainer/runtime/cgroup_memory.h"

#include <malloc.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace runtime {

void keep_freed_host_memory() {
  // No block gets its own mmap (M_MMAP_MAX 0: large ones come from the heap
  // too), and free() never trims the heap's top (M_TRIM_THRESHOLD -1, as
  // mallopt(3) documents; a finite threshold, even INT_MAX, trims whenever a
  // step frees more than it at the top, and the next step faults it all in).
  if (mallopt(M_MMAP_MAX, 0) != 1 || mallopt(M_TRIM_THRESHOLD, -1) != 1)
    throw std::runtime_error("keep_freed_host_memory: malloc refused mallopt()");
}

void require_host_memory(double bytes, const std::string& what) {
  std::ifstream meminfo("/proc/meminfo");
  double available_kib = -1;
  for (std::string key; meminfo >> key;) {
    if (key == "MemAvailable:") {
      meminfo >> available_kib;
      break;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  char message[512];
  if (const auto limit = cgroup_memory_limit(); limit && bytes > limit->bytes) {
    std::snprintf(message, sizeof(message),
                  " needs at least %.3g GiB, and this process's cgroup %s allows %.3g GiB (its %s; "
                  "under Slurm: --mem or --mem-per-cpu)",
                  bytes / (1 << 30), limit->cgroup.c_str(), limit->bytes / (1 << 30),
                  limit->file.c_str());
    throw std::runtime_error(what + message);
  }
  if (available_kib < 0 || bytes <= available_kib * 1024) return;
  std::snprintf(message, sizeof(message),
                " needs at least %.3g GiB, and this host has %.3g GiB available", bytes / (1 << 30),
                available_kib / (1 << 20));
  throw std::runtime_error(what + message);
}

}  // namespace runtime
