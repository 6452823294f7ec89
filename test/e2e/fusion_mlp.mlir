// Matmul epilogues: an MLP whose layers are matmul + bias + relu (one
// matmul_epilogue region each) ending in a softmax (a reduction region), a
// residual block, a matmul read by two epilogues, and a batched matmul. The
// harness also compiles this file with fusion off and evaluates the fused
// IR.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-opt %s --kiln-fuse | FileCheck %s --check-prefix=FUSED
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// FUSED-LABEL: func.func @mlp(
// FUSED:         kiln.fused matmul_epilogue
// FUSED:           kiln.matmul
// FUSED:           kiln.add
// FUSED-NEXT:      kiln.relu
// FUSED:         kiln.fused matmul_epilogue
// FUSED:           kiln.matmul
// FUSED:           kiln.add
// FUSED:         kiln.fused reduction
// FUSED:           kiln.reduce_max
// FUSED-NOT:     kiln.fused
// FUSED:         return
// CHECK: mlp(arg0: f32[8,16], arg1: f32[16,32], arg2: f32[32], arg3: f32[32,4], arg4: f32[4]) -> (out0: f32[8,4], out1: f32[8,32])
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
               %w2: tensor<32x4xf32>, %b2: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<8x32xf32>) {
  %m1 = kiln.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>
  %bb1 = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %a1 = kiln.add %m1, %bb1 : tensor<8x32xf32>
  %h = kiln.relu %a1 : tensor<8x32xf32>
  %m2 = kiln.matmul %h, %w2 : tensor<8x32xf32>, tensor<32x4xf32>
  %bb2 = kiln.broadcast_in_dim %b2, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  %logits = kiln.add %m2, %bb2 : tensor<8x4xf32>
  %mx = kiln.reduce_max %logits, dims = [1] : tensor<8x4xf32>
  %mxb = kiln.broadcast_in_dim %mx, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  %s = kiln.sub %logits, %mxb : tensor<8x4xf32>
  %e = kiln.exp %s : tensor<8x4xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<8x4xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  %p = kiln.div %e, %zb : tensor<8x4xf32>
  return %p, %h : tensor<8x4xf32>, tensor<8x32xf32>
}

// relu(x @ w + b) + x: bias, activation and residual in one epilogue.
// FUSED-LABEL: func.func @residual_block(
// FUSED-NEXT:    kiln.fused matmul_epilogue
// FUSED-NOT:     kiln.fused
// CHECK: residual_block(arg0: f32[10,24], arg1: f32[24,24], arg2: f32[24]) -> (out0: f32[10,24])
func.func @residual_block(%x: tensor<10x24xf32>, %w: tensor<24x24xf32>, %b: tensor<24xf32>) -> tensor<10x24xf32> {
  %m = kiln.matmul %x, %w : tensor<10x24xf32>, tensor<24x24xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<24xf32>) -> tensor<10x24xf32>
  %a = kiln.add %m, %bb : tensor<10x24xf32>
  %r = kiln.relu %a : tensor<10x24xf32>
  %y = kiln.add %r, %x : tensor<10x24xf32>
  return %y : tensor<10x24xf32>
}

// One matmul, two epilogues and the raw product: computed once, three
// results.
// FUSED-LABEL: func.func @two_epilogues_f64(
// FUSED-NEXT:    kiln.fused matmul_epilogue {{.*}} -> (tensor<5x7xf64>, tensor<5x7xf64>, tensor<5x7xf64>)
// FUSED-COUNT-1:   kiln.matmul
// FUSED-NOT:     kiln.matmul
// CHECK: two_epilogues_f64(arg0: f64[5,9], arg1: f64[9,7]) -> (out0: f64[5,7], out1: f64[5,7], out2: f64[5,7])
func.func @two_epilogues_f64(%a: tensor<5x9xf64>, %b: tensor<9x7xf64>) -> (tensor<5x7xf64>, tensor<5x7xf64>, tensor<5x7xf64>) {
  %m = kiln.matmul %a, %b : tensor<5x9xf64>, tensor<9x7xf64>
  %r = kiln.relu %m : tensor<5x7xf64>
  %s = kiln.sigmoid %m : tensor<5x7xf64>
  %n = kiln.neg %m : tensor<5x7xf64>
  return %r, %s, %n : tensor<5x7xf64>, tensor<5x7xf64>, tensor<5x7xf64>
}

// Batched matmul with a per-batch scale broadcast and a tanh.
// FUSED-LABEL: func.func @batched_epilogue(
// FUSED-NEXT:    kiln.fused matmul_epilogue
// FUSED-NOT:     kiln.fused
// CHECK: batched_epilogue(arg0: f32[3,4,6], arg1: f32[3,6,5], arg2: f32[3]) -> (out0: f32[3,4,5])
func.func @batched_epilogue(%a: tensor<3x4x6xf32>, %b: tensor<3x6x5xf32>, %s: tensor<3xf32>) -> tensor<3x4x5xf32> {
  %m = kiln.matmul %a, %b : tensor<3x4x6xf32>, tensor<3x6x5xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0] : (tensor<3xf32>) -> tensor<3x4x5xf32>
  %p = kiln.mul %m, %sb : tensor<3x4x5xf32>
  %t = kiln.tanh %p : tensor<3x4x5xf32>
  return %t : tensor<3x4x5xf32>
}
