//===- TargetFunctions.h - The functions a parallel pass rewrites -*- C++ -*-===//
//
// kiln-data-parallel and kiln-zero take the same `function` option: the
// function named there, or without it every public function with a body.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PARALLEL_TARGETFUNCTIONS_H
#define KILN_PASSES_PARALLEL_TARGETFUNCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace kiln {

/// The function `name` of `module`, or every public function with a body
/// when `name` is empty; failure, reported at the module as `pass: there is
/// no function body named @name`, when there is no such function.
inline FailureOr<SmallVector<func::FuncOp>>
targetFunctions(ModuleOp module, StringRef name, StringRef pass) {
  SmallVector<func::FuncOp> targets;
  if (!name.empty()) {
    auto f = module.lookupSymbol<func::FuncOp>(name);
    if (!f || f.isDeclaration())
      return module.emitError()
             << pass << ": there is no function body named @" << name;
    targets.push_back(f);
    return targets;
  }
  for (auto f : module.getOps<func::FuncOp>())
    if (f.isPublic() && !f.isDeclaration())
      targets.push_back(f);
  return targets;
}

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PARALLEL_TARGETFUNCTIONS_H
