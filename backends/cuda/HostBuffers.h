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

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace kiln {

/// Whether every use of `buffer`, followed through casts and into the
/// functions it is passed to, is host code that loads, stores, measures,
/// describes or frees it, outside any kernel; its address taken counts only
/// where it stays a number (not a pointer handed to a library call).
bool isHostOnlyBuffer(Value buffer);

/// The buffers of a module whose elements its host code reads or writes
/// itself (memref.load, memref.store, a host memref.copy, or any use this
/// analysis does not know), as opposed to buffers that only kernels,
/// stream-ordered copies (gpu.memcpy, gpu.memset) and the runtime's
/// library calls touch. A buffer is followed through views, loop-carried
/// values, branches, calls and returns: values that may hold the same
/// buffer form one class, and a class is host-touched when any member is.
/// Only buffers that are not host-touched can live in device memory.
class HostTouchedBuffers {
public:
  explicit HostTouchedBuffers(Operation *module);
  bool isHostTouched(Value buffer);

private:
  Value find(Value value);
  void join(Value a, Value b);
  llvm::DenseMap<Value, Value> parent;
  llvm::DenseSet<Value> touched;
};

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_CUDA_HOSTBUFFERS_H
