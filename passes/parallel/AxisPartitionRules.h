//===- AxisPartitionRules.h - The kiln ops' rules along a mesh axis -*- C++
//-*-===//
//
// The registration of the kiln ops' AxisPartitionOpInterface models, and the
// pieces of the rules that the engine (AxisPartitioner.cpp) uses too.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PARALLEL_AXISPARTITIONRULES_H
#define KILN_PASSES_PARALLEL_AXISPARTITIONRULES_H

#include "kiln/IR/AxisPartitionInterface.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir {
class DialectRegistry;
namespace kiln {
class ScatterAddOp;

/// Attaches each kiln op's rule (AxisPartitionOpInterface) when the kiln
/// dialect is loaded. The passes that split functions over mesh axes
/// declare it as a dependency; partitionAlongAxis adds it to a context
/// that lacks it.
void registerAxisPartitionRules(DialectRegistry &registry);

/// Whether `v` is a kiln.constant splat of zero (either sign for floats).
bool isZeroSplat(Value v);

/// The dimension of shape `to` that, across a reshape between `from` and
/// `to`, holds the blocks of `from`'s dimension `d` split over `ranks`, if
/// any. A reshape reads the same both ways, so this maps a result's
/// dimension to an operand's too.
std::optional<int64_t> alignedDim(ArrayRef<int64_t> from, int64_t d,
                                  ArrayRef<int64_t> to, int64_t ranks);

/// Whether the elementwise `op`, its operands in `states` (none Sharded), is
/// linear in its PartialSum operands: applying it to the local values and
/// summing over the ranks gives the op of the sums.
bool linearInPartialSums(Operation *op, ArrayRef<AxisSharding> states);

/// The operands of the elementwise `op` taken along `d`, its rank-0 ones
/// (a select's predicate) whole.
SmallVector<Value> elementwiseOperandsAlong(AxisPartitionContext &c,
                                            Operation *op, int64_t d);

/// scatter_add of the whole `ids` and `updates` into this rank's rows
/// `localTable` of op's table (split by rows); returns the rank's rows of
/// the result.
Value scatterIntoLocalRows(AxisPartitionContext &c, ScatterAddOp op,
                           Value localTable, Value ids, Value updates);

/// `v` with its first `leadingDims` dimensions made one.
Value flattened(OpBuilder &b, Value v, int64_t leadingDims);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PARALLEL_AXISPARTITIONRULES_H
