//===- KilnFusionOps.td - The kiln.fused region op ---------*- tablegen -*-===//
//
// kiln.fused holds a group of kiln ops that the kiln-fuse pass decided to
// compile as one kernel (one loop nest on the CPU, one launch on CUDA). The
// decision is made once, on the kiln dialect, so every backend sees the same
// groups; the reference evaluator runs the region like any other block.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUSION_OPS_TD
#define KILN_FUSION_OPS_TD

include "kiln/IR/KilnDialect.td"
include "kiln/IR/KilnFusionEnums.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kiln_FusedOp : Kiln_Op<"fused", [IsolatedFromAbove,
    RecursiveMemoryEffects]> {
  let summary = "A group of kiln ops compiled as one kernel";
  let description = [{
    The region's block receives `inputs` as arguments and ends in
    `kiln.yield` of the results. Like the control-flow regions it is
    isolated from above, so the inputs are exactly what the kernel reads
    and the results exactly what it writes. The body holds kiln ops without
    regions; `kind` tells a backend which kernel shape to build:

    - `elementwise`: elementwise, broadcast_in_dim and reshape ops only;
    - `reduction`: one or more reductions (over the same operand shape and
      dims) with their elementwise prologue and epilogue;
    - `matmul_epilogue`: one matmul whose operands are inputs, followed by
      elementwise ops on its result (bias, activation, residual add).

    ```mlir
    %y = kiln.fused elementwise (%x, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x0: tensor<8xf32>, %b0: tensor<8xf32>):
      %s = kiln.add %x0, %b0 : tensor<8xf32>
      %r = kiln.relu %s : tensor<8xf32>
      kiln.yield %r : tensor<8xf32>
    }
    ```
  }];
  let arguments = (ins Kiln_FusionKind:$kind, Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind ` ` `(` $inputs `)` `:` functional-type($inputs, $results) $body
    attr-dict
  }];
  let hasRegionVerifier = 1;
}

#endif // KILN_FUSION_OPS_TD
