//===- KilnFusionOps.td - The kiln.fused region ops --------*- tablegen -*-===//
//
// kiln.fused holds a group of kiln ops that the kiln-fuse pass decided to
// compile as one kernel (one loop nest on the CPU, one launch on CUDA). The
// decision is made once, on the kiln dialect, so every backend sees the same
// groups; the reference evaluator runs the region like any other block.
// kiln.fused_kernel is the same group after kiln-to-linalg lowered its ops:
// the backends keep it until they have made the group one kernel.
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

def Kiln_FusedKernelOp : Kiln_Op<"fused_kernel", [RecursiveMemoryEffects]> {
  let summary = "The lowered ops of one kiln.fused region, kept together";
  let description = [{
    `kiln-to-linalg` lowers each `kiln.fused` into this op: the same
    inputs, results and `kind`, and the region's ops lowered in place (to
    linalg, tensor, arith and math on tensors). It carries the fusion
    decision in the IR while a backend turns the group into one kernel: an
    op computes in a kernel exactly when it is in the body. Nothing a pass
    does to locations or attributes can drop an op from its group. The
    backends inline the body (`kiln-inline-fused-kernels`) before
    bufferization.

    Like `kiln.fused`, the body's block receives `inputs` as arguments and
    ends in `kiln.yield` of the results. Unlike it, the body may use values
    defined above it: the `tensor.empty` destinations, which compute
    nothing, live outside the kernels, so that CSE shares them between
    kernels as it does between any ops. The passes that read a kernel check
    that its body still holds what `kind` promises (a linalg reduction for
    `reduction`, one contraction for `matmul_epilogue`, neither for
    `elementwise`) and fail, naming the kernel, where it does not.

    ```mlir
    %y = kiln.fused_kernel elementwise (%x) : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x0: tensor<8xf32>):
      %e = tensor.empty() : tensor<8xf32>
      %r = linalg.generic {...} ins(%x0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {...}
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
