//===- CudaPasses.td - the CUDA backend's passes -----------*- tablegen -*-===//
//
// The passes of the CUDA backend (backends/cuda/, the library
// KilnBackendsCuda), registered by registerKilnCudaPasses().
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDAPASSES_TD
#define KILN_BACKENDS_CUDAPASSES_TD

include "mlir/Pass/PassBase.td"

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

def KilnCudaFreshCondResults
    : Pass<"kiln-cuda-fresh-cond-results", "mlir::func::FuncOp"> {
  let summary = "Give each kiln.cond result a buffer of its own in both "
                "branches";
  let description = [{
    Runs after bufferization, before deallocation is planned. A
    `kiln.cond` (an `scf.if` on a loaded `i1`) whose branch yields a buffer
    defined outside it (an argument, a constant's buffer, a value computed
    before the cond) returns a buffer of its own in one branch and that
    buffer in the other. The deallocation pipeline then frees the result
    only when the predicate, read on the host, chose the first branch; so
    the cond's predicate is needed after it, and `kiln-cuda-graph-conds`
    cannot make it a conditional node of a CUDA graph, whose branches the
    device chooses. Each such buffer is copied (`linalg.copy`) into a new
    allocation at the end of its branch, which yields that instead: every
    result is then fresh and owned, whichever branch runs. A yielded buffer
    that the branch computes (allocated in it, or a loop's result in it) is
    left as it is, as are results of dynamic shape.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCudaOutlineAttention
    : Pass<"kiln-cuda-outline-attention", "mlir::ModuleOp"> {
  let summary = "Move each kiln.attention into a function for a "
                "FlashAttention kernel";
  let description = [{
    Runs on kiln IR, before the lowering (and so before
    `kiln-decompose-attention`). Every `kiln.attention` whose operands and
    results are f32 is replaced by a call of a new private function
    `@kiln_cuda_flash_attention(q, k, v[, mask]) -> (result, lse)` marked
    `kiln.cuda_attention = {scale = f64, causal = bool}`, whose arguments
    are read-only for bufferization and whose body only allocates the
    results: `kiln-cuda-flash-attention` replaces every call once buffers
    exist. An f32 `kiln.attention_grad` likewise becomes a call of
    `@kiln_cuda_flash_attention_grad(q, k, v, dO, lse, rowsum(dO * O)[,
    mask]) -> (dq, dk, dv)` marked `kiln.cuda_attention_grad`, the row sums
    computed before it as kiln ops. An f16 or bf16 `kiln.attention` of
    static shapes with D and Dv multiples of 8 up to 128 is outlined as it
    is, for the tensor-core kernel, and so is such a `kiln.attention_grad`
    (its row sums computed in f32); other f16 and bf16 ops are first rewritten as the f32 op on operands widened by
    `kiln.cast`, their results rounded back, which is how the ops define
    half precision. f64, dynamic shapes and
    head dims that would leave one of the kernels' threads more than 64 of
    them stay, for the composition. With tensor-cores=false (an
    architecture before sm_80, which has no m16n8k16 products) half
    precision is all widened.
  }];
  let options = [
    Option<"tensorCores", "tensor-cores", "bool", "true",
           "Outline f16 and bf16 attentions and gradients that fit as "
           "they are, for the tensor-core kernels (sm_80 and later)">,
  ];
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
    f32, f16 and bf16 below) becomes one `gpu.launch`: ceil(Nq / rows-per-block) blocks per
    batch entry (the product of L entries), all numbered along grid x
    (grid y and z hold at most 65535 blocks), entry by entry; each block
    has rows-per-block query rows with G
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

    Where D is a multiple of 4 up to 64 and Dv = 64 (the head dims of BERT,
    GPT-2 and most models), the launch is instead the register-tiled
    kernel, whatever the options: blocks of 16 x 16 threads owning 64 query
    rows, which walk the keys in tiles of 64; each thread computes a 4 x 4
    tile of scores (rows ty + 16 i, keys 4 tx + j) and of the output (rows
    ty + 16 i, dims 4 tx + j) from vectors of four floats read from
    workgroup memory (the scaled query rows, the key tile transposed with
    its columns swizzled by the dim, the value tile, and the tile's weights
    p in place of the keys), the 16 threads of a row combining their
    maxima and sums with shuffles.

    A call on f16 or bf16 buffers (the log-sum-exp f32) is the tensor-core
    kernel: blocks of four warps owning 16 query rows each (two groups of
    16, blocks of 128 rows, for head dims up to 64 without a mask: each
    fragment read from a staged tile then feeds both groups' products) walk the keys
    in tiles of 64 (32 where a head dim is over 64), staged as words of two halves (the keys as pairs of
    dims, the values transposed as pairs of keys, the columns swizzled
    against bank conflicts). A thread reads 8 halves of a row at a time:
    where the buffer starts at a 16-byte boundary (tested in the kernel)
    as one `llvm.load` of 16 bytes with that alignment (ld.global.v4),
    elsewhere as a `vector.load`, which LLVM splits into halves. The
    gradient's kernels stage their tiles the same way. One group of rows
    with head dims up to 96 asks for three blocks per SM
    (`kiln.min_blocks_per_sm`). Each warp computes its scores with PTX's
    `mma.m16n8k16` (`llvm.call_intrinsic`, f32 accumulators), scales and
    masks them in f32, keeps each row's online softmax across the row's
    four lanes, rounds the weights p to the operands' type and adds p v
    with the same product, p staying in registers. The result is rounded
    once from acc / l. Its head dims: D and Dv multiples of 8 up to 128;
    where D is not a multiple of the products' 16, their last 8 dims are
    zeros (the key tile's staged as such, the query's operands as
    constants), as are the gradient's below for D and Dv.

    With f32-tensor-cores, an f32 call whose head dims the tensor-core
    kernel takes is that kernel too, on 3xTF32 products:
    each f32 operand is split into two TF32 words, big (the value rounded
    to TF32, to nearest) and small (the remainder, rounded), and each
    product is three `mma.m16n8k8` TF32 products, big x small, small x big
    and big x big, with f32 accumulators (f32's accuracy: the dropped
    small x small term is below 2^-21 of the product). The weights p stay
    f32 and are split in registers; the values are staged transposed with
    the keys of each 8 in the order in which the weights' fragments hold
    them (keys 2i and 2i + 1 of the fragment at k = i and i + 4); one group
    of 16 rows per warp, tiles of 32 keys (query words over 64 dims stay
    whole and are split per tile, and over 96 are read again per tile). Up
    to 64 head dims the key and value tiles are staged split, each word's
    two TF32 words in tiles of their own, split once by the thread that
    stages it; wider ones are staged as f32 words, which each warp splits
    as it reads them. An
    f32 gradient call whose head dims are multiples of 8 up to 128 is
    likewise the tensor-core gradient on 3xTF32 products, with tiles of
    32 rows of the other side (16 over 64 dims) and the own rows' operands
    read and split per tile. Up to 64 head dims the key kernel stages its
    tiles split (four, each buffer both parts of its tile, 64 KiB and its
    lse and row sums, placed in dynamic
    shared memory by kiln-cuda-dynamic-shared-memory) where shared-bytes
    gives a block at least twice that, so that two blocks share a
    multiprocessor. With gradient-atomics, where the kernel with its keys
    staged transposed and split and ds's tile split (in the query tile's
    buffers at D = 64) still fits twice (sm_90 up to 64 head dims, sm_80
    up to 32), that one launch also adds dq with atomics, into dq itself,
    scaled in place after. Otherwise a second launch over query rows
    stages its tiles split up to 64 head dims (three, each buffer both
    parts of its tile, 48 KiB).

    A causal grid, in every kernel, starts with the blocks of the last
    rows, which have the most keys to walk, across batch entries: the
    entries go in groups whose keys and values fit in 16 MiB (a share of
    L2 they then read together), and within a group the blocks of the
    same rank in every entry follow each other, the longest first, so that
    no long block starts late and ends after the rest.

    A call of a function marked `kiln.cuda_attention_grad` (query, key,
    value, the result's cotangent dO, lse, rowsum(dO * O) [L..., Nq], the
    mask if any, then the dq, dk and dv buffers) becomes two launches of
    the same geometry that recompute p = exp(s - lse) per (query, key)
    pair, 0 where unseen: one owns query rows and walks the key tiles
    (causal: up to the block's diagonal), summing ds k into dq, where
    ds = p (dO . v - rowsum); the other owns key rows and walks the query
    tiles (causal: from the tile of its first key), staging query, dO,
    lse and row-sum tiles, summing ds q into dk and p dO into dv. dq and dk
    are scaled once at the end. Where D = Dv = 64, the launches are
    register-tiled as the forward's: blocks of 16 x 16 threads own 64 key
    rows, stage them once (scaled), and walk the query tiles of 64, each
    thread on a 4 x 4 tile of (query, key) pairs; one buffer holds in turn
    a tile transposed and the tile's p or ds, another the rows the next
    product reads. With gradient-atomics (the default) that one launch
    also computes each query tile's share of dq, ds transposed times the
    block's key rows, and adds it into dq (zeroed by a launch before) with
    atomics, neighbouring threads on neighbouring words; the blocks of a
    batch entry start their walks at different tiles. Five products per
    tile instead of seven, but the order of dq's sums is the order in
    which blocks run. Without it, a second launch owns 64 query rows and
    walks the key tiles for dq. A gradient call on f16 or bf16 buffers
    (lse and row sums f32) is the tensor-core gradient, whatever the
    options, for D and Dv multiples of 8 up to 128: blocks of four
    warps, each warp owning 16 rows. Over key rows, the warps hold their
    keys and values as A operands and per query tile (64 rows, 32 for
    head dims over 64, 16 over 96) compute s^T = K Q^T and dp^T = V dO^T
    from the staged queries and dO, then dv += p^T dO and dk += ds^T Q, p
    and ds rounded to the operands' type. With gradient-atomics, where
    the warps share a tile's dq evenly, that launch also stages its keys
    once transposed,
    writes each tile's ds transposed to workgroup memory and adds ds K
    for the tile's queries into an f32 buffer with atomics, which a
    launch zeroes before and another scales and rounds into dq after
    (five products per tile instead of seven). Otherwise a second launch
    over query rows computes s = Q K^T and dp = dO V^T per key tile, then
    dq += ds K, every sum in a fixed order. The functions are erased. No
    Nq x Nk buffer exists.
  }];
  let options = [
    Option<"rowsPerBlock", "rows-per-block", "int64_t", "32",
           "Query rows per block (fewer where rows x lanes would exceed "
           "1024 threads)">,
    Option<"keysPerTile", "keys-per-tile", "int64_t", "64",
           "Keys per tile staged in workgroup memory">,
    Option<"gradientAtomics", "gradient-atomics", "bool", "true",
           "Compute the register-tiled gradient and the tensor-core one "
           "(in 3xTF32 where two blocks of it with its split keys fit a "
           "multiprocessor) in one kernel that adds dq with atomics "
           "(false: two kernels that recompute p, summing every result in "
           "a fixed order)">,
    Option<"f32TensorCores", "f32-tensor-cores", "bool", "false",
           "Run f32 attention and its gradient (head dims multiples of 8 "
           "up to 128) on the tensor-core kernels in 3xTF32 products (f32's "
           "accuracy; sm_80 and later)">,
    Option<"tuneF32", "tune-f32", "bool", "false",
           "Where an f32 call fits the tensor-core kernels (and "
           "f32-tensor-cores is off), build it as a tuned call site "
           "(TunedSites.h) whose variants are the f32 kernels on CUDA cores "
           "(f32), the 3xTF32 ones (3xtf32) and, for a gradient that adds "
           "dq with atomics in one kernel, its two kernels "
           "(f32-two-kernels, 3xtf32-two-kernels): the runtime runs the "
           "fastest, timed at the site's first call">,
    Option<"sharedBytes", "shared-bytes", "int64_t", "49152",
           "The shared memory a block may have on the target architecture, "
           "with its kernel's opt-in (kiln-cuda-check-launches' limit)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
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
    an operand that is not dense in row-major order, or whose address
    depends on a value the host loads from memory (a dynamic slice's row
    index), is copied into (or, for the result, out of) a fresh dense
    buffer around the call, by a kernel that reads that value itself. The
    marked functions, then uncalled, are erased. A malformed descriptor or
    call is an error.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCudaOutlineLibraryAttention
    : Pass<"kiln-cuda-outline-library-attention", "mlir::ModuleOp"> {
  let summary = "Move each half-precision attention cuDNN computes into a "
                "function for kiln-cuda-library-attention";
  let description = [{
    Runs on kiln IR, before kiln-cuda-outline-attention. Every
    `kiln.attention` and `kiln.attention_grad` with f16 or bf16 query, key
    and value (and mask) of static shapes, none empty, and head dims that
    are multiples of 8 up to 128 is replaced by a call, with the op's own
    operands, of a new private function `@kiln_cuda_cudnn_attention`
    (`@kiln_cuda_cudnn_attention_grad`) marked `kiln.cudnn_attention =
    array<i64: ...>` (`kiln.cudnn_attention_grad`), the descriptor of
    kiln/CudaLibraryAbi.h: dtype, flags (causal 1, mask 2), B, H, Nq, Nk,
    D, Dv, the mask's dims MB, MH, MQ, MK and the bits of the f64 scale.
    The leading dims fold into H (the last) and B (the product of the
    others); an attention whose mask broadcasts over some but not all of
    the others is left alone, as is every gradient under `deterministic`
    (cuDNN adds dq with atomics). The functions' arguments are read-only
    for bufferization and their bodies only allocate the results.

    With `tune`, an op that kiln's tensor-core kernels take as well (f16
    or bf16, head dims they fit: kiln-cuda-flash-attention) becomes a
    choice between the two, which kiln-cuda-library-attention makes a
    tuned call site: its function is marked `kiln.cuda_attention` (or
    `kiln.cuda_attention_grad`) = {scale, causal} too, and a gradient's
    call passes rowsum(do * o), computed before it as kiln ops in f32, for
    kiln's kernels after do (q, k, v, o, lse, do, rowsum, the mask if any).
  }];
  let options = [
    Option<"deterministic", "deterministic", "bool", "false",
           "Leave gradients to kiln's kernels, which can sum in a fixed "
           "order">,
    Option<"tune", "tune", "bool", "false",
           "Where kiln's tensor-core kernels take an attention too, leave "
           "the choice between them and cuDNN to the runtime, which times "
           "both on the device">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnCudaLibraryAttention
    : Pass<"kiln-cuda-library-attention", "mlir::ModuleOp"> {
  let summary = "Replace calls of outlined attention by cuDNN calls "
                "through the runtime";
  let description = [{
    Runs on memrefs, after bufferization, before kiln-cuda-flash-attention.
    Each call of a function marked `kiln.cudnn_attention` (operands: q, k,
    v, the mask if the descriptor's flags say so, then the result and
    log-sum-exp buffers) becomes a call `kiln_cuda_attention(descriptor,
    q, k, v, mask, o, lse)` of the runtime (kiln/CudaLibraryAbi.h) with
    the buffers' device addresses (a null mask without one) and the
    descriptor as a constant global `kiln_cuda_attention_descriptor`; each
    call of one marked `kiln.cudnn_attention_grad` (q, k, v, o, lse, do,
    the mask if any, then dq, dk and dv) becomes
    `kiln_cuda_attention_grad(descriptor, q, k, v, o, lse, do, mask, dq,
    dk, dv, scratch)`, the f32 scratch of B * H * Nq * (D + 1) elements
    allocated before the call and freed after it. Result buffers only
    copied into the function's out-params are replaced by those, and
    operands that are not dense in row-major order go through dense copies,
    as for kiln-cuda-library-conv. The marked functions, then uncalled,
    are erased. A malformed descriptor or call is an error.

    A call of a function marked `kiln.cuda_attention` (or
    `kiln.cuda_attention_grad`) as well, a choice of
    kiln-cuda-outline-library-attention's `tune`, becomes a tuned call
    site (`kiln.cuda_tuned_site`, whose rounds the runtime times at the
    first call) of two variants: `kiln`, a call of a new function marked
    for kiln-cuda-flash-attention alone (the gradient's on q, k, v, do,
    lse, rowsum, the mask, then dq, dk and dv), and `cudnn`, the runtime
    call above (the gradient's without the rowsum). The result buffers are
    forwarded before the site, so that both variants write the same ones.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
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
    product overwrites C; otherwise it accumulates into C. An input whose
    address depends on a value the host loads from memory (a dynamic
    slice's row index, a kiln.select's pick) is copied into a fresh buffer
    first (a linalg.copy, whose kernel reads that value), and the product
    reads the copy. Epilogues: an f32 bias added in place to an f32
    product's result along its columns (KILN_CUDA_MATMUL_BIAS), or the sum
    of an f32 product's A or B over k into a zero-filled f32 vector in the
    product's block (a dense layer's bias gradient,
    KILN_CUDA_MATMUL_BIAS_GRADIENT_A/_B), is computed by the call and its
    kernel goes.
  }];
  let options = [
    Option<"tf32", "tf32", "bool", "false",
           "Let f32 products round their inputs to TF32 on tensor cores">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
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
    block per tile x tile piece of C, all numbered along grid x (columns
    fastest, then rows, then the batch: grid y and z hold at most 65535
    blocks, fewer than a product of a million rows has tiles):
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
    A reduction with too few output elements to fill `split-blocks` blocks
    is split: each output's reduction space (row-major) is cut into
    consecutive chunks of at least block-size x min-per-thread elements, a
    block per (output, chunk) writes its total into a temporary buffer, and
    a second launch, a block per output, folds that output's chunk totals
    into it in chunk order (a fixed order: the result does not depend on
    scheduling).
    Matmuls and other linalg ops are left to `kiln-cuda-map-parallel-loops`.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Most threads per block (fewer, in whole warps, for short reductions)">,
    Option<"maxBlocks", "max-blocks", "int64_t", "65535",
           "Largest grid; further output elements are strided over">,
    Option<"splitBlocks", "split-blocks", "int64_t", "1024",
           "Blocks a reduction with fewer output elements is split into">,
    Option<"minPerThread", "min-per-thread", "int64_t", "16",
           "Fewest elements each thread folds in a split reduction's chunk">,
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

def KilnCudaGraphLoops
    : Pass<"kiln-cuda-graph-loops", "mlir::ModuleOp"> {
  let summary = "Run device-only while loops as CUDA graphs with conditional nodes";
  let description = [{
    Runs on the host code after `kiln-cuda-device-allocations`. An
    `scf.while` whose test and body only queue device work (launches,
    stream-ordered device copies, device allocations and frees, cuBLASLt
    products) and whose test ends by copying a predicate a kernel computed
    back to the host becomes
      scf.if (kiln_cuda_graph_loops()) {
        fixed buffers for the loop-carried and forwarded values
        kiln_cuda_graph_while_begin(); test; kiln_cuda_graph_while_test(p);
        body; kiln_cuda_graph_while_end()
      } else { the loop as it was }
    The runtime captures the test and the body once into a graph whose
    WHILE node runs them on the device until the predicate is false, with
    no host wait per iteration (runtime/lib/cuda/CudaGraphLoops.cpp). A
    captured kernel's arguments are fixed, so the loop-carried values live
    in buffers allocated before the loop: the test reads them, copies what
    it forwards into the forwarded values' buffers, and the body copies the
    values it yields back into the loop-carried ones. Frees of those
    buffers inside the loop, and the ownership flags that guard them, are
    dropped; buffers the loop allocates are freed after their copies.
    A `scf.while` inside such a loop that can run as a graph gets its graph
    form first, inside the outer one's iteration (the runtime puts its
    WHILE node there); the buffers its graph form returns are freed after
    their copies too. So does a cond in its graph form
    (`kiln-cuda-graph-conds`, which runs first in each round of
    `kiln-cuda-graph-forms`) inside the loop, conds in its own graph form
    included: captured with the iteration, its IF nodes go into it, and
    the WHILE nodes of loops in its branches. A `scf.while` inside a cond
    inside a loop gets a graph form of its own (it is the outermost loop
    of its branch), so that the cond, and then the loop around it, can take
    theirs in later rounds. The host form of a loop with a graph form is
    left alone, and the graph form drops the guards of frees on ownership
    flags that are false in it. A loop-carried value that bufferization
    gave a layout of dynamic strides (a cond's result) gets a dense home
    where every buffer it takes is dense. A `scf.for` of constant bounds (a
    `kiln.for`, up to 1024 trips) in the test or the body is captured with
    the iteration, which runs its trips (each trip's work a node of the
    iteration), and so are the guards of frees whose conditions the host
    computes from no memory (its ownership flags, the run-time alias check
    of its result, also one a cond's graph form runs on host buffers of
    its own); the graph form keeps the homes out of those frees and
    frees the counted loop's last buffer after its copy. Loops with host
    reads or writes other than the predicate, waits, convolutions,
    collectives, frees of buffers from before the loop, other loops inside
    them (a `scf.for` of run-time bounds, a `scf.while` that cannot run as
    a graph), or dynamically shaped loop-carried values stay host loops,
    and so do the loops directly inside them, unless `inside-host-loops`
    is set: then only loops inside those host loops are taken, each that
    can run as a graph getting a form of its own (what
    `kiln-cuda-graph-forms` runs once its rounds have settled). The
    runtime captures such a loop again at each trip of the host loop
    around it; the filling loop of a reverse-mode gradient's stack, inside
    the loop that grows the stack, so waits for the host once per growth
    (log2 of the trips) instead of once per trip.
  }];
  let options = [
    Option<"insideHostLoops", "inside-host-loops", "bool", "false",
           "Take only the loops inside host loops (outside any graph form), "
           "as loops of their own">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaGraphForms : Pass<"kiln-cuda-graph-forms", "mlir::ModuleOp"> {
  let summary = "Give conds and loops their graph forms, nested to any depth";
  let description = [{
    Runs `kiln-cuda-graph-conds` and `kiln-cuda-graph-loops` in turn until
    a round adds no graph form (a call of `kiln_cuda_graph_conds` or
    `kiln_cuda_graph_loops`). Each takes the other's graph forms inside
    the regions it checks: conds first, so that a loop whose body holds a
    cond in its graph form can run as a graph with it, then loops, so
    that a branch can hold them, and so on outwards, however deep the
    nesting of loops and conds is. Then `kiln-cuda-graph-loops` with
    `inside-host-loops` gives forms of their own to the loops that a loop
    around them kept on the host.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaResidentConstants
    : Pass<"kiln-cuda-resident-constants", "mlir::ModuleOp"> {
  let summary = "Keep constants on the device, uploaded once per module";
  let description = [{
    Runs on the host code after `kiln-cuda-async-launches`, before
    `kiln-cuda-plan-arena`. A stream-ordered `gpu.memcpy` from a constant
    `memref.global` (a model's weights, as `kiln-cuda-globals-to-buffers`
    copies them into buffers) is handed to the runtime
    (kiln/CudaLibraryAbi.h), which uploads the constant to the device at
    its first use and keeps it there while the module is loaded:
      - where the buffer is only read after the copy, by kernels' loads,
        device copies and parameters of library calls marked
        `llvm.readonly`, and is otherwise only freed, the buffer, its copy
        and its frees go; the function asks
        `kiln_cuda_resident_constant(constant, bytes)` for the device
        address at its start, once per constant, and reads the constant
        there in place;
      - where it is an argument, or a buffer the host code does not touch
        but that is written too, the copy becomes
        `kiln_cuda_copy_constant(destination, constant, bytes)`, a copy on
        the device from the uploaded one;
      - a copy into memory the host code touches stays.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCudaGraphConds : Pass<"kiln-cuda-graph-conds", "mlir::ModuleOp"> {
  let summary = "Give device-only conds a graph form for calls run as CUDA "
                "graphs";
  let description = [{
    Runs on the host code after `kiln-cuda-device-allocations`, before
    `kiln-cuda-graph-loops` in each round of `kiln-cuda-graph-forms` (a
    loop whose body holds a cond in this form can run as a graph with
    it). An `scf.if` on a
    predicate read on the host (a copy of the device byte, a wait, a load)
    whose branches only queue device work and yield buffers they allocate
    becomes
      scf.if (kiln_cuda_graph_conds()) {
        fixed buffers for the results
        b = kiln_cuda_graph_if_begin(&predicate); first branch;
        kiln_cuda_graph_if_else(b); second branch; kiln_cuda_graph_if_end(b)
      } else { the read and the cond as they were }
    The runtime answers nonzero while it captures a call or a loop into a
    CUDA graph (`kiln-cuda-graph-calls`, `kiln-cuda-graph-loops`), at any
    depth: both branches are then captured, each into
    the body of an IF node, one on the predicate and one on its negation,
    and the device picks the branch at every launch
    (runtime/lib/cuda/CudaGraphBranches.cpp). Each branch writes its
    results into the fixed buffers instead of buffers of its own. The
    pipeline runs the pass in turn with `kiln-cuda-graph-loops`
    (`kiln-cuda-graph-forms`): a branch may hold loops and conds in their
    graph forms (their host forms are left out of the check), whose nodes
    go inside the branch's IF node; a result of such a form that the
    branch yields is copied into the fixed buffer and freed, and so is the
    last buffer of a `scf.for` of constant bounds (a `kiln.for`) that the
    branch runs and yields. An i1 result that only decides frees after the
    cond (the ownership flag of such a result) is true in the graph form,
    whose results are fresh buffers (also where it goes to the run-time
    alias check, `dealloc_helper`, which a branch may also run on host
    buffers of its own: the capture decides it from buffer addresses,
    which the graph keeps). A branch may yield a reshape of a
    buffer it allocates, and one buffer for several results (copied into
    each further fixed buffer). Conds that share one predicate read (a cond
    and its gradient's cond) get a read each first, where they all
    qualify: the later ones read a device copy of the byte queued where
    the host copied it. The host form of a cond with a graph form is left
    alone.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaGraphCalls : Pass<"kiln-cuda-graph-calls", "mlir::ModuleOp"> {
  let summary = "Run whole calls as CUDA graphs where the host code only "
                "queues device work";
  let description = [{
    Runs on the host code after `kiln-cuda-graph-loops`. The body of each
    `kiln_entry_<name>` wrapper whose host code (with that of the functions
    it calls) only queues device work - asynchronous launches, stream-
    ordered waits, device allocations, frees and copies, products,
    convolutions and constants' copies through the runtime, host control
    flow with constant loop bounds, loops and conds in
    `kiln-cuda-graph-loops`' and `kiln-cuda-graph-conds`' graph forms, host
    work on host buffers of its own (the deallocation's alias check) -
    becomes
      if (kiln_cuda_graph_call_begin() == 0) {
        the body; kiln_cuda_graph_call_end()
      }
    The runtime captures a call's work into a CUDA graph and launches it
    again on later calls with the same argument buffers, with begin
    answering nonzero (runtime/lib/cuda/CudaGraphCalls.cpp); loops' and
    conds' conditional nodes go into the call's graph. Functions that wait
    for the stream or read or write host memory (a host loop or branch
    reading its predicate included), or whose capture would hold more than
    100000 nodes, stay as they are.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaScalarKernels
    : Pass<"kiln-cuda-scalar-kernels", "mlir::ModuleOp"> {
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

def KilnCudaDeviceIndexReads
    : Pass<"kiln-cuda-device-index-reads", "mlir::func::FuncOp"> {
  let summary = "Read dynamic offsets in the kernels that use them, not on "
                "the host";
  let description = [{
    Runs on loops before `kiln-cuda-map-parallel-loops`. A load of a rank-0
    integer buffer in the host code (the row index of a
    `kiln.dynamic_slice` or `kiln.dynamic_update_slice`, or the rank-0
    predicate of a `kiln.select` that picks a whole buffer) whose value, and
    everything computed from it (scalar arithmetic, views such as the
    slice's `memref.reinterpret_cast`, the select's `arith.select` of two
    buffers), is used only inside loops that
    become kernels (`scf.parallel`, `gpu.launch`) is cloned, with that
    arithmetic, into each of those loops, and the host's copy erased: the
    kernels read the index themselves, and the host no longer copies it
    back and waits for the stream (`kiln-cuda-predicate-copies`), which
    lets the call and the loops around it run as CUDA graphs. The clones
    read the buffer later than the host did, so the pass applies only
    where the host never writes the buffer; where kernels write it (or
    frees free it) between the load and the end of the last of those
    kernels, a one-thread kernel in the load's place first copies the
    value into a fresh buffer, which the clones read and which is freed
    after the last of them. A value that a terminator yields keeps its
    host read. A cond's i1 predicate that the host would load at such an
    index (a gradient's backward loop reading the forward loop's stacked
    predicates) is first loaded by a one-thread kernel into a buffer of its
    own, which the host reads instead (and frees): the index is then the
    kernel's to read.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCudaPredicateCopies
    : Pass<"kiln-cuda-predicate-copies", "mlir::ModuleOp"> {
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

def KilnCudaMergeLaunches
    : Pass<"kiln-cuda-merge-launches", "mlir::func::FuncOp"> {
  let summary = "Run one-block kernels that follow each other as one kernel";
  let description = [{
    Runs on the host code after the kernels are formed (synchronous
    `gpu.launch` ops) and before `kiln-cuda-async-launches`. Each launch of
    one block is a separate kernel, and on a GPU a launch costs more than
    the small work such kernels do (a scalar's update, the test of a loop,
    a block reduction and the comparison that reads it), most of all in a
    loop's CUDA graph, where every kernel is a node per iteration.

    Launches of one block (constant grid of 1 x 1 x 1, constant block
    sizes of x threads) in the same block of the host code are merged
    into one launch that runs their bodies in order, separated by
    `gpu.barrier` (which orders global memory within the block). The
    merged block has as many threads as the largest; a body launched with
    fewer threads runs under `thread_id.x < its size`, with its own block
    size for its loops' strides. A body that synchronizes (barriers, block
    reductions, any other `gpu` op) or reads its block size from an op
    joins only launches of its own size.

    Between two launches merged, the host code may compute values (which
    must not depend on memory) and allocate buffers for the second launch
    (such ops move before the first), and may read and write memory the
    second launch does not use (a predicate's copy to the host, a load
    from it, a free of another buffer), which the second launch then runs
    before. Anything else between them (other device work, a call, an op
    with regions or of unknown effects) keeps them apart. Launches with workgroup or private attributions,
    dynamic shared memory, clusters or async tokens are left as they are.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect", "mlir::scf::SCFDialect"];
}

def KilnCudaCheckLaunches
    : Pass<"kiln-cuda-check-launches", "mlir::func::FuncOp"> {
  let summary = "Refuse launches that no CUDA device can run";
  let description = [{
    Runs on the host code once the kernels are formed, before they are
    outlined (`--target=cuda`) or run on the host (`--target=cuda-on-cpu`),
    so that both targets refuse the same programs. A CUDA launch fails at
    run time when its grid has more than 2^31 - 1 blocks along x or 65535
    along y or z, when its blocks have more than 1024 threads (1024 along x
    or y, 64 along z), or when its blocks' workgroup memory exceeds what a
    block may have on the target architecture (`arch`): 48 KiB statically,
    and up to the architecture's opt-in maximum as dynamic shared memory
    (`kiln-cuda-dynamic-shared-memory`; 64 KiB on sm_75, 99 KiB on sm_86
    and sm_89, 163 KiB on sm_80, 227 KiB on sm_90), the buffers placed at
    16-byte boundaries. Each `gpu.launch` whose sizes are constants is checked against
    these limits, and one that exceeds them is an error at the launch's
    location that names the limit: a program too large for the device
    fails at compile time instead of at its first call. A launch's loop
    whose body synchronizes the block (`gpu.barrier`, `gpu.all_reduce`)
    is an error, naming the workgroup buffer, where two stretches that no
    synchronization separates on a GPU use a buffer (through any view) and
    one of them writes it: the body after its last synchronization and
    the body before its first (consecutive iterations), the loop's block
    before the loop since its last synchronization and the body before
    its first (the loop's entry), or the body after its last and the
    block after the loop up to its next (the exit).
    `kiln-cuda-launches-on-cpu` runs each of those in order for the whole
    block, so that only this check finds such a race.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_80\"",
           "the GPU architecture whose shared memory limit applies">,
  ];
}

def KilnCudaDynamicSharedMemory
    : Pass<"kiln-cuda-dynamic-shared-memory", "mlir::func::FuncOp"> {
  let summary = "Place workgroup buffers over 48 KiB in dynamic shared memory";
  let description = [{
    A block may allocate 48 KiB of shared memory statically; more must be
    dynamic shared memory, which a launch asks for and which the kernel
    must be allowed (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; the
    runtime sets it before the kernel's first launch that asks for more
    than 48 KiB). The passes that build kernels state their buffers as
    workgroup attributions of their `gpu.launch`, whatever their size, so
    that the host emulation (`kiln-cuda-launches-on-cpu`) and the launch
    checks see the same buffers on every target. On the CUDA target, this
    pass turns the workgroup attributions of each launch whose buffers
    take more than 48 KiB into views (`memref.view`) of the launch's
    `gpu.dynamic_shared_memory`, one after the other at 16-byte
    boundaries, and gives the launch their total as its dynamic shared
    memory size. Launches within 48 KiB keep their static buffers.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnCudaOutlineKernels
    : Pass<"kiln-cuda-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Outline the launches into kernels, keeping their occupancy";
  let description = [{
    Runs `gpu-kernel-outlining` and keeps what it drops: the blocks per
    multiprocessor a launch asks for. A `gpu.launch` carrying
    `kiln.min_blocks_per_sm = N` (kiln-cuda-flash-attention sets it on
    kernels whose speed rests on that occupancy) yields a `gpu.func` with
    `nvvm.minctasm = N`, which the PTX gives as `.minnctapersm N`: ptxas
    then keeps the registers of a thread within what N blocks of the
    launch's threads leave it, instead of choosing a count that would run
    fewer blocks at a time. Outlining keeps the ops of a launch's body and
    their attributes, and drops the launch's own; the hint crosses as an
    attribute of the body's first op, taken off again afterwards.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::DLTIDialect",
                           "mlir::cf::ControlFlowDialect"];
}

def KilnCudaLaunchesOnCpu
    : Pass<"kiln-cuda-launches-on-cpu", "mlir::ModuleOp"> {
  let summary = "Run the kernels' bodies on the host, once per GPU thread";
  let description = [{
    Runs where `kiln-cuda-async-launches` would (kernels formed as
    synchronous `gpu.launch` ops on host buffers) and replaces the rest of
    the CUDA pipeline with the CPU's lowering (`kiln-compile
    --target=cuda-on-cpu`), so that the CUDA backend's kernels are checked
    without a GPU. Each launch becomes a loop over its blocks, one after
    the other. A block's body is cut into phases at the ops that
    synchronize its threads (`gpu.barrier`, `gpu.shuffle`,
    `gpu.all_reduce`, the tensor-core products kiln's kernels call, loops
    holding one), each phase a loop over the threads: a value a later
    phase reads waits in a buffer of a slot per thread; a shuffle reads its
    partner's slot (warps of 32 threads in linear id order); a product
    `llvm.nvvm.mma.m16n8k16.row.col.{bf16,f32.f32}` stores each thread's
    operands, and each thread then computes its share of its warp's
    product from the slots as PTX lays out the fragments; a block reduction combines the slots in thread order;
    a loop holding a synchronization runs on the host around its body's
    phases, its carried values in slots. Such an op anywhere but in loops
    whose bounds are the same for all threads of a block (not computed
    from the thread id or a shuffle's result) is an error, as are private
    attributions in a launch that synchronizes. Workgroup attributions
    become buffers of the launch, and the workgroup and private address
    spaces leave all types.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCudaAsyncLaunches
    : Pass<"kiln-cuda-async-launches", "mlir::ModuleOp"> {
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

def KilnCudaExternSharedMemory
    : Pass<"kiln-cuda-extern-shared-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Declare dynamic shared memory as CUDA's extern array";
  let description = [{
    Runs after `convert-gpu-to-nvvm`, which lowers `gpu.dynamic_shared_memory`
    to an internal global of 0 bytes in the shared address space; the PTX
    then holds a static shared variable of one byte whose end the kernel's
    accesses pass. Each global of the shared address space that is an
    array of 0 elements without a value gets external linkage, which the
    NVPTX backend prints as CUDA's dynamic shared memory:
    `.extern .shared .align 16 .b8 name[];`.
  }];
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

#endif // KILN_BACKENDS_CUDAPASSES_TD
