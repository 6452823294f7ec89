//===- HostBuffers.h - Buffers only the host code touches -------*- C++ -*-===//
//
// The deallocation pipeline lowers ownership to bookkeeping the host code
// does itself: small buffers of base pointers and ownership flags, filled
// with memref.store, passed to a private helper function and read back
// with memref.load. No kernel ever reads them, so they stay ordinary host
// memory: their stores do not become kernels, their loads need no wait
// for the stream, and they are not allocated as device-visible memory.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_HOSTBUFFERS_H
#define KILN_BACKENDS_CUDA_HOSTBUFFERS_H

#include "mlir/IR/Value.h"

namespace mlir {
namespace kiln {

/// Whether every use of `buffer`, followed through casts and into the
/// functions it is passed to, is host code that loads, stores, measures,
/// describes or frees it, outside any kernel.
bool isHostOnlyBuffer(Value buffer);

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_CUDA_HOSTBUFFERS_H
