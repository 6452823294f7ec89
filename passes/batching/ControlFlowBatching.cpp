//===- ControlFlowBatching.cpp - kiln.cond, kiln.for, kiln.while under vmap ===//
//
// The regions are batched in place: a region argument whose value carries
// the batch becomes a batched argument, the region's ops are swept like
// the function body, and its terminator yields batched values where the
// op's result carries the batch.
//
//  kiln.cond, unbatched predicate: every lane takes the same branch; the
//      cond is rebuilt with the batched inputs, and a result is batched if
//      either branch yields a batched value there (the other branch's
//      value is broadcast).
//  kiln.cond, batched predicate: lanes differ, so both branches run (they
//      are inlined after the op and batched) and each result is a lane by
//      lane select, as JAX does.
//  kiln.for: the carried values that carry the batch, to a fixed point (a
//      value the body makes batched is batched from the first iteration),
//      become batched carried values.
//  kiln.while, unbatched predicate: as kiln.for.
//  kiln.while, batched predicate: the loop runs while the predicate holds
//      in any lane. Every carried value the body changes is batched, and
//      the body (which recomputes each lane's predicate first) keeps the
//      old value in the lanes whose predicate fails, so each lane ends
//      with its own trip count's values.
//
// Which carried values carry the batch is decided before the body is
// rewritten, by propagating "batched" through the body's ops (an op with
// a batched operand has batched results, and a nested region op the
// results its own rule will batch); the rewrite then follows it.
//
//===----------------------------------------------------------------------===//

#include "Batching.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::batching;

static SmallVector<bool> batchedCarried(Block &body, unsigned firstCarried,
                                        SmallVector<bool> initial);

/// Which carried values of `op` carry the batch, from which of its inits
/// do (`initial`); `lanesDiffer` says whether its predicate differs
/// between lanes, in which case every carried value the body changes is
/// per lane.
static SmallVector<bool> whileCarried(WhileOp op, SmallVector<bool> initial,
                                      bool &lanesDiffer);

/// Which results of the region op `op` carry the batch, given which of its
/// operands do: what its rule will make of it.
static SmallVector<bool> regionResultsBatched(Operation &op,
                                              ArrayRef<bool> operands);

/// Marks the results of `block`'s ops that carry the batch, in order: an
/// op reading a marked value has marked results, except that a region op's
/// results are marked as its rule will batch them (a nested loop's trip
/// counter stays unbatched while its predicate does not depend on the
/// batch).
static void propagateBatched(Block &block, llvm::DenseSet<Value> &batched) {
  for (Operation &op : block.without_terminator()) {
    SmallVector<bool> operands;
    for (Value operand : op.getOperands())
      operands.push_back(batched.contains(operand));
    if (!llvm::is_contained(operands, true))
      continue;
    SmallVector<bool> results =
        op.getNumRegions() ? regionResultsBatched(op, operands)
                           : SmallVector<bool>(op.getNumResults(), true);
    for (auto [result, is] : llvm::zip(op.getResults(), results))
      if (is)
        batched.insert(result);
  }
}

/// The carried values (positions) that carry the batch through `body`,
/// whose carried value k is argument k + `firstCarried`, starting from
/// `initial`.
static SmallVector<bool> batchedCarried(Block &body, unsigned firstCarried,
                                        SmallVector<bool> initial) {
  Operation *yield = body.getTerminator();
  bool changed = true;
  while (changed) {
    llvm::DenseSet<Value> batched;
    for (auto [k, is] : llvm::enumerate(initial))
      if (is)
        batched.insert(body.getArgument(firstCarried + k));
    propagateBatched(body, batched);
    changed = false;
    for (auto [k, value] : llvm::enumerate(yield->getOperands()))
      if (!initial[k] && batched.contains(value))
        initial[k] = changed = true;
  }
  return initial;
}

static SmallVector<bool> whileCarried(WhileOp op, SmallVector<bool> initial,
                                      bool &lanesDiffer) {
  Block &body = op.getBodyRegion().front();
  Block &cond = op.getCondRegion().front();
  SmallVector<bool> marked = batchedCarried(body, 0, std::move(initial));
  llvm::DenseSet<Value> inCond;
  for (auto [k, is] : llvm::enumerate(marked))
    if (is)
      inCond.insert(cond.getArgument(k));
  propagateBatched(cond, inCond);
  lanesDiffer = inCond.contains(cond.getTerminator()->getOperand(0));
  if (lanesDiffer) {
    Operation *yield = body.getTerminator();
    for (unsigned k = 0; k < marked.size(); ++k)
      if (yield->getOperand(k) != body.getArgument(k))
        marked[k] = true;
    marked = batchedCarried(body, 0, marked);
  }
  return marked;
}

/// Which results of a cond whose predicate is unbatched carry the batch:
/// those that either branch yields batched, given its batched inputs.
static SmallVector<bool> condResults(CondOp op, ArrayRef<bool> inputs) {
  SmallVector<bool> results(op.getNumResults(), false);
  for (Region *region : {&op.getThenRegion(), &op.getElseRegion()}) {
    Block &block = region->front();
    llvm::DenseSet<Value> marked;
    for (auto [k, is] : llvm::enumerate(inputs))
      if (is)
        marked.insert(block.getArgument(k));
    propagateBatched(block, marked);
    for (auto [k, value] : llvm::enumerate(block.getTerminator()->getOperands()))
      if (marked.contains(value))
        results[k] = true;
  }
  return results;
}

static SmallVector<bool> regionResultsBatched(Operation &op,
                                              ArrayRef<bool> operands) {
  if (auto loop = dyn_cast<WhileOp>(op)) {
    bool lanesDiffer = false;
    return whileCarried(loop, SmallVector<bool>(operands), lanesDiffer);
  }
  if (auto loop = dyn_cast<ForOp>(op))
    return batchedCarried(loop.getBodyRegion().front(), 1,
                          SmallVector<bool>(operands));
  if (auto cond = dyn_cast<CondOp>(op))
    if (!operands.front())
      return condResults(cond, operands.drop_front());
  return SmallVector<bool>(op.getNumResults(), true);
}

/// Batches block arguments `firstArg + k` for the marked k.
static void batchArguments(Batch &batch, Block &block, unsigned firstArg,
                           ArrayRef<bool> marked, Location loc) {
  SmallVector<BlockArgument> args;
  for (auto [k, is] : llvm::enumerate(marked))
    if (is)
      args.push_back(block.getArgument(firstArg + k));
  for (BlockArgument arg : args)
    batch.batchArgument(block, arg.getArgNumber(), loc);
}

/// Rewrites `block`'s terminator to yield, at the marked positions, the
/// batched counterpart of its value (broadcast if it has none), or
/// `transform` of it where given.
static void yieldBatched(
    Batch &batch, Block &block, ArrayRef<bool> marked,
    function_ref<Value(OpBuilder &, unsigned, Value)> transform = nullptr) {
  Operation *yield = block.getTerminator();
  OpBuilder before(yield);
  SmallVector<Value> values(yield->getOperands());
  for (auto [k, is] : llvm::enumerate(marked)) {
    if (!is)
      continue;
    Value value = batch.materialize(before, yield->getLoc(), values[k]);
    values[k] = transform ? transform(before, k, value) : value;
  }
  yield->setOperands(values);
}

/// Points the uses of `op`'s unbatched results at `rebuilt`'s and records
/// the batched ones' counterparts.
static void takeResults(RuleContext &context, Operation *op,
                        Operation *rebuilt, ArrayRef<bool> marked) {
  for (auto [k, is] : llvm::enumerate(marked)) {
    if (is)
      context.setResult(k, rebuilt->getResult(k));
    else
      op->getResult(k).replaceAllUsesWith(rebuilt->getResult(k));
  }
}

/// `pred` ([B] i1) spread over `like`'s [B, ...] shape.
static Value spreadLanes(OpBuilder &b, Location loc, Value pred, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  if (type.getRank() == 1)
    return pred;
  return b.create<BroadcastInDimOp>(
      loc, RankedTensorType::get(type.getShape(), b.getI1Type()), pred,
      SmallVector<int64_t>{0});
}

LogicalResult batching::batchCond(Operation *operation, RuleContext &context) {
  auto op = cast<CondOp>(operation);
  Batch &batch = context.getBatch();
  Location loc = op.getLoc();
  OpBuilder &b = context.getBuilder();
  unsigned numResults = op.getNumResults();

  if (Value pred = context.batched(0)) {
    for (Type type : op.getResultTypes())
      if (isStackType(type))
        return op.emitOpError()
               << "cannot be batched: its predicate differs between lanes "
                  "and it returns a stack, whose rows cannot be chosen lane "
                  "by lane";
    // Both branches inlined after the op, batched, and selected.
    SmallVector<SmallVector<Value>> branchResults;
    for (Region *region : {&op.getThenRegion(), &op.getElseRegion()}) {
      Block &block = region->front();
      IRMapping map;
      map.map(block.getArguments(), op.getInputs());
      SmallVector<Operation *> cloned;
      for (Operation &inner : block.without_terminator())
        cloned.push_back(b.clone(inner, map));
      for (Operation *inner : cloned)
        if (failed(batch.sweepOp(*inner)))
          return failure();
      SmallVector<Value> results;
      for (Value value : block.getTerminator()->getOperands())
        results.push_back(map.lookupOrDefault(value));
      branchResults.push_back(results);
    }
    for (unsigned k = 0; k < numResults; ++k) {
      Value onTrue = batch.materialize(b, loc, branchResults[0][k]);
      Value onFalse = batch.materialize(b, loc, branchResults[1][k]);
      context.setResult(k, b.create<SelectOp>(
                               loc, spreadLanes(b, loc, pred, onTrue), onTrue,
                               onFalse));
    }
    return success();
  }

  // One branch for every lane: batch the branches in place.
  SmallVector<bool> batchedInputs;
  SmallVector<Value> inputs;
  for (auto [k, input] : llvm::enumerate(op.getInputs())) {
    Value counterpart = context.batched(1 + k);
    batchedInputs.push_back(static_cast<bool>(counterpart));
    inputs.push_back(counterpart ? counterpart : input);
  }
  SmallVector<bool> batchedResults = condResults(op, batchedInputs);
  for (Region *region : {&op.getThenRegion(), &op.getElseRegion()}) {
    Block &block = region->front();
    batchArguments(batch, block, 0, batchedInputs, loc);
    if (failed(batch.sweepBlock(block)))
      return failure();
    yieldBatched(batch, block, batchedResults);
    batch.finishBlock(block);
  }
  SmallVector<Type> types;
  for (auto [k, type] : llvm::enumerate(op.getResultTypes()))
    types.push_back(batchedResults[k] ? batchedType(type, batch.size())
                                      : type);
  auto rebuilt = b.create<CondOp>(loc, types, op.getPred(), inputs);
  rebuilt->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rebuilt.getThenRegion().takeBody(op.getThenRegion());
  rebuilt.getElseRegion().takeBody(op.getElseRegion());
  takeResults(context, op, rebuilt, batchedResults);
  return success();
}

/// The inits of a loop whose marked carried values are batched.
static SmallVector<Value> loopInits(RuleContext &context, ValueRange inits,
                                    ArrayRef<bool> marked) {
  SmallVector<Value> values;
  for (auto [k, init] : llvm::enumerate(inits))
    values.push_back(marked[k] ? context.getBatch().materialize(
                                     context.getBuilder(), context.getLoc(),
                                     init)
                               : init);
  return values;
}

LogicalResult batching::batchFor(Operation *operation, RuleContext &context) {
  auto op = cast<ForOp>(operation);
  Batch &batch = context.getBatch();
  Location loc = op.getLoc();
  SmallVector<bool> initial;
  for (unsigned k = 0; k < op.getInits().size(); ++k)
    initial.push_back(static_cast<bool>(context.batched(k)));
  // Argument 0 is the iteration index; carried value k is argument k + 1.
  SmallVector<bool> marked =
      batchedCarried(op.getBodyRegion().front(), 1, initial);

  auto loop = context.getBuilder().create<ForOp>(
      loc, loopInits(context, op.getInits(), marked), op.getTripCount());
  loop->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  loop.getBodyRegion().takeBody(op.getBodyRegion());
  Block &body = loop.getBodyRegion().front();
  batchArguments(batch, body, 1, marked, loc);
  if (failed(batch.sweepBlock(body)))
    return failure();
  yieldBatched(batch, body, marked);
  batch.finishBlock(body);
  takeResults(context, op, loop, marked);
  return success();
}

LogicalResult batching::batchWhile(Operation *operation, RuleContext &context) {
  auto op = cast<WhileOp>(operation);
  Batch &batch = context.getBatch();
  Location loc = op.getLoc();
  OpBuilder &b = context.getBuilder();
  unsigned numCarried = op.getInits().size();
  SmallVector<bool> initial;
  for (unsigned k = 0; k < numCarried; ++k)
    initial.push_back(static_cast<bool>(context.batched(k)));
  // Lanes that stop at different trips make every carried value the body
  // changes per lane.
  bool lanesDiffer = false;
  SmallVector<bool> marked = whileCarried(op, initial, lanesDiffer);
  if (lanesDiffer) {
    for (auto [k, init] : llvm::enumerate(op.getInits()))
      if (marked[k] && isStackType(init.getType()))
        return op.emitOpError()
               << "cannot be batched: its trip count differs between lanes "
                  "and it carries a stack (a loop differentiated before "
                  "vmap), whose rows would be pushed and read at a "
                  "different index in each lane";
  }

  auto loop = b.create<WhileOp>(loc, loopInits(context, op.getInits(),
                                               marked));
  loop->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  loop.getCondRegion().takeBody(op.getCondRegion());
  loop.getBodyRegion().takeBody(op.getBodyRegion());
  Block &cond = loop.getCondRegion().front();
  Block &body = loop.getBodyRegion().front();

  batchArguments(batch, cond, 0, marked, loc);
  if (failed(batch.sweepBlock(cond)))
    return failure();
  Operation *condYield = cond.getTerminator();
  Value lanePred = batch.lookup(condYield->getOperand(0));
  if (lanesDiffer) {
    // Go on while any lane goes on.
    OpBuilder before(condYield);
    auto i32 = RankedTensorType::get({batch.size()}, before.getI32Type());
    Value asInt = before.create<CastOp>(loc, i32, lanePred);
    Value any = before.create<ReduceMaxOp>(loc, asInt,
                                           SmallVector<int64_t>{0});
    Value zero = before.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 RankedTensorType::get({}, before.getI32Type()),
                 before.getI32IntegerAttr(0)));
    condYield->setOperand(
        0, before.create<CompareOp>(loc, CompareDirection::ne, any, zero));
  }
  batch.finishBlock(cond);

  SmallVector<Value> carried(body.getArguments());
  batchArguments(batch, body, 0, marked, loc);
  Value bodyPred;
  if (lanesDiffer) {
    // Each lane's predicate, recomputed at the top of the body from the
    // carried values: the cond region's ops up to the one that makes it
    // (already batched), cloned; the any-lane reduction after it is not.
    OpBuilder top = OpBuilder::atBlockBegin(&body);
    IRMapping map;
    for (unsigned k = 0; k < numCarried; ++k) {
      Value counterpart = batch.lookup(carried[k]);
      map.map(cond.getArgument(k), counterpart ? counterpart : carried[k]);
    }
    if (Operation *last = lanePred.getDefiningOp())
      for (Operation &inner : cond.without_terminator()) {
        top.clone(inner, map);
        if (&inner == last)
          break;
      }
    bodyPred = map.lookupOrDefault(lanePred);
  }
  if (failed(batch.sweepBlock(body)))
    return failure();
  if (lanesDiffer) {
    yieldBatched(batch, body, marked,
                 [&](OpBuilder &at, unsigned k, Value next) -> Value {
                   Value old = batch.materialize(at, loc, carried[k]);
                   return at.create<SelectOp>(
                       loc, spreadLanes(at, loc, bodyPred, next), next, old);
                 });
  } else {
    yieldBatched(batch, body, marked);
  }
  batch.finishBlock(body);
  takeResults(context, op, loop, marked);
  return success();
}
