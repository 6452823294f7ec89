//===- Lowerings.h - kiln to linalg lowering pieces -------------*- C++ -*-===//
//
// The kiln-to-linalg lowering is split by kind of op: elementwise math,
// structural ops (shapes, reductions, contractions, gathers) and control
// flow. Each file contributes its patterns through one of these functions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_LOWERINGS_H
#define KILN_BACKENDS_COMMON_LOWERINGS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace kiln {

void populateElementwiseLowerings(RewritePatternSet &patterns);
void populateStructuralLowerings(RewritePatternSet &patterns);
void populateControlFlowLowerings(RewritePatternSet &patterns);

/// Builds `linalg.generic` over `inputs` (all of `resultType`'s shape,
/// identity maps, parallel iterators) whose scalar body is `body`.
Value buildElementwise(
    OpBuilder &builder, Location loc, RankedTensorType resultType,
    ValueRange inputs,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// A scalar constant of `type` (float or integer) with value `value`.
Value scalarConstant(OpBuilder &builder, Location loc, Type type, double value);

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_COMMON_LOWERINGS_H
