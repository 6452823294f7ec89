//===- CudaPipeline.cpp - kiln to host code and PTX -----------------------===//
//
// The pipeline, in order:
//   0-3. as on the CPU (BufferizationPipeline.cpp): kiln-fuse, kiln -> linalg
//   on
//      tensors with the linalg ops of each fused kernel fused, the kernels
//      inlined (kiln-inline-fused-kernels), canonicalize and CSE, one-shot
//      bufferization, results to
//      out-params, the `kiln_entry_<name>` wrappers (kiln-entry-points);
//      then constants are copied out of read-only globals
//      (kiln-cuda-globals-to-buffers), a cond's branch that yields a buffer
//      from outside it yields a copy (kiln-cuda-fresh-cond-results, with
//      graphs) and ownership-based deallocation runs;
//   4. float matrix products -> cuBLASLt calls through the runtime
//      (kiln-cuda-library-matmul; kiln-forward-fills and
//      kiln-fold-transposes-into-matmuls ran after bufferization, so that
//      a product overwrites its result and reads transposes in place), the
//      rest of the float matmuls ->
//      shared-memory tiled kernels (kiln-cuda-tiled-matmul);
//      reductions -> one kernel each in which a block reduces an output
//      element with gpu.all_reduce (kiln-cuda-block-reductions); every other
//      linalg op -> one scf.parallel (an integer matmul's k loop inside),
//      and each outermost scf.parallel -> a grid-stride gpu.launch
//      (kiln-cuda-map-parallel-loops), dynamic slices' indices read in
//      the kernels that use them first (kiln-cuda-device-index-reads); rank-0
//      linalg ops and host stores become one-thread kernels
//      (kiln-cuda-scalar-kernels), rank-0 values the host reads are copied back
//      explicitly (kiln-cuda-predicate-copies); launches and copies are queued
//      on the stream, waited for only before the host reads memory
//      (kiln-cuda-async-launches), after launches beyond a device's
//      limits are refused (kiln-cuda-check-launches); constants only
//      device work reads are read in place from the device copy the
//      runtime uploads once (kiln-cuda-resident-constants); intermediates
//      only device work touches share one device arena per call
//      (kiln-cuda-plan-arena); the other host buffers become device
//      memory, or CUDA managed memory where the host code touches their
//      elements (kiln-cuda-device-allocations);
//   5. gpu-kernel-outlining (kiln-cuda-outline-kernels, which keeps the
//      launches' occupancy hints), all kernels in one gpu.module,
//      nvvm-attach-target for the chosen sm_XX, libdevice calls for the
//      math ops that convert-gpu-to-nvvm skips (kiln-cuda-libdevice-calls),
//      then convert-gpu-to-nvvm (math through libdevice),
//      gpu-module-to-binary format=isa: PTX, no ptxas needed;
//   6. the host code (control flow, scalar reads, launches) -> the LLVM
//      dialect with arith-expand-ops, gpu-to-llvm and the CPU's
//      conversions.
// With `onCpu` (--target=cuda-on-cpu), 0-4 run without library calls up to
// the merged launches; then every launch runs its body on the host, once
// per GPU thread (kiln-cuda-launches-on-cpu), and the CPU's conversions
// lower the whole program for the host.
// Control flow (kiln.cond/while/for) stays in the host code; a loop
// predicate computed by a kernel is copied to the host once per iteration,
// after which the host waits for the stream, except for the while loops
// kiln-cuda-graph-loops hands to the runtime as CUDA graphs (they run on
// the device, the host loop staying for a runtime that cannot).
//
//===----------------------------------------------------------------------===//

#include "LaunchHints.h"

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Cuda.h"
#include "kiln/Backends/Passes.h"
#include "kiln/Fusion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

bool kiln::isSupportedCudaArch(StringRef arch, std::string &ptxFeature) {
  ptxFeature = llvm::StringSwitch<std::string>(arch)
                   .Case("sm_70", "+ptx60")
                   .Case("sm_75", "+ptx63")
                   .Case("sm_80", "+ptx70")
                   .Case("sm_86", "+ptx71")
                   .Case("sm_89", "+ptx78")
                   .Case("sm_90", "+ptx78")
                   .Default("");
  return !ptxFeature.empty();
}

void kiln::registerCudaDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // gpu-module-to-binary translates the kernels' LLVM dialect to LLVM IR.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

/// The end of the pipeline with `onCpu`: the kernels' bodies on the host,
/// and the program lowered as the CPU backend lowers its loops.
static void buildKernelsOnCpuLowering(OpPassManager &pm) {
  pm.addPass(mlir::kiln::createKilnCudaLaunchesOnCpu());
  pm.addPass(createConvertSCFToCFPass());
  // The grid sizes' ceildivsi, as in 6 below.
  pm.addPass(arith::createArithExpandOpsPass());
  mlir::kiln::addCpuLlvmConversions(pm, /*openmp=*/false);
  pm.addPass(mlir::kiln::createKilnCpuPoolConstants());
}

void kiln::buildCudaLoweringPipeline(OpPassManager &pm,
                                     const CudaOptions &given) {
  CudaOptions options = given;
  if (options.onCpu) {
    options.libraryMatmul = false;
    options.libraryConv = false;
    options.cudnnAttention = false;
    options.graphs = false;
    options.tf32 = false;
  }
  // Attention written as ops becomes kiln.attention first, as on the CPU;
  // f32 attentions wait in functions of their own for
  // kiln-cuda-flash-attention (FlashAttention.cpp).
  if (options.fuse) {
    pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
    pm.addPass(createFuseAttention());
  }
  // The tensor cores' m16n8k16 and TF32 products came with sm_80, and
  // cuDNN's fused attention with them.
  StringRef arch = options.arch;
  unsigned sm = 0;
  bool ampere =
      arch.consume_front("sm_") && !arch.getAsInteger(10, sm) && sm >= 80;
  if (!ampere)
    options.cudnnAttention = false;
  // Half-precision attention cuDNN computes waits in functions of its own
  // for cuDNN (LibraryAttention.cpp), the rest for kiln's kernels. Where
  // kiln's tensor-core kernels take it too, the runtime keeps the faster
  // (tuned call sites), but not under `deterministic`, whose runs must
  // agree bit for bit.
  if (options.cudnnAttention) {
    KilnCudaOutlineLibraryAttentionOptions library;
    library.deterministic = options.deterministic;
    library.tune = options.attentionTuning && !options.deterministic;
    pm.addPass(createKilnCudaOutlineLibraryAttention(library));
  }
  KilnCudaOutlineAttentionOptions outline;
  outline.tensorCores = options.onCpu || ampere;
  pm.addPass(createKilnCudaOutlineAttention(outline));
  // Float convolutions wait in functions of their own for cuDNN
  // (LibraryConv.cpp).
  if (options.libraryConv) {
    KilnCudaOutlineConvsOptions convs;
    convs.tf32 = options.tf32;
    pm.addPass(createKilnCudaOutlineConvs(convs));
  }
  // 0-3 (BufferizationPipeline.cpp), as on the CPU but for the row loops.
  buildLinalgPipeline(pm, options.fuse, /*rowLoops=*/false,
                      /*collectives=*/true);
  if (options.fuse)
    pm.addNestedPass<func::FuncOp>(createInlineFusedKernels());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // A loop's init that is a slice or a pick is copied into a buffer of its
  // own: a loop run as a CUDA graph carries dense buffers, and the copy's
  // kernel reads an index or a predicate the host would read.
  buildBufferizationPipeline(pm, /*copySlicedLoopInits=*/true);
  if (options.libraryMatmul) {
    // Copies of the one zero-filled buffer into each accumulator become
    // fills, and transposes read by products are read in place (before
    // deallocations are made explicit, as on the CPU), so that each
    // product becomes one cuBLASLt call that overwrites its result.
    pm.addNestedPass<func::FuncOp>(createKilnForwardFills());
    pm.addNestedPass<func::FuncOp>(createKilnFoldTransposesIntoMatmuls());
  }
  pm.addPass(createKilnEntryPoints());
  pm.addNestedPass<func::FuncOp>(createKilnCudaGlobalsToBuffers());
  // Every cond result a buffer of its own, so that the code after a cond
  // does not read its predicate to free it and the cond can become a
  // graph's conditional node (kiln-cuda-graph-conds).
  if (options.graphs)
    pm.addNestedPass<func::FuncOp>(createKilnCudaFreshCondResults());

  // Deallocations stay at the end of their blocks here: the device
  // buffers' frees become stream-ordered later (kiln-cuda-device-
  // allocations), and earlier frees have not been run on a GPU yet.
  buildDeallocationPipeline(pm, /*freeAfterLastUse=*/false);
  // On buffers, the canonicalizer that keeps in-place kernels whose bodies
  // fold to constants (CanonicalizeBuffers.cpp).
  pm.addPass(createKilnCanonicalizeBuffers());
  pm.addPass(createBufferizationToMemRefPass());

  // 4: kernels and device-visible buffers.
  if (options.cudnnAttention)
    pm.addPass(createKilnCudaLibraryAttention());
  KilnCudaFlashAttentionOptions attention;
  attention.gradientAtomics = !options.deterministic;
  attention.f32TensorCores =
      options.attention3xTF32 && (options.onCpu || ampere);
  attention.tuneF32 = options.attentionTuning && !options.deterministic &&
                      (options.onCpu || ampere);
  attention.sharedBytes = maxSharedBytesPerBlock(options.arch);
  pm.addPass(createKilnCudaFlashAttention(attention));
  if (options.libraryConv)
    pm.addPass(createKilnCudaLibraryConv());
  if (options.libraryMatmul) {
    KilnCudaLibraryMatmulOptions library;
    library.tf32 = options.tf32;
    pm.addPass(createKilnCudaLibraryMatmul(library));
  }
  pm.addNestedPass<func::FuncOp>(createKilnCudaTiledMatmul());
  KilnCudaBlockReductionsOptions reductions;
  reductions.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createKilnCudaBlockReductions(reductions));
  pm.addPass(createKilnCudaScalarKernels());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Dynamic slices' row indices read by their kernels, not copied back to
  // the host (which would wait for the stream and keep graphs out).
  pm.addNestedPass<func::FuncOp>(createKilnCudaDeviceIndexReads());
  KilnCudaMapParallelLoopsOptions mapping;
  mapping.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createKilnCudaMapParallelLoops(mapping));
  pm.addPass(createKilnCudaPredicateCopies());
  pm.addPass(createKilnCanonicalizeBuffers());
  // One-block kernels in a row (a loop's test: its reduction, comparison
  // and forwarded copies) become one launch: fewer launches per call, and
  // fewer nodes per iteration of a loop run as a CUDA graph.
  pm.addNestedPass<func::FuncOp>(createKilnCudaMergeLaunches());
  // Both targets refuse the launches a device would (grid, block and
  // workgroup memory limits), at compile time.
  KilnCudaCheckLaunchesOptions check;
  check.arch = options.arch;
  pm.addNestedPass<func::FuncOp>(createKilnCudaCheckLaunches(check));
  if (options.onCpu)
    return buildKernelsOnCpuLowering(pm);
  // No canonicalization after this point: it would fold a wait on a fresh
  // `gpu.wait async`, which in kiln's runtime waits for the module's stream.
  pm.addPass(createKilnCudaAsyncLaunches());
  // Constants go to the device once per module, where kernels and library
  // calls read them in place (before the arena is planned, which then
  // holds no copy of them).
  pm.addPass(createKilnCudaResidentConstants());
  KilnCudaPlanArenaOptions arena;
  arena.report = options.memoryReport;
  pm.addNestedPass<func::FuncOp>(createKilnCudaPlanArena(arena));
  pm.addPass(createKilnCudaDeviceAllocations());
  // Loops whose test and body only queue device work run as CUDA graphs
  // where the runtime can (conditional nodes), host loops elsewhere; calls
  // that only queue device work are captured whole and launched again,
  // their conds as conditional nodes too.
  if (options.graphs) {
    // Conds and loops in turn, each taking the other's graph forms, as
    // deep as they nest.
    pm.addPass(createKilnCudaGraphForms());
    pm.addPass(createKilnCudaGraphCalls());
  }

  // 5: kernels to PTX.
  // Constants (loop bounds, the extents that grid-stride loops and block
  // reductions delinearize by) move into the launches before outlining.
  // Left outside, each would become a kernel parameter, and every
  // division by it a run-time 64-bit division on the GPU.
  pm.addPass(createGpuLauchSinkIndexComputationsPass());
  // Workgroup buffers over 48 KiB become views of dynamic shared memory,
  // which ptxas does not limit as it does static shared memory.
  pm.addNestedPass<func::FuncOp>(createKilnCudaDynamicSharedMemory());
  pm.addPass(createKilnCudaOutlineKernels());
  pm.addPass(createKilnCudaMergeGpuModules());
  pm.addPass(createConvertSCFToCFPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.arch;
  std::string ptxFeature;
  if (isSupportedCudaArch(options.arch, ptxFeature))
    target.features = ptxFeature;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addNestedPass<gpu::GPUModuleOp>(createKilnCudaLibdeviceCalls());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createKilnCudaExternSharedMemory());
  // What libdevice does not cover (math.absi, ...) becomes LLVM intrinsics.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertMathToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath =
      options.toolkitPath.empty() ? KILN_CUDA_TOOLKIT : options.toolkitPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // 6: the host code. The arith ops ArithToLLVM has no lowering for
  // (ceildivsi of a grid size over a run-time trip count,
  // kiln-cuda-map-parallel-loops) expand into ones it has first.
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // A model's weights leave the host code for the module's constant pool,
  // as on the CPU (PoolConstants.cpp): kept in the code, ResNet-50's took
  // more than half of its 40 s of compile time in LLVM. The runtime
  // uploads each to the device from there (kiln-cuda-resident-constants).
  pm.addPass(createKilnCpuPoolConstants());
}

bool kiln::extractPtx(ModuleOp module, std::string &ptx, std::string &error) {
  ptx.clear();
  unsigned binaries = 0;
  WalkResult result = module.walk([&](gpu::BinaryOp binary) {
    ++binaries;
    ArrayAttr objects = binary.getObjects();
    if (binaries > 1 || objects.size() != 1) {
      error = "expected one gpu.binary with one object, the PTX of all "
              "kernels";
      return WalkResult::interrupt();
    }
    auto object = cast<gpu::ObjectAttr>(objects[0]);
    if (object.getFormat() != gpu::CompilationTarget::Assembly) {
      error = "the gpu.binary holds no PTX (format is not 'isa')";
      return WalkResult::interrupt();
    }
    StringRef text = object.getObject().getValue();
    // The PTX carries a terminating NUL for the driver; the text does not.
    ptx = text.rtrim('\0').str();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

namespace {
struct CudaLoweringPipelineOptions
    : PassPipelineOptions<CudaLoweringPipelineOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("GPU architecture (sm_80, sm_90, ...)"),
                           llvm::cl::init("sm_80")};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse ops into kiln.fused regions, each "
                                   "one kernel where linalg fusion allows"),
                    llvm::cl::init(true)};
  Option<bool> libraryMatmul{
      *this, "library-matmul",
      llvm::cl::desc("Float matrix products as cuBLASLt calls through the "
                     "runtime (otherwise kiln's own kernels)"),
      llvm::cl::init(true)};
  Option<bool> libraryConv{
      *this, "library-conv",
      llvm::cl::desc("Float convolutions as cuDNN calls through the "
                     "runtime (otherwise kiln's own kernels)"),
      llvm::cl::init(true)};
  Option<bool> cudnnAttention{
      *this, "cudnn-attention",
      llvm::cl::desc("f16 and bf16 attention as cuDNN calls through the "
                     "runtime where cuDNN takes it (sm_80 and later), or "
                     "with attention-tuning a tuned call site of those and "
                     "kiln's tensor-core kernels where they take it too "
                     "(otherwise kiln's own kernels)"),
      llvm::cl::init(true)};
  Option<bool> tf32{*this, "tf32",
                    llvm::cl::desc("Let f32 products and convolutions round "
                                   "their inputs to TF32 on tensor cores"),
                    llvm::cl::init(false)};
  Option<bool> attention3xTF32{
      *this, "attention-3xtf32",
      llvm::cl::desc(
          "f32 attention (head dims up to 128) and its gradient (up to 64) "
          "on tensor cores in 3xTF32 products (f32's accuracy; sm_80 and "
          "later, and on the CPU)"),
      llvm::cl::init(false)};
  Option<bool> attentionTuning{
      *this, "attention-tuning",
      llvm::cl::desc(
          "Otherwise, f32 attention that fits the tensor-core kernels as a "
          "tuned call site of the f32 and 3xTF32 kernels, and with "
          "cudnn-attention half-precision attention both cuDNN and the "
          "tensor-core kernels take as one of the two, whose fastest "
          "variant the runtime keeps (not with deterministic)"),
      llvm::cl::init(true)};
  Option<bool> graphs{
      *this, "graphs",
      llvm::cl::desc("Run while loops whose test and body, and calls whose "
                     "host code, only queue device work as CUDA graphs "
                     "where the runtime can"),
      llvm::cl::init(true)};
  Option<bool> deterministic{
      *this, "deterministic",
      llvm::cl::desc("Sum every result of kiln's own kernels in an order "
                     "independent of the blocks' (no atomics)"),
      llvm::cl::init(false)};
  Option<bool> onCpu{
      *this, "on-cpu",
      llvm::cl::desc("Run the kernels' bodies on the host, once per GPU "
                     "thread, and lower the whole program for the host "
                     "(kiln-cuda-launches-on-cpu)"),
      llvm::cl::init(false)};
};
} // namespace

namespace mlir {
namespace kiln {
namespace {
#define GEN_PASS_REGISTRATION
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace
} // namespace kiln
} // namespace mlir

bool kiln::hasCudaBackend() { return true; }

void kiln::registerCudaPipelines() {
  registerKilnCudaPasses();
  PassPipelineRegistration<CudaLoweringPipelineOptions>(
      "kiln-cuda-lowering",
      "Lower kiln functions to host code in the LLVM dialect and PTX kernels",
      [](OpPassManager &pm, const CudaLoweringPipelineOptions &pipeline) {
        CudaOptions options;
        options.arch = pipeline.arch;
        options.fuse = pipeline.fuse;
        options.libraryMatmul = pipeline.libraryMatmul;
        options.libraryConv = pipeline.libraryConv;
        options.cudnnAttention = pipeline.cudnnAttention;
        options.tf32 = pipeline.tf32;
        options.attention3xTF32 = pipeline.attention3xTF32;
        options.attentionTuning = pipeline.attentionTuning;
        options.graphs = pipeline.graphs;
        options.deterministic = pipeline.deterministic;
        options.onCpu = pipeline.onCpu;
        buildCudaLoweringPipeline(pm, options);
      });
}
