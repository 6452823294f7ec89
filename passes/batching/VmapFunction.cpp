//===- VmapFunction.cpp - Derive the batched form of a kiln function -------===//
//
// buildVmap:
//
//  1. Check the request: f can be derived from (common/Derivation.h), one
//     in axis per argument within its rank + 1, one out axis per result, a
//     batch size of at least 1.
//  2. Clone f under the new name, with its calls inlined.
//  3. Give each mapped argument its batched type (the batch at its in
//     axis); inside, the batch is moved to dim 0, where every rule keeps
//     it.
//  4. Sweep the body (BatchSweep.cpp).
//  5. Return each result with its batch moved to its out axis (a result
//     that does not depend on the batch is broadcast first; one that does,
//     with no out axis, is an error).
//
// If any step fails the clone is erased, so the module is left as it was.
//
//===----------------------------------------------------------------------===//

#include "Batching.h"
#include "common/Derivation.h"

#include "kiln/Passes/Batching.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::batching;

/// The permutation that moves dim `from` of a rank-`rank` tensor to `to`.
static SmallVector<int64_t> moveDim(int64_t rank, int64_t from, int64_t to) {
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    if (d != from)
      order.push_back(d);
  order.insert(order.begin() + to, from);
  return order;
}

/// `type` with a dim of `size` inserted at `axis`.
static RankedTensorType withDimAt(Type type, int64_t axis, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape.insert(shape.begin() + axis, size);
  return RankedTensorType::get(shape, tensor.getElementType());
}

FailureOr<func::FuncOp>
mlir::kiln::buildVmap(func::FuncOp f, ArrayRef<std::optional<int64_t>> inAxes,
                      ArrayRef<std::optional<int64_t>> outAxes, int64_t size,
                      StringRef requestedName) {
  std::string name = requestedName.empty() ? (f.getName() + "_vmap").str()
                                           : requestedName.str();
  // 1. Check.
  if (failed(checkDerivable(f, name, "batch")))
    return failure();
  if (inAxes.size() != f.getNumArguments())
    return f.emitError() << "vmap of @" << f.getName() << ": "
                         << inAxes.size() << " in axes for "
                         << f.getNumArguments() << " arguments";
  if (outAxes.size() != f.getNumResults())
    return f.emitError() << "vmap of @" << f.getName() << ": "
                         << outAxes.size() << " out axes for "
                         << f.getNumResults() << " results";
  if (size < 1)
    return f.emitError() << "vmap of @" << f.getName()
                         << ": the batch size must be at least 1, got "
                         << size;
  if (llvm::none_of(inAxes, [](auto axis) { return axis.has_value(); }))
    return f.emitError() << "vmap of @" << f.getName()
                         << ": no argument is mapped (every in axis is None)";
  auto checkAxis = [&](std::optional<int64_t> axis, Type type,
                       const char *what, unsigned index) -> LogicalResult {
    int64_t rank = cast<RankedTensorType>(type).getRank();
    if (axis && (*axis < 0 || *axis > rank))
      return f.emitError() << "vmap of @" << f.getName() << ": " << what
                           << " #" << index << " of rank " << rank
                           << " has batch axis " << *axis
                           << ", outside [0, " << rank << "]";
    return success();
  };
  for (auto [i, axis] : llvm::enumerate(inAxes))
    if (failed(checkAxis(axis, f.getArgumentTypes()[i], "argument", i)))
      return failure();
  for (auto [i, axis] : llvm::enumerate(outAxes))
    if (failed(checkAxis(axis, f.getResultTypes()[i], "result", i)))
      return failure();

  // 2. Clone.
  FailureOr<func::FuncOp> clone = cloneForDerivation(f, name);
  if (failed(clone))
    return failure();
  func::FuncOp g = *clone;
  auto fail = [&]() -> FailureOr<func::FuncOp> {
    g.erase();
    return failure();
  };
  Block &body = g.getBody().front();
  Batch batch(size);

  // 3. Mapped arguments.
  SmallVector<BlockArgument> args(body.getArguments());
  OpBuilder top = OpBuilder::atBlockBegin(&body);
  for (auto [arg, axis] : llvm::zip_equal(args, inAxes)) {
    if (!axis)
      continue;
    batch.batchArgument(body, arg.getArgNumber(), arg.getLoc());
    if (*axis == 0)
      continue;
    // The argument arrives with the batch at its axis.
    Value batched = batch.lookup(arg);
    batched.setType(withDimAt(arg.getType(), *axis, size));
    int64_t rank = cast<RankedTensorType>(arg.getType()).getRank() + 1;
    Value front = top.create<TransposeOp>(arg.getLoc(), batched,
                                          moveDim(rank, *axis, 0));
    batch.map(arg, front);
  }

  // 4. Sweep.
  if (failed(batch.sweepBlock(body)))
    return fail();

  // 5. Results.
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder before(returnOp);
  SmallVector<Value> results;
  for (auto [index, value, axis] :
       llvm::enumerate(returnOp.getOperands(), outAxes)) {
    Value batched = batch.lookup(value);
    if (!axis) {
      if (batched) {
        returnOp.emitError() << "vmap of @" << f.getName() << ": result #"
                             << index
                             << " depends on the mapped arguments, but its "
                                "out axis is None";
        return fail();
      }
      results.push_back(value);
      continue;
    }
    Value front = batch.materialize(before, returnOp.getLoc(), value);
    int64_t rank = cast<RankedTensorType>(front.getType()).getRank();
    results.push_back(*axis == 0 ? front
                                 : before.create<TransposeOp>(
                                       returnOp.getLoc(), front,
                                       moveDim(rank, 0, *axis)));
  }
  returnOp->setOperands(results);
  batch.finishBlock(body);
  g.setType(FunctionType::get(g.getContext(), body.getArgumentTypes(),
                              ValueRange(results).getTypes()));
  return g;
}
