//===- CudaE2ETest.cpp - CUDA code against the reference evaluator --------===//
//
// For every test/e2e/*.mlir program and every public function: random
// inputs (three seeds), the reference evaluator, and the program compiled
// with --target=cuda (sm_80 PTX, JIT-compiled by the driver for the device
// present) and run through the runtime on the GPU. Without a CUDA driver
// or device every test reports SKIP with the runtime's reason.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "E2EInputs.h"
#include "NativeModule.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>

namespace {

constexpr unsigned kSeeds = 3;

/// GPU math (libdevice, fused multiply-add) differs from the host's in the
/// last bits, so f32 gets a slightly wider tolerance than on the CPU.
std::string compare(const kiln::HostTensor &expected,
                    const kiln::HostTensor &actual) {
  bool isF32 = expected.kind() == kiln::ElementKind::F32;
  double rtol = isF32 ? 1e-4 : 1e-11;
  double atol = isF32 ? 1e-5 : 1e-11;
  for (int64_t k = 0; k < expected.numElements(); ++k) {
    double want = expected.getAsDouble(k), got = actual.getAsDouble(k);
    bool same = expected.isFloat()
                    ? (std::isnan(want) && std::isnan(got)) || want == got ||
                          std::fabs(want - got) <= atol + rtol * std::fabs(want)
                    : want == got;
    if (!same) {
      std::ostringstream os;
      os.precision(9);
      os << "element " << k << ": expected " << want << ", the GPU gave "
         << got;
      return os.str();
    }
  }
  return "";
}

class CudaEndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaEndToEnd, GpuMatchesReferenceEvaluator) {
  if (kiln_status_t status = kiln_device_check(KILN_DEVICE_CUDA)) {
    std::string reason = kiln_status_message(status);
    kiln_status_free(status);
    GTEST_SKIP() << reason;
  }
  const std::string &path = GetParam();
  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
  ASSERT_TRUE(module) << "cannot parse " << path;

  kiln::CompileOptions options;
  options.target = kiln::Target::Cuda;
  kiln::test::NativeModule gpu(*module, options);
  ASSERT_TRUE(gpu.ok()) << gpu.error();

  for (auto func : module->getOps<mlir::func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration())
      continue;
    std::string name = func.getName().str();
    for (unsigned seed = 0; seed < kSeeds; ++seed) {
      SCOPED_TRACE("function @" + name + ", seed " + std::to_string(seed));
      std::mt19937 rng(seed * 7919 + 17);
      std::vector<kiln::HostTensor> inputs;
      for (mlir::Type type : func.getArgumentTypes())
        inputs.push_back(
            kiln::test::randomE2EInput(
                mlir::cast<mlir::RankedTensorType>(type), rng));
      auto expected = kiln::evaluate(func, inputs);
      ASSERT_TRUE(static_cast<bool>(expected))
          << llvm::toString(expected.takeError());
      std::vector<kiln::HostTensor> outputs;
      std::string error;
      ASSERT_TRUE(gpu.call(name, func, inputs, outputs, error)) << error;
      for (size_t r = 0; r < expected->size(); ++r) {
        std::string mismatch = compare((*expected)[r], outputs[r]);
        EXPECT_TRUE(mismatch.empty()) << "output #" << r << ": " << mismatch;
      }
    }
  }
}

std::string testName(const ::testing::TestParamInfo<std::string> &info) {
  std::string stem = std::filesystem::path(info.param).stem().string();
  for (char &c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return stem;
}

INSTANTIATE_TEST_SUITE_P(Programs, CudaEndToEnd,
                         ::testing::ValuesIn(
                             kiln::test::e2eProgramFiles(KILN_E2E_DIR)),
                         testName);

} // namespace
