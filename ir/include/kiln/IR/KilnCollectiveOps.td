//===- KilnCollectiveOps.td - Communication between ranks --*- tablegen -*-===//
//
// An SPMD program runs as N copies, the ranks 0 .. N-1, each on its own
// data. The collective ops exchange tensors between them. Each names its
// replica groups: a partition of the run's ranks into groups of equal size
// S, written `groups = [[0, 1], [2, 3]]`; a collective acts within each group
// independently, and a rank's position in its group's list is its group
// index. Every rank of the run is in exactly one group, so the groups also
// fix the number of ranks the program runs on.
//
// Collectives are group-local: one involves the ranks of each of its groups
// and no others. The members of a group must execute the group's
// collectives in the same order with the same operand types; ranks in
// different groups need not meet at all, so the ranks of a group may run
// collectives that the rest of the run skips (a pipeline stage's
// tensor-parallel all-reduces inside the kiln.cond only that stage's ranks
// enter), and two groups may run different numbers of them. A group is
// a set of ranks: two tables whose rows hold the same ranks name the same
// groups. Ranks that share several groups execute those groups'
// collectives in one order, and a `kiln.collective_permute` involves every
// rank of the run. A member that skips its group's collective, or ranks
// that wait for each other in different groups, are errors the runtime and
// the evaluator report. The ops communicate, so they are not Pure: they
// keep their order relative to each other and are neither removed nor
// merged.
//
// The asynchronous forms (`*_start` + `kiln.collective_wait`) let
// computation proceed while the exchange is in flight.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COLLECTIVE_OPS_TD
#define KILN_COLLECTIVE_OPS_TD

include "kiln/IR/KilnDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// What the collectives read and write besides their operands and results:
/// the communication channel between the ranks.
def Kiln_CommResource : Resource<"::mlir::kiln::CommResource">;

def Kiln_CollectiveReduction : I32EnumAttr<"CollectiveReduction",
    "how a collective combines the ranks' tensors", [
      I32EnumAttrCase<"Sum", 0, "sum">, I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">, I32EnumAttrCase<"Mean", 3, "mean">]> {
  let cppNamespace = "::mlir::kiln";
}

class Kiln_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [
        MemoryEffects<[MemRead<Kiln_CommResource>,
                       MemWrite<Kiln_CommResource>]>])> {
  code commonExtraClassDeclaration = [{
    /// The replica groups, one row of group_size ranks each.
    ::llvm::SmallVector<::llvm::ArrayRef<int64_t>> getGroupRows() {
      return ::mlir::kiln::groupRows(getGroups(),
                                     static_cast<int64_t>(getGroupSize()));
    }
  }];
  let extraClassDeclaration = commonExtraClassDeclaration;
}

//===----------------------------------------------------------------------===//
// Synchronous collectives
//===----------------------------------------------------------------------===//

def Kiln_AllReduceOp : Kiln_CollectiveOp<"all_reduce",
    [SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Combine a tensor across each replica group";
  let description = [{
    Every rank receives the elementwise `kind` (sum, max, min, mean) of the
    operands of its group's ranks. Sums and means of floats add in group
    order (mean divides the sum by S once, rounded); integers wrap; max and
    min follow kiln.max and kiln.min. `mean` takes float tensors only.

    ```mlir
    %s = kiln.all_reduce %g, kind = sum, groups = [[0, 1]] : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$operand,
                       Kiln_CollectiveReduction:$kind,
                       DenseI64ArrayAttr:$groups, I64Attr:$group_size);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `,` `kind` `=` $kind `,` custom<ReplicaGroups>($groups, $group_size)
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Kiln_AllGatherOp : Kiln_CollectiveOp<"all_gather", [InferTypeOpAdaptor]> {
  let summary = "Concatenate the group's tensors along one dimension";
  let description = [{
    Every rank receives the operands of its group's ranks joined along
    `dim` in group order: the result's `dim` is S times the operand's.

    ```mlir
    %a = kiln.all_gather %x, dim = 0, groups = [[0, 1]] : (tensor<2x3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, I64Attr:$dimension,
                       DenseI64ArrayAttr:$groups, I64Attr:$group_size);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dimension `,` custom<ReplicaGroups>($groups, $group_size)
    attr-dict `:` functional-type($operand, $result)
  }];
  let hasVerifier = 1;
}

def Kiln_ReduceScatterOp : Kiln_CollectiveOp<"reduce_scatter",
    [InferTypeOpAdaptor]> {
  let summary = "Combine across the group, each rank keeping one block";
  let description = [{
    The elementwise `kind` of the group's operands (as kiln.all_reduce
    computes it), split along `dim` into S equal blocks; the rank with group
    index i receives block i. The operand's `dim` must be divisible by S.

    ```mlir
    %r = kiln.reduce_scatter %g, kind = sum, dim = 0, groups = [[0, 1]] : (tensor<4x3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$operand,
                       Kiln_CollectiveReduction:$kind, I64Attr:$dimension,
                       DenseI64ArrayAttr:$groups, I64Attr:$group_size);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `,` `kind` `=` $kind `,` `dim` `=` $dimension `,`
    custom<ReplicaGroups>($groups, $group_size)
    attr-dict `:` functional-type($operand, $result)
  }];
  let hasVerifier = 1;
}

def Kiln_CollectiveBroadcastOp : Kiln_CollectiveOp<"collective_broadcast",
    [SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Every rank receives the tensor of its group's root";
  let description = [{
    The operand of the rank with group index `root` (0 <= root < S), on
    every rank of the group; the other ranks' operands are not read.

    ```mlir
    %w = kiln.collective_broadcast %w0, root = 0, groups = [[0, 1]] : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, I64Attr:$root,
                       DenseI64ArrayAttr:$groups, I64Attr:$group_size);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `root` `=` $root `,` custom<ReplicaGroups>($groups, $group_size)
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Kiln_AllToAllOp : Kiln_CollectiveOp<"all_to_all", [InferTypeOpAdaptor]> {
  let summary = "Exchange blocks: block j of rank i becomes block i of rank j";
  let description = [{
    Each rank splits its operand along `split_dim` into S equal blocks and
    sends block j to group index j; it joins the blocks it receives along
    `concat_dim` in group order. The result's `split_dim` is the operand's
    divided by S and its `concat_dim` multiplied by S (the two may be the
    same dimension, which keeps its size).

    ```mlir
    %t = kiln.all_to_all %x, split_dim = 0, concat_dim = 1, groups = [[0, 1]] : (tensor<4x3xf32>) -> tensor<2x6xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, I64Attr:$split_dim,
                       I64Attr:$concat_dim, DenseI64ArrayAttr:$groups,
                       I64Attr:$group_size);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `split_dim` `=` $split_dim `,` `concat_dim` `=` $concat_dim `,`
    custom<ReplicaGroups>($groups, $group_size)
    attr-dict `:` functional-type($operand, $result)
  }];
  let hasVerifier = 1;
}

def Kiln_CollectivePermuteOp : Kiln_Op<"collective_permute",
    [SameOperandsAndResultType, InferTypeOpInterface,
     MemoryEffects<[MemRead<Kiln_CommResource>,
                    MemWrite<Kiln_CommResource>]>]> {
  let summary = "Point-to-point sends along (source, target) pairs";
  let description = [{
    `pairs` lists (source, target) ranks of the run, flattened: no source
    and no target appears twice. A rank that is the target of a pair
    receives its source's operand; any other rank receives zeros (false for
    i1). A pair (r, r) keeps the rank's own operand.

    ```mlir
    // A ring shift over 2 ranks.
    %n = kiln.collective_permute %x, pairs = [0, 1, 1, 0] : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$pairs);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `pairs` `=` $pairs attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Kiln_RankOp : Kiln_Op<"rank", [Pure]> {
  let summary = "This rank's number in the run";
  let description = [{
    The rank (0 .. N-1) of the copy of the program that executes it; 0 in a
    run of one process.

    ```mlir
    %r = kiln.rank : tensor<i64>
    ```
  }];
  let results = (outs Kiln_I64Scalar:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

class Kiln_StartOp<string mnemonic, string syncOp>
    : Kiln_CollectiveOp<mnemonic, [InferTypeOpAdaptor]> {
  let summary = "Start a " # syncOp # "; kiln.collective_wait completes it";
  let description = [{
    The same exchange as `kiln.}] # syncOp # [{`, started here and completed
    by the one `kiln.collective_wait` that uses the result, in the same
    block. The result is the pending exchange: its only use is that wait,
    which yields the value the synchronous op would. The operand is read
    until the wait (which names it again, so that its storage stays
    untouched until then).
  }];
  let results = (outs Kiln_Tensor:$result);
  let hasVerifier = 1;
}

def Kiln_AllReduceStartOp : Kiln_StartOp<"all_reduce_start", "all_reduce"> {
  let arguments = (ins Kiln_NumericTensor:$operand,
                       Kiln_CollectiveReduction:$kind,
                       DenseI64ArrayAttr:$groups, I64Attr:$group_size);
  let assemblyFormat = [{
    $operand `,` `kind` `=` $kind `,` custom<ReplicaGroups>($groups, $group_size)
    attr-dict `:` functional-type($operand, $result)
  }];
}

def Kiln_AllGatherStartOp : Kiln_StartOp<"all_gather_start", "all_gather"> {
  let arguments = (ins Kiln_Tensor:$operand, I64Attr:$dimension,
                       DenseI64ArrayAttr:$groups, I64Attr:$group_size);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dimension `,` custom<ReplicaGroups>($groups, $group_size)
    attr-dict `:` functional-type($operand, $result)
  }];
}

def Kiln_ReduceScatterStartOp : Kiln_StartOp<"reduce_scatter_start",
    "reduce_scatter"> {
  let arguments = (ins Kiln_NumericTensor:$operand,
                       Kiln_CollectiveReduction:$kind, I64Attr:$dimension,
                       DenseI64ArrayAttr:$groups, I64Attr:$group_size);
  let assemblyFormat = [{
    $operand `,` `kind` `=` $kind `,` `dim` `=` $dimension `,`
    custom<ReplicaGroups>($groups, $group_size)
    attr-dict `:` functional-type($operand, $result)
  }];
}

def Kiln_CollectiveWaitOp : Kiln_Op<"collective_wait",
    [AllTypesMatch<["pending", "result"]>,
     MemoryEffects<[MemRead<Kiln_CommResource>,
                    MemWrite<Kiln_CommResource>]>]> {
  let summary = "Complete an asynchronous collective";
  let description = [{
    Waits for the exchange `pending` (the result of a `kiln.*_start` op in
    the same block) and returns its value. `source` is that start op's
    operand: naming it here keeps it alive, and unchanged, until the
    exchange no longer reads it.

    ```mlir
    %p = kiln.all_reduce_start %g, kind = sum, groups = [[0, 1]] : (tensor<4xf32>) -> tensor<4xf32>
    // ... computation overlapping the exchange ...
    %s = kiln.collective_wait %p, %g : tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$pending, Kiln_Tensor:$source);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $pending `,` $source attr-dict `:` type($pending) `,` type($source)
  }];
  let hasVerifier = 1;
}

#endif // KILN_COLLECTIVE_OPS_TD
