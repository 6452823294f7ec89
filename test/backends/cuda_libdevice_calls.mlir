// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(kiln-cuda-libdevice-calls))' | FileCheck %s

// The math ops convert-gpu-to-nvvm skips become calls of libdevice, one
// declaration per function and type (f suffix for f32); the others (erf,
// tan, atan, floor, ...) are left to convert-gpu-to-nvvm.
// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: llvm.func @__nv_asinf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_asin(f64) -> f64
// CHECK-DAG: llvm.func @__nv_acosf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_sinhf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_coshf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_asinhf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_acoshf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_atanh(f64) -> f64
// CHECK-LABEL: gpu.func @k
// CHECK: %[[A:.+]] = llvm.call @__nv_asinf(%{{.+}}) : (f32) -> f32
// CHECK: %[[B:.+]] = llvm.call @__nv_asinf(%[[A]]) : (f32) -> f32
// CHECK: llvm.call @__nv_acosf(%[[B]])
// CHECK: llvm.call @__nv_sinhf
// CHECK: llvm.call @__nv_coshf
// CHECK: llvm.call @__nv_asinhf
// CHECK: llvm.call @__nv_acoshf
// CHECK: math.erf
// CHECK: math.tan
// CHECK: llvm.call @__nv_asin(%{{.+}}) : (f64) -> f64
// CHECK: llvm.call @__nv_atanh(%{{.+}}) : (f64) -> f64
// CHECK-NOT: math.asin
// CHECK-NOT: math.atanh
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: f32, %y: f64, %out: memref<2xf32>, %out64: memref<2xf64>) kernel {
      %a = math.asin %x : f32
      %b = math.asin %a : f32
      %c = math.acos %b : f32
      %d = math.sinh %c : f32
      %e = math.cosh %d : f32
      %f = math.asinh %e : f32
      %g = math.acosh %f : f32
      %h = math.erf %g : f32
      %t = math.tan %h : f32
      %i = math.asin %y : f64
      %j = math.atanh %i : f64
      %c0 = arith.constant 0 : index
      memref.store %t, %out[%c0] : memref<2xf32>
      memref.store %j, %out64[%c0] : memref<2xf64>
      gpu.return
    }
  }
}
