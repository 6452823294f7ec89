//===- Passes.td - kiln backend passes ---------------------*- tablegen -*-===//
//
// The passes both targets run (kiln to linalg, bufferization's helpers,
// collectives, entry points); the CPU's are in CpuPasses.td, the CUDA
// backend's in CudaPasses.td.
//
//===----------------------------------------------------------------------===//

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

    A result tied to a donated argument (`kiln.tied_result`,
    kiln/IR/TiedResults.h) is written into that argument instead: copied
    there last (after the copies of the other results, which may read the
    argument's old value), or not at all where the argument's buffer is the
    result already (updated in place). The function then returns an
    allocation nothing writes in its place (hoisted into an out-param that
    nothing touches), and the tie moves to the result as
    `kiln.tied_argument`, which buffer-results-to-out-params carries to the
    out-param and kiln-tied-results checks and drops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def KilnTiedResults : Pass<"kiln-tied-results", "mlir::func::FuncOp"> {
  let summary = "Check that out-params tied to donated arguments are unused";
  let description = [{
    Runs right after buffer-results-to-out-params. An out-param marked
    `kiln.tied_argument = I` (kiln-fresh-results) stands for argument I's
    buffer: the runtime passes that buffer for it, and the function wrote
    the result there already. The out-param must have no use (an error
    names the op that uses it); the mark is removed.
  }];
}

def KilnForwardCallResults
    : Pass<"kiln-forward-call-results", "mlir::func::FuncOp"> {
  let summary = "Let a call write the result it returns into the out-param";
  let description = [{
    Runs after buffer-results-to-out-params and kiln-tied-results. Where a
    function returns what a call returned, it allocates a buffer for the
    callee's out-param and copies it into its own out-param after the call
    (`%x = memref.alloc`, `call @f(..., %x)`, `linalg.copy ins(%x)
    outs(%out)`). The call is given %out instead and the allocation and
    the copy go (on CUDA, one kernel and one buffer of the result's size
    fewer per call). It applies where %out is an argument of the function
    used by that copy alone and %x an allocation of the same type used
    once by the call and then by the copy, in one block: an out-param is
    memory the caller gave for that result alone, so nothing reads or
    writes it under another name.
  }];
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
    A donated argument (`kiln.tied_result`) is left writable: its caller
    gave the buffer up, so the analysis may update it in place.
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

    With `loop-inits`, the inits of `scf.while` and `scf.for` loops
    (`kiln.while`, `kiln.for`) that are such slices, or picks between two
    tensors on a scalar predicate (an `arith.select` of tensors), are
    copied too, so that a loop carries buffers of its own, of identity
    layout, from its first iteration: the CUDA backend keeps a while loop's
    carried values in dense buffers where it runs the loop as a CUDA graph
    (kiln-cuda-graph-loops), and the copy's kernel reads a dynamic slice's
    index or the pick's predicate where the host would have to.
  }];
  let options = [
    Option<"loopInits", "loop-inits", "bool", "false",
           "Also copy the inits of loops that are slices or picks">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def KilnSharedConcatBuffers
    : Pass<"kiln-shared-concat-buffers", "mlir::func::FuncOp"> {
  let summary = "Concatenations of common prefixes as views of one chain";
  let description = [{
    Runs on tensors, before one-shot bufferization. A concatenation as
    kiln-to-linalg lowers it is a `tensor.empty` (static shape) and one
    `tensor.insert_slice` per input, whole, at consecutive offsets from 0
    along one dim. Where concatenations of one block along the same dim
    have inputs that are each a prefix of the longest one's (a DenseNet
    block: concat(x0, f1), concat(x0, f1, f2), ...), they become one chain
    of insertions into a tensor of the longest one's shape, each input
    inserted once, right after its definition (or the insertion before it);
    the longest is the chain's last value, each other an
    `tensor.extract_slice` of its first dims' extent from the chain once
    its last input is in. Bufferized, the insertions are in place where the
    concatenations' readers come before the next insertion: every input is
    copied once instead of once per concatenation.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
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

    With `min-pooled-bytes` set (the CPU pipeline sets it to
    `kiln-cpu-pool-constants`' `min-bytes`), constant globals of whole-byte
    elements that have at least that many bytes are left as they are:
    that pass takes them out of the code before translation, so their shape
    never reaches LLVM, and flattening them would only copy their bytes.
  }];
  let options = [
    Option<"minPooledBytes", "min-pooled-bytes", "int64_t", /*default=*/"0",
           "Leave constant non-splat globals of whole-byte elements with at "
           "least this many bytes alone (0: flatten every global)">
  ];
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

    A producer read by several ops is recomputed in each (up to 256 body
    ops for the two together), except, without `recompute-transcendentals`,
    one that evaluates a transcendental function (erf, exp, log, tanh,
    ...) and that two or more reductions read, directly or through
    elementwise ops (a dynamic quantization's min and max of a GELU), or
    that its reader reads through a broadcast (a squeeze-excitation gate's
    sigmoid of 672 values scaling 14x14x672 activations, which fused would
    be evaluated once per activation): it is computed once into a tensor of
    the kernel that its readers read. Without the option, too, a value the
    kernel returns whose computation evaluates such a function is not
    recomputed in a reduction that reads it (a squeeze-excitation block's
    SiLU and its mean): the reduction reads the returned values. The CPU
    pipeline turns it off.
  }];
  let options = [
    Option<"recomputeTranscendentals", "recompute-transcendentals", "bool",
           "true",
           "Recompute a producer with several readers in each of them also "
           "where it evaluates erf, exp, log, tanh and the like">
  ];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"
  ];
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

def KilnFoldSumsIntoMatmuls
    : Pass<"kiln-fold-sums-into-matmuls", "mlir::func::FuncOp"> {
  let summary = "Let matrix products accumulate into the tensor added to them";
  let description = [{
    Runs on tensors, right before bufferization. An elementwise
    `linalg.generic` that yields the `arith.addf` of its two inputs (both
    read with identity maps), one of them the only use of a `linalg.matmul`
    or `batch_matmul` whose init is a zero `linalg.fill` (or the only use of
    a `tensor.expand_shape` of one), becomes that product with the other
    input as its init (collapsed to the product's shape; linalg's products
    compute C += A * B). Bufferization then accumulates in place where the addend is
    not read again (a gradient summed over a loop's steps), and the GEMM
    library call accumulates with beta = 1 instead of a zero fill, a product
    and a separate sum. Floating-point sums are reassociated (a library adds
    each block of K into C in turn). The CPU backend runs it.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
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
    block that is not used again, or one that only the copy and the
    product use) and nothing between the copy and the
    product may write the source. Symmetrically, a product whose result
    goes to a fresh allocation (zero-filled before it) that a permuting
    copy then copies whole to another buffer writes that buffer directly
    with the composed output map (its inputs swapped when that puts the
    result's rows first), and the copy and the allocation are erased. The
    CPU backend runs it, and the CUDA backend where its products go to
    cuBLASLt.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def KilnSplitCountedDeallocs
    : Pass<"kiln-split-counted-deallocs", "mlir::func::FuncOp"> {
  let summary = "Free a kiln.for's fresh result in a dealloc of its own";
  let description = [{
    Runs between upstream's deallocation simplification and the lowering
    of `bufferization.dealloc`. A `scf.for` of a constant number of trips,
    at least one, whose body yields a buffer it allocates for a result,
    ends with a buffer of its last trip, which is none of the buffers that
    existed before the loop, nor a result the body yields from another of
    its allocations; upstream's simplification cannot tell (with no trip a
    loop's result is its init). Each such result is split off a dealloc
    whose other memrefs are all such buffers (through views and base
    buffers) into a dealloc of its own with the same retained
    values, and the two deallocs' results are or'ed. Each then lowers to a
    guarded free instead of a call of the generic helper, which compares
    pointers at run time through host buffers (and keeps a CUDA loop or
    cond around the kiln.for off a graph).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
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

#endif // KILN_BACKENDS_PASSES_TD
