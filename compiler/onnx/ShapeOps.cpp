//===- ShapeOps.cpp - ONNX ops that move data or compute shapes -----------===//
//
// Reshape, Transpose, Slice, Gather, Concat, Pad... and the ops models use to
// compute shapes (Shape, Size, ConstantOfShape, Range). kiln is statically
// shaped, so shape arguments (Reshape's shape, Slice's starts...) must be
// constants by the time a node is imported: initializers, Constant nodes,
// or computations on Shape that the importer folded.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Normalizes a list of axes for `rank`; reports out-of-range or repeated
/// axes.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeContext &ctx,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t axis : axes) {
    std::optional<int64_t> a = normalizeAxis(axis, rank);
    if (!a) {
      (void)ctx.fail("axis " + Twine(axis) + " is out of range for rank " +
               Twine(rank));
      return failure();
    }
    if (llvm::is_contained(out, *a)) {
      (void)ctx.fail("axis " + Twine(axis) + " is repeated");
      return failure();
    }
    out.push_back(*a);
  }
  return out;
}

LogicalResult reshapeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(ctx.version < 5 ? 1 : 2)))
    return failure();
  Value x = ctx.input(0);
  SmallVector<int64_t> target;
  if (ctx.version < 5) {
    target = ctx.getInts("shape").value_or(SmallVector<int64_t>{});
  } else {
    FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
    if (failed(shape))
      return failure();
    target = *shape;
  }
  bool allowZero = ctx.getInt("allowzero", 0);
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= rankOf(x))
        return ctx.fail("shape entry " + Twine(i) +
                        " is 0 (copy), but the input has rank " +
                        Twine(rankOf(x)));
      target[i] = shapeOf(x)[i];
    }
    if (target[i] == -1) {
      if (inferred >= 0)
        return ctx.fail("the shape has more than one -1");
      inferred = i;
      continue;
    }
    if (target[i] < 0)
      return ctx.fail("the shape has a negative entry");
    known *= target[i];
  }
  int64_t total = numElementsOf(shapeOf(x));
  if (inferred >= 0) {
    if (known == 0 || total % known)
      return ctx.fail("cannot reshape " + shapeString(shapeOf(x)) + " to " +
                      shapeString(target));
    target[inferred] = total / known;
  } else if (known != total) {
    return ctx.fail("cannot reshape " + shapeString(shapeOf(x)) + " (" +
                    Twine(total) + " elements) to " + shapeString(target));
  }
  return ctx.setResults(reshape(ctx.b, ctx.loc, x, target));
}

LogicalResult flattenOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = rankOf(x);
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t outer = numElementsOf(shape.take_front(axis));
  int64_t inner = numElementsOf(shape.drop_front(axis));
  return ctx.setResults(reshape(ctx.b, ctx.loc, x, {outer, inner}));
}

LogicalResult transposeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = rankOf(x);
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> given = ctx.getInts("perm")) {
    perm = *given;
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (int64_t i = 0; i < rank; ++i)
    if (static_cast<int64_t>(sorted.size()) != rank || sorted[i] != i)
      return ctx.fail("perm is not a permutation of the input's dims");
  return ctx.setResults(transpose(ctx.b, ctx.loc, x, perm));
}

/// Squeeze/Unsqueeze axes: an attribute before opset 13, an input since.
FailureOr<std::optional<SmallVector<int64_t>>> axesOf(NodeContext &ctx,
                                                      unsigned input) {
  if (ctx.version < 13)
    return ctx.getInts("axes");
  if (!ctx.hasInput(input))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(input, "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

LogicalResult squeezeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOf(ctx, 1);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> drop;
  if (*axes) {
    FailureOr<SmallVector<int64_t>> norm =
        normalizeAxes(ctx, **axes, rankOf(x));
    if (failed(norm))
      return failure();
    for (int64_t a : *norm)
      if (shapeOf(x)[a] != 1)
        return ctx.fail("cannot squeeze axis " + Twine(a) + " of size " +
                        Twine(shapeOf(x)[a]));
    drop = *norm;
  } else {
    for (int64_t i = 0; i < rankOf(x); ++i)
      if (shapeOf(x)[i] == 1)
        drop.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rankOf(x); ++i)
    if (!llvm::is_contained(drop, i))
      shape.push_back(shapeOf(x)[i]);
  return ctx.setResults(reshape(ctx.b, ctx.loc, x, shape));
}

LogicalResult unsqueezeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = axesOf(ctx, 1);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.fail("axes are required");
  int64_t rank = rankOf(x) + (*axes)->size();
  FailureOr<SmallVector<int64_t>> norm = normalizeAxes(ctx, **axes, rank);
  if (failed(norm))
    return failure();
  SmallVector<int64_t> shape;
  unsigned next = 0;
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(llvm::is_contained(*norm, i) ? 1 : shapeOf(x)[next++]);
  return ctx.setResults(reshape(ctx.b, ctx.loc, x, shape));
}

LogicalResult concatOp(NodeContext &ctx) {
  if (ctx.numInputs() == 0 || failed(ctx.requireInputs(ctx.numInputs())))
    return ctx.fail("needs at least one input");
  Value first = ctx.input(0);
  std::optional<int64_t> axis =
      normalizeAxis(ctx.getInt("axis", ctx.version < 4 ? 1 : 0),
                    rankOf(first));
  if (!axis)
    return ctx.fail("axis is out of range");
  SmallVector<Value> parts;
  for (Value v : ctx.getInputs()) {
    if (rankOf(v) != rankOf(first) || elementTypeOf(v) != elementTypeOf(first))
      return ctx.fail("the inputs differ in rank or element type");
    for (int64_t d = 0; d < rankOf(v); ++d)
      if (d != *axis && shapeOf(v)[d] != shapeOf(first)[d])
        return ctx.fail("the inputs differ in a dim other than the axis");
    if (shapeOf(v)[*axis] != 0)
      parts.push_back(v);
  }
  if (parts.empty())
    return ctx.setResults(first);
  return ctx.setResults(concat(ctx.b, ctx.loc, parts, *axis));
}

/// `v` as base + constant, looking through reshapes and additions of
/// constant scalars.
std::pair<Value, int64_t> splitOffset(Value v) {
  int64_t offset = 0;
  while (true) {
    if (auto r = v.getDefiningOp<ReshapeOp>()) {
      v = r.getOperand();
      continue;
    }
    if (auto add = v.getDefiningOp<AddOp>()) {
      auto constantOf = [](Value x) -> std::optional<int64_t> {
        auto c = x.getDefiningOp<ConstantOp>();
        auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
        if (!dense || !dense.isSplat() ||
            !isa<IntegerType>(dense.getElementType()))
          return std::nullopt;
        return dense.getSplatValue<APInt>().getSExtValue();
      };
      if (std::optional<int64_t> c = constantOf(add.getRhs())) {
        offset += *c;
        v = add.getLhs();
        continue;
      }
      if (std::optional<int64_t> c = constantOf(add.getLhs())) {
        offset += *c;
        v = add.getRhs();
        continue;
      }
    }
    return {v, offset};
  }
}

/// A Slice of one axis whose start is computed at run time and whose end is
/// that start plus a constant (a loop reading element i, or rows i to i+k):
/// kiln.dynamic_slice of that many elements. A negative start counts from
/// the end; a window that would run past the end is moved back inside
/// (dynamic_slice's clamping) rather than shortened.
LogicalResult dynamicSlice(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (numElementsOf(shapeOf(ctx.input(1))) != 1 ||
      numElementsOf(shapeOf(ctx.input(2))) != 1)
    return ctx.fail("starts and ends are computed at run time; kiln supports "
                    "that for one axis whose end is the start plus a constant");
  int64_t axis = 0;
  if (ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(3, "axes");
    if (failed(axes))
      return failure();
    std::optional<int64_t> a = normalizeAxis((*axes)[0], rankOf(x));
    if (!a)
      return ctx.fail("axis is out of range");
    axis = *a;
  }
  if (ctx.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> steps = ctx.constantInts(4, "steps");
    if (failed(steps) || (*steps)[0] != 1)
      return ctx.fail("a slice with a run-time start needs step 1");
  }
  auto [startBase, startOffset] = splitOffset(ctx.input(1));
  auto [endBase, endOffset] = splitOffset(ctx.input(2));
  if (startBase != endBase)
    return ctx.fail("input 'starts' ('" + ctx.node.input(1) +
                    "') is computed at run time and 'ends' is not 'starts' "
                    "plus a constant; kiln compiles static shapes");
  int64_t dim = shapeOf(x)[axis];
  int64_t size = std::clamp<int64_t>(endOffset - startOffset, 0, dim);
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value start = wrapIndices(b, loc, reshape(b, loc, ctx.input(1), {}), dim);
  SmallVector<int64_t> perm = axisFirst(rankOf(x), axis);
  Value moved = transpose(b, loc, x, perm);
  Value rows = b.create<DynamicSliceOp>(loc, moved, start,
                                        static_cast<uint64_t>(size));
  return ctx.setResults(
      transpose(b, loc, rows, invertPermutationVector(perm)));
}

/// Slice along one axis with ONNX's clamping; a negative step reads the
/// axis backwards (a gather of the selected indices).
LogicalResult sliceOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(ctx.version < 10 ? 1 : 3)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = rankOf(x);
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.version < 10) {
    starts = ctx.getInts("starts").value_or(SmallVector<int64_t>{});
    ends = ctx.getInts("ends").value_or(SmallVector<int64_t>{});
    if (std::optional<SmallVector<int64_t>> a = ctx.getInts("axes"))
      axes = *a;
  } else {
    if (!ctx.input(1).getDefiningOp<ConstantOp>() ||
        !ctx.input(2).getDefiningOp<ConstantOp>())
      return dynamicSlice(ctx);
    FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<int64_t>> e = ctx.constantInts(2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (ctx.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = ctx.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (ctx.hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = ctx.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.fail("starts, ends, axes and steps differ in length");
  FailureOr<SmallVector<int64_t>> norm = normalizeAxes(ctx, axes, rank);
  if (failed(norm))
    return failure();
  SmallVector<int64_t> lo(rank, 0), hi(shapeOf(x)), st(rank, 1);
  SmallVector<std::pair<int64_t, SmallVector<int64_t>>> reversed;
  for (size_t i = 0; i < norm->size(); ++i) {
    int64_t axis = (*norm)[i], dim = shapeOf(x)[axis];
    int64_t start = starts[i], end = ends[i], step = steps[i];
    if (step == 0)
      return ctx.fail("a step is 0");
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      lo[axis] = start;
      hi[axis] = std::max(start, end);
      st[axis] = step;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      SmallVector<int64_t> indices;
      for (int64_t j = start; j > end; j += step)
        indices.push_back(j);
      reversed.emplace_back(axis, indices);
    }
  }
  Value y = slice(ctx.b, ctx.loc, x, lo, hi, st);
  for (auto &[axis, indices] : reversed) {
    if (indices.empty()) {
      SmallVector<int64_t> shape(shapeOf(y));
      shape[axis] = 0;
      y = splat(ctx.b, ctx.loc, RankedTensorType::get(shape, elementTypeOf(y)),
                0);
      continue;
    }
    y = gatherAxisConstant(ctx.b, ctx.loc, y, indices, axis);
  }
  return ctx.setResults(y);
}

LogicalResult splitOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", 0),
                                              rankOf(x));
  if (!axis)
    return ctx.fail("axis is out of range");
  int64_t dim = shapeOf(x)[*axis];
  SmallVector<int64_t> sizes;
  if (ctx.version < 13) {
    if (std::optional<SmallVector<int64_t>> s = ctx.getInts("split"))
      sizes = *s;
    else if (ctx.version < 11 && ctx.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "split");
      if (failed(s))
        return failure();
      sizes = *s;
    }
  } else if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  int64_t outputs = ctx.numOutputs();
  if (int64_t n = ctx.getInt("num_outputs", outputs); n != outputs)
    return ctx.fail("num_outputs is " + Twine(n) + " but the node has " +
                    Twine(outputs) + " outputs");
  if (sizes.empty()) {
    // From opset 18 a dim that does not divide evenly gives parts of
    // ceil(dim / outputs) and a smaller last one.
    int64_t part = outputs ? (dim + outputs - 1) / outputs : 0;
    int64_t last = dim - part * (outputs - 1);
    if (outputs == 0 || (dim % outputs && (ctx.version < 18 || last < 0)))
      return ctx.fail("cannot split a dim of " + Twine(dim) + " into " +
                      Twine(outputs) + " equal parts");
    sizes.assign(outputs, part);
    sizes.back() = last;
  }
  // Every size is checked before any is used: with a negative one, the
  // sizes can add up to the dim while another runs past it.
  if (llvm::any_of(sizes, [](int64_t size) { return size < 0; }))
    return ctx.fail("a split size is negative");
  if (static_cast<int64_t>(sizes.size()) != outputs ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != dim)
    return ctx.fail("the split sizes do not add up to the dim or do not "
                    "match the outputs");
  SmallVector<Value> parts;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    parts.push_back(sliceAxis(ctx.b, ctx.loc, x, *axis, offset, offset + size));
    offset += size;
  }
  return ctx.setResults(parts);
}

LogicalResult shapeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(ctx.input(0));
  int64_t rank = shape.size();
  int64_t start = ctx.getInt("start", 0), end = ctx.getInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  SmallVector<int64_t> dims(shape.begin() + start, shape.begin() + end);
  return ctx.setResults(constantInts(ctx.b, ctx.loc, ctx.b.getI64Type(),
                                     {end - start}, dims));
}

LogicalResult sizeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  return ctx.setResults(constantInts(ctx.b, ctx.loc, ctx.b.getI64Type(), {},
                                     {numElementsOf(shapeOf(ctx.input(0)))}));
}

LogicalResult expandOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  std::optional<SmallVector<int64_t>> result =
      broadcastShapes(shapeOf(ctx.input(0)), *shape);
  if (!result)
    return ctx.fail("cannot expand " + shapeString(shapeOf(ctx.input(0))) +
                    " to " + shapeString(*shape));
  return ctx.setResults(broadcastTo(ctx.b, ctx.loc, ctx.input(0), *result));
}

LogicalResult tileOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> repeats = ctx.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  if (static_cast<int64_t>(repeats->size()) != rankOf(x))
    return ctx.fail("repeats has " + Twine(repeats->size()) +
                    " entries for an input of rank " + Twine(rankOf(x)));
  // [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0*d0, r1*d1].
  SmallVector<int64_t> interleaved, broadcast, result;
  for (int64_t i = 0; i < rankOf(x); ++i) {
    int64_t r = (*repeats)[i], d = shapeOf(x)[i];
    if (r < 0)
      return ctx.fail("a repeat count is negative");
    interleaved.append({1, d});
    broadcast.append({r, d});
    result.push_back(r * d);
  }
  Value y = reshape(ctx.b, ctx.loc, x, interleaved);
  auto type = RankedTensorType::get(broadcast, elementTypeOf(x));
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < 2 * rankOf(x); ++i)
    dims.push_back(i);
  y = ctx.b.create<BroadcastInDimOp>(ctx.loc, type, y, dims);
  return ctx.setResults(reshape(ctx.b, ctx.loc, y, result));
}

/// A gather from a dim of size 0: only an empty set of indices is valid,
/// and gives an empty result (kiln.gather needs a row to clamp to).
LogicalResult emptyGather(NodeContext &ctx, Value data, Value indices,
                          int64_t axis) {
  if (numElementsOf(shapeOf(indices)) != 0)
    return ctx.fail("gathers from a dim of size 0");
  SmallVector<int64_t> shape(shapeOf(data).take_front(axis));
  shape.append(shapeOf(indices).begin(), shapeOf(indices).end());
  shape.append(shapeOf(data).begin() + axis + 1, shapeOf(data).end());
  return ctx.setResults(splat(ctx.b, ctx.loc,
                              RankedTensorType::get(shape, elementTypeOf(data)),
                              0));
}

LogicalResult gatherOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value data = ctx.input(0), indices = ctx.input(1);
  if (rankOf(data) == 0)
    return ctx.fail("data has rank 0");
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", 0),
                                              rankOf(data));
  if (!axis)
    return ctx.fail("axis is out of range");
  if (!isa<IntegerType>(elementTypeOf(indices)) || isBool(indices))
    return ctx.fail("indices must be int32 or int64");
  int64_t dim = shapeOf(data)[*axis];
  if (dim == 0)
    return emptyGather(ctx, data, indices, *axis);
  indices = wrapIndices(ctx.b, ctx.loc, indices, dim);
  return ctx.setResults(gatherAxis(ctx.b, ctx.loc, data, indices, *axis));
}

/// GatherElements: out[i, j, k] = data[i, idx[i, j, k], k] (axis 1), as one
/// kiln.gather from the flattened data at the linear index of each element.
LogicalResult gatherElementsOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value data = ctx.input(0), indices = ctx.input(1);
  FailureOr<int64_t> axis = elementsAxis(ctx, data, indices);
  if (failed(axis))
    return failure();
  if (numElementsOf(shapeOf(data)) == 0 || numElementsOf(shapeOf(indices)) == 0) {
    if (numElementsOf(shapeOf(indices)) != 0)
      return ctx.fail("gathers from an empty tensor");
    return ctx.setResults(splat(
        ctx.b, ctx.loc,
        RankedTensorType::get(shapeOf(indices), elementTypeOf(data)), 0));
  }
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value idx = wrapIndices(b, loc, indices, shapeOf(data)[*axis]);
  Value linear = elementLinearIndex(b, loc, idx, shapeOf(data), *axis);
  Value flat = reshape(b, loc, data, {numElementsOf(shapeOf(data))});
  return ctx.setResults(b.create<GatherOp>(loc, flat, linear));
}

/// ReverseSequence: along the time axis, the first sequence_lens[b]
/// elements of batch entry b reversed, the rest kept. Each element reads
/// time len - 1 - t where t < len and t otherwise (lengths clamped to
/// [0, T], which ONNX leaves undefined outside), a gather of the flat
/// input; the lengths may be computed at run time.
LogicalResult reverseSequenceOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0), lens = ctx.input(1);
  if (rankOf(x) < 2)
    return ctx.fail("the input must have rank >= 2");
  int64_t timeAxis = ctx.getInt("time_axis", 0);
  int64_t batchAxis = ctx.getInt("batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) || (timeAxis == 1 && batchAxis == 0)))
    return ctx.fail("time_axis and batch_axis must be 0 and 1 or 1 and 0");
  ArrayRef<int64_t> shape = shapeOf(x);
  if (rankOf(lens) != 1 || shapeOf(lens)[0] != shape[batchAxis] ||
      !elementTypeOf(lens).isInteger(64))
    return ctx.fail("sequence_lens must be an int64 list of " +
                    Twine(shape[batchAxis]) + " (the batch size)");
  if (numElementsOf(shape) == 0)
    return ctx.setResults(x);
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  auto indexType = RankedTensorType::get(shape, b.getI64Type());
  Value t = b.create<IotaOp>(loc, indexType, timeAxis);
  int64_t steps = shape[timeAxis];
  Value len = b.create<MinOp>(
      loc, b.create<MaxOp>(loc, lens, splat(b, loc, typeOf(lens), 0)),
      splat(b, loc, typeOf(lens), steps));
  len = b.create<BroadcastInDimOp>(loc, indexType, len,
                                   SmallVector<int64_t>{batchAxis});
  Value reversed = b.create<SubOp>(
      loc, b.create<SubOp>(loc, len, splat(b, loc, indexType, 1)), t);
  Value inside = b.create<CompareOp>(loc, CompareDirection::lt, t, len);
  Value source = b.create<SelectOp>(loc, inside, reversed, t);
  Value linear = elementLinearIndex(b, loc, source, shape, timeAxis);
  Value flat = reshape(b, loc, x, {numElementsOf(shape)});
  return ctx.setResults(b.create<GatherOp>(loc, flat, linear));
}

/// GatherND: the last dim of `indices` indexes the dims of `data` after
/// the `batch_dims` leading ones, which data and indices share; a
/// kiln.gather of the rows of data with the batch and indexed dims
/// flattened, the batch coordinates taken from an iota over indices' dims.
LogicalResult gatherNDOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value data = ctx.input(0), indices = ctx.input(1);
  int64_t batchDims = ctx.getInt("batch_dims", 0);
  if (batchDims < 0 || batchDims >= rankOf(indices) ||
      batchDims >= rankOf(data))
    return ctx.fail("batch_dims must be in [0, min(rank(data), "
                    "rank(indices)))");
  if (shapeOf(data).take_front(batchDims) !=
      shapeOf(indices).take_front(batchDims))
    return ctx.fail("the first batch_dims dims of data and indices differ");
  int64_t k = shapeOf(indices).back();
  if (k < 1 || batchDims + k > rankOf(data))
    return ctx.fail("the last dim of indices must be in [1, rank(data) - "
                    "batch_dims]");
  int64_t gathered = batchDims + k;
  SmallVector<int64_t> outer(shapeOf(indices).drop_back());
  if (numElementsOf(shapeOf(data).take_front(gathered)) == 0 ||
      numElementsOf(outer) == 0) {
    if (numElementsOf(outer) != 0)
      return ctx.fail("gathers from an empty tensor");
    SmallVector<int64_t> shape(outer);
    shape.append(shapeOf(data).begin() + gathered, shapeOf(data).end());
    return ctx.setResults(splat(
        ctx.b, ctx.loc, RankedTensorType::get(shape, elementTypeOf(data)), 0));
  }
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value idx = cast(b, loc, indices, b.getI64Type());
  auto outerType = RankedTensorType::get(outer, b.getI64Type());
  Value linear;
  int64_t stride = 1;
  for (int64_t j = gathered - 1; j >= 0; --j) {
    Value coord;
    if (j < batchDims) {
      coord = b.create<IotaOp>(loc, outerType, j);
    } else {
      SmallVector<int64_t> start(rankOf(idx), 0), limit(shapeOf(idx)),
          step(rankOf(idx), 1);
      start.back() = j - batchDims;
      limit.back() = j - batchDims + 1;
      coord = reshape(b, loc, slice(b, loc, idx, start, limit, step), outer);
      coord = wrapIndices(b, loc, coord, shapeOf(data)[j]);
    }
    Value term = b.create<MulOp>(loc, coord, splat(b, loc, outerType, stride));
    linear = linear ? Value(b.create<AddOp>(loc, linear, term)) : term;
    stride *= shapeOf(data)[j];
  }
  SmallVector<int64_t> rows{stride};
  rows.append(shapeOf(data).begin() + gathered, shapeOf(data).end());
  return ctx.setResults(
      b.create<GatherOp>(loc, reshape(b, loc, data, rows), linear));
}

LogicalResult constantOfShapeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return ctx.fail("the shape has a negative dim");
  Type element = ctx.b.getF32Type();
  double value = 0;
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    FailureOr<DenseElementsAttr> v =
        ctx.importer.convertTensor(a->t(), "attribute 'value'");
    if (failed(v))
      return failure();
    if (v->getNumElements() != 1)
      return ctx.fail("attribute 'value' must hold one element");
    element = v->getElementType();
    auto type = RankedTensorType::get(*shape, element);
    return ctx.setResults(ctx.b.create<ConstantOp>(
        ctx.loc, type, DenseElementsAttr::get(type, *v->value_begin<Attribute>())));
  }
  return ctx.setResults(
      splat(ctx.b, ctx.loc, RankedTensorType::get(*shape, element), value));
}

LogicalResult constantOp(NodeContext &ctx) {
  Type f32 = ctx.b.getF32Type(), i64 = ctx.b.getI64Type();
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    FailureOr<DenseElementsAttr> v =
        ctx.importer.convertTensor(a->t(), "attribute 'value'");
    if (failed(v))
      return failure();
    return ctx.setResults(ctx.b.create<ConstantOp>(ctx.loc, v->getType(), *v));
  }
  if (const onnx::AttributeProto *a = ctx.attr("value_float"))
    return ctx.setResults(constantFloats(ctx.b, ctx.loc, f32, {}, {a->f()}));
  if (const onnx::AttributeProto *a = ctx.attr("value_int"))
    return ctx.setResults(constantInts(ctx.b, ctx.loc, i64, {}, {a->i()}));
  if (const onnx::AttributeProto *a = ctx.attr("value_floats")) {
    SmallVector<double> values(a->floats().begin(), a->floats().end());
    return ctx.setResults(constantFloats(
        ctx.b, ctx.loc, f32, {static_cast<int64_t>(values.size())}, values));
  }
  if (const onnx::AttributeProto *a = ctx.attr("value_ints")) {
    SmallVector<int64_t> values(a->ints().begin(), a->ints().end());
    return ctx.setResults(constantInts(
        ctx.b, ctx.loc, i64, {static_cast<int64_t>(values.size())}, values));
  }
  return ctx.fail("only tensor, float(s) and int(s) values are supported "
                  "(not sparse tensors or strings)");
}

/// `value` as printf's %g writes it (1e+12, 0.5, 3).
std::string shortest(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

LogicalResult rangeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Type element = elementTypeOf(ctx.input(0));
  SmallVector<double> args;
  const char *names[] = {"start", "limit", "delta"};
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<SmallVector<double>> v = ctx.constantFloats(i, names[i]);
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return ctx.fail(Twine("'") + names[i] + "' is not a scalar");
    args.push_back((*v)[0]);
  }
  double start = args[0], limit = args[1], delta = args[2];
  if (delta == 0)
    return ctx.fail("delta is 0");
  double count = std::ceil((limit - start) / delta);
  if (!std::isfinite(count) ||
      count > static_cast<double>(NodeContext::kMaxFoldedElements))
    return ctx.fail(llvm::formatv("the range from {0} to {1} by {2} has {3} "
                                  "elements; kiln builds ranges of at most "
                                  "{4}",
                                  shortest(start), shortest(limit),
                                  shortest(delta),
                                  std::isfinite(count) ? shortest(count)
                                                       : "no finite number of",
                                  NodeContext::kMaxFoldedElements)
                        .str());
  int64_t n = std::max<int64_t>(static_cast<int64_t>(count), 0);
  SmallVector<double> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(start + i * delta);
  if (isa<IntegerType>(element)) {
    SmallVector<int64_t> ints(values.begin(), values.end());
    return ctx.setResults(constantInts(ctx.b, ctx.loc, element, {n}, ints));
  }
  return ctx.setResults(constantFloats(ctx.b, ctx.loc, element, {n}, values));
}

LogicalResult eyeLikeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) != 2)
    return ctx.fail("the input must have rank 2");
  Type element = elementTypeOf(x);
  if (const onnx::AttributeProto *d = ctx.attr("dtype")) {
    FailureOr<Type> t = ctx.importer.convertElementType(d->i(), "dtype");
    if (failed(t))
      return failure();
    element = *t;
  }
  int64_t rows = shapeOf(x)[0], cols = shapeOf(x)[1], k = ctx.getInt("k", 0);
  if (cols > 0 && rows > NodeContext::kMaxFoldedElements / cols)
    return ctx.fail("the result is " + Twine(rows) + "x" + Twine(cols) +
                    "; kiln builds EyeLike as a constant of at most " +
                    Twine(NodeContext::kMaxFoldedElements) + " elements");
  SmallVector<double> values(rows * cols, 0);
  for (int64_t r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols)
      values[r * cols + r + k] = 1;
  return ctx.setResults(
      constantFloats(ctx.b, ctx.loc, element, {rows, cols}, values));
}

LogicalResult triluOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = rankOf(x);
  if (rank < 2)
    return ctx.fail("the input must have rank >= 2");
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> kv = ctx.constantInts(1, "k");
    if (failed(kv))
      return failure();
    k = kv->empty() ? 0 : (*kv)[0];
  }
  bool upper = ctx.getInt("upper", 1);
  int64_t rows = shapeOf(x)[rank - 2], cols = shapeOf(x)[rank - 1];
  // The mask computed from iotas (column - row against k), not stored: a
  // constant of rows * cols flags would be as large as the matrix (found by
  // the importer fuzzer: 5.7 GB for a large declared input).
  auto indexType = RankedTensorType::get({rows, cols}, ctx.b.getI64Type());
  Value diagonal = ctx.b.create<SubOp>(
      ctx.loc, ctx.b.create<IotaOp>(ctx.loc, indexType, 1),
      ctx.b.create<IotaOp>(ctx.loc, indexType, 0));
  Value mask = ctx.b.create<CompareOp>(
      ctx.loc, upper ? CompareDirection::ge : CompareDirection::le, diagonal,
      splat(ctx.b, ctx.loc, indexType, k));
  Value zero = splat(ctx.b, ctx.loc, typeOf(x), 0);
  return ctx.setResults(select(ctx.b, ctx.loc, mask, x, zero));
}

/// The NCHW input, block size and channel order of DepthToSpace and
/// SpaceToDepth (`mode`: DCR, the default, or CRD).
struct BlockMove {
  Value x;
  int64_t n, c, h, w, bs;
  bool crd;
};
FailureOr<BlockMove> readBlockMove(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) != 4) {
    (void)ctx.fail("the input must have rank 4");
    return failure();
  }
  int64_t bs = ctx.getInt("blocksize", 0);
  if (bs <= 0) {
    (void)ctx.fail("blocksize must be positive");
    return failure();
  }
  std::string mode = ctx.getString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    (void)ctx.fail("mode is '" + mode + "'; " + ctx.node.op_type() +
                   " takes DCR or CRD");
    return failure();
  }
  ArrayRef<int64_t> s = shapeOf(x);
  return BlockMove{x, s[0], s[1], s[2], s[3], bs, mode == "CRD"};
}

/// DepthToSpace and SpaceToDepth: a reshape, a transpose and a reshape.
LogicalResult depthToSpaceOp(NodeContext &ctx) {
  FailureOr<BlockMove> m = readBlockMove(ctx);
  if (failed(m))
    return failure();
  auto [x, n, c, h, w, bs, crd] = *m;
  if (c % (bs * bs))
    return ctx.fail("blocksize does not divide the channels");
  int64_t oc = c / (bs * bs);
  Value y = crd ? reshape(ctx.b, ctx.loc, x, {n, oc, bs, bs, h, w})
                : reshape(ctx.b, ctx.loc, x, {n, bs, bs, oc, h, w});
  y = crd ? transpose(ctx.b, ctx.loc, y, {0, 1, 4, 2, 5, 3})
          : transpose(ctx.b, ctx.loc, y, {0, 3, 4, 1, 5, 2});
  return ctx.setResults(reshape(ctx.b, ctx.loc, y, {n, oc, h * bs, w * bs}));
}

LogicalResult spaceToDepthOp(NodeContext &ctx) {
  FailureOr<BlockMove> m = readBlockMove(ctx);
  if (failed(m))
    return failure();
  auto [x, n, c, h, w, bs, crd] = *m;
  if (h % bs || w % bs)
    return ctx.fail("blocksize does not divide the spatial dims");
  // The output channel is (row * bs + column) * c + channel in DCR order
  // and (channel * bs + row) * bs + column in CRD order (opset 28's mode).
  Value y = reshape(ctx.b, ctx.loc, x, {n, c, h / bs, bs, w / bs, bs});
  y = crd ? transpose(ctx.b, ctx.loc, y, {0, 1, 3, 5, 2, 4})
          : transpose(ctx.b, ctx.loc, y, {0, 3, 5, 1, 2, 4});
  return ctx.setResults(
      reshape(ctx.b, ctx.loc, y, {n, c * bs * bs, h / bs, w / bs}));
}

LogicalResult oneHotOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Value indices = ctx.input(0), values = ctx.input(2);
  FailureOr<SmallVector<double>> depthValue = ctx.constantFloats(1, "depth");
  if (failed(depthValue))
    return failure();
  if (depthValue->size() != 1 || (*depthValue)[0] < 1)
    return ctx.fail("depth must be a positive scalar");
  int64_t depth = static_cast<int64_t>((*depthValue)[0]);
  if (numElementsOf(shapeOf(values)) != 2)
    return ctx.fail("values must hold two elements [off, on]");
  int64_t rank = rankOf(indices) + 1;
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", -1), rank);
  if (!axis)
    return ctx.fail("axis is out of range");
  // Indices as i64 (floats are truncated), negative ones from the end.
  Value idx = wrapIndices(ctx.b, ctx.loc, indices, depth);
  SmallVector<int64_t> shape(shapeOf(indices));
  shape.insert(shape.begin() + *axis, depth);
  SmallVector<int64_t> unsqueezed(shapeOf(indices));
  unsqueezed.insert(unsqueezed.begin() + *axis, 1);
  idx = broadcastTo(ctx.b, ctx.loc, reshape(ctx.b, ctx.loc, idx, unsqueezed),
                    shape);
  auto iotaType = RankedTensorType::get(shape, ctx.b.getI64Type());
  Value iota = ctx.b.create<IotaOp>(ctx.loc, iotaType, *axis);
  Value hit = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::eq, iota, idx);
  Value flat = reshape(ctx.b, ctx.loc, values, {2});
  Value off = reshape(ctx.b, ctx.loc, sliceAxis(ctx.b, ctx.loc, flat, 0, 0, 1),
                      {});
  Value on = reshape(ctx.b, ctx.loc, sliceAxis(ctx.b, ctx.loc, flat, 0, 1, 2),
                     {});
  return ctx.setResults(select(ctx.b, ctx.loc, hit, on, off));
}

/// Pad: constant padding as concatenated blocks; edge and reflect as a
/// gather of the source index of every output position. Negative pads crop.
LogicalResult padOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = rankOf(x);
  SmallVector<int64_t> pads;
  double value = 0;
  Value padValue;
  if (ctx.version < 11) {
    pads = ctx.getInts("pads").value_or(SmallVector<int64_t>{});
    value = ctx.getFloat("value", 0);
  } else {
    FailureOr<SmallVector<int64_t>> p = ctx.constantInts(1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (ctx.hasInput(2)) {
      if (numElementsOf(shapeOf(ctx.input(2))) != 1)
        return ctx.fail("constant_value must be a scalar");
      padValue = reshape(ctx.b, ctx.loc, ctx.input(2), {});
    }
  }
  SmallVector<int64_t> axes;
  if (ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> a = ctx.constantInts(3, "axes");
    if (failed(a))
      return failure();
    FailureOr<SmallVector<int64_t>> norm = normalizeAxes(ctx, *a, rank);
    if (failed(norm))
      return failure();
    axes = *norm;
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  int64_t n = axes.size();
  if (static_cast<int64_t>(pads.size()) != 2 * n)
    return ctx.fail("pads has " + Twine(pads.size()) + " entries, expected " +
                    Twine(2 * n));
  std::string mode = ctx.getString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return ctx.fail("mode '" + mode + "' is not supported");
  if (!padValue)
    padValue = scalar(ctx.b, ctx.loc, elementTypeOf(x), value);
  Value y = x;
  for (int64_t i = 0; i < n; ++i) {
    int64_t axis = axes[i], before = pads[i], after = pads[i + n];
    int64_t dim = shapeOf(y)[axis];
    // Crop first (negative pads), then pad.
    int64_t cropLo = std::max<int64_t>(-before, 0);
    int64_t cropHi = std::max<int64_t>(-after, 0);
    if (cropLo + cropHi > dim)
      return ctx.fail("negative pads remove more than the whole dim");
    y = sliceAxis(ctx.b, ctx.loc, y, axis, cropLo, dim - cropHi);
    before = std::max<int64_t>(before, 0);
    after = std::max<int64_t>(after, 0);
    dim = shapeOf(y)[axis];
    if (!before && !after)
      continue;
    if (mode == "constant") {
      SmallVector<Value> parts;
      for (int64_t size : {before, int64_t(-1), after}) {
        if (size == -1) {
          parts.push_back(y);
          continue;
        }
        if (!size)
          continue;
        SmallVector<int64_t> shape(shapeOf(y));
        shape[axis] = size;
        parts.push_back(broadcastTo(ctx.b, ctx.loc, padValue, shape));
      }
      y = concat(ctx.b, ctx.loc, parts, axis);
      continue;
    }
    if (dim == 0 || (mode == "reflect" && dim < 2 && (before || after)))
      return ctx.fail("cannot " + mode + "-pad a dim of size " + Twine(dim));
    SmallVector<int64_t> indices;
    for (int64_t j = -before; j < dim + after; ++j) {
      int64_t src = j;
      if (mode == "edge") {
        src = std::clamp<int64_t>(j, 0, dim - 1);
      } else if (mode == "wrap") {
        // Opset 19: as if the dim's two ends were joined.
        src = ((j % dim) + dim) % dim;
      } else {
        int64_t period = 2 * (dim - 1);
        src = ((j % period) + period) % period;
        if (src >= dim)
          src = period - src;
      }
      indices.push_back(src);
    }
    y = gatherAxisConstant(ctx.b, ctx.loc, y, indices, axis);
  }
  return ctx.setResults(y);
}

} // namespace

FailureOr<int64_t> elementsAxis(NodeContext &ctx, Value data, Value indices) {
  int64_t rank = rankOf(data);
  if (rankOf(indices) != rank || rank == 0)
    return ctx.fail("data and indices must have the same rank (>= 1)");
  if (!isa<IntegerType>(elementTypeOf(indices)) || isBool(indices))
    return ctx.fail("indices must be int32 or int64");
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", 0), rank);
  if (!axis)
    return ctx.fail("axis is out of range");
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && shapeOf(indices)[d] > shapeOf(data)[d])
      return ctx.fail("indices are larger than data outside the axis");
  return *axis;
}

void registerShapeOps(OpTable &table) {
  table.add("Reshape", reshapeOp);
  table.add("Flatten", flattenOp);
  table.add("Transpose", transposeOp);
  table.add("Squeeze", squeezeOp);
  table.add("Unsqueeze", unsqueezeOp);
  table.add("Concat", concatOp);
  table.add("Slice", sliceOp);
  table.add("Split", splitOp);
  table.add("Shape", shapeOp);
  table.add("Size", sizeOp);
  table.add("Expand", expandOp);
  table.add("Tile", tileOp);
  table.add("Gather", gatherOp);
  table.add("GatherElements", gatherElementsOp);
  table.add("ReverseSequence", reverseSequenceOp);
  table.add("GatherND", gatherNDOp);
  table.add("ConstantOfShape", constantOfShapeOp);
  table.add("Constant", constantOp);
  table.add("Range", rangeOp);
  table.add("EyeLike", eyeLikeOp);
  table.add("Trilu", triluOp);
  table.add("DepthToSpace", depthToSpaceOp);
  table.add("SpaceToDepth", spaceToDepthOp);
  table.add("OneHot", oneHotOp);
  table.add("Pad", padOp);
}

} // namespace onnx_import
} // namespace kiln
