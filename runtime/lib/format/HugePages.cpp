//===- HugePages.cpp - Huge pages for large fresh buffers -----------------===//
//
// A module's constants are hundreds of megabytes, written once into fresh
// memory by the compiler (the pool, the body, the file's bytes) and by the
// runtime (the bytes it reads, the pool it keeps). With 4 KiB pages each
// buffer takes a fault per page, and on a loaded host the faults cost more
// than the copies; madvise(MADV_HUGEPAGE) makes it one fault per 2 MiB where
// the kernel's transparent huge pages are in "madvise" (or "always") mode.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"

#include <cstdint>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kiln {
namespace format {

void adviseHugePages(void *data, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t(2) << 20;
  if (size < 2 * kHugePage)
    return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) &
                    ~(kHugePage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(kHugePage - 1);
  // Advice only: where the kernel declines, the buffer keeps small pages.
  if (end > begin)
    (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)size;
#endif
}

} // namespace format
} // namespace kiln
