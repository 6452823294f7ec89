//===- CudaE2ETest.cpp - CUDA code against the reference evaluator --------===//
//
// Every test/e2e/*.mlir program compiled with --target=cuda (sm_80 PTX,
// JIT-compiled by the driver for the device present) and run on the GPU,
// checked by the shared harness (test/support/E2EHarness.h). Without a CUDA
// driver or device every test reports SKIP with the runtime's reason
// (a failure under KILN_REQUIRE_CUDA=1); any other device failure fails.
//
//===----------------------------------------------------------------------===//

#include "E2EHarness.h"
#include "E2EInputs.h"

#include <gtest/gtest.h>

namespace {

class CudaEndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaEndToEnd, GpuMatchesReferenceEvaluator) {
  kiln::test::checkE2EProgram(GetParam(), kiln::test::E2ETarget::Cuda);
}

INSTANTIATE_TEST_SUITE_P(
    Programs, CudaEndToEnd,
    ::testing::ValuesIn(kiln::test::e2eProgramFiles(KILN_E2E_DIR)),
    kiln::test::e2eTestName);

} // namespace
