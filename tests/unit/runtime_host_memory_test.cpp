// keep_freed_host_memory against glibc's own accounting (mallinfo2): a block
// far above the mmap threshold comes from the heap instead of its own mapping,
// and after free() it stays with the process, to be handed out again as it is,
// however large.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "trainer/runtime/host_memory.h"

namespace {

constexpr size_t kLarge = size_t{64} << 20;  // twice glibc's largest mmap threshold (32 MiB)
constexpr size_t kHuge = size_t{5} << 29;    // 2.5 GiB

TEST(HostMemory, LargeBlocksComeFromTheHeapAndStayThereAfterFree) {
  const size_t mapped_before = mallinfo2().hblks;
  void* block = std::malloc(kLarge);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(mallinfo2().hblks, mapped_before + 1) << "glibc's default: its own mapping";
  std::free(block);
  EXPECT_EQ(mallinfo2().hblks, mapped_before) << "and unmapped on free";

  runtime::keep_freed_host_memory();
  block = std::malloc(kLarge);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kLarge);
  EXPECT_EQ(mallinfo2().hblks, mapped_before) << "kept: from the heap";
  const size_t free_before = mallinfo2().fordblks;
  std::free(block);
  EXPECT_GE(mallinfo2().fordblks, free_before + kLarge) << "the heap was trimmed";
  void* again = std::malloc(kLarge);
  EXPECT_EQ(again, block) << "the freed block is handed out again";
  std::free(again);

  // Larger than any int threshold (2 GiB): kept too. Never written, so its
  // pages are only reserved.
  void* huge = std::malloc(kHuge);
  ASSERT_NE(huge, nullptr);
  const size_t free_before_huge = mallinfo2().fordblks;
  std::free(huge);
  EXPECT_GE(mallinfo2().fordblks, free_before_huge + kHuge) << "the heap was trimmed";
}

}  // namespace
