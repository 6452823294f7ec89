//===- ArgReduceLowering.cpp - kiln.argmax / kiln.argmin to linalg --------===//
//
// One `linalg.generic` over the result (the operand's shape without `dim`),
// all of it parallel; each result element scans its slice with an scf.for
// that reads the operand with `tensor.extract`, as gather reads its table.
// A scan keeps the semantics of KilnOps.td exactly (first or last index of
// ties, NaN as the extreme value), and a parallel generic goes through
// every backend's handling of elementwise work: vectorized or threaded
// loops on the CPU, a grid-stride kernel on CUDA. A two-output linalg
// reduction would instead meet the reduction passes, which expect one
// combiner.
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

/// Whether `candidate` at a later index replaces `best` (see KilnOps.td):
/// a strictly better value does, a tie does with `selectLast`, and NaN is
/// the extreme both ways (the first NaN beats every number; later NaNs are
/// ties).
Value replacesBest(OpBuilder &b, Location loc, Value candidate, Value best,
                   bool isMax, bool selectLast) {
  Value falseValue = b.create<arith::ConstantIntOp>(loc, 0, 1);
  if (isa<FloatType>(candidate.getType())) {
    auto cmp = [&](arith::CmpFPredicate predicate, Value x, Value y) -> Value {
      return b.create<arith::CmpFOp>(loc, predicate, x, y);
    };
    Value bestIsNan = cmp(arith::CmpFPredicate::UNO, best, best);
    Value candidateIsNan = cmp(arith::CmpFPredicate::UNO, candidate, candidate);
    // Ordered comparisons: false when either side is NaN.
    Value better = cmp(isMax ? arith::CmpFPredicate::OGT
                             : arith::CmpFPredicate::OLT,
                       candidate, best);
    Value replace = b.create<arith::OrIOp>(loc, candidateIsNan, better);
    if (selectLast)
      replace = b.create<arith::OrIOp>(
          loc, replace, cmp(arith::CmpFPredicate::OEQ, candidate, best));
    Value afterNan = selectLast ? candidateIsNan : falseValue;
    return b.create<arith::SelectOp>(loc, bestIsNan, afterNan, replace);
  }
  Value better = b.create<arith::CmpIOp>(
      loc,
      orderPredicate(candidate.getType(), isMax ? arith::CmpIPredicate::sgt
                                                : arith::CmpIPredicate::slt),
      candidate, best);
  if (!selectLast)
    return better;
  Value tie =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, candidate, best);
  return b.create<arith::OrIOp>(loc, better, tie);
}

template <typename Op>
struct ArgReducePattern : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<Op, ArgMaxOp>;
    Location loc = op.getLoc();
    Value operand = op.getOperand();
    auto operandType = cast<RankedTensorType>(operand.getType());
    int64_t dim = static_cast<int64_t>(op.getDim());
    int64_t size = operandType.getDimSize(dim);
    bool selectLast = op.getSelectLastIndex();
    auto resultType = cast<RankedTensorType>(op.getType());

    Value indices = buildParallelGeneric(
        rewriter, loc, resultType, ValueRange{}, {},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          // The operand position of element k of this result element's
          // slice: the result's indices with k inserted at `dim`.
          SmallVector<Value> position;
          for (int64_t d = 0; d < resultType.getRank(); ++d)
            position.push_back(b.create<linalg::IndexOp>(l, d));
          Value zero = b.create<arith::ConstantIndexOp>(l, 0);
          position.insert(position.begin() + dim, zero);
          Value first = b.create<tensor::ExtractOp>(l, operand, position);
          Value one = b.create<arith::ConstantIndexOp>(l, 1);
          Value end = b.create<arith::ConstantIndexOp>(l, size);
          auto loop = b.create<scf::ForOp>(
              l, one, end, one, ValueRange{first, zero},
              [&](OpBuilder &lb, Location ll, Value k, ValueRange carried) {
                SmallVector<Value> at(position);
                at[dim] = k;
                Value candidate = lb.create<tensor::ExtractOp>(ll, operand, at);
                Value replace = replacesBest(lb, ll, candidate, carried[0],
                                             isMax, selectLast);
                Value best = lb.create<arith::SelectOp>(ll, replace, candidate,
                                                        carried[0]);
                Value index =
                    lb.create<arith::SelectOp>(ll, replace, k, carried[1]);
                lb.create<scf::YieldOp>(ll, ValueRange{best, index});
              });
          return b.create<arith::IndexCastOp>(l, b.getI64Type(),
                                              loop.getResult(1));
        });
    rewriter.replaceOp(op, indices);
    return success();
  }
};

} // namespace

void kiln::populateArgReduceLowerings(RewritePatternSet &patterns) {
  patterns.add<ArgReducePattern<ArgMaxOp>, ArgReducePattern<ArgMinOp>>(
      patterns.getContext());
}
