//===- Batching.h - vmap: batching a kiln function --------------*- C++ -*-===//
//
// buildVmap derives, from a function of one example, the function of a
// batch of them, as new kiln IR next to it (JAX's vmap as a program
// transformation). The kiln-vmap pass is a thin wrapper around it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_BATCHING_H
#define KILN_PASSES_BATCHING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir {
namespace kiln {

/// Derives the batched form of `f(x...) -> (y...)` and inserts it into f's
/// module right after f: argument i gets a batch dim of `size` at
/// `inAxes[i]` (std::nullopt: the argument is shared by every lane, as
/// is), and result j has its batch dim at `outAxes[j]` (std::nullopt: the
/// result must not depend on a batched argument, and is returned as is).
/// Lane b of the batched function computes f on lane b of its arguments.
/// `name` defaults to `<f>_vmap`.
///
/// Every op reading a batched value gets its batched form: elementwise ops
/// broadcast, products become larger or batched products, reductions and
/// shapes shift their dims, gathers and scatters offset each lane's
/// indices, a kiln.cond on a batched predicate runs both branches and
/// selects, and a kiln.while on a batched predicate runs until every lane
/// is done with finished lanes frozen.
///
/// Errors are diagnostics at the function or op at fault (axes out of
/// range or of the wrong count, a batched result with no out axis, a
/// derived while gradient whose trip count differs between lanes), and
/// the module is then left unchanged.
FailureOr<func::FuncOp> buildVmap(func::FuncOp f,
                                  ArrayRef<std::optional<int64_t>> inAxes,
                                  ArrayRef<std::optional<int64_t>> outAxes,
                                  int64_t size, StringRef name = {});

/// Whether ops named `name` have a batching rule.
bool hasBatchingRule(OperationName name);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_BATCHING_H
