//===- kiln-compile.cpp - Ahead-of-time compiler driver -------------------===//
//
// kiln-compile model.mlir -o model.kmod [--emit=mlir|llvm|obj|kmod|kfb|ptx]
//              model.onnx               [--input-shape NAME=1x3x224x224]...
//                                        [-O0..3] [--no-fusion]
//                                        [--target=cpu|cuda|cuda-on-cpu]
//                                        [--cuda-arch=sm_XX|native]
//                                        [--no-dnnl] [--conv-layouts=...]
//                                        [--packed-matmuls=...]
//                                        [--outline-loop-nests=N]
//                                        [--no-parallel]
//                                        [--concurrent-threads=N]
//                                        [--memory-report] [--profile]
//                                        [--autocast=bf16|f16]
//
// Only options and files: the options are parsed, the input is read (MLIR
// text or a .kfb model file, recognized by its file identifier whatever its
// name, or an ONNX model, named *.onnx, through kiln/Onnx/Import.h),
// kiln::compileModule (kiln/Compiler/Driver.h) produces the --emit
// kind and the bytes are written. Exit status 1 for errors in the input, the
// compilation or the files, 2 for a malformed command line.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/Driver.h"
#include "kiln/IR/ModelFile.h"
#include "kiln/Onnx/Import.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
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

using kiln::EmitKind;

/// Exit statuses: errors in the input, the compilation or the files, and a
/// malformed command line.
constexpr int kFailure = 1;
constexpr int kUsageError = 2;

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<model.mlir, model.kfb or model.onnx>"),
                                   cl::Required,
    cl::cat(compileCategory));
cl::opt<std::string> outputFilename("o",
                                    cl::desc("Output file ('-' for stdout; "
                                             "default: stdout for mlir, llvm "
                                             "and ptx, <input stem>.kmod, .o "
                                             "or .kfb otherwise)"),
                                    cl::value_desc("file"),
    cl::cat(compileCategory));
cl::opt<EmitKind> emit(
    "emit", cl::desc("What to produce"), cl::init(EmitKind::Kmod),
    cl::values(clEnumValN(EmitKind::Mlir, "mlir",
                          "MLIR in the LLVM dialect, after the whole lowering"),
               clEnumValN(EmitKind::Llvm, "llvm",
                          "optimized LLVM IR (constants of 4 KiB and more "
                          "are in the module's constant pool, not here)"),
               clEnumValN(EmitKind::Obj, "obj",
                          "a relocatable object file (without the constant "
                          "pool, like llvm)"),
               clEnumValN(EmitKind::Kmod, "kmod",
                          "a module for the runtime (default)"),
               clEnumValN(EmitKind::Kfb, "kfb",
                          "the input model as a .kfb file, not compiled"),
               clEnumValN(EmitKind::Ptx, "ptx",
                          "the PTX of the kernels (--target=cuda)")),
    cl::cat(compileCategory));
cl::opt<std::string>
    target("target",
           cl::desc("Target: 'cpu' (the host CPU, default), 'cuda' (host "
                    "code for the host CPU that launches PTX kernels) or "
                    "'cuda-on-cpu' (the CUDA target's program with its "
                    "kernels' bodies run on the host, once per GPU thread: "
                    "a module for the CPU that checks the generated "
                    "kernels without a GPU; no library calls or graphs)"),
           cl::init("cpu"), cl::cat(compileCategory));
cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("GPU architecture for --target=cuda: sm_70, sm_75, "
                      "sm_80 (default), sm_86, sm_89 or sm_90, or 'native', "
                      "the newest of these this machine's GPU runs"),
             cl::init("sm_80"), cl::cat(compileCategory));
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
    cl::desc("Generate loops for f32 and bf16 matmuls and f32 convolutions "
             "instead of calling oneDNN"),
    cl::init(false),
    cl::cat(compileCategory));
cl::opt<std::string> convLayouts(
    "conv-layouts",
    cl::desc("The memory order of the activations of oneDNN convolutions: "
             "'query' (what oneDNN's fastest implementation on this CPU "
             "wants: channels-last, or its blocked layout kept from one "
             "convolution to the next where one of its kernels reads and "
             "writes it as it is, or else channels-last where one reads "
             "and writes that as it is; the default), 'channels-last' "
             "(reordered into oneDNN's layouts inside each call), "
             "'channels-last-direct' (read and written as they are, only "
             "the weights in oneDNN's layout), 'blocked-8' or 'blocked-16' "
             "(oneDNN's nChw8c or nChw16c, as they are, where the channels "
             "are a multiple of the block) or 'plain'"),
    cl::init("query"),
    cl::value_desc(
        "query|channels-last|channels-last-direct|blocked-8|blocked-16|plain"),
    cl::cat(compileCategory));
cl::opt<std::string> convAlgorithm(
    "conv-algorithm",
    cl::desc("The algorithm of the f32 3x3, 1xN and Nx1 convolutions: "
             "'auto' (kiln's own Winograd where it is faster than direct "
             "sums; the default), 'winograd' (oneDNN's Winograd kernels, 3x3 "
             "only, where the shape allows and the CPU has them), "
             "'own-winograd' (kiln's own, wherever the shape allows) or "
             "'direct' (direct sums only)"),
    cl::init("auto"), cl::value_desc("auto|winograd|own-winograd|direct"),
    cl::cat(compileCategory));
cl::opt<std::string> packedMatmuls(
    "packed-matmuls",
    cl::desc("Which f32 products of at most 16 rows by a constant matrix "
             "run kiln's own kernel over a copy of the matrix packed into "
             "the module (and those of more rows read a copy stored "
             "transposed): 'query' (all those products, and the copies where "
             "oneDNN on this CPU would read the matrix unpacked; the "
             "default), 'always' or 'never'"),
    cl::init("query"), cl::value_desc("query|always|never"),
    cl::cat(compileCategory));
cl::opt<int64_t> outlineLoopNests(
    "outline-loop-nests",
    cl::desc("Move each loop nest of a function with at least N of them "
             "into a function of its own, which LLVM optimizes faster than "
             "one long function (default 128)"),
    cl::init(128), cl::value_desc("N"), cl::cat(compileCategory));
cl::opt<bool> noCublas(
    "no-cublas",
    cl::desc("Generate kernels for float matrix products instead of calling "
             "cuBLASLt through the runtime (--target=cuda)"),
    cl::init(false),
    cl::cat(compileCategory));
cl::opt<bool> noCudnn(
    "no-cudnn",
    cl::desc("Generate kernels for float convolutions and half-precision "
             "attention instead of calling cuDNN through the runtime "
             "(--target=cuda)"),
    cl::init(false), cl::cat(compileCategory));
cl::opt<bool> noCudaCudnnAttention(
    "no-cuda-cudnn-attention",
    cl::desc("Run f16 and bf16 attention and its gradient on kiln's own "
             "kernels alone. By default cuDNN's fused attention takes them "
             "through the runtime where it can (head dims multiples of 8 up "
             "to 128, sm_80 and later), and where kiln's tensor-core kernels "
             "take them too (the same head dims) both are built as a "
             "tuned call site whose faster the runtime keeps, unless "
             "--no-cuda-attention-tuning (--target=cuda)"),
    cl::init(false), cl::cat(compileCategory));
cl::opt<bool> noCudaGraphs(
    "no-cuda-graphs",
    cl::desc("Keep every kiln.while a loop of the host code and every "
             "call a sequence of launches, instead of handing the "
             "device-only ones to the runtime as CUDA graphs "
             "(--target=cuda)"),
    cl::init(false), cl::cat(compileCategory));
cl::opt<bool> cudaTf32(
    "cuda-tf32",
    cl::desc("Let cuBLASLt and cuDNN round the inputs of f32 matrix "
             "products and convolutions to TF32 on tensor cores "
             "(--target=cuda; they are exact f32 otherwise)"),
    cl::init(false),
    cl::cat(compileCategory));
cl::opt<bool> cudaAttention3xTF32(
    "cuda-attention-3xtf32",
    cl::desc("Run f32 attention and its gradient (head dims multiples of 8 up "
             "to 128) on tensor cores in 3xTF32 products, of f32's "
             "accuracy (sm_80 and later; --target=cuda or "
             "--target=cuda-on-cpu), instead of the f32 kernels"),
    cl::init(false), cl::cat(compileCategory));
cl::opt<bool> noCudaAttentionTuning(
    "no-cuda-attention-tuning",
    cl::desc("Build attention one way only (in f32 the f32 kernels, or with "
             "--cuda-attention-3xtf32 the 3xTF32 ones; in f16 and bf16 "
             "cuDNN's, or with --no-cuda-cudnn-attention kiln's) where it "
             "would otherwise be a "
             "tuned call site carrying several (the f32 and 3xTF32 kernels, "
             "and a one-kernel gradient's two kernels; kiln's tensor-core "
             "kernels and cuDNN's), whose fastest the runtime keeps on the "
             "device it runs on, timed at the site's first call "
             "(--target=cuda or --target=cuda-on-cpu)"),
    cl::init(false), cl::cat(compileCategory));
cl::opt<bool> cudaDeterministic(
    "cuda-deterministic",
    cl::desc("Sum every result of kiln's own CUDA kernels in the same order "
             "on every run: the attention gradient then takes two kernels "
             "instead of one that adds dq with atomics (f32 of head dims "
             "64, f16 and bf16 of head dims up to 64) (--target=cuda or "
             "cuda-on-cpu; cuBLASLt and cuDNN choose their own algorithms)"),
    cl::init(false), cl::cat(compileCategory));
cl::opt<bool> noParallel(
    "no-parallel",
    cl::desc("Run every loop on the calling thread (no OpenMP parallel "
             "loops)"),
    cl::init(false),
    cl::cat(compileCategory));

cl::opt<int> concurrentThreads(
    "concurrent-threads",
    cl::desc("Run independent kernels (an Inception block's branches) side "
             "by side, one thread each, where the estimate says it pays and "
             "a call has this many threads (OMP_NUM_THREADS); with any "
             "other thread count they run one after the other. 0 or 1: "
             "never (default 2)"),
    cl::init(2), cl::value_desc("N"), cl::cat(compileCategory));

cl::opt<std::string> autocast(
    "autocast",
    cl::desc("Mixed precision: run f32 matrix products and convolutions "
             "with bf16 or f16 operands and f32 accumulation "
             "(kiln-autocast); everything else stays f32"),
    cl::value_desc("bf16|f16"), cl::init(""),
    cl::cat(compileCategory));

cl::opt<bool> memoryReport(
    "memory-report",
    cl::desc("Print, per function, the bytes of its intermediate buffers "
             "summed and the bytes of the arenas they were planned into "
             "(--target=cuda: the device arena of each function)"),
    cl::init(false),
    cl::cat(compileCategory));

cl::opt<bool> profile(
    "profile",
    cl::desc("Make the code time each fused loop nest, oneDNN call and loop "
             "of kiln.for/while/cond, for kiln-run --profile-trace and "
             "--profile-summary (CPU target only; docs/profiling.md)"),
    cl::init(false),
    cl::cat(compileCategory));

cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass of the lowering, naming the pass "
             "that made it invalid (by default only the lowering's result is "
             "verified)"),
    cl::init(false), cl::cat(compileCategory));

cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("For an ONNX model: the shape of a graph input, e.g. "
             "--input-shape input=1x3x224x224 (repeatable); gives values to "
             "symbolic dims such as 'batch'"),
    cl::value_desc("NAME=DIMS"),
    cl::cat(compileCategory));

cl::list<std::string> bindInputs(
    "bind-input",
    cl::desc("For an ONNX model: make a graph input a compile-time constant "
             "(it leaves the function's arguments), e.g. --bind-input "
             "shape=1,3,224,224 (numbers of the input's declared type and "
             "shape) or --bind-input mask=mask.npy (repeatable); for models "
             "whose shapes come from inputs"),
    cl::value_desc("NAME=VALUE|NAME=FILE.npy"),
    cl::cat(compileCategory));

cl::extrahelp inputAndExitStatusHelp(R"(
INPUT:
  MLIR text or a .kfb model file, recognized by its file identifier whatever
  its name, or an ONNX model (a file named *.onnx; its main graph becomes
  one function named after the graph, taking and returning the graph's
  inputs and outputs by name); '-' reads stdin. A binary --emit kind (kmod, obj, kfb) read from
  stdin needs -o (-o - writes it to stdout).

EXIT STATUS:
  0 on success; 1 if the input cannot be read or is invalid, compiling it
  fails or the output cannot be written; 2 for a malformed command line (an
  unknown option, a missing input, a bad option value).
)");

int fail(const Twine &message) {
  errs() << "kiln-compile: error: " << message << "\n";
  return kFailure;
}

int usageError(const Twine &message) {
  errs() << "kiln-compile: error: " << message << "\n";
  return kUsageError;
}

/// -o, or by default stdout for text and <input stem>.<kind> in the working
/// directory for binary kinds; empty for a binary kind read from stdin.
std::string outputPath() {
  if (!outputFilename.empty())
    return outputFilename;
  if (kiln::isTextEmitKind(emit))
    return "-";
  if (inputFilename == "-")
    return "";
  StringRef stem = sys::path::stem(inputFilename);
  StringRef extension = emit == EmitKind::Obj   ? ".o"
                        : emit == EmitKind::Kfb ? ".kfb"
                                                : ".kmod";
  return (stem + extension).str();
}

/// The checks of option values that the parser cannot make; returns the
/// exit status for a bad one, 0 if all are good.
int checkOptions() {
  if (target != "cpu" && target != "cuda" && target != "cuda-on-cpu")
    return usageError("unknown target '" + target +
                      "' (supported: cpu, cuda, cuda-on-cpu)");
  if (target != "cpu" && !mlir::kiln::hasCudaBackend())
    return usageError("--target=" + target + ": " +
                      mlir::kiln::kNoCudaBackendMessage);
  if (target == "cuda-on-cpu" && cudaArch == "native")
    return usageError("--cuda-arch=native needs --target=cuda (with "
                      "--target=cuda-on-cpu no GPU runs the kernels)");
  if (target == "cuda" && cudaArch == "native") {
    // The machine's own GPU, asked through the runtime; not a malformed
    // command line where there is none.
    kiln::DeviceCudaArch found = kiln::deviceCudaArch();
    if (found.arch.empty())
      return fail("--cuda-arch=native: " + found.error +
                  "; name the architecture instead (--cuda-arch=sm_80, ...)");
    cudaArch = found.arch;
  }
  std::string ptxFeature;
  if (target == "cuda" &&
      !mlir::kiln::isSupportedCudaArch(cudaArch, ptxFeature))
    return usageError("unsupported CUDA architecture '" + cudaArch +
                      "' (supported: sm_70, sm_75, sm_80, sm_86, sm_89, "
                      "sm_90)");
  if ((noCublas || noCudnn || noCudaGraphs || cudaTf32 ||
       noCudaCudnnAttention) &&
      target != "cuda")
    return usageError(std::string(noCublas       ? "--no-cublas"
                                  : noCudnn      ? "--no-cudnn"
                                  : noCudaGraphs ? "--no-cuda-graphs"
                                  : cudaTf32     ? "--cuda-tf32"
                                             : "--no-cuda-cudnn-attention") +
                      " needs --target=cuda");
  if (cudaDeterministic && target != "cuda" && target != "cuda-on-cpu")
    return usageError("--cuda-deterministic needs --target=cuda or "
                      "--target=cuda-on-cpu");
  if (cudaAttention3xTF32 && target != "cuda" && target != "cuda-on-cpu")
    return usageError("--cuda-attention-3xtf32 needs --target=cuda or "
                      "--target=cuda-on-cpu");
  if (noCudaAttentionTuning && target != "cuda" && target != "cuda-on-cpu")
    return usageError("--no-cuda-attention-tuning needs --target=cuda or "
                      "--target=cuda-on-cpu");
  if (emit == EmitKind::Ptx && target != "cuda")
    return usageError("--emit=ptx needs --target=cuda");
  if (convLayouts != "query" && convLayouts != "channels-last" &&
      convLayouts != "channels-last-direct" && convLayouts != "blocked-8" &&
      convLayouts != "blocked-16" && convLayouts != "plain")
    return usageError("unknown --conv-layouts '" + convLayouts +
                      "' (expected query, channels-last, "
                      "channels-last-direct, blocked-8, blocked-16 or plain)");
  if (convAlgorithm != "auto" && convAlgorithm != "winograd" &&
      convAlgorithm != "own-winograd" && convAlgorithm != "direct")
    return usageError("unknown --conv-algorithm '" + convAlgorithm +
                      "' (expected auto, winograd, own-winograd or direct)");
  if (packedMatmuls != "query" && packedMatmuls != "always" &&
      packedMatmuls != "never")
    return usageError("unknown --packed-matmuls '" + packedMatmuls +
                      "' (expected query, always or never)");
  if (!autocast.empty() && autocast != "bf16" && autocast != "f16")
    return usageError("unknown --autocast dtype '" + autocast +
                      "' (supported: bf16, f16)");
  if (!autocast.empty() && emit == EmitKind::Kfb)
    return usageError("--autocast applies to compiled code; --emit=kfb "
                      "stores the program as it is");
  if (profile && target != "cpu")
    return usageError("--profile is not supported for --target=" + target +
                      " (only the CPU target can be profiled)");
  if (concurrentThreads < 0 || concurrentThreads > 1024)
    return usageError("--concurrent-threads=" + Twine(int(concurrentThreads)) +
                      " is not a thread count (0-1024)");
  if (outlineLoopNests < 1)
    return usageError("--outline-loop-nests=" +
                      Twine(static_cast<int64_t>(outlineLoopNests)) +
                      " is not a count of loop nests (at least 1)");
  if (optLevel > 3)
    return usageError("-O" + Twine(optLevel) + " is not a level (0-3)");
  if (outputPath().empty())
    return usageError("the input is read from stdin, so the output file of "
                      "a binary --emit kind needs -o (-o - for stdout)");
  return 0;
}

kiln::CompileOptions compileOptions() {
  kiln::CompileOptions options;
  options.target = target == "cuda"          ? kiln::Target::Cuda
                   : target == "cuda-on-cpu" ? kiln::Target::CudaOnCpu
                                             : kiln::Target::Cpu;
  options.cpu.optLevel = optLevel;
  options.cpu.cpu = targetCpu;
  options.cpu.fuse = !noFusion;
  options.cpu.dnnl = !noDnnl;
  options.cpu.dnnlConvLayouts = convLayouts;
  options.cpu.convAlgorithm = convAlgorithm;
  options.cpu.packedMatmuls = packedMatmuls;
  options.cpu.outlineMinNests = outlineLoopNests;
  options.cpu.parallel = !noParallel;
  options.cpu.concurrentThreads = concurrentThreads;
  options.cpu.memoryReport = memoryReport;
  options.cpu.profile = profile;
  options.cuda.arch = cudaArch;
  options.cuda.fuse = !noFusion;
  options.cuda.memoryReport = memoryReport;
  options.cuda.libraryMatmul = !noCublas;
  options.cuda.libraryConv = !noCudnn;
  // --no-cudnn: no call of cuDNN at all.
  options.cuda.cudnnAttention = !noCudnn && !noCudaCudnnAttention;
  options.cuda.graphs = !noCudaGraphs;
  options.cuda.tf32 = cudaTf32;
  options.cuda.deterministic = cudaDeterministic;
  options.cuda.attention3xTF32 = cudaAttention3xTF32;
  options.cuda.attentionTuning = !noCudaAttentionTuning;
  options.autocast = autocast;
  options.verifyEachPass = verifyEach;
  options.configurePassManager = [](mlir::PassManager &pm) {
    (void)mlir::applyPassManagerCLOptions(pm);
  };
  return options;
}

/// Loads the input as an ONNX model if it is named *.onnx, as a .kfb model
/// file if it carries the .kfb identifier (or is named *.kfb, so that a
/// damaged one gets the reader's diagnosis), and as MLIR text otherwise.
mlir::OwningOpRef<mlir::ModuleOp> loadInput(llvm::SourceMgr &sourceMgr,
                                            mlir::MLIRContext &context) {
  std::string error;
  if (sys::path::extension(inputFilename) == ".onnx") {
    kiln::OnnxImportOptions options;
    if (!kiln::parseOnnxImportOptions(inputShapes, bindInputs, options,
                                      error)) {
      fail(error);
      return nullptr;
    }
    mlir::OwningOpRef<mlir::ModuleOp> module =
        kiln::importOnnxFile(inputFilename, context, options, error);
    if (!module)
      fail(error);
    return module;
  }
  if (!inputShapes.empty() || !bindInputs.empty()) {
    fail("--input-shape and --bind-input apply to ONNX models (*.onnx) only");
    return nullptr;
  }
  auto file = mlir::openInputFile(inputFilename, &error);
  if (!file) {
    fail(error);
    return nullptr;
  }
  ArrayRef<uint8_t> bytes = arrayRefFromStringRef(file->getBuffer());
  if (kiln::isModelFile(bytes) ||
      sys::path::extension(inputFilename) == ".kfb") {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        kiln::readModelFile(bytes, &context, error, inputFilename);
    if (!module)
      fail(inputFilename + ": " + error);
    return module;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}

int writeOutput(StringRef path, ArrayRef<uint8_t> bytes) {
  std::string error;
  auto output = mlir::openOutputFile(path, &error);
  if (!output)
    return fail(error);
  output->os() << toStringRef(bytes);
  output->keep();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  kiln::registerCompilerPasses();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(compileCategory);
  // With an error stream the parser reports bad options and returns instead
  // of exiting with status 1.
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "kiln ahead-of-time compiler: compiles the public functions of a "
          "kiln module (.mlir or .kfb) or an ONNX model (.onnx) to native code for the host CPU (or, "
          "with --target=cuda, host code plus PTX kernels) and writes a "
          "module for the runtime (.kmod), or an intermediate form with "
          "--emit. A function that names a device mesh (kiln.mesh, with "
          "kiln.sharding on its arguments and results) is partitioned by "
          "kiln-partition first and compiled as the program of one rank.\n",
          &errs()))
    return kUsageError;
  if (int status = checkOptions())
    return status;

  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // --mlir-timing: the time of each phase, the lowering's passes included.
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  mlir::TimingScope root = timing.getRootScope();
  mlir::TimingScope reading = root.nest("reading the input");
  mlir::OwningOpRef<mlir::ModuleOp> module = loadInput(sourceMgr, context);
  reading.stop();
  if (!module)
    return kFailure;

  std::vector<uint8_t> bytes;
  std::string error;
  kiln::CompileOptions options = compileOptions();
  options.timing = &root;
  if (!kiln::compileModule(*module, options, emit, bytes, error))
    return fail(error);
  mlir::TimingScope writing = root.nest("writing the output");
  return writeOutput(outputPath(), bytes);
}
