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
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --no-cuda-attention-tuning --emit=ptx -o - | FileCheck %s --check-prefix=OFF
//
// Without either option, from sm_80 on, each f32 attention is a tuned call
// site carrying both (TunedSites.h): the runtime runs the fastest, timed at
// the site's first call. The gradient, whose f32 kernel adds dq with
// atomics, has its two kernels for a variant too, and so on sm_90 has the
// 3xTF32 one. Where the sums must be deterministic,
// before sm_80, and on the CPU (where every variant runs) the host code
// calls no tuning function.
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=llvm -o - | FileCheck %s --check-prefix=TUNED90
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_80 --emit=llvm -o - | FileCheck %s --check-prefix=TUNED80
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --cuda-deterministic --emit=llvm -o - | FileCheck %s --check-prefix=UNTUNED
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_75 --emit=llvm -o - | FileCheck %s --check-prefix=UNTUNED
// RUN: kiln-compile %s --target=cuda-on-cpu --emit=llvm -o - | FileCheck %s --check-prefix=UNTUNED
// RUN: %if ptxas %{ kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o %t.tuned.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.tuned.ptx -o %t.tuned.cubin %}

// TUNED90-DAG: @[[FORWARD:kiln_tuned_site_names[_0-9]*]] = private constant [11 x i8] c"f32,3xtf32\00"
// TUNED90-DAG: @[[GRADIENT:kiln_tuned_site_names[_0-9]*]] = private constant [46 x i8] c"f32,f32-two-kernels,3xtf32,3xtf32-two-kernels\00"
// TUNED90-DAG: @kiln_gpu_fn_kiln_cuda_tune_rounds = global ptr null
// TUNED90-DAG: @kiln_gpu_fn_kiln_cuda_tune_begin = global ptr null
// TUNED90-DAG: @kiln_gpu_fn_kiln_cuda_tune_end = global ptr null
// TUNED90-DAG: @kiln_gpu_fn_kiln_cuda_graph_call_begin = global ptr null
// TUNED90: call i64 @kiln_cuda_tune_rounds(i64 0, i64 2, ptr nonnull @[[FORWARD]])
// TUNED90: call i64 @kiln_cuda_tune_rounds(i64 1, i64 4, ptr nonnull @[[GRADIENT]])

// TUNED80-DAG: @[[FORWARD:kiln_tuned_site_names[_0-9]*]] = private constant [11 x i8] c"f32,3xtf32\00"
// TUNED80-DAG: @[[GRADIENT:kiln_tuned_site_names[_0-9]*]] = private constant [27 x i8] c"f32,f32-two-kernels,3xtf32\00"
// TUNED80: call i64 @kiln_cuda_tune_rounds(i64 0, i64 2, ptr nonnull @[[FORWARD]])
// TUNED80: call i64 @kiln_cuda_tune_rounds(i64 1, i64 3, ptr nonnull @[[GRADIENT]])

// UNTUNED-NOT: kiln_cuda_tune
// UNTUNED-NOT: kiln_tuned_site

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
