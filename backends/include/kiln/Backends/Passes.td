//===- Passes.td - kiln backend passes ---------------------*- tablegen -*-===//

#ifndef KILN_BACKENDS_PASSES_TD
#define KILN_BACKENDS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertKilnToLinalg : Pass<"kiln-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Lower kiln ops to linalg, tensor, arith, math and scf";
  let description = [{
    Elementwise ops become `linalg.generic` over identity maps, reductions
    `linalg.generic` with reduction iterators over a filled init, matmul
    `linalg.matmul`/`linalg.batch_matmul`, shape ops `tensor`/`linalg`
    views and copies, and `kiln.cond`/`kiln.while`/`kiln.for` become
    `scf.if`/`scf.while`/`scf.for` on tensors. Tensors stay in value form so
    that bufferization and later fusion decide the memory.

    With `row-loops` (the CPU pipeline's choice), `kiln.reduce_window`
    walks the last result dimension as a sequential loop inside each
    parallel iteration, which LLVM vectorizes, and splits that dimension
    so that the placements whose windows lie inside the operand read it
    without bounds checks (see WindowLowering.cpp).
  }];
  let options = [
    Option<"rowLoops", "row-loops", "bool", "false",
           "Pool along the last result dim in vectorizable inner loops">,
    Option<"collectives", "collectives", "bool", "false",
           "Leave the flat collectives (start/wait, broadcast, all_to_all, "
           "permute) to bufferization, as both backends do; without it "
           "they are an error">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect"
  ];
}

def KilnDecomposeCollectives
    : Pass<"kiln-decompose-collectives", "mlir::func::FuncOp"> {
  let summary = "Rewrite collectives into the flat forms the communicator runs";
  let description = [{
    The runtime's communicator (kiln/CollectiveAbi.h) gathers, scatters and
    exchanges blocks along the leading dimension only and reduces by sum,
    max or min. This pass makes every collective such a form with kiln ops
    around it: all_reduce, all_gather and reduce_scatter become their start
    form followed by `kiln.collective_wait`; `kind = mean` becomes a sum
    divided by the group size; a gather or scatter along dim d > 0 runs
    between transposes that move d to the front and back; an all_to_all
    with split_dim s and concat_dim c transposes s to the front, exchanges
    leading blocks and moves the received block index next to c.

    ```mlir
    %r = kiln.all_gather %x, dim = 1, groups = [[0, 1]] : (tensor<2x3xf32>) -> tensor<2x6xf32>
    // becomes
    %t = kiln.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
    %p = kiln.all_gather_start %t, dim = 0, groups = [[0, 1]] : (tensor<3x2xf32>) -> tensor<6x2xf32>
    %w = kiln.collective_wait %p, %t : tensor<6x2xf32>, tensor<3x2xf32>
    %r = kiln.transpose %w, permutation = [1, 0] : tensor<6x2xf32>
    ```
  }];
}

def KilnCollectiveCalls
    : Pass<"kiln-collective-calls", "mlir::ModuleOp"> {
  let summary = "Turn kiln.rank into a call of the runtime's communicator";
  let description = [{
    Runs on tensors after `kiln-decompose-collectives`, before the kiln ops
    are lowered: `kiln.rank` becomes a call of `@kiln_comm_rank`. The other
    collectives stay kiln ops until one-shot bufferization, whose
    BufferizableOpInterface models for them (registered with
    `registerCollectiveBufferizationModels`, CollectiveCalls.cpp) turn each
    into calls of `@kiln_comm_start` / `@kiln_comm_wait` on the buffers of
    its operand and result: the wait reads the start's operand, so
    bufferization keeps that buffer unchanged until the exchange completes,
    and the buffers reach the calls as memrefs, so memory planning and
    deallocation see them used there. The `@kiln_comm_*` functions are
    defined in the module, one per signature, each calling through an
    exported pointer slot `kiln_comm_fn_<name>` that the runtime fills when
    it loads the module (kiln/CollectiveAbi.h): the code links no
    communication library, and a module without collectives gets no slots.
    Both backends use it: a CPU module's buffers are host memory, a CUDA
    module's device memory, which the runtime's device communicator queues
    on the module's stream (runtime/lib/comm/DeviceComm.h).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnEntryPoints : Pass<"kiln-entry-points", "mlir::ModuleOp"> {
  let summary = "Add a `void kiln_entry_<f>(void **args)` wrapper per function";
  let description = [{
    Runs after bufferization and `buffer-results-to-out-params`, when every
    public function takes statically shaped identity-layout memrefs (inputs,
    then outputs). The wrapper loads one data pointer per memref from `args`,
    builds the memref descriptors and calls the function. This is the one
    native calling convention the runtime knows, whatever the signature and
    whatever the target: the CPU code and the CUDA host code both get it.

    The function itself is renamed `kiln_impl_<name>` and, like every other
    function of the module, gets internal linkage: only the wrappers are
    exported, so a function named like a libm routine (`tanh`) cannot clash
    with the libm calls of the generated code.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect"];
}

def KilnFreshResults : Pass<"kiln-fresh-results", "mlir::func::FuncOp"> {
  let summary = "Give every returned buffer its own allocation";
  let description = [{
    Runs after bufferization, before results become out-params. A function
    may return one of its arguments (directly, or through a loop that did
    not change it) or the same buffer twice; each such result is copied
    into a fresh allocation, so that every out-param is written exactly
    once and allocations can be hoisted into the caller's output buffers.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnReadOnlyArguments : Pass<"kiln-read-only-arguments", "mlir::ModuleOp"> {
  let summary = "Forbid bufferization to write into a public function's "
                "tensor arguments";
  let description = [{
    Runs on tensors, right before one-shot bufferization. A public function's
    arguments are the caller's buffers (a host program's parameters, numpy
    arrays passed without a copy), which the call must leave as they were.
    One-shot bufferization treats a function's arguments as writable unless
    they carry `bufferization.writable = false`, and would update one in
    place where the program computes a new value from it that it no longer
    reads (a `kiln.dynamic_update_slice` or a `kiln.scatter_add` of an
    argument). This pass sets that attribute on every tensor argument of
    every public function with a body, so such an update writes into a copy.
    Private functions keep writable arguments: their callers are in the
    module, and the analysis copies an operand the callee writes where the
    caller still needs it.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def KilnCopySlicedCallOperands
    : Pass<"kiln-copy-sliced-call-operands", "mlir::func::FuncOp"> {
  let summary = "Copy a call's operands that are slices into fresh tensors";
  let description = [{
    Runs on tensors, right before one-shot bufferization, which gives every
    function identity-layout memrefs at its boundary. A call operand that
    is a `tensor.extract_slice` smaller than its source (possibly reshaped
    since) bufferizes to a strided view with an offset, which no
    `memref.cast` can turn into the callee's identity-layout argument. Such
    an operand is copied (`linalg.copy` into a `tensor.empty`) so that
    bufferization gives the call a buffer of its own.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnFlattenGlobals : Pass<"kiln-flatten-globals", "mlir::ModuleOp"> {
  let summary = "Store constant globals as flat byte arrays";
  let description = [{
    Runs on memrefs, before `expand-strided-metadata` and the conversion to
    the LLVM dialect. A global of type `memref<2048x512x1x1xf32>` becomes an
    LLVM array of arrays whose innermost arrays hold one element each, and
    LLVM writes a float array into the object element by element; both
    made a model's weights dominate its compile time. Each global with a
    non-splat initial value of whole-byte elements becomes a `memref<Nxi8>`
    of the same bytes, aligned to 64, and each `memref.get_global` of it a
    `memref.view` of that byte global with the original type. Splats and
    i1 constants of rank two or more become one-dimensional globals of
    their element type, read through `memref.expand_shape`.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def FuseLinalgGroups : Pass<"kiln-fuse-linalg-groups", "mlir::func::FuncOp"> {
  let summary = "Fuse the linalg ops of each kiln.fused_kernel";
  let description = [{
    Runs after `kiln-to-linalg`, which lowers every `kiln.fused` region into
    a `kiln.fused_kernel` holding the region's ops lowered to linalg.
    Upstream elementwise fusion (`linalg::populateElementwiseOpsFusionPatterns`,
    with reshapes folded by expansion) then fuses a producer into a consumer
    exactly when both are ops of the same kernel's body, whatever their use
    counts: an elementwise kernel becomes one `linalg.generic`, and nothing
    is fused across kernels, so the backends realize the grouping
    `kiln-fuse` decided. A kernel whose body no longer holds what its kind
    promises (a reduction kernel without a reduction, ...) is an error.
    Without kernels (fusion turned off) the pass changes nothing.
  }];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"
  ];
}

def KilnCpuTileFusedReductions
    : Pass<"kiln-cpu-tile-fused-reductions", "mlir::func::FuncOp"> {
  let summary = "Make each reduction region of kiln-fuse one loop nest over its rows";
  let description = [{
    Runs on tensors after `kiln-fuse-linalg-groups`, before
    `kiln-inline-fused-kernels`. In a `kiln.fused_kernel` that `kiln-fuse`
    made around reductions (softmax, layer norm, log-sum-exp), the last
    all-parallel `linalg.generic` is tiled with `scf.forall`, one row per
    iteration along the dims it reads reduction results by, and the
    kernel's linalg producers (the reductions, their fills and elementwise
    prologues) are fused into the loop with
    `scf::tileConsumerAndFuseProducersUsingSCF`. Each row's reductions are
    then computed right before the row is normalized, while it is in cache,
    and the rows are independent iterations of one parallel loop. Ops of
    other kernels, and contractions, are never fused in. A kernel of kind
    reduction without a reduction in its body is an error. Before tiling, a
    reduction whose length is a multiple of 64 f32 (32 f64) elements is split
    (upstream `splitReduction`) into that many per-lane partial results, so
    that its innermost loop is parallel and vectorizes. Each tile the loop
    writes is a shared output of the `scf.forall`, so that bufferization
    writes it in place rather than into a buffer per iteration.
  }];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def InlineFusedKernels
    : Pass<"kiln-inline-fused-kernels", "mlir::func::FuncOp"> {
  let summary = "Replace each kiln.fused_kernel by its body";
  let description = [{
    Runs once a backend is done with the grouping `kiln-fuse` decided (on
    the CPU after `kiln-cpu-tile-fused-reductions`, on CUDA after
    `kiln-fuse-linalg-groups`), before bufferization. The body's ops move
    before the kernel, its block arguments replaced by the kernel's inputs,
    and the kernel's results by the values its body yields. A kernel whose
    body no longer holds what its kind promises is an error, as in the
    passes that read kernels.
  }];
}

def KilnCudaGlobalsToBuffers
    : Pass<"kiln-cuda-globals-to-buffers", "mlir::func::FuncOp"> {
  let summary = "Copy constant globals into allocations a kernel can read";
  let description = [{
    Runs after bufferization, before deallocation is planned. A constant
    (`memref.get_global`) lives in the host code's read-only data, which a
    CUDA kernel cannot read; each use is replaced by a fresh `memref.alloc`
    filled from the global with `memref.copy` on the host. The allocation
    later becomes device-visible memory (`kiln-cuda-device-allocations`)
    and the deallocation pipeline frees it like any other buffer.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def KilnCudaOutlineAttention
    : Pass<"kiln-cuda-outline-attention", "mlir::ModuleOp"> {
  let summary = "Move each f32 kiln.attention into a function for the "
                "FlashAttention kernel";
  let description = [{
    Runs on kiln IR, before the lowering (and so before
    `kiln-decompose-attention`). Every `kiln.attention` whose operands and
    results are f32 is replaced by a call of a new private function
    `@kiln_cuda_attention(q, k, v[, mask]) -> (result, lse)` marked
    `kiln.cuda_attention = {scale = f64, causal = bool}`, whose arguments
    are read-only for bufferization and whose body only allocates the
    results: `kiln-cuda-flash-attention` replaces every call once buffers
    exist. An f32 `kiln.attention_grad` likewise becomes a call of
    `@kiln_cuda_attention_grad(q, k, v, dO, lse, rowsum(dO * O)[, mask]) ->
    (dq, dk, dv)` marked `kiln.cuda_attention_grad`, the row sums computed
    before it as kiln ops. Other element types, dynamic shapes and head
    dims that would leave one of the kernels' threads more than 64 of them
    stay, for the composition.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnCudaFlashAttention
    : Pass<"kiln-cuda-flash-attention", "mlir::ModuleOp"> {
  let summary = "Replace calls of outlined attention functions by a "
                "FlashAttention-style gpu.launch";
  let description = [{
    Runs on memrefs, after bufferization, before the other CUDA kernels are
    formed. Each call of a function marked `kiln.cuda_attention` (operands:
    query [L..., Nq, D], key [L..., Nk, D], value [L..., Nk, Dv], the
    additive mask of the scores' rank if any (dims of 1 broadcast), then
    the result [L..., Nq, Dv] and log-sum-exp [L..., Nq] buffers; static
    f32) becomes one `gpu.launch`: a grid of ceil(Nq / rows-per-block)
    x (product of L) blocks, each of rows-per-block query rows with G
    threads (lanes) per row: G a power of two up to 32 dividing D and Dv,
    doubled while a lane would hold more than 8 dims (8 for D = Dv = 64;
    rows-per-block x G at most 1024, and a multiple of 32 when G > 1, as a
    shuffle takes the whole warp). Lane g of a row owns dims g, g + G,
    ... of the scaled query row and of the output accumulator, in
    registers. The block walks the keys in tiles of keys-per-tile (fewer
    where a key tile, a value tile and the block's scores of a tile would
    exceed 44 KiB), staging each key and value tile in workgroup memory;
    for each key of the tile the lanes of a row sum their products and
    combine them with a butterfly of `gpu.shuffle xor`, the score (-inf
    past the last key and, when causal, past the row) goes to workgroup
    memory, and then the row folds the tile into its running maximum, sum
    and accumulators, rescaling them by exp(m - m') when the maximum
    grows. A causal block stops at the tile holding its last row's
    diagonal. At the end out = acc / l and lse = m + log(l), NaN for a row
    that saw no finite score. Rows past the end compute on the last row
    (so that every thread takes part in the shuffles and barriers) and
    write nothing.

    A call of a function marked `kiln.cuda_attention_grad` (query, key,
    value, the result's cotangent dO, lse, rowsum(dO * O) [L..., Nq], the
    mask if any, then the dq, dk and dv buffers) becomes two launches of
    the same geometry that recompute p = exp(s - lse) per (query, key)
    pair, 0 where unseen: one owns query rows and walks the key tiles
    (causal: up to the block's diagonal), summing ds k into dq, where
    ds = p (dO . v - rowsum); the other owns key rows and walks the query
    tiles (causal: from the tile of its first key), staging query, dO,
    lse and row-sum tiles, summing ds q into dk and p dO into dv. dq and dk
    are scaled once at the end. The functions are erased. No Nq x Nk
    buffer exists.
  }];
  let options = [
    Option<"rowsPerBlock", "rows-per-block", "int64_t", "32",
           "Query rows per block (fewer where rows x lanes would exceed "
           "1024 threads)">,
    Option<"keysPerTile", "keys-per-tile", "int64_t", "64",
           "Keys per tile staged in workgroup memory">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaOutlineConvs : Pass<"kiln-cuda-outline-convs", "mlir::ModuleOp"> {
  let summary = "Move each float kiln.conv cuDNN computes into a function "
                "for kiln-cuda-library-conv";
  let description = [{
    Runs on kiln IR, before the lowering. Every `kiln.conv` with f32, f16
    or bf16 operands and result, static shapes, 1 to 3 spatial dims and no
    empty dim is replaced by a call of a new private function
    `@kiln_cuda_conv(x, w) -> y` marked `kiln.cuda_conv = array<i64:
    ...>`, the descriptor of kiln/CudaLibraryAbi.h (k, groups, dtype,
    flags, N, C, O, then D, K, E, strides, low and high padding and kernel
    dilation per spatial dim; the flags hold KILN_CUDA_CONV_TF32 = 1 for
    an f32 convolution under `tf32`), whose arguments are read-only for
    bufferization and whose body only allocates the result. A convolution
    with input dilation and unit strides becomes cuDNN's backward data
    (KILN_CUDA_CONV_INPUT_GRADIENT = 2): the call takes the kernel
    reshaped, transposed and reversed into the forward convolution's, and
    the descriptor holds that convolution's strides (the input dilation)
    and padding (W - 1 - low before, max(0, W - 1 - high) after, W the
    dilated window). A kernel gradient in kiln-grad's form (the transpose
    of a convolution, perhaps sliced, of the input and the cotangent each
    regrouped by a reshape, transpose and reshape with batch and channel
    dims swapped) becomes cuDNN's backward filter
    (KILN_CUDA_CONV_WEIGHT_GRADIENT = 4) on the input and cotangent
    themselves, replacing the transpose. Other convolutions keep the
    generic lowering.
  }];
  let options = [
    Option<"tf32", "tf32", "bool", "false",
           "Let f32 convolutions round their inputs to TF32 on tensor cores">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnCudaLibraryConv : Pass<"kiln-cuda-library-conv", "mlir::ModuleOp"> {
  let summary = "Replace calls of outlined convolutions by cuDNN calls "
                "through the runtime";
  let description = [{
    Runs on memrefs, after bufferization. Each call of a function marked
    `kiln.cuda_conv` (operands: input, weight and result buffers, static,
    of rank k + 2) becomes a call `kiln_cuda_conv(descriptor, x, w, y)` of
    the runtime (kiln/CudaLibraryAbi.h) with the buffers' device addresses
    and the descriptor as a constant global `kiln_cuda_conv_descriptor`;
    a result buffer that is only copied into a buffer defined before the
    call (the function's out-param) and freed is replaced by that buffer;
    an operand that is not dense in row-major order is copied into (or,
    for the result, out of) a fresh dense buffer around the call. The
    marked functions, then uncalled, are erased. A malformed descriptor or
    call is an error.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCudaLibraryMatmul
    : Pass<"kiln-cuda-library-matmul", "mlir::ModuleOp"> {
  let summary = "Turn float matrix products into cuBLASLt calls through the runtime";
  let description = [{
    Runs on bufferized linalg, before kiln-cuda-tiled-matmul. Every
    contraction a GEMM library can run (matmul, batch_matmul, their
    transposed variants and equivalent generics, on statically shaped
    memrefs with contiguous rows or columns) with f64, f32, f16 or bf16 A
    and B and C of the same type (or f32 for f16 and bf16) becomes one call
    of `kiln_cuda_matmul` (kiln/CudaLibraryAbi.h), which the runtime runs as
    one cuBLASLt product on the module's stream. When the last op before the
    product to touch C is a zero fill of C, the fill is dropped and the
    product overwrites C; otherwise it accumulates into C.
  }];
  let options = [
    Option<"tf32", "tf32", "bool", "false",
           "Let f32 products round their inputs to TF32 on tensor cores">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCudaTiledMatmul
    : Pass<"kiln-cuda-tiled-matmul", "mlir::func::FuncOp"> {
  let summary = "Turn float linalg.matmul/batch_matmul into shared-memory tiled kernels";
  let description = [{
    Runs on bufferized linalg, before the other CUDA mappings. Each f32 or
    f64 `linalg.matmul` (C[M,N] += A[M,K] B[K,N]) or `linalg.batch_matmul` with
    static shapes becomes one `gpu.launch` of tile x tile thread blocks, a
    block per tile x tile piece of C (grid z = the batch):
      1. for each tile-wide step along K, every thread loads one element of
         A's and one of B's tile into workgroup (shared) memory - zero past
         the edges - and the block synchronizes;
      2. each thread accumulates its C element's dot product over the tiles
         from shared memory, synchronizing before the next step;
      3. threads inside C add their sum to it.
  }];
  let options = [
    Option<"tile", "tile", "int64_t", "16",
           "Tile edge: threads per block along x and y, elements per step">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaBlockReductions
    : Pass<"kiln-cuda-block-reductions", "mlir::func::FuncOp"> {
  let summary = "Turn linalg reductions into block-wide gpu.all_reduce kernels";
  let description = [{
    Runs on bufferized linalg, before `convert-linalg-to-parallel-loops`. A
    linalg op with one output of f32, f64, i32 or i64, static loop ranges
    and at least
    one reduction dimension, whose body yields `combine(x, out)` for a
    combiner gpu.all_reduce knows (addf, mulf, maximumf, maxnumf, minimumf,
    minnumf, addi, muli, maxsi, minsi, maxui, minui, andi, ori, xori) and
    uses `out` nowhere else, becomes one `gpu.launch`:
      1. each block takes output elements blockIdx, blockIdx + gridDim, ...;
      2. its threads stride over the reduction space, folding the body's
         `x` into a private partial result that starts at the combiner's
         identity;
      3. `gpu.all_reduce` combines the partials - `convert-gpu-to-nvvm`
         lowers it to warp shuffles and a shared-memory tree across warps;
      4. thread 0 stores `combine(total, out)`, then the block synchronizes.
    Matmuls and other linalg ops are left to `kiln-cuda-map-parallel-loops`.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Most threads per block (fewer, in whole warps, for short reductions)">,
    Option<"maxBlocks", "max-blocks", "int64_t", "65535",
           "Largest grid; further output elements are strided over">,
  ];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaMapParallelLoops
    : Pass<"kiln-cuda-map-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Turn each outermost scf.parallel into a grid-stride gpu.launch";
  let description = [{
    Every outermost `scf.parallel` without results (one per linalg op after
    `convert-linalg-to-parallel-loops`; reduction dimensions are `scf.for`
    loops inside it) becomes a `gpu.launch` of 1-D blocks of `block-size`
    threads. The iteration space is linearized: thread `t` of the grid runs
    iterations t, t + gridDim*blockDim, ... and delinearizes each into the
    loop's induction variables, so any trip count works with a grid capped
    at `max-blocks`. Loops nested in a launch, and loops outside any
    parallel loop, stay where they are (the latter run on the host).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block">,
    Option<"maxBlocks", "max-blocks", "int64_t", "65535",
           "Largest grid; larger iteration spaces are strided over">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaDeviceAllocations
    : Pass<"kiln-cuda-device-allocations", "mlir::ModuleOp"> {
  let summary = "Allocate host-code buffers in device or managed memory";
  let description = [{
    The buffers `kiln-cuda-plan-arena` did not place in the arena
    (results, loop-carried values) are allocated through the runtime's
    `mgpuMemAlloc`: every remaining `memref.alloc` outside a kernel becomes
    `gpu.alloc` (device memory) when only kernels, stream-ordered copies
    and library calls touch its elements, followed through views, loops,
    branches and calls, and `gpu.alloc host_shared` (CUDA managed memory)
    when the host code reads or writes them itself. Every `memref.dealloc`
    becomes a `gpu.dealloc async` on the stream that is not waited for (the
    runtime pools freed buffers; work on the one stream runs in order).
    The arguments of the functions the runtime calls are device memory, so
    a function whose host code touches an argument's elements is an error.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def KilnCudaScalarKernels
    : Pass<"kiln-cuda-scalar-kernels", "mlir::func::FuncOp"> {
  let summary = "Run rank-0 linalg ops and host stores in one-thread kernels";
  let description = [{
    Runs on bufferized linalg, after the matmul and reduction mappings and
    before `convert-linalg-to-parallel-loops`. A linalg op without parallel
    loops (a loop counter's increment, a predicate's comparison, a scalar
    copy, a reduction to a scalar `kiln-cuda-block-reductions` did not
    take, run sequentially by the one thread) and a `memref.store` outside any kernel
    (except into the deallocation's bookkeeping, which only the host code
    uses) each become a `gpu.launch` of one thread, so that the host code never
    computes on device buffers: kernels, not the host, write every buffer,
    and launches need no synchronization before them. Rank-0 values the
    host code needs (a loop predicate, an index) are copied back
    explicitly (`kiln-cuda-predicate-copies`).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect"];
}

def KilnCudaPredicateCopies
    : Pass<"kiln-cuda-predicate-copies", "mlir::func::FuncOp"> {
  let summary = "Read rank-0 device values through explicit copies";
  let description = [{
    Runs after the kernels are formed. Every `memref.load` in the host code
    from a rank-0 buffer a kernel may write (a `kiln.while` or `kiln.cond`
    predicate, a dynamic index) becomes a copy of the value into a
    host stack slot (`memref.alloca`) followed by a load from the slot.
    `kiln-cuda-async-launches` turns the copy into a stream-ordered
    `gpu.memcpy` and waits for it just before the load, so the host reads
    the value once, explicitly, instead of touching managed memory.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def KilnCudaAsyncLaunches
    : Pass<"kiln-cuda-async-launches", "mlir::func::FuncOp"> {
  let summary = "Launch kernels and copy buffers asynchronously on the stream";
  let description = [{
    The kiln runtime runs a module's device work in order on one stream;
    `gpu.wait async` without dependencies stands for that stream and
    `gpu.wait [%t]` waits for everything queued on it. In every block of
    the host code:
      1. each synchronous `gpu.launch` becomes `gpu.launch async` chained
         on the block's token (a `gpu.wait async` before the first one);
      2. each `memref.copy` between contiguous (identity-layout) buffers
         becomes a `gpu.memcpy async` on the same chain;
      3. before an op that reads or writes memory on the host (a load from
         a copied-back predicate, ...) a `gpu.wait` on the chain is
         inserted when device work may be pending: work queued earlier in
         the block, or, at a block's start, anything before it.
    Nothing else waits: the runtime synchronizes once before it copies the
    outputs back.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def KilnCudaPlanArena
    : Pass<"kiln-cuda-plan-arena", "mlir::func::FuncOp"> {
  let summary = "Plan a function's device intermediates into one arena";
  let description = [{
    Runs on the host code after `kiln-cuda-async-launches`, before
    `kiln-cuda-device-allocations`. Ops of the function are numbered in
    program order (nested regions inside their op's span). A statically
    shaped `memref.alloc` whose uses, through views, are all device work
    (inside a `gpu.launch`, a `gpu.memcpy`) or its deallocation lives from
    its allocation to the end of the last op of its block using it; the
    buffers are given offsets in one arena by first fit (64-byte aligned,
    `backends/common/ArenaPlanner.h`), so buffers with disjoint lifetimes,
    also in different loop bodies or branches, share bytes. The arena is
    one device allocation (`gpu.alloc`, not managed memory) at the
    function's start, freed at its end, and each planned allocation
    becomes a `memref.view` of it; a loop body's intermediates are no
    longer allocated per iteration. With `report`, a remark gives the
    bytes of the planned intermediates summed and the arena's size.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with the device intermediates' bytes and the arena size">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCudaMergeGpuModules
    : Pass<"kiln-cuda-merge-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per kernel. The runtime
    loads one PTX module per compiled module, so all kernels are moved into
    the first `gpu.module` (named `kiln_kernels`) and every
    `gpu.launch_func` is redirected to it.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def KilnCudaLibdeviceCalls
    : Pass<"kiln-cuda-libdevice-calls", "mlir::gpu::GPUModuleOp"> {
  let summary = "Call libdevice for the math ops convert-gpu-to-nvvm skips";
  let description = [{
    Upstream's `convert-gpu-to-nvvm` (LLVM 19) maps most f32/f64 math ops
    to libdevice's `__nv_*` functions, but not `math.asin`, `acos`, `sinh`,
    `cosh`, `asinh`, `acosh` and `atanh`, which NVPTX cannot select either.
    This pass, run on the kernels' module before it, replaces each of them
    by an `llvm.call` of the libdevice function of that name (`__nv_asinf`
    for f32, `__nv_asin` for f64), declared in the module; libdevice is
    linked when the module becomes PTX.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def KilnCpuMathApproximation
    : Pass<"kiln-cpu-math-approximation", "mlir::func::FuncOp"> {
  let summary = "Replace f32 transcendentals by vectorizable polynomials";
  let description = [{
    Upstream's polynomial approximations
    (`populateMathPolynomialApproximationPatterns`) rewrite f32 `math.tanh`,
    `exp`, `expm1`, `log`, `log1p`, `log2`, `erf`, `atan`, `atan2` and
    `cbrt` into arith ops, so that loops containing them vectorize instead
    of calling libm once per element. f64 math and f32
    `asin`/`acos` (upstream's polynomial is off by up to 1e-2) stay libm
    calls; f32 `sin`/`cos` (upstream's range reduction is weak for large
    arguments) are left to `kiln-cpu-sin-cos`. `math.powf` with a constant
    exponent of 2 or 3 (of any float type) becomes `x * x` or `x * x * x`
    (GELU's tanh form cubes its input), other powers stay libm calls.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def KilnCpuSinCos : Pass<"kiln-cpu-sin-cos", "mlir::ModuleOp"> {
  let summary = "Call one vectorizable f32 sin and cos, the same on every path";
  let description = [{
    Replaces each f32 `math.sin` and `math.cos` by a call of `kiln_sinf` /
    `kiln_cosf`, which the pass defines in the module along with 4-, 8- and
    16-lane forms named in LLVM's "vector-function-abi-variant" attribute,
    so that LLVM's loop vectorizer calls a vector form in vectorized loops
    and the scalar one elsewhere. Both forms compute each element by the
    same operations (Cody-Waite reduction in f64 and polynomials for
    |x| < 2^24, libm beyond, for infinities and NaN), so a value computed in
    a vectorized loop and in a scalar one is the same to the last bit.
    f64 `sin`/`cos` stay libm calls.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def KilnCpuByteBooleans : Pass<"kiln-cpu-byte-booleans", "mlir::ModuleOp"> {
  let summary = "Read and write i1 buffers as bytes, so their loops vectorize";
  let description = [{
    Rewrites each scalar `llvm.load` of i1 into a load of i8
    compared with zero (`icmp ne`), and each such `llvm.store` of i1 into a
    store of the value zero-extended to i8. A buffer of i1 already holds one
    byte per element, so memory is unchanged; but LLVM's loop vectorizer
    does not widen accesses of a type whose bit size differs from its size
    in memory, and left every loop that reads or writes a boolean buffer
    (a comparison kept for a gradient, a mask) scalar. Runs on the LLVM
    dialect, at the end of the CPU lowering.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def KilnCpuExpandBFloat16
    : Pass<"kiln-cpu-expand-bf16", "mlir::func::FuncOp"> {
  let summary = "Convert between bf16 and f32 with integer ops";
  let description = [{
    Upstream's `populateExpandBFloat16Patterns` rewrites `arith.extf` from
    bf16 and `arith.truncf` to bf16 (rounding to nearest even, NaN kept)
    into integer shifts and bit casts. x86 has no bf16 conversions below
    AVX512-BF16, and LLVM calls `__truncsfbf2` for `fptrunc` to bfloat,
    which the C runtime the shared objects are linked against (GCC 12's
    libgcc) does not provide. The kiln lowering computes in f32 and only
    converts at loads and stores (ElementwiseLowering.cpp), so these two
    ops are all the bf16 the code holds. AVX-512 BF16's `vcvtneps2bf16`, which
    LLVM selects for `fptrunc` where the target has it, is not used: it
    flushes subnormal results to zero (1e-39f gives 0x0000 where rounding
    to nearest even gives 0x000b), so the integer rounding stays on every
    host.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def KilnCanonicalizeBuffers : Pass<"kiln-canonicalize-buffers"> {
  let summary = "The canonicalizer, keeping generics on buffers that fill";
  let description = [{
    The canonicalizer (every loaded dialect's and registered op's
    canonicalization patterns and folders, top-down), plus one pattern
    that runs before the others on a `linalg.generic` on buffers whose
    body yields only values defined outside it: such a generic becomes a
    `linalg.fill` of each output. MLIR 19's canonicalizer would erase one
    whose input and output are the same buffer (an elementwise kernel
    bufferized in place whose body folded to a constant), leaving the
    buffer unwritten. The backends run this pass wherever they
    canonicalize after bufferization.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def KilnForwardFills
    : Pass<"kiln-forward-fills", "mlir::func::FuncOp"> {
  let summary = "Turn copies of filled buffers into fills";
  let description = [{
    Runs on memrefs, after bufferization and before memory planning. A
    `linalg.copy` from a whole buffer whose last writer in the block is a
    `linalg.fill` of that buffer (bufferization copies one zero-filled
    buffer into every fresh accumulator), or from a constant global with a
    splat initializer, becomes a `linalg.fill` of the destination with the
    same value: one write instead of a read and a
    write, and a zero fill right before a product lets
    `kiln-cpu-matmul-to-dnnl` and `kiln-cuda-library-matmul` overwrite
    instead of accumulating. Both backends run it.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect"];
}

def KilnFoldTransposesIntoMatmuls
    : Pass<"kiln-fold-transposes-into-matmuls", "mlir::func::FuncOp"> {
  let summary = "Let matmuls read transposed operands in place";
  let description = [{
    Runs on memrefs, after bufferization and before memory planning. A
    contraction (`linalg.matmul`, `batch_matmul`, their `_transpose_a/_b`
    variants, a contraction `linalg.generic`) whose input was written by a
    permuting copy (`linalg.transpose`, `linalg.copy`, a `linalg.generic`
    that only permutes) becomes a `linalg.generic` that reads the copy's
    source with the composed indexing map, and the copy is erased, when
    nothing else reads what the copy wrote (after the product the buffer is
    overwritten whole before any other use, or it is an allocation of the
    block that is not used again) and nothing between the copy and the
    product may write the source. The CPU backend runs it, and the CUDA
    backend where its products go to cuBLASLt.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def KilnCpuMatmulToDnnl : Pass<"kiln-cpu-matmul-to-dnnl", "mlir::ModuleOp"> {
  let summary = "Call oneDNN's GEMM or matmul primitive for f32 and bf16 matmuls";
  let description = [{
    Runs on memrefs, after bufferization. Every contraction of the form
    C[b, m, n] += A[b, m, k] * B[b, k, n] on f32, or on bf16 A and B into f32
    C, A possibly indexed [b, k, m] and B [b, n, k], the batch dim optional
    (`linalg.matmul`, `batch_matmul`, their `_transpose_a/_b` variants,
    contraction generics), whose operands are statically shaped with
    contiguous rows (last stride 1) or columns, and that does at least
    `min-macs` multiply-adds, becomes a oneDNN call:
    - bf16 products, and f32 ones that read B transposed and A not (dY W^T,
      Q K^T), call `kiln_dnnl_matmul` (backends/cpu/support/DnnlMatmul.c):
      oneDNN's matmul primitive, created by a call site's first call and
      cached in a slot of its own (a module global), one call for a whole
      batch. Its brgemm kernels run these faster than the GEMMs do (the
      measurements are in MatmulToDnnl.cpp); where oneDNN has no
      implementation but its reference one, the call runs the GEMM.
    - the other f32 products call the row-major
      `dnnl_sgemm(ta, tb, M, N, K, 1, A, lda, B, ldb, 1, C, ldc)` ('T' for a
      transposed operand; one call per batch, in an `scf.for`, or spread
      over the threads in an `scf.parallel` for many small products).
    Leading dimensions and batch strides are taken from the strides. C
    accumulates, as linalg accumulates into its init, unless the op right
    before is a `linalg.fill` of the init with zero: that fill is dropped
    and the call overwrites C. The module must then be linked against
    libdnnl (and kiln's kiln_dnnl_support archive).
  }];
  let options = [
    Option<"minMacs", "min-macs", "int64_t", /*default=*/"16384",
           "Products with fewer multiply-adds than this stay loops">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCpuOutlineDnnlConvs
    : Pass<"kiln-cpu-outline-dnnl-convs", "mlir::ModuleOp"> {
  let summary = "Move each f32 or bf16 kiln.conv that oneDNN takes into a "
                "function";
  let description = [{
    Runs on kiln IR, before fusion. Every f32 or bf16 `kiln.conv` with 1 to 3
    spatial dims, no input dilation (`lhs_dilation` all 1), no empty
    dimension and at least `min-macs` multiply-adds is moved into a new
    private function `@kiln_dnnl_conv_<n>(input, weight[, bias][, addend])
    -> result`, which the op's call site calls. The epilogue oneDNN applies
    as it writes the result moves along, each step only where the value
    before it has no other use: a per-channel bias (`kiln.add` of a
    `kiln.broadcast_in_dim` of a tensor whose dims are all 1 but the
    channel dim; the bias argument is that tensor; or of a splat constant of
    the result's type, passed as an [O] vector), then the addition of a
    tensor of the result's type (a residual connection), then `kiln.relu`
    or a SiLU (`kiln.mul` of the value and its `kiln.sigmoid`, the value's
    only two users); a bf16 convolution takes none, since its result is
    rounded to bf16 before the ops after it see it. The function carries
    the convolution's oneDNN descriptor as
    `kiln.dnnl_conv` (an i64 array: spatial rank, groups, N, C, O, flags
    (1 bias, 2 addend, 4 relu, 8 the weight is a `kiln.constant`, 16 run in
    layouts of oneDNN's choice, 32 bf16 operands and result, 64 silu, 128
    the input channels-last, 256 the result and addend channels-last), then
    per spatial dim the input, kernel and output sizes, strides, paddings
    and rhs dilations). An input or result laid out channels-last (the
    `layouts` option: by default where oneDNN's fastest implementation on
    the compiling CPU wants it, which the pass asks oneDNN) is a function
    argument or result in that order ([N, D..., C]), transposed into it
    before the call and out of it after; `kiln-cpu-propagate-layouts` then
    moves those relayouts to where the layout really changes. Its body is the ops themselves: it bufferizes like any
    function, and `kiln-cpu-conv-to-dnnl` replaces its calls after
    bufferization by calls into oneDNN.
  }];
  let options = [
    Option<"minMacs", "min-macs", "int64_t", /*default=*/"16384",
           "Convolutions with fewer multiply-adds than this stay loops">,
    Option<"layouts", "layouts", "std::string", /*default=*/"\"query\"",
           "The memory order of an f32 convolution's input and result: "
           "'query' (channels last where oneDNN's implementation for it on "
           "this CPU reads or writes them so, asked at compile time), "
           "'channels-last' (always) or 'plain' (never)">
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def KilnCpuPropagateLayouts
    : Pass<"kiln-cpu-propagate-layouts", "mlir::ModuleOp"> {
  let summary = "Move the channels-last relayouts of convolutions to where "
                "the layout changes";
  let description = [{
    Runs on kiln IR after `kiln-cpu-outline-dnnl-convs`, which wraps each
    convolution laid out channels-last in a `kiln.transpose` into that
    order before it and one out of it (permutation [0, r-1, 1, ..., r-2])
    after. This pass moves each transpose out of channels-last down through
    the ops that compute the same thing in either layout, so that it meets
    the next convolution's transpose into channels-last and both fold away;
    the values in between stay channels-last. It moves through:

    - an op with the `Elementwise` trait, a `kiln.cast` or a `kiln.select`,
      whose operands all have the
      result's shape, when each other operand is a transpose with the same
      permutation, a constant (transposed when folded) or a
      `kiln.broadcast_in_dim` (broadcast in the other order instead);
    - `kiln.reduce_window` (pooling) and `kiln.pad`, `kiln.slice`, with
      their per-dim attributes permuted;
    - `kiln.reduce_sum`, `kiln.reduce_max` and `kiln.reduce_mean`, over the
      permuted dims (a global pool over the spatial dims needs no transpose
      after it);
    - `kiln.concat` of such transposes (a DenseNet's or Inception's
      channel concatenation).

    A transpose out of channels-last stays where its value is used in any
    other way (a reshape, a product, a function result); transposes with
    other permutations are left alone.
  }];
}

def KilnCpuOutlineAttention
    : Pass<"kiln-cpu-outline-attention", "mlir::ModuleOp"> {
  let summary = "Move each f32 kiln.attention and kiln.attention_grad into a "
                "function";
  let description = [{
    Runs on kiln IR. Every `kiln.attention` and `kiln.attention_grad`
    whose operands are all f32 moves into a new private function
    `@kiln_attention_<n>` taking the op's operands and returning its
    results, which the op's call site calls. The function carries the
    descriptor of the CPU kernels (backends/cpu/support/AttentionAbi.h) as
    `kiln.cpu_attention` (an i64 array: batch, Nq, Nk, D, Dv, flags (1
    causal, 2 masked), the scale's bits, the query tile, the leading rank,
    then the leading dims and, with a mask, the mask's strides per dim, 0
    where it broadcasts), and a backward also `kiln.cpu_attention_backward`.
    Its body only returns `tensor.empty` values of the result types, which
    bufferize like any function's results: the function is never called,
    since `kiln-cpu-attention-calls` replaces its calls after
    bufferization (compiling the op itself there would build its N x N
    composition only to erase it).
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"256",
           "Query rows per call of the forward kernel (the unit of work "
           "the threads share; the kernel takes each key block for four "
           "64-row sub-tiles of it in turn)">
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnCpuAttentionCalls
    : Pass<"kiln-cpu-attention-calls", "mlir::ModuleOp"> {
  let summary = "Call the CPU attention kernels for outlined attentions";
  let description = [{
    Runs on memrefs, after bufferization. Each call of a function marked
    `kiln.cpu_attention` (see `kiln-cpu-outline-attention`; after
    bufferization it takes the operand buffers, then the result buffers)
    becomes an `scf.parallel` over (batch entry, query tile) whose body
    calls

      kiln_attention_f32_forward(descriptor, q, k, v, mask, out, lse,
                                 batch, tile)

    or, for a backward, one over batch entries calling
    `kiln_attention_f32_backward(descriptor, q, k, v, mask, out, lse, dout,
    dq, dk, dv, batch)`, with pointers to the buffers' first elements (null
    for an absent mask) and to a constant global holding the descriptor.
    Each loop carries `kiln.body_work` (the multiply-adds of one iteration)
    for `kiln-cpu-parallel-loops`. The functions are erased once nothing
    calls them. The module must then be linked against the kernels'
    archive (backends/cpu/support/Attention.c).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCpuConvToDnnl : Pass<"kiln-cpu-conv-to-dnnl", "mlir::ModuleOp"> {
  let summary = "Call oneDNN's convolution primitive for outlined convs";
  let description = [{
    Runs on memrefs, after bufferization and memory planning. Each call of
    a function marked `kiln.dnnl_conv` (see `kiln-cpu-outline-dnnl-convs`;
    after bufferization it takes the input, the weight, the bias and the
    addend where the descriptor's flags say so, and the result buffer)
    becomes

      kiln_dnnl_conv_f32(slot, descriptor, input, weight, bias, addend,
                         result)

    (`kiln_dnnl_conv_bf16` where the descriptor's flags say bf16)
    with pointers to the buffers' first elements (null for an absent bias
    or addend), to a constant global
    holding the descriptor and to a zero-initialized pointer-sized global,
    one per call site, where the support library
    (backends/cpu/support/DnnlConv.c) caches the primitive it creates on the
    first call. Where the result buffer is a fresh allocation only copied
    into another buffer right after the call (a returned value, once
    results are out-params) and freed, the call writes that buffer instead
    and the allocation and copy go. The functions are erased once nothing
    calls them. The module must then be linked against that library and
    libdnnl.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCpuProfileNames
    : Pass<"kiln-cpu-profile-names", "mlir::ModuleOp"> {
  let summary = "Name each kiln op's location after the op, for profiling";
  let description = [{
    Runs first in the CPU pipeline of `kiln-compile --profile`, on kiln IR.
    Each kiln op's location `L` becomes `"name"(L)` (a NameLoc), `name`
    being the op's name without the dialect (`matmul`, `relu`, `while`);
    `kiln.constant`, `kiln.fused` and the terminators keep theirs. The ops
    that the lowering makes from an op carry its location, and fusion keeps
    the locations of the ops it merges, so that `kiln-cpu-profile` can name
    a loop nest after the kiln ops it computes. Only names change: nothing
    that decides code reads locations. Each `func.func` of the module, the
    program's functions, is marked `kiln.profiled`: `kiln-cpu-profile`
    instruments those and not the helpers the lowering adds later.
  }];
}

def KilnCpuProfile : Pass<"kiln-cpu-profile", "mlir::ModuleOp"> {
  let summary = "Time each loop nest, oneDNN call and loop with runtime calls";
  let description = [{
    Runs on memrefs, after the oneDNN calls are made and before linalg
    becomes loops (`kiln-compile --profile`). In each function marked
    `kiln.profiled` (by `kiln-cpu-profile-names`), and in the
    bodies of the loops and conditionals of kiln.for, kiln.while and
    kiln.cond, every region is bracketed by
    `func.call @kiln_profile_begin(%id)` and `@kiln_profile_end(%id)`:

    - a linalg op with loops (not on rank-0 buffers: that is a few scalar
      instructions) or an `scf.parallel`/`scf.forall` (one loop nest: a
      fused region), named after the kiln ops whose locations it carries
      (see `kiln-cpu-profile-names`), e.g. `fused: add+relu 256x1024 @
      model.mlir:7` (iteration space, then the source line);
    - a call of oneDNN (`dnnl_sgemm 256x1024x784`, with `(batch B)` for
      the loop over a batch; `dnnl_matmul 256x1024x1024` for
      `kiln_dnnl_matmul`, with ` bf16` and `(batch B)` where they apply;
      `dnnl_conv 1x64x56x56 -> 1x64x56x56 k3x3`);
    - an `scf.for` of kiln.for (its location named `for` by
      `kiln-cpu-profile-names`), an `scf.while` and an `scf.if` that holds
      regions (`for @ model.mlir:12`, `while @ ...`, `cond @ ...`), whose
      bodies are instrumented in turn. Nothing inside a parallel loop is.

    `@kiln_profile_begin/end(i32)` are defined in the module: they add the
    region base the runtime writes at load and call through the exported
    slots of kiln/ProfileAbi.h, which the runtime fills. The names go into
    the module as an exported constant table (`kiln_profile_region_count`,
    `kiln_profile_region_names`: the names, each ended by a NUL, in region
    order), from which the runtime names its events.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCpuParallelLoops : Pass<"kiln-cpu-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Keep scf.parallel only where a parallel region pays off";
  let description = [{
    Runs between `convert-linalg-to-parallel-loops` and
    `convert-scf-to-openmp`. Perfectly nested `scf.parallel` loops are
    first merged into one multi-dim loop (upstream's `scf.parallel`
    canonicalization; OpenMP collapses its dims into one iteration space).
    Then an `scf.parallel` nested in another one, and an
    outermost one whose loop nest runs fewer than `min-iterations`
    innermost iterations (static trip counts multiplied through the nest),
    becomes a nest of `scf.for` loops; the remaining ones become OpenMP
    parallel loops. Of those, a loop of several dims whose body has no
    loops or calls (an elementwise kernel) keeps its last dim out of the
    collapsed iteration space, as an `scf.for` inside: that loop walks
    contiguous memory and vectorizes, where collapsed every element would
    recover its indices by division. If the other dims have fewer than 64
    iterations, the last dim (static, unit stride, at least 2048) is cut
    into chunks of 1024 first, and the chunks stay parallel. Loops with
    reductions are left alone.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"65536",
           "Loop nests with fewer innermost iterations run sequentially">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def KilnCpuParallelReductions
    : Pass<"kiln-cpu-parallel-reductions", "mlir::func::FuncOp"> {
  let summary = "Split large reductions with few outputs into per-chunk partials";
  let description = [{
    Runs on bufferized linalg, before `convert-linalg-to-parallel-loops`. A
    linalg op with one output, static loop ranges, at least
    `min-iterations` iterations in all, fewer than `chunks` parallel
    iterations (a full reduction has one), and a body yielding
    `combine(x, out)` for a combiner with an identity (addf, mulf,
    maximumf, minimumf, maxnumf, minnumf, addi, muli, maxsi, minsi, maxui,
    minui, andi, ori) that uses `out` nowhere else, becomes:
      1. an `scf.parallel` over up to `chunks` chunks of its largest
         reduction dim; each chunk folds its share of every output element
         into an accumulator (`scf.for` iter_args from the combiner's
         identity, the combiner marked `reassoc` so that LLVM vectorizes
         it) and stores it into a partials buffer;
      2. a sequential loop folding the partials, in chunk order, into the
         output's initial value.
    The parallel loop becomes an OpenMP loop like any other; float results
    differ from the sequential order only by the rounding of the
    reassociated sum.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"65536",
           "Reductions with fewer iterations in all stay as they are">,
    Option<"maxChunks", "chunks", "int64_t", /*default=*/"64",
           "Most chunks (partial results per output element); reductions "
           "with at least this many outputs stay as they are">
  ];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCpuPlanMemory : Pass<"kiln-cpu-plan-memory", "mlir::func::FuncOp"> {
  let summary = "Let intermediate buffers with disjoint lifetimes share memory";
  let description = [{
    Runs on memrefs, before the deallocation pipeline. In every block, the
    statically shaped `memref.alloc`s whose uses (through views, in any
    nested region) stay plain accesses within the block are planned into
    one 64-byte aligned arena: a buffer lives from its allocation to the
    last op of the block using it, and buffers whose lifetimes do not
    overlap share bytes (first fit). Each such allocation becomes a
    `memref.view` of the arena (unless padding would make the arena no
    smaller). With `report`, a remark per function gives the bytes of its
    statically shaped intermediates, summed, against the bytes after
    planning.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with the intermediate bytes before and after planning">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnFreeAfterLastUse
    : Pass<"kiln-free-after-last-use", "mlir::func::FuncOp"> {
  let summary = "Free each buffer right after its last use instead of at the "
                "end of its block";
  let description = [{
    Runs between upstream's ownership-based deallocation (and its
    simplification) and the lowering of `bufferization.dealloc`.
    Ownership-based deallocation frees the buffers a block owns at the end
    of that block, so every buffer a function's body allocates outside the
    arenas of `kiln-cpu-plan-memory` - the results of a `scf.if` (a
    kiln.cond), of a loop, the operands of a call - lives until the
    function returns. Each memref of a `bufferization.dealloc` is split off
    into a dealloc of its own right after the last op of the block that
    uses a value of its alias class (views, region results and arguments it
    flows into, in either direction, by BufferViewFlowAnalysis; not through
    the function's arguments or constant globals, which it never owns),
    with the base-buffer bookkeeping of ownership-based deallocation. The
    new dealloc retains the values of the class that the original one still
    frees or retains, and its results are or'ed into their conditions and
    into the original's results, so a buffer that a kiln.cond passed
    through is freed once, by whoever frees it last. A memref whose class
    is used outside its block, or named by another dealloc of the block,
    stays. A pipelined training step thus frees each micro-batch's kept
    activations after that micro-batch's backward pass, which is what
    bounds 1F1B's memory.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def KilnCpuMemoryHooks : Pass<"kiln-cpu-memory-hooks", "mlir::ModuleOp"> {
  let summary = "Route the code's buffer allocations through the runtime's "
                "counting allocator";
  let description = [{
    Runs on the LLVM dialect, after `finalize-memref-to-llvm` with
    `use-generic-functions`, which calls `_mlir_memref_to_llvm_alloc(i64)`
    and `_mlir_memref_to_llvm_free(ptr)` for every `memref.alloc` and
    `memref.dealloc`. This pass defines the two functions (internal
    linkage): each calls through a pointer slot the module exports
    (`kiln_memory_fn_alloc`, `kiln_memory_fn_free`, kiln/MemoryAbi.h),
    which the runtime fills at load with functions that count the bytes the
    program's buffers hold (`kiln_memory_stats`, `kiln-run
    --memory-stats`), and call `malloc` and `free` while a slot is empty.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // KILN_BACKENDS_PASSES_TD
