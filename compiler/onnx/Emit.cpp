//===- Emit.cpp - Building kiln ops with ONNX's conventions ---------------===//

#include "Emit.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {

int64_t numElementsOf(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    shape[i] = da == 1 ? db : da;
  }
  return shape;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

static Attribute elementAttr(Type elementType, double value) {
  if (auto f = dyn_cast<FloatType>(elementType))
    return FloatAttr::get(f, value);
  if (elementType.isInteger(1))
    return IntegerAttr::get(elementType, value != 0 ? 1 : 0);
  return IntegerAttr::get(elementType, static_cast<int64_t>(value));
}

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  auto attr = DenseElementsAttr::get(type,
                                     elementAttr(type.getElementType(), value));
  return b.create<ConstantOp>(loc, type, attr);
}

Value scalar(OpBuilder &b, Location loc, Type elementType, double value) {
  return splat(b, loc, RankedTensorType::get({}, elementType), value);
}

Value constantInts(OpBuilder &b, Location loc, Type elementType,
                   ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, elementType);
  SmallVector<Attribute> attrs;
  for (int64_t v : values)
    attrs.push_back(elementAttr(elementType, static_cast<double>(v)));
  if (!elementType.isInteger(1) && isa<IntegerType>(elementType)) {
    attrs.clear();
    for (int64_t v : values)
      attrs.push_back(IntegerAttr::get(elementType, v));
  }
  return b.create<ConstantOp>(loc, type, DenseElementsAttr::get(type, attrs));
}

Value constantFloats(OpBuilder &b, Location loc, Type elementType,
                     ArrayRef<int64_t> shape, ArrayRef<double> values) {
  auto type = RankedTensorType::get(shape, elementType);
  SmallVector<Attribute> attrs;
  for (double v : values)
    attrs.push_back(elementAttr(elementType, v));
  return b.create<ConstantOp>(loc, type, DenseElementsAttr::get(type, attrs));
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  auto type = RankedTensorType::get(shape, elementTypeOf(v));
  return b.create<ReshapeOp>(loc, type, v);
}

Value broadcastTo(OpBuilder &b, Location loc, Value v,
                  ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  int64_t rank = rankOf(v);
  int64_t offset = static_cast<int64_t>(shape.size()) - rank;
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    dims.push_back(offset + i);
  auto type = RankedTensorType::get(shape, elementTypeOf(v));
  return b.create<BroadcastInDimOp>(loc, type, v, dims);
}

Value cast(OpBuilder &b, Location loc, Value v, Type elementType) {
  if (elementTypeOf(v) == elementType)
    return v;
  auto type = RankedTensorType::get(shapeOf(v), elementType);
  return b.create<CastOp>(loc, type, v);
}

Value transpose(OpBuilder &b, Location loc, Value v,
                ArrayRef<int64_t> permutation) {
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i)
    identity &= permutation[i] == static_cast<int64_t>(i);
  if (identity)
    return v;
  return b.create<TransposeOp>(loc, v, permutation);
}

Value slice(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> start,
            ArrayRef<int64_t> limit, ArrayRef<int64_t> stride) {
  bool whole = true;
  for (size_t i = 0; i < start.size(); ++i)
    whole &= start[i] == 0 && limit[i] == shapeOf(v)[i] && stride[i] == 1;
  if (whole)
    return v;
  return b.create<SliceOp>(loc, v, start, limit, stride);
}

Value sliceAxis(OpBuilder &b, Location loc, Value v, int64_t axis,
                int64_t start, int64_t limit) {
  SmallVector<int64_t> starts(rankOf(v), 0), limits(shapeOf(v)),
      strides(rankOf(v), 1);
  starts[axis] = start;
  limits[axis] = limit;
  return slice(b, loc, v, starts, limits, strides);
}

Value concat(OpBuilder &b, Location loc, ArrayRef<Value> values,
             int64_t axis) {
  if (values.size() == 1)
    return values.front();
  return b.create<ConcatOp>(loc, values, axis);
}

Value compare(OpBuilder &b, Location loc, unsigned direction, Value lhs,
              Value rhs) {
  SmallVector<int64_t> shape = *broadcastShapes(shapeOf(lhs), shapeOf(rhs));
  lhs = broadcastTo(b, loc, lhs, shape);
  rhs = broadcastTo(b, loc, rhs, shape);
  return b.create<CompareOp>(loc, static_cast<CompareDirection>(direction),
                             lhs, rhs);
}

Value select(OpBuilder &b, Location loc, Value pred, Value onTrue,
             Value onFalse) {
  SmallVector<int64_t> shape = *broadcastShapes(shapeOf(onTrue),
                                                shapeOf(onFalse));
  shape = *broadcastShapes(shape, shapeOf(pred));
  return b.create<SelectOp>(loc, broadcastTo(b, loc, pred, shape),
                            broadcastTo(b, loc, onTrue, shape),
                            broadcastTo(b, loc, onFalse, shape));
}

std::optional<SmallVector<int64_t>> matmulShape(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return std::nullopt;
  SmallVector<int64_t> a(lhs), c(rhs);
  bool lhsVector = a.size() == 1, rhsVector = c.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    c.push_back(1);
  if (a.back() != c[c.size() - 2])
    return std::nullopt;
  std::optional<SmallVector<int64_t>> batch = broadcastShapes(
      ArrayRef<int64_t>(a).drop_back(2), ArrayRef<int64_t>(c).drop_back(2));
  if (!batch)
    return std::nullopt;
  SmallVector<int64_t> shape(*batch);
  if (!lhsVector)
    shape.push_back(a[a.size() - 2]);
  if (!rhsVector)
    shape.push_back(c.back());
  return shape;
}

Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
             Type resultElementType) {
  TypeAttr resultElement =
      resultElementType ? TypeAttr::get(resultElementType) : TypeAttr();
  SmallVector<int64_t> resultShape = *matmulShape(shapeOf(lhs), shapeOf(rhs));
  SmallVector<int64_t> a(shapeOf(lhs)), c(shapeOf(rhs));
  if (a.size() == 1) {
    a.insert(a.begin(), 1);
    lhs = reshape(b, loc, lhs, a);
  }
  if (c.size() == 1) {
    c.push_back(1);
    rhs = reshape(b, loc, rhs, c);
  }
  int64_t m = a[a.size() - 2], k = a.back(), n = c.back();
  SmallVector<int64_t> batch = *broadcastShapes(
      ArrayRef<int64_t>(a).drop_back(2), ArrayRef<int64_t>(c).drop_back(2));
  int64_t batchCount = numElementsOf(batch);
  Value product;
  if (batch.empty()) {
    product = b.create<MatmulOp>(loc, lhs, rhs, resultElement);
  } else if (numElementsOf(ArrayRef<int64_t>(c).drop_back(2)) == 1) {
    // [..., m, k] x [k, n]: fold the lhs batch into the rows, one GEMM.
    SmallVector<int64_t> full(batch);
    full.append({m, k});
    lhs = broadcastTo(b, loc, lhs, full);
    Value rows = reshape(b, loc, lhs, {batchCount * m, k});
    Value rhs2 = reshape(b, loc, rhs, {k, n});
    product = b.create<MatmulOp>(loc, rows, rhs2, resultElement);
  } else {
    SmallVector<int64_t> fullA(batch), fullC(batch);
    fullA.append({m, k});
    fullC.append({k, n});
    Value a3 = reshape(b, loc, broadcastTo(b, loc, lhs, fullA),
                       {batchCount, m, k});
    Value c3 = reshape(b, loc, broadcastTo(b, loc, rhs, fullC),
                       {batchCount, k, n});
    product = b.create<MatmulOp>(loc, a3, c3, resultElement);
  }
  return reshape(b, loc, product, resultShape);
}

Value reduce(OpBuilder &b, Location loc, Reduction kind, Value v,
             ArrayRef<int64_t> axes, bool keepDims) {
  SmallVector<int64_t> sorted(axes);
  llvm::sort(sorted);
  Value result;
  switch (kind) {
  case Reduction::Sum:
    result = b.create<ReduceSumOp>(loc, v, sorted);
    break;
  case Reduction::Max:
    result = b.create<ReduceMaxOp>(loc, v, sorted);
    break;
  case Reduction::Min: {
    // min(x) = -max(-x) for floats (NaN included); for integers negation
    // is not order-reversing (the most negative value and unsigned 0 map to
    // themselves), but the complement is, signed or not: min(x) =
    // ~max(~x).
    bool integer = isa<IntegerType>(elementTypeOf(v));
    Value flipped = integer ? Value(b.create<NotOp>(loc, v))
                            : Value(b.create<NegOp>(loc, v));
    Value max = b.create<ReduceMaxOp>(loc, flipped, sorted);
    result = integer ? Value(b.create<NotOp>(loc, max))
                     : Value(b.create<NegOp>(loc, max));
    break;
  }
  case Reduction::Mean:
    result = b.create<ReduceMeanOp>(loc, v, sorted);
    break;
  }
  if (!keepDims)
    return result;
  SmallVector<int64_t> shape(shapeOf(v));
  for (int64_t axis : sorted)
    shape[axis] = 1;
  return reshape(b, loc, result, shape);
}

/// data gathered along `axis` at i64 `indices` (already in range).
Value wrapIndices(OpBuilder &b, Location loc, Value indices, int64_t dim) {
  indices = cast(b, loc, indices, b.getI64Type());
  Value negative = b.create<CompareOp>(loc, CompareDirection::lt, indices,
                                       splat(b, loc, typeOf(indices), 0));
  Value wrapped = b.create<AddOp>(loc, indices,
                                  splat(b, loc, typeOf(indices), dim));
  return b.create<SelectOp>(loc, negative, wrapped, indices);
}

Value elementLinearIndex(OpBuilder &b, Location loc, Value idx,
                         ArrayRef<int64_t> dataShape, int64_t axis) {
  auto indexType = RankedTensorType::get(shapeOf(idx), b.getI64Type());
  Value linear;
  int64_t stride = 1;
  for (int64_t d = dataShape.size() - 1; d >= 0; --d) {
    Value coord = d == axis ? idx : Value(b.create<IotaOp>(loc, indexType, d));
    Value term = b.create<MulOp>(loc, coord, splat(b, loc, indexType, stride));
    linear = linear ? Value(b.create<AddOp>(loc, linear, term)) : term;
    stride *= dataShape[d];
  }
  return linear;
}

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

SmallVector<int64_t> axisFirst(int64_t rank, int64_t axis) {
  SmallVector<int64_t> perm{axis};
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis)
      perm.push_back(i);
  return perm;
}

Value gatherAxis(OpBuilder &b, Location loc, Value data, Value indices,
                 int64_t axis) {
  int64_t rank = rankOf(data), q = rankOf(indices);
  Value moved = transpose(b, loc, data, axisFirst(rank, axis));
  Value gathered = b.create<GatherOp>(loc, moved, indices);
  // gathered: [indices..., data dims before axis..., data dims after axis...]
  SmallVector<int64_t> back;
  for (int64_t i = 0; i < axis; ++i)
    back.push_back(q + i);
  for (int64_t i = 0; i < q; ++i)
    back.push_back(i);
  for (int64_t i = axis + 1; i < rank; ++i)
    back.push_back(q + i - 1);
  return transpose(b, loc, gathered, back);
}

Value gatherAxisConstant(OpBuilder &b, Location loc, Value data,
                         ArrayRef<int64_t> indices, int64_t axis) {
  Value idx = constantInts(b, loc, b.getI64Type(),
                           {static_cast<int64_t>(indices.size())}, indices);
  return gatherAxis(b, loc, data, idx, axis);
}

} // namespace onnx_import
} // namespace kiln
