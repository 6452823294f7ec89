//===- TensorCompare.h - Tests: compiled results against the evaluator -*- C++ -*-===//
//
// How the end-to-end checks (E2EHarness.cpp, the SPMD checker) compare an
// output of compiled code with the reference evaluator's.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_SUPPORT_TENSORCOMPARE_H
#define KILN_TEST_SUPPORT_TENSORCOMPARE_H

#include "kiln/Compiler/HostTensor.h"

#include <string>

namespace kiln::test {

/// How close a target's results must be to the evaluator's: f32 within
/// atol + rtol * |expected|, the other float types within `f64Tol`
/// (absolute and relative), integers and i1 exactly.
struct Tolerance {
  double f32Rtol, f32Atol, f64Tol;
  /// f16 and bf16 results compare bit for bit unless this is set: then
  /// within f32Atol + halfRtol * |expected|, for a library that sums in
  /// another order and so may round the sum to the other neighbour.
  double halfRtol = 0;
  /// And f16 and bf16 results may also be this many steps of their type
  /// (units in the last place of the expected value) apart: a target that
  /// sums a reduction's f32 terms in another order may round the sum to a
  /// neighbour, whatever the magnitude.
  unsigned halfSteps = 0;
};

/// The distance between `value` and the next f16 (`bf16` false) or bf16
/// value away from zero: the step of its binade, that of the smallest
/// normal binade for subnormals and zero.
double halfStep(double value, bool bf16);

/// The CPU backend's: summation order and vectorized math differ from the
/// evaluator's in the last bits of f32.
constexpr Tolerance kCpuTolerance = {1e-5, 1e-6, 1e-12};

/// The CUDA backend's: GPU math (libdevice, fused multiply-add) differs
/// from the host's in the last bits, so f32 gets a wider tolerance than on
/// the CPU; and a block reduction (kiln-cuda-block-reductions) sums each
/// output's f32 terms across the block's threads, in another order than the
/// evaluator, so an f16/bf16 result may round to a neighbour: one step.
constexpr Tolerance kCudaTolerance = {1e-4, 1e-5, 1e-11, /*halfRtol=*/0,
                                      /*halfSteps=*/1};

/// Compares one output; returns a description of the first mismatch, or
/// "" if there is none. A null `tolerance` asks for identical values (NaN
/// equal to NaN). `what` names the results in the message.
std::string compareTensors(const HostTensor &expected,
                           const HostTensor &actual, const std::string &what,
                           const Tolerance *tolerance);

} // namespace kiln::test

#endif // KILN_TEST_SUPPORT_TENSORCOMPARE_H
