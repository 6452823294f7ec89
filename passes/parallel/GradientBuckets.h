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

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <limits>

namespace mlir {
namespace kiln {

/// Groups the exchanges `members` of one element type into buckets, the
/// rule kiln-data-parallel's all-reduces and kiln-zero's reduce-scatters
/// share. A member has `def`, the position of its operand's definition, and
/// `use`, that of its result's first use. In `def` order, a bucket takes
/// members while their bytes (`bytesOf`) stay within `capBytes`, and closes
/// early when the next operand is defined at or after a use of the bucket's
/// results, which could not wait for it. A member larger than the cap is a
/// bucket of its own.
template <typename Member, typename BytesFn>
llvm::SmallVector<llvm::SmallVector<Member>>
formBuckets(llvm::SmallVector<Member> members, int64_t capBytes,
            BytesFn bytesOf) {
  llvm::stable_sort(members, [](const Member &a, const Member &b) {
    return a.def < b.def;
  });
  llvm::SmallVector<llvm::SmallVector<Member>> buckets;
  llvm::SmallVector<Member> current;
  int64_t bytes = 0, use = std::numeric_limits<int64_t>::max();
  for (const Member &m : members) {
    int64_t size = bytesOf(m);
    if (!current.empty() && (bytes + size > capBytes || m.def >= use)) {
      buckets.push_back(std::move(current));
      current.clear();
      bytes = 0;
      use = std::numeric_limits<int64_t>::max();
    }
    current.push_back(m);
    bytes += size;
    use = std::min(use, m.use);
  }
  if (!current.empty())
    buckets.push_back(std::move(current));
  return buckets;
}

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
