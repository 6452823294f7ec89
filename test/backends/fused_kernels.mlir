// kiln.fused_kernel in the backends (FusedKernels.cpp):
// kiln-inline-fused-kernels replaces each kernel by its body. A kernel that
// reads its own reduction or matmul from outside has lost a member of its
// group, one that holds a reduction or matmul its kind does not allow has
// taken in a member of another; every pass that reads kernels fails on it,
// naming the kernel, instead of compiling the group as slower code.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-inline-fused-kernels | FileCheck %s
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-fuse-linalg-groups -o /dev/null
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cpu-tile-fused-reductions -o /dev/null

// The body moves before the kernel, its argument replaced by the input and
// the kernel's results by the values it yields.
// CHECK-LABEL: func.func @inline(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<8xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>)
// CHECK-NOT:     kiln.fused_kernel
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<8xf32>
// CHECK:         %[[S:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[B]] : {{.*}} outs(%[[E]] :
// CHECK:         %[[R:.+]] = linalg.generic {{.*}} ins(%[[S]] : {{.*}} outs(%[[E]] :
// CHECK-NOT:     kiln.yield
// CHECK:         return %[[S]], %[[R]]
#map = affine_map<(d0) -> (d0)>
func.func @inline(%x: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r:2 = kiln.fused_kernel elementwise (%x, %b) : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%x0: tensor<8xf32>, %b0: tensor<8xf32>):
    %e = tensor.empty() : tensor<8xf32>
    %s = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%x0, %b0 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%a: f32, %c: f32, %out: f32):
      %v = arith.addf %a, %c : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    %t = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%s : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%a: f32, %out: f32):
      %v = math.exp %a : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    kiln.yield %s, %t : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A body that yields its argument (canonicalization folded the op that
// computed the result): the kernel's result becomes the input itself.
// CHECK-LABEL: func.func @yields_argument(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<8xf32>)
// CHECK-NEXT:    return %[[X]], %[[X]]
func.func @yields_argument(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r:2 = kiln.fused_kernel elementwise (%x) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%x0: tensor<8xf32>):
    kiln.yield %x0, %x0 : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A softmax whose max was moved out of its kernel: the kernel of kind
// reduction holds only elementwise ops and reads the max from outside.
// Compiled as it is, the max would be a loop nest of its own instead of a
// step of the row loop.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @lost_reduction(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  // expected-note @+1 {{computed here}}
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.maximumf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  // expected-error @+1 {{'kiln.fused_kernel' op of kind reduction holds no reduction but reads one computed outside it: its group lost a member}}
  %y = kiln.fused_kernel reduction (%x, %m) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32> {
  ^bb0(%x0: tensor<4x8xf32>, %m0: tensor<4xf32>):
    %e = tensor.empty() : tensor<4x8xf32>
    %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x0, %m0 : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %v = arith.subf %a, %b : f32
      %w = math.exp %v : f32
      linalg.yield %w : f32
    } -> tensor<4x8xf32>
    kiln.yield %s : tensor<4x8xf32>
  }
  return %y : tensor<4x8xf32>
}

// -----

// A matmul epilogue whose matmul was moved out of its kernel, its result
// read directly from the body.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @lost_matmul(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-note @+1 {{computed here}}
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @+1 {{'kiln.fused_kernel' op of kind matmul_epilogue holds no contraction but reads one computed outside it: its group lost a member}}
  %y = kiln.fused_kernel matmul_epilogue () : () -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%m : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%v: f32, %out: f32):
      %z = arith.constant 0.0 : f32
      %w = arith.maximumf %v, %z : f32
      linalg.yield %w : f32
    } -> tensor<4x4xf32>
    kiln.yield %r : tensor<4x4xf32>
  }
  return %y : tensor<4x4xf32>
}

// -----

// An elementwise kernel that took in a reduction of another group.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @foreign_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fused_kernel' op of kind elementwise holds a reduction: an op of another group was moved into it}}
  %y = kiln.fused_kernel elementwise (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4x8xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x0 : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %v = arith.addf %a, %acc : f32
      linalg.yield %v : f32
    } -> tensor<4xf32>
    kiln.yield %s : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// A reduction kernel whose reduction was dead and erased (a loop body's
// copy of a group whose reduction only fed the loop's condition) reads no
// reduction from outside: it is inlined like any other kernel.
// CHECK-LABEL: func.func @dead_reduction(
// CHECK-NOT:     kiln.fused_kernel
// CHECK:         %[[R:.+]] = linalg.generic
// CHECK:         return %[[R]]
#map = affine_map<(d0) -> (d0)>
func.func @dead_reduction(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = kiln.fused_kernel reduction (%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x0: tensor<8xf32>):
    %e = tensor.empty() : tensor<8xf32>
    %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%x0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%a: f32, %out: f32):
      %v = math.cos %a : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    kiln.yield %r : tensor<8xf32>
  }
  return %y : tensor<8xf32>
}

// -----

// A generic reduction of a product (the sum over rows of dy * x, as the
// gradient of a broadcast computes it) is a reduction, not a matmul, even
// though its body is a multiply-add.
// CHECK-LABEL: func.func @reduction_of_a_product(
// CHECK-NOT:     kiln.fused_kernel
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @reduction_of_a_product(%dy: tensor<3x4xf64>, %x: tensor<3x4xf64>) -> tensor<4xf64> {
  %r = kiln.fused_kernel reduction (%dy, %x) : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<4xf64> {
  ^bb0(%dy0: tensor<3x4xf64>, %x0: tensor<3x4xf64>):
    %zero = arith.constant 0.0 : f64
    %e = tensor.empty() : tensor<4xf64>
    %f = linalg.fill ins(%zero : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
    %s = linalg.generic {indexing_maps = [#map2, #map2, #row], iterator_types = ["reduction", "parallel"]}
        ins(%dy0, %x0 : tensor<3x4xf64>, tensor<3x4xf64>) outs(%f : tensor<4xf64>) {
    ^bb0(%a: f64, %b: f64, %acc: f64):
      %p = arith.mulf %a, %b : f64
      %v = arith.addf %acc, %p : f64
      linalg.yield %v : f64
    } -> tensor<4xf64>
    kiln.yield %s : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}

// -----

// linalg's fusion folds a reshape of a matmul operand into the product,
// which then is a generic contraction rather than linalg.matmul: still the
// one matmul of its epilogue kernel.
// CHECK-LABEL: func.func @generic_matmul_epilogue(
// CHECK-NOT:     kiln.fused_kernel
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @generic_matmul_epilogue(%x: tensor<8x64xf32>, %w: tensor<64x128xf32>) -> tensor<8x128xf32> {
  %r = kiln.fused_kernel matmul_epilogue (%x, %w) : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32> {
  ^bb0(%x0: tensor<8x64xf32>, %w0: tensor<64x128xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x128xf32>) -> tensor<8x128xf32>
    %m = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x0, %w0 : tensor<8x64xf32>, tensor<64x128xf32>) outs(%f : tensor<8x128xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %t = arith.mulf %p, %q : f32
      %v = arith.addf %acc, %t : f32
      linalg.yield %v : f32
    } -> tensor<8x128xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%m : tensor<8x128xf32>) outs(%e : tensor<8x128xf32>) {
    ^bb0(%p: f32, %out: f32):
      %v = arith.maximumf %p, %zero : f32
      linalg.yield %v : f32
    } -> tensor<8x128xf32>
    kiln.yield %y : tensor<8x128xf32>
  }
  return %r : tensor<8x128xf32>
}

// -----

// A kernel of kind reduction whose own reduction died (a fold after the
// lowering: select(a == b, a, b) is b) and that reads the reduction of the
// kernel before it as an input. Every kernel is checked before any is
// inlined: once the first is inlined its reduction is an op outside the
// kernels, and the second must not be taken for one that lost it (seed
// 777207 of kiln-program-fuzz).
// CHECK-LABEL: func.func @dead_reduction_reads_earlier_kernel(
// CHECK-NOT:     kiln.fused_kernel
// CHECK:         %[[MAX:.+]] = linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK:         linalg.generic {{.*}} ins(%[[MAX]],
// CHECK:         return
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
#scalar = affine_map<() -> ()>
func.func @dead_reduction_reads_earlier_kernel(%x: tensor<8xf32>, %t: tensor<f32>) -> tensor<i1> {
  %r = kiln.fused_kernel reduction (%x) : (tensor<8xf32>) -> tensor<f32> {
  ^bb0(%x0: tensor<8xf32>):
    %ninf = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<f32>
    %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %m = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
        ins(%x0 : tensor<8xf32>) outs(%f : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %v = arith.maximumf %a, %acc : f32
      linalg.yield %v : f32
    } -> tensor<f32>
    kiln.yield %m : tensor<f32>
  }
  %y = kiln.fused_kernel reduction (%r, %t) : (tensor<f32>, tensor<f32>) -> tensor<i1> {
  ^bb0(%r0: tensor<f32>, %t0: tensor<f32>):
    %e = tensor.empty() : tensor<i1>
    %c = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []}
        ins(%r0, %t0 : tensor<f32>, tensor<f32>) outs(%e : tensor<i1>) {
    ^bb0(%a: f32, %b: f32, %out: i1):
      %v = arith.cmpf ogt, %a, %b : f32
      linalg.yield %v : i1
    } -> tensor<i1>
    kiln.yield %c : tensor<i1>
  }
  return %y : tensor<i1>
}
