// An f32 attention compiled for CUDA runs as the FlashAttention kernel
// (kiln-cuda-outline-attention, kiln-cuda-flash-attention): the device
// memory plan holds its result and nothing of N x N size (the
// composition's scores are 8 x 1024 x 1024 f32, 32 MiB; before the kernel
// the plan held 37,814,272 bytes), the written-out form is recognized
// and takes the same kernel, its gradient takes the gradient's kernels, a
// bf16 attention's kernel stages its tiles with 16-byte reads, and the PTX
// assembles for sm_80 and sm_90. (The bf16 attention is kiln's kernel
// alone with --no-cuda-cudnn-attention; by default it is a tuned call site
// of that kernel and cuDNN's, cuda_cudnn_attention_pipeline.mlir, whose
// plan holds the lse cuDNN writes.)
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --no-cuda-cudnn-attention --memory-report -o %t.kmod 2>&1 | FileCheck %s
// RUN: kiln-compile %s --target=cuda --memory-report -o %t.kmod 2>&1 | FileCheck %s --check-prefix=TUNED
// TUNED: device memory plan for @kiln_impl_half: 1 intermediates of 4096 bytes in total
// CHECK: device memory plan for @kiln_impl_att_grad: 3 intermediates of 2162688 bytes in total
// CHECK: device memory plan for @kiln_impl_att: 1 intermediates of 2097152 bytes in total
// CHECK: device memory plan for @kiln_impl_half: 0 intermediates of 0 bytes in total
// CHECK: device memory plan for @kiln_impl_written_out: 1 intermediates of 2097152 bytes in total
// Head dims 64 take the register-tiled kernels: the forward synchronizes
// four times per key tile (tiles staged, keys read, weights written, tile
// used), the block reduction of rowsum(dO * O) three times, then a kernel
// zeroes dq without synchronizing and the gradient's one kernel
// synchronizes ten times per query tile (one buffer holds in turn the
// transposed tile, then the weights, their gradients and those
// transposed) and adds its share of dq with atomics. With
// --cuda-deterministic, the gradient's dq kernel synchronizes six times
// and its dk and dv kernel eight, and nothing is atomic. The gradient's
// register-tiled kernels ask ptxas for two blocks of 256 threads per SM
// (.minnctapersm 2: at most 128 registers a thread); the forward asks for
// nothing. (--no-cuda-attention-tuning: the f32 kernels alone, without
// the 3xTF32 variants of a tuned call site, cuda_attention_3xtf32_pipeline.mlir.)
// RUN: kiln-compile %s --target=cuda --no-cuda-attention-tuning --no-cuda-cudnn-attention --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// PTX-LABEL: .entry kiln_impl_att_grad_kernel(
// PTX-COUNT-4: bar.sync
// PTX-LABEL: .entry kiln_impl_att_grad_kernel_1(
// PTX-COUNT-3: bar.sync
// PTX-LABEL: .entry kiln_impl_att_grad_kernel_2(
// PTX-NOT: bar.sync
// PTX: st.global.{{[fu]}}32
// PTX-LABEL: .entry kiln_impl_att_grad_kernel_3(
// PTX: .maxntid 256, 1, 1
// PTX-NEXT: .minnctapersm 2
// PTX-COUNT-10: bar.sync
// PTX: atom.global.add.f32
// PTX-LABEL: .entry kiln_impl_att_kernel(
// PTX-NOT: .minnctapersm
// PTX-COUNT-4: bar.sync
// The bf16 forward's tile staging, where the keys and values start at a
// 16-byte boundary: one 16-byte read per 8 halves of a key row, two per
// thread of the values' pairs of rows, and the key words stored 16 bytes at
// a time.
// PTX-LABEL: .entry kiln_impl_half_kernel(
// PTX: ld.global.v4.{{[bu]}}32
// PTX: st.shared.v4.u32
// PTX-COUNT-2: ld.global.v4.{{[bu]}}32
// PTX-LABEL: .entry kiln_impl_written_out_kernel(
// PTX-COUNT-4: bar.sync
// PTX-NOT: bar.sync
// RUN: kiln-compile %s --target=cuda --cuda-deterministic --emit=ptx -o %t.det.ptx
// RUN: FileCheck %s --check-prefix=DET < %t.det.ptx
// DET-LABEL: .entry kiln_impl_att_grad_kernel_2(
// DET: .minnctapersm 2
// DET-COUNT-6: bar.sync
// DET-LABEL: .entry kiln_impl_att_grad_kernel_3(
// DET: .minnctapersm 2
// DET-COUNT-8: bar.sync
// DET-NOT: atom.
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}
// RUN: %if ptxas %{ kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o %t.sm90.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin %}

// The gradient: rowsum(dO * O) as a block reduction, then dq zeroed and
// one kernel over query tiles for dk, dv and shares of dq. The plan holds the
// forward's result and lse and the row sums: nothing of N x N size (the
// composition's plan held 182,517,760 bytes), and not the gradients, which
// the kernels write into the function's results
// (kiln-forward-call-results; they were 6 MiB more of the plan).
func.func @att_grad(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>, %do: tensor<1x8x1024x64xf32>) -> (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) {
  %r, %l = kiln.attention %q, %k, %v {causal, scale = 0.125 : f64} : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %r, %l, %do {causal, scale = 0.125 : f64} : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024xf32>
  return %dq, %dk, %dv : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>
}

func.func @att(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %r, %l = kiln.attention %q, %k, %v {causal, scale = 0.125 : f64} : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>
  %t = kiln.tanh %r : tensor<1x8x1024x64xf32>
  return %t : tensor<1x8x1024x64xf32>
}

// bf16 on tensor cores.
func.func @half(%q: tensor<4x256x64xbf16>, %k: tensor<4x256x64xbf16>, %v: tensor<4x256x64xbf16>) -> tensor<4x256x64xbf16> {
  %r, %l = kiln.attention %q, %k, %v {scale = 0.125 : f64} : tensor<4x256x64xbf16>, tensor<4x256x64xbf16>, tensor<4x256x64xbf16>
  return %r : tensor<4x256x64xbf16>
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
