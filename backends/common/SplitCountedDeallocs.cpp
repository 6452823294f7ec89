//===- SplitCountedDeallocs.cpp - Frees of a kiln.for's result alone ------===//
//
// After a counted loop (a kiln.for) that carries several buffers, the
// block around it frees what the loop started from and what it ended
// with. Upstream's deallocation simplification cannot tell that those
// never alias: with no trip, a loop's result is its init. So the block's
// bufferization.dealloc names both, and its lowering calls the generic
// helper, which compares every pointer with every other at run time
// through buffers of its own. Besides the work, that call keeps a CUDA
// loop or cond around the kiln.for off a graph (it reads host memory).
//
// A loop of a constant number of trips, at least one, whose body yields an
// allocation of its own for a result, ends with a buffer the last trip
// allocated: it is none of the buffers that existed before the loop, nor a
// result the body yields from another of its allocations. This pass splits
// each such result off a dealloc whose other memrefs are all such buffers
// (through views and base buffers) into a dealloc of its own, with the
// same retained values, or'ing the two deallocs' results: as the
// bufferization.dealloc documentation describes, splitting is sound where
// no memref of one part aliases one of the other. Each part then lowers to
// a guarded free of its own.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "BufferAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNSPLITCOUNTEDDEALLOCS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using bufferization::DeallocOp;

/// The allocation in the body of a counted loop of at least one trip that
/// the loop's result `root` is (what the body yields for it), if it is one.
static memref::AllocOp freshCountedAllocation(Value root) {
  auto result = dyn_cast<OpResult>(root);
  auto counted = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
  if (!counted)
    return nullptr;
  std::optional<int64_t> trips = constantTripCount(
      counted.getLowerBound(), counted.getUpperBound(), counted.getStep());
  if (!trips || *trips < 1)
    return nullptr;
  Value yielded =
      kiln::rootOf(counted.getYieldedValues()[result.getResultNumber()]);
  auto allocation = yielded.getDefiningOp<memref::AllocOp>();
  return allocation && allocation->getBlock() == counted.getBody() ? allocation
                                                                   : nullptr;
}

/// Whether `other` (a root) is none of the buffers the counted loop's
/// result from `allocation` may be: one that existed before the loop, or
/// another result of the loop from another of its body's allocations.
static bool apart(Value other, memref::AllocOp allocation) {
  Operation *counted = allocation->getParentOp();
  if (kiln::definedBefore(other, counted))
    return true;
  memref::AllocOp otherAllocation = freshCountedAllocation(other);
  return otherAllocation && otherAllocation->getParentOp() == counted &&
         otherAllocation != allocation;
}

namespace {

struct SplitCountedResult : OpRewritePattern<DeallocOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DeallocOp dealloc,
                                PatternRewriter &rewriter) const override {
    ValueRange memrefs = dealloc.getMemrefs();
    if (memrefs.size() < 2)
      return failure();
    for (size_t index = 0; index < memrefs.size(); ++index) {
      memref::AllocOp allocation =
          freshCountedAllocation(kiln::rootThroughMetadata(memrefs[index]));
      if (!allocation)
        continue;
      bool othersApart = true;
      for (size_t other = 0; other < memrefs.size(); ++other)
        othersApart &=
            other == index ||
            apart(kiln::rootThroughMetadata(memrefs[other]), allocation);
      if (!othersApart)
        continue;
      split(dealloc, index, rewriter);
      return success();
    }
    return failure();
  }

  static void split(DeallocOp dealloc, size_t index,
                    PatternRewriter &rewriter) {
    SmallVector<Value> memrefs(dealloc.getMemrefs()),
        conditions(dealloc.getConditions());
    Value memref = memrefs[index], condition = conditions[index];
    memrefs.erase(memrefs.begin() + index);
    conditions.erase(conditions.begin() + index);
    Location loc = dealloc.getLoc();
    auto rest = rewriter.create<DeallocOp>(loc, memrefs, conditions,
                                           dealloc.getRetained());
    auto alone = rewriter.create<DeallocOp>(loc, memref, condition,
                                            dealloc.getRetained());
    SmallVector<Value> updated;
    for (auto [one, other] :
         llvm::zip(rest.getUpdatedConditions(), alone.getUpdatedConditions()))
      updated.push_back(rewriter.create<arith::OrIOp>(loc, one, other));
    rewriter.replaceOp(dealloc, updated);
  }
};

struct KilnSplitCountedDeallocsPass
    : kiln::impl::KilnSplitCountedDeallocsBase<KilnSplitCountedDeallocsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitCountedResult>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
