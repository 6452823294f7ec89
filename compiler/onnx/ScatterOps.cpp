//===- ScatterOps.cpp - ONNX ScatterElements, ScatterND and Scatter -------===//
//
// Each scatter becomes one kiln.scatter_add into the data viewed as a table
// whose rows are what one index names (single elements for
// ScatterElements, slices data[i0, ..., ik-1, ...] for ScatterND), at the
// row's linear index. reduction="add" adds into the data; "none" (the
// default) replaces the rows it hits: the updates are added into zeros and
// selected where a scatter of ones counted a hit. Indices are wrapped
// (negative ones count from the end) and clamped into range per dim, as
// kiln.gather clamps, so a bad index never writes into another row.
// reduction "mul", "max" and "min" have no kiln op: a kiln.for applies the
// updates one after the other.
// TensorScatter (a KV-cache update) is the same scatter at positions
// computed from its write indices.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"
#include "LoopBuilder.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

/// `indices` (any integer type) wrapped and clamped into [0, dim), as i64.
Value clampedIndices(OpBuilder &b, Location loc, Value indices, int64_t dim) {
  Value wrapped = wrapIndices(b, loc, indices, dim);
  Value low = b.create<MaxOp>(loc, wrapped, splat(b, loc, typeOf(wrapped), 0));
  return b.create<MinOp>(loc, low, splat(b, loc, typeOf(wrapped), dim - 1));
}

/// reduction mul, max or min, which kiln.scatter_add cannot do: a kiln.for
/// combines one update row with the row it names per step, in the
/// indices' order, as ONNX's reference does.
LogicalResult scatterRowsInOrder(NodeContext &ctx, Value data, Value linear,
                                 Value updates, int64_t rows,
                                 ArrayRef<int64_t> rowShape,
                                 llvm::StringRef reduction) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  if (isBool(data))
    return ctx.fail("reduction '" + reduction + "' on bools is not supported");
  SmallVector<int64_t> tableShape{rows};
  tableShape.append(rowShape.begin(), rowShape.end());
  Value table = reshape(b, loc, data, tableShape);
  Value result = writeRowsInOrder(
      b, loc, table, linear, updates, [&](Value current, Value update) {
        if (reduction == "mul")
          return Value(b.create<MulOp>(loc, current, update));
        if (reduction == "max")
          return Value(b.create<MaxOp>(loc, current, update));
        return Value(b.create<MinOp>(loc, current, update));
      });
  return ctx.setResults(reshape(b, loc, result, shapeOf(data)));
}

/// Scatters `updates` (shape [n] + rowShape) into `data` viewed as a table
/// of shape [rows] + rowShape, at `linear` (shape [n], i64).
LogicalResult scatterRows(NodeContext &ctx, Value data, Value linear,
                          Value updates, int64_t rows,
                          ArrayRef<int64_t> rowShape) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  std::string reduction = ctx.getString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min")
    return ctx.fail("reduction '" + reduction +
                    "' is not none, add, mul, max or min");
  if (shapeOf(linear)[0] == 0)
    return ctx.setResults(data);
  if (reduction != "none" && reduction != "add")
    return scatterRowsInOrder(ctx, data, linear, updates, rows, rowShape,
                              reduction);
  SmallVector<int64_t> tableShape{rows};
  tableShape.append(rowShape.begin(), rowShape.end());
  // Bools have no addition: scatter them as ui8.
  Type element = elementTypeOf(data);
  Type work = isBool(data) ? b.getIntegerType(8, /*isSigned=*/false) : element;
  Value table = cast(b, loc, reshape(b, loc, data, tableShape), work);
  updates = cast(b, loc, updates, work);
  Value result;
  if (reduction == "add") {
    result = b.create<ScatterAddOp>(loc, table, linear, updates);
  } else {
    auto tableType = RankedTensorType::get(tableShape, work);
    Value placed =
        b.create<ScatterAddOp>(loc, splat(b, loc, tableType, 0), linear,
                               updates);
    auto countType = RankedTensorType::get({rows}, b.getI32Type());
    Value hits = b.create<ScatterAddOp>(
        loc, splat(b, loc, countType, 0), linear,
        splat(b, loc, RankedTensorType::get(shapeOf(linear), b.getI32Type()),
              1));
    Value hit = b.create<CompareOp>(loc, CompareDirection::gt, hits,
                                    splat(b, loc, countType, 0));
    SmallVector<int64_t> rowMaskShape(tableShape.size(), 1);
    rowMaskShape[0] = rows;
    hit = broadcastTo(b, loc, reshape(b, loc, hit, rowMaskShape), tableShape);
    result = b.create<SelectOp>(loc, hit, placed, table);
  }
  return ctx.setResults(
      reshape(b, loc, cast(b, loc, result, element), shapeOf(data)));
}

bool isIndexType(Value v) {
  return isa<IntegerType>(elementTypeOf(v)) && !isBool(v);
}

/// ScatterElements (and Scatter, opsets 9 and 10): data[..., idx, ...] =
/// update for each element, idx along `axis`.
LogicalResult scatterElementsOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  FailureOr<int64_t> axis = elementsAxis(ctx, data, indices);
  if (failed(axis))
    return failure();
  if (shapeOf(updates) != shapeOf(indices))
    return ctx.fail("updates must have the shape of indices");
  if (elementTypeOf(updates) != elementTypeOf(data))
    return ctx.fail("updates must have the element type of data");
  int64_t count = numElementsOf(shapeOf(indices));
  if (count != 0 && shapeOf(data)[*axis] == 0)
    return ctx.fail("scatters into an empty axis");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value linear =
      count ? reshape(b, loc,
                      elementLinearIndex(
                          b, loc,
                          clampedIndices(b, loc, indices, shapeOf(data)[*axis]),
                          shapeOf(data), *axis),
                      {count})
            : splat(b, loc, RankedTensorType::get({0}, b.getI64Type()), 0);
  return scatterRows(ctx, data, linear, reshape(b, loc, updates, {count}),
                     numElementsOf(shapeOf(data)), {});
}

/// ScatterND: data[idx[..., 0], ..., idx[..., k-1], ...] = update for each
/// index tuple, k the last dim of indices.
LogicalResult scatterNDOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  int64_t rank = rankOf(data), q = rankOf(indices);
  if (!isIndexType(indices))
    return ctx.fail("indices must be int32 or int64");
  if (q < 1 || rank < 1)
    return ctx.fail("data and indices must have rank >= 1");
  int64_t k = shapeOf(indices).back();
  if (k < 1 || k > rank)
    return ctx.fail("the last dim of indices is " + Twine(k) +
                    "; it must be between 1 and data's rank " + Twine(rank));
  ArrayRef<int64_t> dataShape = shapeOf(data);
  SmallVector<int64_t> expected(shapeOf(indices).drop_back());
  expected.append(dataShape.begin() + k, dataShape.end());
  if (shapeOf(updates) != ArrayRef<int64_t>(expected))
    return ctx.fail("updates must have the shape indices.shape[:-1] + "
                    "data.shape[k:]");
  if (elementTypeOf(updates) != elementTypeOf(data))
    return ctx.fail("updates must have the element type of data");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  SmallVector<int64_t> tupleShape(shapeOf(indices).drop_back());
  int64_t count = numElementsOf(tupleShape);
  int64_t rows = numElementsOf(dataShape.take_front(k));
  if (count != 0 && rows == 0)
    return ctx.fail("scatters into an empty tensor");
  ArrayRef<int64_t> rowShape = dataShape.drop_front(k);
  if (count == 0)
    return ctx.setResults(data);
  Value linear;
  int64_t stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    Value component = reshape(b, loc, sliceAxis(b, loc, indices, q - 1, j, j + 1),
                              tupleShape);
    Value coord = clampedIndices(b, loc, component, dataShape[j]);
    Value term = b.create<MulOp>(loc, coord, splat(b, loc, typeOf(coord), stride));
    linear = linear ? Value(b.create<AddOp>(loc, linear, term)) : term;
    stride *= dataShape[j];
  }
  SmallVector<int64_t> flatUpdates{count};
  flatUpdates.append(rowShape.begin(), rowShape.end());
  return scatterRows(ctx, data, reshape(b, loc, linear, {count}),
                     reshape(b, loc, updates, flatUpdates), rows, rowShape);
}

/// TensorScatter (opset 24), a KV-cache update: update's rows along `axis`
/// written into the cache from write_indices[b] on for each batch entry b
/// (0 without the input), wrapping around in "circular" mode. Positions
/// past the cache in "linear" mode are clamped to its last row (ONNX
/// leaves them undefined).
LogicalResult tensorScatterOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value cache = ctx.input(0), update = ctx.input(1);
  int64_t rank = rankOf(cache);
  if (rank < 2 || rankOf(update) != rank)
    return ctx.fail("past_cache and update must have the same rank (>= 2)");
  if (elementTypeOf(update) != elementTypeOf(cache))
    return ctx.fail("update must have past_cache's element type");
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", -2), rank);
  if (!axis || *axis == 0)
    return ctx.fail("axis is out of range or the batch dim");
  ArrayRef<int64_t> cacheShape = shapeOf(cache), updateShape = shapeOf(update);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis ? updateShape[d] != cacheShape[d]
                   : updateShape[d] > cacheShape[d])
      return ctx.fail("update must have past_cache's shape, with at most as "
                      "many entries along the axis");
  std::string mode = ctx.getString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return ctx.fail("mode '" + mode + "' is not linear or circular");
  int64_t count = numElementsOf(updateShape);
  if (count == 0)
    return ctx.setResults(cache);
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  auto indexType = RankedTensorType::get(updateShape, b.getI64Type());
  int64_t length = cacheShape[*axis];
  // Each element's position along the axis: its own plus its batch
  // entry's write index.
  Value position = b.create<IotaOp>(loc, indexType, *axis);
  if (ctx.hasInput(2)) {
    Value start = ctx.input(2);
    if (!isIndexType(start) || rankOf(start) != 1 ||
        shapeOf(start)[0] != cacheShape[0])
      return ctx.fail("write_indices must be int32 or int64, one per batch "
                      "entry");
    SmallVector<int64_t> column(rank, 1);
    column[0] = cacheShape[0];
    start = broadcastTo(b, loc,
                        reshape(b, loc, cast(b, loc, start, b.getI64Type()),
                                column),
                        updateShape);
    position = b.create<AddOp>(loc, position, start);
  }
  if (mode == "circular") {
    Value wrapped = b.create<RemOp>(loc, position,
                                    splat(b, loc, indexType, length));
    Value negative = b.create<CompareOp>(loc, CompareDirection::lt, wrapped,
                                         splat(b, loc, indexType, 0));
    position = b.create<SelectOp>(
        loc, negative,
        b.create<AddOp>(loc, wrapped, splat(b, loc, indexType, length)),
        wrapped);
  }
  position = clampedIndices(b, loc, position, length);
  Value linear = reshape(
      b, loc, elementLinearIndex(b, loc, position, cacheShape, *axis), {count});
  return scatterRows(ctx, cache, linear, reshape(b, loc, update, {count}),
                     numElementsOf(cacheShape), {});
}

} // namespace

void registerScatterOps(OpTable &table) {
  table.add("ScatterElements", scatterElementsOp);
  table.add("Scatter", scatterElementsOp);
  table.add("ScatterND", scatterNDOp);
  table.add("TensorScatter", tensorScatterOp);
}

} // namespace onnx_import
} // namespace kiln
