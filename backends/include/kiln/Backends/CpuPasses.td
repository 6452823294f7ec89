//===- CpuPasses.td - the CPU backend's passes -------------*- tablegen -*-===//
//
// The passes of the CPU backend (backends/cpu/), registered by
// registerKilnCpuPasses().
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPUPASSES_TD
#define KILN_BACKENDS_CPUPASSES_TD

include "mlir/Pass/PassBase.td"

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
    (GELU's tanh form cubes its input), other powers stay libm calls. An
    f32 sigmoid as kiln lowers it, `1 / (1 + exp(-x))`, becomes a
    polynomial of its own (input clamped to [-88, 87.33], the power of two
    from the rounding constant's bits, the division a reciprocal estimate
    with a Newton step; within 4 ulps).
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

def KilnCpuBFloat16AsI16 : Pass<"kiln-cpu-bf16-as-i16", "mlir::ModuleOp"> {
  let summary = "Load and store bf16 values as i16, so no copy converts them";
  let description = [{
    Rewrites each `llvm.load` of bf16 (or of a vector of bf16) into a load
    of i16 bit-cast to bf16, and each `llvm.store` of a bf16 value into a
    store of the value bit-cast to i16. The bits in memory are the same; but
    below AVX512-BF16 LLVM holds a bf16 value widened to f32 and narrows it
    before a store with a call of `__truncsfbf2`, which the shared objects'
    C runtime (GCC 12's libgcc) does not provide, so a module that copied
    bf16 values (a broadcast, a transpose) failed to load on such CPUs.
    Runs on the LLVM dialect, at the end of the CPU lowering, after
    kiln-cpu-expand-bf16 has turned the conversions into integer ops.
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
    ops are all the bf16 arithmetic the code holds (its loads and stores
    of bf16 become i16 ones: kiln-cpu-bf16-as-i16). AVX-512 BF16's `vcvtneps2bf16`, which
    LLVM selects for `fptrunc` where the target has it, is not used: it
    flushes subnormal results to zero (1e-39f gives 0x0000 where rounding
    to nearest even gives 0x000b), so the integer rounding stays on every
    host.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
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
    - f32 products of at most 16 rows whose B is a constant global of the
      module (or a static view of one: a recurrence's weights at a small
      batch) call `kiln_packed_matmul_f32`
      (backends/cpu/support/PackedMatmul.c) over a copy of B that this pass
      packs into a new constant global, `<name>_packed`, of type
      memref<panels x K x 16 x f32> (backends/cpu/support/PackedMatmulAbi.h;
      the original goes where nothing else reads it): where oneDNN's
      matmul primitive on the compiling CPU would keep B plain (the
      `packed` option's default, `query`), or always, or never. A product
      of enough work is split into chunks of columns in an `scf.parallel`.
    - the other f32 products by such a constant B, read as stored ([k,
      n], not batched), read a copy of it that this pass stores transposed
      in a new constant global, `<name>_transposed` ([n, k]), as the same
      `packed` option says: oneDNN 2.6's AVX2 GEMM, which packs B on every
      call, packs that form much faster. They call `kiln_dnnl_matmul` with
      B read transposed and not marked constant (the primitive takes it as
      it is).
    Leading dimensions and batch strides are taken from the strides. C
    accumulates, as linalg accumulates into its init, unless the op right
    before is a `linalg.fill` of the init with zero: that fill is dropped
    and the call overwrites C. The module must then be linked against
    libdnnl (and kiln's kiln_dnnl_support archive).
  }];
  let options = [
    Option<"minMacs", "min-macs", "int64_t", /*default=*/"16384",
           "Products with fewer multiply-adds than this stay loops">,
    Option<"packed", "packed", "std::string", /*default=*/"\"query\"",
           "Which f32 products of at most 16 rows by a constant B call "
           "kiln's packed kernel, and which of more rows read B stored "
           "transposed: query (where oneDNN's primitive on this CPU would "
           "keep B plain), always or never">
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
    tensor of the result's type (a residual connection), then `kiln.relu`,
    a clip (`kiln.max` with a splat constant and then `kiln.min` with one,
    a `kiln.relu` then `kiln.min`, either alone, or min then max with the
    lower bound below the upper; ONNX's Clip, a ReLU6) or a SiLU
    (`kiln.mul` of the value and its `kiln.sigmoid`, the value's only two
    users). A bf16 convolution whose result is widened by a `kiln.cast` to
    f32 takes the same ops but a SiLU, on the widened value: its function
    computes them in f32 and returns the result rounded once, replacing the
    `kiln.cast` back to bf16 that follows them; with no such cast it is
    widened again after the call, and with an addend the function returns
    f32 (flag 131072). A function with an activation whose
    result is another such convolution's input also returns a `tensor<f32>`
    bound on the result's magnitude (+inf in its body; the library call
    computes one), which that convolution's function takes after its other
    operands. The function carries the convolution's oneDNN descriptor as
    `kiln.dnnl_conv` (an i64 array: spatial rank, groups, N, C, O, flags
    (1 bias, 2 addend, 4 relu, 8 the weight is a `kiln.constant`, 16 run in
    layouts of oneDNN's choice, 32 bf16 operands and result, 64 silu, 128
    the input channels-last, 256 the result and addend channels-last, 8192
    clip, 16384 returns the bound, 32768 takes one, 65536 oneDNN's
    Winograd algorithm, 131072 an f32 result of bf16 operands, 262144 only
    the weights in a layout of oneDNN's choice, 524288 the input blocked,
    1048576 the result and addend blocked, 2097152 blocks of 16 channels,
    not 8), then per spatial dim
    the input, kernel and output sizes, strides, paddings and rhs
    dilations, then for a clip its two bounds as f32 bits). An input or
    result laid out channels-last (the `layouts` option: by default where
    oneDNN's fastest implementation on the compiling CPU wants it, which
    the pass asks oneDNN) is a function argument or result in that order
    ([N, D..., C]), transposed into it before the call and out of it
    after. One laid out in oneDNN's blocked layout ([N, C/b, D..., b], b 8
    or 16: by default an f32 convolution's where its fastest implementation
    wants it and one of oneDNN's own kernels reads and writes it as it is,
    the weights in a layout of its choice; a first convolution's input of
    fewer channels than a block stays plain) is reshaped into [N, C/b, b,
    D...] and transposed into it before the call, and relaid out of it
    after. `kiln-cpu-propagate-layouts` then moves those relayouts to where
    the layout really changes. Its body is the ops themselves: it
    bufferizes like any function, and `kiln-cpu-conv-to-dnnl` replaces its
    calls after bufferization by calls into oneDNN.

    A quantized f32 convolution, whose input is `(kiln.cast(x) - z) * s`
    (or `kiln.cast(x) * s`) with x ui8 or i8 and z, s splat constants (z a
    value of x's type), and whose weight is a constant of values that are
    each exactly an int8 times one scale (per tensor, else one per output
    channel), becomes `@kiln_dnnl_conv_<n>(x, weights : i8, scales : [O]
    f32, zero point : [1] i32) -> result` with flags 512 (1024 more for an
    i8 x) and no epilogue: its body computes the sums of (x - z) * weights
    times each channel's scale (s times the weights' scale). With the
    `query` layouts this happens only where the compiling CPU has VNNI's
    int8 dot products; the other layouts (tests) outline it regardless.

    An f32 3x3 convolution at stride 1 without dilation or groups, with at
    least 16 input channels, 64 output channels and 392 output positions
    (where oneDNN's Winograd kernels beat its direct ones, their relayouts
    into nChw16c included) runs in oneDNN's Winograd algorithm (flags 65536
    and 16) as the `winograd` option says: where oneDNN has a Winograd
    kernel for it and its epilogue on the compiling CPU (`query`), wherever
    the shape allows (`always`; the call falls back to direct sums where
    oneDNN has none) or never. Where oneDNN has no Winograd kernel (below
    AVX-512), a 3x3 convolution at stride 1 without dilation or groups runs
    kiln's own F(4x4, 3x3) Winograd algorithm instead (flag 4194304;
    WinogradConv.c) on the activations' layouts chosen above: with `query`
    where it pays (at least 8 tiles of 4x4 outputs, and C K / (C + K) at
    least 32 for C input and K output channels; not for a convolution of
    dequantized integers, whose direct sums stay close to the int8
    kernels'), with `own` wherever the shape allows. Such a call reads its operands' magnitudes like an
    activation's and takes and returns bounds the same way: the Winograd
    transforms run only on finite operands that they cannot overflow.
  }];
  let options = [
    Option<"minMacs", "min-macs", "int64_t", /*default=*/"16384",
           "Convolutions with fewer multiply-adds than this stay loops">,
    Option<"layouts", "layouts", "std::string", /*default=*/"\"query\"",
           "The memory order of an f32 convolution's input and result: "
           "'query' (channels last where oneDNN's implementation for it on "
           "this CPU reads or writes them so, asked at compile time; "
           "blocked where it wants its blocked layout and one of its "
           "kernels reads and writes that as it is; or where its fastest "
           "wants neither but one of its kernels reads and writes them "
           "channels-last as they are), 'channels-last' "
           "(always, in the layouts of oneDNN's choice inside the call), "
           "'channels-last-direct' (always, as they are, only the weights "
           "in a layout of oneDNN's choice), 'blocked-8' or 'blocked-16' "
           "(oneDNN's blocked layout as it is, where the channels are a "
           "multiple of the block; f32 only) or 'plain' (never)">,
    Option<"winograd", "winograd", "std::string", /*default=*/"\"never\"",
           "The Winograd algorithm for the 3x3 convolutions where it "
           "pays: 'query' (oneDNN's where it has a kernel for it on this "
           "CPU, asked at compile time, else kiln's own), 'always' "
           "(oneDNN's), 'own' (kiln's own wherever the shape allows) or "
           "'never'">
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def KilnCpuQuantizedMatmuls
    : Pass<"kiln-cpu-quantized-matmuls", "mlir::func::FuncOp"> {
  let summary = "Products of dequantized 8-bit activations and int8 weights "
                "on the integers";
  let description = [{
    Runs on kiln IR, before fusion. An f32 `kiln.matmul` (rank 2, or 3 with
    batched weights) whose lhs is a dequantized 8-bit tensor, `(cast(x) -
    z) * s` with splat z and s (or a `kiln.reshape` of one), and whose rhs
    is an f32 constant of values that are each exactly an int8 times one
    scale (per tensor, else one per column), with at most 66,311 terms per
    sum (so that no i32 sum can wrap), becomes the 8-bit product of x and
    the int8 weights in i32 (`kiln.matmul ... -> i32`), minus z times the
    weights' column sums (a constant) where z is not 0, cast to f32 and
    multiplied by each column's scale (s times the weights'): ONNX's QDQ
    MatMul and Gemm on oneDNN's int8 kernels. The integer sum is exact; the
    result differs from the f32 product by that product's rounding. With
    `query-cpu` (the default) only where the compiling CPU has VNNI's int8
    dot products (oneDNN asked at compile time), which the int8 product
    needs to be faster than the f32 one.
  }];
  let options = [
    Option<"queryCpu", "query-cpu", "bool", /*default=*/"true",
           "Rewrite only where the compiling CPU has VNNI's int8 dot "
           "products">
  ];
}

def KilnCpuPropagateLayouts
    : Pass<"kiln-cpu-propagate-layouts", "mlir::ModuleOp"> {
  let summary = "Move the relayouts of convolutions' activations to where "
                "the layout changes";
  let description = [{
    Runs on kiln IR after `kiln-cpu-outline-dnnl-convs`, which wraps each
    convolution laid out channels-last in a `kiln.transpose` into that
    order before it and one out of it (permutation [0, r-1, 1, ..., r-2])
    after, and one laid out blocked ([N, C/b, D..., b]) in a `kiln.reshape`
    into [N, C/b, b, D...] and a transpose moving the lanes last before it,
    and a transpose ([0, 1, r, 2, ..., r-1]) and a reshape back after it.
    This pass moves each relayout out of a layout down through the ops that
    compute the same thing in either layout, so that it meets the next
    convolution's relayout into the same layout and both fold away; the
    values in between stay in that layout. It moves through:

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

    Blocked, a broadcast's [C] operand is split into [C/b, b]; pooling,
    padding and slicing move only where they leave the channel dim as it
    is, reductions only over spatial dims (a global pool leaves [N, C/b,
    b], reshaped to [N, C]).

    A relayout stays where its value is used in any other way (a reshape,
    a product, a function result); transposes with other permutations are
    left alone.
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
    composition only to erase it). An f16 or bf16 op is first rewritten as
    the f32 op on operands widened by `kiln.cast`, its results rounded
    back, which is how the ops define half precision; f64 ones stay.
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
                         result, input bound, result bound)

    (`kiln_dnnl_conv_bf16` where the descriptor's flags say bf16;
    `kiln_dnnl_conv_int8`, without the bounds, for a quantized one)
    with pointers to the buffers' first elements (null for an absent bias,
    addend or bound), to a constant global
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

def KilnCpuProductLoopOrder
    : Pass<"kiln-cpu-product-loop-order", "mlir::func::FuncOp"> {
  let summary = "Products left as loops walk rows of B and C innermost";
  let description = [{
    Runs on bufferized linalg after `kiln-cpu-matmul-to-dnnl` and
    `kiln-cpu-parallel-reductions`, before `convert-linalg-to-parallel-loops`.
    A contraction still there (an integer or f64 product, an f32 one below
    oneDNN's threshold: `linalg.matmul`, `batch_matmul`, `matmul_transpose_a`
    or such a generic) whose loops are [b,] m, n, k, whose output has unit
    stride along n and whose inputs have n, where they use it, as their last
    index of unit stride, becomes a `linalg.generic` with the loops
    [b,] m, k, n: the innermost loop adds A[m, k] * B[k, n] along the rows
    B[k, :] and C[m, :], which LLVM vectorizes, instead of summing C[m, n]
    down a column of B. Each output element is still summed over k in
    increasing order: the results do not change. Products that read B as
    [n, k] are left alone.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def KilnCpuRowCopies : Pass<"kiln-cpu-row-copies", "mlir::ModuleOp"> {
  let summary = "Copy strided buffers one memcpy per contiguous row";
  let description = [{
    Runs on bufferized linalg after `kiln-cpu-collapse-contiguous-loops`,
    before `convert-linalg-to-parallel-loops`. A `linalg.copy` between
    statically shaped buffers of one element type of whole bytes, both of
    unit stride in their last dim, with rows of at least 16 bytes, stops
    being a loop nest of its own:

    - a copy between two buffers that are each one contiguous run
      (`memref::isStaticShapeAndContiguousRowMajor`, the test by which the
      LLVM lowering makes a `memref.copy` an `llvm.memcpy`) is one
      `memref.copy` of one-dim views, or, from 128 KiB, an `scf.parallel`
      over chunks of 64 KiB and one copy of the rest;
    - any other copy calls `kiln_copy_rows_<L>x<type>(source, target)`, a
      private function of the module made on first use for each row length
      L and element type (`no_inline`), whose `scf.for` over the rows of
      its `memref<?xLxT, strided<[?, 1], offset: ?>>` arguments copies each
      row with a `memref.copy`. The leading dims that are dense over one
      another on both sides are collapsed into the rows; blocks of about
      64 KiB of rows are an `scf.parallel` over calls, and the dims before
      those, if any, an `scf.parallel` around.

    The loops carry `kiln.body_work` (the elements of one iteration) for
    `kiln-cpu-parallel-loops`.

    A copy loop reads and writes through two pointers that LLVM cannot
    prove apart: it vectorizes it behind a run-time overlap check and keeps
    the scalar loop, unrolled when the row is short, as the fallback, about
    230 lines of LLVM IR per copy, and each loop in a function makes the
    passes over it slower (LLVM's loop rotation took 2.2 s on DenseNet-121's
    entry function alone). A memcpy never overlaps, and one loop serves
    every copy of a row length. The 652 concatenation copies of
    DenseNet-121 made most of its compile time so.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCpuOutlineLoopNests
    : Pass<"kiln-cpu-outline-loop-nests", "mlir::ModuleOp"> {
  let summary = "Move each loop nest of a long function into a function";
  let description = [{
    Runs on buffers and loops, before `convert-scf-to-openmp`. In a
    function with at least `min-nests` outermost loop nests, each of them
    (an `scf.parallel`, or an `scf.for` that is one kernel: its body holds
    no parallel loop, no allocation and at most one loop) moves into a
    private function of its own, `no_inline`, and is called in its place:
    the values the nest reads from outside are its arguments
    (constants are copied in), its results the function's. Loops around
    several nests (kiln.for and kiln.while), conditionals and OpenMP
    sections stay and their nests are outlined.

    LLVM's passes over one function grow faster than its length: loop
    rotation updates a dominator tree in which each loop nest dominates all
    those after it, and OpenMP's outlining of each parallel region analyses
    the whole function. A DLRM training step on 4 ranks, 254 loop nests in
    one function, spent 6.5 of its 30 s of compile time in loop rotation.
    Functions with fewer nests keep them inline, where LLVM sees which
    buffers are distinct allocations.
  }];
  let options = [
    Option<"minNests", "min-nests", "int64_t", /*default=*/"128",
           "Outline the nests of functions with at least this many">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def KilnCpuByteLookups : Pass<"kiln-cpu-byte-lookups", "mlir::func::FuncOp"> {
  let summary = "Look up 256-entry byte tables 64 bytes at a time (AVX512-VBMI)";
  let description = [{
    Runs on bufferized linalg after `kiln-cpu-collapse-contiguous-loops`,
    only for a target CPU with AVX512-VBMI (the pipeline adds it then). A
    one-dim `linalg.generic` from a uint8 buffer to an 8-bit buffer of unit
    stride whose body zero-extends the byte, makes it an index (clamped or
    not) and yields that entry of a `memref<256xi8>` (a lookup of
    `kiln-byte-tables`) becomes an `scf.parallel` over blocks of 64 bytes:
    the table is four 64-byte vectors, two `vpermi2b` (LLVM's
    `llvm.x86.avx512.vpermi2var.qi.512`) pick each byte's entry among the
    first and the last 128 by its low 7 bits, and its high bit selects one
    of the two. The bytes after the last whole block keep the original loop
    on a subview.

    The scalar loop loads the table once per byte, about a cycle an
    element; a quantized EfficientNet-B0 spends a quarter of its time in
    its SiLUs' lookups so.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def KilnCpuVectorizeLanes
    : Pass<"kiln-cpu-vectorize-lanes", "mlir::func::FuncOp"> {
  let summary = "Vectorize short innermost loops (blocked layouts' lanes)";
  let description = [{
    Runs on bufferized linalg, after `kiln-cpu-collapse-contiguous-loops`
    and before `convert-linalg-to-parallel-loops`. A `linalg.generic` with
    static loop ranges whose innermost loop is parallel with 4 to 16
    iterations, whose operands' indexing maps are projected permutations
    that send that loop to the operand's last dim, of unit stride, or (an
    input only) not use it, on f32, f64 or whole-byte integers, and whose
    body `linalg::vectorize` takes with math ops that stay vector code (LLVM
    intrinsics such as sqrt and fma, and for f32 the polynomials of
    `kiln-cpu-math-approximation`; not a libm call such as an f64 erf or
    tanh, which upstream unrolls into vector ops after the vector dialect
    has been lowered), and no logistic function's division (which
    `kiln-cpu-math-approximation` lets LLVM estimate, a few ulps off, on
    vectors: a short loop keeps the exact division), is
    tiled by one along every other loop (`scf.parallel` over the parallel
    ones with `parallel`, `scf.for` otherwise and over reductions) and the
    tile vectorized: each operand read as one vector of the lanes, or one
    value broadcast, the body on vectors, the result stored as one vector.
    The transfers are lowered to `vector.load` and `vector.store`.

    LLVM vectorizes neither such a loop (too few iterations for its loop
    vectorizer with the run-time overlap check it would need) nor its
    unrolled copies (the SLP vectorizer cannot move loads above stores it
    cannot prove apart): the elementwise ops and spatial reductions on
    oneDNN's blocked layouts, [N, C/8, H, W, 8], ran as scalar code.
  }];
  let options = [
    Option<"parallel", "parallel", "bool", /*default=*/"true",
           "Tile the parallel loops as scf.parallel (else scf.for)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def KilnCpuCollapseContiguousLoops
    : Pass<"kiln-cpu-collapse-contiguous-loops", "mlir::func::FuncOp"> {
  let summary = "Make the contiguous dims of elementwise loops one dim";
  let description = [{
    Runs on bufferized linalg, before `convert-linalg-to-parallel-loops`. A
    `linalg.generic` whose iterators are all parallel and whose body reads
    no `linalg.index`, or a `linalg.copy`, has its dims from the first one
    that every operand walks in the same order, densely, to the last
    (every indexing map keeps that run of dims in order, and every memref
    is row-major contiguous over it) collapsed into one, through
    `memref.collapse_shape` of its operands.

    A row of a few elements is the innermost loop otherwise: LLVM unrolls
    a loop of 16 f32 completely and then vectorizes the loop over rows,
    reading each column with a strided gather, 5 to 7 times slower than the
    one loop over the whole buffer (an embedding table of 16 columns, a
    copy of it, an optimizer's update of it). One long loop is what
    kiln-cpu-parallel-loops then cuts into chunks for the threads.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::linalg::LinalgDialect"];
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

def KilnCpuConcurrentBranches
    : Pass<"kiln-cpu-concurrent-branches", "mlir::ModuleOp"> {
  let summary = "Run independent kernels side by side, one thread each";
  let description = [{
    On buffers, before memory planning; on the module, one function after
    the other, because a call's accesses are read from its callee's body,
    which the pass may be rewriting. Splits the body of each function
    (not the functions outlined for oneDNN or the attention kernels) at
    ops whose memory accesses are not known (calls of declared functions,
    ops with results that read memory) into segments of kernels: linalg
    ops, copies, calls of the module's functions, loops without results.
    Two kernels depend on each other where they access one buffer (views
    followed to their allocation; the function's arguments are one
    buffer) and one of them writes it. Each kernel's time is estimated from
    its iteration space, alone on `threads` threads and on one; dynamic
    programming over runs of up to 48 kernels picks the runs whose
    independent groups, packed onto `threads` sections, take less time side
    by side than one after the other. Each such run becomes an
    `scf.parallel` from 0 to the number of sections, tagged
    `kiln.concurrent = threads`, over an `scf.index_switch` with the
    kernels of each section, in their order, in its case; the run's
    allocations, views and constants move before it.
    `kiln-cpu-concurrent-sections` lowers it. `threads` below 2 leaves the
    function alone.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"2",
           "The thread count the schedule is for">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def KilnCpuConcurrentSections
    : Pass<"kiln-cpu-concurrent-sections", "mlir::ModuleOp"> {
  let summary = "Concurrent branches as OpenMP sections";
  let description = [{
    Each `scf.parallel {kiln.concurrent = T}` over an `scf.index_switch`
    (kiln-cpu-concurrent-branches) becomes an `omp.parallel` with
    `num_threads(T)` and `if(omp_get_max_threads() == T)` holding
    `omp.sections` with one `omp.section` per case. With T threads the
    sections run side by side; otherwise the region is inactive and its one
    thread runs them in order, each kernel's parallel loops on all threads.
    Runs before `kiln-cpu-parallel-loops` and `convert-scf-to-openmp`.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::omp::OpenMPDialect"];
}

def KilnCpuConvAddendInPlace
    : Pass<"kiln-cpu-conv-addend-in-place", "mlir::func::FuncOp"> {
  let summary = "Write a oneDNN convolution's result over its dying addend";
  let description = [{
    Runs on memrefs, after bufferization and before kiln-cpu-plan-memory.
    A call of a function that kiln-cpu-outline-dnnl-convs marked
    `kiln.dnnl_conv` with an addend (a residual addition in its epilogue)
    whose addend and result buffers are allocations of one type in the
    call's block, where nothing uses the addend after the call (nor
    passes it on before it) and nothing uses the result before it, gets
    the addend's buffer as its result buffer too. oneDNN then adds the
    addend with its `sum` post-op where it lies, with no copy and no
    second buffer (see DnnlConv.c); one buffer fewer takes arena space.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
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

def KilnCpuPoolConstants : Pass<"kiln-cpu-pool-constants", "mlir::ModuleOp"> {
  let summary = "Move large constants out of the code into the module's "
                "constant pool";
  let description = [{
    Runs on the LLVM dialect, last. Each constant `llvm.mlir.global` whose
    initializer is a non-splat dense attribute of whole-byte elements, of at
    least `min-bytes` bytes, and which only functions take the address of,
    gets an offset in the module's constant pool (`kiln.pool_offset`, a
    multiple of 64 and of the global's alignment, in the order of the
    globals' names, so that the pool does not depend on the order in which
    the lowering created them). Every `llvm.mlir.addressof` of it becomes an
    invariant load of the base address from the exported slot
    `kiln_constants` plus that offset; the module also exports the pool's size as the constant
    `kiln_constants_size` (kiln/ConstantsAbi.h). The pooled globals keep
    their initializer and lose every use: the driver copies their bytes into
    the .kmod's `constants` and erases them before translation
    (mlir::kiln::extractConstantPool), so weights never pass through LLVM,
    the object writer or the linker. Globals below `min-bytes` stay in the
    code, where LLVM can fold loads from them.
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"4096",
           "Constants smaller than this many bytes stay in the code">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // KILN_BACKENDS_CPUPASSES_TD
