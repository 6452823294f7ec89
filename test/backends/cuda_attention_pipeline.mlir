// An f32 attention compiled for CUDA runs as the FlashAttention kernel
// (kiln-cuda-outline-attention, kiln-cuda-flash-attention): the device
// memory plan holds its result and nothing of N x N size (the
// composition's scores are 8 x 1024 x 1024 f32, 32 MiB; before the kernel
// the plan held 37,814,272 bytes), the written-out form is recognized
// and takes the same kernel, and the PTX assembles for sm_80 and sm_90.
// RUN: kiln-compile %s --target=cuda --memory-report -o %t.kmod 2>&1 | FileCheck %s
// CHECK: device memory plan for @kiln_impl_att: 1 intermediates of 2097152 bytes in total
// CHECK: device memory plan for @kiln_impl_written_out: 1 intermediates of 2097152 bytes in total
// Each of the two kernels synchronizes twice per key tile.
// RUN: kiln-compile %s --target=cuda --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// PTX-COUNT-4: bar.sync
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}
// RUN: %if ptxas %{ kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o %t.sm90.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin %}

func.func @att(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %r, %l = kiln.attention %q, %k, %v {causal, scale = 0.125 : f64} : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>
  %t = kiln.tanh %r : tensor<1x8x1024x64xf32>
  return %t : tensor<1x8x1024x64xf32>
}

// softmax(q k^T / 8) v as ops.
func.func @written_out(%q: tensor<8x1024x64xf32>, %k: tensor<8x1024x64xf32>, %v: tensor<8x1024x64xf32>) -> tensor<8x1024x64xf32> {
  %kt = kiln.transpose %k, permutation = [0, 2, 1] : tensor<8x1024x64xf32>
  %s = kiln.matmul %q, %kt : tensor<8x1024x64xf32>, tensor<8x64x1024xf32>
  %c = kiln.constant dense<8.0> : tensor<8x1024x1024xf32>
  %d = kiln.div %s, %c : tensor<8x1024x1024xf32>
  %m = kiln.reduce_max %d, dims = [2] : tensor<8x1024x1024xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<8x1024xf32>) -> tensor<8x1024x1024xf32>
  %z = kiln.sub %d, %mb : tensor<8x1024x1024xf32>
  %e = kiln.exp %z : tensor<8x1024x1024xf32>
  %sum = kiln.reduce_sum %e, dims = [2] : tensor<8x1024x1024xf32>
  %sb = kiln.broadcast_in_dim %sum, dims = [0, 1] : (tensor<8x1024xf32>) -> tensor<8x1024x1024xf32>
  %p = kiln.div %e, %sb : tensor<8x1024x1024xf32>
  %o = kiln.matmul %p, %v : tensor<8x1024x1024xf32>, tensor<8x1024x64xf32>
  %t = kiln.tanh %o : tensor<8x1024x64xf32>
  return %t : tensor<8x1024x64xf32>
}
