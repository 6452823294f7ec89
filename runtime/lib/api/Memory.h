//===- Memory.h - Counting the buffers compiled code allocates --*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_API_MEMORY_H
#define KILN_RUNTIME_LIB_API_MEMORY_H

#include "kiln/runtime.h"

namespace kiln {
namespace runtime {
class NativeLibrary;

/// Fills the allocation slots of kiln/MemoryAbi.h that `library` exports
/// with the process's counting allocator. A library that exports neither
/// is left alone (a CUDA module's host code, an older module); one that
/// exports only one of the two is an invalid module, since its blocks
/// would be freed by a function that did not allocate them.
kiln_status_t bindMemorySlots(const NativeLibrary &library);

} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_API_MEMORY_H
