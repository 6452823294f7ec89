// Smoke test of the end-to-end harness: Newton's iteration for sqrt(|x| + 1).
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// CHECK: newton(arg0: f32[4]) -> (out0: f32[4])

func.func @newton(%x: tensor<4xf32>) -> tensor<4xf32> {
  %ax = kiln.abs %x : tensor<4xf32>
  %one = kiln.constant dense<1.0> : tensor<4xf32>
  %a = kiln.add %ax, %one : tensor<4xf32>
  %r:2 = kiln.while (%a, %a) : (tensor<4xf32>, tensor<4xf32>) cond {
  ^bb0(%g: tensor<4xf32>, %t: tensor<4xf32>):
    %sq = kiln.mul %g, %g : tensor<4xf32>
    %d = kiln.sub %sq, %t : tensor<4xf32>
    %ad = kiln.abs %d : tensor<4xf32>
    %m = kiln.reduce_max %ad, dims = [0] : tensor<4xf32>
    %tol = kiln.constant dense<1.0e-5> : tensor<f32>
    %c = kiln.compare gt, %m, %tol : tensor<f32>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%g: tensor<4xf32>, %t: tensor<4xf32>):
    %q = kiln.div %t, %g : tensor<4xf32>
    %s = kiln.add %g, %q : tensor<4xf32>
    %h = kiln.constant dense<0.5> : tensor<4xf32>
    %n = kiln.mul %s, %h : tensor<4xf32>
    kiln.yield %n, %t : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0 : tensor<4xf32>
}
