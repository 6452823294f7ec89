//===- GradientCheck.h - Finite-difference checks of derived gradients ----===//
//
// A GradientSuite holds one module of test functions: it parses the source,
// derives the requested gradient functions (possibly of each other, for
// higher-order checks), compiles the whole module to native code once and
// loads it with the runtime. checkGradient then compares, on random inputs,
// the derived vector-Jacobian product, evaluated both by the reference
// evaluator and by the native code, with central finite differences of the
// original function evaluated by the reference evaluator.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_AUTODIFF_GRADIENTCHECK_H
#define KILN_TEST_UNIT_AUTODIFF_GRADIENTCHECK_H

#include "kiln/Compiler/HostTensor.h"
#include "NativeModule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <memory>
#include <string>
#include <vector>


namespace kiln {
namespace autodiff_test {

/// One gradient function to derive: `derived` from `function` with respect
/// to `wrt` (empty: every float argument).
struct Derivation {
  std::string function;
  std::string derived;
  std::vector<unsigned> wrt;
  bool valueAndGrad = false;
  /// buildGradient's checkpointEvery (0: store every loop iteration).
  unsigned checkpointEvery = 0;
  /// Forward mode: `derived` is buildJvp's function instead.
  bool forward = false;
  /// Batching: with a batch size, `derived` is buildVmap's function with
  /// `inAxes` (-1: not mapped) and every result at axis 0 instead.
  int64_t batch = 0;
  std::vector<int64_t> inAxes = {};
};

/// The range random values of one argument are drawn from (integers:
/// uniformly in [low, high]; i1: alternating with the seed, so that both
/// branches of a cond on an i1 argument are taken).
struct Domain {
  double low = -2.0;
  double high = 2.0;
};

class GradientSuite {
public:
  GradientSuite(const std::string &source,
                const std::vector<Derivation> &derivations);
  ~GradientSuite();

  /// Empty when parsing, deriving, compiling and loading all succeeded.
  const std::string &error() const { return failure; }

  mlir::func::FuncOp lookup(const std::string &name);

  /// Runs `name` with the reference evaluator; failures are test failures
  /// and give an empty vector.
  std::vector<HostTensor> evaluate(const std::string &name,
                                   const std::vector<HostTensor> &inputs);

  /// Runs `name`'s native code; failures are test failures and give an
  /// empty vector.
  std::vector<HostTensor> runNative(const std::string &name,
                                    const std::vector<HostTensor> &inputs);

  /// The module after derivation (before lowering), for printing.
  mlir::ModuleOp getModule() { return *module; }

private:
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<kiln::test::NativeModule> native;
  std::string failure;
};

/// What checkGradient compares and how.
struct GradientCheck {
  /// The function differentiated and the gradient function derived from
  /// it (gradient form: inputs (x..., dy...), results (y..., dx...)).
  std::string function;
  std::string gradient;
  /// The argument indices the gradient was derived for, in order.
  std::vector<unsigned> wrt;
  /// Ranges of the random arguments (default [-2, 2]).
  std::map<unsigned, Domain> domains;
  /// Central-difference step and the largest accepted error, where the
  /// error of a derivative d against its finite difference fd is
  /// |d - fd| / max(1, |fd|) (relative, absolute below 1).
  double step = 1e-6;
  double tolerance = 1e-6;
  unsigned seeds = 4;
};

/// The largest errors seen by one checkGradient call.
struct GradientErrors {
  double reference = 0.0; ///< evaluator-computed gradient vs. FD
  double native = 0.0;    ///< native gradient vs. FD
  double nativeVsReference = 0.0;
};

/// Runs the check; mismatches are reported as gtest failures.
GradientErrors checkGradient(GradientSuite &suite, const GradientCheck &check);

/// What checkJvp compares: the JVP function `jvp` of `function` (inputs
/// (x..., t_wrt...), results (y..., ty...)), evaluated by the reference
/// evaluator and by native code, against the central difference of
/// `function` along the tangent, (f(x + h t) - f(x - h t)) / 2h, and, when
/// `gradient` names the VJP function of `function` with respect to the
/// same arguments, against reverse mode: <J t, w> = <t, J^T w> for random
/// cotangents w.
struct JvpCheck {
  std::string function;
  std::string jvp;
  std::string gradient;
  std::vector<unsigned> wrt;
  std::map<unsigned, Domain> domains;
  double step = 1e-6;
  /// The largest accepted error of an element of J t against its finite
  /// difference (as in GradientCheck), and of <J t, w> against
  /// <t, J^T w>, relative to max(1, |<t, J^T w>|).
  double tolerance = 1e-6;
  unsigned seeds = 4;
};

/// The largest errors seen by one checkJvp call.
struct JvpErrors {
  double finiteDifference = 0.0; ///< evaluator-computed J t vs. FD
  double adjoint = 0.0;          ///< <J t, w> vs. <t, J^T w>
  double nativeVsReference = 0.0;
};

JvpErrors checkJvp(GradientSuite &suite, const JvpCheck &check);

/// Prints one line with the errors.
void reportErrors(const std::string &what, const JvpErrors &errors);

/// Random tensor of `type` with values in `domain`.
HostTensor randomTensor(mlir::RankedTensorType type, const Domain &domain,
                        unsigned seed, unsigned salt);

/// Prints one line with the errors and records them as test properties.
void reportErrors(const std::string &what, const GradientErrors &errors);

/// The indices of `f`'s float arguments.
std::vector<unsigned> floatArguments(mlir::func::FuncOp f);

/// A test function, differentiated with respect to all its float arguments
/// into `<name>_grad`.
struct FunctionCase {
  std::string name;
  /// One func.func named @<name> (and possibly helpers it does not call).
  std::string source;
  std::map<unsigned, Domain> domains = {};
  double step = 1e-6;
  double tolerance = 1e-6;
  unsigned seeds = 4;
};

/// gtest prints parameters on failure; the name is what identifies a case.
void PrintTo(const FunctionCase &c, std::ostream *os);

/// A suite of all `cases` in one module, with `<name>_grad`,
/// `<name>_jvp`, `<name>_vmap` (every argument mapped, 3 lanes) and, for a
/// function of several arguments, `<name>_vmap_first` (only the first
/// mapped) derived for each.
std::unique_ptr<GradientSuite>
buildCaseSuite(const std::vector<FunctionCase> &cases);

/// What checkVmap compares: the batched function `vmap` of `function`
/// (arguments mapped at axis 0 where `mapped`, results at axis 0), run on
/// random lanes by the reference evaluator and by native code, against
/// `function` run on each lane by the reference evaluator.
struct VmapCheck {
  std::string function;
  std::string vmap;
  int64_t batch = 3;
  std::vector<bool> mapped;
  std::map<unsigned, Domain> domains;
  unsigned seeds = 2;
};

/// The largest errors seen by one checkVmap call, |a - b| / max(1, |b|).
struct VmapErrors {
  double reference = 0.0; ///< the evaluator's batched run vs. per lane
  double native = 0.0;    ///< native batched run vs. per lane
};

VmapErrors checkVmap(GradientSuite &suite, const VmapCheck &check);

/// checkGradient for one case of `suite`, with its errors reported.
void checkCase(GradientSuite &suite, const FunctionCase &c);

/// checkJvp for one case of `suite` (`<name>_jvp` against finite
/// differences and against `<name>_grad`), with its errors reported.
void checkJvpCase(GradientSuite &suite, const FunctionCase &c);

/// checkVmap for one case of `suite`: `<name>_vmap` and `<name>_vmap_first`
/// against the function run lane by lane.
void checkVmapCase(GradientSuite &suite, const FunctionCase &c);

/// A suite of all `cases` with `<name>_grad` and its batched form
/// `<name>_grad_vmap` (3 lanes, the gradient's arguments, then the
/// cotangent, mapped at `gradientInAxes`, -1 for shared): per-example
/// gradients.
std::unique_ptr<GradientSuite>
buildGradientVmapSuite(const std::vector<FunctionCase> &cases,
                       const std::vector<int64_t> &gradientInAxes);

/// checkVmap of `<name>_grad_vmap` against `<name>_grad` run lane by lane.
void checkGradientVmapCase(GradientSuite &suite, const FunctionCase &c,
                           const std::vector<int64_t> &gradientInAxes);

} // namespace autodiff_test
} // namespace kiln

#endif // KILN_TEST_UNIT_AUTODIFF_GRADIENTCHECK_H
