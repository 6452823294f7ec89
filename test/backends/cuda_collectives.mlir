// The CUDA backend compiles collectives into the same calls of the
// runtime's communicator as the CPU backend (kiln-collective-calls), on
// device buffers: the function's inputs and managed memory from the
// runtime's pool. Kernels and collectives are queued one after another
// without waiting for the stream (no mgpuStreamSynchronize): the runtime's
// device communicator queues each exchange on the module's stream (NCCL),
// after the kernel that produced its operand and before the one that reads
// its result. The PTX assembles with ptxas where the toolkit is installed.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --emit=mlir | FileCheck %s
// RUN: kiln-compile %s --target=cuda --emit=mlir | FileCheck %s --check-prefix=SLOTS
// RUN: kiln-compile %s --target=cuda -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST
// RUN: %if ptxas %{ kiln-compile %s --target=cuda --emit=ptx -o %t.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.ptx -o %t.cubin %}

// The helpers call through the slots the runtime fills at load.
// SLOTS-DAG: llvm.mlir.global external @kiln_comm_fn_start()
// SLOTS-DAG: llvm.mlir.global external @kiln_comm_fn_wait()

// CHECK-LABEL: llvm.func internal @kiln_impl_step(
// CHECK:         gpu.launch_func {{.*}}@kiln_impl_step_kernel blocks
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         llvm.call @mgpuMemAlloc
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         %[[SUM:.*]] = llvm.call @kiln_impl_kiln_comm_start(
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         llvm.call @kiln_impl_kiln_comm_wait(%[[SUM]],
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         gpu.launch_func {{.*}}@kiln_impl_step_kernel_0 blocks
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         %[[GATHER:.*]] = llvm.call @kiln_impl_kiln_comm_start_0(
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         llvm.call @kiln_impl_kiln_comm_wait_0(%[[GATHER]],
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         llvm.return

// LIST: step(arg0: f32[16]) -> (out0: f32[16], out1: f32[32])

func.func @step(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<32xf32>) {
  %e = kiln.tanh %x : tensor<16xf32>
  %s = kiln.all_reduce %e, kind = sum, groups = [[0, 1]] : tensor<16xf32>
  %t = kiln.exp %s : tensor<16xf32>
  %g = kiln.all_gather %t, dim = 0, groups = [[1, 0]] : (tensor<16xf32>) -> tensor<32xf32>
  return %t, %g : tensor<16xf32>, tensor<32xf32>
}
