//===- JitCudaTest.cpp - kiln::jit for a CUDA GPU -------------------------===//
//
// JitOptions::device = "cuda": the module's target and architecture, the
// options CUDA refuses and the CUDA options the CPU refuses, donations, the
// cache key, and calls on host arrays against the CPU's (on a machine with a
// device; without one, the call's error).
//
//===----------------------------------------------------------------------===//

#include "CudaAvailability.h"

#include "kiln/Backends/Cuda.h"
#include "kiln/Jit.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace kiln;

namespace {

/// A product, an elementwise function and a reduction: a cuBLASLt call, a
/// kernel and a reduction kernel on the GPU.
TracedFunction tracedLayer() {
  return trace("layer", {{DType::F32, {5, 7}}, {DType::F32, {7, 3}}},
               [](const Tensors &a) {
                 Tensor y = tanh(matmul(a[0], a[1]));
                 return Tensors{y, sum(y * y)};
               });
}

Array values(int64_t rows, int64_t cols, float scale) {
  std::vector<float> v(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    v[i] = scale * std::sin(0.7f * static_cast<float>(i) + scale);
  return Array::from(DType::F32, {rows, cols}, v);
}

JitOptions onCuda(const std::string &arch = "") {
  JitOptions options;
  options.device = "cuda";
  options.cudaArch = arch;
  return options;
}

std::string errorOf(const TracedFunction &traced, const JitOptions &options) {
  try {
    compile(traced, options);
  } catch (const JitError &error) {
    return error.what();
  }
  return "";
}

class JitCuda : public ::testing::Test {
protected:
  void SetUp() override {
    if (!mlir::kiln::hasCudaBackend())
      GTEST_SKIP() << "kiln was built without the CUDA backend";
  }
};

TEST_F(JitCuda, CompilesForTheArchitectureAsked) {
  CompiledFunction compiled = compile(tracedLayer(), onCuda("sm_90"));
  EXPECT_EQ(kiln_module_device(compiled.module().get()), KILN_DEVICE_CUDA);
  EXPECT_STREQ(kiln_module_target(compiled.module().get()), "cuda-sm_90");
  // The bytes are a module the runtime alone loads.
  kiln_module_t *loaded = nullptr;
  kiln_status_t status = kiln_module_load_memory(
      compiled.moduleBytes().data(), compiled.moduleBytes().size(), &loaded);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_STREQ(kiln_module_target(loaded), "cuda-sm_90");
  kiln_module_release(loaded);
}

TEST_F(JitCuda, WithoutAnArchitectureTakesTheDevicesNewest) {
  CompiledFunction compiled = compile(tracedLayer(), onCuda());
  std::string target = kiln_module_target(compiled.module().get());
  int major = 0, minor = 0;
  if (kiln_status_t status = kiln_cuda_compute_capability(&major, &minor)) {
    kiln_status_free(status);
    EXPECT_EQ(target, "cuda-sm_80") << "the default without a device";
    return;
  }
  // The newest of sm_70 .. sm_90 at or below the device's capability.
  int capability = major * 10 + minor;
  const char *expected = capability >= 90   ? "cuda-sm_90"
                         : capability >= 89 ? "cuda-sm_89"
                         : capability >= 86 ? "cuda-sm_86"
                         : capability >= 80 ? "cuda-sm_80"
                         : capability >= 75 ? "cuda-sm_75"
                                            : "cuda-sm_70";
  EXPECT_EQ(target, expected) << major << "." << minor;
}

TEST_F(JitCuda, RefusesUnknownDevicesArchitecturesAndProfiling) {
  TracedFunction traced = tracedLayer();
  JitOptions tpu;
  tpu.device = "tpu";
  EXPECT_NE(errorOf(traced, tpu).find("unknown device 'tpu' (supported: cpu, "
                                      "cuda)"),
            std::string::npos)
      << errorOf(traced, tpu);
  std::string old = errorOf(traced, onCuda("sm_60"));
  EXPECT_NE(old.find("unsupported CUDA architecture 'sm_60'"),
            std::string::npos)
      << old;
  JitOptions profiled = onCuda("sm_80");
  profiled.profile = true;
  std::string profiling = errorOf(traced, profiled);
  EXPECT_NE(profiling.find("not supported on CUDA"), std::string::npos)
      << profiling;
}

TEST_F(JitCuda, CudaOptionsNeedTheCudaDevice) {
  TracedFunction traced = tracedLayer();
  for (bool JitOptions::*flag :
       {&JitOptions::cudaTF32, &JitOptions::cudaDeterministic,
        &JitOptions::cudaAttention3xTF32, &JitOptions::cudaCudnnAttention,
        &JitOptions::cudaAttentionTuning}) {
    // Each away from its default (tuning's is on).
    bool other = !(JitOptions().*flag);
    JitOptions cpu;
    cpu.*flag = other;
    std::string error = errorOf(traced, cpu);
    EXPECT_NE(error.find("need device 'cuda'"), std::string::npos) << error;
    JitOptions cuda = onCuda("sm_90");
    cuda.*flag = other;
    EXPECT_EQ(errorOf(traced, cuda), "");
  }
}

TEST_F(JitCuda, DonationsAreListedUnused) {
  TracedFunction traced =
      trace("scale", {{DType::F32, {4}}, {DType::F32, {4}}},
            [](const Tensors &a) { return Tensors{a[0] * 2.0, a[1] + a[0]}; });
  JitOptions options = onCuda("sm_80");
  options.donateArgs = {1, 0, 1};
  CompiledFunction compiled = compile(traced, options);
  EXPECT_EQ(compiled.unusedDonations(), (std::vector<int>{0, 1}));
  for (size_t k = 0; k < kiln_function_output_count(compiled.function()); ++k)
    EXPECT_EQ(kiln_function_output(compiled.function(), k)->tied_input, -1);
}

TEST_F(JitCuda, TheCacheKeepsTargetsApart) {
  char pattern[] = "/tmp/kiln-jit-cuda-cache-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  TracedFunction traced = tracedLayer();
  JitOptions sm80 = onCuda("sm_80"), sm90 = onCuda("sm_90"), cpu;
  for (JitOptions *options : {&sm80, &sm90, &cpu})
    options->cacheDir = pattern;
  EXPECT_FALSE(compile(traced, sm80).fromCache());
  EXPECT_FALSE(compile(traced, sm90).fromCache());
  EXPECT_FALSE(compile(traced, cpu).fromCache());
  CompiledFunction again = compile(traced, sm90);
  EXPECT_TRUE(again.fromCache());
  EXPECT_STREQ(kiln_module_target(again.module().get()), "cuda-sm_90");
  std::filesystem::remove_all(pattern);
}

TEST_F(JitCuda, CallsOnHostArraysMatchTheCpu) {
  TracedFunction traced = tracedLayer();
  CompiledFunction gpu = compile(traced, onCuda());
  Array x = values(5, 7, 0.5f), w = values(7, 3, 0.8f);
  test::CudaDecision decision = test::checkCudaForTest();
  if (decision.verdict == test::CudaVerdict::Fail)
    FAIL() << decision.reason;
  if (decision.verdict == test::CudaVerdict::Skip) {
    // Without a device the call says so.
    try {
      gpu({x, w});
      FAIL() << "a CUDA function was called without a device";
    } catch (const JitError &error) {
      EXPECT_NE(std::string(error.what()).find("calling 'layer': "),
                std::string::npos)
          << error.what();
      EXPECT_NE(std::string(error.what()).find("CUDA"), std::string::npos)
          << error.what();
    }
    GTEST_SKIP() << decision.reason;
  }
  std::vector<Array> expected = compile(traced, JitOptions())({x, w});
  std::vector<Array> got = gpu({x, w});
  ASSERT_EQ(got.size(), 2u);
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].shape(), expected[k].shape()) << k;
    for (int64_t i = 0; i < got[k].size(); ++i)
      EXPECT_NEAR(got[k].at(i), expected[k].at(i), 1e-5) << k << ": " << i;
  }
}

} // namespace
