//===- Reductions.cpp - sum, max and mean over axes -----------------------===//
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

} // namespace detail

using detail::ReduceKind;

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
