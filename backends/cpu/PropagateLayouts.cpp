//===- PropagateLayouts.cpp - Activation relayouts where layouts change ---===//
//
// kiln-cpu-outline-dnnl-convs lays a convolution's input and result out
// channels-last, or in oneDNN's blocked layout, where oneDNN's kernels want
// them so, and says so in the IR: a relayout into that layout before the
// call and one out of it after (ActivationLayout: a kiln.transpose, or for
// blocked a kiln.reshape and a kiln.transpose). Left there, every
// convolution would pay two copies of its activations. This pass moves each
// relayout out of a layout down through the ops that compute the same
// values in either layout (the elementwise ops, pooling, padding, slicing,
// reductions, concatenation); where it meets the next convolution's
// relayout into the same layout the two compose to the identity and fold
// away (TransposeOp::fold, ReshapeOp::fold), so a chain of convolutions
// with the ops between them runs in oneDNN's layout from the first relayout
// to the last, as ONNX Runtime's NCHWc transformer and XLA's layout
// assignment arrange it. The layouts stay visible in the IR: the remaining
// relayouts are the ones that run.
//
// A relayout only moves down, past one op per rewrite, so the greedy
// driver terminates; where the moved relayout has other users it stays
// for them too (it is a copy like the one moved, not an extra one).
//
//===----------------------------------------------------------------------===//

#include "ActivationLayouts.h"

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
using mlir::kiln::dnnl::ActivationLayout;

namespace {

/// A value relaid out of a layout: the layout and the value in it.
using Relaid = std::pair<ActivationLayout, Value>;

/// `broadcast` (into a logical [N, C, D...]) as a broadcast into the
/// same values laid out: operand dim j, at result dim dims[j], lands at
/// the laid-out dims of that dim (a blocked channel dim of C values split
/// into blocks and lanes first, one of 1 value broadcast over both); the
/// operand is transposed itself where those are not increasing (a [1, C,
/// 1, 1] bias: a copy of C values).
Value relaidBroadcast(PatternRewriter &rewriter, Location loc,
                      BroadcastInDimOp broadcast,
                      const ActivationLayout &layout) {
  Value operand = broadcast.getOperand();
  auto operandType = cast<RankedTensorType>(operand.getType());
  int64_t rank = broadcast.getType().getRank();
  SmallVector<int64_t> shape, dims;
  for (auto [j, d] : llvm::enumerate(broadcast.getDims())) {
    SmallVector<int64_t, 2> to = layout.dimsOf(d, rank);
    int64_t size = operandType.getDimSize(j);
    if (to.size() == 1 || size == 1) {
      shape.push_back(size);
      dims.push_back(to[0]);
      continue;
    }
    shape.push_back(size / layout.block);
    dims.push_back(to[0]);
    shape.push_back(layout.block);
    dims.push_back(to[1]);
  }
  if (shape != operandType.getShape())
    operand =
        rewriter.create<ReshapeOp>(loc, operandType.clone(shape), operand);
  SmallVector<int64_t> order(dims.size());
  for (size_t j = 0; j < order.size(); ++j)
    order[j] = j;
  llvm::stable_sort(order, [&](int64_t a, int64_t b) { return dims[a] < dims[b]; });
  if (!isIdentityPermutation(order)) {
    operand = rewriter.create<TransposeOp>(loc, operand, order);
    dims = applyPermutation(dims, order);
  }
  return rewriter.create<BroadcastInDimOp>(
      loc, layout.laidOut(broadcast.getType()), operand,
      rewriter.getDenseI64ArrayAttr(dims));
}

/// op(R(x), ...) -> R(op(x, ...)) for an elementwise op whose other
/// operands are relaid out of the same layout, constants or broadcasts.
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
    std::optional<Relaid> first;
    for (Value operand : op->getOperands())
      if ((first = ActivationLayout::relaidFrom(operand)))
        break;
    if (!first)
      return failure();
    const ActivationLayout &layout = first->first;
    // Every operand has the result's shape and is free to relay out.
    SmallVector<std::optional<Relaid>> relaid;
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || type.getShape() != resultType.getShape())
        return failure();
      relaid.push_back(ActivationLayout::relaidFrom(operand));
      if (relaid.back() && relaid.back()->first == layout)
        continue;
      if (!matchPattern(operand, m_Constant()) &&
          !operand.getDefiningOp<BroadcastInDimOp>())
        return failure();
      relaid.back() = std::nullopt;
    }
    Location loc = op->getLoc();
    SmallVector<Value> operands;
    for (auto [operand, from] : llvm::zip(op->getOperands(), relaid)) {
      if (from)
        operands.push_back(from->second);
      else if (auto broadcast = operand.getDefiningOp<BroadcastInDimOp>())
        operands.push_back(relaidBroadcast(rewriter, loc, broadcast, layout));
      else // a constant: the relayout folds
        operands.push_back(layout.into(rewriter, loc, operand));
    }
    OperationState state(loc, op->getName(), operands,
                         TypeRange{layout.laidOut(resultType)}, op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(
        op, layout.outOf(rewriter, loc, moved->getResult(0), resultType));
    return success();
  }
};

/// A per-dim attribute of pooling, padding or slicing, and its value on a
/// dim the op leaves as it is (-1: the dim's size, a slice's limit).
struct PerDimAttribute {
  StringRef name;
  int64_t neutral;
};

/// op(R(x), rest...) -> R(op(x, rest...)) for an op whose operand 0 is
/// the tensor it works on and whose per-dim attributes (one entry per dim)
/// are relaid out with it: pooling, padding, slicing. A blocked channel dim
/// must be left as it is.
template <typename OpTy>
struct SinkThroughPerDimOp : OpRewritePattern<OpTy> {
  SinkThroughPerDimOp(MLIRContext *context,
                      ArrayRef<PerDimAttribute> attributes)
      : OpRewritePattern<OpTy>(context), perDim(attributes) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    std::optional<Relaid> relaid =
        ActivationLayout::relaidFrom(op->getOperand(0));
    if (!relaid)
      return failure();
    const ActivationLayout &layout = relaid->first;
    auto logical = cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t rank = logical.getRank();
    auto laidType = cast<RankedTensorType>(relaid->second.getType());
    NamedAttrList attributes(op->getAttrs());
    for (const PerDimAttribute &attribute : perDim) {
      auto values =
          dyn_cast_or_null<DenseI64ArrayAttr>(attributes.get(attribute.name));
      if (!values || values.size() != rank)
        return failure();
      SmallVector<int64_t> laid(laidType.getRank(), 0);
      for (int64_t d = 0; d < rank; ++d) {
        SmallVector<int64_t, 2> to = layout.dimsOf(d, rank);
        if (to.size() == 1) {
          laid[to[0]] = values[d];
          continue;
        }
        int64_t neutral =
            attribute.neutral < 0 ? logical.getDimSize(d) : attribute.neutral;
        if (values[d] != neutral)
          return failure();
        for (int64_t t : to)
          laid[t] = attribute.neutral < 0 ? laidType.getDimSize(t) : neutral;
      }
      attributes.set(attribute.name, rewriter.getDenseI64ArrayAttr(laid));
    }
    SmallVector<Value> operands(op->getOperands());
    operands[0] = relaid->second;
    OperationState state(op.getLoc(), op->getName(), operands,
                         TypeRange{layout.laidOut(op.getType())}, attributes);
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(op, layout.outOf(rewriter, op.getLoc(),
                                        moved->getResult(0), op.getType()));
    return success();
  }

  SmallVector<PerDimAttribute> perDim;
};

/// reduce(R(x), dims) -> R'(reduce(x, dims laid out)): the kept dims come
/// out in x's order. Channels-last, a transpose puts them back in the
/// logical order (nothing where the order agrees, as for a pool over all
/// spatial dims); blocked, where the batch and channel dims are kept, the
/// result is the blocked layout of the logical one, relaid out of it.
template <typename OpTy>
struct SinkThroughReduction : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    std::optional<Relaid> relaid =
        ActivationLayout::relaidFrom(op.getOperand());
    if (!relaid)
      return failure();
    const ActivationLayout &layout = relaid->first;
    int64_t rank = cast<RankedTensorType>(op.getOperand().getType()).getRank();
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<int64_t> reduced, kept;
    for (int64_t d : dims) {
      SmallVector<int64_t, 2> to = layout.dimsOf(d, rank);
      if (to.size() != 1)
        return failure();
      reduced.push_back(to[0]);
    }
    llvm::sort(reduced);
    if (layout.block) {
      if (llvm::is_contained(dims, 0) || llvm::is_contained(dims, 1))
        return failure();
      Value moved = rewriter.create<OpTy>(
          op.getLoc(), relaid->second, rewriter.getDenseI64ArrayAttr(reduced));
      rewriter.replaceOp(
          op, layout.outOf(rewriter, op.getLoc(), moved, op.getType()));
      return success();
    }
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(dims, d))
        kept.push_back(layout.dimsOf(d, rank)[0]);
    // kept[r]: the x dim at result dim r; the new result has them sorted.
    SmallVector<int64_t> sorted(kept);
    llvm::sort(sorted);
    SmallVector<int64_t> order;
    for (int64_t d : kept)
      order.push_back(llvm::find(sorted, d) - sorted.begin());
    Value moved = rewriter.create<OpTy>(op.getLoc(), relaid->second,
                                        rewriter.getDenseI64ArrayAttr(reduced));
    if (!isIdentityPermutation(order))
      moved = rewriter.create<TransposeOp>(op.getLoc(), moved, order);
    rewriter.replaceOp(op, moved);
    return success();
  }
};

/// concat(R(a), R(b), ...) along d -> R(concat(a, b, ...) along d laid
/// out): a channel concatenation of blocked tensors joins their blocks.
struct SinkThroughConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Relaid> first =
        ActivationLayout::relaidFrom(op.getInputs().front());
    if (!first)
      return failure();
    const ActivationLayout &layout = first->first;
    SmallVector<Value> inputs;
    for (Value input : op.getInputs()) {
      std::optional<Relaid> relaid = ActivationLayout::relaidFrom(input);
      if (!relaid || !(relaid->first == layout))
        return failure();
      inputs.push_back(relaid->second);
    }
    int64_t rank = op.getType().getRank();
    Value moved = rewriter.create<ConcatOp>(
        op.getLoc(), inputs, layout.dimsOf(op.getDimension(), rank)[0]);
    rewriter.replaceOp(
        op, layout.outOf(rewriter, op.getLoc(), moved, op.getType()));
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
        context, ArrayRef<PerDimAttribute>{{"window", 1},
                                           {"strides", 1},
                                           {"padding_low", 0},
                                           {"padding_high", 0},
                                           {"dilations", 1}});
    patterns.add<SinkThroughPerDimOp<PadOp>>(
        context,
        ArrayRef<PerDimAttribute>{{"low", 0}, {"high", 0}, {"interior", 0}});
    patterns.add<SinkThroughPerDimOp<SliceOp>>(
        context,
        ArrayRef<PerDimAttribute>{{"start", 0}, {"limit", -1}, {"stride", 1}});
    // Each rewrite moves a transpose down past one op, so the driver ends;
    // where it stops early (its iteration limit) every relayout is still
    // in a correct place.
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
