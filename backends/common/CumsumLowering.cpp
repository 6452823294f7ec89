//===- CumsumLowering.cpp - kiln.cumsum to an scf.for of slice updates ----===//
//
// A running sum is sequential along its dimension and independent across
// the others. So it lowers to an scf.for over the summed dimension that
// carries the running sum of one slice (the operand's shape with that
// dimension 1) and the result: each step adds the operand's slice k into
// the carried sum with a `linalg.generic` that writes into it in place
// (vectorized, or one kernel on CUDA, over the other dimensions) and
// inserts it at row k of the result, before the addition when the sum is
// exclusive. With `reverse` the steps visit k = n-1 down to 0. Every
// element is accumulated in the op's order, so the result is bit for bit
// the reference evaluator's.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct CumsumPattern : OpRewritePattern<CumsumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumsumOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    // An empty tensor has nothing to sum.
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, op.getOperand());
      return success();
    }
    int64_t dim = static_cast<int64_t>(op.getDim());
    int64_t rank = type.getRank();
    int64_t n = type.getDimSize(dim);
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    bool isFloat = isa<FloatType>(element);

    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[dim] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, element);
    Value zero = rewriter.create<arith::ConstantOp>(
        loc, rewriter.getZeroAttr(element));
    Value sum = rewriter
                    .create<linalg::FillOp>(
                        loc, zero,
                        rewriter.create<tensor::EmptyOp>(loc, sliceShape,
                                                         element)
                            .getResult())
                    .getResult(0);
    Value result =
        rewriter.create<tensor::EmptyOp>(loc, type.getShape(), element);

    Value lower = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value upper = rewriter.create<arith::ConstantIndexOp>(loc, n);
    Value step = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value last = rewriter.create<arith::ConstantIndexOp>(loc, n - 1);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    auto loop = rewriter.create<scf::ForOp>(
        loc, lower, upper, step, ValueRange{sum, result},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          Value k = reverse ? b.create<arith::SubIOp>(l, last, i).getResult()
                            : i;
          SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
          offsets[dim] = k;
          SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
          for (int64_t size : sliceShape)
            sizes.push_back(b.getIndexAttr(size));
          Value row = b.create<tensor::ExtractSliceOp>(
              l, sliceType, op.getOperand(), offsets, sizes, strides);
          Value running = carried[0], partial = carried[1];
          auto insertRow = [&](Value value) {
            partial = b.create<tensor::InsertSliceOp>(l, value, partial,
                                                      offsets, sizes, strides);
          };
          if (exclusive)
            insertRow(running);
          // running += row, written into the running sum's own tensor.
          running = b.create<linalg::GenericOp>(
                         l, TypeRange{sliceType}, ValueRange{row},
                         ValueRange{running},
                         SmallVector<AffineMap>{identity, identity}, parallel,
                         [&](OpBuilder &gb, Location gl, ValueRange args) {
                           Value next =
                               isFloat ? gb.create<arith::AddFOp>(gl, args[1],
                                                                  args[0])
                                             .getResult()
                                       : gb.create<arith::AddIOp>(gl, args[1],
                                                                  args[0])
                                             .getResult();
                           gb.create<linalg::YieldOp>(gl, next);
                         })
                        .getResult(0);
          if (!exclusive)
            insertRow(running);
          b.create<scf::YieldOp>(l, ValueRange{running, partial});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

} // namespace

void kiln::populateCumsumLowerings(RewritePatternSet &patterns) {
  patterns.add<CumsumPattern>(patterns.getContext());
}
