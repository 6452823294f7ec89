//===- DecomposeAttention.cpp - Attention as the composition it stands for ===//
//
// kiln.attention and kiln.attention_grad rewritten into the kiln ops they
// are defined by (KilnAttentionOps.td), for backends and element types
// without a fused kernel: batched products over the leading dims flattened
// into one, the softmax with its maximum subtracted, and, for the
// gradient, the scores recomputed from the saved lse. The N x N score
// matrix is materialized here; that is what the fused kernels avoid.
// f16 and bf16 operands are widened to f32 and the results rounded once,
// as the ops define.
//
//===----------------------------------------------------------------------===//

#include "kiln/Fusion/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "SplatConstant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <limits>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_DECOMPOSEATTENTION
#include "kiln/Fusion/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Builds the composition for one attention op, on [B, rows, features]
/// operands in the compute type (f32 for half precision).
class AttentionComposition {
public:
  AttentionComposition(OpBuilder &b, Location loc, Value query, Value key,
                       Value value, Value mask, double scale, bool causal)
      : b(b), loc(loc), scale(scale), causal(causal) {
    auto q = cast<RankedTensorType>(query.getType());
    int64_t rank = q.getRank();
    leading.assign(q.getShape().begin(), q.getShape().end() - 2);
    for (int64_t d : leading)
      batch *= d;
    element = q.getElementType();
    compute = attentionLseElementType(element);
    queries = q.getDimSize(rank - 2);
    keys = cast<RankedTensorType>(key.getType()).getDimSize(rank - 2);
    this->query = flatten(query);
    this->key = flatten(key);
    this->value = flatten(value);
    if (mask)
      this->mask = flattenMask(mask);
  }

  /// The scores [B, Nq, Nk]: scale * q k^T + mask, causally masked.
  Value scores() {
    Value s = b.create<MatmulOp>(loc, query, transposed(key));
    s = b.create<MulOp>(loc, s, splat(s, scale));
    if (mask)
      s = b.create<AddOp>(loc, s, mask);
    if (!causal)
      return s;
    // One-dimensional iotas broadcast over the scores: a constant or
    // iota of the scores' shape would be stored or computed in full.
    auto indexType =
        RankedTensorType::get({batch, queries, keys}, b.getI64Type());
    Value rows = b.create<BroadcastInDimOp>(
        loc, indexType,
        b.create<IotaOp>(loc, RankedTensorType::get({queries}, b.getI64Type()),
                         0),
        ArrayRef<int64_t>{1});
    Value columns = b.create<BroadcastInDimOp>(
        loc, indexType,
        b.create<IotaOp>(loc, RankedTensorType::get({keys}, b.getI64Type()),
                         0),
        ArrayRef<int64_t>{2});
    Value future =
        b.create<CompareOp>(loc, CompareDirection::gt, columns, rows);
    return b.create<SelectOp>(
        loc, future, splat(s, -std::numeric_limits<double>::infinity()), s);
  }

  /// Broadcasts a per-row [B, Nq] value over the keys.
  Value overKeys(Value rowValue) {
    auto type = RankedTensorType::get({batch, queries, keys}, compute);
    return b.create<BroadcastInDimOp>(loc, type, rowValue,
                                      ArrayRef<int64_t>{0, 1});
  }

  /// result and lse, in the op's types.
  std::pair<Value, Value> forward() {
    Value s = scores();
    Value max = b.create<ReduceMaxOp>(loc, s, ArrayRef<int64_t>{2});
    Value e = b.create<ExpOp>(loc, b.create<SubOp>(loc, s, overKeys(max)));
    Value sum = b.create<ReduceSumOp>(loc, e, ArrayRef<int64_t>{2});
    Value p = b.create<DivOp>(loc, e, overKeys(sum));
    Value out = b.create<MatmulOp>(loc, p, value);
    Value lse = b.create<AddOp>(loc, max, b.create<LogOp>(loc, sum));
    SmallVector<int64_t> lseShape(leading);
    lseShape.push_back(queries);
    return {restore(out, RankedTensorType::get(
                             shapeWith(cast<RankedTensorType>(out.getType())
                                           .getDimSize(2)),
                             element)),
            b.create<ReshapeOp>(loc, RankedTensorType::get(lseShape, compute),
                                lse)};
  }

  /// query_grad, key_grad, value_grad in the types of query, key, value.
  SmallVector<Value> backward(Value result, Value lse, Value resultGrad,
                              TypeRange types) {
    Value o = flatten(result), dout = flatten(resultGrad);
    Value l = b.create<ReshapeOp>(
        loc, RankedTensorType::get({batch, queries}, compute), lse);
    Value p = b.create<ExpOp>(
        loc, b.create<SubOp>(loc, scores(), overKeys(l)));
    Value dv = b.create<MatmulOp>(loc, transposed(p), dout);
    Value dp = b.create<MatmulOp>(loc, dout, transposed(value));
    Value delta = b.create<ReduceSumOp>(loc, b.create<MulOp>(loc, dout, o),
                                        ArrayRef<int64_t>{2});
    Value ds = b.create<MulOp>(
        loc, p, b.create<SubOp>(loc, dp, overKeys(delta)));
    ds = b.create<MulOp>(loc, ds, splat(ds, scale));
    Value dq = b.create<MatmulOp>(loc, ds, key);
    Value dk = b.create<MatmulOp>(loc, transposed(ds), query);
    return {restore(dq, cast<RankedTensorType>(types[0])),
            restore(dk, cast<RankedTensorType>(types[1])),
            restore(dv, cast<RankedTensorType>(types[2]))};
  }

private:
  SmallVector<int64_t> shapeWith(int64_t features) {
    SmallVector<int64_t> shape(leading);
    shape.push_back(queries);
    shape.push_back(features);
    return shape;
  }

  /// [L..., rows, features] -> [B, rows, features] in the compute type.
  Value flatten(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    int64_t rank = type.getRank();
    if (type.getElementType() != compute)
      tensor = b.create<CastOp>(loc, type.clone(compute), tensor);
    return b.create<ReshapeOp>(
        loc,
        RankedTensorType::get({batch, type.getDimSize(rank - 2),
                               type.getDimSize(rank - 1)},
                              compute),
        tensor);
  }

  /// The mask broadcast to the scores [L..., Nq, Nk], flattened.
  Value flattenMask(Value mask) {
    auto type = cast<RankedTensorType>(mask.getType());
    if (type.getElementType() != compute)
      mask = b.create<CastOp>(loc, type.clone(compute), mask);
    SmallVector<int64_t> scores(leading);
    scores.push_back(queries);
    scores.push_back(keys);
    if (type.getShape() != ArrayRef<int64_t>(scores)) {
      SmallVector<int64_t> dims;
      for (int64_t d = 0; d < type.getRank(); ++d)
        dims.push_back(d);
      mask = b.create<BroadcastInDimOp>(
          loc, RankedTensorType::get(scores, compute), mask, dims);
    }
    return b.create<ReshapeOp>(
        loc, RankedTensorType::get({batch, queries, keys}, compute), mask);
  }

  /// [B, rows, features] back to `type` (its shape and element type).
  Value restore(Value tensor, RankedTensorType type) {
    Value reshaped = b.create<ReshapeOp>(loc, type.clone(compute), tensor);
    if (type.getElementType() == compute)
      return reshaped;
    return b.create<CastOp>(loc, type, reshaped);
  }

  Value transposed(Value tensor) {
    return b.create<TransposeOp>(loc, tensor, ArrayRef<int64_t>{0, 2, 1});
  }

  /// `x` in the shape of `like`.
  Value splat(Value like, double x) {
    return splatConstant(b, loc, cast<RankedTensorType>(like.getType()), x);
  }

  OpBuilder &b;
  Location loc;
  double scale;
  bool causal;
  SmallVector<int64_t> leading;
  int64_t batch = 1, queries, keys;
  Type element, compute;
  Value query, key, value, mask;
};

struct DecomposeAttentionPass
    : mlir::kiln::impl::DecomposeAttentionBase<DecomposeAttentionPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      if (auto attention = dyn_cast<AttentionOp>(op)) {
        AttentionComposition composition(
            b, op->getLoc(), attention.getQuery(), attention.getKey(),
            attention.getValue(), attention.getMask(),
            attention.getScale().convertToDouble(), attention.getCausal());
        auto [result, lse] = composition.forward();
        attention.getResult().replaceAllUsesWith(result);
        attention.getLse().replaceAllUsesWith(lse);
      } else {
        auto grad = cast<AttentionGradOp>(op);
        AttentionComposition composition(
            b, op->getLoc(), grad.getQuery(), grad.getKey(), grad.getValue(),
            grad.getMask(), grad.getScale().convertToDouble(),
            grad.getCausal());
        op->replaceAllUsesWith(composition.backward(
            grad.getResult(), grad.getLse(), grad.getResultGrad(),
            op->getResultTypes()));
      }
      op->erase();
    }
  }
};

} // namespace
