//===- StackLowering.cpp - kiln stacks to tensor ops -----------------------===//
//
// A kiln stack is already a builtin tensor<?x...>, so it lowers to tensor
// ops on that same type and one-shot bufferization turns it into a memref
// whose allocation the deallocation pipeline frees:
//
//   stack_empty          tensor.empty(0)
//   stack_reserve s, n   tensor.empty(max(n, dim(s, 0))) and
//                        tensor.insert_slice of the old rows
//   stack_push s[i], v   tensor.insert_slice of v at row i
//   stack_read s[i]      tensor.extract_slice of row i
//
// stack_reserve always makes a new buffer: choosing at run time between
// the old and a new one (an scf.if) left one buffer unfreed after
// ownership-based deallocation (seen with valgrind), and reverse mode only
// reserves to grow. Growth is kept out of stack_push on purpose: a loop whose body only
// pushes yields a buffer equivalent to the one it received, so
// bufferization writes in place. A loop that also grows the stack yields a
// possibly new buffer, which one-shot bufferization copies once per
// iteration; reverse mode therefore grows stacks in an outer loop, once
// per doubling of the capacity (see passes/autodiff/ControlFlowRules.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// The row index held by a rank-0 i64 tensor, as an index.
static Value extractRow(OpBuilder &builder, Location loc, Value index) {
  Value row = builder.create<tensor::ExtractOp>(loc, index, ValueRange{});
  return builder.create<arith::IndexCastOp>(loc, builder.getIndexType(), row);
}

/// Offsets, sizes and strides of `rows` rows of `stack` starting at `row`.
static void rowSlice(OpBuilder &builder, RankedTensorType stack, OpFoldResult row,
                     OpFoldResult rows, SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes,
                     SmallVectorImpl<OpFoldResult> &strides) {
  offsets.push_back(row);
  sizes.push_back(rows);
  strides.push_back(builder.getIndexAttr(1));
  for (int64_t dim : stack.getShape().drop_front()) {
    offsets.push_back(builder.getIndexAttr(0));
    sizes.push_back(builder.getIndexAttr(dim));
    strides.push_back(builder.getIndexAttr(1));
  }
}

struct StackEmptyPattern : OpRewritePattern<StackEmptyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StackEmptyOp op,
                                PatternRewriter &rewriter) const override {
    Value zero = rewriter.create<arith::ConstantIndexOp>(op.getLoc(), 0);
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(op, op.getType(),
                                                 ValueRange{zero});
    return success();
  }
};

struct StackReservePattern : OpRewritePattern<StackReserveOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StackReserveOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getStack().getType();
    Value stack = op.getStack();
    Value rows = extractRow(rewriter, loc, op.getRows());
    Value capacity = rewriter.create<tensor::DimOp>(loc, stack, 0);
    Value size = rewriter.create<arith::MaxSIOp>(loc, rows, capacity);
    Value grown = rewriter.create<tensor::EmptyOp>(loc, type, ValueRange{size});
    SmallVector<OpFoldResult> offsets, sizes, strides;
    rowSlice(rewriter, type, rewriter.getIndexAttr(0), capacity, offsets,
             sizes, strides);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(op, stack, grown,
                                                       offsets, sizes, strides);
    return success();
  }
};

struct StackPushPattern : OpRewritePattern<StackPushOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StackPushOp op,
                                PatternRewriter &rewriter) const override {
    Value row = extractRow(rewriter, op.getLoc(), op.getIndex());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    rowSlice(rewriter, op.getStack().getType(), row, rewriter.getIndexAttr(1),
             offsets, sizes, strides);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getValue(), op.getStack(), offsets, sizes, strides);
    return success();
  }
};

struct StackReadPattern : OpRewritePattern<StackReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StackReadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value row = extractRow(rewriter, loc, op.getIndex());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    rowSlice(rewriter, op.getStack().getType(), row, rewriter.getIndexAttr(1),
             offsets, sizes, strides);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), op.getStack(), offsets, sizes, strides);
    return success();
  }
};

} // namespace

void kiln::populateStackLowerings(RewritePatternSet &patterns) {
  patterns.add<StackEmptyPattern, StackReservePattern, StackPushPattern,
               StackReadPattern>(
      patterns.getContext());
}
