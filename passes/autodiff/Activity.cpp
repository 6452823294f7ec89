//===- Activity.cpp - Which values carry a derivative ---------------------===//
//
// Forward propagation of "varied" marks from the differentiated arguments:
//
//  1. The seeds (the `wrt` arguments) are marked.
//  2. Ops are visited in order. An op with no varied operand is skipped:
//     kiln regions are isolated from above, so nothing inside it can depend
//     on a seed either. An op with a varied operand must have an entry in
//     the rules table (the VJP rules in reverse mode, the JVP rules in
//     forward mode), else differentiation stops with an error at the op.
//  3. A differentiable op marks its float results. Ops that carry no
//     gradient by rule (comparisons) mark nothing; integer and i1 results
//     are never marked.
//  4. kiln.cond marks the branch arguments of its varied inputs, propagates
//     through both branches, and marks result i if either branch yields a
//     varied value there.
//  5. kiln.for marks the body arguments of its varied inits and propagates
//     through the body until the carried marks stop changing: a carried
//     value that becomes varied in the body is varied from the start of
//     the next iteration, so it is varied throughout.
//  6. kiln.while does the same through its body. Its cond region only
//     computes the predicate, which carries no gradient, so it is skipped.
//
//===----------------------------------------------------------------------===//

#include "Differentiator.h"
#include "Tangents.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

bool Activity::mark(Value value) {
  if (!isDifferentiableType(value.getType()))
    return false;
  return varied.insert(value).second;
}

void Activity::transferResults(Operation *from, Operation *to) {
  for (auto [old, replacement] :
       llvm::zip(from->getResults(), to->getResults())) {
    if (varied.erase(old))
      varied.insert(replacement);
  }
}

LogicalResult Activity::propagate(Block &block, ArrayRef<Value> seeds) {
  // 1. Seeds.
  for (Value seed : seeds)
    mark(seed);
  return propagateBlock(block);
}

LogicalResult Activity::propagateBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(propagateOp(&op)))
      return failure();
  return success();
}

LogicalResult Activity::propagateOp(Operation *op) {
  // 2. Only ops that see a varied operand matter.
  if (llvm::none_of(op->getOperands(),
                    [&](Value operand) { return isVaried(operand); }))
    return success();
  if (auto reason = op->getAttrOfType<StringAttr>(kNoDerivativeAttrName))
    return op->emitOpError() << "cannot be differentiated: "
                             << reason.getValue();
  std::optional<bool> differentiable = hasDerivative(op);
  if (!differentiable)
    return op->emitOpError() << "cannot be differentiated: there is no "
                             << (mode == Mode::Reverse ? "VJP" : "JVP")
                             << " rule for it";

  // 4./5. Control flow.
  if (auto cond = dyn_cast<CondOp>(op))
    return propagateCond(cond);
  if (auto forOp = dyn_cast<ForOp>(op))
    return propagateFor(forOp);
  if (auto whileOp = dyn_cast<WhileOp>(op))
    return propagateWhile(whileOp);

  // 3. Everything else.
  if (*differentiable)
    for (Value result : op->getResults())
      mark(result);
  return success();
}

std::optional<bool> Activity::hasDerivative(Operation *op) const {
  if (mode == Mode::Reverse) {
    if (const VjpRule *rule = lookupVjpRule(op))
      return rule->differentiable;
    return std::nullopt;
  }
  if (const JvpRule *rule = lookupJvpRule(op))
    return rule->differentiable;
  return std::nullopt;
}

LogicalResult Activity::propagateCond(CondOp op) {
  for (Region *region : {&op.getThenRegion(), &op.getElseRegion()}) {
    Block &block = region->front();
    for (auto [input, arg] : llvm::zip(op.getInputs(), block.getArguments()))
      if (isVaried(input))
        mark(arg);
    if (failed(propagateBlock(block)))
      return failure();
  }
  auto thenYield = cast<YieldOp>(op.getThenRegion().front().getTerminator());
  auto elseYield = cast<YieldOp>(op.getElseRegion().front().getTerminator());
  for (auto [result, fromThen, fromElse] :
       llvm::zip(op.getResults(), thenYield.getValues(), elseYield.getValues()))
    if (isVaried(fromThen) || isVaried(fromElse))
      mark(result);
  return success();
}

LogicalResult Activity::propagateFor(ForOp op) {
  Block &body = op.getBodyRegion().front();
  // Argument 0 is the iteration index; carried value k is argument k + 1.
  for (auto [init, arg] :
       llvm::zip(op.getInits(), body.getArguments().drop_front()))
    if (isVaried(init))
      mark(arg);
  if (failed(propagateLoopBody(body, /*firstCarried=*/1)))
    return failure();
  for (auto [result, arg] :
       llvm::zip(op.getResults(), body.getArguments().drop_front()))
    if (isVaried(arg))
      mark(result);
  return success();
}

LogicalResult Activity::propagateWhile(WhileOp op) {
  Block &body = op.getBodyRegion().front();
  for (auto [init, arg] : llvm::zip(op.getInits(), body.getArguments()))
    if (isVaried(init))
      mark(arg);
  if (failed(propagateLoopBody(body, /*firstCarried=*/0)))
    return failure();
  for (auto [result, arg] : llvm::zip(op.getResults(), body.getArguments()))
    if (isVaried(arg))
      mark(result);
  return success();
}

LogicalResult Activity::propagateLoopBody(Block &body, unsigned firstCarried) {
  auto yield = cast<YieldOp>(body.getTerminator());
  bool changed = true;
  while (changed) {
    if (failed(propagateBlock(body)))
      return failure();
    changed = false;
    for (auto [yielded, arg] :
         llvm::zip(yield.getValues(), body.getArguments().drop_front(firstCarried)))
      if (isVaried(yielded))
        changed |= mark(arg);
  }
  return success();
}
