//===- ControlFlowRules.cpp - VJP rules of kiln.cond, kiln.for, kiln.while ===//
//
// Both rules build the backward op around a reverse sweep of the forward
// region(s), then make the backward region's references to forward values
// explicit, since kiln regions are isolated from above.
//
// kiln.cond is differentiated through the branch that ran: its backward
// code is another kiln.cond on the same predicate whose branches are the
// reverse sweeps of the forward branches.
//
//  C1. Collect the cotangents that reached the cond's results and the
//      inputs that want a gradient.
//  C2. Build the backward cond. Each backward branch takes the cotangents
//      as block arguments, runs the reverse sweep of its forward branch,
//      and yields the input gradients (zeros where that branch passed
//      none). The backward cond's results are accumulated into the inputs.
//  C3. The rules inside the backward branches read forward values of their
//      forward branch (operands, intermediate results). Each is
//      classified: constants are cloned into the backward branch; a branch
//      argument is the cond's corresponding input; a value the branch
//      already yields is the cond's corresponding result; any other value
//      is a residual the forward cond must export.
//  C4. Residuals are exported as extra results of the forward cond: the
//      cond is rebuilt with the extra result types, the branch that
//      computes a residual yields it and the other branch yields zeros in
//      its place (the backward cond never reads them: it takes the same
//      branch).
//  C5. The outer values of C3 become extra operands of the backward cond,
//      and the forward-value references inside each backward branch are
//      replaced by the matching block arguments. Both branches get the
//      same argument list; each reads only its own residuals.
//
// kiln.for runs its iterations in reverse: the backward loop's iteration j
// is the reverse sweep of forward iteration i = N-1-j, carrying the
// adjoints of the loop-carried values (the cotangents of the results
// before the first backward iteration, the gradients of the inits after
// the last).
//
//  F1. The carried values that are varied take adjoints; a trip count of
//      zero makes the loop the identity, whose gradient is the cotangent.
//  F2. Build the backward loop body: i = N-1-j, the reverse sweep of the
//      forward body seeded with the carried adjoints, and the adjoints of
//      the body's carried arguments as the next carried adjoints.
//  F3. Classify the forward values the backward body reads. The index is
//      i. A loop-invariant value is not stored per iteration: a carried
//      argument the body yields unchanged (typically weights passed into
//      the loop) becomes a carried value of the backward loop, yielded
//      unchanged, initialised with the forward init; a value the body
//      computes from invariant values and constants only is recomputed in
//      the backward body. Every other value is stored: the backward body
//      reads row i of a [N, ...] buffer with kiln.dynamic_slice.
//  F4. Rebuild the forward loop with one extra carried buffer per stored
//      value, zero-initialised, into which each iteration writes its row
//      with kiln.dynamic_update_slice.
//  F5. Create the backward loop carrying the adjoints, then the invariant
//      values and the filled buffers, and accumulate its results into the
//      inits.
//
// kiln.while has a trip count known only at run time, so what the backward
// loop reads goes onto stacks (tensor<?x...>, kiln.stack_push/read) that
// grow as the forward loop runs.
//
//  W1. As F1: the varied carried values take adjoints.
//  W2. Build the backward body. The backward loop carries a counter t,
//      starting at the forward trip count T; its body handles forward
//      iteration i = t - 1 (reverse sweep of the forward body) and yields
//      i as the next t; its cond is t > 0.
//  W3. Classify the forward values the backward body reads as in F3, the
//      stored ones being read with kiln.stack_read at row i.
//  W4. Rebuild the forward loop with a carried i64 counter (0 at entry,
//      +1 per iteration: the trip count once the loop ends) and one stack
//      per stored value, onto which each iteration pushes its value at row
//      counter. The stacks grow (doubling) in an outer loop around the
//      loop that pushes, which runs until the capacity is reached.
//  W5. Create the backward loop carrying t, the adjoints, the invariant
//      values and the filled stacks, and accumulate its results into the
//      inits.
//
// Nested control flow: an inner rule runs while the outer backward region
// is being built, and its residuals (extra cond results, loop buffers) are
// forward values of the outer region, which the outer rule exports or
// stores in turn. Stacks are the exception: a stack cannot be a row of an
// outer buffer or stack, so an outer loop recomputes the op that made it
// (an inner kiln.while, or a kiln.cond exporting one) in its backward body
// from that op's stored operands: one more run of the inner forward loop
// per outer iteration instead of memory for all of the inner iterations.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

/// Values used inside `region` (at any depth) but defined outside it, in
/// order of first use.
static llvm::SetVector<Value> collectExternalValues(Region &region) {
  llvm::SetVector<Value> external;
  region.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!region.isAncestor(operand.getParentRegion()))
        external.insert(operand);
  });
  return external;
}

/// Replaces the uses of `from` inside `region` by `to`.
static void replaceUsesIn(Region &region, Value from, Value to) {
  from.replaceUsesWithIf(to, [&](OpOperand &use) {
    return region.isAncestor(use.getOwner()->getParentRegion());
  });
}

/// C3 for constants: clones the constants among `region`'s external
/// values into its entry block and returns the other external values.
static SmallVector<Value> rematerializeConstants(Region &region) {
  SmallVector<Value> residuals;
  OpBuilder builder = OpBuilder::atBlockBegin(&region.front());
  for (Value value : collectExternalValues(region)) {
    Operation *def = value.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>() &&
        def->getNumOperands() == 0) {
      Operation *clone = builder.clone(*def);
      replaceUsesIn(region, value,
                    clone->getResult(cast<OpResult>(value).getResultNumber()));
      continue;
    }
    residuals.push_back(value);
  }
  return residuals;
}

/// The position at which `block`'s terminator yields `value`, if it does.
static std::optional<unsigned> yieldPosition(Block &block, Value value) {
  for (OpOperand &operand : block.getTerminator()->getOpOperands())
    if (operand.get() == value)
      return operand.getOperandNumber();
  return std::nullopt;
}

LogicalResult autodiff::differentiateCond(CondOp op, VjpContext &context) {
  Activity &activity = context.getActivity();
  OpBuilder &builder = context.getBuilder();
  Location loc = op.getLoc();
  Block *forwardBlocks[2] = {&op.getThenRegion().front(),
                             &op.getElseRegion().front()};

  // C1. Cotangents and varied inputs.
  SmallVector<Value> cotangents;
  SmallVector<unsigned> cotangentResults;
  for (unsigned i = 0, e = op.getNumResults(); i < e; ++i) {
    if (Value adjoint = context.getResultAdjoint(i)) {
      cotangents.push_back(adjoint);
      cotangentResults.push_back(i);
    }
  }
  SmallVector<unsigned> variedInputs;
  SmallVector<Type> gradientTypes;
  for (auto [k, input] : llvm::enumerate(op.getInputs())) {
    if (activity.isVaried(input)) {
      variedInputs.push_back(k);
      gradientTypes.push_back(input.getType());
    }
  }

  // C2. The backward cond.
  auto backward =
      builder.create<CondOp>(loc, gradientTypes, op.getPred(), cotangents);
  Region *backwardRegions[2] = {&backward.getThenRegion(),
                                &backward.getElseRegion()};
  for (int branch = 0; branch < 2; ++branch) {
    Block *block = new Block();
    backwardRegions[branch]->push_back(block);
    for (Value cotangent : cotangents)
      block->addArgument(cotangent.getType(), loc);
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    SmallVector<Value> seeds(op.getNumResults());
    for (auto [j, i] : llvm::enumerate(cotangentResults))
      seeds[i] = block->getArgument(j);
    SmallVector<Value> argAdjoints;
    if (failed(context.getDifferentiator().differentiateBlock(
            *forwardBlocks[branch], inner, seeds, argAdjoints)))
      return failure();
    SmallVector<Value> gradients;
    for (auto [k, type] : llvm::zip(variedInputs, gradientTypes))
      gradients.push_back(argAdjoints[k] ? argAdjoints[k]
                                         : buildZeros(inner, loc, type));
    inner.create<YieldOp>(loc, gradients);
  }
  // Accumulate now, while the forward op (whose operands name the inputs)
  // is still the one the context knows.
  for (auto [j, k] : llvm::enumerate(variedInputs))
    context.addGradient(k + 1, backward.getResult(j));

  // C3. Forward values read by the backward branches.
  SmallVector<Value> residuals[2];
  SmallVector<Value> exported[2];
  for (int branch = 0; branch < 2; ++branch) {
    residuals[branch] = rematerializeConstants(*backwardRegions[branch]);
    for (Value value : residuals[branch]) {
      assert(forwardBlocks[branch]->getParent()->isAncestor(
                 value.getParentRegion()) &&
             "a backward branch reads only its forward branch");
      auto arg = dyn_cast<BlockArgument>(value);
      if ((arg && arg.getOwner() == forwardBlocks[branch]) ||
          yieldPosition(*forwardBlocks[branch], value))
        continue;
      exported[branch].push_back(value);
    }
  }

  // C4. Export residuals as extra results of the forward cond.
  CondOp forward = op;
  unsigned numResults = op.getNumResults();
  if (!exported[0].empty() || !exported[1].empty()) {
    SmallVector<Type> types(op.getResultTypes());
    for (auto &values : exported)
      for (Value value : values)
        types.push_back(value.getType());
    OpBuilder at(op);
    forward = at.create<CondOp>(loc, types, op.getPred(), op.getInputs());
    forward.getThenRegion().takeBody(op.getThenRegion());
    forward.getElseRegion().takeBody(op.getElseRegion());
    for (int branch = 0; branch < 2; ++branch) {
      Operation *yield = forwardBlocks[branch]->getTerminator();
      OpBuilder before(yield);
      SmallVector<Value> values(yield->getOperands());
      for (int from = 0; from < 2; ++from)
        for (Value value : exported[from])
          values.push_back(from == branch
                               ? value
                               : buildZeros(before, loc, value.getType()));
      yield->setOperands(values);
    }
    activity.transferResults(op, forward);
    op->replaceAllUsesWith(forward->getResults().take_front(numResults));
    op.erase();
  }

  // C5. Pass the residuals to the backward cond.
  SmallVector<Value> outerValues;
  llvm::DenseMap<Value, unsigned> outerPosition;
  SmallVector<unsigned> outerIndex[2];
  unsigned nextExport = numResults;
  for (int branch = 0; branch < 2; ++branch) {
    Block *forwardBlock = forwardBlocks[branch];
    for (Value value : residuals[branch]) {
      Value outer;
      auto arg = dyn_cast<BlockArgument>(value);
      if (arg && arg.getOwner() == forwardBlock)
        outer = forward.getInputs()[arg.getArgNumber()];
      else if (std::optional<unsigned> at = yieldPosition(*forwardBlock, value);
               at && *at < numResults)
        outer = forward.getResult(*at);
      else
        outer = forward.getResult(nextExport++);
      auto [it, inserted] = outerPosition.try_emplace(outer, outerValues.size());
      if (inserted)
        outerValues.push_back(outer);
      outerIndex[branch].push_back(it->second);
    }
  }
  unsigned firstResidualArg = cotangents.size();
  backward->insertOperands(backward->getNumOperands(), outerValues);
  for (int branch = 0; branch < 2; ++branch) {
    Block &block = backwardRegions[branch]->front();
    for (Value outer : outerValues)
      block.addArgument(outer.getType(), loc);
    for (auto [value, index] : llvm::zip(residuals[branch], outerIndex[branch]))
      replaceUsesIn(*backwardRegions[branch], value,
                    block.getArgument(firstResidualArg + index));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// kiln.for
//===----------------------------------------------------------------------===//

namespace {
/// F3: the values of a forward loop body that do not change between
/// iterations: carried arguments the body yields unchanged, and results of
/// ops all of whose operands are invariant (constants included).
class LoopInvariance {
public:
  /// Carried value k of `body` is argument k + `firstCarried`.
  LoopInvariance(Block &body, unsigned firstCarried) {
    Operation *yield = body.getTerminator();
    for (auto [k, yielded] : llvm::enumerate(yield->getOperands()))
      if (yielded == body.getArgument(k + firstCarried))
        invariant.insert(yielded);
    for (Operation &op : body.without_terminator())
      if (llvm::all_of(op.getOperands(),
                       [&](Value operand) { return isInvariant(operand); }))
        for (Value result : op.getResults())
          invariant.insert(result);
  }

  bool isInvariant(Value value) const { return invariant.contains(value); }

private:
  llvm::DenseSet<Value> invariant;
};
} // namespace

/// Whether a loop's backward body recomputes the results of `op` rather
/// than reading them from storage: ops whose results include a stack,
/// which cannot be stored per iteration, and the inner loops of
/// checkpointing (Checkpointing.cpp).
static bool mustRecompute(Operation *op) {
  return op->hasAttr(kRecomputeAttrName) ||
         llvm::any_of(op->getResultTypes(),
                      [](Type type) { return isStackType(type); });
}

static RankedTensorType indexScalarType(MLIRContext *context) {
  return RankedTensorType::get({}, IntegerType::get(context, 64));
}

/// `type` with a leading dimension of `rows`.
static RankedTensorType withRows(Type type, int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape{rows};
  llvm::append_range(shape, tensor.getShape());
  return RankedTensorType::get(shape, tensor.getElementType());
}

LogicalResult autodiff::differentiateFor(ForOp op, VjpContext &context) {
  Activity &activity = context.getActivity();
  OpBuilder &builder = context.getBuilder();
  Location loc = op.getLoc();
  MLIRContext *mlirContext = op.getContext();
  Block *forwardBody = &op.getBodyRegion().front();
  int64_t tripCount = static_cast<int64_t>(op.getTripCount());
  unsigned numCarried = op.getNumResults();

  // F1. Varied carried values and their cotangents.
  SmallVector<unsigned> varied;
  for (unsigned k = 0; k < numCarried; ++k)
    if (activity.isVaried(forwardBody->getArgument(k + 1)))
      varied.push_back(k);
  if (tripCount == 0) {
    for (unsigned k : varied)
      context.addGradient(k, context.getResultAdjoint(k));
    return success();
  }
  SmallVector<Value> cotangents;
  for (unsigned k : varied)
    cotangents.push_back(context.getResultAdjointOrZero(k));

  // F2. The backward body, built in a provisional loop that carries the
  // adjoints only; F5 moves it into the final loop.
  auto provisional = builder.create<ForOp>(loc, cotangents, tripCount);
  Region &backwardRegion = provisional.getBodyRegion();
  Block *body = new Block();
  backwardRegion.push_back(body);
  Value j = body->addArgument(indexScalarType(mlirContext), loc);
  for (Value cotangent : cotangents)
    body->addArgument(cotangent.getType(), loc);
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  Value last = inner.create<ConstantOp>(
      loc, DenseElementsAttr::get(indexScalarType(mlirContext),
                                  inner.getI64IntegerAttr(tripCount - 1)));
  auto reversed = inner.create<SubOp>(loc, last, j);
  SmallVector<Value> seeds(numCarried);
  for (auto [position, k] : llvm::enumerate(varied))
    seeds[k] = body->getArgument(1 + position);
  SmallVector<Value> argAdjoints;
  if (failed(context.getDifferentiator().differentiateBlock(
          *forwardBody, inner, seeds, argAdjoints)))
    return failure();
  SmallVector<Value> nextAdjoints;
  for (unsigned k : varied) {
    Value adjoint = argAdjoints[k + 1];
    nextAdjoints.push_back(
        adjoint ? adjoint
                : buildZeros(inner, loc, forwardBody->getArgument(k + 1).getType()));
  }
  auto backwardYield = inner.create<YieldOp>(loc, nextAdjoints);

  // F3. Forward values read by the backward body. New values go right after
  // the computation of i, in the order they are made, so operands come
  // before their users.
  LoopInvariance invariance(*forwardBody, /*firstCarried=*/1);
  OpBuilder prologue(body, std::next(Block::iterator(reversed)));
  llvm::DenseMap<Value, Value> mapped;
  mapped[forwardBody->getArgument(0)] = reversed;
  SmallVector<Value> extraInits;  // outer values of the extra carried slots
  SmallVector<Value> stored;      // forward values stored per iteration
  SmallVector<unsigned> storedSlot;
  std::function<Value(Value)> materialize = [&](Value value) -> Value {
    if (Value known = mapped.lookup(value))
      return known;
    assert(value.getParentBlock() == forwardBody &&
           "the backward body reads only the forward body");
    Value result;
    auto arg = dyn_cast<BlockArgument>(value);
    if (arg && invariance.isInvariant(value)) {
      // A carried argument yielded unchanged: its init.
      extraInits.push_back(op.getInits()[arg.getArgNumber() - 1]);
      result = body->addArgument(value.getType(), loc);
    } else if (!arg && (invariance.isInvariant(value) ||
                        mustRecompute(value.getDefiningOp()))) {
      // Computed from invariant values, or a stack: recompute it.
      Operation *def = value.getDefiningOp();
      IRMapping operands;
      for (Value operand : def->getOperands())
        operands.map(operand, materialize(operand));
      Operation *clone = prologue.clone(*def, operands);
      for (auto [from, to] : llvm::zip(def->getResults(), clone->getResults()))
        mapped[from] = to;
      return mapped.lookup(value);
    } else {
      // Changes between iterations: row i of a buffer.
      storedSlot.push_back(extraInits.size());
      stored.push_back(value);
      extraInits.push_back(Value());
      Value buffer =
          body->addArgument(withRows(value.getType(), tripCount), loc);
      Value row = prologue.create<DynamicSliceOp>(loc, buffer, reversed, 1);
      result = prologue.create<ReshapeOp>(loc, value.getType(), row);
    }
    mapped[value] = result;
    return result;
  };
  for (Value value : collectExternalValues(backwardRegion))
    replaceUsesIn(backwardRegion, value, materialize(value));

  // F4. Store per-iteration values in buffers carried by the forward loop.
  ForOp forward = op;
  if (!stored.empty()) {
    OpBuilder at(op);
    SmallVector<Value> inits(op.getInits());
    for (Value value : stored)
      inits.push_back(
          buildZeros(at, loc, withRows(value.getType(), tripCount)));
    forward = at.create<ForOp>(loc, inits, tripCount);
    forward->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    forward.getBodyRegion().takeBody(op.getBodyRegion());
    Operation *yield = forwardBody->getTerminator();
    OpBuilder before(yield);
    SmallVector<Value> yielded(yield->getOperands());
    for (Value value : stored) {
      Value buffer =
          forwardBody->addArgument(withRows(value.getType(), tripCount), loc);
      Value row = before.create<ReshapeOp>(loc, withRows(value.getType(), 1),
                                           value);
      yielded.push_back(before.create<DynamicUpdateSliceOp>(
          loc, buffer, row, forwardBody->getArgument(0)));
    }
    yield->setOperands(yielded);
    for (auto [slot, position] : llvm::enumerate(storedSlot))
      extraInits[position] = forward.getResult(numCarried + slot);
  }

  // F5. The backward loop: adjoints, then the invariants and buffers, which
  // its body passes on unchanged.
  SmallVector<Value> backwardInits(cotangents);
  llvm::append_range(backwardInits, extraInits);
  SmallVector<Value> backwardYielded(nextAdjoints);
  llvm::append_range(backwardYielded,
                     body->getArguments().drop_front(1 + cotangents.size()));
  backwardYield->setOperands(backwardYielded);
  auto backward = builder.create<ForOp>(loc, backwardInits, tripCount);
  backward.getBodyRegion().takeBody(backwardRegion);
  provisional.erase();
  for (auto [position, k] : llvm::enumerate(varied))
    context.addGradient(k, backward.getResult(position));

  if (forward != op) {
    activity.transferResults(op, forward);
    op->replaceAllUsesWith(forward->getResults().take_front(numCarried));
    op.erase();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// kiln.while
//===----------------------------------------------------------------------===//

/// A rank-0 i64 constant.
static Value indexConstant(OpBuilder &builder, Location loc, int64_t value) {
  return builder.create<ConstantOp>(
      loc, DenseElementsAttr::get(indexScalarType(builder.getContext()),
                                  builder.getI64IntegerAttr(value)));
}

/// Clones the ops of the cond region `from` into `into`, its arguments
/// bound to the first arguments of `into`, and returns the predicate.
static Value cloneCondition(Region &from, Block *into) {
  Block &source = from.front();
  IRMapping mapping;
  for (auto [arg, value] : llvm::zip(source.getArguments(),
                                     into->getArguments()))
    mapping.map(arg, value);
  OpBuilder builder = OpBuilder::atBlockEnd(into);
  for (Operation &inner : source.without_terminator())
    builder.clone(inner, mapping);
  return mapping.lookupOrDefault(source.getTerminator()->getOperand(0));
}

/// W4: replaces the forward loop `op` by one that also carries a trip
/// counter and a stack per value of `stored`, starting from `inits` (op's
/// inits, then 0, then the empty stacks), and pushes each stored value at
/// row counter in every iteration. Without stacks this is one loop. With
/// stacks it is two nested loops, so that the stacks grow outside the loop
/// that pushes (see StackLowering.cpp): the outer loop doubles their
/// capacity (at least 4 rows) and runs an inner loop of op's iterations
/// while op's condition holds and the counter is below the capacity. op's
/// body block becomes the innermost body, so the backward code keeps
/// referring to its values.
static WhileOp buildCountingLoop(OpBuilder &at, WhileOp op,
                                 ArrayRef<Value> inits,
                                 ArrayRef<Value> stored) {
  Location loc = op.getLoc();
  unsigned numCarried = op.getNumResults();
  Block *forwardBody = &op.getBodyRegion().front();
  SmallVector<Type> types;
  for (Value init : inits)
    types.push_back(init.getType());
  SmallVector<Location> locs(types.size(), loc);

  // The pushing loop: op's body with the counter, the stacks and (nested
  // form) the capacity as extra carried values.
  auto fillBody = [&](ArrayRef<Type> extra) {
    Value counter = forwardBody->addArgument(types[numCarried], loc);
    SmallVector<Value> stacks;
    for (Type type : ArrayRef(types).drop_front(numCarried + 1))
      stacks.push_back(forwardBody->addArgument(type, loc));
    for (Type type : extra)
      forwardBody->addArgument(type, loc);
    Operation *yield = forwardBody->getTerminator();
    OpBuilder before(yield);
    SmallVector<Value> yielded(yield->getOperands());
    yielded.push_back(
        before.create<AddOp>(loc, counter, indexConstant(before, loc, 1)));
    for (auto [stack, value] : llvm::zip(stacks, stored))
      yielded.push_back(before.create<StackPushOp>(loc, stack, counter, value));
    llvm::append_range(
        yielded, forwardBody->getArguments().take_back(extra.size()));
    yield->setOperands(yielded);
  };

  if (stored.empty()) {
    auto forward = at.create<WhileOp>(loc, inits);
    forward.getCondRegion().takeBody(op.getCondRegion());
    forward.getBodyRegion().takeBody(op.getBodyRegion());
    forward.getCondRegion().front().addArgument(types[numCarried], loc);
    fillBody({});
    return forward;
  }

  // Outer loop: op's condition, a body that grows the stacks and runs the
  // inner loop.
  auto outer = at.create<WhileOp>(loc, inits);
  OpBuilder blocks(op.getContext());
  Block *outerCond =
      blocks.createBlock(&outer.getCondRegion(), {}, types, locs);
  OpBuilder condBuilder = OpBuilder::atBlockEnd(outerCond);
  condBuilder.create<YieldOp>(loc,
                              cloneCondition(op.getCondRegion(), outerCond));
  Block *outerBody =
      blocks.createBlock(&outer.getBodyRegion(), {}, types, locs);
  OpBuilder b = OpBuilder::atBlockEnd(outerBody);
  Value counter = outerBody->getArgument(numCarried);
  Value capacity = b.create<MaxOp>(
      loc, b.create<MulOp>(loc, counter, indexConstant(b, loc, 2)),
      indexConstant(b, loc, 4));
  SmallVector<Value> innerInits(outerBody->getArguments().take_front(
      numCarried + 1));
  for (Value stack : outerBody->getArguments().drop_front(numCarried + 1))
    innerInits.push_back(b.create<StackReserveOp>(loc, stack, capacity));
  innerInits.push_back(capacity);
  auto inner = b.create<WhileOp>(loc, innerInits);
  b.create<YieldOp>(loc, inner.getResults().drop_back());

  SmallVector<Type> innerTypes(types);
  innerTypes.push_back(capacity.getType());
  SmallVector<Location> innerLocs(innerTypes.size(), loc);
  Block *innerCond =
      blocks.createBlock(&inner.getCondRegion(), {}, innerTypes, innerLocs);
  Value holds = cloneCondition(op.getCondRegion(), innerCond);
  OpBuilder ib = OpBuilder::atBlockEnd(innerCond);
  Value room = ib.create<CompareOp>(loc, CompareDirection::lt,
                                    innerCond->getArgument(numCarried),
                                    innerCond->getArguments().back());
  Value no = ib.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({}, ib.getI1Type()), false));
  ib.create<YieldOp>(loc, ValueRange{ib.create<SelectOp>(loc, holds, room, no)});
  inner.getBodyRegion().takeBody(op.getBodyRegion());
  fillBody({capacity.getType()});
  return outer;
}

LogicalResult autodiff::differentiateWhile(WhileOp op, VjpContext &context) {
  Activity &activity = context.getActivity();
  OpBuilder &builder = context.getBuilder();
  Location loc = op.getLoc();
  MLIRContext *mlirContext = op.getContext();
  Block *forwardBody = &op.getBodyRegion().front();
  unsigned numCarried = op.getNumResults();
  RankedTensorType counterType = indexScalarType(mlirContext);

  // W1. Varied carried values and their cotangents.
  SmallVector<unsigned> varied;
  for (unsigned k = 0; k < numCarried; ++k)
    if (activity.isVaried(forwardBody->getArgument(k)))
      varied.push_back(k);
  if (varied.empty())
    return success();
  SmallVector<Value> cotangents;
  for (unsigned k : varied)
    cotangents.push_back(context.getResultAdjointOrZero(k));

  // W2. The backward body, built in a provisional loop; W5 moves it into
  // the final one. Argument 0 is t, then the adjoints.
  auto provisional = builder.create<WhileOp>(loc, cotangents);
  Region &backwardRegion = provisional.getBodyRegion();
  Block *body = new Block();
  backwardRegion.push_back(body);
  Value t = body->addArgument(counterType, loc);
  for (Value cotangent : cotangents)
    body->addArgument(cotangent.getType(), loc);
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  auto iteration = inner.create<SubOp>(loc, t, indexConstant(inner, loc, 1));
  SmallVector<Value> seeds(numCarried);
  for (auto [position, k] : llvm::enumerate(varied))
    seeds[k] = body->getArgument(1 + position);
  SmallVector<Value> argAdjoints;
  if (failed(context.getDifferentiator().differentiateBlock(
          *forwardBody, inner, seeds, argAdjoints)))
    return failure();
  SmallVector<Value> nextAdjoints;
  for (unsigned k : varied) {
    Value adjoint = argAdjoints[k];
    nextAdjoints.push_back(
        adjoint ? adjoint
                : buildZeros(inner, loc, forwardBody->getArgument(k).getType()));
  }
  auto backwardYield = inner.create<YieldOp>(loc, nextAdjoints);

  // W3. Forward values read by the backward body, materialized right after
  // the computation of i.
  LoopInvariance invariance(*forwardBody, /*firstCarried=*/0);
  OpBuilder prologue(body, std::next(Block::iterator(iteration)));
  llvm::DenseMap<Value, Value> mapped;
  SmallVector<Value> extraInits; // outer values of the extra carried slots
  SmallVector<Value> stored;     // forward values pushed per iteration
  SmallVector<unsigned> storedSlot;
  std::function<Value(Value)> materialize = [&](Value value) -> Value {
    if (Value known = mapped.lookup(value))
      return known;
    assert(value.getParentBlock() == forwardBody &&
           "the backward body reads only the forward body");
    Value result;
    auto arg = dyn_cast<BlockArgument>(value);
    if (arg && invariance.isInvariant(value)) {
      extraInits.push_back(op.getInits()[arg.getArgNumber()]);
      result = body->addArgument(value.getType(), loc);
    } else if (!arg && (invariance.isInvariant(value) ||
                        mustRecompute(value.getDefiningOp()))) {
      Operation *def = value.getDefiningOp();
      IRMapping operands;
      for (Value operand : def->getOperands())
        operands.map(operand, materialize(operand));
      Operation *clone = prologue.clone(*def, operands);
      for (auto [from, to] : llvm::zip(def->getResults(), clone->getResults()))
        mapped[from] = to;
      return mapped.lookup(value);
    } else {
      storedSlot.push_back(extraInits.size());
      stored.push_back(value);
      extraInits.push_back(Value());
      auto rowType = cast<RankedTensorType>(value.getType());
      Value stack = body->addArgument(getStackType(rowType), loc);
      result = prologue.create<StackReadOp>(loc, rowType, stack, iteration);
    }
    mapped[value] = result;
    return result;
  };
  for (Value value : collectExternalValues(backwardRegion))
    replaceUsesIn(backwardRegion, value, materialize(value));

  // W4. The forward loop counts its trips and pushes the stored values.
  OpBuilder at(op);
  SmallVector<Value> inits(op.getInits());
  inits.push_back(indexConstant(at, loc, 0));
  for (Value value : stored)
    inits.push_back(at.create<StackEmptyOp>(
        loc, getStackType(cast<RankedTensorType>(value.getType()))));
  WhileOp forward = buildCountingLoop(at, op, inits, stored);
  forward->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Value tripCount = forward.getResult(numCarried);
  for (auto [slot, position] : llvm::enumerate(storedSlot))
    extraInits[position] = forward.getResult(numCarried + 1 + slot);

  // W5. The backward loop: t, the adjoints, then the invariants and stacks,
  // which its body passes on unchanged.
  SmallVector<Value> backwardInits{tripCount};
  llvm::append_range(backwardInits, cotangents);
  llvm::append_range(backwardInits, extraInits);
  SmallVector<Value> backwardYielded{iteration};
  llvm::append_range(backwardYielded, nextAdjoints);
  llvm::append_range(backwardYielded,
                     body->getArguments().drop_front(1 + cotangents.size()));
  backwardYield->setOperands(backwardYielded);
  auto backward = builder.create<WhileOp>(loc, backwardInits);
  backward.getBodyRegion().takeBody(backwardRegion);
  provisional.erase();
  {
    Block *cond = new Block();
    backward.getCondRegion().push_back(cond);
    for (Value init : backwardInits)
      cond->addArgument(init.getType(), loc);
    OpBuilder condBuilder = OpBuilder::atBlockEnd(cond);
    Value more = condBuilder.create<CompareOp>(
        loc, CompareDirection::gt, cond->getArgument(0),
        indexConstant(condBuilder, loc, 0));
    condBuilder.create<YieldOp>(loc, more);
  }
  for (auto [position, k] : llvm::enumerate(varied))
    context.addGradient(k, backward.getResult(1 + position));

  activity.transferResults(op, forward);
  op->replaceAllUsesWith(forward->getResults().take_front(numCarried));
  op.erase();
  return success();
}
