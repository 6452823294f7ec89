//===- Zero.h - Sharded optimizer state and parameters ----------*- C++ -*-===//
//
// The C++ entry point of the kiln-zero pass: on the output of
// kiln-data-parallel, shards the optimizer state (ZeRO-1), the reduced
// gradients (ZeRO-2) and the parameters (ZeRO-3 / FSDP) across the ranks
// (see Passes.td and passes/parallel/README.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_ZERO_H
#define KILN_PASSES_ZERO_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir {
namespace kiln {

struct ZeroConfig {
  /// 1: optimizer state sharded; 2: and gradients reduce-scattered; 3: and
  /// parameters sharded at rest, gathered before each use.
  int64_t stage = 0;
  /// The arguments held as blocks: every element of the flattened argument,
  /// padded with zeros to a multiple of N, split into N blocks of
  /// ceil(numel / N) elements; rank r holds block r. With stage 3, the
  /// parameters are among them.
  llvm::SmallVector<int64_t> shardedArgs;
  /// The results returned as blocks (the new optimizer state; with stage 3,
  /// the new parameters). They must be computed elementwise.
  llvm::SmallVector<int64_t> shardedResults;
  /// The most bytes (of whole gradients) one reduce-scatter bucket carries,
  /// in MiB; the all-reduces that remain are bucketed with the same cap.
  double bucketMb = 25.0;
  /// Start each exchange as soon as its operands exist (true) or right
  /// before its result is needed (false).
  bool overlap = true;
};

/// Rewrites `func`, an SPMD function as kiln-data-parallel makes it, in
/// place: the sharded arguments and results become blocks and the update
/// runs on each rank's block only. Reports at the op at fault (an op that
/// reads sharded state whole, a sharded result that is not computed
/// elementwise) or at `func` (bad options, no collective to take the ranks
/// from) and fails; `func` may then be partly rewritten.
LogicalResult shardOptimizerUpdate(func::FuncOp func, const ZeroConfig &config);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_ZERO_H
