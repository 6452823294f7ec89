//===- Reductions.cpp - sum, max, mean; argmax, argmin, cumsum along axes -===//
//
// kiln's reduce ops remove the reduced dimensions; keepdims is a reshape
// afterwards that puts them back as size 1, which is what broadcasting the
// result against the input (as softmax does) needs.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include <algorithm>

namespace kiln {
namespace detail {

enum class ReduceKind { Sum, Max, Mean };

/// The sorted, non-negative axes `axes` denotes for a tensor of `rank`.
static std::vector<int64_t> normalizeAxes(const Axes &axes, int64_t rank,
                                          const char *what, SourceLoc loc) {
  std::vector<int64_t> result;
  if (axes.isAll()) {
    for (int64_t d = 0; d < rank; ++d)
      result.push_back(d);
    return result;
  }
  for (int64_t axis : axes.values())
    result.push_back(normalizeAxis(axis, rank, what, loc));
  std::sort(result.begin(), result.end());
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    fail(loc, std::string(what) + ": axes " + shapeString(axes.values()) +
                  " name the same dimension twice");
  return result;
}

static Tensor reduce(ReduceKind kind, const char *what, const Tensor &x,
                     const Axes &axes, bool keepdims, SourceLoc loc) {
  TraceState &state = TraceState::of(x, loc);
  std::vector<int64_t> dims = normalizeAxes(axes, x.rank(), what, loc);
  DType dtype = x.dtype();
  if (kind == ReduceKind::Mean)
    dtype = floatDType(dtype);
  else if (dtype == DType::I1)
    fail(loc, std::string(what) +
                  " is not defined for bool (i1) tensors; cast to a numeric "
                  "dtype first, e.g. kiln::cast(x, kiln::DType::I32)");
  mlir::Value value = castValue(state, state.use(x, loc), dtype, loc);
  if (dims.empty())
    return state.wrap(value);

  Shape reduced, kept;
  for (int64_t d = 0; d < x.rank(); ++d) {
    bool isReduced = std::binary_search(dims.begin(), dims.end(), d);
    if (!isReduced)
      reduced.push_back(x.shape()[d]);
    kept.push_back(isReduced ? 1 : x.shape()[d]);
  }
  mlir::RankedTensorType type =
      tensorType(state.getContext(), reduced, dtype);
  llvm::ArrayRef<int64_t> dimsRef(dims);
  mlir::Value result;
  switch (kind) {
  case ReduceKind::Sum:
    result = state.create<mlir::kiln::ReduceSumOp>(loc, type, value, dimsRef);
    break;
  case ReduceKind::Max:
    result = state.create<mlir::kiln::ReduceMaxOp>(loc, type, value, dimsRef);
    break;
  case ReduceKind::Mean:
    result = state.create<mlir::kiln::ReduceMeanOp>(loc, type, value, dimsRef);
    break;
  }
  if (keepdims)
    result = reshapeValue(state, result, kept, loc);
  return state.wrap(result);
}

/// x as a numeric value, and `axis` made non-negative, for the ops along
/// one axis.
static mlir::Value alongAxis(TraceState &state, const Tensor &x, int64_t &axis,
                             const char *what, SourceLoc loc) {
  if (x.dtype() == DType::I1)
    fail(loc, std::string(what) +
                  " is not defined for bool (i1) tensors; cast to a numeric "
                  "dtype first, e.g. kiln::cast(x, kiln::DType::I32)");
  axis = normalizeAxis(axis, x.rank(), what, loc);
  return state.use(x, loc);
}

template <typename OpTy>
static Tensor argReduce(const char *what, const Tensor &x, int64_t axis,
                        bool selectLastIndex, SourceLoc loc) {
  TraceState &state = TraceState::of(x, loc);
  mlir::Value value = alongAxis(state, x, axis, what, loc);
  if (x.shape()[axis] == 0)
    fail(loc, std::string(what) + ": axis " + std::to_string(axis) +
                  " has size 0, so there is no index to return");
  return state.wrap(
      state.create<OpTy>(loc, value, axis, selectLastIndex).getResult());
}

} // namespace detail

using detail::ReduceKind;

Tensor argmax(const Tensor &x, int64_t axis, bool selectLastIndex,
              SourceLoc loc) {
  return detail::argReduce<mlir::kiln::ArgMaxOp>("kiln::argmax", x, axis,
                                                 selectLastIndex, loc);
}

Tensor argmin(const Tensor &x, int64_t axis, bool selectLastIndex,
              SourceLoc loc) {
  return detail::argReduce<mlir::kiln::ArgMinOp>("kiln::argmin", x, axis,
                                                 selectLastIndex, loc);
}

Tensor cumsum(const Tensor &x, int64_t axis, bool exclusive, bool reverse,
              SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  mlir::Value value =
      detail::alongAxis(state, x, axis, "kiln::cumsum", loc);
  return state.wrap(
      state.create<mlir::kiln::CumsumOp>(loc, value, axis, exclusive, reverse)
          .getResult());
}

std::pair<Tensor, Tensor> sort(const Tensor &x, int64_t axis, bool descending,
                               SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  mlir::Value value = detail::alongAxis(state, x, axis, "kiln::sort", loc);
  auto op =
      state.create<mlir::kiln::SortOp>(loc, value, axis, descending);
  return {state.wrap(op.getValues()), state.wrap(op.getIndices())};
}

Tensor argsort(const Tensor &x, int64_t axis, bool descending,
               SourceLoc loc) {
  return sort(x, axis, descending, loc).second;
}

Tensor sum(const Tensor &x, Axes axes, bool keepdims, SourceLoc loc) {
  return detail::reduce(ReduceKind::Sum, "kiln::sum", x, axes, keepdims, loc);
}

Tensor max(const Tensor &x, Axes axes, bool keepdims, SourceLoc loc) {
  return detail::reduce(ReduceKind::Max, "kiln::max", x, axes, keepdims, loc);
}

Tensor mean(const Tensor &x, Axes axes, bool keepdims, SourceLoc loc) {
  return detail::reduce(ReduceKind::Mean, "kiln::mean", x, axes, keepdims,
                        loc);
}

} // namespace kiln
