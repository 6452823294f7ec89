//===- Derive.h - Deriving a function from a traced primal ------*- C++ -*-===//
//
// Private to the transforms of kiln/Grad.h and kiln/Vmap.h: each clones the
// traced primal's module, derives a function from it with a pass's entry
// point (buildGradient, buildJvp, buildVmap, ...) and inlines the result
// into the trace being recorded.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_GRAD_DERIVE_H
#define KILN_GRAD_DERIVE_H

#include "kiln/Tracer/SourceLoc.h"
#include "kiln/Tracer/Trace.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace kiln {
namespace detail {

/// `build` applied to the primal's function in a copy of its module held
/// by `holder`, the diagnostics it emits collected: on failure throws a
/// TraceError at `loc` with `failure` followed by them.
mlir::func::FuncOp
deriveInCopy(const TracedFunction &primal, const std::string &failure,
             llvm::function_ref<mlir::FailureOr<mlir::func::FuncOp>(
                 mlir::func::FuncOp)>
                 build,
             mlir::OwningOpRef<mlir::ModuleOp> &holder, SourceLoc loc);

} // namespace detail
} // namespace kiln

#endif // KILN_GRAD_DERIVE_H
