//===- kiln-opt.cpp - mlir-opt for the kiln dialect -----------------------===//
//
// Parses kiln (and upstream) IR, runs the passes named on the command line
// and prints the result; the driver of the lit tests.
//
// The options are those of mlir-opt (MlirOptMain), parsed here rather than
// by MlirOptMain so that a malformed command line exits with status 2, as
// in the other kiln tools, instead of LLVM's 1.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Cuda.h"
#include "kiln/Backends/Passes.h"
#include "kiln/Fusion/Passes.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/Passes/Passes.h"

#include "mlir/Debug/Counter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace cl = llvm::cl;

namespace {
cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input file>"),
                                   cl::init("-"));
cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                    cl::value_desc("filename"), cl::init("-"));

cl::extrahelp exitStatusHelp(R"(
EXIT STATUS:
  0 on success; 1 if the input cannot be read, does not parse or verify, a
  pass fails, --verify-diagnostics finds a mismatch or the output cannot be
  written; 2 for a malformed command line (an unknown option or pass, a bad
  option value).
)");

/// Exit status for a malformed command line.
constexpr int kUsageError = 2;
} // namespace

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::kiln::registerKilnBackendsPasses();
  mlir::kiln::registerKilnPasses();
  mlir::kiln::registerKilnFusionPasses();
  mlir::kiln::registerCpuPipelines();
  mlir::kiln::registerCudaPipelines();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::kiln::KilnDialect>();
  mlir::kiln::registerCollectiveBufferizationModels(registry);

  // The options MlirOptMain registers, and its --help header.
  mlir::MlirOptMainConfig::registerCLOptions(registry);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::tracing::DebugCounter::registerCLOptions();
  std::string helpHeader = "kiln optimizer driver\nAvailable Dialects: ";
  {
    llvm::raw_string_ostream os(helpHeader);
    llvm::interleaveComma(registry.getDialectNames(), os);
  }
  // With an error stream the parser reports bad options and returns instead
  // of exiting with status 1.
  if (!cl::ParseCommandLineOptions(argc, argv, helpHeader, &llvm::errs()))
    return kUsageError;
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
