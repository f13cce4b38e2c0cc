#include "trainer/runtime/host_memory.h"

#include <malloc.h>

#include <stdexcept>

namespace runtime {

void keep_freed_host_memory() {
  // No block gets its own mmap (M_MMAP_MAX 0: large ones come from the heap
  // too), and free() never trims the heap's top (M_TRIM_THRESHOLD -1, as
  // mallopt(3) documents; a finite threshold, even INT_MAX, trims whenever a
  // step frees more than it at the top, and the next step faults it all in).
  if (mallopt(M_MMAP_MAX, 0) != 1 || mallopt(M_TRIM_THRESHOLD, -1) != 1)
    throw std::runtime_error("keep_freed_host_memory: malloc refused mallopt()");
}

}  // namespace runtime
