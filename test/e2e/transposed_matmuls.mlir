// REQUIRES: dnnl
// Products of transposes, as backward passes write them (dY * W^T,
// X^T * dY, attention's Q * K^T): on the CPU, kiln-cpu-fold-transposes-
// into-matmuls drops the transposed copies and oneDNN reads the operands in
// place: sgemm with its 'T' flag, or, for B transposed and A not, its
// matmul primitive (kiln_dnnl_matmul) with the transposed-B flag (below
// the size threshold, a loop nest does). Odd sizes leave remainders for the
// GEMM blocking. oneDNN sums in another order than the evaluator, hence the
// wider f32 tolerance.
//
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-opt %s --kiln-cpu-lowering | FileCheck %s --check-prefix=LOWERED

// The 'T' flag (84) reaches sgemm for A and for both, and the primitive
// gets B transposed (flag 2; the zero fill before each product dropped, so
// no accumulation) alone, for one product, a batch of three in one call
// and in the loop too; 'N' is 78.
// LOWERED-LABEL: llvm.func internal @kiln_impl_transposed_b(
// LOWERED-DAG:     %[[B:.*]] = llvm.mlir.constant(2 : i64) : i64
// LOWERED-DAG:     %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// LOWERED:         llvm.call @kiln_dnnl_matmul(%{{.*}}, %[[B]], %[[ONE]],
// LOWERED-LABEL: llvm.func internal @kiln_impl_transposed_a(
// LOWERED-DAG:     %[[T:.*]] = llvm.mlir.constant(84 : i32) : i32
// LOWERED-DAG:     %[[N:.*]] = llvm.mlir.constant(78 : i32) : i32
// LOWERED:         llvm.call @dnnl_sgemm(%[[T]], %[[N]],
// LOWERED:         llvm.call @dnnl_sgemm(%[[N]], %[[N]],
// LOWERED-LABEL: llvm.func internal @kiln_impl_transposed_both(
// LOWERED:         %[[T:.*]] = llvm.mlir.constant(84 : i32) : i32
// LOWERED:         llvm.call @dnnl_sgemm(%[[T]], %[[T]],
// LOWERED-LABEL: llvm.func internal @kiln_impl_attention_scores(
// LOWERED-DAG:     %[[B:.*]] = llvm.mlir.constant(2 : i64) : i64
// LOWERED-DAG:     %[[THREE:.*]] = llvm.mlir.constant(3 : i64) : i64
// LOWERED:         llvm.call @kiln_dnnl_matmul(%{{.*}}, %[[B]], %[[THREE]],
// LOWERED-LABEL: llvm.func internal @kiln_impl_rnn_backward(
// LOWERED-DAG:     %[[B:.*]] = llvm.mlir.constant(2 : i64) : i64
// LOWERED-DAG:     %[[T:.*]] = llvm.mlir.constant(84 : i32) : i32
// LOWERED-DAG:     %[[N:.*]] = llvm.mlir.constant(78 : i32) : i32
// LOWERED:         llvm.call @kiln_dnnl_matmul(%{{.*}}, %[[B]],
// LOWERED:         llvm.call @dnnl_sgemm(%[[T]], %[[N]],

// dY * W^T.
// CHECK: transposed_b(arg0: f32[67,129], arg1: f32[33,129]) -> (out0: f32[67,33])
func.func @transposed_b(%dy: tensor<67x129xf32>, %w: tensor<33x129xf32>) -> tensor<67x33xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<33x129xf32>
  %p = kiln.matmul %dy, %wt : tensor<67x129xf32>, tensor<129x33xf32>
  return %p : tensor<67x33xf32>
}

// X^T * dY, where X is also used untransposed (the forward activation).
// CHECK: transposed_a(arg0: f32[97,45], arg1: f32[97,71], arg2: f32[45,30]) -> (out0: f32[45,71], out1: f32[97,30])
func.func @transposed_a(%x: tensor<97x45xf32>, %dy: tensor<97x71xf32>, %w: tensor<45x30xf32>)
    -> (tensor<45x71xf32>, tensor<97x30xf32>)
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<97x45xf32>
  %g = kiln.matmul %xt, %dy : tensor<45x97xf32>, tensor<97x71xf32>
  %y = kiln.matmul %x, %w : tensor<97x45xf32>, tensor<45x30xf32>
  return %g, %y : tensor<45x71xf32>, tensor<97x30xf32>
}

// (A^T)(B^T), with an activation computed before the transpose.
// CHECK: transposed_both(arg0: f32[51,83], arg1: f32[39,51]) -> (out0: f32[83,39])
func.func @transposed_both(%a: tensor<51x83xf32>, %b: tensor<39x51xf32>) -> tensor<83x39xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %ta = kiln.tanh %a : tensor<51x83xf32>
  %at = kiln.transpose %ta, permutation = [1, 0] : tensor<51x83xf32>
  %bt = kiln.transpose %b, permutation = [1, 0] : tensor<39x51xf32>
  %p = kiln.matmul %at, %bt : tensor<83x51xf32>, tensor<51x39xf32>
  return %p : tensor<83x39xf32>
}

// Attention scores Q * K^T over a batch of heads, then a product with V,
// and an epilogue (scale, bias, relu) after the transposed product.
// CHECK: attention_scores(arg0: f32[3,37,24], arg1: f32[3,41,24], arg2: f32[3,41,19], arg3: f32[41]) -> (out0: f32[3,37,19])
func.func @attention_scores(%q: tensor<3x37x24xf32>, %k: tensor<3x41x24xf32>,
                            %v: tensor<3x41x19xf32>, %bias: tensor<41xf32>) -> tensor<3x37x19xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %kt = kiln.transpose %k, permutation = [0, 2, 1] : tensor<3x41x24xf32>
  %s = kiln.matmul %q, %kt : tensor<3x37x24xf32>, tensor<3x24x41xf32>
  %c = kiln.constant dense<0.2> : tensor<3x37x41xf32>
  %sc = kiln.mul %s, %c : tensor<3x37x41xf32>
  %bb = kiln.broadcast_in_dim %bias, dims = [2] : (tensor<41xf32>) -> tensor<3x37x41xf32>
  %sb = kiln.add %sc, %bb : tensor<3x37x41xf32>
  %r = kiln.relu %sb : tensor<3x37x41xf32>
  %o = kiln.matmul %r, %v : tensor<3x37x41xf32>, tensor<3x41x19xf32>
  return %o : tensor<3x37x19xf32>
}

// The transposed operand is rewritten after the transpose (an SGD update
// of the weight read through W^T): the product must see the old values.
// CHECK: transpose_then_update(arg0: f32[64,48], arg1: f32[40,48]) -> (out0: f32[40,64], out1: f32[64,48])
func.func @transpose_then_update(%w: tensor<64x48xf32>, %x: tensor<40x48xf32>)
    -> (tensor<40x64xf32>, tensor<64x48xf32>)
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<64x48xf32>
  %lr = kiln.constant dense<0.1> : tensor<64x48xf32>
  %step = kiln.mul %w, %lr : tensor<64x48xf32>
  %w2 = kiln.sub %w, %step : tensor<64x48xf32>
  %p = kiln.matmul %x, %wt : tensor<40x48xf32>, tensor<48x64xf32>
  return %p, %w2 : tensor<40x64xf32>, tensor<64x48xf32>
}

// Too small for oneDNN: the loop nest reads the transposed operand in
// place.
// CHECK: small_transposed(arg0: f32[5,7], arg1: f32[5,3]) -> (out0: f32[7,3])
func.func @small_transposed(%a: tensor<5x7xf32>, %b: tensor<5x3xf32>) -> tensor<7x3xf32> {
  %at = kiln.transpose %a, permutation = [1, 0] : tensor<5x7xf32>
  %p = kiln.matmul %at, %b : tensor<7x5xf32>, tensor<5x3xf32>
  return %p : tensor<7x3xf32>
}

// The backward step of a tanh RNN cell inside kiln.for: per iteration,
// dH * Wh^T and the accumulated H^T * dH.
// CHECK: rnn_backward(arg0: f32[6,32,40], arg1: f32[40,40], arg2: f32[32,40]) -> (out0: f32[32,40], out1: f32[40,40])
func.func @rnn_backward(%hs: tensor<6x32x40xf32>, %wh: tensor<40x40xf32>, %dh0: tensor<32x40xf32>)
    -> (tensor<32x40xf32>, tensor<40x40xf32>)
    attributes {kiln.e2e_atol = 5.0e-4 : f64} {
  %zero = kiln.constant dense<0.0> : tensor<40x40xf32>
  // Scaled so that dH does not grow over the steps (an unscaled random Wh
  // amplifies it, and with it the cancellation in every sum).
  %scale = kiln.constant dense<0.1> : tensor<40x40xf32>
  %whs = kiln.mul %wh, %scale : tensor<40x40xf32>
  %r:4 = kiln.for 6 iterations (%dh0, %zero, %hs, %whs)
      : (tensor<32x40xf32>, tensor<40x40xf32>, tensor<6x32x40xf32>, tensor<40x40xf32>) {
  ^bb0(%i: tensor<i64>, %dh: tensor<32x40xf32>, %dw: tensor<40x40xf32>,
       %hs_in: tensor<6x32x40xf32>, %w_in: tensor<40x40xf32>):
    %s = kiln.dynamic_slice %hs_in[%i], size = 1 : tensor<6x32x40xf32>
    %h = kiln.reshape %s : (tensor<1x32x40xf32>) -> tensor<32x40xf32>
    %one = kiln.constant dense<1.0> : tensor<32x40xf32>
    %h2 = kiln.mul %h, %h : tensor<32x40xf32>
    %d = kiln.sub %one, %h2 : tensor<32x40xf32>
    %g = kiln.mul %dh, %d : tensor<32x40xf32>
    %wt = kiln.transpose %w_in, permutation = [1, 0] : tensor<40x40xf32>
    %dhn = kiln.matmul %g, %wt : tensor<32x40xf32>, tensor<40x40xf32>
    %ht = kiln.transpose %h, permutation = [1, 0] : tensor<32x40xf32>
    %dwi = kiln.matmul %ht, %g : tensor<40x32xf32>, tensor<32x40xf32>
    %dwn = kiln.add %dw, %dwi : tensor<40x40xf32>
    kiln.yield %dhn, %dwn, %hs_in, %w_in : tensor<32x40xf32>, tensor<40x40xf32>, tensor<6x32x40xf32>, tensor<40x40xf32>
  }
  return %r#0, %r#1 : tensor<32x40xf32>, tensor<40x40xf32>
}

// Results read transposed: the weight gradient of a dense layer whose
// weight is stored [out, in] (PyTorch's and ONNX Gemm's transB layout),
// (X^T dY)^T, and a batch of products transposed per matrix, which the
// products write transposed themselves (kiln-fold-transposes-into-
// matmuls); a transpose that moves the batch, and one of a product also
// returned as it is, keep their copies.
// CHECK: transposed_results(arg0: f32[61,47], arg1: f32[61,29], arg2: f32[3,9,14], arg3: f32[3,14,11]) -> (out0: f32[29,47], out1: f32[3,11,9], out2: f32[9,3,11], out3: f32[3,9,11], out4: f32[3,11,9])
func.func @transposed_results(%x: tensor<61x47xf32>, %dy: tensor<61x29xf32>,
                              %a: tensor<3x9x14xf32>, %b: tensor<3x14x11xf32>)
    -> (tensor<29x47xf32>, tensor<3x11x9xf32>, tensor<9x3x11xf32>, tensor<3x9x11xf32>, tensor<3x11x9xf32>)
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<61x47xf32>
  %g = kiln.matmul %xt, %dy : tensor<47x61xf32>, tensor<61x29xf32>
  %gt = kiln.transpose %g, permutation = [1, 0] : tensor<47x29xf32>
  %p = kiln.matmul %a, %b : tensor<3x9x14xf32>, tensor<3x14x11xf32>
  %pt = kiln.transpose %p, permutation = [0, 2, 1] : tensor<3x9x11xf32>
  %an = kiln.neg %a : tensor<3x9x14xf32>
  %q = kiln.matmul %an, %b : tensor<3x9x14xf32>, tensor<3x14x11xf32>
  %qt = kiln.transpose %q, permutation = [1, 0, 2] : tensor<3x9x11xf32>
  %bn = kiln.neg %b : tensor<3x14x11xf32>
  %r = kiln.matmul %a, %bn : tensor<3x9x14xf32>, tensor<3x14x11xf32>
  %rt = kiln.transpose %r, permutation = [0, 2, 1] : tensor<3x9x11xf32>
  return %gt, %pt, %qt, %r, %rt : tensor<29x47xf32>, tensor<3x11x9xf32>, tensor<9x3x11xf32>, tensor<3x9x11xf32>, tensor<3x11x9xf32>
}
