//===- Passes.td - kiln operator fusion --------------------*- tablegen -*-===//
//
// The fusion pass groups kiln ops into kiln.fused regions. The grouping is
// decided here, on the kiln dialect, and shared by every backend; the CPU
// realization of a region (inlining plus linalg elementwise fusion) lives in
// backends/common/FusedLowering.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUSION_PASSES_TD
#define KILN_FUSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def Fusion : Pass<"kiln-fuse", "mlir::func::FuncOp"> {
  let summary = "Group kiln ops into kiln.fused regions";
  let description = [{
    Forms one `kiln.fused` region per group of ops that a backend should
    compile as one kernel:

    1. chains of elementwise, broadcast_in_dim and reshape ops
       (`gelu(x * a + b) * c` is one region);
    2. reductions with their elementwise prologue and epilogue (softmax,
       layer norm and log-sum-exp are one region each);
    3. groups that read the same input (multi-output fusion);
    4. a matmul with the elementwise ops on its result (bias, activation,
       residual add).

    No op is ever duplicated (an op with users outside its region becomes an
    extra result), no region both feeds and consumes an outside op, and the
    bodies of kiln.cond / kiln.while / kiln.for are fused too. Splat
    constants are copied into the regions that use them. The algorithm is
    described step by step in passes/fusion/Fusion.cpp.

    ```
    kiln-opt --kiln-fuse model.mlir
    ```
  }];
  let dependentDialects = ["mlir::kiln::KilnDialect"];
  let statistics = [
    Statistic<"numRegions", "regions", "kiln.fused regions formed">,
    Statistic<"numFusedOps", "fused-ops", "Ops moved into kiln.fused regions">,
  ];
}

def FuseAttention : Pass<"kiln-fuse-attention"> {
  let summary = "Replace softmax(q k^T * scale + mask) v by kiln.attention";
  let description = [{
    Finds attention written as ops: `kiln.matmul` of q by a
    `kiln.transpose` of k (rank 2, or 3 with the batch dim first; or rank
    4 and more as a product of rank 3 between reshapes that merge the
    leading dims and split them again, as ONNX exporters write heads),
    optional multiplications (or a division) by splat constants of q,
    k^T or the scores, an optional additive mask, a softmax over the last
    dim in its stable form (maximum subtracted, exp, sum, divide),
    optionally `where(isnan(p), 0, p)` (with a mask that may hold -inf,
    the rows it masks out entirely are zeroed after the op) or a select
    zeroing whole rows of p (the same rows of the result are zeroed after
    the op), and a
    `kiln.matmul` by v, each intermediate used only by the next step, and
    replaces it by one `kiln.attention`. A transpose of k that also moves
    the heads (`[B, Nk, H, D]` to `[B, H, D, Nk]`) becomes a transpose of
    the key to `[B, H, Nk, D]`. A mask that is a `kiln.broadcast_in_dim` is taken
    unbroadcast (its source reshaped to the scores' rank); a constant mask that is 0 on and below the
    diagonal and -inf above it becomes `causal`.

    ```
    kiln-opt --kiln-fuse-attention model.mlir
    ```
  }];
  let dependentDialects = ["mlir::kiln::KilnDialect"];
  let statistics = [
    Statistic<"numFused", "attentions", "kiln.attention ops formed">,
  ];
}

def SparseUpdates : Pass<"kiln-sparse-updates"> {
  let summary = "Apply a scatter_add's scaling and the update it feeds to "
                "its rows only";
  let description = [{
    An embedding's gradient is `scatter_add(0, ids, dy)` (the transpose of
    its `kiln.gather`), and an SGD step reads it as `p - lr * g`. This pass
    moves uniform scalings (`c * g`, `g / c`, `-g`, c a splat or a
    broadcast scalar) onto the updates and the addition or subtraction into
    the table, `p - lr * g` becoming `scatter_add(p, ids, -(lr * dy))`: the
    step then writes the rows the batch read instead of the whole table.
    A scatter whose result has another reader is left alone. Exact but for
    the order in which several updates of one row add up.

    Then an update that reads the gradient elsewhere too, or other tables,
    is computed on the touched rows: `a + e` (or `a - e`) where `e` is an
    elementwise function of g, other tables of its shape and uniform values
    that is zero wherever g is. Adagrad's `s + g * g` and
    `p - lr * g / (sqrt(s') + eps)` are such updates. The first id naming each
    row gets the sum of the updates of all ids naming it, added in the
    ids' order as the gradient adds them (the first of each id's row found
    in an n x n "same row" matrix), `e` is computed on those rows (other
    tables gathered), and the result is `scatter_add(a, rows, e_rows)`
    applying only those first ids. Rows g does not touch
    keep their values, as PyTorch's sparse optimizers keep them. That holds
    even where the dense formula gives NaN (0 / 0 with eps = 0). A
    gradient naming no fewer ids than its table has rows stays dense.

    ```
    kiln-opt --kiln-sparse-updates step.mlir
    ```
  }];
  let dependentDialects = ["mlir::kiln::KilnDialect"];
}

def ByteTables : Pass<"kiln-byte-tables", "mlir::func::FuncOp"> {
  let summary = "Elementwise functions of one 8-bit tensor as lookups in "
                "256-entry tables";
  let description = [{
    Finds values y = f(x) where every op from x to y is elementwise (the
    `Elementwise` trait, `kiln.cast`, `kiln.select`), x is a ui8 or i8
    tensor of y's shape and the only operand that is not a splat constant
    (an 8-bit value is a leaf, not looked through), and f divides, rounds,
    calls a transcendental function or has at least 6 ops: what ONNX's QDQ
    form computes around each activation of a quantized model
    (DequantizeLinear, the activation, QuantizeLinear). Each such y that is
    returned or read by an op that is no function of the same x becomes

    ```mlir
    %i = kiln.cast %x : tensor<...xui8> to tensor<...xi32>   // + 128 for i8
    %y = kiln.gather %table, %i : tensor<256xT>, tensor<...xi32>
    ```

    with the table computed by folding a copy of f on the 256 values of x
    (C's math library, as the reference evaluator computes; compiled code
    would approximate the transcendental functions).
  }];
  let dependentDialects = ["mlir::kiln::KilnDialect"];
  let statistics = [
    Statistic<"numTables", "tables", "functions replaced by a table lookup">,
  ];
}

def DecomposeAttention : Pass<"kiln-decompose-attention"> {
  let summary = "Rewrite kiln.attention and kiln.attention_grad into kiln ops";
  let description = [{
    Replaces each attention op by the composition that defines it:
    batched kiln.matmul over the leading dims flattened into one, the
    softmax (maximum subtracted, exp, sum, divide) and, for
    kiln.attention_grad, the scores recomputed from the saved lse. The
    score matrix is materialized; backends run this on the attention ops
    they have no fused kernel for. f16 and bf16 are computed in f32.

    ```
    kiln-opt --kiln-decompose-attention model.mlir
    ```
  }];
  let dependentDialects = ["mlir::kiln::KilnDialect"];
}

def DecomposeSort : Pass<"kiln-decompose-sort"> {
  let summary = "Rewrite kiln.sort into a bitonic sorting network of kiln ops";
  let description = [{
    Replaces each kiln.sort by a bitonic sorting network over the sorted
    dim padded to a power of two P: log2(P) (log2(P) + 1) / 2 stages, each
    a compare-exchange of every element with its partner (a gather at
    positions computed from the row number, compares and selects). The
    stages are the iterations of one kiln.for, which reads each stage's
    block size and partner distance from constant tables, so the program
    (and its compile time) does not grow with P. The elements are ordered
    by (padding last, value, original index), a total order, so the
    network's result is the stable sort the op defines, NaN and ties
    included. No control flow depends on the data, so every backend runs
    it as it runs other kiln ops.

    ```
    kiln-opt --kiln-decompose-sort model.mlir
    ```
  }];
  let dependentDialects = ["mlir::kiln::KilnDialect"];
}

#endif // KILN_FUSION_PASSES_TD
