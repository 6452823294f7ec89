// Loops of the math functions the CPU backend leaves to libm (f32 sin and
// cos, f64 transcendentals) vectorize through glibc's libmvec, 8 f32 or
// 4 f64 lanes a call, on an x86-64 host with AVX2 (here AVX-512); the
// module links libmvec and gives libm's values (cos 0 = 1, sin(pi/2) = 1,
// exp 1 = e within an ulp, log e = 1 in f64; the f64 values come from an
// input, so that nothing folds at compile time).
// REQUIRES: libmvec, avx512f
// RUN: kiln-compile %s --emit=llvm -o - | FileCheck %s
// CHECK-DAG: call <8 x float> @_ZGVdN8v_cosf(
// CHECK-DAG: call <8 x float> @_ZGVdN8v_sinf(
// CHECK-DAG: call <4 x double> @_ZGVdN4v_sin(
// CHECK-DAG: call <4 x double> @_ZGVdN4v_exp(
// CHECK-DAG: call <4 x double> @_ZGVdN4v_log(
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --input 0 --input 1.5707963267948966 --input 1 | FileCheck %s --check-prefix=VALUES
// VALUES-DAG: out0: f32[4096] = [1, 1, 1,
// VALUES-DAG: out1: f32[4096] = [0, 0, 0,
// VALUES-DAG: out2: f64[4096] = [1, 1, 1,
// VALUES-DAG: out3: f64[4096] = [2.718281828459045{{[0-9]}}, 2.718281828459045{{[0-9]}},
// VALUES-DAG: out4: f64[4096] = [1, 1, 1,
// Without AVX2 (a generic x86-64 CPU) the calls stay scalar libm.
// RUN: kiln-compile %s --target-cpu=x86-64 --emit=llvm -o - | FileCheck %s --check-prefix=GENERIC
// GENERIC-NOT: _ZGV

func.func @math(%s: tensor<f32>, %t: tensor<f64>, %u: tensor<f64>) -> (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>) {
  %x = kiln.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4096xf32>
  %y = kiln.broadcast_in_dim %t, dims = [] : (tensor<f64>) -> tensor<4096xf64>
  %c = kiln.cos %x : tensor<4096xf32>
  %n = kiln.sin %x : tensor<4096xf32>
  %a = kiln.sin %y : tensor<4096xf64>
  %one = kiln.broadcast_in_dim %u, dims = [] : (tensor<f64>) -> tensor<4096xf64>
  %e = kiln.exp %one : tensor<4096xf64>
  %l = kiln.log %e : tensor<4096xf64>
  return %c, %n, %a, %e, %l : tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>
}
