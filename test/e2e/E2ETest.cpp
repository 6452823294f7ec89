//===- E2ETest.cpp - Compiled code against the reference evaluator --------===//
//
// For every test/e2e/*.mlir file and every public function in it: draw
// random inputs (several seeds), evaluate the function with the reference
// evaluator, compile the file to a .kmod with the CPU backend, load it with
// the runtime from memory, call the function and compare every output
// element. One test per file, so a failure names the program.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>

namespace {

constexpr unsigned kSeeds = 3;

std::vector<std::string> programFiles() {
  std::vector<std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(KILN_E2E_DIR))
    if (entry.path().extension() == ".mlir")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

/// Random values of the tensor's dtype: floats in [-2, 2], integers in
/// [-8, 8], booleans fair.
kiln::HostTensor randomTensor(mlir::RankedTensorType type, std::mt19937 &rng) {
  kiln::HostTensor tensor(type.getElementType(), type.getShape());
  int64_t n = tensor.numElements();
  if (tensor.isFloat()) {
    std::uniform_real_distribution<double> dist(-2.0, 2.0);
    for (int64_t k = 0; k < n; ++k)
      tensor.f[k] = kiln::roundToFloat(tensor.kind(), dist(rng));
  } else if (type.getElementType().isInteger(1)) {
    std::uniform_int_distribution<int64_t> dist(0, 1);
    for (int64_t k = 0; k < n; ++k)
      tensor.i[k] = dist(rng);
  } else {
    std::uniform_int_distribution<int64_t> dist(-8, 8);
    for (int64_t k = 0; k < n; ++k)
      tensor.i[k] = dist(rng);
  }
  return tensor;
}

struct StatusDeleter {
  void operator()(kiln_status *s) const { kiln_status_free(s); }
};
using Status = std::unique_ptr<kiln_status, StatusDeleter>;
struct ModuleDeleter {
  void operator()(kiln_module_t *m) const { kiln_module_release(m); }
};
struct TensorDeleter {
  void operator()(kiln_tensor_t *t) const { kiln_tensor_release(t); }
};
using RuntimeTensor = std::unique_ptr<kiln_tensor_t, TensorDeleter>;

kiln_dtype_t runtimeDType(const kiln::HostTensor &tensor) {
  switch (tensor.kind()) {
  case kiln::ElementKind::F32: return KILN_DTYPE_F32;
  case kiln::ElementKind::F64: return KILN_DTYPE_F64;
  case kiln::ElementKind::I1: return KILN_DTYPE_I1;
  case kiln::ElementKind::I32: return KILN_DTYPE_I32;
  case kiln::ElementKind::I64: return KILN_DTYPE_I64;
  case kiln::ElementKind::F16: return KILN_DTYPE_F16;
  case kiln::ElementKind::BF16: return KILN_DTYPE_BF16;
  }
  return KILN_DTYPE_F32;
}

/// Compares one output; returns a description of the first mismatch.
std::string compare(const kiln::HostTensor &expected,
                    const kiln::HostTensor &actual) {
  bool isF32 = expected.kind() == kiln::ElementKind::F32;
  double rtol = isF32 ? 1e-5 : 1e-12, atol = isF32 ? 1e-6 : 1e-12;
  int64_t n = expected.numElements();
  for (int64_t k = 0; k < n; ++k) {
    double want = expected.getAsDouble(k), got = actual.getAsDouble(k);
    bool same;
    if (expected.isFloat())
      same = (std::isnan(want) && std::isnan(got)) || want == got ||
             std::fabs(want - got) <= atol + rtol * std::fabs(want);
    else
      same = want == got;
    if (!same) {
      std::ostringstream os;
      os.precision(9);
      os << "element " << k << " of " << n << ": expected " << want
         << ", native code gave " << got;
      return os.str();
    }
  }
  return "";
}

class EndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(EndToEnd, NativeMatchesReferenceEvaluator) {
  const std::string &path = GetParam();
  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
  ASSERT_TRUE(module) << "cannot parse " << path;

  // The evaluator runs on the kiln IR; compilation lowers a clone in place.
  mlir::OwningOpRef<mlir::ModuleOp> lowered = module->clone();
  std::vector<uint8_t> kmod;
  std::string error;
  ASSERT_TRUE(kiln::compileToKmod(*lowered, kiln::CompileOptions(), kmod, error))
      << error;
  kiln_module_t *rawModule = nullptr;
  Status loadStatus(kiln_module_load_memory(kmod.data(), kmod.size(), &rawModule));
  ASSERT_FALSE(loadStatus) << kiln_status_message(loadStatus.get());
  std::unique_ptr<kiln_module_t, ModuleDeleter> runtimeModule(rawModule);

  unsigned checkedFunctions = 0;
  for (auto func : module->getOps<mlir::func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration())
      continue;
    std::string name = func.getName().str();
    const kiln_function_t *function = nullptr;
    Status lookup(kiln_module_function_lookup(runtimeModule.get(), name.c_str(),
                                              &function));
    ASSERT_FALSE(lookup) << kiln_status_message(lookup.get());
    for (unsigned seed = 0; seed < kSeeds; ++seed) {
      SCOPED_TRACE("function @" + name + ", seed " + std::to_string(seed));
      std::mt19937 rng(seed * 7919 + 17);
      std::vector<kiln::HostTensor> inputs;
      for (mlir::Type type : func.getArgumentTypes())
        inputs.push_back(
            randomTensor(mlir::cast<mlir::RankedTensorType>(type), rng));
      auto expected = kiln::evaluate(func, inputs);
      ASSERT_TRUE(static_cast<bool>(expected))
          << llvm::toString(expected.takeError());

      std::vector<RuntimeTensor> runtimeInputs;
      std::vector<kiln_tensor_t *> inputPointers;
      for (const kiln::HostTensor &input : inputs) {
        std::vector<uint8_t> bytes(input.byteSize());
        input.toBytes(bytes.data());
        kiln_tensor_t *tensor = nullptr;
        Status create(kiln_tensor_create(runtimeDType(input), input.shape.size(),
                                         input.shape.data(), bytes.data(),
                                         &tensor));
        ASSERT_FALSE(create) << kiln_status_message(create.get());
        runtimeInputs.emplace_back(tensor);
        inputPointers.push_back(tensor);
      }
      std::vector<kiln_tensor_t *> outputs(expected->size(), nullptr);
      Status call(kiln_function_call(function, inputPointers.data(),
                                     inputPointers.size(), outputs.data(),
                                     outputs.size()));
      ASSERT_FALSE(call) << kiln_status_message(call.get());
      std::vector<RuntimeTensor> ownedOutputs;
      for (kiln_tensor_t *output : outputs)
        ownedOutputs.emplace_back(output);
      for (size_t r = 0; r < expected->size(); ++r) {
        const kiln::HostTensor &want = (*expected)[r];
        kiln::HostTensor got = kiln::HostTensor::fromBytes(
            want.elementType, want.shape, kiln_tensor_data(outputs[r]));
        std::string mismatch = compare(want, got);
        EXPECT_TRUE(mismatch.empty()) << "output #" << r << ": " << mismatch;
      }
    }
    ++checkedFunctions;
  }
  EXPECT_GT(checkedFunctions, 0u) << path << " has no public function";
  RecordProperty("functions", checkedFunctions);
}

std::string testName(const ::testing::TestParamInfo<std::string> &info) {
  std::string stem = std::filesystem::path(info.param).stem().string();
  for (char &c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return stem;
}

INSTANTIATE_TEST_SUITE_P(Programs, EndToEnd,
                         ::testing::ValuesIn(programFiles()), testName);

} // namespace
