//===- E2EHarnessTest.cpp - The e2e harness's own decisions ---------------===//
//
// What the shared e2e harness decides without running a GPU: when a CUDA
// test runs, skips or fails (from the runtime's status codes and
// KILN_REQUIRE_CUDA), and that a program without a public function fails
// instead of passing having checked nothing, and how far apart compared
// f16/bf16 results may be.
//
//===----------------------------------------------------------------------===//

#include "E2EHarness.h"
#include "CudaAvailability.h"
#include "TensorCompare.h"

#include "kiln/Compiler/HostTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

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

// A tolerance of half steps (the CUDA target's, for its block reductions'
// order of summation) lets an f16 or bf16 result be that many steps of its
// own type away, at any magnitude, and no further.
TEST(TensorCompare, HalfStepsAllowNeighboursOfTheirOwnType) {
  using kiln::HostTensor;
  using kiln::test::compareTensors;
  using kiln::test::Tolerance;
  mlir::MLIRContext context;
  mlir::Builder b(&context);
  EXPECT_EQ(kiln::test::halfStep(1.0, /*bf16=*/false), 0x1p-10);
  EXPECT_EQ(kiln::test::halfStep(-15.29, /*bf16=*/false), 0x1p-7);
  EXPECT_EQ(kiln::test::halfStep(0.0, /*bf16=*/false), 0x1p-24);
  EXPECT_EQ(kiln::test::halfStep(3.0, /*bf16=*/true), 0x1p-6);
  Tolerance bitForBit = {1e-4, 1e-5, 1e-11};
  Tolerance oneStep = bitForBit;
  oneStep.halfSteps = 1;
  for (bool bf16 : {false, true}) {
    mlir::Type type = bf16 ? b.getBF16Type() : b.getF16Type();
    HostTensor expected = HostTensor::fromFloats(
        type, {4}, {-15.2890625, 0.0674438477, 1e-6, 2.0});
    std::vector<double> near, far;
    for (int64_t k = 0; k < 4; ++k) {
      double w = expected.getAsDouble(k);
      double step = kiln::test::halfStep(w, bf16);
      near.push_back(w + step);
      far.push_back(w - 2 * step);
    }
    HostTensor neighbours = HostTensor::fromFloats(type, {4}, near);
    HostTensor twoAway = HostTensor::fromFloats(type, {4}, far);
    EXPECT_NE(compareTensors(expected, neighbours, "t", &bitForBit), "");
    EXPECT_EQ(compareTensors(expected, neighbours, "t", &oneStep), "");
    EXPECT_NE(compareTensors(expected, twoAway, "t", &oneStep), "");
  }
}
