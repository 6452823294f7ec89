//===- KilnOps.td - kiln dialect operations ----------------*- tablegen -*-===//
//
// Every op works on statically shaped tensors. Result types are inferred
// (InferTypeOpInterface) wherever the operands determine them, so the
// verifier reports shape and dtype mismatches at the op that caused them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "kiln/IR/KilnDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant",
    [ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "A tensor literal";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_IotaOp : Kiln_Op<"iota", [Pure]> {
  let summary = "Indices along one dimension, broadcast to the result shape";
  let arguments = (ins I64Attr:$dimension);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "`dim` `=` $dimension attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
        SameOperandsAndResultType, DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let arguments = (ins operandType:$operand);
  let results = (outs operandType:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let hasFolder = 1;
}

class Kiln_BinaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
        SameOperandsAndResultType, DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Kiln_AddOp : Kiln_BinaryOp<"add", Kiln_NumericTensor, [Commutative]> {
  let summary = "Elementwise addition";
}
def Kiln_SubOp : Kiln_BinaryOp<"sub", Kiln_NumericTensor> {
  let summary = "Elementwise subtraction";
}
def Kiln_MulOp : Kiln_BinaryOp<"mul", Kiln_NumericTensor, [Commutative]> {
  let summary = "Elementwise multiplication";
}
def Kiln_DivOp : Kiln_BinaryOp<"div", Kiln_NumericTensor> {
  let summary = "Elementwise division (integers round toward zero)";
}
def Kiln_MaxOp : Kiln_BinaryOp<"max", Kiln_NumericTensor, [Commutative]> {
  let summary = "Elementwise maximum (NaN-propagating for floats)";
}
def Kiln_MinOp : Kiln_BinaryOp<"min", Kiln_NumericTensor, [Commutative]> {
  let summary = "Elementwise minimum (NaN-propagating for floats)";
}
def Kiln_PowOp : Kiln_BinaryOp<"pow", Kiln_FloatTensor> {
  let summary = "Elementwise power";
}

def Kiln_NegOp : Kiln_UnaryOp<"neg", Kiln_NumericTensor> {
  let summary = "Elementwise negation";
}
def Kiln_AbsOp : Kiln_UnaryOp<"abs", Kiln_NumericTensor> {
  let summary = "Elementwise absolute value";
}
def Kiln_ReluOp : Kiln_UnaryOp<"relu", Kiln_NumericTensor> {
  let summary = "Elementwise max(x, 0)";
}
def Kiln_ExpOp : Kiln_UnaryOp<"exp", Kiln_FloatTensor> {
  let summary = "Elementwise e^x";
}
def Kiln_LogOp : Kiln_UnaryOp<"log", Kiln_FloatTensor> {
  let summary = "Elementwise natural logarithm";
}
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", Kiln_FloatTensor> {
  let summary = "Elementwise square root";
}
def Kiln_RsqrtOp : Kiln_UnaryOp<"rsqrt", Kiln_FloatTensor> {
  let summary = "Elementwise 1/sqrt(x)";
}
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", Kiln_FloatTensor> {
  let summary = "Elementwise hyperbolic tangent";
}
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", Kiln_FloatTensor> {
  let summary = "Elementwise 1/(1+e^-x)";
}
def Kiln_SinOp : Kiln_UnaryOp<"sin", Kiln_FloatTensor> {
  let summary = "Elementwise sine";
}
def Kiln_CosOp : Kiln_UnaryOp<"cos", Kiln_FloatTensor> {
  let summary = "Elementwise cosine";
}

def Kiln_CompareOp : Kiln_Op<"compare",
    [Pure, Elementwise, AllTypesMatch<["lhs", "rhs"]>, InferTypeOpAdaptor]> {
  let summary = "Elementwise comparison producing i1";
  let arguments = (ins Kiln_CompareDirection:$direction,
                       Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$direction `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def Kiln_SelectOp : Kiln_Op<"select",
    [Pure, AllTypesMatch<["on_true", "on_false", "result"]>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Elementwise pred ? on_true : on_false";
  let description = [{
    `pred` has the shape of the values, or is a rank-0 tensor that selects
    whole tensors.
  }];
  let arguments = (ins Kiln_BoolTensor:$pred, Kiln_Tensor:$on_true,
                       Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure]> {
  let summary = "Elementwise dtype conversion";
  let description = [{
    Float to integer truncates toward zero; to i1 means `x != 0`; from i1
    gives 0 or 1.
  }];
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Kiln_BroadcastInDimOp : Kiln_Op<"broadcast_in_dim", [Pure]> {
  let summary = "Broadcast an operand to a larger shape";
  let description = [{
    Operand dimension `i` maps to result dimension `dims[i]`; it must either
    equal that result dimension or be 1 (numpy broadcasting, made explicit).
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $dims attr-dict `:` functional-type($operand, $result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure]> {
  let summary = "Reinterpret the elements (row-major) in a new shape";
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` functional-type($operand, $result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "Permute dimensions: result dim i is operand dim perm[i]";
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `permutation` `=` $permutation attr-dict `:` type($operand)
  }];
  let hasFolder = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "Strided static slice [start, limit) with step stride";
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$stride);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start `,` `limit` `=` $limit `,` `stride` `=` $stride
    attr-dict `:` type($operand)
  }];
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "Concatenate tensors along one dimension";
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$dimension);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dim` `=` $dimension attr-dict `:` type($inputs)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions, contractions, gathers
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, Type operandType>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let arguments = (ins operandType:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs operandType:$result);
  let assemblyFormat = "$operand `,` `dims` `=` $dims attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", Kiln_NumericTensor> {
  let summary = "Sum over the listed dimensions, which are removed";
}
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", Kiln_NumericTensor> {
  let summary = "Maximum over the listed dimensions, which are removed";
}
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", Kiln_FloatTensor> {
  let summary = "Mean over the listed dimensions, which are removed";
}

def Kiln_MatmulOp : Kiln_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "Matrix product [M,K]x[K,N] or batched [B,M,K]x[B,K,N]";
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Kiln_GatherOp : Kiln_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "Rows of `table` picked along axis 0 (embedding lookup)";
  let description = [{
    result[i..., j...] = table[clamp(indices[i...], 0, table.dim(0) - 1), j...].
    Out-of-range indices are clamped, so a bad index never reads outside the
    table.
  }];
  let arguments = (ins Kiln_Tensor:$table, Kiln_IndexTensor:$indices);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` type($table) `,` type($indices)
  }];
}

//===----------------------------------------------------------------------===//
// Slicing at a run-time row index
//===----------------------------------------------------------------------===//

/// A rank-0 i64 tensor; buildable, so assembly formats need not spell it.
def Kiln_RowIndex : 0DTensorOf<[I64]> {
  let builderCall =
      "::mlir::RankedTensorType::get({}, $_builder.getIntegerType(64))";
}

def Kiln_DynamicSliceOp : Kiln_Op<"dynamic_slice",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "`size` rows of the operand starting at a run-time row index";
  let description = [{
    result[r, j...] = operand[s + r, j...] for r < size, where
    s = clamp(index, 0, operand.dim(0) - size): like gather, a bad index is
    clamped, never read out of bounds. Reverse-mode differentiation of
    `kiln.for` reads what the forward loop stored per iteration with it.

    ```mlir
    %row = kiln.dynamic_slice %buffer[%i], size = 1 : tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, Kiln_RowIndex:$index,
                       I64Attr:$size);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $index `]` `,` `size` `=` $size attr-dict `:` type($operand)
  }];
}

def Kiln_DynamicUpdateSliceOp : Kiln_Op<"dynamic_update_slice",
    [Pure, AllTypesMatch<["operand", "result"]>]> {
  let summary = "The operand with rows from a run-time row index replaced";
  let description = [{
    The operand with rows s .. s + update.dim(0) - 1 replaced by `update`,
    where s = clamp(index, 0, operand.dim(0) - update.dim(0)). `update`
    has the operand's element type and, past dimension 0, its shape.
    Reverse-mode differentiation of `kiln.for` stores per-iteration values
    with it.

    ```mlir
    %next = kiln.dynamic_update_slice %buffer[%i], %row : tensor<8x4xf32>, tensor<1x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, Kiln_Tensor:$update,
                       Kiln_RowIndex:$index);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $index `]` `,` $update attr-dict `:` type($operand) `,`
    type($update)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Structured control flow
//===----------------------------------------------------------------------===//

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["CondOp", "WhileOp", "ForOp", "FusedOp",
                 "FusedKernelOp"]>]> {
  let summary = "Values leaving a kiln control-flow region";
  let arguments = (ins Variadic<Kiln_Value>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ValueRange()); }]>];
}

def Kiln_CondOp : Kiln_Op<"cond", [IsolatedFromAbove, RecursiveMemoryEffects,
    ]> {
  let summary = "Run one of two regions on a rank-0 i1 predicate";
  let description = [{
    Both regions receive `inputs` as block arguments and yield values of the
    result types.

    ```mlir
    %r = kiln.cond %p, (%x) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
    ^bb0(%a: tensor<4xf32>):
      kiln.yield %a : tensor<4xf32>
    } else {
    ^bb0(%a: tensor<4xf32>):
      %n = kiln.neg %a : tensor<4xf32>
      kiln.yield %n : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Kiln_Predicate:$pred, Variadic<Kiln_Value>:$inputs);
  let results = (outs Variadic<Kiln_Value>:$results);
  let regions = (region SizedRegion<1>:$then_region, SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $pred `,` `(` $inputs `)` `:` type($pred) `,` functional-type($inputs, $results)
    $then_region `else` $else_region attr-dict
  }];
  let hasRegionVerifier = 1;
}

def Kiln_WhileOp : Kiln_Op<"while", [IsolatedFromAbove, RecursiveMemoryEffects,
    InferTypeOpAdaptor]> {
  let summary = "Loop with a data-dependent trip count";
  let description = [{
    The loop-carried values start as `inits`. The `cond` region receives the
    carried values and yields a rank-0 i1; while it is true the `body` region
    receives them and yields the next ones. The results are the carried
    values when `cond` yields false.
  }];
  let arguments = (ins Variadic<Kiln_Value>:$inits);
  let results = (outs Variadic<Kiln_Value>:$results);
  let regions = (region SizedRegion<1>:$cond_region, SizedRegion<1>:$body_region);
  let assemblyFormat = [{
    `(` $inits `)` `:` `(` type($inits) `)` `cond` $cond_region `do` $body_region
    attr-dict
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Kiln_ForOp : Kiln_Op<"for", [IsolatedFromAbove, RecursiveMemoryEffects,
    InferTypeOpAdaptor]> {
  let summary = "Loop with a static trip count";
  let description = [{
    The body runs `trip_count` times. Its first block argument is the
    iteration index as a rank-0 i64 tensor (0, 1, ...), the others are the
    loop-carried values, which start as `inits`. A static count lets reverse
    mode preallocate what the backward loop needs.
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inits, I64Attr:$trip_count);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body_region);
  let assemblyFormat = [{
    $trip_count `iterations` `(` $inits `)` `:` `(` type($inits) `)` $body_region
    attr-dict
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Stacks (what reverse mode stores across the iterations of a kiln.while)
//===----------------------------------------------------------------------===//

def Kiln_StackEmptyOp : Kiln_Op<"stack_empty", [Pure]> {
  let summary = "A stack with no rows";
  let description = [{
    A stack of capacity 0 (its leading dimension). `kiln.stack_reserve`
    grows the capacity at run time; `kiln.stack_push` writes rows below it.

    ```mlir
    %s = kiln.stack_empty : tensor<?x4xf32>
    ```
  }];
  let results = (outs Kiln_Stack:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Kiln_StackReserveOp : Kiln_Op<"stack_reserve", [Pure,
    AllTypesMatch<["stack", "result"]>]> {
  let summary = "Grow a stack's capacity, keeping its rows";
  let description = [{
    Returns `stack` with a capacity of max(`rows`, its capacity); the rows
    below the old capacity are kept, the new ones are undefined. Compiled
    code copies the rows into a new buffer, so callers grow geometrically
    (reverse mode doubles the capacity) to keep the total copying linear in
    the number of rows.

    ```mlir
    %t = kiln.stack_reserve %s, %n : tensor<?x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Stack:$stack, Kiln_I64Scalar:$rows);
  let results = (outs Kiln_Stack:$result);
  let assemblyFormat = "$stack `,` $rows attr-dict `:` type($stack)";
}

def Kiln_StackPushOp : Kiln_Op<"stack_push", [Pure,
    AllTypesMatch<["stack", "result"]>]> {
  let summary = "Write one row of a stack";
  let description = [{
    Returns `stack` with row `index` set to `value`; `index` must be below
    the capacity (`kiln.stack_reserve`). Writing in place keeps a stack
    carried by a loop in one buffer.

    ```mlir
    %t = kiln.stack_push %s[%i], %v : tensor<?x4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_Stack:$stack, Kiln_I64Scalar:$index,
                       Kiln_Tensor:$value);
  let results = (outs Kiln_Stack:$result);
  let assemblyFormat = [{
    $stack `[` $index `]` `,` $value attr-dict `:` type($stack) `,` type($value)
  }];
  let hasVerifier = 1;
}

def Kiln_StackReadOp : Kiln_Op<"stack_read", [Pure]> {
  let summary = "Read one row of a stack";
  let description = [{
    Row `index` of `stack` (below its capacity), which a `kiln.stack_push`
    must have written.

    ```mlir
    %v = kiln.stack_read %s[%i] : tensor<?x4xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_Stack:$stack, Kiln_I64Scalar:$index);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $stack `[` $index `]` attr-dict `:` type($stack) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KILN_OPS_TD
