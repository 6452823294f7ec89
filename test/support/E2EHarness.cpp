//===- E2EHarness.cpp - Tests: e2e programs against the evaluator ---------===//
//
// For one program and one target:
//  1. (CUDA) decide whether the device is there; skip or fail without it;
//  2. parse the program, fail it if it has no public function, and run
//     kiln-fuse on a copy of it;
//  3. compile it for the target (the fusion_* programs also with fusion
//     off; on the CPU the conv* programs also with oneDNN's convolutions
//     channels-last (reordered inside the call, and direct), blocked and
//     plain, the conv_winograd* programs also through kiln's own Winograd
//     convolution and oneDNN's, and the matmul_packed* programs also with every
//     product of a constant B on kiln's packed kernel; programs with loops,
//     parallel loops and concurrent kernels also with each loop nest in a
//     function of its own) and load it with the runtime;
//  4. for every public function and every seed: draw random inputs,
//     evaluate the function and its fused copy (which must agree exactly),
//     call every build and compare each output with the evaluator's within
//     the target's tolerance, widened by the function's kiln.e2e_atol; on
//     the CPU, once for each OpenMP thread count the function's
//     kiln.e2e_threads lists (kernels that run side by side at one count
//     run one after the other at another).
//
//===----------------------------------------------------------------------===//

#include "E2EHarness.h"

#include "CudaAvailability.h"
#include "E2EInputs.h"
#include "NativeModule.h"
#include "TensorCompare.h"

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/Fusion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cctype>
#include <dlfcn.h>
#include <filesystem>
#include <memory>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr unsigned kSeeds = 3;

/// What differs between the targets.
struct TargetTraits {
  /// Names the results in messages.
  const char *name;
  Tolerance tolerance;
  /// Options for the default build, and for the build without fusion.
  CompileOptions (*options)(bool fuse);
};

TargetTraits traitsOf(E2ETarget target) {
  switch (target) {
  case E2ETarget::Cpu:
    return {"native code", kCpuTolerance,
            [](bool fuse) { return testCompileOptions(Target::Cpu, fuse); }};
  case E2ETarget::Cuda:
    return {"the GPU", kCudaTolerance,
            [](bool fuse) { return testCompileOptions(Target::Cuda, fuse); }};
  case E2ETarget::CudaOnCpu:
    // The GPU's kernels, summing in the GPU's order with the host's math.
    return {"the CUDA kernels on the host", kCudaTolerance, [](bool fuse) {
              return testCompileOptions(Target::CudaOnCpu, fuse);
            }};
  }
  llvm_unreachable("unknown e2e target");
}

/// Whether the file name of `path` starts with `prefix`.
bool isProgramOf(const std::string &path, llvm::StringRef prefix) {
  return llvm::StringRef(std::filesystem::path(path).stem().string())
      .starts_with(prefix);
}

/// The programs also compiled with each loop nest in a function of its
/// own (kiln-cpu-outline-loop-nests from one nest).
constexpr llvm::StringRef kOutlinedPrograms[] = {
    "concurrent_branches", "control_flow", "cpu_large",
    "fusion_while",        "grad_loops",   "sort"};

struct Build {
  std::string name;
  std::unique_ptr<NativeModule> module;
};

/// libomp's thread count setter and getter, from the copy the compiled
/// modules loaded; null where no module loaded libomp.
struct OpenMPThreads {
  void (*set)(int) = nullptr;
  int (*get)() = nullptr;
};

OpenMPThreads loadedOpenMP() {
  OpenMPThreads omp;
  for (const char *name : {"libomp.so.5", "libomp.so"})
    if (void *library = dlopen(name, RTLD_LAZY | RTLD_NOLOAD)) {
      omp.set = reinterpret_cast<void (*)(int)>(
          dlsym(library, "omp_set_num_threads"));
      omp.get =
          reinterpret_cast<int (*)()>(dlsym(library, "omp_get_max_threads"));
      dlclose(library);
      if (omp.set && omp.get)
        return omp;
    }
  return {};
}

} // namespace

void kiln::test::checkE2EProgram(const std::string &path, E2ETarget target) {
  TargetTraits traits = traitsOf(target);
  if (target == E2ETarget::Cuda) {
    CudaDecision cuda = checkCudaForTest();
    if (cuda.verdict == CudaVerdict::Skip)
      GTEST_SKIP() << cuda.reason;
    if (cuda.verdict == CudaVerdict::Fail)
      FAIL() << cuda.reason;
  }

  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
  ASSERT_TRUE(module) << "cannot parse " << path;

  // Checked before compiling, so that such a program fails with this
  // reason and never passes having checked nothing.
  std::vector<mlir::func::FuncOp> functions;
  for (auto func : module->getOps<mlir::func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      functions.push_back(func);
  ASSERT_FALSE(functions.empty()) << path << " has no public function";

  // The kiln-fuse result, for the evaluator: kiln.fused regions run op by
  // op, so the fused IR must give exactly the original's values.
  mlir::OwningOpRef<mlir::ModuleOp> fused = module->clone();
  mlir::PassManager fusion(&context);
  fusion.addNestedPass<mlir::func::FuncOp>(mlir::kiln::createFusion());
  ASSERT_TRUE(mlir::succeeded(fusion.run(*fused))) << "kiln-fuse failed";

  // The program as compiled by default (fusion on) and, for the fusion
  // programs, with fusion off.
  std::vector<Build> builds;
  builds.push_back({traits.name, std::make_unique<NativeModule>(
                                     *module, traits.options(true))});
  if (isProgramOf(path, "fusion_"))
    builds.push_back(
        {std::string(traits.name) + " without fusion",
         std::make_unique<NativeModule>(*module, traits.options(false))});
  // The attention programs for CUDA also with --cuda-deterministic: the
  // gradient's two kernels instead of the one that adds dq with atomics.
  if (target != E2ETarget::Cpu && isProgramOf(path, "fusion_attention")) {
    CompileOptions options = traits.options(true);
    options.cuda.deterministic = true;
    builds.push_back({std::string(traits.name) + " (deterministic)",
                      std::make_unique<NativeModule>(*module, options)});
  }
  // The conv* programs on the CPU also in every layout of oneDNN's
  // convolutions, whichever the CPU running the test prefers.
  if (target == E2ETarget::Cpu && isProgramOf(path, "conv"))
    for (const char *layouts : {"channels-last", "channels-last-direct",
                                "blocked-8", "blocked-16", "plain"}) {
      CompileOptions options = traits.options(true);
      options.cpu.dnnlConvLayouts = layouts;
      builds.push_back({std::string(traits.name) + " (" + layouts +
                            " convolutions)",
                        std::make_unique<NativeModule>(*module, options)});
    }
  // The conv_winograd* programs on the CPU also through kiln's own
  // Winograd convolution wherever the shape allows, whatever the CPU, on
  // each layout it reads and writes, and through oneDNN's Winograd kernels
  // (which the default never picks; direct sums where the CPU has none).
  if (target == E2ETarget::Cpu && isProgramOf(path, "conv_winograd")) {
    for (const char *layouts :
         {"blocked-8", "blocked-16", "channels-last-direct", "plain"}) {
      CompileOptions options = traits.options(true);
      options.cpu.dnnlConvLayouts = layouts;
      options.cpu.convAlgorithm = "own-winograd";
      builds.push_back(
          {std::string(traits.name) + " (kiln's Winograd, " + layouts + ")",
           std::make_unique<NativeModule>(*module, options)});
    }
    CompileOptions options = traits.options(true);
    options.cpu.convAlgorithm = "winograd";
    builds.push_back({std::string(traits.name) + " (oneDNN's Winograd)",
                      std::make_unique<NativeModule>(*module, options)});
  }
  // The matmul_packed* programs on the CPU also with every product of a
  // constant B that kiln's packed kernel takes given to it, whatever oneDNN
  // does on the CPU running the test, however small (no lower bound on a
  // library product's multiply-adds: the programs' weights stay small).
  if (target == E2ETarget::Cpu && isProgramOf(path, "matmul_packed")) {
    CompileOptions options = traits.options(true);
    options.cpu.packedMatmuls = "always";
    options.cpu.dnnlMinMacs = 1;
    builds.push_back({std::string(traits.name) + " (packed products)",
                      std::make_unique<NativeModule>(*module, options)});
  }
  // Programs with loops, parallel loops and side-by-side kernels on the
  // CPU also with every loop nest in a function of its own, as long
  // programs are compiled.
  if (target == E2ETarget::Cpu &&
      llvm::any_of(kOutlinedPrograms, [&](llvm::StringRef prefix) {
        return isProgramOf(path, prefix);
      })) {
    CompileOptions options = traits.options(true);
    options.cpu.outlineMinNests = 1;
    builds.push_back({std::string(traits.name) + " (loop nests outlined)",
                      std::make_unique<NativeModule>(*module, options)});
  }
  for (const Build &build : builds)
    ASSERT_TRUE(build.module->ok())
        << build.name << ": " << build.module->error();

  for (mlir::func::FuncOp func : functions) {
    std::string name = func.getName().str();
    // A function may widen the absolute f32 tolerance of its compiled
    // results (`attributes {kiln.e2e_atol = 1.0e-4 : f64}`): oneDNN sums a
    // matmul's products in another order than the evaluator, and a sum that
    // cancels to a small value keeps the absolute error of its large terms.
    Tolerance tolerance = traits.tolerance;
    if (auto atol = func->getAttrOfType<mlir::FloatAttr>("kiln.e2e_atol"))
      tolerance.f32Atol = std::max(tolerance.f32Atol, atol.getValueAsDouble());
    // And its f16/bf16 results may be a rounding apart
    // (`kiln.e2e_half_rtol = 8.0e-3 : f64`, one bf16 step): a library's
    // f32 sum in another order can round to the other neighbour.
    if (auto rtol = func->getAttrOfType<mlir::FloatAttr>("kiln.e2e_half_rtol"))
      tolerance.halfRtol = rtol.getValueAsDouble();
    // The OpenMP thread counts to call the CPU builds at
    // (`kiln.e2e_threads = array<i64: 1, 2, 3>`); 0 leaves OpenMP's own.
    std::vector<int64_t> threadCounts = {0};
    if (auto counts =
            func->getAttrOfType<mlir::DenseI64ArrayAttr>("kiln.e2e_threads");
        counts && target == E2ETarget::Cpu)
      threadCounts.assign(counts.asArrayRef().begin(),
                          counts.asArrayRef().end());
    OpenMPThreads omp;
    if (threadCounts != std::vector<int64_t>{0}) {
      omp = loadedOpenMP();
      ASSERT_TRUE(omp.set) << "@" << name
                           << " sets OpenMP's thread count, but no "
                              "compiled module loaded libomp";
    }
    auto fusedFunc = fused->lookupSymbol<mlir::func::FuncOp>(name);
    ASSERT_TRUE(fusedFunc) << "kiln-fuse lost @" << name;
    for (unsigned seed = 0; seed < kSeeds; ++seed) {
      SCOPED_TRACE("function @" + name + ", seed " + std::to_string(seed));
      std::vector<HostTensor> inputs =
          randomE2EInputs(func.getFunctionType(), seed);
      auto expected = evaluate(func, inputs);
      ASSERT_TRUE(static_cast<bool>(expected))
          << llvm::toString(expected.takeError());

      auto fusedResults = evaluate(fusedFunc, inputs);
      ASSERT_TRUE(static_cast<bool>(fusedResults))
          << llvm::toString(fusedResults.takeError());
      for (size_t r = 0; r < expected->size(); ++r) {
        std::string mismatch = compareTensors((*expected)[r], (*fusedResults)[r],
                                       "the fused IR", /*tolerance=*/nullptr);
        EXPECT_TRUE(mismatch.empty()) << "output #" << r << ": " << mismatch;
      }

      // On the GPU each build runs from and to host tensors, and with its
      // inputs and outputs in device memory; from host tensors three times
      // in a row, the later two on other inputs, so that a function the
      // runtime runs as a CUDA graph is also checked when captured (the
      // second call) and launched again (the third, with the same buffers
      // from the pool, holding new values).
      for (const Build &build : builds)
        for (int64_t threads : threadCounts)
          for (bool onDevice : {false, true}) {
            if (onDevice && target != E2ETarget::Cuda)
              continue;
            int calls = target == E2ETarget::Cuda && !onDevice ? 3 : 1;
            for (int call = 1; call <= calls; ++call) {
              std::string label =
                  build.name + (onDevice ? " (device tensors)" : "") +
                  (threads ? " on " + std::to_string(threads) + " threads"
                           : "") +
                  (calls > 1 ? ", call " + std::to_string(call) : "");
              int previous = threads ? omp.get() : 0;
              if (threads)
                omp.set(static_cast<int>(threads));
              std::vector<HostTensor> callInputs = inputs;
              std::vector<HostTensor> callExpected = *expected;
              if (call > 1) {
                callInputs = randomE2EInputs(func.getFunctionType(),
                                             seed + (call - 1) * kSeeds);
                auto values = evaluate(func, callInputs);
                ASSERT_TRUE(static_cast<bool>(values))
                    << llvm::toString(values.takeError());
                callExpected = std::move(*values);
              }
              std::vector<HostTensor> outputs;
              std::string error;
              bool called = build.module->call(name, func, callInputs, outputs,
                                               error, nullptr, onDevice);
              if (threads)
                omp.set(previous);
              ASSERT_TRUE(called) << label << ": " << error;
              for (size_t r = 0; r < callExpected.size(); ++r) {
                std::string mismatch = compareTensors(
                    callExpected[r], outputs[r], label, &tolerance);
                EXPECT_TRUE(mismatch.empty())
                    << "output #" << r << ": " << mismatch;
              }
            }
          }
    }
  }
  ::testing::Test::RecordProperty("functions",
                                  static_cast<int>(functions.size()));
}

std::string
kiln::test::e2eTestName(const ::testing::TestParamInfo<std::string> &info) {
  std::string stem = std::filesystem::path(info.param).stem().string();
  for (char &c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return stem;
}
