//===- Shapes.cpp - reshape, transpose, slice, concat, gather -------------===//
//
// Shape operations check their arguments against the static shapes and
// report problems in numpy terms (negative axes, -1 in reshape) before any
// op is recorded, so a mistake never reaches the kiln verifier.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include <numeric>

namespace kiln {
namespace detail {

int64_t normalizeAxis(int64_t axis, int64_t rank, const char *what,
                      SourceLoc loc) {
  if (axis < -rank || axis >= rank)
    fail(loc, std::string(what) + ": axis " + std::to_string(axis) +
                  " is out of range for a tensor of rank " +
                  std::to_string(rank) +
                  (rank ? " (valid axes: " + std::to_string(-rank) + ".." +
                              std::to_string(rank - 1) + ")"
                        : std::string(" (it has no axes)")));
  return axis < 0 ? axis + rank : axis;
}

mlir::Value reshapeValue(TraceState &state, mlir::Value value,
                         llvm::ArrayRef<int64_t> shape, SourceLoc loc) {
  mlir::RankedTensorType type = typeOf(value);
  if (type.getShape() == shape)
    return value;
  auto resultType = mlir::RankedTensorType::get(shape, type.getElementType());
  return state.create<mlir::kiln::ReshapeOp>(loc, resultType, value)
      .getResult();
}

} // namespace detail

using detail::fail;

Tensor reshape(const Tensor &x, const Shape &shape, SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  Shape target = shape;
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0)
        fail(loc, "kiln::reshape: only one dimension of " +
                      shapeString(shape) + " can be -1");
      inferred = static_cast<int>(i);
    } else if (target[i] < 0) {
      fail(loc, "kiln::reshape: invalid dimension " +
                    std::to_string(target[i]) + " in " + shapeString(shape));
    } else {
      known *= target[i];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || x.numel() % known != 0)
      fail(loc, "kiln::reshape: cannot infer the -1 dimension of " +
                    shapeString(shape) + " for " + std::to_string(x.numel()) +
                    " elements (shape " + shapeString(x.shape()) + ")");
    target[inferred] = x.numel() / known;
  } else if (known != x.numel()) {
    fail(loc, "kiln::reshape: cannot reshape " + shapeString(x.shape()) +
                  " (" + std::to_string(x.numel()) + " elements) into " +
                  shapeString(shape) + " (" + std::to_string(known) +
                  " elements)");
  }
  mlir::Value value = state.use(x, loc);
  return state.wrap(detail::reshapeValue(state, value, target, loc));
}

Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm,
                 SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  int64_t rank = x.rank();
  std::vector<int64_t> permutation;
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i)
      permutation.push_back(i);
  } else {
    if (static_cast<int64_t>(perm.size()) != rank)
      fail(loc, "kiln::transpose: permutation " + shapeString(perm) + " has " +
                    std::to_string(perm.size()) +
                    " entries but the tensor has rank " + std::to_string(rank));
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
      int64_t axis = detail::normalizeAxis(p, rank, "kiln::transpose", loc);
      if (seen[axis])
        fail(loc, "kiln::transpose: " + shapeString(perm) +
                      " is not a permutation (axis " + std::to_string(p) +
                      " appears twice)");
      seen[axis] = true;
      permutation.push_back(axis);
    }
  }
  mlir::Value value = state.use(x, loc);
  bool identity = true;
  Shape resultShape;
  for (int64_t i = 0; i < rank; ++i) {
    identity &= permutation[i] == i;
    resultShape.push_back(x.shape()[permutation[i]]);
  }
  if (identity)
    return state.wrap(value);
  mlir::RankedTensorType resultType =
      detail::tensorType(state.getContext(), resultShape, x.dtype());
  return state.wrap(state
                        .create<mlir::kiln::TransposeOp>(
                            loc, resultType, value,
                            llvm::ArrayRef<int64_t>(permutation))
                        .getResult());
}

Tensor slice(const Tensor &x, const std::vector<int64_t> &start,
             const std::vector<int64_t> &limit,
             const std::vector<int64_t> &stride, SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  int64_t rank = x.rank();
  if (start.size() != limit.size() ||
      static_cast<int64_t>(start.size()) > rank ||
      (!stride.empty() && stride.size() != start.size()))
    fail(loc, "kiln::slice: start " + shapeString(start) + ", limit " +
                  shapeString(limit) + " and stride " + shapeString(stride) +
                  " must have the same length, at most the rank (" +
                  std::to_string(rank) + "); stride may be empty");
  std::vector<int64_t> starts, limits, strides;
  Shape resultShape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = x.shape()[d];
    int64_t b = 0, e = size, s = 1;
    if (d < static_cast<int64_t>(start.size())) {
      b = start[d] < 0 ? start[d] + size : start[d];
      e = limit[d] < 0 ? limit[d] + size : limit[d];
      s = stride.empty() ? 1 : stride[d];
    }
    if (s < 1)
      fail(loc, "kiln::slice: stride " + std::to_string(s) + " in dimension " +
                    std::to_string(d) + " must be >= 1");
    if (b < 0 || b > e || e > size)
      fail(loc, "kiln::slice: dimension " + std::to_string(d) + " of size " +
                    std::to_string(size) + ": need 0 <= start (" +
                    std::to_string(b) + ") <= limit (" + std::to_string(e) +
                    ") <= size (negative values count from the end)");
    starts.push_back(b);
    limits.push_back(e);
    strides.push_back(s);
    resultShape.push_back((e - b + s - 1) / s);
  }
  mlir::Value value = state.use(x, loc);
  if (resultShape == x.shape())
    return state.wrap(value);
  mlir::RankedTensorType resultType =
      detail::tensorType(state.getContext(), resultShape, x.dtype());
  return state.wrap(state
                        .create<mlir::kiln::SliceOp>(
                            loc, resultType, value,
                            llvm::ArrayRef<int64_t>(starts),
                            llvm::ArrayRef<int64_t>(limits),
                            llvm::ArrayRef<int64_t>(strides))
                        .getResult());
}

Tensor concat(const Tensors &xs, int64_t axis, SourceLoc loc) {
  if (xs.empty())
    fail(loc, "kiln::concat needs at least one tensor");
  std::vector<Operand> operands;
  for (const Tensor &x : xs)
    operands.emplace_back(x, loc);
  std::vector<const Operand *> pointers;
  for (const Operand &operand : operands)
    pointers.push_back(&operand);
  detail::TraceState &state =
      detail::TraceState::of(pointers, loc, "kiln::concat");
  const Tensor &first = xs.front();
  if (first.rank() == 0)
    fail(loc, "kiln::concat cannot join rank-0 tensors; reshape them to [1] "
              "first");
  int64_t dim = detail::normalizeAxis(axis, first.rank(), "kiln::concat", loc);
  Shape resultShape = first.shape();
  resultShape[dim] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor &x = xs[i];
    bool ok = x.rank() == first.rank();
    for (int64_t d = 0; ok && d < x.rank(); ++d)
      ok = d == dim || x.shape()[d] == first.shape()[d];
    if (!ok)
      fail(loc, "kiln::concat: tensor #" + std::to_string(i) + " has shape " +
                    shapeString(x.shape()) + ", incompatible with tensor #0 " +
                    shapeString(first.shape()) +
                    " (all dimensions but axis " + std::to_string(dim) +
                    " must match)");
    resultShape[dim] += x.shape()[dim];
  }
  DType dtype = detail::promoteOperands(pointers);
  if (xs.size() == 1)
    return state.wrap(
        detail::castValue(state, state.use(first, loc), dtype, loc));
  llvm::SmallVector<mlir::Value> values;
  for (const Tensor &x : xs)
    values.push_back(detail::castValue(state, state.use(x, loc), dtype, loc));
  mlir::RankedTensorType resultType =
      detail::tensorType(state.getContext(), resultShape, dtype);
  return state.wrap(state
                        .create<mlir::kiln::ConcatOp>(
                            loc, resultType, mlir::ValueRange(values),
                            static_cast<uint64_t>(dim))
                        .getResult());
}

/// The indices of kiln.gather and kiln.scatter_add, which take i32 or i64:
/// ui32 indices keep their values in i64.
static mlir::Value indexValue(detail::TraceState &state, const Tensor &indices,
                              SourceLoc loc) {
  mlir::Value value = state.use(indices, loc);
  if (indices.dtype() != DType::UI32)
    return value;
  return detail::castValue(state, value, DType::I64, loc);
}

Tensor gather(const Tensor &table, const Tensor &indices, SourceLoc loc) {
  Operand tableOperand(table, loc), indicesOperand(indices, loc);
  detail::TraceState &state = detail::TraceState::of(
      {&tableOperand, &indicesOperand}, loc, "kiln::gather");
  if (!isInteger(indices.dtype()))
    fail(loc, std::string("kiln::gather needs integer indices, got ") +
                  dtypeName(indices.dtype()) +
                  "; convert them with kiln::cast(indices, kiln::DType::I64)");
  if (table.rank() < 1 || table.shape()[0] < 1)
    fail(loc, "kiln::gather needs a table of rank >= 1 with at least one row, "
              "got shape " +
                  shapeString(table.shape()));
  Shape resultShape = indices.shape();
  resultShape.insert(resultShape.end(), table.shape().begin() + 1,
                     table.shape().end());
  mlir::Value t = state.use(table, loc);
  mlir::Value i = indexValue(state, indices, loc);
  mlir::RankedTensorType resultType =
      detail::tensorType(state.getContext(), resultShape, table.dtype());
  return state.wrap(
      state.create<mlir::kiln::GatherOp>(loc, resultType, t, i).getResult());
}

Tensor scatter_add(const Tensor &table, const Tensor &indices,
                   const Tensor &updates, SourceLoc loc) {
  Operand tableOperand(table, loc), indicesOperand(indices, loc),
      updatesOperand(updates, loc);
  detail::TraceState &state = detail::TraceState::of(
      {&tableOperand, &indicesOperand, &updatesOperand}, loc,
      "kiln::scatter_add");
  if (!isInteger(indices.dtype()))
    fail(loc, std::string("kiln::scatter_add needs integer indices, got ") +
                  dtypeName(indices.dtype()) +
                  "; convert them with kiln::cast(indices, kiln::DType::I64)");
  if (table.dtype() == DType::I1)
    fail(loc, "kiln::scatter_add needs a numeric table, got bool");
  if (table.rank() < 1 || table.shape()[0] < 1)
    fail(loc, "kiln::scatter_add needs a table of rank >= 1 with at least one "
              "row, got shape " +
                  shapeString(table.shape()));
  Shape updateShape = indices.shape();
  updateShape.insert(updateShape.end(), table.shape().begin() + 1,
                     table.shape().end());
  if (updates.shape() != updateShape || updates.dtype() != table.dtype())
    fail(loc, "kiln::scatter_add needs updates of shape " +
                  shapeString(updateShape) + " (the indices' shape, then the "
                  "table's past its rows) and dtype " +
                  dtypeName(table.dtype()) + ", got shape " +
                  shapeString(updates.shape()) + " and dtype " +
                  dtypeName(updates.dtype()));
  mlir::Value t = state.use(table, loc);
  mlir::Value i = indexValue(state, indices, loc);
  mlir::Value u = state.use(updates, loc);
  return state.wrap(
      state.create<mlir::kiln::ScatterAddOp>(loc, t, i, u).getResult());
}

} // namespace kiln
