//===- DifferentialCheck.h - One program, every way of running it -*- C++ -*-===//
//
// The check kiln-program-fuzz runs on each program (README.md): round trips
// through text and .kfb, the reference evaluator against the kiln-fuse
// result and against native code under several option sets, and, with
// `gradients`, kiln-grad's gradient against float64 central differences
// and the compiled gradient against the evaluated one. Every disagreement
// is a Finding; the driver prints them, the reducer compares them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_FUZZ_DIFFERENTIALCHECK_H
#define KILN_TEST_FUZZ_DIFFERENTIALCHECK_H

#include "TensorCompare.h"

#include "kiln/Compiler/Driver.h"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace kiln::test {

/// What went wrong with one program; a check returns their OR.
enum Outcome : int {
  Mismatch = 1,
  CompileFailure = 2,
  Unsupported = 4,
  GeneratorError = 8,
};

/// One way of compiling the program, and how close its results must be.
struct CheckConfig {
  std::string name;
  CompileOptions options;
  Tolerance tolerance = kCpuTolerance;
  /// For the compiled gradient ("grad-O2" with the first configuration):
  /// backward sums add many terms in an order of the backend's choosing.
  Tolerance gradTolerance = {1e-5, 1e-6, 1e-9};
  /// How many times the program is called, each call's outputs checked:
  /// on the GPU three, so that the runtime's CUDA graph of the call is
  /// checked when captured (the second call) and launched again (the
  /// third).
  int calls = 1;
};

/// The six CPU configurations of README.md, "O2" first.
std::vector<CheckConfig> checkConfigurations();

/// The CUDA backend's, fused ("cuda") and not ("cuda-no-fusion"), with
/// the GPU's tolerance (kiln-program-fuzz --cuda).
std::vector<CheckConfig> cudaCheckConfigurations();

/// The CUDA backend's kernels on the host (--target=cuda-on-cpu), fused
/// and not, with the CUDA tolerances: the generated kernels checked where
/// there is no GPU.
std::vector<CheckConfig> cudaOnCpuCheckConfigurations();

/// One disagreement: `where` names the check ("O2", "kfb", "kiln-fuse",
/// "grad", "grad-O2", ...), `outcome` its kind.
struct Finding {
  std::string where;
  Outcome outcome;
  std::string detail;
};

class DifferentialCheck {
public:
  DifferentialCheck();

  /// The configurations native code is compiled under, the first also for
  /// the gradient; checkConfigurations() unless changed.
  std::vector<CheckConfig> configs;

  /// Moves one element of every native output a little past the tolerance
  /// (--perturb), to show that the comparison notices.
  bool perturb = false;
  /// Also check kiln-grad (--grad).
  bool gradients = false;
  /// The checks to run, by `where` name ("round-trip" for both round
  /// trips); all when empty. The reducer runs only those that failed.
  std::set<std::string> only;
  /// Called with every finding.
  std::function<void(const Finding &)> onFinding;
  /// Called before each native compile and call, with its `where` name, so
  /// that a crash can be attributed to the last one begun.
  std::function<void(const std::string &)> onBegin;
  /// Called with counts of what the gradient check compared: "programs",
  /// "elements" (compared with central differences), "kinks" (elements
  /// skipped where the differences of two step sizes disagree).
  std::function<void(const std::string &, unsigned)> onCount;

  /// Checks the @main of the module `text` on the inputs of `inputSeed`.
  int check(const std::string &text, uint64_t inputSeed);

private:
  bool runs(const std::string &where) const {
    return only.empty() || only.count(where);
  }
  int report(const std::string &where, Outcome outcome,
             const std::string &detail) {
    if (onFinding)
      onFinding({where, outcome, detail});
    return outcome;
  }
  int checkGradient(const std::string &text, uint64_t inputSeed);
};

} // namespace kiln::test

#endif // KILN_TEST_FUZZ_DIFFERENTIALCHECK_H
