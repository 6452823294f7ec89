//===- Collectives.h - Communication between ranks, traced ------*- C++ -*-===//
//
// The collectives of kiln IR (kiln.all_reduce, all_gather, reduce_scatter,
// collective_broadcast, all_to_all, collective_permute, rank) as tracer
// ops, for SPMD programs written by hand: every rank runs the same traced
// function on its own data, and these exchange values between them, as
// jax.lax.psum and friends do inside shard_map. They differentiate
// (passes/autodiff/CollectiveRules.cpp: the adjoint of all_gather is
// reduce_scatter, ...), and a function using them runs on a communicator
// (JitOptions::comm; kiln::evaluateSpmd simulates N ranks in one process).
//
// Every collective acts within replica groups: rows of world ranks, each
// rank of the run in exactly one row, all rows of one size S. The run's
// size is fixed when the function is traced.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_COLLECTIVES_H
#define KILN_TRACER_COLLECTIVES_H

#include "kiln/Tracer/SourceLoc.h"
#include "kiln/Tracer/Tensor.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace kiln {

/// Replica groups: rows of world ranks. Every rank of the run is in
/// exactly one row, and all rows have the same size.
class ReplicaGroups {
public:
  /// One group of all `ranks` ranks, in rank order.
  static ReplicaGroups all(int64_t ranks);
  /// The given rows, e.g. {{0, 1}, {2, 3}}; checked when used.
  ReplicaGroups(std::vector<std::vector<int64_t>> rows)
      : rows_(std::move(rows)) {}
  const std::vector<std::vector<int64_t>> &rows() const { return rows_; }

private:
  std::vector<std::vector<int64_t>> rows_;
};

/// How all_reduce and reduce_scatter combine the group's tensors.
enum class Reduction { Sum, Max, Min, Mean };

/// The elementwise reduction of `x` over the ranks of each group, on every
/// rank of it. Mean takes float tensors only; bool tensors are rejected.
Tensor all_reduce(const Tensor &x, Reduction reduction,
                  const ReplicaGroups &groups,
                  SourceLoc loc = SourceLoc::current());

/// The group's tensors joined along `axis` in group order (the result's
/// `axis` is S times x's).
Tensor all_gather(const Tensor &x, int64_t axis, const ReplicaGroups &groups,
                  SourceLoc loc = SourceLoc::current());

/// The reduction over the group, split along `axis` into S blocks; the rank
/// with group index i keeps block i. x's `axis` must be divisible by S.
Tensor reduce_scatter(const Tensor &x, Reduction reduction, int64_t axis,
                      const ReplicaGroups &groups,
                      SourceLoc loc = SourceLoc::current());

/// The tensor of the group member with group index `root`, on every rank
/// of the group.
Tensor broadcast_from(const Tensor &x, int64_t root,
                      const ReplicaGroups &groups,
                      SourceLoc loc = SourceLoc::current());

/// Block j of x (split along `splitAxis` into S blocks) goes to group
/// member j; the received blocks are joined along `concatAxis` in group
/// order.
Tensor all_to_all(const Tensor &x, int64_t splitAxis, int64_t concatAxis,
                  const ReplicaGroups &groups,
                  SourceLoc loc = SourceLoc::current());

/// Point-to-point: each (source, target) pair sends the source's x to the
/// target; a rank that is no pair's target receives zeros. Sources and
/// targets are world ranks below `ranks`, each at most once per side.
Tensor collective_permute(const Tensor &x,
                          const std::vector<std::pair<int64_t, int64_t>> &pairs,
                          int64_t ranks, SourceLoc loc = SourceLoc::current());

/// This process's rank in the run, an i64 scalar.
Tensor rank_index(SourceLoc loc = SourceLoc::current());

} // namespace kiln

#endif // KILN_TRACER_COLLECTIVES_H
