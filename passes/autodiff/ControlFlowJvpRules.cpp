//===- ControlFlowJvpRules.cpp - JVP rules of kiln.cond, kiln.for, kiln.while -===//
//
// In forward mode a control-flow op computes its tangents next to its
// values: the op is rebuilt with its regions moved into it, each region
// sweeps its own block (the tangent ops stay inside the region, beside the
// values they differentiate, so nothing crosses a region boundary but the
// tangents themselves), and the tangents enter and leave as extra operands
// and results. Nothing is stored and no loop runs backwards: a kiln.while
// with a data-dependent trip count simply carries its tangents along.
//
//  kiln.cond   extra inputs: the tangents of the inputs that have one
//              (both branches take them as extra block arguments); extra
//              results: the tangents of the varied results, each branch
//              yielding its tangent or zeros.
//  kiln.for    extra carried values: the tangents of the varied carried
//  kiln.while  values (initialised with the inits' tangents, or zeros
//              where an init is not varied but the body makes the carried
//              value so); the body yields the next tangents. The while's
//              cond region takes the tangents as block arguments it does
//              not read: the predicate has no derivative.
//
//===----------------------------------------------------------------------===//

#include "Tangents.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

/// Adds one block argument per value of `tangents` to `block` and records
/// it as the tangent of `block`'s argument `primalArgs[k]`.
static void addTangentArguments(Block &block, ArrayRef<unsigned> primalArgs,
                                ValueRange tangents, TangentMap &map,
                                Location loc) {
  for (auto [arg, tangent] : llvm::zip_equal(primalArgs, tangents))
    map[block.getArgument(arg)] =
        block.addArgument(tangent.getType(), loc);
}

/// Appends to `block`'s terminator the tangent of each of its operands
/// `positions` (zeros where it has none).
static void yieldTangents(Block &block, ArrayRef<unsigned> positions,
                          TangentMap &map) {
  Operation *yield = block.getTerminator();
  OpBuilder before(yield);
  SmallVector<Value> values(yield->getOperands());
  for (unsigned position : positions) {
    Value value = yield->getOperand(position);
    Value tangent = map.lookup(value);
    values.push_back(tangent ? tangent
                             : buildZeros(before, yield->getLoc(),
                                          value.getType()));
  }
  yield->setOperands(values);
}

/// Replaces `op` by `rebuilt` (whose first results are op's), records the
/// tangents of op's results `positions` as rebuilt's results from
/// op->getNumResults() on, and erases op.
static void replaceWithTangents(Operation *op, Operation *rebuilt,
                                ArrayRef<unsigned> positions,
                                JvpContext &context) {
  context.getSweep().getActivity().transferResults(op, rebuilt);
  unsigned numResults = op->getNumResults();
  op->replaceAllUsesWith(rebuilt->getResults().take_front(numResults));
  for (auto [slot, position] : llvm::enumerate(positions))
    context.getTangents()[rebuilt->getResult(position)] =
        rebuilt->getResult(numResults + slot);
  op->erase();
}

LogicalResult autodiff::tangentsOfCond(CondOp op, JvpContext &context) {
  Activity &activity = context.getSweep().getActivity();
  TangentMap &tangents = context.getTangents();
  Location loc = op.getLoc();

  SmallVector<unsigned> tangentInputs;
  SmallVector<Value> inputs(op.getInputs()), inputTangents;
  for (auto [index, input] : llvm::enumerate(op.getInputs()))
    if (Value tangent = tangents.lookup(input)) {
      tangentInputs.push_back(index);
      inputTangents.push_back(tangent);
    }
  llvm::append_range(inputs, inputTangents);
  SmallVector<unsigned> variedResults;
  SmallVector<Type> types(op.getResultTypes());
  for (auto [index, result] : llvm::enumerate(op.getResults()))
    if (activity.isVaried(result)) {
      variedResults.push_back(index);
      types.push_back(result.getType());
    }

  OpBuilder at(op);
  auto cond = at.create<CondOp>(loc, types, op.getPred(), inputs);
  cond->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  for (auto [from, to] : {std::pair{&op.getThenRegion(), &cond.getThenRegion()},
                          std::pair{&op.getElseRegion(), &cond.getElseRegion()}}) {
    to->takeBody(*from);
    Block &block = to->front();
    addTangentArguments(block, tangentInputs, inputTangents, tangents, loc);
    if (failed(context.getSweep().sweepBlock(block, tangents)))
      return failure();
    yieldTangents(block, variedResults, tangents);
  }
  replaceWithTangents(op, cond, variedResults, context);
  return success();
}

/// The carried values (positions among the inits) whose body argument,
/// `firstCarried` + k, is varied, and the tangents their loop starts from.
static void carriedTangents(OpBuilder &at, Location loc, ValueRange inits,
                            Block &body, unsigned firstCarried,
                            JvpContext &context,
                            SmallVectorImpl<unsigned> &varied,
                            SmallVectorImpl<Value> &initTangents) {
  Activity &activity = context.getSweep().getActivity();
  for (auto [k, init] : llvm::enumerate(inits)) {
    if (!activity.isVaried(body.getArgument(firstCarried + k)))
      continue;
    varied.push_back(k);
    Value tangent = context.getTangents().lookup(init);
    initTangents.push_back(tangent ? tangent
                                   : buildZeros(at, loc, init.getType()));
  }
}

/// A loop body (carried value k is argument k + `firstCarried`) taking the
/// tangents of the carried values `varied` as extra arguments, computing
/// its tangents, and yielding the next ones after its values.
static LogicalResult sweepLoopBody(Block &body, unsigned firstCarried,
                                   ArrayRef<unsigned> varied,
                                   ValueRange initTangents,
                                   JvpContext &context, Location loc) {
  TangentMap &tangents = context.getTangents();
  SmallVector<unsigned> args = llvm::to_vector(
      llvm::map_range(varied, [&](unsigned k) { return k + firstCarried; }));
  addTangentArguments(body, args, initTangents, tangents, loc);
  if (failed(context.getSweep().sweepBlock(body, tangents)))
    return failure();
  yieldTangents(body, varied, tangents);
  return success();
}

LogicalResult autodiff::tangentsOfFor(ForOp op, JvpContext &context) {
  Location loc = op.getLoc();
  Block &oldBody = op.getBodyRegion().front();
  OpBuilder at(op);
  SmallVector<unsigned> varied;
  SmallVector<Value> initTangents;
  // Argument 0 is the iteration index; carried value k is argument k + 1.
  carriedTangents(at, loc, op.getInits(), oldBody, 1, context, varied,
                  initTangents);
  SmallVector<Value> inits(op.getInits());
  llvm::append_range(inits, initTangents);

  auto loop = at.create<ForOp>(loc, inits, op.getTripCount());
  loop->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  loop.getBodyRegion().takeBody(op.getBodyRegion());
  if (failed(sweepLoopBody(loop.getBodyRegion().front(), 1, varied,
                           initTangents, context, loc)))
    return failure();
  replaceWithTangents(op, loop, varied, context);
  return success();
}

LogicalResult autodiff::tangentsOfWhile(WhileOp op, JvpContext &context) {
  Location loc = op.getLoc();
  Block &oldBody = op.getBodyRegion().front();
  OpBuilder at(op);
  SmallVector<unsigned> varied;
  SmallVector<Value> initTangents;
  carriedTangents(at, loc, op.getInits(), oldBody, 0, context, varied,
                  initTangents);
  SmallVector<Value> inits(op.getInits());
  llvm::append_range(inits, initTangents);

  auto loop = at.create<WhileOp>(loc, inits);
  loop->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  loop.getCondRegion().takeBody(op.getCondRegion());
  loop.getBodyRegion().takeBody(op.getBodyRegion());
  // The predicate has no derivative: the cond region only takes the
  // tangents to keep its signature the loop's.
  Block &cond = loop.getCondRegion().front();
  for (Value tangent : initTangents)
    cond.addArgument(tangent.getType(), loc);
  if (failed(sweepLoopBody(loop.getBodyRegion().front(), 0, varied,
                           initTangents, context, loc)))
    return failure();
  replaceWithTangents(op, loop, varied, context);
  return success();
}
