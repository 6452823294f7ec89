//===- Gradient.cpp - Derive the gradient function of a kiln function -----===//
//
// buildGradient and buildValueAndGradient derive, from `f(x...) -> (y...)`,
// a new function that runs f's forward computation and then its reverse
// sweep:
//
//  1. Check the request: f has a single-block body, the new name is free,
//     every `wrt` index names a float tensor argument (all float arguments
//     when `wrt` is empty), and for value-and-grad f returns one rank-0
//     float.
//  2. Clone f under the new name, right after f. The clone's body is the
//     forward computation; backward code is added to it in place, before
//     its func.return, so the rules can read every forward value directly.
//     Its func.calls are replaced by the callees' bodies (inlineCalls), so
//     that the rules see every op. With checkpointing, its loops are split
//     into segments first (Checkpointing.cpp).
//  3. Add one cotangent argument `dy` per float result (gradient mode), or
//     build the constant 1.0 as the only cotangent (value-and-grad mode).
//  4. Run the activity analysis from the `wrt` arguments. This is where an
//     op without a VJP rule on a differentiated path is rejected.
//  5. Run the reverse sweep over the body, seeded with the cotangents.
//  6. Return f's results followed by the adjoints of the `wrt` arguments
//     (zeros for an argument no gradient reached), and name the new
//     arguments and results after f's (`d_<name>`).
//
// If any step fails the clone is erased, so the module is left as it was.
//
//===----------------------------------------------------------------------===//

#include "common/Derivation.h"
#include "Differentiator.h"

#include "kiln/Passes/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

namespace {
enum class Mode { Gradient, ValueAndGradient };
} // namespace

/// `d_<name>` if `attrs` names the value, else an empty dictionary.
static DictionaryAttr cotangentAttrs(MLIRContext *context,
                                     DictionaryAttr attrs) {
  auto name = attrs ? attrs.getAs<StringAttr>(kNameAttr) : StringAttr();
  if (!name)
    return DictionaryAttr::get(context);
  NamedAttribute named(StringAttr::get(context, kNameAttr),
                       StringAttr::get(context, "d_" + name.getValue()));
  return DictionaryAttr::get(context, {named});
}

/// Step 1, the part particular to reverse mode.
static LogicalResult checkRequest(func::FuncOp f, ArrayRef<unsigned> wrt,
                                  StringRef name, Mode mode,
                                  SmallVectorImpl<unsigned> &arguments) {
  if (failed(checkDerivationRequest(f, wrt, name, arguments)))
    return failure();
  if (mode == Mode::ValueAndGradient) {
    TypeRange results = f.getResultTypes();
    auto type = results.size() == 1
                    ? dyn_cast<RankedTensorType>(results.front())
                    : RankedTensorType();
    if (!type || type.getRank() != 0 || !isDifferentiableType(type))
      return f.emitError()
             << "value-and-grad needs @" << f.getName()
             << " to return one rank-0 float tensor (a loss); use the "
                "gradient form for other signatures";
  }
  return success();
}

static FailureOr<func::FuncOp> derive(func::FuncOp f, ArrayRef<unsigned> wrt,
                                      StringRef requestedName, Mode mode,
                                      unsigned checkpointEvery) {
  std::string name = requestedName.str();
  if (name.empty())
    name = (f.getName() + (mode == Mode::Gradient ? "_grad" : "_value_and_grad"))
               .str();

  // 1. Check.
  SmallVector<unsigned> arguments;
  if (failed(checkRequest(f, wrt, name, mode, arguments)))
    return failure();

  // 2. Clone.
  MLIRContext *context = f.getContext();
  FailureOr<func::FuncOp> clone = cloneForDerivation(f, name);
  if (failed(clone))
    return failure();
  func::FuncOp g = *clone;
  auto fail = [&]() -> FailureOr<func::FuncOp> {
    g.erase();
    return failure();
  };
  Block &body = g.getBody().front();
  splitLoopsForCheckpointing(body, checkpointEvery);
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  Location loc = returnOp.getLoc();
  OpBuilder builder(returnOp);

  // 3. Cotangents.
  unsigned numResults = g.getNumResults();
  SmallVector<Value> seeds(numResults);
  if (mode == Mode::Gradient) {
    for (unsigned i = 0; i < numResults; ++i) {
      Type type = g.getResultTypes()[i];
      if (!isDifferentiableType(type))
        continue;
      unsigned index = g.getNumArguments();
      g.insertArgument(index, type,
                       derivedNameAttrs(context, f.getResultAttrDict(i), "d_"), loc);
      seeds[i] = g.getArgument(index);
    }
  } else {
    seeds[0] = buildSplat(builder, loc, g.getResultTypes()[0], 1.0);
  }

  // 4. Activity.
  Activity activity;
  SmallVector<Value> wrtArgs;
  for (unsigned index : arguments)
    wrtArgs.push_back(g.getArgument(index));
  if (failed(activity.propagate(body, wrtArgs)))
    return fail();

  // 5. Reverse sweep.
  Differentiator differentiator(activity);
  SmallVector<Value> argAdjoints;
  if (failed(differentiator.differentiateBlock(body, builder, seeds,
                                               argAdjoints)))
    return fail();

  // 6. Results.
  SmallVector<Value> results(returnOp.getOperands());
  for (unsigned index : arguments) {
    Value adjoint = argAdjoints[index];
    results.push_back(adjoint ? adjoint
                              : buildZeros(builder, loc,
                                           g.getArgument(index).getType()));
  }
  builder.create<func::ReturnOp>(loc, results);
  returnOp.erase();
  for (auto [position, index] : llvm::enumerate(arguments))
    g.insertResult(numResults + position, g.getArgument(index).getType(),
                   derivedNameAttrs(context, f.getArgAttrDict(index), "d_"));
  return g;
}

FailureOr<func::FuncOp> mlir::kiln::buildGradient(func::FuncOp f,
                                                  ArrayRef<unsigned> wrt,
                                                  StringRef name,
                                                  unsigned checkpointEvery) {
  return derive(f, wrt, name, Mode::Gradient, checkpointEvery);
}

FailureOr<func::FuncOp>
mlir::kiln::buildValueAndGradient(func::FuncOp f, ArrayRef<unsigned> wrt,
                                  StringRef name, unsigned checkpointEvery) {
  return derive(f, wrt, name, Mode::ValueAndGradient, checkpointEvery);
}
