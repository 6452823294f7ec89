// Sums of a tensor and a matrix product, which the CPU backend turns into
// products accumulating into that tensor (kiln-fold-sums-into-matmuls): a
// residual added to a projection, a batched product plus a tensor, a
// weight gradient summed over the steps of a loop (the recurrence's
// backward pass: the accumulator is updated in place), and a product whose
// addend is read again afterwards (it must not be overwritten). Sizes are
// above the threshold from which the CPU backend calls oneDNN.
//
// A library accumulating into the addend rounds in another order than a
// product rounded before the sum. Each product's operand is scaled by 1/32
// (exactly) so that its terms are small next to the addend, and an element
// where the two nearly cancel stays within the harness's absolute
// tolerance.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: residual(arg0: f32[48,96], arg1: f32[96,64], arg2: f32[48,64]) -> (out0: f32[48,64])
func.func @residual(%a: tensor<48x96xf32>, %w: tensor<96x64xf32>, %x: tensor<48x64xf32>) -> tensor<48x64xf32> {
  %k = kiln.constant dense<0.03125> : tensor<48x96xf32>
  %as = kiln.mul %a, %k : tensor<48x96xf32>
  %p = kiln.matmul %as, %w : tensor<48x96xf32>, tensor<96x64xf32>
  %y = kiln.add %x, %p : tensor<48x64xf32>
  return %y : tensor<48x64xf32>
}

// CHECK: batched(arg0: f32[3,40,72], arg1: f32[3,72,56], arg2: f32[3,40,56]) -> (out0: f32[3,40,56])
func.func @batched(%a: tensor<3x40x72xf32>, %b: tensor<3x72x56xf32>, %x: tensor<3x40x56xf32>) -> tensor<3x40x56xf32> {
  %k = kiln.constant dense<0.03125> : tensor<3x40x72xf32>
  %as = kiln.mul %a, %k : tensor<3x40x72xf32>
  %p = kiln.matmul %as, %b : tensor<3x40x72xf32>, tensor<3x72x56xf32>
  %y = kiln.add %p, %x : tensor<3x40x56xf32>
  return %y : tensor<3x40x56xf32>
}

// dW = sum over 12 steps of x_t^T * dy_t, with dy_t = tanh(x_t * W) so
// that every step's product differs.
// CHECK: gradient_over_steps(arg0: f32[12,32,64], arg1: f32[64,64]) -> (out0: f32[64,64])
func.func @gradient_over_steps(%xs: tensor<12x32x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %dw0 = kiln.constant dense<0.0> : tensor<64x64xf32>
  %r:3 = kiln.for 12 iterations (%dw0, %xs, %w) : (tensor<64x64xf32>, tensor<12x32x64xf32>, tensor<64x64xf32>) {
  ^bb0(%i: tensor<i64>, %dw: tensor<64x64xf32>, %x: tensor<12x32x64xf32>, %wi: tensor<64x64xf32>):
    %s = kiln.dynamic_slice %x[%i], size = 1 : tensor<12x32x64xf32>
    %xu = kiln.reshape %s : (tensor<1x32x64xf32>) -> tensor<32x64xf32>
    %k = kiln.constant dense<0.03125> : tensor<32x64xf32>
    %xt = kiln.mul %xu, %k : tensor<32x64xf32>
    %z = kiln.matmul %xt, %wi : tensor<32x64xf32>, tensor<64x64xf32>
    %dy = kiln.tanh %z : tensor<32x64xf32>
    %xtt = kiln.transpose %xt, permutation = [1, 0] : tensor<32x64xf32>
    %g = kiln.matmul %xtt, %dy : tensor<64x32xf32>, tensor<32x64xf32>
    %dw1 = kiln.add %dw, %g : tensor<64x64xf32>
    kiln.yield %dw1, %x, %wi : tensor<64x64xf32>, tensor<12x32x64xf32>, tensor<64x64xf32>
  }
  return %r#0 : tensor<64x64xf32>
}

// The addend is read again after the sum: the product accumulates into a
// copy of it.
// CHECK: addend_read_again(arg0: f32[48,96], arg1: f32[96,64], arg2: f32[48,64]) -> (out0: f32[48,64], out1: f32[48,64])
func.func @addend_read_again(%a: tensor<48x96xf32>, %w: tensor<96x64xf32>, %x: tensor<48x64xf32>) -> (tensor<48x64xf32>, tensor<48x64xf32>) {
  %e = kiln.exp %x : tensor<48x64xf32>
  %k = kiln.constant dense<0.03125> : tensor<48x96xf32>
  %as = kiln.mul %a, %k : tensor<48x96xf32>
  %p = kiln.matmul %as, %w : tensor<48x96xf32>, tensor<96x64xf32>
  %y = kiln.add %e, %p : tensor<48x64xf32>
  %z = kiln.mul %e, %e : tensor<48x64xf32>
  return %y, %z : tensor<48x64xf32>, tensor<48x64xf32>
}
