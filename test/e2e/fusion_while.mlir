// Fusion inside control-flow bodies: kiln-fuse forms regions in the bodies
// of kiln.while, kiln.cond and kiln.for (recursively), never across them.
// Trip counts are decided on integers, so native code and the evaluator run
// the same iterations. The harness also compiles this file with fusion off
// and evaluates the fused IR.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-opt %s --kiln-fuse | FileCheck %s --check-prefix=FUSED
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// h <- tanh(h * w / 4 + b) * 0.9 while i < |n| + 1 (at most 9 iterations;
// the gain stays below 1): the body's elementwise chain is one region.
// FUSED-LABEL: func.func @recurrence(
// FUSED:         kiln.while
// FUSED:         } do {
// FUSED:           kiln.fused elementwise
// FUSED:             kiln.mul
// FUSED:             kiln.add
// FUSED:             kiln.tanh
// FUSED:             kiln.mul
// FUSED:             kiln.yield
// CHECK: recurrence(arg0: f32[64], arg1: f32[64], arg2: f32[64], arg3: i32[]) -> (out0: f32[64], out1: i32[])
func.func @recurrence(%h0: tensor<64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>, %n: tensor<i32>) -> (tensor<64xf32>, tensor<i32>) {
  %an = kiln.abs %n : tensor<i32>
  %one = kiln.constant dense<1> : tensor<i32>
  %limit = kiln.add %an, %one : tensor<i32>
  %zero = kiln.constant dense<0> : tensor<i32>
  %r:5 = kiln.while (%h0, %w, %b, %zero, %limit) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i32>, tensor<i32>) cond {
  ^bb0(%h: tensor<64xf32>, %ww: tensor<64xf32>, %bb: tensor<64xf32>, %i: tensor<i32>, %l: tensor<i32>):
    %lt = kiln.compare lt, %i, %l : tensor<i32>
    kiln.yield %lt : tensor<i1>
  } do {
  ^bb0(%h: tensor<64xf32>, %ww: tensor<64xf32>, %bb: tensor<64xf32>, %i: tensor<i32>, %l: tensor<i32>):
    %m = kiln.mul %h, %ww : tensor<64xf32>
    %quarter = kiln.constant dense<0.25> : tensor<64xf32>
    %ms = kiln.mul %m, %quarter : tensor<64xf32>
    %a = kiln.add %ms, %bb : tensor<64xf32>
    %t = kiln.tanh %a : tensor<64xf32>
    %damp = kiln.constant dense<0.9> : tensor<64xf32>
    %hn = kiln.mul %t, %damp : tensor<64xf32>
    %c1 = kiln.constant dense<1> : tensor<i32>
    %in = kiln.add %i, %c1 : tensor<i32>
    kiln.yield %hn, %ww, %bb, %in, %l : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<i32>, tensor<i32>
  }
  return %r#0, %r#3 : tensor<64xf32>, tensor<i32>
}

// A while body holding a softmax over the rows of the carried state (a
// reduction region) and a cond whose branches hold their own regions.
// FUSED-LABEL: func.func @softmax_iterations(
// FUSED:         kiln.while
// FUSED:         } do {
// FUSED:           kiln.fused reduction
// FUSED:             kiln.reduce_max
// FUSED:             kiln.reduce_sum
// FUSED:           kiln.cond
// FUSED:             kiln.fused elementwise
// FUSED:           } else {
// FUSED:             kiln.fused elementwise
// CHECK: softmax_iterations(arg0: f32[4,12], arg1: i32[]) -> (out0: f32[4,12])
func.func @softmax_iterations(%x0: tensor<4x12xf32>, %n: tensor<i32>) -> tensor<4x12xf32> {
  %an = kiln.abs %n : tensor<i32>
  %zero = kiln.constant dense<0> : tensor<i32>
  %r:3 = kiln.while (%x0, %zero, %an) : (tensor<4x12xf32>, tensor<i32>, tensor<i32>) cond {
  ^bb0(%x: tensor<4x12xf32>, %i: tensor<i32>, %l: tensor<i32>):
    %lt = kiln.compare le, %i, %l : tensor<i32>
    kiln.yield %lt : tensor<i1>
  } do {
  ^bb0(%x: tensor<4x12xf32>, %i: tensor<i32>, %l: tensor<i32>):
    %m = kiln.reduce_max %x, dims = [1] : tensor<4x12xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x12xf32>
    %s = kiln.sub %x, %mb : tensor<4x12xf32>
    %e = kiln.exp %s : tensor<4x12xf32>
    %z = kiln.reduce_sum %e, dims = [1] : tensor<4x12xf32>
    %zb = kiln.broadcast_in_dim %z, dims = [0] : (tensor<4xf32>) -> tensor<4x12xf32>
    %p = kiln.div %e, %zb : tensor<4x12xf32>
    %two = kiln.constant dense<2> : tensor<i32>
    %half = kiln.div %i, %two : tensor<i32>
    %back = kiln.mul %half, %two : tensor<i32>
    %even = kiln.compare eq, %back, %i : tensor<i32>
    %next = kiln.cond %even, (%p, %x) : tensor<i1>, (tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<4x12xf32> {
    ^bb0(%pp: tensor<4x12xf32>, %xx: tensor<4x12xf32>):
      %k = kiln.constant dense<3.0> : tensor<4x12xf32>
      %sc = kiln.mul %pp, %k : tensor<4x12xf32>
      %y = kiln.add %sc, %xx : tensor<4x12xf32>
      kiln.yield %y : tensor<4x12xf32>
    } else {
    ^bb0(%pp: tensor<4x12xf32>, %xx: tensor<4x12xf32>):
      %d = kiln.sub %xx, %pp : tensor<4x12xf32>
      %q = kiln.sin %d : tensor<4x12xf32>
      kiln.yield %q : tensor<4x12xf32>
    }
    %c1 = kiln.constant dense<1> : tensor<i32>
    %in = kiln.add %i, %c1 : tensor<i32>
    kiln.yield %next, %in, %l : tensor<4x12xf32>, tensor<i32>, tensor<i32>
  }
  return %r#0 : tensor<4x12xf32>
}

// A kiln.for whose body is a layer norm followed by a gelu-like activation.
// FUSED-LABEL: func.func @for_layer_norm(
// FUSED:         kiln.for
// FUSED:           kiln.fused reduction
// FUSED-COUNT-2:     kiln.reduce_mean
// FUSED:             kiln.sigmoid
// FUSED:             kiln.yield
// CHECK: for_layer_norm(arg0: f32[3,16]) -> (out0: f32[3,16])
func.func @for_layer_norm(%x0: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %r = kiln.for 4 iterations (%x0) : (tensor<3x16xf32>) {
  ^bb0(%k: tensor<i64>, %x: tensor<3x16xf32>):
    %mean = kiln.reduce_mean %x, dims = [1] : tensor<3x16xf32>
    %mb = kiln.broadcast_in_dim %mean, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
    %xc = kiln.sub %x, %mb : tensor<3x16xf32>
    %sq = kiln.mul %xc, %xc : tensor<3x16xf32>
    %var = kiln.reduce_mean %sq, dims = [1] : tensor<3x16xf32>
    %eps = kiln.constant dense<1.0e-3> : tensor<3xf32>
    %ve = kiln.add %var, %eps : tensor<3xf32>
    %rs = kiln.rsqrt %ve : tensor<3xf32>
    %rb = kiln.broadcast_in_dim %rs, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
    %n = kiln.mul %xc, %rb : tensor<3x16xf32>
    %k17 = kiln.constant dense<1.702> : tensor<3x16xf32>
    %nk = kiln.mul %n, %k17 : tensor<3x16xf32>
    %sg = kiln.sigmoid %nk : tensor<3x16xf32>
    %y = kiln.mul %n, %sg : tensor<3x16xf32>
    kiln.yield %y : tensor<3x16xf32>
  }
  return %r : tensor<3x16xf32>
}
