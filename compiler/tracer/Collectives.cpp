//===- Collectives.cpp - all_reduce, all_gather, ... as tracer ops --------===//
//
// Each op checks its replica groups and shapes here, with messages in the
// caller's terms, before it records the kiln op (whose verifier would say
// the same later, at the op instead of the user's line).
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include "kiln/Tracer/Collectives.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace kiln {

ReplicaGroups ReplicaGroups::all(int64_t ranks) {
  std::vector<int64_t> row(ranks > 0 ? ranks : 0);
  std::iota(row.begin(), row.end(), 0);
  return ReplicaGroups({row});
}

namespace detail {

/// The groups as the ops take them: the rows flattened, and the row size.
struct FlatGroups {
  std::vector<int64_t> ranks;
  int64_t size = 0;
};

/// Checks that `groups` partition the ranks 0 .. R-1 of a run into rows of
/// one size.
static FlatGroups flatten(const ReplicaGroups &groups, const char *what,
                          SourceLoc loc) {
  const auto &rows = groups.rows();
  if (rows.empty() || rows.front().empty())
    fail(loc, std::string(what) + ": the replica groups are empty; "
                                  "kiln::ReplicaGroups::all(ranks) is every "
                                  "rank of the run");
  FlatGroups flat;
  flat.size = static_cast<int64_t>(rows.front().size());
  for (const auto &row : rows) {
    if (static_cast<int64_t>(row.size()) != flat.size)
      fail(loc, std::string(what) + ": replica groups must have one size; " +
                    shapeString(rows.front()) + " has " +
                    std::to_string(flat.size) + " ranks and " +
                    shapeString(row) + " " + std::to_string(row.size()));
    flat.ranks.insert(flat.ranks.end(), row.begin(), row.end());
  }
  std::vector<int64_t> sorted = flat.ranks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      fail(loc, std::string(what) +
                    ": replica groups must hold each rank 0 .. " +
                    std::to_string(sorted.size() - 1) +
                    " of the run exactly once; they hold " +
                    shapeString(sorted));
  return flat;
}

/// `axis` of x made non-negative, or a failure naming it.
static int64_t checkedAxis(const Tensor &x, int64_t axis, const char *what,
                           SourceLoc loc) {
  int64_t rank = x.rank();
  if (axis < -rank || axis >= rank)
    fail(loc, std::string(what) + ": axis " + std::to_string(axis) +
                  " is out of range for a tensor of shape " +
                  shapeString(x.shape()));
  return axis < 0 ? axis + rank : axis;
}

static void checkDivisible(const Tensor &x, int64_t axis, int64_t size,
                           const char *what, SourceLoc loc) {
  if (x.shape()[axis] % size != 0)
    fail(loc, std::string(what) + ": dimension " + std::to_string(axis) +
                  " of shape " + shapeString(x.shape()) +
                  " does not split into " + std::to_string(size) +
                  " equal blocks, one per rank of a group");
}

/// x's value, checked to be something `reduction` can combine.
static mlir::Value reducible(TraceState &state, const Tensor &x,
                             Reduction reduction, const char *what,
                             SourceLoc loc) {
  if (x.dtype() == DType::I1)
    fail(loc, std::string(what) +
                  " is not defined for bool (i1) tensors; cast to a numeric "
                  "dtype first, e.g. kiln::cast(x, kiln::DType::I32)");
  if (reduction == Reduction::Mean && !isFloat(x.dtype()))
    fail(loc, std::string(what) +
                  ": a mean needs a float tensor; cast it first, e.g. "
                  "kiln::cast(x, kiln::DType::F32)");
  return state.use(x, loc);
}

static mlir::kiln::CollectiveReduction kindOf(Reduction reduction) {
  switch (reduction) {
  case Reduction::Sum:
    return mlir::kiln::CollectiveReduction::Sum;
  case Reduction::Max:
    return mlir::kiln::CollectiveReduction::Max;
  case Reduction::Min:
    return mlir::kiln::CollectiveReduction::Min;
  case Reduction::Mean:
    return mlir::kiln::CollectiveReduction::Mean;
  }
  return mlir::kiln::CollectiveReduction::Sum;
}

} // namespace detail

Tensor all_reduce(const Tensor &x, Reduction reduction,
                  const ReplicaGroups &groups, SourceLoc loc) {
  const char *what = "kiln::all_reduce";
  detail::TraceState &state = detail::TraceState::of(x, loc);
  detail::FlatGroups flat = detail::flatten(groups, what, loc);
  mlir::Value value = detail::reducible(state, x, reduction, what, loc);
  return state.wrap(state.create<mlir::kiln::AllReduceOp>(
      loc, value, detail::kindOf(reduction), flat.ranks, flat.size));
}

Tensor all_gather(const Tensor &x, int64_t axis, const ReplicaGroups &groups,
                  SourceLoc loc) {
  const char *what = "kiln::all_gather";
  detail::TraceState &state = detail::TraceState::of(x, loc);
  detail::FlatGroups flat = detail::flatten(groups, what, loc);
  axis = detail::checkedAxis(x, axis, what, loc);
  return state.wrap(state.create<mlir::kiln::AllGatherOp>(
      loc, state.use(x, loc), axis, flat.ranks, flat.size));
}

Tensor reduce_scatter(const Tensor &x, Reduction reduction, int64_t axis,
                      const ReplicaGroups &groups, SourceLoc loc) {
  const char *what = "kiln::reduce_scatter";
  detail::TraceState &state = detail::TraceState::of(x, loc);
  detail::FlatGroups flat = detail::flatten(groups, what, loc);
  axis = detail::checkedAxis(x, axis, what, loc);
  detail::checkDivisible(x, axis, flat.size, what, loc);
  mlir::Value value = detail::reducible(state, x, reduction, what, loc);
  return state.wrap(state.create<mlir::kiln::ReduceScatterOp>(
      loc, value, detail::kindOf(reduction), axis, flat.ranks, flat.size));
}

Tensor broadcast_from(const Tensor &x, int64_t root,
                      const ReplicaGroups &groups, SourceLoc loc) {
  const char *what = "kiln::broadcast_from";
  detail::TraceState &state = detail::TraceState::of(x, loc);
  detail::FlatGroups flat = detail::flatten(groups, what, loc);
  if (root < 0 || root >= flat.size)
    detail::fail(loc, std::string(what) + ": root " + std::to_string(root) +
                          " is not a group index 0 .. " +
                          std::to_string(flat.size - 1));
  return state.wrap(state.create<mlir::kiln::CollectiveBroadcastOp>(
      loc, state.use(x, loc), root, flat.ranks, flat.size));
}

Tensor all_to_all(const Tensor &x, int64_t splitAxis, int64_t concatAxis,
                  const ReplicaGroups &groups, SourceLoc loc) {
  const char *what = "kiln::all_to_all";
  detail::TraceState &state = detail::TraceState::of(x, loc);
  detail::FlatGroups flat = detail::flatten(groups, what, loc);
  splitAxis = detail::checkedAxis(x, splitAxis, what, loc);
  concatAxis = detail::checkedAxis(x, concatAxis, what, loc);
  detail::checkDivisible(x, splitAxis, flat.size, what, loc);
  return state.wrap(state.create<mlir::kiln::AllToAllOp>(
      loc, state.use(x, loc), splitAxis, concatAxis, flat.ranks, flat.size));
}

Tensor collective_permute(const Tensor &x,
                          const std::vector<std::pair<int64_t, int64_t>> &pairs,
                          int64_t ranks, SourceLoc loc) {
  const char *what = "kiln::collective_permute";
  detail::TraceState &state = detail::TraceState::of(x, loc);
  std::vector<int64_t> flat;
  std::vector<bool> sends(ranks > 0 ? ranks : 0),
      receives(ranks > 0 ? ranks : 0);
  for (auto [source, target] : pairs) {
    for (int64_t r : {source, target})
      if (r < 0 || r >= ranks)
        detail::fail(loc, std::string(what) + ": rank " + std::to_string(r) +
                              " of pair (" + std::to_string(source) + ", " +
                              std::to_string(target) +
                              ") is not a rank of a run of " +
                              std::to_string(ranks));
    if (sends[source] || receives[target])
      detail::fail(loc, std::string(what) + ": pair (" +
                            std::to_string(source) + ", " +
                            std::to_string(target) + ") repeats its " +
                            (sends[source] ? "source" : "target") +
                            "; each rank sends and receives at most once");
    sends[source] = receives[target] = true;
    flat.push_back(source);
    flat.push_back(target);
  }
  return state.wrap(state.create<mlir::kiln::CollectivePermuteOp>(
      loc, state.use(x, loc), flat));
}

Tensor rank_index(SourceLoc loc) {
  detail::TraceState &state =
      detail::TraceState::requireActive(loc, "kiln::rank_index");
  return state.wrap(state.create<mlir::kiln::RankOp>(
      loc, detail::tensorType(state.getContext(), {}, DType::I64)));
}

} // namespace kiln
