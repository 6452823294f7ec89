//===- CudaOnCpuE2ETest.cpp - CUDA kernels on the host vs the evaluator --===//
//
// Every test/e2e/*.mlir program compiled with --target=cuda-on-cpu: the
// CUDA backend's program, its kernels (flash attention, tiled products,
// block reductions, grid-stride loops) run on the host, once per GPU
// thread (kiln-cuda-launches-on-cpu), and checked by the shared harness
// (test/support/E2EHarness.h) with the CUDA tolerances. The kernels are
// checked on every machine, with or without a GPU.
//
//===----------------------------------------------------------------------===//

#include "E2EHarness.h"
#include "E2EInputs.h"

#include <gtest/gtest.h>

namespace {

class CudaOnCpuEndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaOnCpuEndToEnd, KernelsMatchReferenceEvaluator) {
  kiln::test::checkE2EProgram(GetParam(), kiln::test::E2ETarget::CudaOnCpu);
}

INSTANTIATE_TEST_SUITE_P(
    Programs, CudaOnCpuEndToEnd,
    ::testing::ValuesIn(kiln::test::e2eProgramFiles(KILN_E2E_DIR)),
    kiln::test::e2eTestName);

} // namespace
