//===- kiln-compile.cpp - Ahead-of-time compiler driver -------------------===//
//
// kiln-compile model.mlir -o model.kmod [--emit=mlir|llvm|obj|kmod|kfb|ptx]
//                                        [-O0..3] [--no-fusion]
//                                        [--target=cpu|cuda] [--cuda-arch=sm_XX]
//                                        [--no-dnnl] [--no-parallel]
//                                        [--memory-report]
//
// The input is MLIR text or a .kfb model file (recognized by its file
// identifier, whatever its name).
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"
#include "kiln/IR/ModelFile.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"

using namespace llvm;

namespace {
/// kiln-compile's own options; --help lists only these (the LLVM and MLIR
/// options linked in are hidden but still accepted).
cl::OptionCategory compileCategory("kiln-compile options");

enum class Emit { Mlir, Llvm, Obj, Kmod, Kfb, Ptx };

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<model.mlir or model.kfb>"),
                                   cl::Required,
    cl::cat(compileCategory));
cl::opt<std::string> outputFilename("o", cl::desc("Output file ('-' for stdout)"),
                                    cl::value_desc("file"),
    cl::cat(compileCategory));
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Kmod),
    cl::values(clEnumValN(Emit::Mlir, "mlir",
                          "MLIR in the LLVM dialect, after the whole lowering"),
               clEnumValN(Emit::Llvm, "llvm", "optimized LLVM IR"),
               clEnumValN(Emit::Obj, "obj", "a relocatable object file"),
               clEnumValN(Emit::Kmod, "kmod",
                          "a module for the runtime (default)"),
               clEnumValN(Emit::Kfb, "kfb",
                          "the input model as a .kfb file, not compiled"),
               clEnumValN(Emit::Ptx, "ptx",
                          "the PTX of the kernels (--target=cuda)")),
    cl::cat(compileCategory));
cl::opt<std::string>
    target("target",
           cl::desc("Target: 'cpu' (the host CPU, default) or 'cuda' (host "
                    "code for the host CPU that launches PTX kernels)"),
           cl::init("cpu"),
    cl::cat(compileCategory));
cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("GPU architecture for --target=cuda: sm_70, sm_75, "
                      "sm_80 (default), sm_86, sm_89 or sm_90"),
             cl::init("sm_80"),
    cl::cat(compileCategory));
cl::opt<std::string> targetCpu("target-cpu",
                               cl::desc("CPU to generate code for: 'host' (this machine, the "
                                        "default) or an LLVM CPU name such as "
                                        "x86-64-v3 or skylake-avx512"),
                               cl::init("host"),
    cl::cat(compileCategory));
cl::opt<unsigned> optLevel("O", cl::desc("Optimization level 0-3 (default 2)"),
                           cl::Prefix, cl::init(2),
    cl::cat(compileCategory));
cl::opt<bool> noFusion(
    "no-fusion",
    cl::desc("Do not fuse ops (kiln-fuse and the linalg fusion of its "
             "regions): every op becomes its own loop nest"),
    cl::init(false),
    cl::cat(compileCategory));
cl::opt<bool> noDnnl(
    "no-dnnl",
    cl::desc("Generate loops for f32 matmuls instead of calling oneDNN's "
             "sgemm"),
    cl::init(false),
    cl::cat(compileCategory));
cl::opt<bool> noParallel(
    "no-parallel",
    cl::desc("Run every loop on the calling thread (no OpenMP parallel "
             "loops)"),
    cl::init(false),
    cl::cat(compileCategory));

cl::opt<bool> memoryReport(
    "memory-report",
    cl::desc("Print, per function, the bytes of its intermediate buffers "
             "summed and the bytes of the arenas they were planned into "
             "(--target=cuda: the device arena of each function)"),
    cl::init(false),
    cl::cat(compileCategory));

bool writeBytes(StringRef path, ArrayRef<char> bytes) {
  std::string error;
  auto output = mlir::openOutputFile(path, &error);
  if (!output) {
    errs() << "kiln-compile: " << error << "\n";
    return false;
  }
  output->os().write(bytes.data(), bytes.size());
  output->keep();
  return true;
}

std::string defaultOutput() {
  if (emit == Emit::Mlir || emit == Emit::Llvm || emit == Emit::Ptx)
    return "-";
  StringRef stem = sys::path::stem(inputFilename);
  StringRef extension = emit == Emit::Obj   ? ".o"
                        : emit == Emit::Kfb ? ".kfb"
                                            : ".kmod";
  return (stem + extension).str();
}

/// Loads the input as a .kfb model file if it carries the .kfb identifier
/// (or is named *.kfb, so that a damaged one gets the reader's diagnosis),
/// and as MLIR text otherwise.
mlir::OwningOpRef<mlir::ModuleOp> loadInput(llvm::SourceMgr &sourceMgr,
                                            mlir::MLIRContext &context) {
  std::string error;
  auto file = mlir::openInputFile(inputFilename, &error);
  if (!file) {
    errs() << "kiln-compile: " << error << "\n";
    return nullptr;
  }
  ArrayRef<uint8_t> bytes = arrayRefFromStringRef(file->getBuffer());
  if (kiln::isModelFile(bytes) ||
      sys::path::extension(inputFilename) == ".kfb") {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        kiln::readModelFile(bytes, &context, error, inputFilename);
    if (!module)
      errs() << "kiln-compile: " << inputFilename << ": " << error << "\n";
    return module;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "kiln ahead-of-time compiler: compiles the public functions of a kiln "
      "module (.mlir or .kfb) to native code for the host CPU (or, with "
      "--target=cuda, host code plus PTX kernels) and writes a "
      "module for the runtime (.kmod), or an intermediate form with "
      "--emit.\n");
  if (target != "cpu" && target != "cuda") {
    errs() << "kiln-compile: unknown target '" << target
           << "' (supported: cpu, cuda)\n";
    return 1;
  }
  std::string ptxFeature;
  if (target == "cuda" &&
      !mlir::kiln::isSupportedCudaArch(cudaArch, ptxFeature)) {
    errs() << "kiln-compile: unsupported CUDA architecture '" << cudaArch
           << "' (supported: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90)\n";
    return 1;
  }
  if (emit == Emit::Ptx && target != "cuda") {
    errs() << "kiln-compile: --emit=ptx needs --target=cuda\n";
    return 1;
  }
  if (optLevel > 3) {
    errs() << "kiln-compile: -O" << optLevel << " is not a level (0-3)\n";
    return 1;
  }

  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module = loadInput(sourceMgr, context);
  if (!module)
    return 1;

  kiln::CompileOptions options;
  options.cpu.optLevel = optLevel;
  options.cpu.cpu = targetCpu;
  options.cpu.fuse = !noFusion;
  options.target =
      target == "cuda" ? kiln::Target::Cuda : kiln::Target::Cpu;
  options.cuda.arch = cudaArch;
  options.cuda.fuse = !noFusion;
  options.cpu.dnnl = !noDnnl;
  options.cpu.parallel = !noParallel;
  options.cpu.memoryReport = memoryReport;
  options.cuda.memoryReport = memoryReport;
  options.configurePassManager = [](mlir::PassManager &pm) {
    (void)mlir::applyPassManagerCLOptions(pm);
  };
  std::string output =
      outputFilename.empty() ? defaultOutput() : outputFilename.getValue();

  if (emit == Emit::Kfb) {
    std::vector<uint8_t> kfb;
    if (!kiln::writeModelFile(*module, kfb, error)) {
      errs() << "kiln-compile: " << error << "\n";
      return 1;
    }
    return writeBytes(output, ArrayRef<char>(
                                  reinterpret_cast<const char *>(kfb.data()),
                                  kfb.size()))
               ? 0
               : 1;
  }

  if (emit == Emit::Kmod) {
    std::vector<uint8_t> kmod;
    if (!kiln::compileToKmod(*module, options, kmod, error)) {
      errs() << "kiln-compile: " << error << "\n";
      return 1;
    }
    return writeBytes(output, ArrayRef<char>(
                                  reinterpret_cast<const char *>(kmod.data()),
                                  kmod.size()))
               ? 0
               : 1;
  }

  std::vector<kiln::format::FunctionSignature> signatures;
  if (!kiln::collectSignatures(*module, signatures, error)) {
    errs() << "kiln-compile: " << error << "\n";
    return 1;
  }
  if (failed(kiln::lowerToLLVMDialect(*module, options)))
    return 1;
  if (emit == Emit::Ptx) {
    std::string ptx;
    if (!mlir::kiln::extractPtx(*module, ptx, error)) {
      errs() << "kiln-compile: " << error << "\n";
      return 1;
    }
    return writeBytes(output, ArrayRef<char>(ptx.data(), ptx.size())) ? 0 : 1;
  }
  if (emit == Emit::Mlir) {
    std::string text;
    raw_string_ostream os(text);
    module->print(os);
    return writeBytes(output, ArrayRef<char>(text.data(), text.size())) ? 0 : 1;
  }
  LLVMContext llvmContext;
  std::unique_ptr<Module> llvmModule =
      kiln::translateHostCode(*module, llvmContext, options, error);
  if (!llvmModule) {
    errs() << "kiln-compile: " << error << "\n";
    return 1;
  }
  if (emit == Emit::Llvm) {
    std::string text;
    raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    return writeBytes(output, ArrayRef<char>(text.data(), text.size())) ? 0 : 1;
  }
  SmallVector<char, 0> object;
  if (!mlir::kiln::emitObject(*llvmModule, options.cpu, object, error)) {
    errs() << "kiln-compile: " << error << "\n";
    return 1;
  }
  return writeBytes(output, object) ? 0 : 1;
}
