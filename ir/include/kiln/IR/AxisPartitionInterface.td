//===- AxisPartitionInterface.td - An op's rule along a mesh axis ---------===//
//
// The interface through which an op states how it is rewritten when a
// program is split over one axis of a device mesh (kiln-data-parallel,
// kiln-partition). The engine that walks the program, keeps each value's
// state and converts between states lives in passes/parallel; the rules
// of the kiln ops are attached to them from there as external models, as
// MLIR's mesh dialect attaches its ShardingInterface to linalg and tensor.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_AXISPARTITIONINTERFACE_TD
#define KILN_IR_AXISPARTITIONINTERFACE_TD

include "mlir/IR/OpBase.td"

def AxisPartitionOpInterface : OpInterface<"AxisPartitionOpInterface"> {
  let cppNamespace = "::mlir::kiln";
  let description = [{
    An op that knows how to compute its results on the ranks along one mesh
    axis from its operands' pieces. Each value of the original program is,
    along the axis, Replicated (whole on every rank), Sharded(d) (the
    concatenation along d of the ranks' pieces) or a PartialSum (the sum of
    the ranks' values); see kiln::AxisSharding.

    The engine calls `partitionAlongAxis` for an op with at least one
    operand (or value read by a region) that is not Replicated. The rule
    reads its operands' states and local values from the context, asks it
    for the operands in the states it needs (`replicate`, `shardAlong`:
    the engine inserts the collectives and reuses them), and defines every
    result, usually by `emit`, which copies the op onto local operands.
    It fails, having built nothing, when it cannot combine the operands'
    states: the engine then makes every operand Replicated and copies the
    op unchanged, which is always correct and only communicates more.
  }];
  let methods = [
    InterfaceMethod<[{
        Rewrites this op on the ranks' local values and defines its
        results, or fails without building anything.
      }],
      "::llvm::LogicalResult", "partitionAlongAxis",
      (ins "::mlir::kiln::AxisPartitionContext &":$context)>,
  ];
}

#endif // KILN_IR_AXISPARTITIONINTERFACE_TD
