//===- BufferCache.cpp - Reusing large tensor buffers ----------------------===//

#include "BufferCache.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace kiln {
namespace runtime {

namespace {

constexpr size_t kAlignment = 64;

size_t cacheLimit() {
  static const size_t limit = [] {
    const char *text = std::getenv("KILN_BUFFER_CACHE_BYTES");
    if (!text || !*text)
      return size_t(512) << 20;
    char *end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    return *end ? size_t(512) << 20 : static_cast<size_t>(value);
  }();
  return limit;
}

struct Cache {
  std::mutex mutex;
  std::multimap<size_t, void *> buffers; // capacity -> buffer
  size_t bytes = 0;
};

Cache &cache() {
  // Never destroyed: tensors may be released from other static destructors.
  static Cache *instance = new Cache();
  return *instance;
}

} // namespace

void *acquireBuffer(size_t capacity) {
  if (capacity >= kMinCachedBytes) {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.buffers.find(capacity);
    if (it != c.buffers.end()) {
      void *buffer = it->second;
      c.buffers.erase(it);
      c.bytes -= capacity;
      return buffer;
    }
  }
  return std::aligned_alloc(kAlignment, capacity);
}

void releaseBuffer(void *buffer, size_t capacity) {
  if (!buffer)
    return;
  if (capacity >= kMinCachedBytes) {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.bytes + capacity <= cacheLimit()) {
      c.buffers.emplace(capacity, buffer);
      c.bytes += capacity;
      return;
    }
  }
  std::free(buffer);
}

} // namespace runtime
} // namespace kiln
