//===- DataParallel.h - Data parallelism as a program rewrite ---*- C++ -*-===//
//
// The C++ entry point of the kiln-data-parallel pass: rewrites a
// single-device function into the SPMD function that N ranks run, each on
// its shard of the batch (see Passes.td and passes/parallel/README.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_DATAPARALLEL_H
#define KILN_PASSES_DATAPARALLEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir {
namespace kiln {

struct DataParallelConfig {
  /// The number of ranks (>= 1).
  int64_t ranks = 0;
  /// The arguments split along their leading dimension: rank r gets rows
  /// [r * B / ranks, (r + 1) * B / ranks). B must be divisible by `ranks`.
  llvm::SmallVector<int64_t> batchArgs;
  /// The most bytes one bucket of gradient all-reduces carries, in MiB
  /// (PyTorch DDP's bucket_cap_mb); a larger tensor is a bucket of its own.
  double bucketMb = 25.0;
  /// Start each bucket's all-reduce as soon as its last operand is computed
  /// (true) or right before its results are first used (false).
  bool overlap = true;
};

/// Rewrites `func` in place into its data-parallel SPMD form: the batch
/// arguments take their per-rank shapes, and every rank returns the results
/// the original returns on the whole batch (up to the order of float sums).
/// Reports a bad option, an argument that cannot be split or a function
/// that already communicates at `func` (or the op at fault) and fails,
/// leaving `func` unchanged.
LogicalResult partitionDataParallel(func::FuncOp func,
                                    const DataParallelConfig &config);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_DATAPARALLEL_H
