//===- Autodiff.h - Differentiation of kiln IR ------------------*- C++ -*-===//
//
// Derivatives are derived ahead of time, as new kiln functions placed next
// to the function they differentiate: there is no tape at run time, and the
// derived function compiles with the ordinary backend: reverse mode
// (buildGradient) and forward mode (buildJvp). The kiln-grad and kiln-jvp
// passes are thin wrappers around these entry points.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_AUTODIFF_H
#define KILN_PASSES_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace kiln {

/// The attribute marking a kiln.for or kiln.while whose enclosing loop's
/// backward pass recomputes it from its operands rather than storing what
/// it exports (checkpointing: buildGradient's checkpointEvery, and
/// kiln::checkpoint, which wraps a function in a one-trip loop marked so
/// inside another).
inline constexpr llvm::StringLiteral kRecomputeAttrName = "kiln.recompute";

/// Derives the vector-Jacobian product of `f(x...) -> (y...)` and inserts it
/// into f's module right after f:
///
///   `name(x..., dy...) -> (y..., dx_wrt...)`
///
/// with one cotangent `dy` per float result of `f` (integer and i1 results
/// take none) and one `dx` per index in `wrt`, in that order, each of the
/// type of its argument. An empty `wrt` means every float argument. `name`
/// defaults to `<f>_grad`. The derived function first runs the forward
/// computation, then the backward one, so its `y` results are f's.
///
/// Errors are emitted as diagnostics at the function or op at fault (a
/// `wrt` argument that is out of range or not a float tensor, a name that
/// is taken, an op on a differentiated path without a VJP rule), and the
/// module is then left unchanged.
///
/// `checkpointEvery` > 0 bounds the memory of loops: instead of storing
/// what every iteration of a kiln.for/kiln.while needs, the forward pass
/// stores the carried values every `checkpointEvery` iterations and the
/// backward pass recomputes each segment (one more forward run of the
/// loop). 0 stores every iteration.
FailureOr<func::FuncOp> buildGradient(func::FuncOp f,
                                      ArrayRef<unsigned> wrt = {},
                                      StringRef name = {},
                                      unsigned checkpointEvery = 0);

/// Like buildGradient for an `f` with exactly one result, a rank-0 float
/// (a loss): derives `name(x...) -> (y, dx_wrt...)` with the cotangent of
/// `y` fixed to 1.0. `name` defaults to `<f>_value_and_grad`.
FailureOr<func::FuncOp> buildValueAndGradient(func::FuncOp f,
                                              ArrayRef<unsigned> wrt = {},
                                              StringRef name = {},
                                              unsigned checkpointEvery = 0);

/// The two halves of a VJP split by splitVjp.
struct SplitVjp {
  /// `forward(x...) -> (y..., r...)`: the primal results and the residuals.
  func::FuncOp forward;
  /// `backward(x..., r..., dy...) -> (dx...)`.
  func::FuncOp backward;
  unsigned numResiduals = 0;
};

/// Splits `vjp(x..., dy...) -> (y..., dx...)`, derived by buildGradient
/// (its last `numCotangents` arguments the cotangents, its first
/// `numOutputs` results the primal ones), into a forward and a backward
/// function inserted after it, for callers that run the two passes apart
/// without running the forward computation twice. The forward function
/// holds the ops the primal results need; the backward function all
/// others, reading the forward ops' results it needs as residuals r
/// (operand-free ops such as constants are recomputed instead). `vjp`
/// itself is left in place. Fails with a diagnostic on a body of several
/// blocks, primal results that depend on a cotangent, a residual that is
/// not a tensor of static shape (a kiln.while's stack), or a taken name.
FailureOr<SplitVjp> splitVjp(func::FuncOp vjp, unsigned numOutputs,
                             unsigned numCotangents, StringRef forwardName,
                             StringRef backwardName);

/// Derives the Jacobian-vector product (forward mode) of `f(x...) ->
/// (y...)` and inserts it into f's module right after f:
///
///   `name(x..., tx_wrt...) -> (y..., ty...)`
///
/// with one tangent `tx` per index in `wrt`, each of the type of its
/// argument (an empty `wrt` means every float argument), and one tangent
/// `ty` per float result of `f` (integer and i1 results have none): ty =
/// J tx. `name` defaults to `<f>_jvp`. The tangents are computed next to
/// the values they differentiate, so a kiln.while carries its tangents
/// along and no intermediate value is stored.
///
/// Errors are emitted as diagnostics at the function or op at fault (as for
/// buildGradient, with an op without a JVP rule on a differentiated path),
/// and the module is then left unchanged.
FailureOr<func::FuncOp> buildJvp(func::FuncOp f, ArrayRef<unsigned> wrt = {},
                                 StringRef name = {});

/// Whether ops named `name` have an entry in the VJP rules table, either a
/// derivative or an explicit statement that they carry no gradient
/// (constants, iota, comparisons).
bool hasVjpRule(OperationName name);

/// The same for the JVP rules table (forward mode).
bool hasJvpRule(OperationName name);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_AUTODIFF_H
