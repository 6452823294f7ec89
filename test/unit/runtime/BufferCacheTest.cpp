//===- BufferCacheTest.cpp - Buffers reused without page faults -----------===//

#include "api/BufferCache.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstring>
#include <vector>

namespace {

/// Minor page faults this thread has taken so far.
long minorFaults() {
  struct rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

/// Acquires `count` buffers of `bytes`, writes every byte of each, and
/// releases them all: a call's intermediates, freed together at its end.
void oneCall(size_t count, size_t bytes) {
  std::vector<void *> buffers;
  for (size_t i = 0; i < count; ++i) {
    void *buffer = kiln::runtime::acquireBuffer(bytes);
    ASSERT_NE(buffer, nullptr);
    std::memset(buffer, int(i), bytes);
    buffers.push_back(buffer);
  }
  for (void *buffer : buffers)
    kiln::runtime::releaseBuffer(buffer, bytes);
}

} // namespace

// A call that allocates the same buffers as the call before it gets them
// back without a page fault. Below 1 MiB these came from malloc, and glibc
// returned the heap's top to the system when a call freed them together:
// every call faulted each page in again (eight 192 KiB buffers, 384 faults
// a call).
TEST(BufferCacheTest, RepeatedCallsTakeNoPageFaults) {
  for (size_t bytes : {size_t(64) << 10, size_t(192) << 10, size_t(900) << 10,
                       size_t(3) << 20}) {
    oneCall(8, bytes);
    long before = minorFaults();
    for (int call = 0; call < 20; ++call)
      oneCall(8, bytes);
    EXPECT_LE(minorFaults() - before, 8)
        << "20 calls of eight " << bytes << "-byte buffers";
  }
}

// Exact capacities only: a smaller request does not take a larger cached
// buffer (its capacity would be lost to the cache's accounting), and buffers
// below the threshold are not kept.
TEST(BufferCacheTest, HandsBackOnlyTheSameCapacity) {
  // A capacity no other test caches.
  size_t bytes = kiln::runtime::kMinCachedBytes + 7 * 4096;
  void *first = kiln::runtime::acquireBuffer(bytes);
  ASSERT_NE(first, nullptr);
  kiln::runtime::releaseBuffer(first, bytes);
  void *same = kiln::runtime::acquireBuffer(bytes);
  EXPECT_EQ(same, first);
  kiln::runtime::releaseBuffer(same, bytes);
  void *larger = kiln::runtime::acquireBuffer(bytes + 64);
  EXPECT_NE(larger, first);
  kiln::runtime::releaseBuffer(larger, bytes + 64);
}
