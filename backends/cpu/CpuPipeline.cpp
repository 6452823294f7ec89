//===- CpuPipeline.cpp - kiln to the LLVM dialect -------------------------===//
//
// The pipeline, in order:
//   0. with CpuOptions::profile, each kiln op's location names the op
//      (kiln-cpu-profile-names);
//      with CpuOptions::fuse, softmax(q k^T * scale + mask) v becomes
//      kiln.attention (kiln-fuse-attention); f32 attentions move into
//      functions of their own (kiln-cpu-outline-attention), as do
//      f32 convolutions for oneDNN (kiln-cpu-outline-dnnl-convs, where
//      kiln was built with oneDNN, after QDQ products become 8-bit ones:
//      kiln-cpu-quantized-matmuls); the other attentions become their
//      composition (kiln-decompose-attention);
//      with CpuOptions::fuse (the default), kiln-fuse groups kiln ops into
//      kiln.fused regions;
//   1. collectives in the communicator's flat forms (they bufferize into
//      its calls, CollectiveCalls.cpp); kiln -> linalg/tensor/scf on
//      tensors (each kiln.fused region lowered
//      into a kiln.fused_kernel), then kiln-fuse-linalg-groups fuses the
//      linalg ops of each kernel; canonicalize and CSE;
//      kiln-cpu-tile-fused-reductions makes each kernel with reductions one
//      scf.forall over its rows (an scf.parallel after bufferization), and
//      the kernels are inlined (kiln-inline-fused-kernels);
//   2. one-shot bufferization of the whole module, identity layouts at
//      function boundaries, copies as linalg.copy (so they become loops and
//      never call a runtime helper);
//   3. results become out-params (each returned buffer made a distinct
//      allocation first, then hoisted to the caller, so outputs are written
//      in place), then the native entry wrappers (kiln-entry-points);
//   4. copies of zero-filled buffers become fills; products of transposed
//      copies read the copies' sources in place (the copies dropped); runs
//      of independent kernels that pay for it grouped into sections that
//      run side by side, one thread each (kiln-cpu-concurrent-branches);
//      the intermediates of each block planned into one arena, buffers with
//      disjoint lifetimes sharing bytes; ownership-based deallocation,
//      each buffer freed after its last use (kiln-free-after-last-use);
//   5. f32 and bf16 matmuls -> oneDNN calls (sgemm, or its matmul
//      primitive through kiln_dnnl_matmul), calls of the outlined
//      convolutions -> oneDNN convolution primitives (where kiln was built
//      with oneDNN), calls of the outlined attentions -> loops over the
//      FlashAttention kernels (kiln-cpu-attention-calls); with
//      CpuOptions::profile, each loop nest, oneDNN call and source loop
//      bracketed by calls that time it (kiln-cpu-profile); the sections
//      of concurrent kernels as OpenMP sections, side by side where the
//      call has the threads they were planned for
//      (kiln-cpu-concurrent-sections);
//   6. large reductions with few outputs split into per-chunk partials
//      (kiln-cpu-parallel-reductions), linalg -> loops, the outermost
//      parallel loop of each large loop nest an OpenMP parallel loop (where
//      kiln was built with libomp); f32 transcendentals -> polynomials that
//      LLVM's loop vectorizer vectorizes; multi-dimensional constant globals
//      made one-dimensional (kiln-flatten-globals); in functions with many
//      loop nests, each nest a function of its own
//      (kiln-cpu-outline-loop-nests); then everything -> the LLVM
//      dialect, buffers allocated through the runtime's slots
//      (kiln-cpu-memory-hooks, kiln/MemoryAbi.h); loads and stores of i1
//      as bytes, which LLVM's loop vectorizer widens
//      (kiln-cpu-byte-booleans); constants of 4 KiB and more read from the
//      module's constant pool instead of the code (kiln-cpu-pool-constants,
//      kiln/ConstantsAbi.h).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Passes.h"
#include "kiln/Fusion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

bool kiln::cpuHasDnnl() {
#ifdef KILN_HAVE_DNNL
  return true;
#else
  return false;
#endif
}

bool kiln::cpuHasOpenMP() {
#ifdef KILN_HAVE_OPENMP
  return true;
#else
  return false;
#endif
}

void kiln::addCpuLlvmConversions(OpPassManager &pm, bool openmp) {
  // The vector forms of kiln-cpu-sin-cos.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Buffers allocated and freed through the runtime's counting allocator
  // (kiln-cpu-memory-hooks defines the generic functions).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createKilnCpuMemoryHooks());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (openmp)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void kiln::buildCpuLoweringPipeline(OpPassManager &pm,
                                    const CpuOptions &options) {
  bool dnnl = options.dnnl && cpuHasDnnl();
  if (options.profile)
    pm.addPass(createKilnCpuProfileNames());
  // f32 convolutions that oneDNN takes wait in functions of their own for
  // kiln-cpu-conv-to-dnnl (ConvToDnnl.cpp).
  // Attention written as ops becomes kiln.attention first (after the
  // canonical forms that fusion also starts from).
  if (options.fuse) {
    pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
    pm.addPass(createFuseAttention());
  }
  // f32 attentions wait in functions of their own for
  // kiln-cpu-attention-calls (AttentionCalls.cpp).
  pm.addPass(createKilnCpuOutlineAttention());
  if (dnnl) {
    // QDQ products on the 8-bit integers (QuantizedMatmuls.cpp), where the
    // compiling CPU, the target, has int8 dot products.
    if (options.cpu == "host")
      pm.addNestedPass<func::FuncOp>(createKilnCpuQuantizedMatmuls());
    KilnCpuOutlineDnnlConvsOptions convs;
    convs.minMacs = options.dnnlMinMacs;
    // oneDNN answers for the CPU it runs on: for another target the
    // layouts would be the compiling CPU's choice.
    convs.layouts = options.dnnlConvLayouts == "query" && options.cpu != "host"
                        ? "plain"
                        : options.dnnlConvLayouts;
    convs.winograd = options.convAlgorithm == "winograd"       ? "always"
                     : options.convAlgorithm == "own-winograd" ? "own"
                     : options.convAlgorithm == "auto" && options.cpu == "host"
                         ? "query"
                         : "never";
    pm.addPass(createKilnCpuOutlineDnnlConvs(convs));
    // The relayouts into and out of channels-last, moved to where the
    // layout changes (PropagateLayouts.cpp).
    pm.addPass(createKilnCpuPropagateLayouts());
  }
  // Functions of 8-bit tensors (a quantized model's activations between
  // its QuantizeLinear and DequantizeLinear) as table lookups
  // (ByteTables.cpp), on the splat constants the canonicalizer made.
  if (options.fuse)
    pm.addNestedPass<func::FuncOp>(createByteTables());
  // 0-1 (BufferizationPipeline.cpp). Pools walk their rows in loops that
  // LLVM vectorizes (kiln-to-linalg's row-loops); a GPU runs one thread per
  // result element instead. A transcendental function read by several
  // reductions of a kernel is computed once (kiln-fuse-linalg-groups): a
  // GELU read by a dynamic quantization's min, max and rounding loops,
  // BERT-base's 128x3072 activations, took 1.7 ms a layer recomputed in
  // each, 1.0 ms computed once.
  buildLinalgPipeline(pm, options.fuse, /*rowLoops=*/true,
                      /*collectives=*/true,
                      /*recomputeTranscendentals=*/false);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Right before bufferization: the canonicalizer would fold the loop's
  // shared outputs that nothing reads after the loop back into the
  // tensors they start from (see TileFusedReductions.cpp).
  if (options.fuse) {
    pm.addNestedPass<func::FuncOp>(createKilnCpuTileFusedReductions());
    pm.addNestedPass<func::FuncOp>(createInlineFusedKernels());
  }
  // Sums of a product and a tensor as products accumulating into it
  // (FoldSumsIntoMatmuls.cpp): sgemm's beta = 1 instead of a zero fill and
  // a separate sum; a loop-carried gradient is updated in place.
  pm.addNestedPass<func::FuncOp>(createKilnFoldSumsIntoMatmuls());
  // A DenseNet block's concatenations, each of all the block's earlier
  // outputs, as views of one buffer that each output is copied into once
  // (SharedConcatBuffers.cpp), not copied anew for every concatenation.
  pm.addNestedPass<func::FuncOp>(createKilnSharedConcatBuffers());
  // 2-3 (BufferizationPipeline.cpp).
  buildBufferizationPipeline(pm);
  // The row loops of kiln-cpu-tile-fused-reductions, as parallel loops.
  // Their tiles are written in place; CSE and the canonicalizer drop the
  // copies of each tile onto itself that bufferization leaves.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addPass(createCSEPass());
  // From here on buffers: the canonicalizer that keeps in-place kernels
  // whose bodies fold to constants (CanonicalizeBuffers.cpp).
  pm.addPass(createKilnCanonicalizeBuffers());
  // Before planning, so that an erased transposed copy takes no arena space
  // and aliasing is still a question of distinct allocations.
  pm.addNestedPass<func::FuncOp>(createKilnForwardFills());
  pm.addNestedPass<func::FuncOp>(createKilnFoldTransposesIntoMatmuls());
  // A convolution's result over its addend where the addend dies there
  // (ConvAddendInPlace.cpp): oneDNN's sum post-op adds it in place. Before
  // the concurrent branches, which then see the call write that buffer.
  if (dnnl)
    pm.addNestedPass<func::FuncOp>(createKilnCpuConvAddendInPlace());
  bool parallel = options.parallel && cpuHasOpenMP();
  // Independent kernels side by side (ConcurrentBranches.cpp): decided
  // before planning, so that the branches' buffers never share bytes.
  if (parallel && options.concurrentThreads >= 2) {
    KilnCpuConcurrentBranchesOptions branches;
    branches.threads = options.concurrentThreads;
    pm.addPass(createKilnCpuConcurrentBranches(branches));
  }
  if (options.planMemory) {
    KilnCpuPlanMemoryOptions plan;
    plan.report = options.memoryReport;
    pm.addNestedPass<func::FuncOp>(createKilnCpuPlanMemory(plan));
  }
  pm.addPass(createKilnEntryPoints());

  // Buffers freed after their last use (kiln-free-after-last-use).
  buildDeallocationPipeline(pm, /*freeAfterLastUse=*/true);
  pm.addPass(createKilnCanonicalizeBuffers());

  if (dnnl) {
    KilnCpuMatmulToDnnlOptions matmuls;
    matmuls.minMacs = options.dnnlMinMacs;
    // oneDNN answers for the CPU it runs on (as for the convolutions).
    matmuls.packed = options.packedMatmuls == "query" && options.cpu != "host"
                         ? "never"
                         : options.packedMatmuls;
    pm.addPass(createKilnCpuMatmulToDnnl(matmuls));
    pm.addPass(createKilnCpuConvToDnnl());
  }
  pm.addPass(createKilnCpuAttentionCalls());
  // While each loop nest is still one op, and after the library calls
  // exist (Profile.cpp).
  if (options.profile)
    pm.addPass(createKilnCpuProfile());
  // The branches as OpenMP sections (ConcurrentSections.cpp), before the
  // parallel loops inside them are decided.
  if (parallel && options.concurrentThreads >= 2)
    pm.addPass(createKilnCpuConcurrentSections());
  // Large reductions with few outputs: per-chunk partials in an
  // scf.parallel (threads where OpenMP is on, vectorized chunks either way).
  KilnCpuParallelReductionsOptions reductions;
  reductions.minIterations = options.parallelMinIterations;
  pm.addNestedPass<func::FuncOp>(createKilnCpuParallelReductions(reductions));
  // Products no library took: rows of B and C innermost, vectorized
  // (ProductLoopOrder.cpp).
  pm.addNestedPass<func::FuncOp>(createKilnCpuProductLoopOrder());
  // Elementwise loops and copies over their contiguous dims as one loop
  // (CollapseContiguousLoops.cpp): a short innermost row is vectorized
  // badly.
  pm.addNestedPass<func::FuncOp>(createKilnCpuCollapseContiguousLoops());
  // Copies as memcpy of contiguous rows in one loop per row length
  // (RowCopies.cpp): no overlap check, no loop nest per copy for LLVM.
  pm.addPass(createKilnCpuRowCopies());
  // 256-entry byte tables looked up 64 bytes at a time (ByteLookups.cpp).
  if (cpuHasByteShuffles(options))
    pm.addNestedPass<func::FuncOp>(createKilnCpuByteLookups());
  // Short innermost loops (the lanes of oneDNN's blocked layouts) as
  // vector loads, arithmetic and stores (VectorizeLanes.cpp): LLVM leaves
  // them scalar.
  KilnCpuVectorizeLanesOptions lanes;
  lanes.parallel = parallel;
  pm.addNestedPass<func::FuncOp>(createKilnCpuVectorizeLanes(lanes));
  if (parallel) {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    KilnCpuParallelLoopsOptions loops;
    loops.minIterations = options.parallelMinIterations;
    pm.addNestedPass<func::FuncOp>(createKilnCpuParallelLoops(loops));
  } else {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  }
  pm.addNestedPass<func::FuncOp>(createKilnCpuMathApproximation());
  pm.addPass(createKilnCpuSinCos());
  pm.addNestedPass<func::FuncOp>(createKilnCpuExpandBFloat16());
  pm.addPass(createBufferizationToMemRefPass());
  // Weights as flat arrays: one raw LLVM constant each (FlattenGlobals.cpp);
  // those kiln-cpu-pool-constants takes out of the code stay as they are.
  KilnFlattenGlobalsOptions flatten;
  flatten.minPooledBytes = KilnCpuPoolConstantsOptions().minBytes;
  pm.addPass(createKilnFlattenGlobals(flatten));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Long functions as one function per loop nest (OutlineLoopNests.cpp):
  // LLVM's passes grow faster than a function's length. From 128 nests:
  // BERT-base (451) and GPT-2 (419) compile 1-2 s sooner, a 4-rank DLRM
  // step (254) in 8.6 s instead of 28, DenseNet-121 (138) as soon; the
  // CNNs of fewer (ResNet-50 7, Inception-v3 81) keep their kernels
  // inline.
  KilnCpuOutlineLoopNestsOptions outline;
  outline.minNests = options.outlineMinNests;
  pm.addPass(createKilnCpuOutlineLoopNests(outline));
  if (parallel) {
    pm.addPass(createConvertSCFToOpenMPPass());
    // convert-scf-to-openmp wraps each loop body in memref.alloca_scope,
    // which must stay a single block; the canonicalizer inlines the scopes
    // without allocas before scf-to-cf splits the bodies into blocks.
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createConvertSCFToCFPass());
  addCpuLlvmConversions(pm, parallel);
  // Boolean buffers as bytes, for the loop vectorizer (ByteBooleans.cpp).
  pm.addPass(createKilnCpuByteBooleans());
  // bf16 copies as i16 copies: no f32 round trip, no __truncsfbf2
  // (BFloat16AsI16.cpp).
  pm.addPass(createKilnCpuBFloat16AsI16());
  // Weights out of the code, into the module's constant pool
  // (PoolConstants.cpp).
  pm.addPass(createKilnCpuPoolConstants());
}

namespace {
struct CpuLoweringPipelineOptions
    : PassPipelineOptions<CpuLoweringPipelineOptions> {
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse ops into kiln.fused regions and "
                                   "each region into one loop nest where "
                                   "upstream linalg fusion allows"),
                    llvm::cl::init(true)};
  Option<bool> dnnl{*this, "dnnl",
                    llvm::cl::desc("Call oneDNN for f32 and bf16 matmuls "
                                   "and its convolution primitive for f32 "
                                   "convolutions (where kiln was built "
                                   "with oneDNN)"),
                    llvm::cl::init(true)};
  Option<std::string> convLayouts{
      *this, "conv-layouts",
      llvm::cl::desc("The memory order of oneDNN convolutions' inputs and "
                     "results: query, channels-last or plain "
                     "(kiln-cpu-outline-dnnl-convs's layouts)"),
      llvm::cl::init("query")};
  Option<bool> parallel{*this, "parallel",
                        llvm::cl::desc("Run large loop nests on OpenMP "
                                       "threads (where kiln was built with "
                                       "libomp)"),
                        llvm::cl::init(true)};
};
} // namespace

namespace mlir {
namespace kiln {
namespace {
#define GEN_PASS_REGISTRATION
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace
} // namespace kiln
} // namespace mlir

void kiln::registerCpuPipelines() {
  registerKilnCpuPasses();
  PassPipelineRegistration<CpuLoweringPipelineOptions>(
      "kiln-cpu-lowering",
      "Lower kiln functions to the LLVM dialect with native entry wrappers",
      [](OpPassManager &pm, const CpuLoweringPipelineOptions &pipeline) {
        CpuOptions options;
        options.fuse = pipeline.fuse;
        options.dnnl = pipeline.dnnl;
        options.dnnlConvLayouts = pipeline.convLayouts;
        options.parallel = pipeline.parallel;
        buildCpuLoweringPipeline(pm, options);
      });
}
