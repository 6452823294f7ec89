// A loop nest whose trip count is known only at run time, on CUDA: the
// reverse-mode gradient of a kiln.while with a data-dependent trip count
// keeps a run-time stack (kiln.stack_reserve, stack_push, stack_read), and
// the loops over its buffers have run-time bounds. kiln-cuda-map-parallel-
// loops sizes their grids with arith.ceildivsi, which ArithToLLVM does not
// lower; the pipeline runs arith-expand-ops on the host code first
// (CudaPipeline.cpp). Before, every such gradient failed with "LLVM
// Translation failed for operation: builtin.unrealized_conversion_cast"
// (kiln-program-fuzz --cuda --grad: 19 of 140 programs).
// REQUIRES: cuda-backend
// RUN: kiln-opt %s --kiln-grad=function=main | kiln-compile - --target=cuda --emit=llvm | FileCheck %s
// RUN: kiln-opt %s --kiln-grad=function=main | kiln-compile - --target=cuda --emit=llvm | FileCheck %s --check-prefix=GRAPHS
// RUN: kiln-opt %s --kiln-grad=function=main | kiln-compile - --target=cuda -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST

// The grid of a run-time trip count: ceil(n / 256) by signed division.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_main_grad(
// CHECK:         sdiv i64
// CHECK:         call void @mgpuLaunchKernel(
// The gradient's loops: the backward loop, and the loop that fills the
// stack, inside the host loop that grows the stack (which reads its new
// capacity), each run as a CUDA graph where the runtime captures.
// GRAPHS-LABEL: define internal {{.*}}@kiln_impl_main_grad(
// GRAPHS-COUNT-2: call ptr @kiln_cuda_graph_while_begin()
// GRAPHS-NOT:   @kiln_cuda_graph_while_begin
// GRAPHS:       define void @kiln_entry_main_grad(
// LIST: main_grad(arg0: f32[4], arg1: i64[], arg2: f32[4]) -> (out0: f32[4], out1: f32[4])
func.func @main(%x: tensor<4xf32>, %n: tensor<i64>) -> tensor<4xf32> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.while(%zero, %n, %x) : (tensor<i64>, tensor<i64>, tensor<4xf32>) cond {
  ^bb0(%i: tensor<i64>, %m: tensor<i64>, %v: tensor<4xf32>):
    %c = kiln.compare lt, %i, %m : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%i: tensor<i64>, %m: tensor<i64>, %v: tensor<4xf32>):
    %s = kiln.sin %v : tensor<4xf32>
    %one = kiln.constant dense<1> : tensor<i64>
    %j = kiln.add %i, %one : tensor<i64>
    kiln.yield %j, %m, %s : tensor<i64>, tensor<i64>, tensor<4xf32>
  }
  return %r#2 : tensor<4xf32>
}
