//===- KilnCanonicalize.cpp - Canonicalization patterns of kiln ops -------===//
//
// Rewrites that create ops (the folders in KilnFolds.cpp only update or
// replace an op in place), run by the canonicalizer.
//
// Unit reshapes sink through elementwise ops. numpy's `keepdims=True` and
// ONNX's reductions give a reduced value a size-1 dimension by a reshape
// (tensor<8xf32> -> tensor<8x1xf32>); the elementwise ops that follow
// (`var + eps`, `sqrt`) then run on the unit-shaped value before a
// broadcast_in_dim takes it back to the full shape. Moving the reshape
// below the elementwise ops lets BroadcastInDimOp::fold absorb it, which
// leaves the same IR as a program written with broadcast_in_dim directly:
// the fusion pass then sees the epilogue on the reduction's own shape.
//
// A gather of an elementwise op's result picks rows of the op's operand
// instead, and the op runs on the rows picked: a dequantized embedding
// table is read as bytes, and only the looked-up rows are dequantized.
//
// A loop's carried value that the body yields unchanged and that starts as
// a constant is that constant in every iteration: its uses in the regions
// (isolated from above) read a copy of the constant made there, and the
// loop's result is the constant. Products and casts inside then see a
// constant operand: a weight that autocast narrows inside an RNN's loop is
// folded to a half-precision constant instead of being cast every step.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::kiln;

/// True if reshaping `from` to `to` only inserts or removes size-1
/// dimensions: both shapes without their 1s are the same list.
bool mlir::kiln::isUnitReshape(RankedTensorType from, RankedTensorType to) {
  auto squeezed = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> dims;
    for (int64_t dim : shape)
      if (dim != 1)
        dims.push_back(dim);
    return dims;
  };
  return squeezed(from.getShape()) == squeezed(to.getShape());
}

namespace {

/// op(reshape(x), ...) -> reshape(op(x, ...)) for an elementwise op whose
/// every operand is either a unit reshape from x's shape to the same result
/// shape, or a splat constant (rebuilt in x's shape). The reshape must have
/// no other user, so nothing is computed twice.
struct SinkUnitReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    RankedTensorType sourceType = reshape.getOperand().getType();
    RankedTensorType unitType = reshape.getType();
    if (!reshape->hasOneUse() || !isUnitReshape(sourceType, unitType))
      return failure();
    Operation *user = *reshape->getUsers().begin();
    bool elementwise = user->hasTrait<OpTrait::Elementwise>() ||
                       isa<SelectOp, CastOp>(user);
    if (!elementwise || user->getNumResults() != 1 ||
        user->getNumRegions() != 0)
      return failure();

    // The user's operands in the source shape.
    SmallVector<Value> operands;
    for (Value operand : user->getOperands()) {
      if (auto other = operand.getDefiningOp<ReshapeOp>()) {
        if (other.getType() == unitType &&
            other.getOperand().getType() == sourceType) {
          operands.push_back(other.getOperand());
          continue;
        }
      }
      DenseElementsAttr splat;
      if (matchPattern(operand, m_Constant(&splat)) && splat.isSplat()) {
        auto type = RankedTensorType::get(sourceType.getShape(),
                                          splat.getElementType());
        operands.push_back(rewriter.create<ConstantOp>(
            user->getLoc(), splat.resizeSplat(type)));
        continue;
      }
      return failure();
    }

    auto resultType = cast<RankedTensorType>(user->getResult(0).getType());
    OperationState state(user->getLoc(), user->getName(), operands,
                         RankedTensorType::get(sourceType.getShape(),
                                               resultType.getElementType()),
                         user->getAttrs());
    rewriter.setInsertionPoint(user);
    Operation *sunk = rewriter.create(state);
    rewriter.replaceOpWithNewOp<ReshapeOp>(user, resultType,
                                           sunk->getResult(0));
    return success();
  }
};

/// gather(op(x, splats...), indices) -> op(gather(x, indices), splats...)
/// for an elementwise op (or a cast) whose operands other than x are splat
/// constants (rebuilt in the gathered shape), where the gathered rows are
/// no more than the table's: the op then runs on the rows picked, not on
/// the whole table. A quantized embedding table (ONNX's DequantizeLinear
/// of a uint8 initializer before a Gather) is read as bytes and only its
/// picked rows are dequantized.
struct GatherBeforeElementwise : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatherOp gather,
                                PatternRewriter &rewriter) const override {
    Operation *op = gather.getTable().getDefiningOp();
    auto resultType = cast<RankedTensorType>(gather.getType());
    auto tableType = cast<RankedTensorType>(gather.getTable().getType());
    if (!op || !(op->hasTrait<OpTrait::Elementwise>() || isa<CastOp>(op)) ||
        op->getNumResults() != 1 || op->getNumRegions() != 0 ||
        resultType.getNumElements() > tableType.getNumElements())
      return failure();
    // The one operand that is not a splat constant, and the splats.
    Value source;
    SmallVector<std::pair<unsigned, DenseElementsAttr>> splats;
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      DenseElementsAttr splat;
      if (matchPattern(operand, m_Constant(&splat)) && splat.isSplat()) {
        splats.emplace_back(i, splat);
        continue;
      }
      if (source)
        return failure();
      source = operand;
    }
    if (!source)
      return failure();
    Location loc = gather.getLoc();
    Value rows = rewriter.create<GatherOp>(loc, source, gather.getIndices());
    SmallVector<Value> operands(op->getNumOperands(), rows);
    for (auto [i, splat] : splats)
      operands[i] = rewriter.create<ConstantOp>(
          loc, splat.resizeSplat(resultType.clone(splat.getElementType())));
    OperationState state(op->getLoc(), op->getName(), operands, resultType,
                         op->getAttrs());
    rewriter.replaceOp(gather, rewriter.create(state)->getResults());
    return success();
  }
};

} // namespace

namespace {

/// Replaces the uses of `argument` other than by its block's terminator
/// (which passes it on to the next iteration) by a copy of `constant` made
/// at the start of the block; true if there were any.
bool useConstantCopy(PatternRewriter &rewriter, BlockArgument argument,
                     ConstantOp constant) {
  Block *block = argument.getOwner();
  Operation *terminator = block->getTerminator();
  auto inside = [&](OpOperand &use) { return use.getOwner() != terminator; };
  if (llvm::none_of(argument.getUses(), inside))
    return false;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(block);
  Operation *copy = rewriter.clone(*constant);
  rewriter.replaceUsesWithIf(argument, copy->getResult(0), inside);
  return true;
}

/// The constant carried values of kiln.for and kiln.while (see the file
/// header). `Loop` gives the first body argument of carried value 0 and the
/// regions whose arguments are the carried values.
template <typename Loop>
struct ConstantCarriedValues : OpRewritePattern<Loop> {
  using OpRewritePattern<Loop>::OpRewritePattern;

  LogicalResult matchAndRewrite(Loop loop,
                                PatternRewriter &rewriter) const override {
    constexpr unsigned firstCarried = std::is_same_v<Loop, ForOp> ? 1 : 0;
    Block &body = loop.getBodyRegion().front();
    Operation *yield = body.getTerminator();
    bool changed = false;
    for (auto [k, init] : llvm::enumerate(loop.getInits())) {
      auto constant = init.template getDefiningOp<ConstantOp>();
      BlockArgument carried = body.getArgument(firstCarried + k);
      if (!constant || yield->getOperand(k) != carried)
        continue;
      if constexpr (std::is_same_v<Loop, WhileOp>)
        changed |= useConstantCopy(
            rewriter, loop.getCondRegion().front().getArgument(k), constant);
      changed |= useConstantCopy(rewriter, carried, constant);
      if (!loop->getResult(k).use_empty()) {
        rewriter.replaceAllUsesWith(loop->getResult(k), init);
        changed = true;
      }
    }
    return success(changed);
  }
};

} // namespace

void ForOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<ConstantCarriedValues<ForOp>>(context);
}

void WhileOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add<ConstantCarriedValues<WhileOp>>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<SinkUnitReshape>(context);
}

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<GatherBeforeElementwise>(context);
}
