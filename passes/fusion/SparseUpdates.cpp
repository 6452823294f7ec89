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
// Updates that read the gradient more than once or read other tables
// (Adagrad's) are then computed on the touched rows, each row once: see
// UpdateTouchedRows.
//
//===----------------------------------------------------------------------===//

#include "kiln/Fusion/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

#include <type_traits>

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

/// Whether `c` holds one value at every element: a splat constant, or a
/// broadcast of a rank-0 value.
bool isUniform(Value c) {
  if (auto constant = c.getDefiningOp<ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    return dense && dense.isSplat();
  }
  if (auto broadcast = c.getDefiningOp<BroadcastInDimOp>())
    return cast<RankedTensorType>(broadcast.getOperand().getType())
               .getRank() == 0;
  return false;
}

/// `c` made again at `type` when it isUniform. Null otherwise.
Value uniformAt(PatternRewriter &rewriter, Value c, RankedTensorType type) {
  if (!isUniform(c))
    return {};
  if (auto constant = c.getDefiningOp<ConstantOp>())
    return rewriter.create<ConstantOp>(
        c.getLoc(),
        DenseElementsAttr::get(type, cast<DenseElementsAttr>(constant.getValue())
                                         .getSplatValue<Attribute>()));
  return rewriter.create<BroadcastInDimOp>(
      c.getLoc(), type, c.getDefiningOp<BroadcastInDimOp>().getOperand(),
      ArrayRef<int64_t>{});
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

//===----------------------------------------------------------------------===//
// Rows: an update computed from the gradient and other tables, row by row
//===----------------------------------------------------------------------===//

/// Whether `v`, an elementwise function of g (and other values), is zero
/// wherever g is: g itself, or a product, quotient, negation or sum of
/// such (a product needs one such factor, a quotient its dividend).
bool vanishesWith(Value v, Value g, int depth = 0) {
  if (v == g)
    return true;
  Operation *op = v.getDefiningOp();
  if (!op || depth > 32)
    return false;
  if (isa<MulOp>(op))
    return vanishesWith(op->getOperand(0), g, depth + 1) ||
           vanishesWith(op->getOperand(1), g, depth + 1);
  if (isa<DivOp>(op))
    return vanishesWith(op->getOperand(0), g, depth + 1);
  if (isa<NegOp>(op))
    return vanishesWith(op->getOperand(0), g, depth + 1);
  if (isa<AddOp, SubOp>(op))
    return vanishesWith(op->getOperand(0), g, depth + 1) &&
           vanishesWith(op->getOperand(1), g, depth + 1);
  return false;
}

/// An expression as a tree of elementwise ops over leaves: the
/// scatter into zeros `g` (the one such scatter it reads), values of the
/// table's shape, and uniform values. Fails on anything else, or on a
/// tree of more than `kMaxOps` ops.
struct RowExpression {
  static constexpr int kMaxOps = 64;
  ScatterAddOp g;
  SetVector<Operation *> ops; // defining order
  SmallVector<Value> leaves;

  bool collect(Value v, RankedTensorType tableType) {
    Operation *op = v.getDefiningOp();
    if (auto scatter = dyn_cast_or_null<ScatterAddOp>(op)) {
      Value table = scatter.getTable();
      if (matchPattern(table, m_AnyZeroFloat()) && v.getType() == tableType) {
        if (g && g != scatter)
          return false;
        g = scatter;
        return true;
      }
    }
    if (op && (op->hasTrait<OpTrait::Elementwise>() || isa<CastOp>(op)) &&
        op->getNumResults() == 1 &&
        cast<RankedTensorType>(v.getType()).getShape() ==
            tableType.getShape()) {
      if (ops.contains(op))
        return true;
      if (static_cast<int>(ops.size()) >= kMaxOps)
        return false;
      for (Value operand : op->getOperands())
        if (!collect(operand, tableType))
          return false;
      ops.insert(op);
      return true;
    }
    leaves.push_back(v);
    return cast<RankedTensorType>(v.getType()).getShape() ==
               tableType.getShape() ||
           isUniform(v);
  }
};

/// Whether g = scatter_add(0, ids, u) names fewer rows than its table
/// has: otherwise the rows are no fewer than the table's (the sums this
/// pattern makes are such scatters, and are left alone).
bool fewerIdsThanRows(ScatterAddOp g) {
  return cast<RankedTensorType>(g.getIndices().getType()).getNumElements() <
         cast<RankedTensorType>(g.getType()).getDimSize(0);
}

/// The touched rows of a gradient g = scatter_add(0, ids, u), one slot
/// per id: `rows[k]` is the table row of id k (clamped as the scatter
/// clamps it), `used[k]` whether id k is the first to name its row, and
/// then `sums[k]` the sum of the updates of every id naming that row
/// (other slots hold zeros and are not applied).
///
/// Each id finds the first id naming its row (the first true of its row
/// of the n x n "same row" matrix: n^2 comparisons, a few ops to compile;
/// a sort would need fewer comparisons but, as a sorting network of kiln
/// ops, far more code for a step with many tables). The updates are then
/// scatter-added into those slots in the ids' order, starting from zero:
/// the same additions in the same order as the gradient's row, so the
/// sums are the gradient's rows bit for bit. (Adagrad's first step moves
/// by lr * g / (|g| + eps), so a row whose updates cancel must give 0
/// exactly, as the dense step does.)
struct CoalescedRows {
  Value rows, sums, used;
};

/// Built right after g, so that every reader of g can use it.
CoalescedRows coalesce(PatternRewriter &rewriter, ScatterAddOp g) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(g);
  Location loc = g.getLoc();
  auto tableType = cast<RankedTensorType>(g.getType());
  auto idsType = cast<RankedTensorType>(g.getIndices().getType());
  int64_t n = idsType.getNumElements();
  int64_t rowsInTable = tableType.getDimSize(0);
  Type i64 = rewriter.getI64Type();
  Type element = tableType.getElementType();
  auto vector = RankedTensorType::get({n}, i64);
  auto square = RankedTensorType::get({n, n}, i64);
  auto splat = [&](RankedTensorType type, int64_t value) -> Value {
    return rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, rewriter.getIntegerAttr(
                                              type.getElementType(), value)));
  };
  Value ids = g.getIndices();
  if (idsType.getRank() != 1)
    ids = rewriter.create<ReshapeOp>(
        loc, RankedTensorType::get({n}, idsType.getElementType()), ids);
  if (idsType.getElementType() != i64)
    ids = rewriter.create<CastOp>(loc, vector, ids);
  CoalescedRows out;
  out.rows = rewriter.create<MaxOp>(
      loc, rewriter.create<MinOp>(loc, ids, splat(vector, rowsInTable - 1)),
      splat(vector, 0));
  // same[k, j]: ids k and j name one row.
  Value same = rewriter.create<CompareOp>(
      loc, CompareDirection::eq,
      rewriter.create<BroadcastInDimOp>(loc, square, out.rows,
                                        ArrayRef<int64_t>{0}),
      rewriter.create<BroadcastInDimOp>(loc, square, out.rows,
                                        ArrayRef<int64_t>{1}));
  // first[k]: the first id naming id k's row; used[k]: it is k itself.
  Value first = rewriter.create<ArgMaxOp>(
      loc, vector, rewriter.create<CastOp>(loc, square, same), 1, false);
  out.used = rewriter.create<CompareOp>(
      loc, CompareDirection::eq, first, rewriter.create<IotaOp>(loc, vector, 0));
  SmallVector<int64_t> rowShape = {n};
  rowShape.append(tableType.getShape().begin() + 1, tableType.getShape().end());
  auto rowsType = RankedTensorType::get(rowShape, element);
  Value updates = g.getUpdates();
  if (cast<RankedTensorType>(updates.getType()).getShape() !=
      rowsType.getShape())
    updates = rewriter.create<ReshapeOp>(loc, rowsType, updates);
  out.sums = rewriter.create<ScatterAddOp>(
      loc,
      rewriter.create<ConstantOp>(
          loc, DenseElementsAttr::get(rowsType,
                                      rewriter.getFloatAttr(element, 0.0))),
      first, updates);
  return out;
}

/// a + e, where e is an elementwise function of an embedding gradient g
/// (and of other tables and uniform values) that is zero wherever g is:
/// Adagrad's s + g * g and p - lr * g / (sqrt(s') + eps), for instance.
/// Only the rows g touches change, so e is computed on those rows only
/// (each row's updates summed first, CoalescedRows) and added into a, once
/// per row:
///
///   a + e  ->  scatter_add(a, rows, e(sums, other tables' rows, ...))
///
/// This runs after the patterns above, which handle the forms that need
/// no coalescing. A row g does not touch keeps its value, as PyTorch's sparse
/// optimizers keep it, also where the dense formula would give NaN
/// (0 / 0 with eps = 0).
/// (a - e likewise, with -e.)
template <typename OpTy>
struct UpdateTouchedRows : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  static constexpr bool kSubtracts = std::is_same_v<OpTy, SubOp>;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto tableType = cast<RankedTensorType>(op.getType());
    if (!isa<FloatType>(tableType.getElementType()) || tableType.getRank() < 1)
      return failure();
    for (unsigned side : {1u, 0u}) {
      if (kSubtracts && side == 0)
        continue;
      Value e = op->getOperand(side);
      RowExpression expression;
      // g alone is the scalings' case (left dense when g has other
      // readers).
      if (!expression.collect(e, tableType) || !expression.g ||
          e == expression.g.getResult() ||
          !vanishesWith(e, expression.g.getResult()) ||
          !fewerIdsThanRows(expression.g))
        continue;
      rewrite(rewriter, op, op->getOperand(1 - side), e, expression);
      return success();
    }
    return failure();
  }

  static void rewrite(PatternRewriter &rewriter, OpTy op, Value table,
                      Value e, RowExpression &expression) {
    Location loc = op.getLoc();
    // Each reader of g makes the same rows right after g; CSE keeps one.
    CoalescedRows rows = coalesce(rewriter, expression.g);
    auto sumsType = cast<RankedTensorType>(rows.sums.getType());
    IRMapping map;
    map.map(expression.g.getResult(), rows.sums);
    for (Value leaf : expression.leaves) {
      if (map.contains(leaf))
        continue;
      Value atRows;
      if (isUniform(leaf)) {
        atRows = uniformAt(
            rewriter, leaf,
            sumsType.clone(cast<RankedTensorType>(leaf.getType())
                               .getElementType()));
      } else {
        atRows = rewriter.create<GatherOp>(loc, leaf, rows.rows);
      }
      map.map(leaf, atRows);
    }
    for (Operation *inner : expression.ops) {
      Operation *copy = rewriter.clone(*inner, map);
      Type element = cast<RankedTensorType>(inner->getResult(0).getType())
                         .getElementType();
      copy->getResult(0).setType(sumsType.clone(element));
      map.map(inner->getResult(0), copy->getResult(0));
    }
    // A row's later slots add -0.0, which leaves every value as it is.
    Value used = rewriter.create<BroadcastInDimOp>(
        loc, sumsType.clone(rewriter.getI1Type()), rows.used,
        ArrayRef<int64_t>{0});
    Value nothing = rewriter.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 sumsType, rewriter.getFloatAttr(sumsType.getElementType(),
                                                 -0.0)));
    Value rowsOfE = map.lookup(e);
    if (kSubtracts)
      rowsOfE = rewriter.create<NegOp>(loc, rowsOfE);
    Value update = rewriter.create<SelectOp>(loc, used, rowsOfE, nothing);
    rewriter.replaceOpWithNewOp<ScatterAddOp>(op, table, rows.rows, update);
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
      return signalPassFailure();
    // What the scalings could not move: updates computed row by row.
    RewritePatternSet rows(&getContext());
    rows.add<UpdateTouchedRows<AddOp>, UpdateTouchedRows<SubOp>>(
        &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(rows))))
      signalPassFailure();
  }
};

} // namespace
