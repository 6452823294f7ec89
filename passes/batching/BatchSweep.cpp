//===- BatchSweep.cpp - Batching the ops of a block -----------------------===//
//
// The sweep over one block:
//
//  1. The caller batches the block's arguments that carry the batch
//     (batchArgument: a new argument of the batched type in the old one's
//     place) and records counterparts for values batched outside it.
//  2. The block's ops are visited first to last. An op none of whose
//     operands is batched computes the same value in every lane and stays
//     as it is. Otherwise its rule emits the batched computation right
//     after it and records the counterparts of its results.
//  3. The caller rewrites the terminator in terms of the counterparts, and
//     finishBlock erases the replaced ops (last to first, so that each is
//     unused when it goes) and the replaced arguments.
//
//===----------------------------------------------------------------------===//

#include "Batching.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::batching;

RankedTensorType batching::batchedType(Type type, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  // A stack's rows grow along its dynamic dim 0, so the batch goes right
  // behind it: each row holds every lane's value.
  shape.insert(shape.begin() + (isStackType(tensor) ? 1 : 0), size);
  return RankedTensorType::get(shape, tensor.getElementType());
}

int64_t RuleContext::size() const { return batch.size(); }

Value RuleContext::batched(unsigned index) const {
  return batch.lookup(op->getOperand(index));
}

Value RuleContext::materialized(unsigned index) {
  return batch.materialize(builder, getLoc(), op->getOperand(index));
}

void RuleContext::setResult(unsigned index, Value value) {
  batch.map(op->getResult(index), value);
}

Value Batch::materialize(OpBuilder &builder, Location loc, Value value) {
  if (Value batched = lookup(value))
    return batched;
  auto type = cast<RankedTensorType>(value.getType());
  if (isStackType(type))
    return materializeStack(builder, loc, value);
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(d + 1);
  return builder.create<BroadcastInDimOp>(loc, batchedType(type, batchSize),
                                          value, dims);
}

/// An unbatched stack made in this function (emptied, grown and pushed
/// to) is made again batched, each pushed row broadcast. One that arrives
/// as a region's argument cannot be: copying its rows would need their
/// count, which only the running program knows.
Value Batch::materializeStack(OpBuilder &builder, Location loc, Value value) {
  Type type = batchedType(value.getType(), batchSize);
  Operation *def = value.getDefiningOp();
  if (isa_and_nonnull<StackEmptyOp>(def))
    return builder.create<StackEmptyOp>(loc, type);
  if (auto reserve = dyn_cast_or_null<StackReserveOp>(def))
    return builder.create<StackReserveOp>(
        loc, materializeStack(builder, loc, reserve.getStack()),
        reserve.getRows());
  if (auto push = dyn_cast_or_null<StackPushOp>(def))
    return builder.create<StackPushOp>(
        loc, materializeStack(builder, loc, push.getStack()),
        push.getIndex(), materialize(builder, loc, push.getValue()));
  emitError(loc) << "cannot batch a stack that arrives unbatched as a "
                    "region's argument";
  materializeFailed = true;
  return builder.create<StackEmptyOp>(loc, type);
}

void Batch::batchArgument(Block &block, unsigned index, Location loc) {
  BlockArgument old = block.getArgument(index);
  BlockArgument batched = block.insertArgument(
      index + 1, batchedType(old.getType(), batchSize), loc);
  map(old, batched);
  replacedArguments[&block].push_back(old);
}

LogicalResult Batch::sweepOp(Operation &op) {
  if (llvm::none_of(op.getOperands(),
                    [&](Value operand) { return lookup(operand); }))
    return success();
  BatchingRule rule = lookupBatchingRule(&op);
  if (!rule)
    return op.emitOpError()
           << "cannot be batched: there is no batching rule for it";
  OpBuilder builder(op.getContext());
  builder.setInsertionPointAfter(&op);
  RuleContext context(*this, &op, builder);
  if (failed(rule(&op, context)) || materializeFailed)
    return failure();
  replaced[op.getBlock()].push_back(&op);
  return success();
}

LogicalResult Batch::sweepBlock(Block &block) {
  // The ops a rule emits after its op are not visited: the range moves on
  // before the rule runs.
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator()))
    if (failed(sweepOp(op)))
      return failure();
  return success();
}

void Batch::finishBlock(Block &block) {
  // The erased values leave the map too: a later value may be allocated
  // where one of them was.
  SmallVector<Operation *> ops = replaced.lookup(&block);
  for (Operation *op : llvm::reverse(ops)) {
    assert(op->use_empty() && "a replaced op is still used");
    for (Value result : op->getResults())
      counterparts.erase(result);
    op->erase();
  }
  replaced.erase(&block);
  // By their current numbers, highest first, so that each erasure leaves
  // the numbers still to come as they are.
  SmallVector<unsigned> numbers;
  for (BlockArgument arg : replacedArguments.lookup(&block)) {
    numbers.push_back(arg.getArgNumber());
    counterparts.erase(arg);
  }
  llvm::sort(numbers);
  for (unsigned number : llvm::reverse(numbers))
    block.eraseArgument(number);
  replacedArguments.erase(&block);
}
