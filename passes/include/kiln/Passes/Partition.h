//===- Partition.h - Tensor parallelism by sharding annotations -*- C++ -*-===//
//
// The C++ entry point of the kiln-partition pass: rewrites a function whose
// arguments and results carry sharding annotations over a device mesh into
// the SPMD function every rank of the mesh runs (see Passes.td and
// passes/parallel/README.md).
//
// A function names its mesh, row-major (rank = dp index * 2 + tp index for
// the mesh below), and each argument or result that is split says, for each
// of its dimensions, the mesh axis it is split over ("" for none):
//
//   func.func @step(%x: tensor<8x16xf32> {kiln.sharding = ["dp", ""]},
//                   %w: tensor<16x32xf32> {kiln.sharding = ["", "tp"]})
//       -> (tensor<16x32xf32> {kiln.sharding = ["", "tp"]})
//       attributes {kiln.mesh = {axes = ["dp", "tp"],
//                                shape = array<i64: 2, 2>}}
//
// Unannotated arguments and results are whole on every rank.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PARTITION_H
#define KILN_PASSES_PARTITION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace kiln {

/// The names of the annotations.
inline constexpr llvm::StringLiteral kMeshAttrName = "kiln.mesh";
inline constexpr llvm::StringLiteral kShardingAttrName = "kiln.sharding";

/// A device mesh: named axes and their sizes, ranks laid out row-major.
struct Mesh {
  llvm::SmallVector<std::string> axes;
  llvm::SmallVector<int64_t> shape;
  int64_t numRanks() const;
  /// The index of axis `name`, or none.
  std::optional<size_t> axisIndex(llvm::StringRef name) const;
  /// Rank `rank`'s position along axis `axis`: the block of a dimension
  /// split over that axis it holds, (rank / stride) % size, with stride the
  /// product of the later axes' sizes.
  int64_t position(size_t axis, int64_t rank) const;
};

/// For one tensor: per dimension, the index of the mesh axis it is split
/// over, or none.
using TensorSharding = llvm::SmallVector<std::optional<size_t>>;

struct PartitionConfig {
  /// The mesh axis whose partial-sum all-reduces (the gradients, when it is
  /// the data-parallel axis) are bucketed and started early, as in
  /// kiln-data-parallel; empty, or an axis the mesh lacks, for none. Where
  /// the mesh has it, it must be its first axis (the one partitioned last).
  /// Other axes' all-reduces are synchronous, where their results are first
  /// needed.
  std::string bucketAxis;
  double bucketMb = 25.0;
  bool overlap = true;
  /// End with kiln-combine-collectives (buckets of at most bucketMb).
  bool combine = true;
  /// The capacity factor of the per-owner buckets of ids and rows that a
  /// table split by rows exchanges with ids split over the same axis
  /// (AxisPartitionConfig::lookupCapacity); 0 gathers every rank's ids.
  double lookupCapacity = 2.0;
};

/// The mesh annotation of `func`: none without a `kiln.mesh` attribute;
/// failure, reported at `func`, for a malformed one.
FailureOr<std::optional<Mesh>> readMesh(func::FuncOp func);

/// Sets `func`'s mesh annotation, and the sharding annotations of its
/// argument `index` / result `index` (for the tracer and other front ends).
void setMesh(func::FuncOp func, const Mesh &mesh);
void setArgumentSharding(func::FuncOp func, unsigned index,
                         llvm::ArrayRef<std::string> axisPerDim);
void setResultSharding(func::FuncOp func, unsigned index,
                       llvm::ArrayRef<std::string> axisPerDim);

/// Rewrites the annotated `func` in place into the SPMD function every rank
/// of its mesh runs: split arguments take their local shapes, each rank
/// returns its block of the split results and the whole of the others (up
/// to the order in which float sums add). The annotations are removed.
/// Reports a malformed or unsatisfiable annotation (naming the argument or
/// result, the dimension and the axis), a function that already
/// communicates or is called in its module, at `func`, and fails, leaving
/// it unchanged.
LogicalResult partitionFunction(func::FuncOp func,
                                const PartitionConfig &config);

/// kiln-combine-collectives on `block` (CombineCollectives.cpp): its
/// independent synchronous all_gathers and reduce_scatters along dimension
/// 0 and all_reduces become asynchronous exchanges of buckets of at most
/// `capBytes` bytes. partitionFunction ends with it (its bucketMb as the
/// cap; none at 0 or without PartitionConfig::combine).
void combineCollectives(Block &block, int64_t capBytes);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PARTITION_H
