//===- SplitVjp.cpp - A derived VJP as a forward and a backward function ---===//
//
// buildGradient derives `vjp(x..., dy...) -> (y..., dx...)`, which runs the
// forward computation and then the backward one in one call. A caller that
// runs the two passes at different times (a pipeline stage's forward pass
// of a micro-batch now, its backward pass ticks later) and does not want to
// run the forward computation twice needs them apart, as JAX's vjp returns
// a forward result and a closure over its residuals:
//
//   forward(x...)                 -> (y..., r...)
//   backward(x..., r..., dy...)   -> (dx...)
//
// The split is by dependence in the VJP's body: the forward function holds
// the ops the primal results y need (their backward slice), the backward
// function every other op; the residuals r are the forward ops' results
// that the backward ops read. Operand-free ops without regions (constants,
// iota, rank) are cloned into the backward function instead of being kept.
// Residuals are tensors of static shape: the run-time stacks of a kiln.while
// live inside one function, so a VJP that keeps one cannot be split.
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/Autodiff.h"
#include "kiln/Passes/ValuesRead.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Whether the backward function recomputes `op` rather than receiving its
/// results: it reads nothing and holds no region.
bool isRematerializable(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0;
}

} // namespace

FailureOr<SplitVjp> mlir::kiln::splitVjp(func::FuncOp vjp,
                                         unsigned numOutputs,
                                         unsigned numCotangents,
                                         StringRef forwardName,
                                         StringRef backwardName) {
  if (!vjp.getBody().hasOneBlock())
    return vjp.emitError("cannot split @")
           << vjp.getSymName() << ": its body is not one block";
  Block &body = vjp.front();
  unsigned numArgs = body.getNumArguments();
  Operation *ret = body.getTerminator();
  if (numCotangents > numArgs || numOutputs > ret->getNumOperands())
    return vjp.emitError("cannot split @")
           << vjp.getSymName() << ": it has " << numArgs << " arguments and "
           << ret->getNumOperands() << " results, fewer than "
           << numCotangents << " cotangents and " << numOutputs
           << " primal results";
  unsigned numPrimalArgs = numArgs - numCotangents;
  if (auto module = vjp->getParentOfType<ModuleOp>())
    for (StringRef name : {forwardName, backwardName})
      if (module.lookupSymbol(name))
        return vjp.emitError("cannot split @")
               << vjp.getSymName() << ": the name @" << name << " is taken";

  // The forward ops: the backward slice of the primal results in the body.
  llvm::SmallPtrSet<Operation *, 32> forward;
  SmallVector<Operation *> worklist;
  auto need = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (def && def->getBlock() == &body && forward.insert(def).second)
      worklist.push_back(def);
  };
  for (unsigned i = 0; i < numOutputs; ++i)
    need(ret->getOperand(i));
  while (!worklist.empty())
    for (Value read : valuesRead(worklist.pop_back_val()))
      need(read);
  auto isCotangent = [&](Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner() == &body &&
           arg.getArgNumber() >= numPrimalArgs;
  };
  for (Operation *op : forward)
    for (Value read : valuesRead(op))
      if (isCotangent(read))
        return op->emitError("cannot split @")
               << vjp.getSymName()
               << ": its primal results depend on a cotangent";
  for (unsigned i = 0; i < numOutputs; ++i)
    if (isCotangent(ret->getOperand(i)))
      return vjp.emitError("cannot split @")
             << vjp.getSymName() << ": primal result #" << i
             << " is a cotangent";

  // The residuals: forward results the backward ops or the cotangent
  // results read, in the order the forward function computes them.
  SetVector<Value> residuals;
  SetVector<Operation *> recomputed;
  auto keep = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || !forward.contains(def))
      return;
    if (isRematerializable(def))
      recomputed.insert(def);
    else
      residuals.insert(value);
  };
  for (Operation &op : body.without_terminator())
    if (!forward.contains(&op))
      for (Value read : valuesRead(&op))
        keep(read);
  for (unsigned i = numOutputs; i < ret->getNumOperands(); ++i)
    keep(ret->getOperand(i));
  for (Value r : residuals) {
    auto tensor = dyn_cast<RankedTensorType>(r.getType());
    if (!tensor || !tensor.hasStaticShape())
      return r.getDefiningOp()->emitError("cannot split @")
             << vjp.getSymName() << ": its backward pass reads a value of type "
             << r.getType()
             << " (a kiln.while's stack), which cannot cross a function "
                "boundary";
  }
  SmallVector<Value> ordered(residuals.begin(), residuals.end());
  llvm::sort(ordered, [](Value a, Value b) {
    Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
    if (x != y)
      return x->isBeforeInBlock(y);
    return cast<OpResult>(a).getResultNumber() <
           cast<OpResult>(b).getResultNumber();
  });

  MLIRContext *context = vjp.getContext();
  Location loc = vjp.getLoc();
  OpBuilder builder(context);
  builder.setInsertionPointAfter(vjp);
  TypeRange argTypes = vjp.getArgumentTypes();
  TypeRange resultTypes = vjp.getResultTypes();

  // forward(x...) -> (y..., r...)
  SmallVector<Type> forwardResults(resultTypes.take_front(numOutputs));
  for (Value r : ordered)
    forwardResults.push_back(r.getType());
  auto forwardFn = builder.create<func::FuncOp>(
      loc, forwardName,
      FunctionType::get(context, argTypes.take_front(numPrimalArgs),
                        forwardResults));
  forwardFn.setPrivate();
  {
    IRMapping map;
    Block *entry = forwardFn.addEntryBlock();
    for (unsigned i = 0; i < numPrimalArgs; ++i)
      map.map(body.getArgument(i), entry->getArgument(i));
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (forward.contains(&op))
        b.clone(op, map);
    SmallVector<Value> results;
    for (unsigned i = 0; i < numOutputs; ++i)
      results.push_back(map.lookup(ret->getOperand(i)));
    for (Value r : ordered)
      results.push_back(map.lookup(r));
    b.create<func::ReturnOp>(loc, results);
  }

  // backward(x..., r..., dy...) -> (dx...)
  SmallVector<Type> backwardArgs(argTypes.take_front(numPrimalArgs));
  for (Value r : ordered)
    backwardArgs.push_back(r.getType());
  backwardArgs.append(argTypes.begin() + numPrimalArgs, argTypes.end());
  builder.setInsertionPointAfter(forwardFn);
  auto backwardFn = builder.create<func::FuncOp>(
      loc, backwardName,
      FunctionType::get(context, backwardArgs,
                        resultTypes.drop_front(numOutputs)));
  backwardFn.setPrivate();
  {
    IRMapping map;
    Block *entry = backwardFn.addEntryBlock();
    unsigned next = 0;
    for (unsigned i = 0; i < numPrimalArgs; ++i)
      map.map(body.getArgument(i), entry->getArgument(next++));
    for (Value r : ordered)
      map.map(r, entry->getArgument(next++));
    for (unsigned i = numPrimalArgs; i < numArgs; ++i)
      map.map(body.getArgument(i), entry->getArgument(next++));
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (!forward.contains(&op) || recomputed.contains(&op))
        b.clone(op, map);
    SmallVector<Value> results;
    for (unsigned i = numOutputs; i < ret->getNumOperands(); ++i)
      results.push_back(map.lookupOrDefault(ret->getOperand(i)));
    b.create<func::ReturnOp>(loc, results);
  }
  return SplitVjp{forwardFn, backwardFn, static_cast<unsigned>(ordered.size())};
}
