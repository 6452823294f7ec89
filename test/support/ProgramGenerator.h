//===- ProgramGenerator.h - Tests: random kiln programs from a seed -*- C++ -*-===//
//
// The generator behind kiln-program-fuzz (test/fuzz): one seed gives one
// well-typed kiln module whose public @main the reference evaluator and the
// compiled code must agree on, within the e2e tolerances, for the inputs of
// randomE2EInput. Values are kept finite and well conditioned by
// construction (test/fuzz/README.md), so that a mismatch points at the
// compiler rather than at rounding.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_SUPPORT_PROGRAMGENERATOR_H
#define KILN_TEST_SUPPORT_PROGRAMGENERATOR_H

#include <cstdint>
#include <string>

namespace kiln::test {

struct GeneratorOptions {
  /// How many ops the generator tries to add to @main (each may add a few
  /// helper ops, e.g. the `abs + 1` in front of a log).
  unsigned minOps = 4, maxOps = 24;
  /// The chance, in percent, that a program works on one shape of more than
  /// 65536 elements, so that the parallel and vectorized paths run.
  unsigned largeShapePercent = 8;
  /// The chance, in percent, that an argument has a dim of size 0, and
  /// that a slice is empty, so that zero-size values flow through the ops.
  unsigned zeroSizePercent = 5;
  /// Whether kiln.cond and kiln.for may appear.
  bool controlFlow = true;
};

/// The text of one kiln module with one public function, @main, built from
/// `seed` alone (the same seed and options always give the same text).
std::string generateProgram(uint64_t seed, const GeneratorOptions &options);

} // namespace kiln::test

#endif // KILN_TEST_SUPPORT_PROGRAMGENERATOR_H
