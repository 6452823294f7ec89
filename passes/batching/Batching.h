//===- Batching.h - Batching a block of kiln IR -----------------*- C++ -*-===//
//
// The pieces of buildVmap shared by the derived function, the batching
// rules and the control-flow rules:
//
//  * Batch: the batch size and which values of the blocks being batched
//    carry the batch. A batched value stands for B values of the original
//    type; its batched counterpart has the batch as a new dim 0. An
//    unbatched value is the same in every lane and is used as it is.
//  * BatchingRule and lookupBatchingRule: the rules table
//    (BatchingRules.cpp).
//  * RuleContext: what a rule sees: its op, the batched counterparts of
//    its operands (null where unbatched), and where to put its results'.
//
// A rule emits the batched computation right after its op; the op itself,
// now dead, is erased when its block is finished.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_BATCHING_BATCHING_H
#define KILN_PASSES_BATCHING_BATCHING_H

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace kiln {
namespace batching {

/// `type` with a leading batch dim of `size`; a stack (tensor<?x...>)
/// takes the batch as dim 1, behind its rows.
RankedTensorType batchedType(Type type, int64_t size);

class Batch;

/// What a batching rule sees at its op. Ops go at the builder's insertion
/// point, right after the op, located at it.
class RuleContext {
public:
  RuleContext(Batch &batch, Operation *op, OpBuilder &builder)
      : batch(batch), op(op), builder(builder) {}

  Operation *getOp() const { return op; }
  Location getLoc() const { return op->getLoc(); }
  OpBuilder &getBuilder() { return builder; }
  Batch &getBatch() { return batch; }
  int64_t size() const;

  /// The batched counterpart of operand `index`, or null if it is
  /// unbatched.
  Value batched(unsigned index) const;
  /// Operand `index` batched: its counterpart, or the operand broadcast
  /// along a new dim 0.
  Value materialized(unsigned index);

  /// Records `value` as the batched counterpart of result `index`.
  void setResult(unsigned index, Value value);

private:
  Batch &batch;
  Operation *op;
  OpBuilder &builder;
};

/// A rule: emits the batched computation of its op.
using BatchingRule = LogicalResult (*)(Operation *op, RuleContext &context);

/// The rule for `op`'s kind, or null if the table has none.
BatchingRule lookupBatchingRule(Operation *op);

/// The batch of a function being vmapped and the batched counterparts of
/// its values.
class Batch {
public:
  explicit Batch(int64_t size) : batchSize(size) {}

  int64_t size() const { return batchSize; }

  Value lookup(Value value) const { return counterparts.lookup(value); }
  void map(Value value, Value batched) { counterparts[value] = batched; }

  /// `value`'s counterpart, or `value` broadcast along a new dim 0. An
  /// unbatched stack is rebuilt batched from the ops that made it; one
  /// that is a region's argument cannot be, and this reports an error at
  /// `loc`, and the rule that asked fails.
  Value materialize(OpBuilder &builder, Location loc, Value value);

  /// Inserts after block argument `index` of `block` a batched one, of its
  /// type with a leading batch dim, and records it as the counterpart. The
  /// old argument goes in finishBlock, where the new one takes its place.
  void batchArgument(Block &block, unsigned index, Location loc);

  /// Hands each op of `block` that reads a batched value to its rule,
  /// first to last. Fails, with a diagnostic at the op, for an op without
  /// a rule or one its rule refuses.
  LogicalResult sweepBlock(Block &block);

  /// The same for one op (which sweepBlock would otherwise not reach, such
  /// as one a rule inlined): its rule runs if it reads a batched value.
  LogicalResult sweepOp(Operation &op);

  /// After the caller has rewritten `block`'s terminator: erases the ops
  /// the rules replaced and the arguments batchArgument replaced.
  void finishBlock(Block &block);

private:
  Value materializeStack(OpBuilder &builder, Location loc, Value value);

  int64_t batchSize;
  /// Set by a materialize that reported an error.
  bool materializeFailed = false;
  llvm::DenseMap<Value, Value> counterparts;
  llvm::DenseMap<Block *, SmallVector<Operation *>> replaced;
  llvm::DenseMap<Block *, SmallVector<BlockArgument>> replacedArguments;
};

/// kiln.cond: with an unbatched predicate, a cond whose branches are
/// batched; with a batched one, both branches inlined and their results
/// selected lane by lane (ControlFlowBatching.cpp).
LogicalResult batchCond(Operation *op, RuleContext &context);
/// kiln.for: a loop whose body is batched, with the carried values that
/// the body makes batched batched from the start.
LogicalResult batchFor(Operation *op, RuleContext &context);
/// kiln.while: as kiln.for with an unbatched predicate; with a batched
/// one, the loop runs while any lane's predicate holds and a lane whose
/// predicate fails keeps its carried values.
LogicalResult batchWhile(Operation *op, RuleContext &context);

} // namespace batching
} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_BATCHING_BATCHING_H
