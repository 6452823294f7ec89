//===- Checkpointing.cpp - Recompute loop segments instead of storing -----===//
//
// With checkpointing every k iterations, a loop's backward pass stores the
// carried values only at the start of every segment of k iterations and
// recomputes the segment's forward pass (storing its k iterations) just
// before running the segment backward. Memory goes from N rows of every
// stored value to N/k rows of the carried values plus k rows of the stored
// values; the price is one more forward run of each segment.
//
// This is done by rewriting the loops before differentiation, so that the
// ordinary rules do the rest:
//
//  1. A kiln.for of N > k iterations becomes an outer kiln.for of N / k
//     iterations whose body is an inner kiln.for of k iterations (index
//     j * k + l), followed by a kiln.for of the N % k remaining ones.
//  2. A kiln.while becomes an outer kiln.while on the same condition whose
//     body is an inner kiln.while running while the condition holds and
//     fewer than k iterations of it have run.
//  3. The inner loops are marked `kiln.recompute`: the rule of the outer
//     loop then recomputes them in its backward body from their operands
//     (which it stores, once per segment) instead of storing what they
//     export (their residual buffers or stacks).
//
// Loops are rewritten innermost first, at every depth.
//
//===----------------------------------------------------------------------===//

#include "Differentiator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

static RankedTensorType i64Scalar(MLIRContext *context) {
  return RankedTensorType::get({}, IntegerType::get(context, 64));
}

static Value i64Constant(OpBuilder &builder, Location loc, int64_t value) {
  return builder.create<ConstantOp>(
      loc, DenseElementsAttr::get(i64Scalar(builder.getContext()),
                                  builder.getI64IntegerAttr(value)));
}

/// Replaces the uses of the iteration index of `body` (argument 0) by
/// `scale * extra + index + offset`, where `extra` is a value computed at
/// the start of the body (or null for none).
static void remapIndex(Block *body, Value extra, int64_t scale,
                       int64_t offset) {
  Location loc = body->getParentOp()->getLoc();
  Value index = body->getArgument(0);
  OpBuilder builder = OpBuilder::atBlockBegin(body);
  Value base = i64Constant(builder, loc, offset);
  if (extra)
    base = builder.create<AddOp>(
        loc, builder.create<MulOp>(loc, extra, i64Constant(builder, loc, scale)),
        base);
  auto shifted = builder.create<AddOp>(loc, base, index);
  index.replaceAllUsesExcept(shifted, shifted);
}

/// The values the outer loop's body yields: the inner loop's results, except
/// for the carried values that `body` (the original loop body, whose
/// carried value k is argument k + `firstCarried`) yields unchanged: those
/// are the outer body's own arguments, so that the rules still see them as
/// loop-invariant (passed once rather than stored per segment).
static SmallVector<Value> outerYields(Block *body, unsigned firstCarried,
                                      Block *outerBody,
                                      unsigned outerFirstCarried,
                                      ValueRange innerResults) {
  SmallVector<Value> yielded;
  Operation *yield = body->getTerminator();
  for (auto [k, value] : llvm::enumerate(yield->getOperands()))
    yielded.push_back(value == body->getArgument(k + firstCarried)
                          ? outerBody->getArgument(k + outerFirstCarried)
                          : innerResults[k]);
  return yielded;
}

/// Step 1.
static void splitFor(ForOp op, int64_t every) {
  int64_t tripCount = static_cast<int64_t>(op.getTripCount());
  int64_t segments = tripCount / every;
  int64_t remaining = tripCount % every;
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  OpBuilder builder(op);

  ForOp remainder;
  if (remaining != 0) {
    remainder = cast<ForOp>(builder.clone(*op));
    remainder.setTripCount(static_cast<uint64_t>(remaining));
    remapIndex(&remainder.getBodyRegion().front(), Value(), 0,
               segments * every);
  }

  builder.setInsertionPoint(remainder ? remainder.getOperation()
                                      : op.getOperation());
  auto outer = builder.create<ForOp>(loc, op.getInits(), segments);
  SmallVector<Type> types{i64Scalar(context)};
  llvm::append_range(types, op.getInits().getTypes());
  SmallVector<Location> locs(types.size(), loc);
  OpBuilder blocks(context);
  Block *outerBody =
      blocks.createBlock(&outer.getBodyRegion(), {}, types, locs);
  OpBuilder inside = OpBuilder::atBlockEnd(outerBody);
  SmallVector<Value> innerInits(outerBody->getArguments().drop_front());
  innerInits.push_back(outerBody->getArgument(0));
  auto inner = inside.create<ForOp>(loc, innerInits, every);
  inner->setAttr(kRecomputeAttrName, UnitAttr::get(context));
  Block *body = &op.getBodyRegion().front();
  inside.create<YieldOp>(loc, outerYields(body, 1, outerBody, 1,
                                          inner.getResults().drop_back()));

  Value segment = body->addArgument(i64Scalar(context), loc);
  Operation *yield = body->getTerminator();
  SmallVector<Value> yielded(yield->getOperands());
  yielded.push_back(segment);
  yield->setOperands(yielded);
  remapIndex(body, segment, every, 0);
  inner.getBodyRegion().takeBody(op.getBodyRegion());

  if (remainder) {
    remainder->setOperands(outer.getResults());
    op->replaceAllUsesWith(remainder.getResults());
  } else {
    op->replaceAllUsesWith(outer.getResults());
  }
  op.erase();
}

/// Clones the ops of `from`'s cond block into `into`, bound to its first
/// arguments, and returns the cloned predicate.
static Value cloneCondition(Region &from, Block *into) {
  Block &source = from.front();
  IRMapping mapping;
  for (auto [arg, value] :
       llvm::zip(source.getArguments(), into->getArguments()))
    mapping.map(arg, value);
  OpBuilder builder = OpBuilder::atBlockEnd(into);
  for (Operation &op : source.without_terminator())
    builder.clone(op, mapping);
  return mapping.lookupOrDefault(source.getTerminator()->getOperand(0));
}

/// Step 2.
static void splitWhile(WhileOp op, int64_t every) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  OpBuilder builder(op);
  SmallVector<Type> types(op.getInits().getTypes());
  SmallVector<Location> locs(types.size(), loc);
  OpBuilder blocks(context);

  auto outer = builder.create<WhileOp>(loc, op.getInits());
  Block *outerCond =
      blocks.createBlock(&outer.getCondRegion(), {}, types, locs);
  OpBuilder::atBlockEnd(outerCond).create<YieldOp>(
      loc, cloneCondition(op.getCondRegion(), outerCond));
  Block *outerBody =
      blocks.createBlock(&outer.getBodyRegion(), {}, types, locs);
  OpBuilder inside = OpBuilder::atBlockEnd(outerBody);
  SmallVector<Value> innerInits(outerBody->getArguments());
  innerInits.push_back(i64Constant(inside, loc, 0));
  auto inner = inside.create<WhileOp>(loc, innerInits);
  inner->setAttr(kRecomputeAttrName, UnitAttr::get(context));
  inside.create<YieldOp>(loc, outerYields(&op.getBodyRegion().front(), 0,
                                          outerBody, 0,
                                          inner.getResults().drop_back()));

  // Inner cond: the condition, and fewer than `every` iterations so far.
  SmallVector<Type> innerTypes(types);
  innerTypes.push_back(i64Scalar(context));
  SmallVector<Location> innerLocs(innerTypes.size(), loc);
  Block *innerCond =
      blocks.createBlock(&inner.getCondRegion(), {}, innerTypes, innerLocs);
  Value holds = cloneCondition(op.getCondRegion(), innerCond);
  OpBuilder condBuilder = OpBuilder::atBlockEnd(innerCond);
  Value room = condBuilder.create<CompareOp>(
      loc, CompareDirection::lt, innerCond->getArguments().back(),
      i64Constant(condBuilder, loc, every));
  Value no = condBuilder.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({}, condBuilder.getI1Type()), false));
  condBuilder.create<YieldOp>(
      loc, ValueRange{condBuilder.create<SelectOp>(loc, holds, room, no)});

  // Inner body: op's body counting its iterations.
  Block *body = &op.getBodyRegion().front();
  Value count = body->addArgument(i64Scalar(context), loc);
  Operation *yield = body->getTerminator();
  OpBuilder before(yield);
  SmallVector<Value> yielded(yield->getOperands());
  yielded.push_back(
      before.create<AddOp>(loc, count, i64Constant(before, loc, 1)));
  yield->setOperands(yielded);
  inner.getBodyRegion().takeBody(op.getBodyRegion());

  op->replaceAllUsesWith(outer.getResults());
  op.erase();
}

void autodiff::splitLoopsForCheckpointing(Block &block, unsigned every) {
  if (every == 0)
    return;
  SmallVector<Operation *> loops;
  // Post-order: inner loops come before the loops that contain them.
  for (Operation &op : block)
    op.walk([&](Operation *nested) {
      if (isa<ForOp, WhileOp>(nested) && !nested->hasAttr(kRecomputeAttrName))
        loops.push_back(nested);
    });
  for (Operation *loop : loops) {
    if (auto forOp = dyn_cast<ForOp>(loop)) {
      if (forOp.getTripCount() > every)
        splitFor(forOp, every);
    } else {
      splitWhile(cast<WhileOp>(loop), every);
    }
  }
}
