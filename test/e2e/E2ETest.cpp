//===- E2ETest.cpp - Compiled code against the reference evaluator --------===//
//
// For every test/e2e/*.mlir file and every public function in it: draw
// random inputs (several seeds), evaluate the function with the reference
// evaluator, compile the file to a .kmod with the CPU backend, load it with
// the runtime from memory, call the function and compare every output
// element. The evaluator also runs the kiln-fuse result, which must agree
// exactly, and fusion_* programs are also compiled with fusion off. One
// test per file, so a failure names the program.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/Fusion/Passes.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

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
/// `exact` asks for identical values (NaN equal to NaN).
std::string compare(const kiln::HostTensor &expected,
                    const kiln::HostTensor &actual, const char *what,
                    bool exact = false) {
  bool isF32 = expected.kind() == kiln::ElementKind::F32;
  double rtol = exact ? 0 : isF32 ? 1e-5 : 1e-12;
  double atol = exact ? 0 : isF32 ? 1e-6 : 1e-12;
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
      os << "element " << k << " of " << n << ": expected " << want << ", "
         << what << " gave " << got;
      return os.str();
    }
  }
  return "";
}

using RuntimeModule = std::unique_ptr<kiln_module_t, ModuleDeleter>;

/// Compiles a clone of `module` (compilation lowers in place) and loads it.
::testing::AssertionResult compileAndLoad(mlir::ModuleOp module,
                                          const kiln::CompileOptions &options,
                                          RuntimeModule &loaded) {
  mlir::OwningOpRef<mlir::ModuleOp> lowered = module.clone();
  std::vector<uint8_t> kmod;
  std::string error;
  if (!kiln::compileToKmod(*lowered, options, kmod, error))
    return ::testing::AssertionFailure() << error;
  kiln_module_t *rawModule = nullptr;
  Status status(kiln_module_load_memory(kmod.data(), kmod.size(), &rawModule));
  if (status)
    return ::testing::AssertionFailure() << kiln_status_message(status.get());
  loaded.reset(rawModule);
  return ::testing::AssertionSuccess();
}

/// Calls function `name` of `module` on `inputs`; `outputs` receives one
/// tensor per element of `like`, with its type.
::testing::AssertionResult
callNative(kiln_module_t *module, const std::string &name,
           const std::vector<kiln::HostTensor> &inputs,
           const std::vector<kiln::HostTensor> &like,
           std::vector<kiln::HostTensor> &outputs) {
  const kiln_function_t *function = nullptr;
  Status lookup(kiln_module_function_lookup(module, name.c_str(), &function));
  if (lookup)
    return ::testing::AssertionFailure() << kiln_status_message(lookup.get());
  std::vector<RuntimeTensor> runtimeInputs;
  std::vector<kiln_tensor_t *> inputPointers;
  for (const kiln::HostTensor &input : inputs) {
    std::vector<uint8_t> bytes(input.byteSize());
    input.toBytes(bytes.data());
    kiln_tensor_t *tensor = nullptr;
    Status create(kiln_tensor_create(runtimeDType(input), input.shape.size(),
                                     input.shape.data(), bytes.data(),
                                     &tensor));
    if (create)
      return ::testing::AssertionFailure() << kiln_status_message(create.get());
    runtimeInputs.emplace_back(tensor);
    inputPointers.push_back(tensor);
  }
  std::vector<kiln_tensor_t *> rawOutputs(like.size(), nullptr);
  Status call(kiln_function_call(function, inputPointers.data(),
                                 inputPointers.size(), rawOutputs.data(),
                                 rawOutputs.size()));
  if (call)
    return ::testing::AssertionFailure() << kiln_status_message(call.get());
  std::vector<RuntimeTensor> ownedOutputs;
  for (kiln_tensor_t *output : rawOutputs)
    ownedOutputs.emplace_back(output);
  outputs.clear();
  for (size_t r = 0; r < like.size(); ++r)
    outputs.push_back(kiln::HostTensor::fromBytes(
        like[r].elementType, like[r].shape, kiln_tensor_data(rawOutputs[r])));
  return ::testing::AssertionSuccess();
}

/// Programs named fusion_* are also compiled with fusion turned off.
bool isFusionProgram(const std::string &path) {
  return std::filesystem::path(path).stem().string().rfind("fusion_", 0) == 0;
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

  // The kiln-fuse result, for the evaluator: kiln.fused regions run op by
  // op, so the fused IR must give exactly the original's values.
  mlir::OwningOpRef<mlir::ModuleOp> fused = module->clone();
  mlir::PassManager fusion(&context);
  fusion.addNestedPass<mlir::func::FuncOp>(mlir::kiln::createFusion());
  ASSERT_TRUE(mlir::succeeded(fusion.run(*fused))) << "kiln-fuse failed";

  // Native code as compiled by default (fusion on) and, for the fusion
  // programs, with fusion off.
  struct Build {
    const char *name;
    RuntimeModule module;
  };
  std::vector<Build> builds;
  builds.push_back({"native code", nullptr});
  ASSERT_TRUE(
      compileAndLoad(*module, kiln::CompileOptions(), builds.back().module));
  if (isFusionProgram(path)) {
    kiln::CompileOptions unfused;
    unfused.cpu.fuse = false;
    builds.push_back({"native code without fusion", nullptr});
    ASSERT_TRUE(compileAndLoad(*module, unfused, builds.back().module));
  }

  unsigned checkedFunctions = 0;
  for (auto func : module->getOps<mlir::func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration())
      continue;
    std::string name = func.getName().str();
    auto fusedFunc = fused->lookupSymbol<mlir::func::FuncOp>(name);
    ASSERT_TRUE(fusedFunc) << "kiln-fuse lost @" << name;
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

      auto fusedResults = kiln::evaluate(fusedFunc, inputs);
      ASSERT_TRUE(static_cast<bool>(fusedResults))
          << llvm::toString(fusedResults.takeError());
      for (size_t r = 0; r < expected->size(); ++r) {
        std::string mismatch = compare((*expected)[r], (*fusedResults)[r],
                                       "the fused IR", /*exact=*/true);
        EXPECT_TRUE(mismatch.empty()) << "output #" << r << ": " << mismatch;
      }

      for (const Build &build : builds) {
        std::vector<kiln::HostTensor> outputs;
        ASSERT_TRUE(
            callNative(build.module.get(), name, inputs, *expected, outputs));
        for (size_t r = 0; r < expected->size(); ++r) {
          std::string mismatch =
              compare((*expected)[r], outputs[r], build.name);
          EXPECT_TRUE(mismatch.empty()) << "output #" << r << ": " << mismatch;
        }
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
