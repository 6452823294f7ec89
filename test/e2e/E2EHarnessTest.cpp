//===- E2EHarnessTest.cpp - The e2e harness's own decisions ---------------===//
//
// What the shared e2e harness decides without running a GPU: when a CUDA
// test runs, skips or fails (from the runtime's status codes and
// KILN_REQUIRE_CUDA), and that a program without a public function fails
// instead of passing having checked nothing.
//
//===----------------------------------------------------------------------===//

#include "E2EHarness.h"
#include "CudaAvailability.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

using kiln::test::CudaDecision;
using kiln::test::CudaVerdict;
using kiln::test::decideCudaTest;

namespace {

/// Sets KILN_REQUIRE_CUDA for the extent of a scope.
class RequireCudaScope {
public:
  explicit RequireCudaScope(const char *value) {
    if (const char *old = std::getenv("KILN_REQUIRE_CUDA"))
      saved = old;
    if (value)
      setenv("KILN_REQUIRE_CUDA", value, 1);
    else
      unsetenv("KILN_REQUIRE_CUDA");
  }
  ~RequireCudaScope() {
    if (saved)
      setenv("KILN_REQUIRE_CUDA", saved->c_str(), 1);
    else
      unsetenv("KILN_REQUIRE_CUDA");
  }

private:
  std::optional<std::string> saved;
};

bool machineHasCuda() {
  kiln_status_t status = kiln_device_check(KILN_DEVICE_CUDA);
  kiln_status_free(status);
  return status == nullptr;
}

} // namespace

TEST(CudaTestDecision, WorkingDeviceRuns) {
  EXPECT_EQ(decideCudaTest(KILN_STATUS_OK, "OK", false).verdict,
            CudaVerdict::Run);
  EXPECT_EQ(decideCudaTest(KILN_STATUS_OK, "OK", true).verdict,
            CudaVerdict::Run);
}

TEST(CudaTestDecision, NoDriverOrNoDeviceSkipsWithTheReason) {
  CudaDecision decision = decideCudaTest(KILN_STATUS_DEVICE_UNAVAILABLE,
                                         "no CUDA driver found (...)", false);
  EXPECT_EQ(decision.verdict, CudaVerdict::Skip);
  EXPECT_EQ(decision.reason, "no CUDA driver found (...)");
}

TEST(CudaTestDecision, RequiredCudaTurnsTheSkipIntoAFailure) {
  CudaDecision decision =
      decideCudaTest(KILN_STATUS_DEVICE_UNAVAILABLE,
                     "CUDA: the driver reports no CUDA device", true);
  EXPECT_EQ(decision.verdict, CudaVerdict::Fail);
  EXPECT_NE(decision.reason.find("KILN_REQUIRE_CUDA"), std::string::npos);
  EXPECT_NE(decision.reason.find("no CUDA device"), std::string::npos);
}

TEST(CudaTestDecision, AnyOtherFailureFails) {
  for (kiln_status_code_t code :
       {KILN_STATUS_DEVICE_ERROR, KILN_STATUS_INVALID_ARGUMENT,
        KILN_STATUS_OUT_OF_MEMORY, KILN_STATUS_LOAD_FAILED}) {
    SCOPED_TRACE("status code " + std::to_string(code));
    CudaDecision decision =
        decideCudaTest(code, "CUDA: cuInit failed: CUDA_ERROR_UNKNOWN", false);
    EXPECT_EQ(decision.verdict, CudaVerdict::Fail);
    EXPECT_NE(decision.reason.find("cuInit failed"), std::string::npos);
  }
}

TEST(CudaTestDecision, RequireCudaIsReadFromTheEnvironment) {
  {
    RequireCudaScope scope(nullptr);
    EXPECT_FALSE(kiln::test::cudaRequiredByEnvironment());
  }
  {
    RequireCudaScope scope("");
    EXPECT_FALSE(kiln::test::cudaRequiredByEnvironment());
  }
  {
    RequireCudaScope scope("0");
    EXPECT_FALSE(kiln::test::cudaRequiredByEnvironment());
  }
  {
    RequireCudaScope scope("1");
    EXPECT_TRUE(kiln::test::cudaRequiredByEnvironment());
  }
}

TEST(E2EHarness, CudaProgramFailsWhenCudaIsRequiredButAbsent) {
  if (machineHasCuda())
    GTEST_SKIP() << "this machine has a CUDA device";
  RequireCudaScope scope("1");
  EXPECT_FATAL_FAILURE(kiln::test::checkE2EProgram(KILN_E2E_INPUTS_DIR
                                                   "/one_function.mlir",
                                                   kiln::test::E2ETarget::Cuda),
                       "KILN_REQUIRE_CUDA is set but CUDA is unavailable");
}

TEST(E2EHarness, ProgramWithoutPublicFunctionFails) {
  EXPECT_FATAL_FAILURE(kiln::test::checkE2EProgram(
                              KILN_E2E_INPUTS_DIR "/no_public_function.mlir",
                              kiln::test::E2ETarget::Cpu),
                          "no_public_function.mlir has no public function");
}

TEST(E2EHarness, ProgramWithAPublicFunctionPasses) {
  kiln::test::checkE2EProgram(KILN_E2E_INPUTS_DIR "/one_function.mlir",
                              kiln::test::E2ETarget::Cpu);
}
