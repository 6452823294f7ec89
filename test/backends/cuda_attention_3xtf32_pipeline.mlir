// kiln-compile --cuda-attention-3xtf32 runs f32 attention and its
// gradient of head dims up to 64 on tensor cores in 3xTF32 products from
// sm_80 on: three TF32 mma.m16n8k8 per product in the PTX, the gradient's
// two kernels (over keys, over queries) after those of the rowsum. Without the
// option and on sm_75 (no TF32 products) the f32 kernels stay, without
// tensor-core products. The key kernel stages its tiles split in 64 KiB of
// dynamic shared memory where two such blocks fit a multiprocessor (sm_80,
// sm_90), declared as CUDA's extern array; on sm_86 it keeps its 32 KiB of
// f32 words, static.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --cuda-attention-3xtf32 --emit=ptx -o - | FileCheck %s --check-prefix=SM90
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_80 --cuda-attention-3xtf32 --emit=ptx -o - | FileCheck %s --check-prefix=SM90
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_86 --cuda-attention-3xtf32 --emit=ptx -o - | FileCheck %s --check-prefix=SM86
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_75 --cuda-attention-3xtf32 --emit=ptx -o - | FileCheck %s --check-prefix=OFF
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o - | FileCheck %s --check-prefix=OFF

// SM90: .extern .shared .align 16 .b8 [[DYNAMIC:.*]][];
// SM86-NOT: .extern .shared
// SM86: .shared .align 4 .b8 __wg_kiln_impl_gradient_kernel_1_0[8192];
// SM86-NOT: .extern .shared
// SM86: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM90-LABEL: .entry kiln_impl_forward_kernel(
// SM90-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM90-LABEL: .entry kiln_impl_gradient_kernel(
// SM90-NOT:   mma.sync
// SM90-LABEL: .entry kiln_impl_gradient_kernel_1(
// SM90: mov.u64 %rd{{[0-9]+}}, [[DYNAMIC]];
// SM90-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM90-NOT:   atom.global.add
// SM90-LABEL: .entry kiln_impl_gradient_kernel_2(
// SM90-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// OFF-NOT:    mma.sync

func.func @forward(%q: tensor<2x4x100x64xf32>, %k: tensor<2x4x100x64xf32>, %v: tensor<2x4x100x64xf32>) -> (tensor<2x4x100x64xf32>, tensor<2x4x100xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 1.250000e-01 : f64} : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>
  return %o, %lse : tensor<2x4x100x64xf32>, tensor<2x4x100xf32>
}

func.func @gradient(%q: tensor<2x4x100x64xf32>, %k: tensor<2x4x100x64xf32>, %v: tensor<2x4x100x64xf32>, %o: tensor<2x4x100x64xf32>, %lse: tensor<2x4x100xf32>, %do: tensor<2x4x100x64xf32>) -> (tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {causal, scale = 1.250000e-01 : f64} : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100xf32>
  return %dq, %dk, %dv : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>
}
