//===- StructuralLowering.cpp - kiln shape, reduction, matmul, gather -----===//
//
// Shape ops lower to tensor views where one exists (reshape, slice) and to
// `linalg` otherwise; reductions and contractions to `linalg` with a filled
// init; gather to a `linalg.generic` that reads the table with
// `tensor.extract` at a clamped row; dynamic_slice / dynamic_update_slice to
// tensor.extract_slice / tensor.insert_slice at a clamped row offset.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Splat constants from this many elements on, outside fused kernels,
/// become a filled buffer: as a literal they would be stored in the module
/// element by element (a broadcast scale over an attention's N x N scores
/// is gigabytes). Inside a kernel, linalg fusion folds a splat operand into
/// a scalar, so the literal costs nothing there.
static constexpr int64_t kFilledSplatElements = 1 << 16;

struct ConstantPattern : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    RankedTensorType type = op.getType();
    if (dense && dense.isSplat() && isa<FloatType>(type.getElementType()) &&
        type.getNumElements() >= kFilledSplatElements &&
        !op->getParentOfType<FusedKernelOp>() &&
        !op->getParentOfType<FusedOp>()) {
      Location loc = op.getLoc();
      Value scalar = rewriter.create<arith::ConstantOp>(
          loc, dense.getSplatValue<TypedAttr>());
      Value empty = rewriter.create<tensor::EmptyOp>(
          loc, type.getShape(), type.getElementType());
      rewriter.replaceOpWithNewOp<linalg::FillOp>(op, scalar, empty);
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getType(),
                                                   op.getValue());
    return success();
  }
};

struct IotaPattern : OpRewritePattern<IotaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IotaOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    int64_t dim = op.getDimension();
    Value iota = buildParallelGeneric(
        rewriter, loc, type, ValueRange{}, {},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          Value index = b.create<linalg::IndexOp>(l, dim);
          Value asInt = b.create<arith::IndexCastOp>(l, b.getI64Type(), index);
          Type element = type.getElementType();
          if (isa<FloatType>(element))
            return b.create<arith::SIToFPOp>(l, element, asInt);
          if (element.getIntOrFloatBitWidth() == 64)
            return element.isInteger(64)
                       ? asInt
                       : b.create<arith::BitcastOp>(l, element, asInt)
                             .getResult();
          return b.create<arith::TruncIOp>(l, element, asInt);
        });
    rewriter.replaceOp(op, iota);
    return success();
  }
};

struct BroadcastInDimPattern : OpRewritePattern<BroadcastInDimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastInDimOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType operandType = op.getOperand().getType();
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    // Operand dim i reads result dim dims[i], or index 0 where it broadcasts.
    SmallVector<AffineExpr> exprs;
    for (auto [i, dim] : llvm::enumerate(op.getDims())) {
      bool broadcasts =
          operandType.getDimSize(i) == 1 && type.getDimSize(dim) != 1;
      exprs.push_back(broadcasts ? rewriter.getAffineConstantExpr(0)
                                 : rewriter.getAffineDimExpr(dim));
    }
    AffineMap inputMap = AffineMap::get(type.getRank(), 0, exprs,
                                        rewriter.getContext());
    rewriter.replaceOp(
        op, buildParallelGeneric(
                rewriter, loc, type, op.getOperand(), inputMap,
                [](OpBuilder &, Location, ValueRange args) { return args[0]; }));
    return success();
  }
};

/// Reshape goes through rank 1 (or rank 0): collapse everything, then
/// expand to the target. Both steps are views, so no data moves.
struct ReshapePattern : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value value = op.getOperand();
    RankedTensorType from = op.getOperand().getType();
    RankedTensorType to = op.getType();
    auto allDims = [](int64_t rank) {
      ReassociationIndices group;
      for (int64_t i = 0; i < rank; ++i)
        group.push_back(i);
      return SmallVector<ReassociationIndices>{group};
    };
    if (from.getRank() > 1) {
      auto flat = RankedTensorType::get({from.getNumElements()},
                                        from.getElementType());
      value = rewriter.create<tensor::CollapseShapeOp>(loc, flat, value,
                                                       allDims(from.getRank()));
    }
    int64_t midRank = cast<RankedTensorType>(value.getType()).getRank();
    if (to.getRank() == 0 && midRank == 1)
      value = rewriter.create<tensor::CollapseShapeOp>(
          loc, to, value, SmallVector<ReassociationIndices>{});
    else if (to.getRank() >= 1 && (to.getRank() > 1 || midRank == 0))
      value = rewriter.create<tensor::ExpandShapeOp>(
          loc, to, value,
          midRank == 0 ? SmallVector<ReassociationIndices>{}
                       : allDims(to.getRank()));
    rewriter.replaceOp(op, value);
    return success();
  }
};

struct TransposePattern : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value init = rewriter.create<tensor::EmptyOp>(
        op.getLoc(), type.getShape(), type.getElementType());
    rewriter.replaceOpWithNewOp<linalg::TransposeOp>(
        op, op.getOperand(), init, op.getPermutation());
    return success();
  }
};

/// A generic reading operand dim d at size(d) - 1 - i for reversed dims.
struct ReversePattern : OpRewritePattern<ReverseOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReverseOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      AffineExpr index = rewriter.getAffineDimExpr(d);
      exprs.push_back(llvm::is_contained(op.getDims(), d)
                          ? type.getDimSize(d) - 1 - index
                          : index);
    }
    AffineMap map =
        AffineMap::get(type.getRank(), 0, exprs, rewriter.getContext());
    Value reversed = buildParallelGeneric(
        rewriter, op.getLoc(), type, op.getOperand(), map,
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    rewriter.replaceOp(op, reversed);
    return success();
  }
};

struct SlicePattern : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), op.getOperand(), ValueRange{}, ValueRange{},
        ValueRange{}, op.getStart(), op.getType().getShape(), op.getStride());
    return success();
  }
};

struct ConcatPattern : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t dim = op.getDimension();
    Value result = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                    type.getElementType());
    SmallVector<int64_t> offsets(type.getRank(), 0);
    SmallVector<int64_t> strides(type.getRank(), 1);
    for (Value input : op.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, input, result, ValueRange{}, ValueRange{}, ValueRange{}, offsets,
          inputType.getShape(), strides);
      offsets[dim] += inputType.getDimSize(dim);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// reduce_sum / reduce_max / reduce_mean: a generic over the operand's dims
/// (reduced dims iterate as reductions) accumulating into a filled init,
/// in row-major order of the reduced elements.
template <typename Op>
struct ReducePattern : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto operandType = cast<RankedTensorType>(op.getOperand().getType());
    auto type = cast<RankedTensorType>(op.getType());
    Type element = type.getElementType();
    bool isMax = std::is_same_v<Op, ReduceMaxOp>;
    bool isFloat = isa<FloatType>(element);

    TypedAttr identity;
    if (!isMax)
      identity = rewriter.getZeroAttr(element);
    else if (isFloat)
      identity = rewriter.getFloatAttr(
          element, -std::numeric_limits<double>::infinity());
    else
      identity = rewriter.getIntegerAttr(
          element, lowestIntValue(cast<IntegerType>(element)));
    Value fillValue = rewriter.create<arith::ConstantOp>(loc, identity);
    Value empty = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                   element);
    Value init =
        rewriter.create<linalg::FillOp>(loc, fillValue, empty).getResult(0);

    SmallVector<bool> reduced(operandType.getRank(), false);
    for (int64_t dim : op.getDims())
      reduced[dim] = true;
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < operandType.getRank(); ++d) {
      iterators.push_back(reduced[d] ? utils::IteratorType::reduction
                                     : utils::IteratorType::parallel);
      if (!reduced[d])
        outExprs.push_back(rewriter.getAffineDimExpr(d));
    }
    AffineMap inMap = rewriter.getMultiDimIdentityMap(operandType.getRank());
    AffineMap outMap = AffineMap::get(operandType.getRank(), 0, outExprs,
                                      rewriter.getContext());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{op.getOperand()}, ValueRange{init},
        SmallVector<AffineMap>{inMap, outMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value next;
          if (isMax)
            next = isFloat ? b.create<arith::MaximumFOp>(l, args[1], args[0])
                                 .getResult()
                           : createIntMax(b, l, args[1], args[0]);
          else
            next = isFloat
                       ? b.create<arith::AddFOp>(l, args[1], args[0]).getResult()
                       : b.create<arith::AddIOp>(l, args[1], args[0]).getResult();
          b.create<linalg::YieldOp>(l, next);
        });
    Value result = generic.getResult(0);
    if (std::is_same_v<Op, ReduceMeanOp>) {
      int64_t count = 1;
      for (int64_t dim : op.getDims())
        count *= operandType.getDimSize(dim);
      result = buildElementwise(
          rewriter, loc, type, result,
          [&](OpBuilder &b, Location l, ValueRange args) {
            return b.create<arith::DivFOp>(
                l, args[0], scalarConstant(b, l, element, double(count)));
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MatmulPattern : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The i32 product of 8-bit operands: a generic whose body widens each by
  /// its own signedness (linalg.matmul's casts read one signedness for
  /// both), the form kiln-cpu-matmul-to-dnnl hands to oneDNN's int8 kernels.
  static Value widenedBytesProduct(PatternRewriter &rewriter, Location loc,
                                   ArrayRef<Value> inputs, Value init) {
    auto initType = cast<RankedTensorType>(init.getType());
    unsigned rank = initType.getRank();
    MLIRContext *context = rewriter.getContext();
    // Loops [b,] m, n, k.
    SmallVector<AffineExpr> dims;
    for (unsigned i = 0; i <= rank; ++i)
      dims.push_back(getAffineDimExpr(i, context));
    AffineExpr m = dims[rank - 2], n = dims[rank - 1], k = dims[rank];
    SmallVector<AffineExpr> a, b, c;
    if (rank == 3) {
      a.push_back(dims[0]);
      b.push_back(dims[0]);
      c.push_back(dims[0]);
    }
    a.append({m, k});
    b.append({k, n});
    c.append({m, n});
    SmallVector<AffineMap> maps =
        AffineMap::inferFromExprList({a, b, c}, context);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Type i32 = rewriter.getI32Type();
    return rewriter
        .create<linalg::GenericOp>(
            loc, TypeRange{initType}, inputs, ValueRange{init}, maps, iterators,
            [&](OpBuilder &builder, Location l, ValueRange args) {
              SmallVector<Value> wide;
              for (Value arg : args.take_front(2))
                wide.push_back(arg.getType().isUnsignedInteger()
                                   ? builder.create<arith::ExtUIOp>(l, i32, arg)
                                         .getResult()
                                   : builder.create<arith::ExtSIOp>(l, i32, arg)
                                         .getResult());
              Value product =
                  builder.create<arith::MulIOp>(l, wide[0], wide[1]);
              builder.create<linalg::YieldOp>(
                  l, ValueRange{
                         builder.create<arith::AddIOp>(l, args[2], product)});
            })
        .getResult(0);
  }

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    // f16 and bf16 operands accumulate in f32 (linalg's matmul body extends
    // them to the accumulator's type); a half-precision result is that sum
    // rounded once.
    Type operandElement = op.getLhs().getType().getElementType();
    bool half = operandElement.isF16() || operandElement.isBF16();
    RankedTensorType sumType =
        half ? type.clone(rewriter.getF32Type()) : type;
    Value zero = rewriter.create<arith::ConstantOp>(
        loc, rewriter.getZeroAttr(sumType.getElementType()));
    Value empty = rewriter.create<tensor::EmptyOp>(loc, sumType.getShape(),
                                                   sumType.getElementType());
    Value init = rewriter.create<linalg::FillOp>(loc, zero, empty).getResult(0);
    SmallVector<Value> inputs{op.getLhs(), op.getRhs()};
    Value sum;
    if (operandElement.getIntOrFloatBitWidth() == 8 &&
        type.getElementType().isInteger(32)) {
      sum = widenedBytesProduct(rewriter, loc, inputs, init);
    } else if (type.getRank() == 2) {
      sum = rewriter
                .create<linalg::MatmulOp>(loc, TypeRange{sumType}, inputs,
                                          ValueRange{init})
                .getResult(0);
    } else {
      sum = rewriter
                .create<linalg::BatchMatmulOp>(loc, TypeRange{sumType}, inputs,
                                               ValueRange{init})
                .getResult(0);
    }
    if (sumType != type)
      sum = buildElementwise(
          rewriter, loc, type, sum,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            return b.create<arith::TruncFOp>(l, type.getElementType(),
                                             args[0]);
          });
    rewriter.replaceOp(op, sum);
    return success();
  }
};

/// kiln-byte-tables' index into a 256-entry table: an 8-bit tensor widened
/// by `cast`, plus the splat constant `offset` where there is one (128 for
/// i8 bytes). The gather reads the bytes and widens each itself (the cast's
/// own conversion), instead of a loop writing the 32-bit indices (4 bytes
/// an element) for it to read back.
struct ByteIndex {
  CastOp cast;
  int64_t offset = 0;
};

static std::optional<ByteIndex> byteIndexOf(Value indices) {
  ByteIndex index;
  if (auto add = indices.getDefiningOp<AddOp>()) {
    DenseIntElementsAttr shift;
    if (!matchPattern(add.getRhs(), m_Constant(&shift)) || !shift.isSplat())
      return std::nullopt;
    index.offset = shift.getSplatValue<APInt>().getSExtValue();
    indices = add.getLhs();
  }
  index.cast = indices.getDefiningOp<CastOp>();
  if (!index.cast)
    return std::nullopt;
  auto element = dyn_cast<IntegerType>(
      index.cast.getOperand().getType().getElementType());
  if (!element || element.getWidth() != 8)
    return std::nullopt;
  return index;
}

struct GatherPattern : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value table = op.getTable();
    Value indices = op.getIndices();
    std::optional<ByteIndex> byteIndex = byteIndexOf(indices);
    if (byteIndex)
      indices = byteIndex->cast.getOperand();
    RankedTensorType tableType = op.getTable().getType();
    int64_t indexRank = op.getIndices().getType().getRank();
    int64_t rank = type.getRank();
    // Indices are read through their own map, so each is loaded once per
    // output element without an explicit extract.
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = 0; d < indexRank; ++d)
      indexExprs.push_back(rewriter.getAffineDimExpr(d));
    AffineMap indexMap =
        AffineMap::get(rank, 0, indexExprs, rewriter.getContext());
    Value gathered = buildParallelGeneric(
        rewriter, loc, type, indices, indexMap,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value index = args[0];
          if (byteIndex)
            index = castScalar(b, l, index,
                               byteIndex->cast.getType().getElementType());
          Value row = b.create<arith::IndexCastOp>(l, b.getIndexType(), index);
          if (byteIndex && byteIndex->offset != 0)
            row = b.create<arith::AddIOp>(
                l, row, b.create<arith::ConstantIndexOp>(l, byteIndex->offset));
          Value lo = b.create<arith::ConstantIndexOp>(l, 0);
          Value hi = b.create<arith::ConstantIndexOp>(
              l, tableType.getDimSize(0) - 1);
          row = b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, row, lo),
                                         hi);
          SmallVector<Value> position{row};
          for (int64_t d = indexRank; d < rank; ++d)
            position.push_back(b.create<linalg::IndexOp>(l, d));
          return b.create<tensor::ExtractOp>(l, table, position);
        });
    rewriter.replaceOp(op, gathered);
    return success();
  }
};

/// The first row a dynamic slice of `rows` rows reads or writes:
/// clamp(index, 0, maxStart), as an index.
static Value clampedRowStart(PatternRewriter &rewriter, Location loc,
                             Value index, int64_t maxStart) {
  Value row = rewriter.create<tensor::ExtractOp>(loc, index, ValueRange{});
  row = rewriter.create<arith::IndexCastOp>(loc, rewriter.getIndexType(), row);
  Value lo = rewriter.create<arith::ConstantIndexOp>(loc, 0);
  Value hi = rewriter.create<arith::ConstantIndexOp>(loc, maxStart);
  return rewriter.create<arith::MinSIOp>(
      loc, rewriter.create<arith::MaxSIOp>(loc, row, lo), hi);
}

/// Offsets (clamped row, 0, ...), the sizes of `type` and unit strides.
static void rowSliceParameters(OpBuilder &builder, Value start,
                               RankedTensorType type,
                               SmallVectorImpl<OpFoldResult> &offsets,
                               SmallVectorImpl<OpFoldResult> &sizes,
                               SmallVectorImpl<OpFoldResult> &strides) {
  offsets.push_back(start);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d > 0)
      offsets.push_back(builder.getIndexAttr(0));
    sizes.push_back(builder.getIndexAttr(type.getDimSize(d)));
    strides.push_back(builder.getIndexAttr(1));
  }
}

/// dynamic_slice / dynamic_update_slice: tensor.extract_slice /
/// tensor.insert_slice at a clamped dynamic row offset.
struct DynamicSlicePattern : OpRewritePattern<DynamicSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DynamicSliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    int64_t rows = op.getOperand().getType().getDimSize(0);
    Value start = clampedRowStart(rewriter, op.getLoc(), op.getIndex(),
                                  rows - type.getDimSize(0));
    SmallVector<OpFoldResult> offsets, sizes, strides;
    rowSliceParameters(rewriter, start, type, offsets, sizes, strides);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, op.getOperand(), offsets, sizes, strides);
    return success();
  }
};

struct DynamicUpdateSlicePattern : OpRewritePattern<DynamicUpdateSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DynamicUpdateSliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType update = op.getUpdate().getType();
    int64_t rows = op.getOperand().getType().getDimSize(0);
    Value start = clampedRowStart(rewriter, op.getLoc(), op.getIndex(),
                                  rows - update.getDimSize(0));
    SmallVector<OpFoldResult> offsets, sizes, strides;
    rowSliceParameters(rewriter, start, update, offsets, sizes, strides);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getUpdate(), op.getOperand(), offsets, sizes, strides);
    return success();
  }
};

} // namespace

void kiln::populateStructuralLowerings(RewritePatternSet &patterns) {
  patterns.add<ConstantPattern, IotaPattern, BroadcastInDimPattern,
               ReshapePattern, TransposePattern, ReversePattern, SlicePattern,
               ConcatPattern,
               ReducePattern<ReduceSumOp>, ReducePattern<ReduceMaxOp>,
               ReducePattern<ReduceMeanOp>, MatmulPattern, GatherPattern,
               DynamicSlicePattern, DynamicUpdateSlicePattern>(
      patterns.getContext());
}
