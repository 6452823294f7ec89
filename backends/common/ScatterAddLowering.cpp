//===- ScatterAddLowering.cpp - kiln.scatter_add to an scf.for of rows ----===//
//
// kiln.scatter_add adds n rows of m elements into a table at n indices. Two
// indices may name the same row, so the rows cannot be added in parallel;
// the op lowers to an scf.for over the indices that carries the table and,
// at step k, adds update row k into the table's row clamp(index[k]) with a
// `linalg.generic` over the row's m elements (vectorized, or one kernel on
// CUDA), written in place. The work is that of the updates, not the table's
// (the carried table is copied once, when its operand is still read, by
// bufferization), and the rows are added in the indices' order, so the
// result is bit for bit the reference evaluator's.
//
// The table, indices and updates are first viewed as [rows, m], [n] and
// [n, m] by kiln.reshape (lowered by the same pattern set) so that one loop
// serves every rank.
//
// The loop runs in the host code, which reads index k in each step. On
// the CPU (kiln-to-linalg's row-loops) it reads the indices' buffer
// directly. On a GPU the indices live in device memory: each step clamps
// its index in a rank-0 linalg.generic (a one-thread kernel,
// kiln-cuda-scalar-kernels) and the host reads that rank-0 result, which
// kiln-cuda-predicate-copies copies to the host as it does a kiln.while's
// predicate: one small copy and one synchronization per index.
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

/// `value` viewed with `shape` (a kiln.reshape, or `value` if it has it).
static Value reshapeTo(PatternRewriter &rewriter, Location loc, Value value,
                       ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return rewriter.create<ReshapeOp>(loc, type.clone(shape), value);
}

/// a + b in the element type; f16 and bf16 are added in f32 and rounded
/// once, as the evaluator rounds the exact sum.
static Value addElements(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Type element = lhs.getType();
  if (!isa<FloatType>(element))
    return b.create<arith::AddIOp>(loc, lhs, rhs);
  if (!element.isF16() && !element.isBF16())
    return b.create<arith::AddFOp>(loc, lhs, rhs);
  Type f32 = b.getF32Type();
  Value sum = b.create<arith::AddFOp>(loc, b.create<arith::ExtFOp>(loc, f32, lhs),
                                      b.create<arith::ExtFOp>(loc, f32, rhs));
  return b.create<arith::TruncFOp>(loc, element, sum);
}

struct ScatterAddPattern : OpRewritePattern<ScatterAddOp> {
  ScatterAddPattern(MLIRContext *context, bool hostIndices)
      : OpRewritePattern(context), hostIndices(hostIndices) {}
  LogicalResult matchAndRewrite(ScatterAddOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rows = type.getDimSize(0);
    int64_t n = op.getIndices().getType().getNumElements();
    int64_t m = type.getNumElements() / rows;
    if (n == 0 || m == 0) {
      rewriter.replaceOp(op, op.getTable());
      return success();
    }
    Value table = reshapeTo(rewriter, loc, op.getTable(), {rows, m});
    Value indices = reshapeTo(rewriter, loc, op.getIndices(), {n});
    Value updates = reshapeTo(rewriter, loc, op.getUpdates(), {n, m});
    Type element = type.getElementType();
    auto rowType = RankedTensorType::get({1, m}, element);

    Value lower = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value upper = rewriter.create<arith::ConstantIndexOp>(loc, n);
    Value step = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value lastRow = rewriter.create<arith::ConstantIndexOp>(loc, rows - 1);
    AffineMap identity = rewriter.getMultiDimIdentityMap(2);
    SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);
    auto loop = rewriter.create<scf::ForOp>(
        loc, lower, upper, step, ValueRange{table},
        [&](OpBuilder &b, Location l, Value k, ValueRange carried) {
          Value row = hostIndices ? clampedRowOnHost(b, l, indices, k, lower,
                                                     lastRow)
                                  : clampedRowOnDevice(b, l, indices, k,
                                                       rows - 1);
          SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(m)};
          SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
          SmallVector<OpFoldResult> tableOffsets{row, b.getIndexAttr(0)};
          SmallVector<OpFoldResult> updateOffsets{k, b.getIndexAttr(0)};
          Value target = b.create<tensor::ExtractSliceOp>(
              l, rowType, carried[0], tableOffsets, sizes, strides);
          Value update = b.create<tensor::ExtractSliceOp>(
              l, rowType, updates, updateOffsets, sizes, strides);
          // target += update, written into the table row's own tensor.
          Value sum =
              b.create<linalg::GenericOp>(
                   l, TypeRange{rowType}, ValueRange{update},
                   ValueRange{target},
                   SmallVector<AffineMap>{identity, identity}, parallel,
                   [&](OpBuilder &gb, Location gl, ValueRange args) {
                     gb.create<linalg::YieldOp>(
                         gl, addElements(gb, gl, args[1], args[0]));
                   })
                  .getResult(0);
          Value next = b.create<tensor::InsertSliceOp>(
              l, sum, carried[0], tableOffsets, sizes, strides);
          b.create<scf::YieldOp>(l, next);
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, loop.getResult(0),
                                     type.getShape()));
    return success();
  }

private:
  /// clamp(indices[k], 0, last), read by the host.
  static Value clampedRowOnHost(OpBuilder &b, Location l, Value indices,
                                Value k, Value zero, Value last) {
    Value index = b.create<tensor::ExtractOp>(l, indices, ValueRange{k});
    Value row = b.create<arith::IndexCastOp>(l, b.getIndexType(), index);
    return b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, row, zero),
                                    last);
  }

  /// clamp(indices[k], 0, last) computed into a rank-0 i64 tensor by a
  /// linalg.generic, then read by the host.
  static Value clampedRowOnDevice(OpBuilder &b, Location l, Value indices,
                                  Value k, int64_t last) {
    auto indexType = cast<RankedTensorType>(indices.getType());
    Type element = indexType.getElementType();
    Type i64 = b.getI64Type();
    Value one = b.create<tensor::ExtractSliceOp>(
        l, RankedTensorType::get({}, element), indices,
        ArrayRef<OpFoldResult>{k}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    Value empty = b.create<tensor::EmptyOp>(l, ArrayRef<int64_t>{}, i64);
    AffineMap scalar = AffineMap::get(0, 0, b.getContext());
    Value clamped =
        b.create<linalg::GenericOp>(
             l, TypeRange{empty.getType()}, ValueRange{one}, ValueRange{empty},
             SmallVector<AffineMap>{scalar, scalar},
             SmallVector<utils::IteratorType>{},
             [&](OpBuilder &gb, Location gl, ValueRange args) {
               Value wide = args[0];
               if (element != i64)
                 wide = gb.create<arith::ExtSIOp>(gl, i64, wide);
               Value lo = gb.create<arith::ConstantIntOp>(gl, 0, i64);
               Value hi = gb.create<arith::ConstantIntOp>(gl, last, i64);
               gb.create<linalg::YieldOp>(
                   gl, ValueRange{gb.create<arith::MinSIOp>(
                           gl, gb.create<arith::MaxSIOp>(gl, wide, lo), hi)});
             })
            .getResult(0);
    Value row = b.create<tensor::ExtractOp>(l, clamped, ValueRange{});
    return b.create<arith::IndexCastOp>(l, b.getIndexType(), row);
  }

  bool hostIndices;
};

} // namespace

void kiln::populateScatterAddLowerings(RewritePatternSet &patterns,
                                       bool hostIndices) {
  patterns.add<ScatterAddPattern>(patterns.getContext(), hostIndices);
}
