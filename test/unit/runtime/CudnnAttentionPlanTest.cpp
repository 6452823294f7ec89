//===- CudnnAttentionPlanTest.cpp - cuDNN takes kiln's attention graphs ---===//
//
// The cuDNN plug-in's attention graphs (CudnnAttention.cpp) planned
// without a device, for the device properties of an sm_90 GPU: cuDNN's
// heuristics must find an engine that takes each graph. Its fused
// attention engines compile their kernels at run time (NVRTC) and then
// load them, which needs a driver; without a GPU the test runs against
// the CUDA toolkit's stub libcuda (ctest points the loader at it), so an
// engine that took the graph fails at that last step, with
// CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER, and one that did not take it
// refuses it earlier. With a GPU's driver the plans finalize. Execution itself
// needs a GPU (KILN_REQUIRE_CUDA=1 ctest -L cuda).
//
//===----------------------------------------------------------------------===//

#include "cuda/cudnn/CudnnAttention.h"

#include "kiln/CudaLibraryAbi.h"
#include "kiln/ElementType.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using namespace kiln::cuda_dnn;

/// cuDNN's device-property description of a GPU with compute capability
/// 9.0, 132 SMs, 227 KiB of shared memory a block may opt in to and 60
/// MiB of L2 (an H100 SXM or H200 as NVIDIA documents them), in the JSON
/// form CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION takes.
constexpr const char *kSm90 = R"({
  "deviceName": "sm_90, 132 SMs", "deviceVer": 900, "smVersion": 900,
  "driverVer": 13000, "cudnnVersion": 91900, "schemaVersion": 1,
  "cudaDeviceId": 0, "pciDeviceId": 0, "isTccDriver": 0,
  "multiProcessorCount": 132, "maxCtasPerSM": 32, "maxThreadsPerSM": 2048,
  "maxThreadsPerBlock": 1024, "maxBlockSize": [1024, 1024, 64],
  "maxGridSize": [2147483647, 65535, 65535], "warpSize": 32,
  "regsPerBlock": 65536, "maxRegistersPerSM": 65536,
  "maxSharedMemoryPerBlock": 49152, "maxSharedMemoryPerBlockOptin": 232448,
  "reservedSharedMemoryPerBlock": 1024, "l2CacheSize": 62914560,
  "smClockRateKHz": 1980000, "memClockRateKHz": 3201000,
  "totalGlobalMem": 150323855360, "supportCoopLaunch": 1
})";

class CudnnAttentionPlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    // cuDNN's engines reach the driver through libcuda.so.1: the stub
    // (ctest's LD_LIBRARY_PATH) or, on a machine with a GPU, the driver.
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))
      GTEST_SKIP() << "no libcuda.so.1 to plan against (neither a CUDA "
                      "driver nor the CUDA toolkit's stubs/libcuda.so)";
    // ... and compile with NVRTC, which cuDNN loads by its soname.
    if (!dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL) &&
        !dlopen("libnvrtc.so.12", RTLD_NOW | RTLD_LOCAL))
      GTEST_SKIP() << "no NVRTC (libnvrtc.so.13 or .12), with which "
                      "cuDNN's attention engines compile their kernels";
    Builder b;
    b.create(properties, CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR)
        .set(properties, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION,
             CUDNN_TYPE_CHAR, kSm90, static_cast<int64_t>(std::strlen(kSm90)))
        .finalize(properties, "finalizing the device properties");
    char error[512] = "";
    if (!b.ok())
      b.failure(error, sizeof(error));
    ASSERT_TRUE(b.ok()) << error;
    target.deviceProperties = properties.get();
  }

  struct Outcome {
    int status;
    std::string error;
    bool taken;
  };

  /// Plans `descriptor` (its gradient with `gradient`) for the sm_90
  /// device; `taken` when an engine finalized its plan or compiled its
  /// kernels.
  Outcome plan(const std::vector<int64_t> &descriptor, bool gradient) {
    AttentionProblem problem(descriptor.data());
    AttentionPlan attention;
    std::vector<Candidate> candidates;
    std::vector<cudnnStatus_t> refusals;
    char error[1024] = "";
    int status =
        planAttention(problem, gradient, nullptr, target, size_t(1) << 30, 2,
                      attention, candidates, error, sizeof(error), &refusals);
    bool taken = !candidates.empty();
    for (cudnnStatus_t refusal : refusals)
      taken |= refusal == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
    return {status, error, taken};
  }

  Descriptor properties;
  PlanTarget target;
};

int64_t dtypeCode(kiln::ElementType type) { return static_cast<int64_t>(type); }

/// A descriptor (kiln/CudaLibraryAbi.h) with a scale of 1/sqrt(D).
std::vector<int64_t> attention(kiln::ElementType type, int64_t flags, int64_t b,
                               int64_t h, int64_t nq, int64_t nk, int64_t d,
                               int64_t dv,
                               std::vector<int64_t> mask = {1, 1, 1, 1}) {
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  int64_t bits;
  std::memcpy(&bits, &scale, sizeof(bits));
  std::vector<int64_t> descriptor{dtypeCode(type), flags, b, h, nq, nk, d, dv};
  descriptor.insert(descriptor.end(), mask.begin(), mask.end());
  descriptor.push_back(bits);
  EXPECT_EQ(descriptor.size(), size_t(KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE));
  return descriptor;
}

constexpr int64_t kCausal = KILN_CUDA_ATTENTION_CAUSAL;
constexpr int64_t kMask = KILN_CUDA_ATTENTION_MASK;
using kiln::ElementType;

TEST_F(CudnnAttentionPlanTest, TheForwardIsTaken) {
  Outcome o =
      plan(attention(ElementType::BF16, 0, 1, 8, 1024, 1024, 64, 64), false);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, TheCausalForwardOfHeadDim128IsTaken) {
  Outcome o = plan(
      attention(ElementType::F16, kCausal, 2, 4, 512, 512, 128, 128), false);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, AForwardWithAPaddingMaskIsTaken) {
  Outcome o = plan(attention(ElementType::BF16, kMask, 2, 8, 256, 256, 64, 64,
                             {2, 1, 1, 256}),
                   false);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, AForwardOfOtherKeysAndValueDimsIsTaken) {
  Outcome o =
      plan(attention(ElementType::F16, 0, 1, 8, 256, 300, 64, 32), false);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, ADecodeStepIsTaken) {
  Outcome o =
      plan(attention(ElementType::BF16, 0, 4, 8, 1, 300, 64, 64), false);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, AGradientOfOtherKeysAndValueDimsIsTaken) {
  Outcome o =
      plan(attention(ElementType::F16, 0, 1, 8, 256, 300, 64, 32), true);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, ACausalGradientOfMoreQueriesThanKeysIsTaken) {
  Outcome o =
      plan(attention(ElementType::BF16, kCausal, 1, 8, 300, 200, 40, 40), true);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, TheGradientIsTaken) {
  Outcome o =
      plan(attention(ElementType::BF16, 0, 1, 8, 1024, 1024, 64, 64), true);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, TheCausalGradientIsTaken) {
  Outcome o = plan(
      attention(ElementType::F16, kCausal, 2, 4, 512, 512, 128, 128), true);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, AMaskedGradientIsTaken) {
  Outcome o = plan(attention(ElementType::BF16, kMask, 1, 8, 256, 256, 64, 64,
                             {1, 1, 256, 256}),
                   true);
  EXPECT_TRUE(o.taken) << o.error;
}

TEST_F(CudnnAttentionPlanTest, AGradientOfHeadDimsCudnnLacksIsRefused) {
  Outcome o =
      plan(attention(ElementType::BF16, 0, 1, 8, 256, 256, 1000, 1000), true);
  EXPECT_FALSE(o.taken);
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.error.find("cuDNN has no engine for the attention gradient of "
                         "[1, 8, 256, 1000]"),
            std::string::npos)
      << o.error;
}

TEST_F(CudnnAttentionPlanTest, AnF32AttentionIsAnError) {
  Outcome o = plan(attention(ElementType::F32, 0, 1, 8, 64, 64, 64, 64), false);
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.error.find("invalid attention: kiln dtype"), std::string::npos)
      << o.error;
}

TEST_F(CudnnAttentionPlanTest, AMaskThatDoesNotBroadcastIsAnError) {
  Outcome o = plan(
      attention(ElementType::BF16, kMask, 2, 8, 64, 64, 64, 64, {2, 3, 64, 64}),
      false);
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.error.find("mask dim 1 of 3 against 8 scores"), std::string::npos)
      << o.error;
}

TEST_F(CudnnAttentionPlanTest, UnknownFlagsAreAnError) {
  Outcome o =
      plan(attention(ElementType::BF16, 8, 1, 8, 64, 64, 64, 64), false);
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.error.find("unknown flags 8"), std::string::npos) << o.error;
}

} // namespace
