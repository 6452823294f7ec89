//===- Wrt.cpp - The arguments a derivative is taken with respect to ------===//
//
// buildGradient, buildValueAndGradient and buildJvp check a request the
// same way: the function can be derived from (common/Derivation.h), and
// every `wrt` index names a distinct float tensor argument.
//
//===----------------------------------------------------------------------===//

#include "Differentiator.h"
#include "common/Derivation.h"

#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

LogicalResult
autodiff::checkDerivationRequest(func::FuncOp f, ArrayRef<unsigned> wrt,
                                 StringRef name,
                                 SmallVectorImpl<unsigned> &arguments) {
  if (failed(checkDerivable(f, name, "differentiate")))
    return failure();
  unsigned numArgs = f.getNumArguments();
  if (wrt.empty()) {
    for (unsigned i = 0; i < numArgs; ++i)
      if (isDifferentiableType(f.getArgumentTypes()[i]))
        arguments.push_back(i);
    if (arguments.empty())
      return f.emitError() << "cannot differentiate @" << f.getName()
                           << ": it has no float argument";
  } else {
    llvm::SmallSet<unsigned, 8> seen;
    for (unsigned index : wrt) {
      if (index >= numArgs)
        return f.emitError() << "cannot differentiate @" << f.getName()
                             << " with respect to argument #" << index
                             << ": it has " << numArgs << " arguments";
      if (!seen.insert(index).second)
        return f.emitError() << "argument #" << index
                             << " is listed twice in wrt";
      Type type = f.getArgumentTypes()[index];
      if (!isDifferentiableType(type))
        return f.emitError()
               << "cannot differentiate @" << f.getName()
               << " with respect to argument #" << index << " of type "
               << type << ": only float tensors have gradients";
      arguments.push_back(index);
    }
  }
  return success();
}

