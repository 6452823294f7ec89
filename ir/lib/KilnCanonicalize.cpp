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
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

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

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<SinkUnitReshape>(context);
}
