// REQUIRES: cuda-backend
// With --no-cuda-attention-tuning the half-precision attention and its
// gradient of a training step become the runtime's cuDNN calls (cuDNN's
// fused attention is the default for f16 and bf16 from sm_80 on), reading
// the forward's o and lse where the gradient was given them, and no
// attention kernel is built (the one kernel left copies o, which the
// gradient reads too, into its out-param); sm_75 has no fused attention in
// cuDNN, and under --cuda-deterministic the gradient stays with kiln's
// kernels.
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --no-cuda-attention-tuning --emit=llvm -o - | FileCheck %s
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --no-cuda-attention-tuning --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// With tuning (the default), each is a tuned call site of kiln's
// tensor-core kernels and cuDNN's call, whose faster the runtime keeps:
// both are in the module, and ptxas assembles its kernels.
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=llvm -o - | FileCheck %s --check-prefix=TUNED
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o %t.tuned.ptx
// RUN: FileCheck %s --check-prefix=TUNED-PTX < %t.tuned.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.tuned.ptx -o %t.tuned.cubin %}
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --cuda-deterministic --emit=ptx -o - | FileCheck %s --check-prefix=DET-PTX
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_75 --emit=llvm -o - | FileCheck %s --check-prefix=TURING
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --cuda-deterministic --emit=llvm -o - | FileCheck %s --check-prefix=DET
// --no-cuda-cudnn-attention, and --no-cudnn (no call of cuDNN at all),
// keep kiln's kernels alone.
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --no-cuda-cudnn-attention --emit=llvm -o - | FileCheck %s --check-prefix=KILN
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --no-cudnn --emit=llvm -o - | FileCheck %s --check-prefix=KILN

// CHECK-DAG: @kiln_cuda_attention_descriptor{{.*}} = private constant [13 x i64] [i64 6, i64 1, i64 2, i64 4, i64 128, i64 128, i64 64, i64 64, i64 1, i64 1, i64 1, i64 1, i64 4593671619917905920]
// CHECK-DAG: @kiln_gpu_fn_kiln_cuda_attention = {{.*}}global ptr null
// CHECK-DAG: @kiln_gpu_fn_kiln_cuda_attention_grad = {{.*}}global ptr null
// CHECK: define void @kiln_entry_step(
// CHECK: call void @kiln_cuda_attention(ptr {{.*}}@kiln_cuda_attention_descriptor{{.*}}, ptr %[[Q:[0-9]+]], ptr %[[K:[0-9]+]], ptr %[[V:[0-9]+]], ptr null, ptr %[[O:[0-9]+]], ptr %[[L:[0-9]+]])
// CHECK: call void @kiln_cuda_attention_grad(ptr {{.*}}@kiln_cuda_attention_descriptor{{.*}}, ptr %[[Q]], ptr %[[K]], ptr %[[V]], ptr %[[O]], ptr %[[L]], ptr %{{[0-9]+}}, ptr null, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}})
// CHECK: ret void

// TUNED-DAG: @kiln_tuned_site_names{{.*}} = private constant [11 x i8] c"kiln,cudnn\00"
// TUNED-DAG: @kiln_gpu_fn_kiln_cuda_attention = {{.*}}global ptr null
// TUNED-DAG: @kiln_gpu_fn_kiln_cuda_attention_grad = {{.*}}global ptr null
// TUNED: define internal fastcc void @kiln_impl_step(
// TUNED: call i64 @kiln_cuda_tune_rounds(i64 0, i64 2, ptr {{.*}}@kiln_tuned_site_names
// TUNED: call void @kiln_cuda_attention(
// TUNED: call i64 @kiln_cuda_tune_rounds(i64 1, i64 2, ptr {{.*}}@kiln_tuned_site_names
// TUNED: call void @kiln_cuda_attention_grad(
// TUNED: ret void
// TUNED-PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// PTX-COUNT-1: .entry
// PTX-NOT: .entry
// PTX-NOT: mma.sync

// TURING-NOT: call void @kiln_cuda_attention
// DET: call void @kiln_cuda_attention(
// DET-NOT: call void @kiln_cuda_attention_grad(
// DET-PTX: mma.sync
// KILN-NOT: call void @kiln_cuda_attention
// KILN-NOT: @kiln_cuda_tune_rounds

func.func @step(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x4x128x64xbf16>, %v: tensor<2x4x128x64xbf16>, %do: tensor<2x4x128x64xbf16>) -> (tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>) {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.125 : f64} : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {causal, scale = 0.125 : f64} : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128xf32>
  return %o, %dq, %dk, %dv : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>
}
