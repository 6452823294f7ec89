//===- CudaAvailability.h - Tests: run or skip without CUDA -*- C++ -*-===//
//
// Tests that need a CUDA device skip only where the machine has no CUDA
// driver or no device (KILN_STATUS_DEVICE_UNAVAILABLE from the runtime). A
// device that is there but cannot be opened fails the test, and
// KILN_REQUIRE_CUDA=1 turns the skip into a failure, for machines that are
// meant to have a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_SUPPORT_CUDAAVAILABILITY_H
#define KILN_TEST_SUPPORT_CUDAAVAILABILITY_H

#include "kiln/runtime.h"

#include <string>

namespace kiln::test {

/// What a test that needs a CUDA device does.
enum class CudaVerdict { Run, Skip, Fail };

struct CudaDecision {
  CudaVerdict verdict;
  /// Why the test skips or fails (the runtime's message); empty for Run.
  std::string reason;
};

/// Decides from the result of kiln_device_check(KILN_DEVICE_CUDA):
/// success runs, KILN_STATUS_DEVICE_UNAVAILABLE skips (fails when
/// `requireCuda`), any other code fails.
CudaDecision decideCudaTest(kiln_status_code_t code, const std::string &message,
                            bool requireCuda);

/// Whether the environment asks for CUDA: KILN_REQUIRE_CUDA set and
/// neither empty nor "0".
bool cudaRequiredByEnvironment();

/// Checks this machine's CUDA device and decides with the environment.
CudaDecision checkCudaForTest();

} // namespace kiln::test

#endif // KILN_TEST_SUPPORT_CUDAAVAILABILITY_H
