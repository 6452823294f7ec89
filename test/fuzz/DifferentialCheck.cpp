//===- DifferentialCheck.cpp - One program, every way of running it -------===//
//
// For the program's @main, on the inputs of one seed:
//  1. the module survives printing and parsing, and writing and reading as
//     .kfb, with identical text ("round-trip");
//  2. the reference evaluator gives finite floats (else the generator broke
//     its own rules: GeneratorError), and the kiln-fuse result gives
//     exactly the same values on the evaluator ("kiln-fuse");
//  3. native code under each configuration agrees with the evaluator within
//     the configuration's tolerance (the e2e tolerances, kCpuTolerance or
//     with --cuda and --cuda-on-cpu kCudaTolerance);
//  4. with `gradients` (checkGradient): the program in float64, kiln-grad's
//     @main_grad on the evaluator against central differences of @main
//     ("grad"), and @main_grad compiled with the first configuration
//     (-O2 on the CPU; with --cuda-on-cpu, host code at -O0) against the
//     evaluator ("grad-O2").
//
//===----------------------------------------------------------------------===//

#include "DifferentialCheck.h"

#include "E2EInputs.h"
#include "NativeModule.h"
#include "TensorCompare.h"

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/Fusion/Passes.h"
#include "kiln/IR/ModelFile.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <random>

using namespace kiln;
using namespace kiln::test;

std::vector<CheckConfig> kiln::test::checkConfigurations() {
  std::vector<CheckConfig> configs;
  CompileOptions base;
  // A pass that breaks the IR is named, not found by a later one.
  base.verifyEachPass = true;
  configs.push_back({"O2", base});
  CompileOptions noFusion = base;
  noFusion.cpu.fuse = false;
  configs.push_back({"no-fusion", noFusion});
  CompileOptions noDnnl = base;
  noDnnl.cpu.dnnl = false;
  configs.push_back({"no-dnnl", noDnnl});
  CompileOptions o0 = base;
  o0.cpu.optLevel = 0;
  configs.push_back({"O0", o0});
  // One thread: no OpenMP loops at all.
  CompileOptions sequential = base;
  sequential.cpu.parallel = false;
  sequential.cpu.planMemory = false;
  configs.push_back({"sequential,no-plan-memory", sequential});
  // Threads and oneDNN for every loop nest and matmul, however small, so
  // that the small programs exercise those paths too.
  CompileOptions eager = base;
  eager.cpu.parallelMinIterations = 1;
  eager.cpu.dnnlMinMacs = 1;
  configs.push_back({"eager-parallel", eager});
  return configs;
}

/// A CUDA target's configurations, fused (`name`) and not
/// (`name`-no-fusion), with the GPU's tolerances: libdevice's f64 math and
/// the GPU's order of summation differ from the host's in the last bits of
/// the backward sums too (on the host, the kernels still sum in the GPU's
/// order). Each program is called `calls` times.
static std::vector<CheckConfig>
cudaConfigurations(Target target, const std::string &name, int calls) {
  std::vector<CheckConfig> configs;
  for (bool fuse : {true, false}) {
    // On the host (Target::CudaOnCpu), unoptimized host code, as test/e2e
    // compiles it; the CPU backend's optimizations have campaigns of their
    // own.
    CompileOptions options = testCompileOptions(target, fuse);
    configs.push_back({fuse ? name : name + "-no-fusion", options,
                       kCudaTolerance, Tolerance{1e-4, 1e-5, 1e-9}, calls});
  }
  return configs;
}

std::vector<CheckConfig> kiln::test::cudaCheckConfigurations() {
  return cudaConfigurations(Target::Cuda, "cuda", /*calls=*/3);
}

std::vector<CheckConfig> kiln::test::cudaOnCpuCheckConfigurations() {
  return cudaConfigurations(Target::CudaOnCpu, "cuda-on-cpu", /*calls=*/1);
}

namespace {
std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// A context with the compiler's dialects whose diagnostics collect in
/// `diagnostics`.
struct Context {
  Context() : context(registry()) {
    context.loadAllAvailableDialects();
    handler.emplace(&context, [this](mlir::Diagnostic &d) {
      llvm::raw_string_ostream os(diagnostics);
      os << d.getLocation() << ": " << d.str() << "\n";
      return mlir::success();
    });
  }
  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry registry;
    registerCompilerDialects(registry);
    return registry;
  }
  mlir::MLIRContext context;
  std::string diagnostics;
  std::optional<mlir::ScopedDiagnosticHandler> handler;
};

/// A clear refusal: the compiler says what it does not support.
bool mentionsUnsupported(const std::string &message) {
  return message.find("not supported") != std::string::npos ||
         message.find("does not support") != std::string::npos ||
         message.find("unsupported") != std::string::npos;
}

/// The index of the first tensor with a non-finite element, or -1.
int firstNonFinite(const std::vector<HostTensor> &tensors) {
  for (size_t r = 0; r < tensors.size(); ++r)
    for (double x : tensors[r].f)
      if (!std::isfinite(x))
        return static_cast<int>(r);
  return -1;
}

bool allFinite(const std::vector<HostTensor> &tensors) {
  return firstNonFinite(tensors) < 0;
}
} // namespace

DifferentialCheck::DifferentialCheck() : configs(checkConfigurations()) {}

int DifferentialCheck::check(const std::string &text, uint64_t inputSeed) {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &ctx.context);
  if (!module)
    return report("parse", GeneratorError,
                  "does not verify: " + ctx.diagnostics);
  int outcome = 0;

  if (runs("round-trip")) {
    std::string printed = printModule(*module);
    mlir::OwningOpRef<mlir::ModuleOp> reparsed =
        mlir::parseSourceString<mlir::ModuleOp>(printed, &ctx.context);
    if (!reparsed || printModule(*reparsed) != printed)
      outcome |= report("round-trip", Mismatch,
                        "the printed module does not round-trip");
    std::vector<uint8_t> kfb;
    std::string error;
    if (!writeModelFile(*module, kfb, error)) {
      outcome |= report("round-trip", Mismatch, "cannot write .kfb: " + error);
    } else {
      mlir::OwningOpRef<mlir::ModuleOp> read =
          readModelFile(kfb, &ctx.context, error);
      if (!read)
        outcome |=
            report("round-trip", Mismatch, "cannot read .kfb back: " + error);
      else if (printModule(*read) != printed)
        outcome |= report("round-trip", Mismatch,
                          "the module read back from .kfb prints differently");
    }
  }

  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  if (!func)
    return outcome | report("parse", GeneratorError, "no @main");
  std::vector<HostTensor> inputs =
      randomE2EInputs(func.getFunctionType(), inputSeed);
  auto expected = evaluate(func, inputs);
  if (!expected)
    return outcome | report("evaluator", GeneratorError,
                            "the evaluator fails: " +
                                llvm::toString(expected.takeError()));
  if (int r = firstNonFinite(*expected); r >= 0)
    return outcome | report("evaluator", GeneratorError,
                            "output #" + std::to_string(r) +
                                " is not finite");

  // The kiln-fuse result on the evaluator must agree exactly.
  if (runs("kiln-fuse")) {
    mlir::OwningOpRef<mlir::ModuleOp> fused = module->clone();
    mlir::PassManager fusion(&ctx.context);
    fusion.addNestedPass<mlir::func::FuncOp>(mlir::kiln::createFusion());
    if (mlir::failed(fusion.run(*fused))) {
      outcome |= report("kiln-fuse", CompileFailure, "fails: " +
                                                         ctx.diagnostics);
    } else {
      auto fusedFunc = fused->lookupSymbol<mlir::func::FuncOp>("main");
      auto fusedResults = evaluate(fusedFunc, inputs);
      if (!fusedResults) {
        outcome |= report("kiln-fuse", Mismatch,
                          "the evaluator fails on the fused IR: " +
                              llvm::toString(fusedResults.takeError()));
      } else {
        for (size_t r = 0; r < expected->size(); ++r) {
          std::string m = compareTensors((*expected)[r], (*fusedResults)[r],
                                         "the fused IR", nullptr);
          if (!m.empty())
            outcome |= report("kiln-fuse", Mismatch,
                              "output #" + std::to_string(r) + ": " + m);
        }
      }
    }
  }

  for (const CheckConfig &config : configs) {
    if (!runs(config.name))
      continue;
    if (onBegin)
      onBegin(config.name);
    ctx.diagnostics.clear();
    NativeModule native(*module, config.options);
    if (!native.ok()) {
      std::string message = native.error() + " " + ctx.diagnostics;
      bool unsupported = mentionsUnsupported(message);
      outcome |= report(config.name,
                        unsupported ? Unsupported : CompileFailure,
                        (unsupported ? "unsupported: " : "compile failure: ") +
                            message);
      continue;
    }
    for (int call = 1; call <= config.calls; ++call) {
      std::string which =
          config.calls > 1 ? " (call " + std::to_string(call) + ")" : "";
      std::vector<HostTensor> outputs;
      std::string error;
      if (!native.call("main", func, inputs, outputs, error)) {
        outcome |= report(config.name, CompileFailure,
                          "call failure" + which + ": " + error);
        break;
      }
      if (perturb)
        for (HostTensor &t : outputs) {
          if (t.isFloat() && !t.f.empty())
            t.f[0] += 1e-4 * std::fabs(t.f[0]) + 1e-5;
          else if (!t.i.empty())
            t.i[0] ^= 1;
        }
      bool matches = true;
      for (size_t r = 0; r < expected->size(); ++r) {
        std::string m = compareTensors((*expected)[r], outputs[r], config.name,
                                       &config.tolerance);
        if (!m.empty()) {
          matches = false;
          outcome |= report(config.name, Mismatch,
                            "output #" + std::to_string(r) + which + ": " + m);
        }
      }
      if (!matches)
        break;
    }
  }
  if (gradients && (runs("grad") || runs("grad-O2")))
    outcome |= checkGradient(text, inputSeed);
  return outcome;
}

namespace {
/// The program with every f32, f16 and bf16 made f64: central differences
/// need the precision, and the generator's bounds hold in f64 as well.
std::string widened(std::string text) {
  for (const char *narrow : {"bf16>", "f16>", "f32>"}) {
    std::string from = narrow;
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos;)
      text.replace(at, from.size(), "f64>");
  }
  return text;
}

/// The change between two runs of the scalar whose gradient @main_grad
/// computes for cotangents dy, the sum over the float results r of
/// dot(dy[r], y[r]): sum of dy[r][e] * (plus[r][e] - minus[r][e]). Taken
/// element by element, results the step does not move cancel exactly, so a
/// large result elsewhere (a cast of a huge unsigned value) cannot swamp a
/// small change in f64 (seed 4162).
double contractionChange(const std::vector<HostTensor> &plus,
                         const std::vector<HostTensor> &minus,
                         const std::vector<HostTensor> &cotangents) {
  double sum = 0;
  size_t c = 0;
  for (size_t r = 0; r < plus.size(); ++r) {
    if (!plus[r].isFloat())
      continue;
    const HostTensor &dy = cotangents[c++];
    for (size_t e = 0; e < plus[r].f.size(); ++e)
      sum += dy.f[e] * (plus[r].f[e] - minus[r].f[e]);
  }
  return sum;
}
} // namespace

int DifferentialCheck::checkGradient(const std::string &text,
                                     uint64_t inputSeed) {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(widened(text), &ctx.context);
  if (!module)
    return report("grad", GeneratorError,
                  "the program in f64 does not verify: " + ctx.diagnostics);
  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  mlir::FunctionType type = func.getFunctionType();
  auto isFloatTensor = [](mlir::Type t) {
    return mlir::isa<mlir::FloatType>(
        mlir::cast<mlir::RankedTensorType>(t).getElementType());
  };
  if (llvm::none_of(type.getInputs(), isFloatTensor) ||
      llvm::none_of(type.getResults(), isFloatTensor))
    return 0;

  // The inputs of the program as generated, in f64.
  std::vector<HostTensor> inputs = randomE2EInputs(type, inputSeed);
  auto results = evaluate(func, inputs);
  if (!results || !allFinite(*results))
    return 0; // The program itself was checked above.

  mlir::OwningOpRef<mlir::ModuleOp> derived = module->clone();
  mlir::PassManager pm(&ctx.context);
  mlir::kiln::GradOptions options;
  options.functionName = "main";
  pm.addPass(mlir::kiln::createGrad(options));
  ctx.diagnostics.clear();
  if (mlir::failed(pm.run(*derived))) {
    bool unsupported = mentionsUnsupported(ctx.diagnostics) ||
                       ctx.diagnostics.find("no rule") != std::string::npos;
    return report("grad", unsupported ? Unsupported : CompileFailure,
                  "kiln-grad fails: " + ctx.diagnostics);
  }
  auto gradFunc = derived->lookupSymbol<mlir::func::FuncOp>("main_grad");

  // Cotangents uniform in [-1, 1], one per float result.
  std::mt19937 rng(static_cast<unsigned>(inputSeed * 7919 + 17));
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<HostTensor> cotangents;
  for (const HostTensor &y : *results) {
    if (!y.isFloat())
      continue;
    std::vector<double> values(y.f.size());
    for (double &v : values)
      v = unit(rng);
    cotangents.push_back(
        HostTensor::fromFloats(y.elementType, y.shape, values));
  }
  std::vector<HostTensor> gradInputs = inputs;
  gradInputs.insert(gradInputs.end(), cotangents.begin(), cotangents.end());
  auto gradResults = evaluate(gradFunc, gradInputs);
  if (!gradResults)
    return report("grad", Mismatch,
                  "the evaluator fails on @main_grad: " +
                      llvm::toString(gradResults.takeError()));
  if (!allFinite(*gradResults))
    return report("grad", Mismatch, "a gradient is not finite");
  int outcome = 0;
  auto count = [&](const char *what, unsigned n) {
    if (onCount)
      onCount(what, n);
  };
  count("programs", 1);

  // Central differences of the contraction, at two step sizes: where they
  // disagree, the step crossed a kink or a jump (a max, a select, a floor)
  // and the element says nothing about the gradient.
  if (runs("grad")) {
    int64_t largest = 0;
    for (const HostTensor &x : inputs)
      largest = std::max<int64_t>(largest, x.f.size() + x.i.size());
    unsigned perArgument = largest > 4096 ? 2 : 6;
    size_t dx = results->size();
    for (size_t a = 0; a < inputs.size(); ++a) {
      if (!inputs[a].isFloat())
        continue;
      const HostTensor &gradient = (*gradResults)[dx++];
      size_t n = inputs[a].f.size();
      for (unsigned k = 0; k < std::min<size_t>(n, perArgument); ++k) {
        size_t e = n <= perArgument ? k : rng() % n;
        double x0 = inputs[a].f[e];
        auto difference = [&](double h) -> std::optional<double> {
          std::vector<HostTensor> sides[2];
          for (int s = 0; s < 2; ++s) {
            std::vector<HostTensor> moved = inputs;
            moved[a].f[e] = x0 + (s ? -h : h);
            auto y = evaluate(func, moved);
            if (!y || !allFinite(*y))
              return std::nullopt;
            sides[s] = std::move(*y);
          }
          return contractionChange(sides[0], sides[1], cotangents) / (2 * h);
        };
        double scale = std::max(1.0, std::fabs(x0));
        std::optional<double> coarse = difference(1e-4 * scale);
        std::optional<double> fine = difference(1e-5 * scale);
        if (!coarse || !fine ||
            std::fabs(*coarse - *fine) > 1e-5 * (1 + std::fabs(*fine))) {
          count("kinks", 1);
          continue;
        }
        count("elements", 1);
        double g = gradient.f[e];
        if (perturb)
          g += 1e-4 * (1 + std::fabs(g));
        if (std::fabs(g - *fine) > 1e-5 * (1 + std::fabs(*fine))) {
          char detail[160];
          std::snprintf(detail, sizeof detail,
                        "d/d arg%zu[%zu]: kiln-grad %.9g, central "
                        "differences %.9g",
                        a, e, g, *fine);
          outcome |= report("grad", Mismatch, detail);
          break;
        }
      }
    }
  }

  // The derived program compiled, against the evaluator.
  if (runs("grad-O2")) {
    if (onBegin)
      onBegin("grad-O2");
    ctx.diagnostics.clear();
    NativeModule native(*derived, configs.front().options);
    std::vector<HostTensor> outputs;
    std::string error;
    if (!native.ok()) {
      std::string message = native.error() + " " + ctx.diagnostics;
      bool unsupported = mentionsUnsupported(message);
      outcome |= report("grad-O2", unsupported ? Unsupported : CompileFailure,
                        "compile failure: " + message);
    } else if (!native.call("main_grad", gradFunc, gradInputs, outputs,
                            error)) {
      outcome |= report("grad-O2", CompileFailure, "call failure: " + error);
    } else {
      const Tolerance &gradTolerance = configs.front().gradTolerance;
      if (perturb)
        for (HostTensor &t : outputs)
          if (!t.f.empty())
            t.f[0] += 1e-6 * std::fabs(t.f[0]) + 1e-6;
      for (size_t r = 0; r < gradResults->size(); ++r) {
        std::string m = compareTensors((*gradResults)[r], outputs[r],
                                       "grad-O2", &gradTolerance);
        if (!m.empty()) {
          outcome |= report("grad-O2", Mismatch,
                            "output #" + std::to_string(r) + ": " + m);
          break;
        }
      }
    }
  }
  return outcome;
}
