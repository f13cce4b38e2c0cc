#include "trainer/runtime/host_memory.h"

#include <malloc.h>

#include <climits>
#include <stdexcept>

namespace runtime {

void keep_freed_host_memory() {
  // No block gets its own mmap (M_MMAP_MAX 0: large ones come from the heap
  // too), and free() never trims the heap's top (M_TRIM_THRESHOLD: INT_MAX, 2 GiB).
  if (mallopt(M_MMAP_MAX, 0) != 1 || mallopt(M_TRIM_THRESHOLD, INT_MAX) != 1)
    throw std::runtime_error("keep_freed_host_memory: malloc refused mallopt()");
}

}  // namespace runtime
