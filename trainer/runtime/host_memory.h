// Host memory that a training step frees stays with the process for the next
// step's tensors.
//
// glibc's malloc serves every block above its mmap threshold (at most 32 MiB)
// with a fresh mmap and unmaps it again on free. A CPU training step allocates
// and frees such tensors over and over (paper-base, 1024 target tokens: the
// logits and their gradient, the embeddings' and generator's gradients,
// attention's products); every one of them page-faults all of its pages back
// in, each zero-filled by the kernel — the same ~hundreds of MB every step.
// keep_freed_host_memory() has malloc take every block from its heap instead
// and never give the heap's top back to the kernel: the freed blocks are
// reused as they are, at the price of the process keeping its peak heap (the
// resident set grows by ~10% for paper-base). PyTorch's CPU performance
// guides get the same from jemalloc or tcmalloc loaded with LD_PRELOAD.
#pragma once
#include <string>

namespace runtime {

// Before the first large allocation. Throws std::runtime_error if malloc refuses.
void keep_freed_host_memory();

// Throws std::runtime_error naming `what` when `bytes` exceed the memory
// limit of this process's cgroups (cgroup_memory.h: Slurm's --mem) or the
// host's MemAvailable (/proc/meminfo): Linux overcommits, so an allocation
// far beyond either is granted and the process killed (exit 137, no
// message) once it is touched. Does nothing where neither can be read. A
// bound for absurd sizes (a mistyped d_model or max_positions), not a
// budget: it compares with the whole limit, not with what the cgroup has
// left (its usage counts page cache the kernel would reclaim), and does not
// see the other ranks of the node building their models at the same time.
void require_host_memory(double bytes, const std::string& what);

}  // namespace runtime
