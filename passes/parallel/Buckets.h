//===- Buckets.h - Exchanges grouped into buckets -------------*- C++ -*-===//
//
// What kiln-data-parallel's all-reduces (GradientBuckets.cpp) and
// kiln-zero's reduce-scatters (ScatterBuckets.cpp) share: which exchanges go
// into one bucket, and where a bucket's exchange starts and completes. Each
// kind only says how its bucket packs its members' operands into one tensor,
// starts the exchange and takes each member's result back out.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PARALLEL_BUCKETS_H
#define KILN_PASSES_PARALLEL_BUCKETS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir {
namespace kiln {

/// One exchange (a collective with one operand and one result) of a block.
struct BucketMember {
  Operation *exchange;
  /// Position in the block of its operand's definition (-1: an argument).
  int64_t def;
  /// Position of the first op that uses its result, and that op (the
  /// block's terminator when nothing does).
  int64_t use;
  Operation *firstUser;
};

/// Moves `op` (if it is in `block`, pure, without regions and `canMove`
/// says so), after first doing the same for the ops of `block` that define
/// its operands, up to right after the last of those definitions (or to
/// the block's start), so that what an exchange sends is computed as early
/// as its inputs allow. Each op is considered once (`visited`).
void moveUpToOperands(Operation *op, Block &block,
                      llvm::function_ref<bool(Operation *)> canMove,
                      llvm::DenseSet<Operation *> &visited);

/// Groups `exchanges`, all in `block`, into buckets. Per element type, in
/// the order their operands are defined, a bucket takes members while their
/// operands' bytes stay within `capBytes`, and closes early when the next
/// operand is defined at or after a use of the bucket's results, which
/// could not wait for it. A member larger than the cap is a bucket of its
/// own.
llvm::SmallVector<llvm::SmallVector<BucketMember>>
formBuckets(Block &block, llvm::ArrayRef<Operation *> exchanges,
            int64_t capBytes);

/// How one kind of exchange runs a bucket of several members.
struct BucketLayout {
  /// The one tensor the bucket exchanges, made of the members' operands.
  llvm::function_ref<Value(OpBuilder &, Location, ArrayRef<BucketMember>)>
      pack;
  /// Starts the exchange of `source` as the member `first` would its
  /// operand; returns the pending value.
  llvm::function_ref<Value(OpBuilder &, Location, Operation *first,
                           Value source)>
      start;
  /// The result of `member` out of the completed exchange `whole`, where
  /// its elements start at `offset` (members follow one another, each
  /// taking as many elements as its result has).
  llvm::function_ref<Value(OpBuilder &, Operation *member, Value whole,
                           int64_t offset)>
      unpack;
};

/// Replaces the members of `bucket` (from formBuckets) by one exchange:
/// started right after the last operand is defined (`overlap`) or right
/// before the first use of a result, and completed by a
/// kiln.collective_wait right before that first use; `layout` packs and
/// unpacks. A bucket of one member starts on its operand itself and its
/// result is the waited value.
void emitBucket(llvm::ArrayRef<BucketMember> bucket, Block &block,
                bool overlap, const BucketLayout &layout);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PARALLEL_BUCKETS_H
