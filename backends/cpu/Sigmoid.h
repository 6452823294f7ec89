//===- Sigmoid.h - The f32 logistic function as kiln lowers it ------------===//
//
// kiln-cpu-math-approximation rewrites the f32 logistic function,
// 1 / (1 + exp(-x)), as a whole, its division one whose reciprocal LLVM may
// estimate (on vectors it does: a few ulps). kiln-cpu-vectorize-lanes asks
// the same question to leave such divisions scalar in short loops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_SIGMOID_H
#define KILN_BACKENDS_CPU_SIGMOID_H

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::kiln {

/// The f32 logistic function as kiln's lowering writes it,
/// 1 / (1 + exp(-x)) (either order of the addition): the negation, if
/// `division` is the root of one whose intermediate values have no other
/// users.
arith::NegFOp matchSigmoid(arith::DivFOp division);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_SIGMOID_H
