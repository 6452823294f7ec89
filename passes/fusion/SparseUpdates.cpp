//===- SparseUpdates.cpp - Table updates that touch only the rows read ----===//
//
// The gradient of an embedding lookup is its cotangent's rows scatter-added
// into a zero table, s = scatter_add(0, ids, dy), and an SGD step reads it
// as p - lr * s. Computed as written, the step fills a table of zeros, adds
// the rows, scales the whole table and subtracts it from the whole
// parameter: four passes over V x D elements for n x D that changed. This
// pass moves the arithmetic onto the updates and the addition into the
// table, so that the step is one scatter_add of the scaled rows into the
// parameter (PyTorch's sparse embedding gradients with SGD, or
// `index_add_`):
//
//   c * scatter_add(0, i, u)   ->  scatter_add(0, i, c' * u)   c uniform
//   scatter_add(0, i, u) / c   ->  scatter_add(0, i, u / c')   c uniform
//   -scatter_add(0, i, u)      ->  scatter_add(0, i, -u)
//   a + scatter_add(0, i, u)   ->  scatter_add(a, i, u)        (either side)
//   a - scatter_add(0, i, u)   ->  scatter_add(a, i, -u)
//
// where the scatter has no other reader and c is the same at every
// element (a splat constant or a broadcast of a rank-0 value), made again
// at the updates' shape as c'. Each is exact but for the order in which a
// row named by several ids adds its updates (lr * (u1 + u2) against
// lr * u1 + lr * u2), the freedom any sum has in compiled code.
//
//===----------------------------------------------------------------------===//

#include "kiln/Fusion/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_SPARSEUPDATES
#include "kiln/Fusion/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// The scatter_add into zeros that defines `v`, if nothing else reads it.
ScatterAddOp scatterOfZeros(Value v) {
  auto scatter = v.getDefiningOp<ScatterAddOp>();
  if (!scatter || !v.hasOneUse())
    return {};
  // A kiln.constant splat of zero (either sign for floats).
  Value table = scatter.getTable();
  if (!matchPattern(table, m_AnyZeroFloat()) && !matchPattern(table, m_Zero()))
    return {};
  return scatter;
}

/// `c` made again at `type` when it holds one value at every element: a
/// splat constant, or a broadcast of a rank-0 value. Null otherwise.
Value uniformAt(PatternRewriter &rewriter, Value c, RankedTensorType type) {
  Location loc = c.getLoc();
  if (auto constant = c.getDefiningOp<ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return {};
    return rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
  }
  if (auto broadcast = c.getDefiningOp<BroadcastInDimOp>()) {
    Value scalar = broadcast.getOperand();
    if (cast<RankedTensorType>(scalar.getType()).getRank() != 0)
      return {};
    return rewriter.create<BroadcastInDimOp>(loc, type, scalar,
                                             ArrayRef<int64_t>{});
  }
  return {};
}

/// scatter_add(table, ids, updates) in place of `op`.
void replaceByScatter(PatternRewriter &rewriter, Operation *op, Value table,
                      ScatterAddOp scatter, Value updates) {
  rewriter.replaceOpWithNewOp<ScatterAddOp>(op, table, scatter.getIndices(),
                                            updates);
}

/// c * scatter_add(0, i, u) and scatter_add(0, i, u) * c.
struct ScaleUpdates : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    for (unsigned side : {0u, 1u}) {
      ScatterAddOp scatter = scatterOfZeros(op->getOperand(side));
      if (!scatter)
        continue;
      Value updates = scatter.getUpdates();
      Value c = uniformAt(rewriter, op->getOperand(1 - side),
                          cast<RankedTensorType>(updates.getType()));
      if (!c)
        continue;
      Value scaled = side == 0 ? rewriter.create<MulOp>(op.getLoc(), updates, c)
                               : rewriter.create<MulOp>(op.getLoc(), c, updates);
      replaceByScatter(rewriter, op, scatter.getTable(), scatter, scaled);
      return success();
    }
    return failure();
  }
};

/// scatter_add(0, i, u) / c, floats only (integer division does not
/// distribute over a sum).
struct DivideUpdates : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op,
                                PatternRewriter &rewriter) const override {
    ScatterAddOp scatter = scatterOfZeros(op.getLhs());
    if (!scatter || !isa<FloatType>(op.getType().getElementType()))
      return failure();
    Value updates = scatter.getUpdates();
    Value c = uniformAt(rewriter, op.getRhs(),
                        cast<RankedTensorType>(updates.getType()));
    if (!c)
      return failure();
    replaceByScatter(rewriter, op, scatter.getTable(), scatter,
                     rewriter.create<DivOp>(op.getLoc(), updates, c));
    return success();
  }
};

struct NegateUpdates : OpRewritePattern<NegOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NegOp op,
                                PatternRewriter &rewriter) const override {
    ScatterAddOp scatter = scatterOfZeros(op.getOperand());
    if (!scatter)
      return failure();
    replaceByScatter(
        rewriter, op, scatter.getTable(), scatter,
        rewriter.create<NegOp>(op.getLoc(), scatter.getUpdates()));
    return success();
  }
};

/// a + scatter_add(0, i, u), either side.
struct AddIntoTable : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    for (unsigned side : {1u, 0u}) {
      ScatterAddOp scatter = scatterOfZeros(op->getOperand(side));
      if (!scatter)
        continue;
      replaceByScatter(rewriter, op, op->getOperand(1 - side), scatter,
                       scatter.getUpdates());
      return success();
    }
    return failure();
  }
};

struct SubtractFromTable : OpRewritePattern<SubOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SubOp op,
                                PatternRewriter &rewriter) const override {
    ScatterAddOp scatter = scatterOfZeros(op.getRhs());
    if (!scatter)
      return failure();
    replaceByScatter(
        rewriter, op, op.getLhs(), scatter,
        rewriter.create<NegOp>(op.getLoc(), scatter.getUpdates()));
    return success();
  }
};

struct SparseUpdatesPass
    : kiln::impl::SparseUpdatesBase<SparseUpdatesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ScaleUpdates, DivideUpdates, NegateUpdates, AddIntoTable,
                 SubtractFromTable>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
