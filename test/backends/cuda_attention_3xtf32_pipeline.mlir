// kiln-compile --cuda-attention-3xtf32 runs f32 attention and its
// gradient of head dims up to 64 on tensor cores in 3xTF32 products from
// sm_80 on: three TF32 mma.m16n8k8 per product in the PTX. On sm_90 the
// gradient is one kernel over keys that adds dq with atomics, its split
// tiles, keys and ds in 96 KiB of dynamic shared memory, declared as
// CUDA's extern array, between the kernel that zeroes dq and the one that
// scales it. On sm_80 it is two kernels (over keys, over queries) after
// those of the rowsum, the key kernel's tiles staged split in 64 KiB of
// dynamic shared memory (two such blocks fit a multiprocessor); on sm_86
// the key kernel keeps its 32 KiB of f32 words, static. Without the
// option and on sm_75 (no TF32 products) the f32 kernels stay, without
// tensor-core products.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --cuda-attention-3xtf32 --emit=ptx -o - | FileCheck %s --check-prefix=SM90
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_80 --cuda-attention-3xtf32 --emit=ptx -o - | FileCheck %s --check-prefix=SM80
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_86 --cuda-attention-3xtf32 --emit=ptx -o - | FileCheck %s --check-prefix=SM86
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_75 --cuda-attention-3xtf32 --emit=ptx -o - | FileCheck %s --check-prefix=OFF
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o - | FileCheck %s --check-prefix=OFF

// SM90: .extern .shared .align 16 .b8 [[DYNAMIC90:.*]][];
// SM90-LABEL: .entry kiln_impl_forward_kernel(
// SM90-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM90-LABEL: .entry kiln_impl_gradient_kernel_1(
// SM90-NOT:   mma.sync
// SM90-LABEL: .entry kiln_impl_gradient_kernel_2(
// SM90: mov.u64 %rd{{[0-9]+}}, [[DYNAMIC90]];
// SM90-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM90: atom.global.add.f32
// SM90-LABEL: .entry kiln_impl_gradient_kernel_3(
// SM90-NOT:   mma.sync
// SM80: .extern .shared .align 16 .b8 [[DYNAMIC:.*]][];
// SM86-NOT: .extern .shared
// SM86: .shared .align 4 .b8 __wg_kiln_impl_gradient_kernel_1_0[8192];
// SM86-NOT: .extern .shared
// SM86: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM80-LABEL: .entry kiln_impl_forward_kernel(
// SM80-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM80-LABEL: .entry kiln_impl_gradient_kernel(
// SM80-NOT:   mma.sync
// SM80-LABEL: .entry kiln_impl_gradient_kernel_1(
// SM80: mov.u64 %rd{{[0-9]+}}, [[DYNAMIC]];
// SM80-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM80-NOT:   atom.global.add
// SM80-LABEL: .entry kiln_impl_gradient_kernel_2(
// SM80-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// OFF-NOT:    mma.sync

func.func @forward(%q: tensor<2x4x100x64xf32>, %k: tensor<2x4x100x64xf32>, %v: tensor<2x4x100x64xf32>) -> (tensor<2x4x100x64xf32>, tensor<2x4x100xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 1.250000e-01 : f64} : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>
  return %o, %lse : tensor<2x4x100x64xf32>, tensor<2x4x100xf32>
}

func.func @gradient(%q: tensor<2x4x100x64xf32>, %k: tensor<2x4x100x64xf32>, %v: tensor<2x4x100x64xf32>, %o: tensor<2x4x100x64xf32>, %lse: tensor<2x4x100xf32>, %do: tensor<2x4x100x64xf32>) -> (tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {causal, scale = 1.250000e-01 : f64} : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100xf32>
  return %dq, %dk, %dv : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>
}
