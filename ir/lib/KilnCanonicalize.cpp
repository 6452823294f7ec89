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
