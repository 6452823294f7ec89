//===- PlainAccess.h - Ops using a buffer only while they run -*- C++ -*-===//
//
// The CPU passes that reason about a buffer's lifetime on memrefs
// (kiln-cpu-plan-memory, kiln-cpu-conv-addend-in-place) ask which of its
// users only read or write it while they run, so that its last such user
// ends its life, and which could keep it or pass it on; and they walk its
// uses through the views of it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_PLAINACCESS_H
#define KILN_BACKENDS_CPU_PLAINACCESS_H

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLFunctionalExtras.h"

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

/// Calls `visit(user, used)` for every user of `buffer` and of the views
/// and casts of it (`used`: the value the user takes, `buffer` or a view),
/// and follows the views. False as soon as `visit` answers false or a user
/// lets the buffer escape: a view-like op that takes it as other than its
/// source, or an op that is no plain access.
inline bool
walkBufferUses(Value buffer,
               llvm::function_ref<bool(Operation *user, Value used)> visit) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      if (!visit(user, current))
        return false;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != current)
          return false;
        worklist.push_back(user->getResult(0));
      } else if (isa<memref::CastOp>(user)) {
        worklist.push_back(user->getResult(0));
      } else if (!isPlainAccess(user)) {
        return false;
      }
    }
  }
  return true;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_PLAINACCESS_H
