//===- PropagateLayouts.cpp - Channels-last relayouts where layouts change ===//
//
// kiln-cpu-outline-dnnl-convs lays a convolution's input and result out
// channels-last where oneDNN's kernels want them so, and says so in the IR:
// a kiln.transpose into channels-last before the call and one out of it
// after. Left there, every convolution would pay two copies of its
// activations. This pass moves each transpose out of channels-last down
// through the ops that compute the same values in either layout (the
// elementwise ops, pooling, padding, slicing, reductions, concatenation);
// where it meets the next convolution's transpose into channels-last the
// two compose to the identity and fold away (TransposeOp::fold), so a
// chain of convolutions with the ops between them runs channels-last from
// the first relayout to the last, as ONNX Runtime's NCHWc transformer and
// XLA's layout assignment arrange it. The layouts stay visible in the IR:
// the remaining transposes are the relayouts that run.
//
// A transpose only moves down, past one op per rewrite, so the greedy
// driver terminates; where the moved transpose has other users it stays
// for them too (it is a copy like the one moved, not an extra one).
//
//===----------------------------------------------------------------------===//

#include "DnnlConvLayouts.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUPROPAGATELAYOUTS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// Whether `perm` takes a channels-last tensor [N, D..., C] back to
/// [N, C, D...] (the inverse of dnnl::toChannelsLast), rank >= 3.
static bool isOutOfChannelsLast(ArrayRef<int64_t> perm) {
  return perm.size() >= 3 &&
         perm == ArrayRef<int64_t>(invertPermutationVector(
                     dnnl::toChannelsLast(perm.size())));
}

/// The transpose out of channels-last that defines `value`, if any.
static TransposeOp outOfChannelsLast(Value value) {
  auto transpose = value.getDefiningOp<TransposeOp>();
  return transpose && isOutOfChannelsLast(transpose.getPermutation())
             ? transpose
             : TransposeOp();
}

/// `type` with its dims permuted by `perm` (dim i is type's dim perm[i]).
static RankedTensorType permuted(Type type, ArrayRef<int64_t> perm) {
  auto ranked = cast<RankedTensorType>(type);
  return ranked.clone(applyPermutation(ranked.getShape(), perm));
}

/// `broadcast` transposed by `inverse` (the inverse of `perm`), as a
/// broadcast of its operand into the transposed shape: operand dim j, at
/// result dim dims[j], lands at perm[dims[j]]; the operand is transposed
/// itself where those are not increasing (a [1, C, 1, 1] bias: a copy of C
/// values).
static Value relaidBroadcast(PatternRewriter &rewriter, Location loc,
                             BroadcastInDimOp broadcast,
                             ArrayRef<int64_t> perm,
                             ArrayRef<int64_t> inverse) {
  Value operand = broadcast.getOperand();
  SmallVector<int64_t> dims;
  for (int64_t d : broadcast.getDims())
    dims.push_back(perm[d]);
  SmallVector<int64_t> order(dims.size());
  for (size_t j = 0; j < order.size(); ++j)
    order[j] = j;
  llvm::stable_sort(order, [&](int64_t a, int64_t b) { return dims[a] < dims[b]; });
  if (!isIdentityPermutation(order)) {
    operand = rewriter.create<TransposeOp>(loc, operand, order);
    dims = applyPermutation(dims, order);
  }
  return rewriter.create<BroadcastInDimOp>(
      loc, permuted(broadcast.getType(), inverse), operand,
      rewriter.getDenseI64ArrayAttr(dims));
}

namespace {

/// op(T(x), ...) -> T(op(x, ...)) for an elementwise op whose other
/// operands are the same transpose, constants or broadcasts.
struct SinkThroughElementwise : RewritePattern {
  SinkThroughElementwise(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    // Casts and selects work elementwise too (the casts around an
    // autocast bf16 convolution, a select's mask of the same shape).
    bool elementwise = op->hasTrait<OpTrait::Elementwise>() ||
                       isa<CastOp, SelectOp>(op);
    if (!elementwise || op->getNumResults() != 1 || op->getNumRegions() != 0)
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType)
      return failure();
    TransposeOp first;
    for (Value operand : op->getOperands())
      if ((first = outOfChannelsLast(operand)))
        break;
    if (!first)
      return failure();
    ArrayRef<int64_t> perm = first.getPermutation();
    // Every operand has the result's shape and is free to relay out.
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || type.getShape() != resultType.getShape())
        return failure();
      auto transpose = operand.getDefiningOp<TransposeOp>();
      if (transpose && transpose.getPermutation() == perm)
        continue;
      if (!matchPattern(operand, m_Constant()) &&
          !operand.getDefiningOp<BroadcastInDimOp>())
        return failure();
    }
    Location loc = op->getLoc();
    SmallVector<int64_t> inverse = invertPermutationVector(perm);
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto transpose = operand.getDefiningOp<TransposeOp>();
      if (transpose && transpose.getPermutation() == perm)
        operands.push_back(transpose.getOperand());
      else if (auto broadcast = operand.getDefiningOp<BroadcastInDimOp>())
        operands.push_back(
            relaidBroadcast(rewriter, loc, broadcast, perm, inverse));
      else // a constant: the transpose folds
        operands.push_back(rewriter.create<TransposeOp>(loc, operand, inverse));
    }
    OperationState state(loc, op->getName(), operands,
                         TypeRange{permuted(resultType, inverse)},
                         op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, moved->getResult(0), perm);
    return success();
  }
};

/// op(T(x), rest...) -> T(op(x, rest...)) for an op whose operand 0 is
/// the tensor it works on and whose per-dim attributes `names` (one entry
/// per dim) are permuted with it: pooling, padding, slicing.
template <typename OpTy>
struct SinkThroughPerDimOp : OpRewritePattern<OpTy> {
  SinkThroughPerDimOp(MLIRContext *context, ArrayRef<StringRef> names)
      : OpRewritePattern<OpTy>(context), names(names) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    TransposeOp transpose = outOfChannelsLast(op->getOperand(0));
    if (!transpose)
      return failure();
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<int64_t> inverse = invertPermutationVector(perm);
    NamedAttrList attributes(op->getAttrs());
    for (StringRef name : names) {
      auto values = dyn_cast_or_null<DenseI64ArrayAttr>(attributes.get(name));
      if (!values || values.size() != static_cast<int64_t>(perm.size()))
        return failure();
      attributes.set(name, rewriter.getDenseI64ArrayAttr(
                               applyPermutation(values.asArrayRef(), inverse)));
    }
    SmallVector<Value> operands(op->getOperands());
    operands[0] = transpose.getOperand();
    OperationState state(op.getLoc(), op->getName(), operands,
                         TypeRange{permuted(op.getType(), inverse)},
                         attributes);
    Operation *moved = rewriter.create(state);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, moved->getResult(0), perm);
    return success();
  }

  SmallVector<StringRef> names;
};

/// reduce(T(x), dims) -> T'(reduce(x, perm[dims])): the kept dims come
/// out in x's order, T' puts them back in T's (nothing where the order
/// agrees, as for a pool over all spatial dims).
template <typename OpTy>
struct SinkThroughReduction : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    TransposeOp transpose = outOfChannelsLast(op.getOperand());
    if (!transpose)
      return failure();
    ArrayRef<int64_t> perm = transpose.getPermutation();
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<int64_t> reduced, kept;
    for (int64_t d : dims)
      reduced.push_back(perm[d]);
    llvm::sort(reduced);
    for (int64_t d = 0, e = perm.size(); d < e; ++d)
      if (!llvm::is_contained(dims, d))
        kept.push_back(perm[d]);
    // kept[r]: the x dim at result dim r; the new result has them sorted.
    SmallVector<int64_t> sorted(kept);
    llvm::sort(sorted);
    SmallVector<int64_t> order;
    for (int64_t d : kept)
      order.push_back(llvm::find(sorted, d) - sorted.begin());
    Value moved = rewriter.create<OpTy>(op.getLoc(), transpose.getOperand(),
                                        rewriter.getDenseI64ArrayAttr(reduced));
    if (!isIdentityPermutation(order))
      moved = rewriter.create<TransposeOp>(op.getLoc(), moved, order);
    rewriter.replaceOp(op, moved);
    return success();
  }
};

/// concat(T(a), T(b), ...) along d -> T(concat(a, b, ...) along perm[d]).
struct SinkThroughConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    TransposeOp first = outOfChannelsLast(op.getInputs().front());
    if (!first)
      return failure();
    ArrayRef<int64_t> perm = first.getPermutation();
    SmallVector<Value> inputs;
    for (Value input : op.getInputs()) {
      auto transpose = input.getDefiningOp<TransposeOp>();
      if (!transpose || transpose.getPermutation() != perm)
        return failure();
      inputs.push_back(transpose.getOperand());
    }
    Value moved = rewriter.create<ConcatOp>(
        op.getLoc(), inputs, perm[op.getDimension()]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, moved, perm);
    return success();
  }
};

struct KilnCpuPropagateLayoutsPass
    : mlir::kiln::impl::KilnCpuPropagateLayoutsBase<
          KilnCpuPropagateLayoutsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<SinkThroughElementwise, SinkThroughConcat,
                 SinkThroughReduction<ReduceSumOp>,
                 SinkThroughReduction<ReduceMaxOp>,
                 SinkThroughReduction<ReduceMeanOp>>(context);
    patterns.add<SinkThroughPerDimOp<ReduceWindowOp>>(
        context, ArrayRef<StringRef>{"window", "strides", "padding_low",
                                     "padding_high", "dilations"});
    patterns.add<SinkThroughPerDimOp<PadOp>>(
        context, ArrayRef<StringRef>{"low", "high", "interior"});
    patterns.add<SinkThroughPerDimOp<SliceOp>>(
        context, ArrayRef<StringRef>{"start", "limit", "stride"});
    // Each rewrite moves a transpose down past one op, so the driver ends;
    // where it stops early (its iteration limit) every relayout is still
    // in a correct place.
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
