// An attention and its gradient over 65536 batch entries: more than a CUDA
// grid holds along y or z (65535), so kiln-cuda-flash-attention numbers
// the blocks of every entry along grid x, and kiln-cuda-check-launches,
// which refuses launches a device would, passes them. Run with the
// kernels on the host, each entry's output must be that entry's own: the
// values are the entry's index e in every row, so the softmax-weighted sum
// is e (up to rounding, below 0.03 for e < 65536), and a block that took
// another entry's rows, or an entry no block took, is off by 1 or more.
// The gradient's dv sums the weights' columns times dO = 1: over the
// queries that see key j, its entries sum to the 3 queries of the entry.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda-on-cpu -o %t.kmod
// RUN: kiln-run %t.kmod --input 0.75 2>&1 | FileCheck %s
// RUN: kiln-compile %s --target=cuda --emit=mlir --mlir-print-ir-before=kiln-cuda-check-launches -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GRID
// CHECK: out0: i1[] = true
// CHECK: out1: i1[] = true
// The forward, dq and dk/dv kernels: a block per entry, along x.
// GRID-COUNT-3: gpu.launch blocks({{.*}}) in (%{{.*}} = %c65536{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c32{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) workgroup
func.func @many_heads(%x: tensor<f32>) -> (tensor<i1>, tensor<i1>) {
  %xq = kiln.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<2x32768x3x4xf32>
  %xk = kiln.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<2x32768x2x4xf32>
  %h = kiln.iota dim = 1 : tensor<2x32768x3x4xf32>
  %i = kiln.iota dim = 2 : tensor<2x32768x3x4xf32>
  %d = kiln.iota dim = 3 : tensor<2x32768x3x4xf32>
  %hi = kiln.add %h, %i : tensor<2x32768x3x4xf32>
  %hid = kiln.mul %hi, %d : tensor<2x32768x3x4xf32>
  %qa = kiln.mul %hid, %xq : tensor<2x32768x3x4xf32>
  %q = kiln.sin %qa : tensor<2x32768x3x4xf32>
  %hk = kiln.iota dim = 1 : tensor<2x32768x2x4xf32>
  %jk = kiln.iota dim = 2 : tensor<2x32768x2x4xf32>
  %dk = kiln.iota dim = 3 : tensor<2x32768x2x4xf32>
  %hj = kiln.sub %hk, %jk : tensor<2x32768x2x4xf32>
  %hjd = kiln.add %hj, %dk : tensor<2x32768x2x4xf32>
  %ka = kiln.mul %hjd, %xk : tensor<2x32768x2x4xf32>
  %k = kiln.cos %ka : tensor<2x32768x2x4xf32>
  // v = the entry's index 32768 b + h.
  %bk = kiln.iota dim = 0 : tensor<2x32768x2x4xf32>
  %stride = kiln.constant dense<32768.0> : tensor<2x32768x2x4xf32>
  %bs = kiln.mul %bk, %stride : tensor<2x32768x2x4xf32>
  %v = kiln.add %bs, %hk : tensor<2x32768x2x4xf32>
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.5 : f64} : tensor<2x32768x3x4xf32>, tensor<2x32768x2x4xf32>, tensor<2x32768x2x4xf32>
  %bq = kiln.iota dim = 0 : tensor<2x32768x3x4xf32>
  %strideq = kiln.constant dense<32768.0> : tensor<2x32768x3x4xf32>
  %bqs = kiln.mul %bq, %strideq : tensor<2x32768x3x4xf32>
  %entry = kiln.add %bqs, %h : tensor<2x32768x3x4xf32>
  %diff = kiln.sub %o, %entry : tensor<2x32768x3x4xf32>
  %adiff = kiln.abs %diff : tensor<2x32768x3x4xf32>
  %err = kiln.reduce_max %adiff, dims = [0, 1, 2, 3] : tensor<2x32768x3x4xf32>
  %tol = kiln.constant dense<0.25> : tensor<f32>
  %near = kiln.compare lt, %err, %tol : tensor<f32>
  %ones = kiln.constant dense<1.0> : tensor<2x32768x3x4xf32>
  %dq, %dkey, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %ones {causal, scale = 0.5 : f64} : tensor<2x32768x3x4xf32>, tensor<2x32768x2x4xf32>, tensor<2x32768x2x4xf32>, tensor<2x32768x3x4xf32>, tensor<2x32768x3xf32>
  %colsum = kiln.reduce_sum %dv, dims = [2] : tensor<2x32768x2x4xf32>
  %three = kiln.constant dense<3.0> : tensor<2x32768x4xf32>
  %off = kiln.sub %colsum, %three : tensor<2x32768x4xf32>
  %aoff = kiln.abs %off : tensor<2x32768x4xf32>
  %gerr = kiln.reduce_max %aoff, dims = [0, 1, 2] : tensor<2x32768x4xf32>
  %gtol = kiln.constant dense<1.0e-4> : tensor<f32>
  %gnear = kiln.compare lt, %gerr, %gtol : tensor<f32>
  return %near, %gnear : tensor<i1>, tensor<i1>
}
