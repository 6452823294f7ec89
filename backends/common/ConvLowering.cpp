//===- ConvLowering.cpp - kiln.conv to linalg -----------------------------===//
//
// The generic lowering of kiln.conv, for every element type and attribute
// combination; the CPU backend calls oneDNN for the f32 convolutions it
// takes (ConvToDnnl.cpp) and this is what the others, and the CUDA
// backend, compile:
//
//   1. x^, the input with lhs_dilation - 1 zeros between neighbours and the
//      padding around it: a zero-filled tensor with the input inserted at
//      offset padding_low with stride lhs_dilation (skipped when there is
//      neither padding nor dilation);
//   2. x^ viewed as [N, G, C/G, P...], the weight as [G, O/G, C/G, K...];
//   3. one linalg.generic over (n, g, o, e..., c, k...) accumulating
//      x^[n, g, c, e * stride + k * rhs_dilation] * w[g, o, c, k] into a
//      zero-filled [N, G, O/G, E...], the reduction running over c and
//      then the kernel offsets in row-major order (the reference
//      evaluator's order);
//   4. the result viewed as [N, O, E...].
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Reassociation that splits dim `split` of a rank-`rank` tensor in two.
SmallVector<ReassociationIndices> splitDim(int64_t rank, int64_t split) {
  SmallVector<ReassociationIndices> groups;
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == split) {
      groups.push_back({next, next + 1});
      next += 2;
    } else {
      groups.push_back({next++});
    }
  }
  return groups;
}

Value zeroFilled(OpBuilder &builder, Location loc, ArrayRef<int64_t> shape,
                 Type element) {
  Value zero = builder.create<arith::ConstantOp>(
      loc, builder.getZeroAttr(element));
  Value empty = builder.create<tensor::EmptyOp>(loc, shape, element);
  return builder.create<linalg::FillOp>(loc, zero, empty).getResult(0);
}

struct ConvPattern : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    RankedTensorType inputType = op.getInput().getType();
    RankedTensorType weightType = op.getWeight().getType();
    int64_t rank = type.getRank(), spatial = rank - 2;
    int64_t groups = op.getGroups();
    int64_t channels = inputType.getDimSize(1);
    int64_t outChannels = weightType.getDimSize(0);
    int64_t groupChannels = channels / groups;
    // Nothing to sum: an empty result, or zeros.
    if (type.getNumElements() == 0 || groupChannels == 0 ||
        weightType.getNumElements() == 0) {
      rewriter.replaceOp(op, zeroFilled(rewriter, loc, type.getShape(),
                                        element));
      return success();
    }
    ArrayRef<int64_t> strides = op.getStrides(), low = op.getPaddingLow(),
                      high = op.getPaddingHigh(),
                      lhsDilation = op.getLhsDilation(),
                      rhsDilation = op.getRhsDilation();

    // 1. x^.
    Value input = op.getInput();
    bool expands = llvm::any_of(low, [](int64_t p) { return p != 0; }) ||
                   llvm::any_of(high, [](int64_t p) { return p != 0; }) ||
                   llvm::any_of(lhsDilation, [](int64_t d) { return d != 1; });
    SmallVector<int64_t> paddedShape(inputType.getShape());
    if (expands) {
      SmallVector<int64_t> offsets(rank, 0), insertStrides(rank, 1);
      for (int64_t d = 0; d < spatial; ++d) {
        paddedShape[d + 2] = (inputType.getDimSize(d + 2) - 1) *
                                 lhsDilation[d] +
                             1 + low[d] + high[d];
        offsets[d + 2] = low[d];
        insertStrides[d + 2] = lhsDilation[d];
      }
      Value padded = zeroFilled(rewriter, loc, paddedShape, element);
      input = rewriter.create<tensor::InsertSliceOp>(
          loc, input, padded, ValueRange{}, ValueRange{}, ValueRange{},
          offsets, inputType.getShape(), insertStrides);
    }

    // 2. Group views.
    SmallVector<int64_t> inputShape{paddedShape[0], groups, groupChannels};
    llvm::append_range(inputShape, ArrayRef(paddedShape).drop_front(2));
    input = rewriter.create<tensor::ExpandShapeOp>(
        loc, RankedTensorType::get(inputShape, element), input,
        splitDim(rank, 1));
    int64_t groupOutChannels = outChannels / groups;
    SmallVector<int64_t> weightShape{groups, groupOutChannels, groupChannels};
    llvm::append_range(weightShape, weightType.getShape().drop_front(2));
    Value weight = rewriter.create<tensor::ExpandShapeOp>(
        loc, RankedTensorType::get(weightShape, element), op.getWeight(),
        splitDim(rank, 0));
    SmallVector<int64_t> outShape{type.getDimSize(0), groups,
                                  groupOutChannels};
    llvm::append_range(outShape, type.getShape().drop_front(2));
    Value init = zeroFilled(rewriter, loc, outShape, element);

    // 3. Loops (n, g, o, e..., c, k...).
    MLIRContext *context = rewriter.getContext();
    int64_t loops = 3 + spatial + 1 + spatial;
    auto dim = [&](int64_t d) { return getAffineDimExpr(d, context); };
    int64_t c = 3 + spatial;
    SmallVector<AffineExpr> inputExprs{dim(0), dim(1), dim(c)};
    SmallVector<AffineExpr> weightExprs{dim(1), dim(2), dim(c)};
    SmallVector<AffineExpr> outExprs{dim(0), dim(1), dim(2)};
    for (int64_t d = 0; d < spatial; ++d) {
      AffineExpr e = dim(3 + d), k = dim(c + 1 + d);
      inputExprs.push_back(e * strides[d] + k * rhsDilation[d]);
      weightExprs.push_back(k);
      outExprs.push_back(e);
    }
    SmallVector<AffineMap> maps{AffineMap::get(loops, 0, inputExprs, context),
                                AffineMap::get(loops, 0, weightExprs, context),
                                AffineMap::get(loops, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(3 + spatial,
                                               utils::IteratorType::parallel);
    iterators.append(1 + spatial, utils::IteratorType::reduction);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{init.getType()}, ValueRange{input, weight},
        ValueRange{init}, maps, iterators,
        [](OpBuilder &b, Location l, ValueRange args) {
          Value product = b.create<arith::MulFOp>(l, args[0], args[1]);
          Value sum = b.create<arith::AddFOp>(l, args[2], product);
          b.create<linalg::YieldOp>(l, sum);
        });

    // 4. [N, O, E...].
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, type, generic.getResult(0), splitDim(rank, 1));
    return success();
  }
};

} // namespace

void kiln::populateConvLowerings(RewritePatternSet &patterns) {
  patterns.add<ConvPattern>(patterns.getContext());
}
