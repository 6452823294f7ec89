//===- ScatterBuckets.h - Bucketed asynchronous reduce-scatters -*- C++ -*-===//
//
// The last step of kiln-zero (ScatterBuckets.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PARALLEL_SCATTERBUCKETS_H
#define KILN_PASSES_PARALLEL_SCATTERBUCKETS_H

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Block.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace mlir {
namespace kiln {

/// Replaces the kiln.reduce_scatter sums `scatters`, all in `block`, each
/// along dimension 0 of a vector whose length the group size divides, by
/// buckets of at most `capBytes` bytes of operands: per bucket one
/// kiln.reduce_scatter_start of the operands laid out so that every rank's
/// block of each is one contiguous run, started right after the last
/// operand is computed (`overlap`) or right before the first use of a
/// result, and one kiln.collective_wait right before that first use, whose
/// slices replace the reduce-scatters.
void bucketScatters(Block &block, llvm::ArrayRef<ReduceScatterOp> scatters,
                    int64_t capBytes, bool overlap);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PARALLEL_SCATTERBUCKETS_H
