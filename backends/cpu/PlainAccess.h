//===- PlainAccess.h - Ops using a buffer only while they run -*- C++ -*-===//
//
// The CPU passes that reason about a buffer's lifetime on memrefs
// (kiln-cpu-plan-memory, kiln-cpu-conv-addend-in-place) ask which of its
// users only read or write it while they run, so that its last such user
// ends its life, and which could keep it or pass it on.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_PLAINACCESS_H
#define KILN_BACKENDS_CPU_PLAINACCESS_H

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln {

/// Whether `user` only reads or writes through a use of the buffer, without
/// keeping or passing it anywhere: memory accesses, linalg ops on buffers,
/// copies, the communicator's calls, calls of the module's own functions.
/// View-like ops are for the caller to follow.
inline bool isPlainAccess(Operation *user) {
  if (auto call = dyn_cast<func::CallOp>(user)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee)
      return false;
    // The communicator's calls (CollectiveCalls.cpp) use a buffer from the
    // start of an exchange to its wait, which names the buffer again.
    if (callee->hasAttr(kCommFunctionAttrName))
      return true;
    // A function of the module (the convolutions and attentions outlined
    // for oneDNN and kiln's kernels, a called subgraph) uses its arguments
    // during the call: it cannot keep a buffer it does not return. Without
    // this, every activation a CNN passes to a convolution was an
    // allocation of its own on every call.
    return !callee.isDeclaration() &&
           llvm::none_of(call.getResultTypes(), llvm::IsaPred<BaseMemRefType>);
  }
  return isa<memref::LoadOp, memref::StoreOp, memref::CopyOp,
             memref::ExtractStridedMetadataOp,
             memref::ExtractAlignedPointerAsIndexOp, memref::DimOp>(user) ||
         (isa<linalg::LinalgOp>(user) &&
          cast<linalg::LinalgOp>(user).hasPureBufferSemantics());
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_PLAINACCESS_H
