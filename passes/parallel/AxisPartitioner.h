//===- AxisPartitioner.h - Splitting a program over one mesh axis -*- C++ -*-===//
//
// The engine of kiln-data-parallel and kiln-partition: rewrites a function
// into the SPMD function that the ranks along one axis of a device mesh
// run, each on its piece of the values split over that axis
// (AxisPartitioner.cpp has the algorithm). kiln-data-parallel runs it once,
// over all ranks with the batch arguments split along their rows;
// kiln-partition runs it once per mesh axis, innermost axis first, with the
// arguments and results split as their `kiln.sharding` annotations say.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PARALLEL_AXISPARTITIONER_H
#define KILN_PASSES_PARALLEL_AXISPARTITIONER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace kiln {

struct AxisPartitionConfig {
  /// The pass that runs the engine, for diagnostics.
  llvm::StringRef passName;
  /// The number of ranks along the axis (>= 1).
  int64_t size = 1;
  /// The axis's replica groups, flattened: rows of `size` ranks that differ
  /// only in their position along this axis, covering every rank of the
  /// run once. Collectives the engine inserts act within these groups.
  llvm::SmallVector<int64_t> groups;
  /// Rank r's position along the axis is (r / stride) % size (the mesh is
  /// laid out row-major, so the innermost axis has stride 1).
  int64_t stride = 1;
  /// For each argument, the dimension split over the axis (rank i of a
  /// group holds the i-th of `size` equal blocks), or none: whole on every
  /// rank.
  llvm::SmallVector<std::optional<int64_t>> argumentDims;
  /// For each result, the dimension each rank returns its block of, or
  /// none: every rank returns the whole value. Empty means none for all.
  llvm::SmallVector<std::optional<int64_t>> resultDims;
  /// Group the all_reduce sums of partial sums into asynchronous buckets of
  /// at most `bucketMb` MiB (GradientBuckets.cpp); otherwise each stays a
  /// synchronous kiln.all_reduce where it is first needed.
  bool bucket = true;
  double bucketMb = 25.0;
  bool overlap = true;
  /// The capacity factor of the per-owner buckets in which a table split by
  /// rows exchanges the ids split like it and their rows (OwnerExchange.h):
  /// each bucket holds ceil(factor n / size) of a rank's n ids; 0 (or a
  /// capacity no smaller than n) gathers every rank's ids instead.
  double lookupCapacity = 2.0;
  /// Whether the function may already hold collectives. They must act
  /// along other axes (earlier runs of the engine made them); each is then
  /// rewritten like any op whose meaning does not change along this axis.
  bool otherAxesCommunicate = false;
};

/// Rewrites `func` in place into its SPMD form along one axis. The
/// arguments take their local types; every rank returns the original's
/// results (whole, or its block where `resultDims` names a dimension), up
/// to the order in which float sums add. Reports a function it cannot
/// rewrite at `func` and fails, leaving it unchanged. The caller checks
/// that split dimensions are divisible by the axis size.
LogicalResult partitionAlongAxis(func::FuncOp func,
                                 const AxisPartitionConfig &config);

/// The flattened replica groups of axis `axis` of a row-major mesh of shape
/// `mesh`, and the axis's stride.
llvm::SmallVector<int64_t> meshAxisGroups(llvm::ArrayRef<int64_t> mesh,
                                          size_t axis);
int64_t meshAxisStride(llvm::ArrayRef<int64_t> mesh, size_t axis);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PARALLEL_AXISPARTITIONER_H
