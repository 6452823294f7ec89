//===- kiln-translate.cpp - Converting between .mlir and .kfb -------------===//
//
// kiln-translate --mlir-to-kfb model.mlir -o model.kfb
// kiln-translate --kfb-to-mlir model.kfb -o model.mlir
// kiln-translate --onnx-to-mlir model.onnx [--input-shape NAME=DIMS]...
//                [--bind-input NAME=VALUE]... -o model.mlir
//
// A thin driver over kiln/IR/ModelFile.h and kiln/Onnx/Import.h. The MLIR it prints is what
// kiln-opt would print for the same module, so the two can be compared.
// Exit status 1 for a bad input or a file that cannot be read or written,
// 2 for a malformed command line.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/ModelFile.h"
#include "kiln/Onnx/Import.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace llvm;

namespace {
/// kiln-translate's own options; --help lists only these.
cl::OptionCategory translateCategory("kiln-translate options");

enum class Direction { Unset, MlirToKfb, KfbToMlir, OnnxToMlir };

cl::opt<Direction>
    direction(cl::desc("Conversion:"), cl::init(Direction::Unset),
              cl::values(clEnumValN(Direction::MlirToKfb, "mlir-to-kfb",
                                    "MLIR text to a .kfb model file"),
                         clEnumValN(Direction::KfbToMlir, "kfb-to-mlir",
                                    "a .kfb model file to MLIR text"),
                         clEnumValN(Direction::OnnxToMlir, "onnx-to-mlir",
                                    "an ONNX model to kiln IR as MLIR text")),
    cl::cat(translateCategory));
cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input>"),
                                   cl::init("-"),
    cl::cat(translateCategory));
cl::opt<std::string> outputFilename("o",
                                    cl::desc("Output file ('-' for stdout)"),
                                    cl::value_desc("file"), cl::init("-"),
    cl::cat(translateCategory));

cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("With --onnx-to-mlir: the shape of a graph input, e.g. "
             "--input-shape input=1x3x224x224 (repeatable)"),
    cl::value_desc("NAME=DIMS"), cl::cat(translateCategory));

cl::list<std::string> bindInputs(
    "bind-input",
    cl::desc("With --onnx-to-mlir: make a graph input a compile-time "
             "constant, e.g. --bind-input shape=1,3,224,224 or "
             "--bind-input mask=mask.npy (repeatable)"),
    cl::value_desc("NAME=VALUE|NAME=FILE.npy"), cl::cat(translateCategory));

cl::extrahelp exitStatusHelp(R"(
EXIT STATUS:
  0 on success; 1 if the input cannot be read or is not a valid module, or
  the output cannot be written; 2 for a malformed command line (an unknown
  option, no or two conversions, a bad option value).
)");

/// Exit statuses: errors in the input or the files, and a malformed command
/// line.
constexpr int kFailure = 1;
constexpr int kUsageError = 2;

int fail(const Twine &message) {
  errs() << "kiln-translate: error: " << message << "\n";
  return kFailure;
}

int writeOutput(StringRef bytes) {
  std::string error;
  std::unique_ptr<ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  output->os() << bytes;
  output->keep();
  return 0;
}

int mlirToKfb(mlir::MLIRContext &context, std::unique_ptr<MemoryBuffer> input) {
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  sourceMgr.AddNewSourceBuffer(std::move(input), SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return kFailure;
  std::vector<uint8_t> bytes;
  std::string error;
  if (!kiln::writeModelFile(*module, bytes, error))
    return fail(error);
  return writeOutput(toStringRef(bytes));
}

int printModule(mlir::ModuleOp module) {
  std::string text;
  raw_string_ostream os(text);
  module->print(os);
  // kiln-opt ends its output with a newline too.
  os << "\n";
  return writeOutput(text);
}

int kfbToMlir(mlir::MLIRContext &context, std::unique_ptr<MemoryBuffer> input) {
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      kiln::readModelFile(arrayRefFromStringRef(input->getBuffer()), &context,
                          error, input->getBufferIdentifier());
  if (!module)
    return fail(input->getBufferIdentifier() + ": " + error);
  return printModule(*module);
}

int onnxToMlir(mlir::MLIRContext &context) {
  kiln::OnnxImportOptions options;
  std::string error;
  if (!kiln::parseOnnxImportOptions(inputShapes, bindInputs, options, error))
    return fail(error);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      inputFilename == "-"
          ? nullptr
          : kiln::importOnnxFile(inputFilename, context, options, error);
  if (inputFilename == "-") {
    std::unique_ptr<MemoryBuffer> input =
        mlir::openInputFile(inputFilename, &error);
    if (!input)
      return fail(error);
    module = kiln::importOnnxBytes(input->getBuffer(), "", "<stdin>", context,
                                   options, error);
  }
  if (!module)
    return fail(error);
  return printModule(*module);
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(translateCategory);
  // With an error stream the parser reports bad options and returns instead
  // of exiting with status 1.
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "kiln-translate: converts kiln modules between MLIR text and the "
          ".kfb model format, and imports ONNX models as kiln IR\n",
          &errs()))
    return kUsageError;

  if (direction == Direction::Unset || direction.getNumOccurrences() > 1) {
    errs() << "kiln-translate: error: give one of --mlir-to-kfb, --kfb-to-mlir and "
              "--onnx-to-mlir\n";
    return kUsageError;
  }

  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);

  if ((!inputShapes.empty() || !bindInputs.empty()) &&
      direction != Direction::OnnxToMlir) {
    errs() << "kiln-translate: error: --input-shape and --bind-input apply to "
              "--onnx-to-mlir only\n";
    return kUsageError;
  }
  if (direction == Direction::OnnxToMlir)
    return onnxToMlir(context);

  std::string error;
  std::unique_ptr<MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);
  return direction == Direction::MlirToKfb
             ? mlirToKfb(context, std::move(input))
             : kfbToMlir(context, std::move(input));
}
