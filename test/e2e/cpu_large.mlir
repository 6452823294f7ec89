// REQUIRES: dnnl, openmp
// Shapes large enough for the CPU backend's fast paths: loop nests of at
// least 65536 iterations run on OpenMP threads, f32 transcendentals become
// vectorized polynomials, and f32 matmuls of at least 16384 multiply-adds
// call oneDNN (with and without an epilogue, batched, from a transposed
// operand). Odd sizes leave remainders for the vector loops, the thread
// split and the GEMM blocking. oneDNN sums in another order than the
// evaluator, so the matmul functions widen the absolute f32 tolerance.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-compile %s --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: kiln-compile %s --memory-report -o %t.kmod 2>&1 | FileCheck %s --check-prefix=MEMORY

// LLVM-DAG: call {{.*}}@__kmpc_fork_call
// LLVM-DAG: call {{.*}}@dnnl_sgemm
// LLVM-DAG: <8 x float>

// CHECK: relu_chain(arg0: f32[100003], arg1: f32[100003], arg2: f32[100003], arg3: f32[100003]) -> (out0: f32[100003])
func.func @relu_chain(%x: tensor<100003xf32>, %a: tensor<100003xf32>, %b: tensor<100003xf32>,
                      %c: tensor<100003xf32>) -> tensor<100003xf32> {
  %xa = kiln.mul %x, %a : tensor<100003xf32>
  %u = kiln.add %xa, %b : tensor<100003xf32>
  %r = kiln.relu %u : tensor<100003xf32>
  %y = kiln.add %r, %c : tensor<100003xf32>
  return %y : tensor<100003xf32>
}

// gelu(x * a + b) * c with the tanh approximation, over a matrix.
// CHECK: gelu_chain(arg0: f32[263,311], arg1: f32[263,311], arg2: f32[263,311]) -> (out0: f32[263,311])
func.func @gelu_chain(%x: tensor<263x311xf32>, %b: tensor<263x311xf32>,
                      %c: tensor<263x311xf32>) -> tensor<263x311xf32> {
  %half = kiln.constant dense<0.5> : tensor<263x311xf32>
  %one = kiln.constant dense<1.0> : tensor<263x311xf32>
  %k0 = kiln.constant dense<0.797884583> : tensor<263x311xf32>
  %k1 = kiln.constant dense<0.044715> : tensor<263x311xf32>
  %u = kiln.add %x, %b : tensor<263x311xf32>
  %u2 = kiln.mul %u, %u : tensor<263x311xf32>
  %u3 = kiln.mul %u2, %u : tensor<263x311xf32>
  %t0 = kiln.mul %u3, %k1 : tensor<263x311xf32>
  %t1 = kiln.add %u, %t0 : tensor<263x311xf32>
  %t2 = kiln.mul %t1, %k0 : tensor<263x311xf32>
  %t3 = kiln.tanh %t2 : tensor<263x311xf32>
  %t4 = kiln.add %t3, %one : tensor<263x311xf32>
  %t5 = kiln.mul %u, %half : tensor<263x311xf32>
  %g = kiln.mul %t5, %t4 : tensor<263x311xf32>
  %y = kiln.mul %g, %c : tensor<263x311xf32>
  return %y : tensor<263x311xf32>
}

// The transcendentals (sin and cos stay libm calls), each its own output so that no error
// hides behind another.
// CHECK: transcendentals(arg0: f32[65537]) -> (out0: f32[65537], out1: f32[65537], out2: f32[65537], out3: f32[65537], out4: f32[65537], out5: f32[65537])
func.func @transcendentals(%x: tensor<65537xf32>)
    -> (tensor<65537xf32>, tensor<65537xf32>, tensor<65537xf32>, tensor<65537xf32>,
        tensor<65537xf32>, tensor<65537xf32>) {
  %one = kiln.constant dense<1.0> : tensor<65537xf32>
  %e = kiln.exp %x : tensor<65537xf32>
  %ax = kiln.abs %x : tensor<65537xf32>
  %ax1 = kiln.add %ax, %one : tensor<65537xf32>
  %l = kiln.log %ax1 : tensor<65537xf32>
  %t = kiln.tanh %x : tensor<65537xf32>
  %s = kiln.sigmoid %x : tensor<65537xf32>
  %sn = kiln.sin %x : tensor<65537xf32>
  %cs = kiln.cos %x : tensor<65537xf32>
  return %e, %l, %t, %s, %sn, %cs : tensor<65537xf32>, tensor<65537xf32>, tensor<65537xf32>,
      tensor<65537xf32>, tensor<65537xf32>, tensor<65537xf32>
}

// Softmax over the rows of a 257 x 263 matrix: the row loops run on threads,
// each row's reductions inside.
// CHECK: softmax_rows(arg0: f32[257,263]) -> (out0: f32[257,263])
func.func @softmax_rows(%x: tensor<257x263xf32>) -> tensor<257x263xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<257x263xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<257xf32>) -> tensor<257x263xf32>
  %s = kiln.sub %x, %mb : tensor<257x263xf32>
  %e = kiln.exp %s : tensor<257x263xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<257x263xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0] : (tensor<257xf32>) -> tensor<257x263xf32>
  %p = kiln.div %e, %zb : tensor<257x263xf32>
  return %p : tensor<257x263xf32>
}

// CHECK: matmul_odd(arg0: f32[67,129], arg1: f32[129,33]) -> (out0: f32[67,33])
func.func @matmul_odd(%a: tensor<67x129xf32>, %b: tensor<129x33xf32>) -> tensor<67x33xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %p = kiln.matmul %a, %b : tensor<67x129xf32>, tensor<129x33xf32>
  return %p : tensor<67x33xf32>
}

// relu(x @ w + b) + r: the product from oneDNN, the epilogue one loop nest.
// CHECK: matmul_epilogue(arg0: f32[96,80], arg1: f32[80,112], arg2: f32[112], arg3: f32[96,112]) -> (out0: f32[96,112])
func.func @matmul_epilogue(%x: tensor<96x80xf32>, %w: tensor<80x112xf32>, %b: tensor<112xf32>,
                           %r: tensor<96x112xf32>) -> tensor<96x112xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %m = kiln.matmul %x, %w : tensor<96x80xf32>, tensor<80x112xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<112xf32>) -> tensor<96x112xf32>
  %a = kiln.add %m, %bb : tensor<96x112xf32>
  %h = kiln.relu %a : tensor<96x112xf32>
  %y = kiln.add %h, %r : tensor<96x112xf32>
  return %y : tensor<96x112xf32>
}

// Batched, odd sizes, and a product whose left operand is a transpose.
// CHECK: batch_and_transpose(arg0: f32[3,33,65], arg1: f32[3,65,17], arg2: f32[129,40], arg3: f32[129,50]) -> (out0: f32[3,33,17], out1: f32[40,50])
func.func @batch_and_transpose(%a: tensor<3x33x65xf32>, %b: tensor<3x65x17xf32>,
                               %c: tensor<129x40xf32>, %d: tensor<129x50xf32>)
    -> (tensor<3x33x17xf32>, tensor<40x50xf32>)
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %ab = kiln.matmul %a, %b : tensor<3x33x65xf32>, tensor<3x65x17xf32>
  %ct = kiln.transpose %c, permutation = [1, 0] : tensor<129x40xf32>
  %ctd = kiln.matmul %ct, %d : tensor<40x129xf32>, tensor<129x50xf32>
  return %ab, %ctd : tensor<3x33x17xf32>, tensor<40x50xf32>
}

// Transposes cut the chain into loop nests with intermediates between them;
// the intermediates whose lifetimes do not overlap share an arena
// where bufferization does not already write them in place.
// CHECK: transpose_chain(arg0: f32[300,257]) -> (out0: f32[257,300])
func.func @transpose_chain(%x: tensor<300x257xf32>) -> tensor<257x300xf32> {
  %a = kiln.tanh %x : tensor<300x257xf32>
  %at = kiln.transpose %a, permutation = [1, 0] : tensor<300x257xf32>
  %b = kiln.mul %at, %at : tensor<257x300xf32>
  %bt = kiln.transpose %b, permutation = [1, 0] : tensor<257x300xf32>
  %c = kiln.add %bt, %x : tensor<300x257xf32>
  %ct = kiln.transpose %c, permutation = [1, 0] : tensor<300x257xf32>
  %d = kiln.sub %ct, %ct : tensor<257x300xf32>
  %e = kiln.exp %d : tensor<257x300xf32>
  %et = kiln.transpose %e, permutation = [1, 0] : tensor<257x300xf32>
  %f = kiln.add %et, %x : tensor<300x257xf32>
  %ft = kiln.transpose %f, permutation = [1, 0] : tensor<300x257xf32>
  %g = kiln.mul %ft, %at : tensor<257x300xf32>
  return %g : tensor<257x300xf32>
}

// Intermediates of different types and shapes: the f32 buffers share the
// arena with the f64 buffers whose lifetimes ended (kiln-cpu-plan-memory).
// MEMORY: remark: memory plan for @cast_chain: intermediates 1542000 bytes in total, 1233632 bytes after planning
// CHECK: cast_chain(arg0: f32[300,257]) -> (out0: f32[257,300])
func.func @cast_chain(%x: tensor<300x257xf32>) -> tensor<257x300xf32> {
  %a = kiln.cast %x : tensor<300x257xf32> to tensor<300x257xf64>
  %at = kiln.transpose %a, permutation = [1, 0] : tensor<300x257xf64>
  %b = kiln.tanh %at : tensor<257x300xf64>
  %bc = kiln.cast %b : tensor<257x300xf64> to tensor<257x300xf32>
  %bt = kiln.transpose %bc, permutation = [1, 0] : tensor<257x300xf32>
  %c = kiln.add %bt, %x : tensor<300x257xf32>
  %ct = kiln.transpose %c, permutation = [1, 0] : tensor<300x257xf32>
  %d = kiln.exp %ct : tensor<257x300xf32>
  return %d : tensor<257x300xf32>
}

// Products whose operands and results live in a planned arena
// (kiln-cpu-plan-memory): the oneDNN call must add each memref.view's byte
// shift (a dropped shift gave wrong MLP losses).
// CHECK: mlp_logsumexp(arg0: f32[32,64], arg1: f32[64,128], arg2: f32[128], arg3: f32[128,128], arg4: f32[128,10]) -> (out0: f32[32])
func.func @mlp_logsumexp(%x: tensor<32x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
                         %w2: tensor<128x128xf32>, %w3: tensor<128x10xf32>) -> tensor<32xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %m1 = kiln.matmul %x, %w1 : tensor<32x64xf32>, tensor<64x128xf32>
  %bb = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<128xf32>) -> tensor<32x128xf32>
  %a1 = kiln.add %m1, %bb : tensor<32x128xf32>
  %h1 = kiln.relu %a1 : tensor<32x128xf32>
  %m2 = kiln.matmul %h1, %w2 : tensor<32x128xf32>, tensor<128x128xf32>
  %h2 = kiln.relu %m2 : tensor<32x128xf32>
  %m3 = kiln.matmul %h2, %w3 : tensor<32x128xf32>, tensor<128x10xf32>
  %mx = kiln.reduce_max %m3, dims = [1] : tensor<32x10xf32>
  %mb = kiln.broadcast_in_dim %mx, dims = [0] : (tensor<32xf32>) -> tensor<32x10xf32>
  %d = kiln.sub %m3, %mb : tensor<32x10xf32>
  %e = kiln.exp %d : tensor<32x10xf32>
  %s = kiln.reduce_sum %e, dims = [1] : tensor<32x10xf32>
  %l = kiln.log %s : tensor<32xf32>
  %y = kiln.add %l, %mx : tensor<32xf32>
  return %y : tensor<32xf32>
}

// A batched product whose left operand is a reshape (expand_shape) of a
// product planned into an arena: the oneDNN call adds the view's byte shift
// under the reshape too.
// CHECK: reshaped_arena_product(arg0: f32[64,64], arg1: f32[64,64], arg2: f32[4,64,16]) -> (out0: f32[4,16,16])
func.func @reshaped_arena_product(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>,
                                  %v: tensor<4x64x16xf32>) -> tensor<4x16x16xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %p = kiln.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32>
  %e = kiln.tanh %p : tensor<64x64xf32>
  %r = kiln.reshape %e : (tensor<64x64xf32>) -> tensor<4x16x64xf32>
  %q = kiln.matmul %r, %v : tensor<4x16x64xf32>, tensor<4x64x16xf32>
  %y = kiln.tanh %q : tensor<4x16x16xf32>
  return %y : tensor<4x16x16xf32>
}

// Concatenations whose copies are rows (kiln-cpu-row-copies): rows of 24
// floats into rows of 131 (one call for all 600), rows of 64 floats (256
// bytes, three blocks of rows, the last one short), rows of 3 floats (12
// bytes: those stay a loop), a slice whose leading dims are not dense over
// one another (a loop over its first dim around the calls), and two 1-D
// parts of 40000 and 40003 floats (contiguous: chunks, then the rest).
// CHECK: concat_rows(arg0: f32[2,300,24], arg1: f32[2,300,40], arg2: f32[2,300,64], arg3: f32[2,300,3], arg4: f32[2,5,4,8], arg5: f32[2,3,4,16], arg6: f32[40000], arg7: f32[40003]) -> (out0: f32[2,300,131], out1: f32[2,3,4,24], out2: f32[80003])
func.func @concat_rows(%a: tensor<2x300x24xf32>, %b: tensor<2x300x40xf32>, %c: tensor<2x300x64xf32>,
                       %d: tensor<2x300x3xf32>, %x: tensor<2x5x4x8xf32>, %y: tensor<2x3x4x16xf32>,
                       %u: tensor<40000xf32>, %v: tensor<40003xf32>)
    -> (tensor<2x300x131xf32>, tensor<2x3x4x24xf32>, tensor<80003xf32>) {
  %r = kiln.concat %a, %b, %c, %d dim = 2 : tensor<2x300x24xf32>, tensor<2x300x40xf32>, tensor<2x300x64xf32>, tensor<2x300x3xf32>
  %xs = kiln.slice %x, start = [0, 1, 0, 0], limit = [2, 4, 4, 8], stride = [1, 1, 1, 1] : tensor<2x5x4x8xf32>
  %s = kiln.concat %xs, %y dim = 3 : tensor<2x3x4x8xf32>, tensor<2x3x4x16xf32>
  %l = kiln.concat %u, %v dim = 0 : tensor<40000xf32>, tensor<40003xf32>
  return %r, %s, %l : tensor<2x300x131xf32>, tensor<2x3x4x24xf32>, tensor<80003xf32>
}

// Products no library call takes, as loops over rows of B and C
// (kiln-cpu-product-loop-order): i32 with odd sizes (vector remainders) and
// enough multiply-adds for the parallel loop, a batched f64 product, one
// reading A transposed, and one reading B transposed (left in its order).
// CHECK: products_as_loops(arg0: i32[67,300], arg1: i32[300,131], arg2: f64[3,37,40], arg3: f64[3,40,19], arg4: i64[40,23], arg5: i64[40,29], arg6: i64[29,40]) -> (out0: i32[67,131], out1: f64[3,37,19], out2: i64[23,29], out3: i64[23,29])
func.func @products_as_loops(%a: tensor<67x300xi32>, %b: tensor<300x131xi32>,
                             %x: tensor<3x37x40xf64>, %y: tensor<3x40x19xf64>,
                             %p: tensor<40x23xi64>, %q: tensor<40x29xi64>, %r: tensor<29x40xi64>)
    -> (tensor<67x131xi32>, tensor<3x37x19xf64>, tensor<23x29xi64>, tensor<23x29xi64>) {
  %ab = kiln.matmul %a, %b : tensor<67x300xi32>, tensor<300x131xi32>
  %xy = kiln.matmul %x, %y : tensor<3x37x40xf64>, tensor<3x40x19xf64>
  %pt = kiln.transpose %p, permutation = [1, 0] : tensor<40x23xi64>
  %pq = kiln.matmul %pt, %q : tensor<23x40xi64>, tensor<40x29xi64>
  %rt = kiln.transpose %r, permutation = [1, 0] : tensor<29x40xi64>
  %pr = kiln.matmul %pt, %rt : tensor<23x40xi64>, tensor<40x29xi64>
  return %ab, %xy, %pq, %pr : tensor<67x131xi32>, tensor<3x37x19xf64>, tensor<23x29xi64>, tensor<23x29xi64>
}
