//===- JvpFunction.cpp - Derive the JVP function of a kiln function -------===//
//
// buildJvp derives, from `f(x...) -> (y...)`, a new function that runs f's
// computation with the tangent computation interleaved (forward mode):
//
//  1. Check the request (Derivation.h): f has a single-block body, the new
//     name is free, and every `wrt` index names a float tensor argument
//     (all float arguments when `wrt` is empty).
//  2. Clone f under the new name, right after f, with its calls inlined.
//  3. Add one tangent argument `t_x` per `wrt` argument, of its type.
//  4. Run the activity analysis in forward mode from the `wrt` arguments:
//     this is where an op without a JVP rule on a differentiated path is
//     rejected.
//  5. Run the forward sweep over the body (TangentSweep.cpp), seeded with
//     the tangent arguments.
//  6. Return f's results followed by the tangent of each float result
//     (zeros where no tangent reached it), named after f's (`t_<name>`).
//
// If any step fails the clone is erased, so the module is left as it was.
//
//===----------------------------------------------------------------------===//

#include "common/Derivation.h"
#include "Tangents.h"

#include "kiln/Passes/Autodiff.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

FailureOr<func::FuncOp> mlir::kiln::buildJvp(func::FuncOp f,
                                             ArrayRef<unsigned> wrt,
                                             StringRef requestedName) {
  std::string name = requestedName.empty() ? (f.getName() + "_jvp").str()
                                           : requestedName.str();
  // 1. Check.
  SmallVector<unsigned> arguments;
  if (failed(checkDerivationRequest(f, wrt, name, arguments)))
    return failure();

  // 2. Clone.
  MLIRContext *context = f.getContext();
  FailureOr<func::FuncOp> clone = cloneForDerivation(f, name);
  if (failed(clone))
    return failure();
  func::FuncOp g = *clone;
  Block &body = g.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  Location loc = returnOp.getLoc();

  // 3. Tangent arguments.
  TangentMap tangents;
  SmallVector<Value> wrtArgs;
  for (unsigned index : arguments) {
    Value primal = g.getArgument(index);
    wrtArgs.push_back(primal);
    unsigned position = g.getNumArguments();
    g.insertArgument(position, primal.getType(),
                     derivedNameAttrs(context, f.getArgAttrDict(index), "t_"),
                     loc);
    tangents[primal] = g.getArgument(position);
  }

  // 4. Activity.
  Activity activity(Activity::Mode::Forward);
  if (failed(activity.propagate(body, wrtArgs))) {
    g.erase();
    return failure();
  }

  // 5. Forward sweep.
  TangentSweep sweep(activity);
  if (failed(sweep.sweepBlock(body, tangents))) {
    g.erase();
    return failure();
  }

  // 6. Results.
  OpBuilder builder(returnOp);
  SmallVector<Value> results(returnOp.getOperands());
  unsigned numResults = g.getNumResults();
  SmallVector<unsigned> floatResults;
  for (auto [index, value] : llvm::enumerate(returnOp.getOperands())) {
    if (!isDifferentiableType(value.getType()))
      continue;
    floatResults.push_back(index);
    Value tangent = tangents.lookup(value);
    results.push_back(tangent ? tangent
                              : buildZeros(builder, loc, value.getType()));
  }
  builder.create<func::ReturnOp>(loc, results);
  returnOp.erase();
  for (auto [position, index] : llvm::enumerate(floatResults))
    g.insertResult(numResults + position, g.getResultTypes()[index],
                   derivedNameAttrs(context, f.getResultAttrDict(index), "t_"));
  return g;
}
