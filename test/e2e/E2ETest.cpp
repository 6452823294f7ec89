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
#include "E2EInputs.h"
#include "NativeModule.h"

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

/// Compares one output; returns a description of the first mismatch.
/// `exact` asks for identical values (NaN equal to NaN); `f32Atol`, when
/// positive, replaces the default absolute tolerance of f32 outputs.
std::string compare(const kiln::HostTensor &expected,
                    const kiln::HostTensor &actual, const char *what,
                    bool exact = false, double f32Atol = 0) {
  bool isF32 = expected.kind() == kiln::ElementKind::F32;
  double rtol = exact ? 0 : isF32 ? 1e-5 : 1e-12;
  double atol = exact ? 0 : isF32 ? (f32Atol > 0 ? f32Atol : 1e-6) : 1e-12;
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
    std::unique_ptr<kiln::test::NativeModule> module;
  };
  std::vector<Build> builds;
  builds.push_back(
      {"native code", std::make_unique<kiln::test::NativeModule>(*module)});
  if (isFusionProgram(path)) {
    kiln::CompileOptions unfused;
    unfused.cpu.fuse = false;
    builds.push_back({"native code without fusion",
                      std::make_unique<kiln::test::NativeModule>(*module,
                                                                 unfused)});
  }
  for (const Build &build : builds)
    ASSERT_TRUE(build.module->ok()) << build.name << ": "
                                    << build.module->error();

  unsigned checkedFunctions = 0;
  for (auto func : module->getOps<mlir::func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration())
      continue;
    std::string name = func.getName().str();
    // A function may widen the absolute f32 tolerance of its native results
    // (`attributes {kiln.e2e_atol = 1.0e-4 : f64}`): oneDNN sums a matmul's
    // products in another order than the evaluator, and a sum that cancels
    // to a small value keeps the absolute error of its large terms.
    double f32Atol = 0;
    if (auto atol = func->getAttrOfType<mlir::FloatAttr>("kiln.e2e_atol"))
      f32Atol = atol.getValueAsDouble();
    auto fusedFunc = fused->lookupSymbol<mlir::func::FuncOp>(name);
    ASSERT_TRUE(fusedFunc) << "kiln-fuse lost @" << name;
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
        std::string error;
        ASSERT_TRUE(build.module->call(name, func, inputs, outputs, error))
            << build.name << ": " << error;
        for (size_t r = 0; r < expected->size(); ++r) {
          std::string mismatch = compare((*expected)[r], outputs[r],
                                         build.name, /*exact=*/false, f32Atol);
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
                         ::testing::ValuesIn(
                             kiln::test::e2eProgramFiles(KILN_E2E_DIR)),
                         testName);

} // namespace
