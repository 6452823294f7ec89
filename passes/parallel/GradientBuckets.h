//===- GradientBuckets.h - Bucketed asynchronous all-reduces ----*- C++ -*-===//
//
// The last step of kiln-data-parallel (GradientBuckets.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PARALLEL_GRADIENTBUCKETS_H
#define KILN_PASSES_PARALLEL_GRADIENTBUCKETS_H

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Block.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdint>

namespace mlir {
namespace kiln {

/// Replaces the kiln.all_reduce sums `reductions`, all in `block`, by
/// buckets of at most `capBytes` bytes each: per bucket one
/// kiln.all_reduce_start of the flattened, concatenated operands, started
/// right after the last of them is computed (`overlap`) or right before the
/// first use of a result, and one kiln.collective_wait right before that
/// first use, whose slices replace the reductions. Before bucketing, the ops
/// of `movable` (the ones that compute the operands from a completed
/// partial sum, such as a scaling by the learning rate) and the constants
/// they read are moved up to where their operands are ready, so that each
/// exchange can start as early as its data allows.
void bucketPartialSums(Block &block, llvm::ArrayRef<AllReduceOp> reductions,
                       const llvm::DenseSet<Operation *> &movable,
                       int64_t capBytes, bool overlap);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PARALLEL_GRADIENTBUCKETS_H
