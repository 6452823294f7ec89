//===- ProgramFuzz.cpp - kiln-program-fuzz: random programs, differential -===//
//
// For each seed of a range:
//  1. generate a program (ProgramGenerator.h) and parse it; a program that
//     does not parse and verify is a generator error;
//  2. check that the module survives printing and parsing, and writing and
//     reading as .kfb, with identical text;
//  3. draw random inputs (randomE2EInput) and evaluate @main with the
//     reference evaluator, which must give finite floats (else the
//     generator broke its own rules), and evaluate the kiln-fuse result,
//     which must give exactly the same values;
//  4. compile the program with the CPU backend under each configuration,
//     call it, and compare every output with the evaluator's within the e2e
//     tolerance (kCpuTolerance).
// Each program runs in a child process, so that a crash or a hang in the
// compiler is reported for its seed and the campaign goes on.
//
//===----------------------------------------------------------------------===//

#include "E2EInputs.h"
#include "NativeModule.h"
#include "ProgramGenerator.h"
#include "TensorCompare.h"

#include "kiln/Compiler/Driver.h"
#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/Fusion/Passes.h"
#include "kiln/IR/ModelFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace kiln;
using namespace kiln::test;

namespace {

/// What went wrong with one program; the child's exit status is their OR.
enum Outcome : int {
  Mismatch = 1,
  CompileFailure = 2,
  Unsupported = 4,
  GeneratorError = 8,
};

struct Config {
  const char *name;
  CompileOptions options;
};

std::vector<Config> configurations() {
  std::vector<Config> configs;
  CompileOptions base;
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

std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

struct Checker {
  bool verbose = false;
  /// Moves the first element of every native output a little (--perturb),
  /// to show that the comparison notices.
  bool perturb = false;
  GeneratorOptions generator;
  std::string keepDir;
  std::vector<Config> configs = configurations();

  /// Checks `text`, or the program of `seed` where `text` is empty;
  /// `seed` also seeds the inputs.
  int check(uint64_t seed, std::string text = "");
  void report(uint64_t seed, const std::string &what,
              const std::string &detail) {
    std::printf("seed %llu: %s: %s\n", (unsigned long long)seed, what.c_str(),
                detail.c_str());
    std::fflush(stdout);
  }
  void keep(uint64_t seed, const std::string &text) {
    if (keepDir.empty())
      return;
    std::ofstream(keepDir + "/seed-" + std::to_string(seed) + ".mlir")
        << text;
  }
};

int Checker::check(uint64_t seed, std::string text) {
  if (text.empty())
    text = generateProgram(seed, generator);
  if (verbose)
    std::printf("--- seed %llu\n%s", (unsigned long long)seed, text.c_str());

  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  });

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module) {
    keep(seed, text);
    report(seed, "generator error", "does not verify: " + diagnostics);
    return GeneratorError;
  }
  int outcome = 0;

  // Round trips: text and .kfb.
  std::string printed = printModule(*module);
  mlir::OwningOpRef<mlir::ModuleOp> reparsed =
      mlir::parseSourceString<mlir::ModuleOp>(printed, &context);
  if (!reparsed || printModule(*reparsed) != printed) {
    report(seed, "print/parse", "the printed module does not round-trip");
    outcome |= Mismatch;
  }
  std::vector<uint8_t> kfb;
  std::string error;
  if (!writeModelFile(*module, kfb, error)) {
    report(seed, "kfb", "cannot write: " + error);
    outcome |= Mismatch;
  } else {
    mlir::OwningOpRef<mlir::ModuleOp> read =
        readModelFile(kfb, &context, error);
    if (!read)
      report(seed, "kfb", "cannot read back: " + error);
    else if (printModule(*read) != printed)
      report(seed, "kfb", "the module read back prints differently");
    if (!read || printModule(*read) != printed)
      outcome |= Mismatch;
  }

  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  std::vector<HostTensor> inputs =
      randomE2EInputs(func.getFunctionType(), seed);
  auto expected = evaluate(func, inputs);
  if (!expected) {
    keep(seed, text);
    report(seed, "generator error",
           "the evaluator fails: " + llvm::toString(expected.takeError()));
    return outcome | GeneratorError;
  }
  for (size_t r = 0; r < expected->size(); ++r) {
    const HostTensor &t = (*expected)[r];
    if (t.isFloat())
      for (double x : t.f)
        if (!std::isfinite(x)) {
          keep(seed, text);
          report(seed, "generator error",
                 "output #" + std::to_string(r) + " is not finite");
          return outcome | GeneratorError;
        }
  }

  // The kiln-fuse result on the evaluator must agree exactly.
  mlir::OwningOpRef<mlir::ModuleOp> fused = module->clone();
  mlir::PassManager fusion(&context);
  fusion.addNestedPass<mlir::func::FuncOp>(mlir::kiln::createFusion());
  if (mlir::failed(fusion.run(*fused))) {
    report(seed, "kiln-fuse", "fails: " + diagnostics);
    outcome |= CompileFailure;
  } else {
    auto fusedFunc = fused->lookupSymbol<mlir::func::FuncOp>("main");
    auto fusedResults = evaluate(fusedFunc, inputs);
    if (!fusedResults) {
      report(seed, "kiln-fuse",
             "the evaluator fails on the fused IR: " +
                 llvm::toString(fusedResults.takeError()));
      outcome |= Mismatch;
    } else {
      for (size_t r = 0; r < expected->size(); ++r) {
        std::string m = compareTensors((*expected)[r], (*fusedResults)[r],
                                       "the fused IR", nullptr);
        if (!m.empty()) {
          report(seed, "kiln-fuse",
                 "output #" + std::to_string(r) + ": " + m);
          outcome |= Mismatch;
        }
      }
    }
  }

  for (const Config &config : configs) {
    diagnostics.clear();
    NativeModule native(*module, config.options);
    if (!native.ok()) {
      std::string message = native.error() + " " + diagnostics;
      bool unsupported = message.find("not supported") != std::string::npos ||
                         message.find("unsupported") != std::string::npos;
      report(seed, config.name,
             std::string(unsupported ? "unsupported: " : "compile failure: ") +
                 message);
      outcome |= unsupported ? Unsupported : CompileFailure;
      continue;
    }
    std::vector<HostTensor> outputs;
    if (!native.call("main", func, inputs, outputs, error)) {
      report(seed, config.name, "call failure: " + error);
      outcome |= CompileFailure;
      continue;
    }
    if (perturb)
      for (HostTensor &t : outputs) {
        if (t.isFloat() && !t.f.empty())
          t.f[0] += 1e-4 * std::fabs(t.f[0]) + 1e-5;
        else if (!t.i.empty())
          t.i[0] ^= 1;
      }
    for (size_t r = 0; r < expected->size(); ++r) {
      std::string m = compareTensors((*expected)[r], outputs[r], config.name,
                                     &kCpuTolerance);
      if (!m.empty()) {
        report(seed, config.name, "output #" + std::to_string(r) + ": " + m);
        outcome |= Mismatch;
      }
    }
  }
  if (outcome)
    keep(seed, text);
  return outcome;
}

bool parseSeeds(const char *text, uint64_t &begin, uint64_t &end) {
  const char *colon = std::strchr(text, ':');
  if (!colon)
    return false;
  char *stop = nullptr;
  begin = std::strtoull(text, &stop, 10);
  if (stop != colon)
    return false;
  end = std::strtoull(colon + 1, &stop, 10);
  return *stop == '\0' && begin <= end;
}

void usage() {
  std::fprintf(
      stderr,
      "usage: kiln-program-fuzz --seeds A:B [--keep DIR] [--verbose]\n"
      "                         [--print SEED] [--timeout SECONDS] [--perturb]\n"
      "                         [--large-percent P] [--max-ops N]\n"
      "       kiln-program-fuzz --file PROGRAM.mlir [--seeds A:B]\n"
      "Generates one random kiln program per seed in [A, B), evaluates it\n"
      "with the reference evaluator and compares the CPU backend's results\n"
      "under several option sets. --keep writes each failing program to\n"
      "DIR/seed-N.mlir; --print writes one program to stdout and exits;\n"
      "--file checks one program (its @main) the same way, on the inputs\n"
      "of seeds A to B (default 0:1), in this process.\n"
      "--large-percent and --max-ops change the generator's options (the\n"
      "share of programs with a shape of more than 65536 elements, 8 by\n"
      "default; the most ops per program, 24 by default).\n"
      "--perturb moves one element of each native output slightly, which\n"
      "must be reported as a mismatch (a check of the checker).\n"
      "Exit status 1 on any mismatch, compile failure or generator error.\n");
}

} // namespace

int main(int argc, char **argv) {
  Checker checker;
  uint64_t begin = 0, end = 0;
  bool haveSeeds = false;
  std::vector<uint64_t> printSeeds;
  std::string file;
  unsigned timeout = 120;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seeds" && i + 1 < argc) {
      if (!parseSeeds(argv[++i], begin, end)) {
        std::fprintf(stderr, "kiln-program-fuzz: --seeds takes A:B, A <= B\n");
        return 2;
      }
      haveSeeds = true;
    } else if (arg == "--keep" && i + 1 < argc) {
      checker.keepDir = argv[++i];
    } else if (arg == "--timeout" && i + 1 < argc) {
      timeout = std::strtoul(argv[++i], nullptr, 10);
    } else if (arg == "--print" && i + 1 < argc) {
      printSeeds.push_back(std::strtoull(argv[++i], nullptr, 10));
    } else if (arg == "--large-percent" && i + 1 < argc) {
      checker.generator.largeShapePercent = std::strtoul(argv[++i], nullptr, 10);
    } else if (arg == "--max-ops" && i + 1 < argc) {
      checker.generator.maxOps = std::strtoul(argv[++i], nullptr, 10);
      checker.generator.minOps =
          std::min(checker.generator.minOps, checker.generator.maxOps);
    } else if (arg == "--file" && i + 1 < argc) {
      std::ifstream in(argv[++i]);
      std::stringstream buffer;
      buffer << in.rdbuf();
      file = buffer.str();
      if (file.empty()) {
        std::fprintf(stderr, "kiln-program-fuzz: cannot read %s\n", argv[i]);
        return 2;
      }
    } else if (arg == "--perturb") {
      checker.perturb = true;
    } else if (arg == "--verbose") {
      checker.verbose = true;
    } else {
      usage();
      return 2;
    }
  }
  for (uint64_t seed : printSeeds)
    std::fputs(generateProgram(seed, checker.generator).c_str(), stdout);
  if (!printSeeds.empty())
    return 0;
  if (!file.empty()) {
    // A program by hand (e.g. a reduced one), on the inputs of each seed.
    if (!haveSeeds)
      end = 1;
    int outcome = 0;
    for (uint64_t seed = begin; seed < end; ++seed)
      outcome |= checker.check(seed, file);
    std::printf("%s\n", outcome ? "FAIL" : "PASS");
    return outcome ? 1 : 0;
  }
  if (!haveSeeds) {
    usage();
    return 2;
  }

  unsigned programs = 0, mismatches = 0, compileFailures = 0,
           unsupported = 0, generatorErrors = 0;
  for (uint64_t seed = begin; seed < end; ++seed) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 2;
    }
    if (pid == 0) {
      alarm(timeout);
      int outcome = checker.check(seed);
      std::fflush(stdout);
      _exit(outcome);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ++programs;
    int outcome = 0;
    if (WIFEXITED(status)) {
      outcome = WEXITSTATUS(status);
    } else {
      int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      std::printf("seed %llu: %s (signal %d)\n", (unsigned long long)seed,
                  sig == SIGALRM ? "timeout" : "crash", sig);
      if (!checker.keepDir.empty())
        checker.keep(seed, generateProgram(seed, checker.generator));
      outcome = CompileFailure;
    }
    mismatches += (outcome & Mismatch) != 0;
    compileFailures += (outcome & CompileFailure) != 0;
    unsupported += (outcome & Unsupported) != 0;
    generatorErrors += (outcome & GeneratorError) != 0;
  }
  std::printf("programs %u, mismatches %u, compile failures %u, "
              "unsupported %u, generator errors %u\n",
              programs, mismatches, compileFailures, unsupported,
              generatorErrors);
  return mismatches + compileFailures + generatorErrors > 0 ? 1 : 0;
}
