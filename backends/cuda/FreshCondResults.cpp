//===- FreshCondResults.cpp - A buffer of its own for each cond result ----===//
//
// A kiln.cond after bufferization is an scf.if on an i1 loaded from the
// predicate's buffer. A branch that yields a buffer defined outside it (an
// argument, a constant's buffer, a value computed before the cond) makes
// the result that buffer in one branch and a new one in the other, and the
// ownership-based deallocation frees the result only when the predicate
// chose the branch that allocates: the predicate, read on the host, is
// needed after the cond. A cond that is to become a conditional node of a
// CUDA graph (kiln-cuda-graph-conds) cannot have that, since the device
// chooses the branch there. Each such buffer is copied into an allocation
// of the branch, so every result is fresh and owned, whichever branch runs.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "common/BufferAccess.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAFRESHCONDRESULTS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
/// Whether `branch` is a kiln.cond: an scf.if on an i1 loaded from a
/// rank-0 buffer, with buffer results.
bool isCond(scf::IfOp branch) {
  auto load = branch.getCondition().getDefiningOp<memref::LoadOp>();
  return load && load.getMemRefType().getRank() == 0 &&
         !branch.getElseRegion().empty() &&
         llvm::any_of(branch.getResultTypes(), llvm::IsaPred<MemRefType>);
}

/// Whether `value`, seen through views, is a buffer `region` computes.
bool computedIn(Value value, Region &region) {
  return region.isAncestor(kiln::rootOf(value).getParentRegion());
}

/// Makes every buffer `region`'s yield passes on from outside the region a
/// copy the region allocates (where the result's type takes a buffer of
/// identity layout).
void copyOutsideBuffers(scf::IfOp branch, Region &region) {
  auto yield = cast<scf::YieldOp>(region.front().getTerminator());
  OpBuilder builder(yield);
  Location loc = branch.getLoc();
  for (OpOperand &operand : yield->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() || computedIn(operand.get(), region))
      continue;
    auto resultType =
        cast<MemRefType>(branch.getResult(operand.getOperandNumber()).getType());
    auto freshType = MemRefType::get(type.getShape(), type.getElementType());
    if (freshType != resultType &&
        !memref::CastOp::areCastCompatible(freshType, resultType))
      continue;
    auto fresh = builder.create<memref::AllocOp>(loc, freshType);
    builder.create<linalg::CopyOp>(loc, operand.get(), fresh.getResult());
    Value yielded = fresh.getResult();
    if (yielded.getType() != resultType)
      yielded = builder.create<memref::CastOp>(loc, resultType, yielded);
    operand.set(yielded);
  }
}

struct KilnCudaFreshCondResultsPass
    : kiln::impl::KilnCudaFreshCondResultsBase<KilnCudaFreshCondResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](scf::IfOp branch) {
      if (!isCond(branch))
        return;
      copyOutsideBuffers(branch, branch.getThenRegion());
      copyOutsideBuffers(branch, branch.getElseRegion());
    });
  }
};
} // namespace
