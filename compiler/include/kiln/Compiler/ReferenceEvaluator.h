//===- ReferenceEvaluator.h - Interpreter for kiln IR -----------*- C++ -*-===//
//
// The reference evaluator runs a func.func written in the kiln dialect on
// host tensors. It shares no code with the compilation pipeline, so it can
// serve as the oracle that compiled code is checked against: end-to-end tests
// compare native results with it, and gradient checks use it to evaluate
// functions at perturbed points.
//
// Numerics follow the kiln semantics exactly: every float operation is done
// in double and rounded once to the element type; reductions and matmul
// accumulate sequentially in row-major order with each partial result
// rounded, as the generated loops do; integer arithmetic wraps.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_REFERENCEEVALUATOR_H
#define KILN_COMPILER_REFERENCEEVALUATOR_H

#include "kiln/Compiler/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

// Under `using namespace mlir`, `kiln` is ambiguous with the dialect's
// namespace mlir::kiln; such code spells this one `::kiln`.
namespace kiln {

struct EvaluatorOptions {
  /// Upper bound on the iterations of one execution of a kiln.while or
  /// kiln.for. Going past it is an error, so that a test of a program that
  /// does not terminate fails instead of hanging. An iteration costs about a
  /// microsecond even for a trivial body, so the default trips in seconds.
  uint64_t maxLoopIterations = 10'000'000;

  /// Upper bound on the depth of nested func.call, so that unbounded
  /// recursion is reported instead of overflowing the stack.
  unsigned maxCallDepth = 64;
};

/// Runs `func` on `inputs`, which must match its argument types exactly, and
/// returns the values of its func.return.
///
/// `func` is verified first. Any problem (an input of the wrong count, shape
/// or dtype; an op the evaluator does not know; integer division by zero; a
/// loop over the iteration limit) is returned as an error whose message
/// names the op and its location, e.g.
/// `division by zero in kiln.div at model.mlir:12:8`.
///
/// Where the kiln spec leaves a choice, the evaluator does this:
///  - float-to-integer casts truncate toward zero and saturate at the limits
///    of the integer type, with NaN giving 0 (llvm.fptosi.sat);
///  - float max/min (and relu, reduce_max) propagate NaN and order -0 below
///    +0, like IEEE 754 maximum/minimum;
///  - integer division of the most negative value by -1 wraps to the most
///    negative value;
///  - reduce_max over zero elements gives -inf (floats) or the most negative
///    integer, reduce_mean over zero elements gives NaN;
///  - integer rem by zero gives the dividend and rem by -1 gives 0 (as
///    KilnOps.td defines; unlike division, there is no error);
///  - argmax/argmin scan from index 0, so ties and NaN (the extreme value)
///    give the first index, or the last with select_last_index; cumsum
///    rounds (or wraps) after each addition, in the op's order;
///  - round is C's nearbyint in the default rounding mode (ties to even);
///  - func.call is evaluated by running the callee, up to maxCallDepth.
llvm::Expected<std::vector<HostTensor>>
evaluate(mlir::func::FuncOp func, llvm::ArrayRef<HostTensor> inputs,
         const EvaluatorOptions &options = {});

/// Runs `func` as an SPMD program on `perRankInputs.size()` simulated ranks
/// in this process, rank r on perRankInputs[r], and returns each rank's
/// results (outer index: the rank). Every collective op (all_reduce,
/// all_gather, ..., the start forms, kiln.rank) exchanges tensors between
/// the simulated ranks with exactly the semantics of KilnOps.td: float sums
/// add the group's operands in group order, each partial sum rounded. The
/// number of ranks must be the one the collectives' replica groups span.
///
/// Each rank runs on a thread of its own. Ranks that disagree - one reaches
/// a collective another does not, or their k-th collectives differ in kind,
/// attributes or operand type - make every rank fail with an error naming
/// both ranks and the op, as does an error on any one rank (the others
/// report which rank failed); nothing hangs.
///
/// evaluate() runs a program with collectives as a run of one rank: groups
/// must then be [[0]].
llvm::Expected<std::vector<std::vector<HostTensor>>>
evaluateSpmd(mlir::func::FuncOp func,
             llvm::ArrayRef<std::vector<HostTensor>> perRankInputs,
             const EvaluatorOptions &options = {});

} // namespace kiln

#endif // KILN_COMPILER_REFERENCEEVALUATOR_H
