//===- ForwardCallResults.cpp - Calls write into the out-params -----------===//
//
// After buffer-results-to-out-params, a function that returns what a call
// of another function returned (an outlined attention, a library call)
// allocates a buffer for the callee's out-param and copies it into its own
// out-param when the call is done:
//
//   %x = memref.alloc()
//   call @f(..., %x)
//   linalg.copy ins(%x) outs(%out)
//
// The call writes into %out instead, and the buffer and the copy go: on
// CUDA that is a kernel and a buffer of the result's size fewer per call.
//
// An out-param is a buffer the caller gave for this result alone (the
// runtime's new output tensors, a caller's own allocation or out-param),
// so nothing else reads or writes its memory; a donated argument's
// out-param, which is that argument's memory, has no use at all
// (kiln-tied-results). The rewrite therefore asks only that %out be an
// argument used by this copy alone and %x an allocation of the same type
// used by the call, once, and then by the copy, both in one block: nothing
// reads or writes either in between, and the call cannot read %out under
// another name.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNFORWARDCALLRESULTS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
/// Whether the copy's source is a buffer that a call writes and that the
/// call can write into the copy's target, an out-param, instead (see the
/// file comment).
bool forwardable(linalg::CopyOp copy) {
  Value source = copy.getInputs()[0], target = copy.getOutputs()[0];
  auto outParam = dyn_cast<BlockArgument>(target);
  auto alloc = source.getDefiningOp<memref::AllocOp>();
  if (!outParam || !outParam.getOwner()->isEntryBlock() ||
      !isa<func::FuncOp>(outParam.getOwner()->getParentOp()) ||
      !outParam.hasOneUse() || !alloc || alloc.getType() != target.getType() ||
      !llvm::hasNItems(alloc->getUses(), 2))
    return false;
  for (Operation *user : alloc->getUsers())
    if (user != copy.getOperation())
      return isa<func::CallOp>(user) && user->getBlock() == copy->getBlock() &&
             user->isBeforeInBlock(copy);
  return false;
}

struct KilnForwardCallResultsPass
    : kiln::impl::KilnForwardCallResultsBase<KilnForwardCallResultsPass> {
  void runOnOperation() override {
    SmallVector<linalg::CopyOp> found;
    getOperation().walk([&](linalg::CopyOp copy) {
      if (forwardable(copy))
        found.push_back(copy);
    });
    for (linalg::CopyOp copy : found) {
      Value source = copy.getInputs()[0];
      Operation *alloc = source.getDefiningOp();
      source.replaceAllUsesWith(copy.getOutputs()[0]);
      copy.erase();
      alloc->erase();
    }
  }
};
} // namespace
