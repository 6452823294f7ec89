//===- BufferCache.h - Reusing large tensor buffers -------------*- C++ -*-===//
//
// Output tensors are allocated on every call. A large buffer comes from a
// fresh mmap each time (glibc maps allocations above its mmap threshold), so
// every call paid a page fault per 4 KiB page of each output before the
// compiled code could write it: for a 64 MiB output about as long as the
// computation itself. Buffers under glibc's mmap threshold fare no better
// when several are freed together: the heap's top then exceeds glibc's trim
// threshold and goes back to the system, and the next call faults its pages
// in again. MobileNetV3-small at batch 1 allocates about thirty buffers of
// 64 KiB to 1 MiB a call (its convolutions' inputs and outputs) and took
// 460 page faults a call, a quarter of its time. Released buffers of at
// least kMinCachedBytes are kept, up to a total (KILN_BUFFER_CACHE_BYTES,
// default 512 MiB; 0 turns the cache off), and handed back to the next
// buffer of exactly the same capacity.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_API_BUFFERCACHE_H
#define KILN_RUNTIME_LIB_API_BUFFERCACHE_H

#include <cstddef>

namespace kiln {
namespace runtime {

/// Buffers smaller than this go straight to and from malloc.
constexpr size_t kMinCachedBytes = size_t(64) << 10;

/// A 64-byte aligned buffer of `capacity` bytes, reused if one is cached;
/// NULL when out of memory. Its contents are unspecified.
void *acquireBuffer(size_t capacity);

/// Gives a buffer from acquireBuffer back: kept for reuse or freed.
void releaseBuffer(void *buffer, size_t capacity);

} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_API_BUFFERCACHE_H
