//===- WindowLowering.cpp - kiln.pad and the windowed reductions ----------===//
//
// kiln.pad: a parallel linalg.generic that broadcasts the padding value,
// then a tensor.insert_slice of the operand at offset `low` with stride
// `interior + 1`.
//
// kiln.reduce_window: one parallel linalg.generic over the result, whose
// body walks the window with scf.for loops (one per dimension with a window
// of more than one element, in row-major window order) and reads the
// operand with tensor.extract. A padded position is never read: its index
// is clamped into the operand and the value replaced by the identity, so
// no padded copy of the operand is materialized and the loops have no
// branches. Every output element is independent, and the body never
// reads the output, so the backends' reduction passes (which match a
// combiner of the output) leave it alone: on the GPU each element is one
// thread. On the CPU (kiln-to-linalg's row-loops) the last result dim is a
// sequential inner loop of each parallel iteration instead, which LLVM
// vectorizes (strided window reads become interleaved vector loads), and
// that dim is split into up to three generics so that the placements whose
// windows lie inside the operand along it read without clamps, whose
// non-affine indices would defeat the vectorizer.
//
// kiln.reduce_window_max_grad (select-and-scatter) is two parallel
// generics, so that no two threads write one element:
//   1. over the cotangent: the row-major position within its window of
//      the element each placement selects (i64, -1 when the window is
//      entirely padding);
//   2. over the operand: each element visits the placements whose window
//      covers it (in row-major order of the placement, as the reference
//      evaluator adds them) and adds the cotangent of those that selected
//      it.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// A tensor of `type` whose every element is `value` (a scalar).
Value filled(OpBuilder &b, Location loc, RankedTensorType type, Value value) {
  Value empty =
      b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  return b.create<linalg::FillOp>(loc, value, empty).getResult(0);
}

/// The identity of a max (-inf, the smallest integer) or of a sum (0).
Value identityOf(OpBuilder &b, Location loc, Type element, bool isMax) {
  TypedAttr attr;
  if (!isMax)
    attr = b.getZeroAttr(element);
  else if (isa<FloatType>(element))
    attr = b.getFloatAttr(element, -std::numeric_limits<double>::infinity());
  else
    attr =
        b.getIntegerAttr(element, lowestIntValue(cast<IntegerType>(element)));
  return b.create<arith::ConstantOp>(loc, attr);
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return b.create<arith::ConstantIndexOp>(loc, value);
}

/// The loop body of buildWindowLoops: gets the window offset of each
/// dimension and the carried values, returns the next carried values.
using WindowBody = llvm::function_ref<SmallVector<Value>(
    OpBuilder &, Location, ArrayRef<Value>, ValueRange)>;

/// Nested scf.for loops over the window offsets w[d] in 0 .. window[d] - 1
/// (outermost dimension outermost), carrying `inits`; a dimension whose
/// window has one element gets no loop. With `reversed`, each w[d] runs
/// from window[d] - 1 down to 0.
SmallVector<Value> buildWindowLoops(OpBuilder &b, Location loc,
                                    ArrayRef<int64_t> window, bool reversed,
                                    ValueRange inits, WindowBody body,
                                    SmallVector<Value> offsets = {}) {
  size_t d = offsets.size();
  if (d == window.size())
    return body(b, loc, offsets, inits);
  if (window[d] == 1) {
    offsets.push_back(indexConstant(b, loc, 0));
    return buildWindowLoops(b, loc, window, reversed, inits, body, offsets);
  }
  auto loop = b.create<scf::ForOp>(
      loc, indexConstant(b, loc, 0), indexConstant(b, loc, window[d]),
      indexConstant(b, loc, 1), inits,
      [&](OpBuilder &nested, Location l, Value k, ValueRange carried) {
        Value w = k;
        if (reversed)
          w = nested.create<arith::SubIOp>(
              l, indexConstant(nested, l, window[d] - 1), k);
        SmallVector<Value> inner(offsets);
        inner.push_back(w);
        nested.create<scf::YieldOp>(
            l, buildWindowLoops(nested, l, window, reversed, carried, body,
                                inner));
      });
  return SmallVector<Value>(loop.getResults());
}

/// The window attributes of kiln.reduce_window and
/// kiln.reduce_window_max_grad.
struct WindowAttrs {
  ArrayRef<int64_t> window, strides, low, high, dilations;

  template <typename OpTy>
  explicit WindowAttrs(OpTy op)
      : window(op.getWindow()), strides(op.getStrides()),
        low(op.getPaddingLow()), high(op.getPaddingHigh()),
        dilations(op.getDilations()) {}

  /// The row-major position of offsets `w` within the window, as an i64.
  Value linearOffset(OpBuilder &b, Location loc, ArrayRef<Value> w) const {
    Value linear = indexConstant(b, loc, 0);
    int64_t stride = 1;
    for (size_t d = window.size(); d-- > 0;) {
      if (window[d] > 1)
        linear = b.create<arith::AddIOp>(
            loc, linear,
            b.create<arith::MulIOp>(loc, w[d], indexConstant(b, loc, stride)));
      stride *= window[d];
    }
    return b.create<arith::IndexCastOp>(loc, b.getI64Type(), linear);
  }
};

/// Where window offsets `w` of placement `placement` read the operand: the
/// index of each dimension clamped into the operand, and whether the
/// position is inside it (null when no dimension is padded, so that it
/// always is).
struct WindowRead {
  SmallVector<Value> indices;
  Value inBounds;
};

/// With `checkLast` false, the caller knows that the windows of these
/// placements lie inside the operand along the last dimension.
WindowRead locate(OpBuilder &b, Location loc, const WindowAttrs &attrs,
                  ArrayRef<int64_t> shape, ArrayRef<Value> placement,
                  ArrayRef<Value> w, bool checkLast = true) {
  WindowRead read;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool checked = checkLast || d + 1 < shape.size();
    // position = placement * stride - low + w * dilation
    Value position = b.create<arith::MulIOp>(
        loc, placement[d], indexConstant(b, loc, attrs.strides[d]));
    position = b.create<arith::AddIOp>(
        loc, position,
        b.create<arith::MulIOp>(loc, w[d],
                                indexConstant(b, loc, attrs.dilations[d])));
    position = b.create<arith::SubIOp>(loc, position,
                                       indexConstant(b, loc, attrs.low[d]));
    // Without low padding the position is never negative, and without
    // high padding never past the end (the result shape guarantees it).
    auto require = [&](Value condition) {
      read.inBounds = read.inBounds ? b.create<arith::AndIOp>(
                                          loc, read.inBounds, condition)
                                    : condition;
    };
    if (checked && attrs.low[d] > 0) {
      Value zero = indexConstant(b, loc, 0);
      require(b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, position,
                                      zero));
      position = b.create<arith::MaxSIOp>(loc, position, zero);
    }
    if (checked && attrs.high[d] > 0) {
      Value last = indexConstant(b, loc, shape[d] - 1);
      require(b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, position,
                                      last));
      position = b.create<arith::MinSIOp>(loc, position, last);
    }
    read.indices.push_back(position);
  }
  return read;
}

SmallVector<Value> resultIndices(OpBuilder &b, Location loc, int64_t rank) {
  SmallVector<Value> indices;
  for (int64_t d = 0; d < rank; ++d)
    indices.push_back(b.create<linalg::IndexOp>(loc, d));
  return indices;
}

struct PadPattern : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType operandType = op.getOperand().getType();
    // Data movement only (a fill and a strided insert), so any element
    // type, f16 and bf16 included, as ConvertKilnToLinalg promises.
    if (type.getRank() == 0) {
      rewriter.replaceOp(op, op.getOperand());
      return success();
    }
    // The rank-0 value is read through a map with no results, so the fill
    // is an ordinary parallel loop (a kernel on the GPU, not a host read).
    AffineMap scalarMap =
        AffineMap::get(type.getRank(), 0, {}, rewriter.getContext());
    Value result = buildParallelGeneric(
        rewriter, loc, type, op.getPaddingValue(), scalarMap,
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    if (operandType.getNumElements() > 0) {
      SmallVector<int64_t> strides;
      for (int64_t interior : op.getInterior())
        strides.push_back(interior + 1);
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, op.getOperand(), result, ValueRange{}, ValueRange{},
          ValueRange{}, op.getLow(), operandType.getShape(), strides);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The placements along the last result dimension, [begin, end), that one
/// generic computes, and whether their windows need bounds checks there.
struct Columns {
  int64_t begin, end;
  bool checked;
};

/// The last result dimension in up to three runs: placements whose windows
/// start in the low padding, those whose windows lie inside the operand, and
/// those that reach into the high padding.
SmallVector<Columns> splitColumns(const WindowAttrs &attrs, int64_t size,
                                  int64_t placements) {
  size_t d = attrs.window.size() - 1;
  int64_t span = (attrs.window[d] - 1) * attrs.dilations[d] + 1;
  int64_t stride = attrs.strides[d];
  // Inside: placement * stride >= low and
  // placement * stride - low + span <= size.
  int64_t begin = std::min((attrs.low[d] + stride - 1) / stride, placements);
  int64_t last = size + attrs.low[d] - span;
  int64_t end = last < 0 ? 0 : std::min(last / stride + 1, placements);
  end = std::max(end, begin);
  SmallVector<Columns> runs;
  for (Columns run : {Columns{0, begin, true}, Columns{begin, end, false},
                      Columns{end, placements, true}})
    if (run.end > run.begin)
      runs.push_back(run);
  return runs;
}

struct ReduceWindowPattern : OpRewritePattern<ReduceWindowOp> {
  ReduceWindowPattern(MLIRContext *context, bool rowLoops)
      : OpRewritePattern(context), rowLoops(rowLoops) {}

  LogicalResult matchAndRewrite(ReduceWindowOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType operandType = op.getOperand().getType();
    Type element = type.getElementType();
    bool isMax = op.getKind() == ReduceWindowKind::Max;
    // An empty operand leaves every window in the padding.
    if (operandType.getNumElements() == 0 || type.getNumElements() == 0) {
      rewriter.replaceOp(op, filled(rewriter, loc, type,
                                    identityOf(rewriter, loc, element, isMax)));
      return success();
    }
    WindowAttrs attrs(op);
    int64_t rank = type.getRank();
    // A rank-1 pool keeps its one dim parallel: as an inner loop it would
    // leave no loop for the threads.
    bool rows = rowLoops && rank > 1 && type.getDimSize(rank - 1) > 1;
    SmallVector<Columns> runs;
    if (rows && (attrs.low.back() > 0 || attrs.high.back() > 0))
      runs = splitColumns(attrs, operandType.getDimSize(rank - 1),
                          type.getDimSize(rank - 1));
    if (runs.size() <= 1) {
      Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                    element);
      rewriter.replaceOp(op, buildColumns(rewriter, op, init,
                                          /*offset=*/0, /*checkLast=*/true,
                                          rows));
      return success();
    }
    // Each run is computed into its slice of the result, which
    // bufferization writes in place.
    Value result = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                    element);
    SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
        strides(rank, 1);
    for (Columns run : runs) {
      offsets.back() = run.begin;
      sizes.back() = run.end - run.begin;
      Value slice = rewriter.create<tensor::ExtractSliceOp>(
          loc, RankedTensorType::get(sizes, element), result, ValueRange{},
          ValueRange{}, ValueRange{}, offsets, sizes, strides);
      Value part = buildColumns(rewriter, op, slice, run.begin, run.checked,
                                rows);
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, part, result, ValueRange{}, ValueRange{}, ValueRange{},
          offsets, sizes, strides);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  /// A generic writing `init`, the placements whose last index starts at
  /// `offset`. With `rows`, the last dim is a sequential inner loop: it is
  /// declared a reduction iterator, not because anything is reduced along
  /// it (each iteration writes its own element and the output is never
  /// read) but so that the parallel-loop lowering keeps it out of the
  /// collapsed OpenMP loop, whose index arithmetic would make the window
  /// reads non-affine and keep LLVM from vectorizing them.
  Value buildColumns(PatternRewriter &rewriter, ReduceWindowOp op, Value init,
                     int64_t offset, bool checkLast, bool rows) const {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(init.getType());
    Type element = type.getElementType();
    bool isMax = op.getKind() == ReduceWindowKind::Max;
    bool isFloat = isa<FloatType>(element);
    WindowAttrs attrs(op);
    Value operand = op.getOperand();
    ArrayRef<int64_t> shape = op.getOperand().getType().getShape();
    int64_t rank = type.getRank();
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    if (rows)
      iterators.back() = utils::IteratorType::reduction;
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        iterators, [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> placement = resultIndices(b, l, rank);
          if (offset != 0)
            placement.back() = b.create<arith::AddIOp>(
                l, placement.back(), indexConstant(b, l, offset));
          Value identity = identityOf(b, l, element, isMax);
          SmallVector<Value> acc = buildWindowLoops(
              b, l, attrs.window, /*reversed=*/false, identity,
              [&](OpBuilder &ib, Location il, ArrayRef<Value> w,
                  ValueRange carried) -> SmallVector<Value> {
                WindowRead read =
                    locate(ib, il, attrs, shape, placement, w, checkLast);
                Value x = ib.create<tensor::ExtractOp>(il, operand,
                                                       read.indices);
                if (read.inBounds)
                  x = ib.create<arith::SelectOp>(il, read.inBounds, x,
                                                 identity);
                Value next;
                if (isMax)
                  next = isFloat
                             ? ib.create<arith::MaximumFOp>(il, carried[0], x)
                                   .getResult()
                             : createIntMax(ib, il, carried[0], x);
                else
                  next = isFloat
                             ? ib.create<arith::AddFOp>(il, carried[0], x)
                                   .getResult()
                             : ib.create<arith::AddIOp>(il, carried[0], x)
                                   .getResult();
                return {next};
              });
          b.create<linalg::YieldOp>(l, acc[0]);
        });
    return generic.getResult(0);
  }

  bool rowLoops;
};

struct ReduceWindowMaxGradPattern : OpRewritePattern<ReduceWindowMaxGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceWindowMaxGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType cotangentType = op.getCotangent().getType();
    Type element = type.getElementType();
    Value zero =
        rewriter.create<arith::ConstantOp>(loc, rewriter.getZeroAttr(element));
    if (type.getNumElements() == 0 || cotangentType.getNumElements() == 0) {
      rewriter.replaceOp(op, filled(rewriter, loc, type, zero));
      return success();
    }
    bool isFloat = isa<FloatType>(element);
    WindowAttrs attrs(op);
    Value operand = op.getOperand(), cotangent = op.getCotangent();
    ArrayRef<int64_t> shape = type.getShape();

    // 1. Which window position each placement selects.
    auto selectionType = RankedTensorType::get(cotangentType.getShape(),
                                               rewriter.getI64Type());
    Value selection = buildParallelGeneric(
        rewriter, loc, selectionType, ValueRange{}, {},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          SmallVector<Value> placement =
              resultIndices(b, l, cotangentType.getRank());
          Value none = b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(-1));
          Value start = identityOf(b, l, element, /*isMax=*/true);
          SmallVector<Value> best = buildWindowLoops(
              b, l, attrs.window, /*reversed=*/false, ValueRange{start, none},
              [&](OpBuilder &ib, Location il, ArrayRef<Value> w,
                  ValueRange carried) -> SmallVector<Value> {
                WindowRead read = locate(ib, il, attrs, shape, placement, w);
                Value x = ib.create<tensor::ExtractOp>(il, operand,
                                                       read.indices);
                Value value = carried[0], index = carried[1];
                Value first = ib.create<arith::CmpIOp>(
                    il, arith::CmpIPredicate::slt, index,
                    ib.create<arith::ConstantOp>(il, ib.getI64IntegerAttr(0)));
                Value better;
                if (isFloat) {
                  better = ib.create<arith::CmpFOp>(
                      il, arith::CmpFPredicate::OGT, x, value);
                  // The first NaN wins over any number.
                  Value xIsNaN = ib.create<arith::CmpFOp>(
                      il, arith::CmpFPredicate::UNO, x, x);
                  Value valueIsNumber = ib.create<arith::CmpFOp>(
                      il, arith::CmpFPredicate::ORD, value, value);
                  better = ib.create<arith::OrIOp>(
                      il, better,
                      ib.create<arith::AndIOp>(il, xIsNaN, valueIsNumber));
                } else {
                  better = ib.create<arith::CmpIOp>(
                      il,
                      orderPredicate(x.getType(), arith::CmpIPredicate::sgt), x,
                      value);
                }
                Value take = ib.create<arith::OrIOp>(il, first, better);
                if (read.inBounds)
                  take = ib.create<arith::AndIOp>(il, take, read.inBounds);
                return {ib.create<arith::SelectOp>(il, take, x, value),
                        ib.create<arith::SelectOp>(
                            il, take, attrs.linearOffset(ib, il, w), index)};
              });
          return best[1];
        });

    // 2. Each element adds the cotangents of the placements that chose it.
    ArrayRef<int64_t> placements = cotangentType.getShape();
    Value result = buildParallelGeneric(
        rewriter, loc, type, ValueRange{}, {},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          SmallVector<Value> position = resultIndices(b, l, type.getRank());
          // Offsets run backwards so that the placements come in row-major
          // order: placement = (position + low - w * dilation) / stride.
          SmallVector<Value> sum = buildWindowLoops(
              b, l, attrs.window, /*reversed=*/true, zero,
              [&](OpBuilder &ib, Location il, ArrayRef<Value> w,
                  ValueRange carried) -> SmallVector<Value> {
                Value zeroIndex = indexConstant(ib, il, 0);
                Value covers;
                SmallVector<Value> placement;
                for (size_t d = 0; d < shape.size(); ++d) {
                  Value q = ib.create<arith::SubIOp>(
                      il,
                      ib.create<arith::AddIOp>(
                          il, position[d],
                          indexConstant(ib, il, attrs.low[d])),
                      ib.create<arith::MulIOp>(
                          il, w[d], indexConstant(ib, il, attrs.dilations[d])));
                  Value valid = ib.create<arith::CmpIOp>(
                      il, arith::CmpIPredicate::sge, q, zeroIndex);
                  q = ib.create<arith::MaxSIOp>(il, q, zeroIndex);
                  Value p = q;
                  if (attrs.strides[d] > 1) {
                    Value stride = indexConstant(ib, il, attrs.strides[d]);
                    Value aligned = ib.create<arith::CmpIOp>(
                        il, arith::CmpIPredicate::eq,
                        ib.create<arith::RemUIOp>(il, q, stride), zeroIndex);
                    valid = ib.create<arith::AndIOp>(il, valid, aligned);
                    p = ib.create<arith::DivUIOp>(il, q, stride);
                  }
                  Value last = indexConstant(ib, il, placements[d] - 1);
                  valid = ib.create<arith::AndIOp>(
                      il, valid,
                      ib.create<arith::CmpIOp>(il, arith::CmpIPredicate::sle,
                                               p, last));
                  placement.push_back(ib.create<arith::MinSIOp>(il, p, last));
                  covers = covers ? ib.create<arith::AndIOp>(il, covers, valid)
                                  : valid;
                }
                Value chosen =
                    ib.create<tensor::ExtractOp>(il, selection, placement);
                Value selects = ib.create<arith::CmpIOp>(
                    il, arith::CmpIPredicate::eq, chosen,
                    attrs.linearOffset(ib, il, w));
                if (covers)
                  selects = ib.create<arith::AndIOp>(il, selects, covers);
                Value g = ib.create<tensor::ExtractOp>(il, cotangent, placement);
                g = ib.create<arith::SelectOp>(il, selects, g, zero);
                Value next =
                    isFloat
                        ? ib.create<arith::AddFOp>(il, carried[0], g).getResult()
                        : ib.create<arith::AddIOp>(il, carried[0], g)
                              .getResult();
                return {next};
              });
          return sum[0];
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::populateWindowLowerings(RewritePatternSet &patterns,
                                   bool rowLoops) {
  patterns.add<PadPattern, ReduceWindowMaxGradPattern>(patterns.getContext());
  patterns.add<ReduceWindowPattern>(patterns.getContext(), rowLoops);
}
