//===- Passes.td - Transformations on the kiln dialect -----*- tablegen -*-===//
//
// Passes that rewrite kiln IR into kiln IR. The backend passes (lowering,
// CPU pipeline) live in backends/include/kiln/Backends/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_TD
#define KILN_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def Grad : Pass<"kiln-grad", "mlir::ModuleOp"> {
  let summary = "Derive the reverse-mode gradient (VJP) of a kiln function";
  let description = [{
    For `@f(x...) -> (y...)` adds `@f_grad(x..., dy...) -> (y..., dx...)`
    next to it: the forward computation followed by the vector-Jacobian
    product, as ordinary kiln IR. There is one `dy` argument per float
    result of `@f` and one `dx` result per argument listed in `wrt` (all
    float arguments when `wrt` is empty). Integer and i1 results take no
    cotangent.

    With `value-and-grad`, `@f` must have one rank-0 float result and the
    pass adds `@f_value_and_grad(x...) -> (y, dx...)`, seeding the backward
    pass with 1.0.

    ```
    kiln-opt --kiln-grad="function=loss wrt=0,1" model.mlir
    kiln-opt --kiln-grad="function=loss value-and-grad=true" model.mlir
    ```

    Every kiln op has a rule (mlir::kiln::hasVjpRule) except the stack ops
    that derived gradients of `kiln.while` use. Calls of functions with a
    body are differentiated through the body, inlined into the derived
    function (nested calls too; recursion is an error). `kiln.cond` is
    differentiated through the branch that ran; `kiln.for` by a loop over
    the iterations in reverse that reads what the forward loop stored per
    iteration; `kiln.while` likewise, its forward loop pushing what the
    backward loop reads onto stacks that grow at run time. An op without a
    rule on a differentiated path (such as a stack op, when a derived
    gradient of a while is differentiated again), a `wrt` argument that is
    not a float tensor, or an unknown function is an error at that op or
    function. See passes/autodiff/README.md.
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Name of the function to differentiate">,
    ListOption<"wrt", "wrt", "unsigned",
               "Indices of the arguments to differentiate with respect to "
               "(default: every float argument)">,
    Option<"valueAndGrad", "value-and-grad", "bool", /*default=*/"false",
           "Derive f_value_and_grad(x...) -> (y, dx...) for a function with "
           "one rank-0 float result, seeding the cotangent with 1.0">,
    Option<"gradName", "name", "std::string", /*default=*/"\"\"",
           "Name of the derived function (default: <function>_grad or "
           "<function>_value_and_grad)">,
    Option<"checkpointEvery", "checkpoint-every", "unsigned", /*default=*/"0",
           "Store the carried values of kiln.for/kiln.while loops every N "
           "iterations and recompute the segments in the backward pass "
           "instead of storing every iteration (0: store every iteration)">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect",
                           "mlir::func::FuncDialect"];
}

def Vmap : Pass<"kiln-vmap", "mlir::ModuleOp"> {
  let summary = "Derive the batched form (vmap) of a kiln function";
  let description = [{
    For `@f(x...) -> (y...)` adds `@f_vmap` next to it, the function of a
    batch of `size` examples: argument i carries the batch at dim
    `in-axes[i]` (-1: not mapped, shared by every lane), result j at dim
    `out-axes[j]` (-1: not mapped; such a result must not depend on a
    mapped argument). Every op reading a batched value gets its batched
    form (mlir::kiln::hasBatchingRule); see mlir::kiln::buildVmap.

    ```
    kiln-opt --kiln-vmap="function=f in-axes=0,-1 out-axes=0 size=8" model.mlir
    ```
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Name of the function to batch">,
    ListOption<"inAxes", "in-axes", "int64_t",
               "The batch dim of each argument (-1: not mapped)">,
    ListOption<"outAxes", "out-axes", "int64_t",
               "The batch dim of each result (-1: not mapped; default: 0 "
               "for every result)">,
    Option<"size", "size", "int64_t", /*default=*/"0", "The batch size">,
    Option<"vmapName", "name", "std::string", /*default=*/"\"\"",
           "Name of the derived function (default: <function>_vmap)">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect",
                           "mlir::func::FuncDialect"];
}

def Jvp : Pass<"kiln-jvp", "mlir::ModuleOp"> {
  let summary = "Derive the forward-mode derivative (JVP) of a kiln function";
  let description = [{
    For `@f(x...) -> (y...)` adds `@f_jvp(x..., tx...) -> (y..., ty...)`
    next to it: f's computation with the Jacobian-vector product
    interleaved, as ordinary kiln IR. There is one tangent `tx` argument
    per argument listed in `wrt` (all float arguments when `wrt` is empty)
    and one `ty` result per float result of `@f`.

    ```
    kiln-opt --kiln-jvp="function=f wrt=0" model.mlir
    ```

    Every op with a VJP rule has a JVP rule (mlir::kiln::hasJvpRule), and
    so does max pooling's gradient, so the JVP of a derived gradient
    (forward-over-reverse: Hessian-vector products) is derived too, except
    through the stack ops of a derived `kiln.while` gradient and the
    gradient of fused attention. `kiln.cond`, `kiln.for` and `kiln.while`
    carry their tangents as extra operands and results; nothing is stored.
    An op without a rule on a differentiated path, a `wrt` argument that is
    not a float tensor, or an unknown function is an error at that op or
    function. See passes/autodiff/README.md.
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Name of the function to differentiate">,
    ListOption<"wrt", "wrt", "unsigned",
               "Indices of the arguments the tangents are of (default: every "
               "float argument)">,
    Option<"jvpName", "name", "std::string", /*default=*/"\"\"",
           "Name of the derived function (default: <function>_jvp)">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect",
                           "mlir::func::FuncDialect"];
}

def Autocast : Pass<"kiln-autocast", "mlir::ModuleOp"> {
  let summary = "Run matrix products and convolutions in bf16 or f16 with "
                "f32 accumulation (mixed precision as a policy, like "
                "PyTorch's autocast)";
  let description = [{
    Every `kiln.matmul` of f32 operands becomes a product of its operands
    cast to `dtype`, accumulated in f32 with an f32 result
    (`result_element_type = f32`). Every f32 `kiln.conv` becomes a
    convolution of its operands cast to `dtype` (accumulated in f32 and
    rounded once to `dtype`, the result PyTorch's autocast gives),
    widened back to f32 by a `kiln.cast`. Everything else stays as it is: the ops
    that autocast keeps in f32 (softmax, normalization, reductions, losses,
    the optimizer update) and the f32 parameters, which remain the master
    weights an update writes. An operand that is itself a widening cast
    from `dtype` is used directly; every other value is cast once per
    function, right after its definition (for a block argument, such as a
    loop's carried value, at the start of its block). A carried value that
    starts as a constant and that the loop never changes (an RNN's weight)
    becomes that constant inside the loop when kiln.for and kiln.while are
    canonicalized, so its cast folds at compile time. A transposed operand
    is the transpose of its source's cast, so a weight is cast once for its
    forward and backward products and the transpose still folds into the
    GEMM.

    ```
    kiln-opt --kiln-autocast="dtype=bf16" train_step.mlir
    ```

    Run after `kiln-grad`, the backward products are cast too. On CPU,
    bf16 products run on oneDNN's bf16 GEMM (AVX-512 BF16 where the host
    has it, twice the f32 rate); f16 products run as sgemm on the widened
    operands (the same result, no faster than f32), so f16 suits the CUDA
    backend; f16 training needs loss scaling (kiln::optim::LossScaler).
    bf16 convolutions run on oneDNN's bf16 convolution, which falls back to
    its f32 one on the widened operands where the CPU has no bf16 support;
    f16 convolutions (and those oneDNN does not take, such as the
    input-gradient convolution of a strided one) are loop nests on widened
    operands.

    With `attention`, as PyTorch's autocast does for
    scaled_dot_product_attention on CUDA, every f32 `kiln.attention` takes
    its query, key, value and mask cast to `dtype` and its result is
    widened back to f32 (the lse stays f32, which it is for half operands
    too), and every f32 `kiln.attention_grad` likewise takes query, key,
    value, result, cotangent and mask cast and widens its three results.
    The compiler asks for it on the CUDA targets from sm_80 on, where half
    attention runs on tensor cores (or cuDNN); the CPU's attention kernel
    is f32, so there attention stays f32.
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"bf16\"",
           "The element type of the products' operands: bf16 or f16">,
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Cast only in this function (default: every function)">,
    Option<"attention", "attention", "bool", /*default=*/"false",
           "Run f32 kiln.attention and kiln.attention_grad on operands "
           "cast to dtype too (their softmax and lse stay f32), for a "
           "target whose attention kernels take half precision">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect"];
}

def DataParallel : Pass<"kiln-data-parallel", "mlir::ModuleOp"> {
  let summary = "Rewrite a single-device function into its data-parallel "
                "SPMD form (DDP as a program transformation)";
  let description = [{
    Rewrites each selected function into the program that `ranks` ranks
    run, each on its shard of the batch: the arguments listed in
    `batch-args` are split along their leading dimension (rank r gets rows
    [r * B / N, (r + 1) * B / N), so B must be divisible by N) and take
    those local shapes; the other arguments are the same on every rank.
    Every rank returns exactly what the original returns on the whole
    batch, up to the order in which float sums are added.

    The pass gives every value a state - Replicated, Sharded(d) (the
    concatenation of the ranks' pieces along d) or PartialSum (the sum of
    the ranks' values) - and walks the body in order, rewriting each op on
    local shapes:

    - elementwise ops, select, compare and cast follow their Sharded
      operand; broadcast_in_dim, reshape (where the sharded dimension stays
      aligned with one result dimension), transpose, slice and pad (not
      along the sharded dimension), concat, reverse, cumsum, argmax/argmin,
      sort, gather, dynamic_slice/dynamic_update_slice (past the rows),
      pooling (window 1 along it), matmul and conv track the sharded
      dimension (each op's rule is its AxisPartitionOpInterface model);
    - reduce_sum over it, and a matmul or conv that contracts it (the
      weight gradient X^T dY), make a PartialSum; reduce_mean over it is the
      local mean times 1 / N, a PartialSum; reduce_max over it an
      all_reduce max;
    - the linear ops keep PartialSums: add/sub of two, mul or div by a
      Replicated value, neg, float casts, select with a zero splat, the
      shape ops, sums, and matmul/conv/gather with a Replicated other
      operand;
    - an operand needed whole is gathered (kiln.all_gather) or summed
      (kiln.all_reduce sum); one needed Sharded(d) is exchanged
      (kiln.all_to_all, kiln.reduce_scatter) or, if Replicated, cut out
      locally (splat constants, iota and broadcasts are re-made at the local
      shape, anything else sliced at kiln.rank * B / N).

    Every other op gets its operands whole and runs unchanged, so the pass
    handles every program; only the amount of communication depends on the
    rules. In this version no state enters a region: kiln.cond, kiln.while,
    kiln.for, kiln.fused and func.call take that path. The results are made
    whole on every rank.

    The all_reduce sums (the gradients of a training step) are then grouped
    in the order their operands are computed into buckets of at most
    `bucket-mb` MiB of one element type (a larger tensor is a bucket of its
    own). Each bucket is one `kiln.all_reduce_start` of the flattened,
    concatenated operands, placed right after the last of them is computed
    (with `overlap=false`, right before its results are needed), and one
    `kiln.collective_wait` right before the first use, whose slices replace
    the individual reductions. The ops between a finished partial gradient
    and its reduction (the scaling by a learning rate) are first moved up to
    where their operands are ready.

    ```
    kiln-opt --kiln-data-parallel="ranks=2 batch-args=0,1" step.mlir
    ```

    turns the SGD step of a 16-12-4 perceptron on a batch of 8, as kiln::jit
    traces it, into (excerpt; test/passes/data_parallel.mlir):

    ```mlir
    func.func @train_step(%x: tensor<4x16xf32>, %onehot: tensor<4x4xf32>,
                          %w1: tensor<16x12xf32>, ...) -> (...) {
      %lr = kiln.constant dense<3.000000e-01> : tensor<16x12xf32>
      %h = kiln.matmul %x, %w1 : tensor<4x16xf32>, tensor<16x12xf32>
      ...
      %m = kiln.reduce_mean %r, dims = [0] : tensor<4xf32>
      %half = kiln.constant dense<5.000000e-01> : tensor<f32>
      %part = kiln.mul %m, %half : tensor<f32>
      %loss = kiln.neg %part : tensor<f32>
      ...
      %xt = kiln.transpose %x, permutation = [1, 0] : tensor<4x16xf32>
      %g1 = kiln.matmul %xt, %dh : tensor<16x4xf32>, tensor<4x12xf32>
      %s1 = kiln.mul %lr, %g1 : tensor<16x12xf32>
      %l1 = kiln.reshape %loss : (tensor<f32>) -> tensor<1xf32>
      ...
      %f1 = kiln.reshape %s1 : (tensor<16x12xf32>) -> tensor<192xf32>
      %all = kiln.concat %l1, %s4, %f2, %s3, %f1 dim = 0 : tensor<1xf32>, ...
      %p = kiln.all_reduce_start %all, kind = sum, groups = [[0, 1]]
          : (tensor<257xf32>) -> tensor<257xf32>
      %sum = kiln.collective_wait %p, %all : tensor<257xf32>, tensor<257xf32>
      ...
      %d1 = kiln.slice %sum, start = [65], limit = [257], stride = [1] : tensor<257xf32>
      %d1m = kiln.reshape %d1 : (tensor<192xf32>) -> tensor<16x12xf32>
      %w1n = kiln.sub %w1, %d1m : tensor<16x12xf32>
      ...
    }
    ```

    See passes/parallel/README.md.

    Errors, at the function: a batch-args index out of range, a batch
    argument without a leading dimension or whose rows the ranks do not
    divide, a function that already communicates (a collective or
    kiln.rank), a function called in its module (its callers would pass
    the whole batch); at the module: a missing or bad `ranks`, no
    `batch-args`, a negative `bucket-mb`, an unknown `function`.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"0",
           "Number of ranks the program runs on (>= 1)">,
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Function to rewrite (default: every public function)">,
    ListOption<"batchArgs", "batch-args", "int64_t",
               "Indices of the arguments split along their leading "
               "dimension across the ranks">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "Most MiB of gradients one all-reduce bucket carries (PyTorch "
           "DDP's bucket_cap_mb)">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Start each bucket's all-reduce as soon as its operands are "
           "computed, overlapping the rest of the program (false: right "
           "before its results are needed)">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect",
                           "mlir::func::FuncDialect"];
}

def CombineCollectives : Pass<"kiln-combine-collectives", "mlir::func::FuncOp"> {
  let summary = "Combine independent small exchanges into few large ones";
  let description = [{
    The synchronous kiln.all_gather and kiln.reduce_scatter along dimension
    0 and the kiln.all_reduce ops of a block that share their replica
    groups, reduction and element type, and whose operands can be computed
    before any of their results is needed, become one asynchronous exchange
    per bucket of at most `cap-mb` MiB of operands: the operands laid out
    side by side (a gather's as one row per rank, a scatter's as one row
    per rank's block), started once the last is computed, waited for right
    before the first result is used, and each result sliced out. The pure
    ops that compute the operands move up to where their inputs are ready
    first. kiln-partition runs it on the programs it writes
    (CombineCollectives.cpp).
  }];
  let options = [
    Option<"capMb", "cap-mb", "double", "25.0",
           "the most MiB of operands one combined exchange carries">,
  ];
}

def Partition : Pass<"kiln-partition", "mlir::ModuleOp"> {
  let summary = "Rewrite a function annotated with a device mesh and "
                "shardings into the SPMD program of every rank (tensor "
                "parallelism, and its product with data parallelism)";
  let description = [{
    A function names a device mesh of named axes, laid out row-major, and
    its arguments and results name, per dimension, the mesh axis that
    dimension is split over ("" for none; unannotated values are whole):

    ```mlir
    func.func @mlp(%x: tensor<8x16xf32> {kiln.sharding = ["dp", ""]},
                   %w1: tensor<16x32xf32> {kiln.sharding = ["", "tp"]},
                   %w2: tensor<32x16xf32> {kiln.sharding = ["tp", ""]})
        -> (tensor<8x16xf32> {kiln.sharding = ["dp", ""]})
        attributes {kiln.mesh = {axes = ["dp", "tp"], shape = array<i64: 2, 2>}}
    ```

    The pass rewrites each such function (or the one named by `function`)
    into the program that every rank of the mesh runs: split arguments
    take their local shapes (rank r holds block (r / stride) % size of each
    split dimension), and each rank returns its block of a split result and
    the whole of the others, equal to the original's results up to the
    order of float sums. The annotations are removed.

    The mesh is partitioned one axis at a time, innermost first, by the
    same state propagation kiln-data-parallel uses (Replicated, Sharded(d),
    PartialSum per axis; passes/parallel/README.md): a product with a
    weight split along its output features is split without communication
    (column parallel), one that contracts a split dimension is a partial
    sum, all-reduced once where the whole value is needed (row parallel);
    attention with its heads split runs per rank; an embedding table split
    by rows looks up the rank's rows and gives zeros for the others (a
    partial sum), or, with its ids split over the same axis, receives the
    ids it owns in all_to_all buckets and sends their rows back (its
    gradient goes to it the same way, as a scatter_add of the rows); log-softmax over a split vocabulary all-reduces its max
    and its sum. Collectives act within the groups of ranks that differ only
    along the axis. The all-reduces of `bucket-axis` (the first mesh axis,
    for data parallelism; a mesh without that axis buckets nothing) are
    bucketed and started early as kiln-data-parallel's; every other
    all-reduce is synchronous.

    Errors, at the function: a missing or malformed `kiln.mesh` (two axes of
    one name, a size below 1), a sharding that is not one axis name per
    dimension, names an axis the mesh lacks, uses an axis for two
    dimensions of one value, or splits a dimension the axis size does not
    divide; sharding annotations on a function without a mesh; a function
    that already communicates, is called in its module, or has more than
    one block; a `bucket-axis` the mesh has other than as its first axis.
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "the function to partition (default: every function with a "
           "kiln.mesh)">,
    Option<"bucketAxis", "bucket-axis", "std::string", /*default=*/"\"\"",
           "the mesh axis (the first, where a mesh has it) whose gradient "
           "all-reduces are bucketed and overlapped (default: none)">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "the most MiB one all-reduce bucket carries">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "start each bucket as soon as its operands exist">,
    Option<"combine", "combine", "bool", /*default=*/"true",
           "combine the program's independent small exchanges into buckets "
           "of at most bucket-mb (kiln-combine-collectives)">,
    Option<"lookupCapacity", "lookup-capacity", "double", /*default=*/"2.0",
           "a table split by rows sends each rank's ids (split over the same "
           "axis) to their rows' owners in all_to_all buckets of "
           "ceil(F n / N) ids, falling back to gathering every rank's ids "
           "when one overflows; 0 always gathers">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect"];
}

def Pipeline : Pass<"kiln-pipeline", "mlir::ModuleOp"> {
  let summary = "Derive the pipeline-parallel training step (GPipe or "
                "1F1B) of a loss written as a chain of stage calls";
  let description = [{
    `function` is the loss of one micro-batch, written as a chain of stage
    calls: call s reads parameters (arguments no other stage reads), data
    (the arguments named in `batch-args`, one micro-batch each) and, after
    the first, the previous call's result; the last call's f32 scalar is
    returned.

    ```mlir
    func.func @loss(%w0: tensor<16x32xf32>, %w1: tensor<32x4xf32>,
                    %x: tensor<2x16xf32>, %y: tensor<2x4xf32>) -> tensor<f32> {
      %h = func.call @stage0(%w0, %x) : (tensor<16x32xf32>, tensor<2x16xf32>) -> tensor<2x32xf32>
      %l = func.call @stage1(%w1, %h, %y) : (tensor<32x4xf32>, tensor<2x32xf32>, tensor<2x4xf32>) -> tensor<f32>
      return %l : tensor<f32>
    }
    ```

    The pass adds `@<function>_pipeline` (or `name`), the program that P
    ranks run, rank s as stage s, over `microbatches` micro-batches:

    ```mlir
    func.func @loss_pipeline(%packed: tensor<1x512xf32>, %x: tensor<8x16xf32>,
                             %y: tensor<8x4xf32>) -> (tensor<f32>, tensor<1x512xf32>)
    ```

    `packed` is rank s's row of the [P, K] array of each stage's parameters
    flattened and concatenated in the order its call reads them (padded to
    the largest stage's K); the data hold M micro-batches of the loss's
    rows; every rank returns the mean loss over the micro-batches and its
    row of the gradients, packed the same way. Stage s's VJP is derived by
    kiln-grad's buildGradient; a backward pass recomputes its stage's
    forward pass from the stage's input, the only thing a stage keeps of a
    micro-batch. With `recompute=false` the VJP is split (splitVjp) into a
    forward half, which returns the intermediates the backward pass reads,
    and a backward half that takes them: no forward work is repeated, and a
    stage holds those intermediates for each micro-batch in flight. The work is laid out tick by tick as `schedule` orders it
    (`gpipe`: all forward passes, then all backward passes; `1f1b`:
    PipeDream-flush, P - 1 - s forward passes, then one forward and one
    backward pass alternately) and unrolled: each action is a kiln.cond on
    kiln.rank == s, and after each tick kiln.collective_permute sends the
    activations one stage on and the input gradients one stage back.
    With `replicas=D` the pipeline is replicated for data parallelism: the
    step runs on D * P ranks, rank r as stage r % P of replica r / P, each
    replica on its own data (its M micro-batches); activations travel
    within a replica, and each stage's gradients are averaged over the D
    ranks that run it (a kiln.all_reduce within those ranks).
    With `tp=T` each stage is tensor parallel over T ranks of its own:
    arguments of the loss annotated `{kiln.sharding = ["", "tp"]}` (per
    dimension, the axis it is split over) are split over the stage's T
    ranks, each stage's functions are partitioned by kiln-partition (the
    Megatron rules: column- then row-parallel products with one all-reduce
    each way), and the step runs on D * P * T ranks, rank r as block
    r % T of stage (r / T) % P of replica r / (P T); a rank's packed row
    holds its blocks of its stage's parameters. The stage's collectives run
    inside its kiln.cond, over its T ranks alone (collectives are
    group-local).
    With `stages=P` the loss need not be a chain: it is one block of ops,
    and the pass cuts it into P stages (cutIntoStages) where exactly one
    f32 tensor and no parameter crosses, choosing the P - 1 cuts that
    minimise the most expensive stage's estimated cost (multiply-adds of
    products, attention and convolutions, elements written by other ops),
    reports the stages' shares as a remark, and pipelines the chain
    `@<function>_stages` of the stage functions `@<function>_stage<s>`
    (their parameters in argument order first).
    `schedule-trace=FILE` writes the schedule as a Chrome trace / Perfetto
    timeline (one track per stage, F m and B m events, 1 ms a tick) and
    reports its bubble (the share of idle stage-ticks) as a remark.

    Errors, at the loss or the call at fault: a body that is not a chain of
    calls of defined functions, a stage that does not read the previous
    result or returns more than one value, parameters or activations that
    are not f32, a parameter two stages read, an argument no stage reads, a
    loss that is not an f32 scalar, batch-args out of range or without a
    leading dimension, microbatches, replicas or tp < 1, a split data
    argument or one over another axis than tp, without recomputation
    an intermediate that is not a tensor of static shape (a loop's stack);
    at the module: no
    `function`, an unknown `schedule`.
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "the loss of one micro-batch, a chain of stage calls">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "the micro-batches of a step">,
    ListOption<"batchArgs", "batch-args", "int64_t",
               "the loss's arguments that are data of one micro-batch">,
    ListOption<"deprecatedDataArgs", "data-args", "int64_t",
               "deprecated spelling of batch-args (kiln-data-parallel's "
               "name for the same arguments); warns">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"gpipe\"",
           "gpipe or 1f1b">,
    Option<"name", "name", "std::string", /*default=*/"\"\"",
           "the derived step's name (default: <function>_pipeline)">,
    Option<"replicas", "replicas", "int64_t", /*default=*/"1",
           "data-parallel replicas of the pipeline: D * P ranks, rank r "
           "stage r % P of replica r / P">,
    Option<"tensorParallel", "tp", "int64_t", /*default=*/"1",
           "tensor parallelism within each stage: parameters annotated "
           "kiln.sharding over 'tp' split over T ranks per stage; D * P * T "
           "ranks, rank r block r % T of stage (r / T) % P">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "cut a loss that is one block of ops into this many stages of "
           "balanced estimated cost (0: the loss is a chain of stage calls)">,
    Option<"recompute", "recompute", "bool", /*default=*/"true",
           "recompute each stage's forward pass in its backward pass "
           "(false: keep the intermediates the backward pass reads)">,
    Option<"scheduleTrace", "schedule-trace", "std::string",
           /*default=*/"\"\"",
           "write the schedule's timeline here (Chrome trace JSON, one "
           "track per stage, 1 ms a tick) and report its bubble">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect",
                           "mlir::func::FuncDialect"];
}
def Zero : Pass<"kiln-zero", "mlir::ModuleOp"> {
  let summary = "Shard the optimizer state, gradients and parameters of a "
                "data-parallel step across the ranks (ZeRO 1-3 / FSDP)";
  let description = [{
    Runs on the output of `kiln-data-parallel`. The arguments listed in
    `sharded-args` and the results listed in `sharded-results` become
    *blocks*: the tensor flattened, padded with zeros to a multiple of the
    number of ranks N (read from the function's collectives) and cut into
    N blocks of ceil(numel / N) elements, rank r holding block r as a 1-D
    tensor. The optimizer update, which kiln/Optim.h keeps elementwise in
    (parameter, gradient, state) plus rank-0 scalars, then runs on each
    rank's block only.

    - `stage=1`: list the optimizer state (not the step count). Gradients
      are all-reduced as before; each rank cuts its block of every reduced
      gradient and parameter, updates it, and the new parameters are
      all-gathered (`kiln.all_gather_start` right after each block is
      computed, the wait before the return).
    - `stage=2`: as 1, but a gradient only the update reads is
      reduce-scattered (`kiln.reduce_scatter_start`, bucketed with every
      rank's block of each gradient contiguous), so no whole reduced
      gradient exists.
    - `stage=3` (FSDP): list the parameters and new parameters too. Each op
      outside the update that reads a parameter reads its own gathered
      copy, started after the previous such op and waited for right before
      it (the forward and the backward pass gather separately); the new
      parameters are returned as blocks.

    ```
    kiln-opt --kiln-data-parallel="ranks=2 batch-args=4,5" \
             --kiln-zero="stage=2 sharded-args=7,8,9,10 sharded-results=6,7,8,9" step.mlir
    ```

    With stages 2 and 3, a gradient summed twice (g and c * g, c a splat,
    as Adam's second moment reads it) is exchanged once and its block
    scaled.

    The update is found from the sharded results: the elementwise ops
    (the Elementwise trait, select, cast) that compute them, and those that
    read what these compute. Errors: a sharded result computed by another
    op, an op outside the update that reads a sharded argument (stage 1
    and 2) or a value computed from one, a rank-0 sharded argument or
    result, an index out of range, a function without collectives (not the
    output of kiln-data-parallel), a bad `stage` or `bucket-mb`, an unknown
    `function`. See passes/parallel/README.md.
  }];
  let options = [
    Option<"stage", "stage", "int64_t", /*default=*/"0",
           "ZeRO stage: 1 (state), 2 (and gradients), 3 (and parameters)">,
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Function to rewrite (default: every public function)">,
    ListOption<"shardedArgs", "sharded-args", "int64_t",
               "Indices of the arguments held as blocks (optimizer state; "
               "with stage 3 also the parameters)">,
    ListOption<"shardedResults", "sharded-results", "int64_t",
               "Indices of the results returned as blocks (new optimizer "
               "state; with stage 3 also the new parameters)">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "Most MiB of whole gradients one reduce-scatter or all-reduce "
           "bucket carries">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Start each exchange as soon as its operands are computed "
           "(false: right before its results are needed)">,
  ];
  let dependentDialects = ["mlir::kiln::KilnDialect",
                           "mlir::func::FuncDialect"];
}

#endif // KILN_PASSES_PASSES_TD
