//===- AxisPartitionInterface.h - An op's rule along a mesh axis -*- C++
//-*-===//
//
// The states of a value split over one mesh axis, the context through which
// an op's rule (AxisPartitionOpInterface) rewrites it, and the interface.
// The context is implemented by the engine in passes/parallel
// (AxisPartitioner.cpp); nothing here depends on it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_AXISPARTITIONINTERFACE_H
#define KILN_IR_AXISPARTITIONINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace kiln {

/// How a value of the original function exists on the ranks along one axis.
struct AxisSharding {
  enum Kind { Replicated, Sharded, PartialSum };
  Kind kind = Replicated;
  /// The dimension of a Sharded value.
  int64_t dim = -1;

  static AxisSharding replicated() { return {Replicated, -1}; }
  static AxisSharding sharded(int64_t dim) { return {Sharded, dim}; }
  static AxisSharding partialSum() { return {PartialSum, -1}; }
  bool isReplicated() const { return kind == Replicated; }
  bool isSharded() const { return kind == Sharded; }
  bool isPartialSum() const { return kind == PartialSum; }
};

/// What an op's rule may ask of the engine that splits a function over one
/// axis: the state and local value of every original value defined so far,
/// conversions between states, and the definition of the op's results. The
/// builder inserts into the rewritten function where the op's local form
/// belongs.
class AxisPartitionContext {
public:
  virtual ~AxisPartitionContext();

  /// The number of ranks along the axis.
  virtual int64_t getAxisSize() const = 0;
  /// The axis's replica groups, flattened (rows of getAxisSize() ranks):
  /// the groups of the collectives a rule inserts itself.
  virtual ArrayRef<int64_t> getGroups() const = 0;
  virtual OpBuilder &getBuilder() = 0;
  /// The capacity factor of the per-owner buckets in which ids split like
  /// a table split by rows are exchanged (0: gather every rank's ids).
  virtual double getLookupCapacity() const = 0;

  /// The state of the original value `original`, and the value this rank
  /// holds of it in that state.
  virtual AxisSharding stateOf(Value original) const = 0;
  virtual Value localOf(Value original) const = 0;
  /// Records that this rank holds `local` of `original`, in `state`.
  virtual void define(Value original, Value local, AxisSharding state) = 0;
  /// Copies `op` onto the local `operands` and defines its results in the
  /// states `results`, with their local types.
  virtual Operation *emit(Operation *op, ValueRange operands,
                          ArrayRef<AxisSharding> results) = 0;
  /// The whole value of `original` on every rank (communicating if it is
  /// not Replicated).
  virtual Value replicate(Value original) = 0;
  /// This rank's piece of `original` along dimension `dim`, which the
  /// axis size divides.
  virtual Value shardAlong(Value original, int64_t dim) = 0;
  /// The first row of this rank's block of `rowsPerRank` rows (its
  /// position along the axis times rowsPerRank), a rank-0 tensor of
  /// `element`.
  virtual Value rankOffset(int64_t rowsPerRank, Type element) = 0;
  /// Whether a rank has its rows of the PartialSum `original` without it
  /// being summed whole (an embedding's gradient: a scatter_add of the
  /// batch's lookups into zeros, or an op linear in one): shardAlong(
  /// original, 0) then gathers the lookups, not the table.
  virtual bool hasScatteredRows(Value original) const = 0;

  Operation *emit(Operation *op, ValueRange operands, AxisSharding result) {
    return emit(op, operands, ArrayRef<AxisSharding>(result));
  }
  /// The type a rank holds of a value of type `global` in `state`.
  Type localType(Type global, AxisSharding state) const;
  /// Whether dimension `dim` of `v` can be split across the axis.
  bool divisible(Value v, int64_t dim) const;
  SmallVector<Value> localsOf(ValueRange originals) const;
  SmallVector<AxisSharding> statesOf(ValueRange originals) const;
  /// The position of `op`'s first Sharded operand, if any.
  std::optional<unsigned> firstSharded(Operation *op) const;
};

} // namespace kiln
} // namespace mlir

#include "kiln/IR/AxisPartitionInterface.h.inc"

#endif // KILN_IR_AXISPARTITIONINTERFACE_H
