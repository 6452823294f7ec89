// The attention kernels at the shapes bench/attention_cuda.py times
// ([1, 8, 4096, 64], bf16 on tensor cores and f32, causal and not, the
// forward and the gradient): ptxas keeps every kernel's values in
// registers on sm_90, spilling none to local memory. The tensor-core
// kernels run at 238 to 255 registers a thread there, where a lane's
// addresses of its staged tiles once took enough to spill 20 bytes of the
// forward and 132 of the gradient (kiln-cuda-flash-attention's
// loadStaged).
// REQUIRES: cuda-backend, ptxas
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2> %t.log
// RUN: FileCheck %s --check-prefix=SPILLS < %t.log
// RUN: FileCheck %s < %t.log
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx \
// RUN:   --cuda-attention-3xtf32 -o %t.3x.ptx
// RUN: %ptxas -arch=sm_90 -v %t.3x.ptx -o %t.3x.cubin 2> %t.3x.log
// RUN: FileCheck %s --check-prefix=SPILLS < %t.3x.log
// RUN: FileCheck %s --check-prefix=TF32 < %t.3x.log

// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill

// Every function's kernels were assembled (the largest of each, by its
// workgroup memory: the forward's tiles, the gradient's key kernel with
// dq's atomics).
// CHECK-DAG: Compiling entry function 'kiln_impl_bf16_kernel' for 'sm_90'
// CHECK-DAG: Compiling entry function 'kiln_impl_bf16_causal_kernel' for 'sm_90'
// CHECK-DAG: Compiling entry function 'kiln_impl_bf16_grad_kernel{{(_[0-9]+)?}}' for 'sm_90'
// CHECK-DAG: Compiling entry function 'kiln_impl_bf16_causal_grad_kernel{{(_[0-9]+)?}}' for 'sm_90'
// CHECK-DAG: Compiling entry function 'kiln_impl_f32_kernel' for 'sm_90'
// CHECK-DAG: Compiling entry function 'kiln_impl_f32_causal_grad_kernel{{(_[0-9]+)?}}' for 'sm_90'
// CHECK-DAG: Used {{[0-9]+}} registers, used 1 barriers, {{.*}}16384 bytes smem
// CHECK-DAG: Used {{[0-9]+}} registers, used 1 barriers, {{.*}}41472 bytes smem
// CHECK-DAG: Used {{[0-9]+}} registers, used 1 barriers, {{.*}}49152 bytes smem

// With --cuda-attention-3xtf32 the f32 forward is the tensor-core kernel
// on 3xTF32 products, its tiles of 32 keys and their values staged split
// (32 KiB), and spills nothing either (about 168 registers); nor does the
// gradient's one kernel, which adds dq with atomics: its tiles, its keys
// and ds staged split in 96 KiB of dynamic shared memory, which ptxas
// does not count (254 registers; with the rotated walk's remainder in 64
// bits it spilled 4 bytes).
// TF32-NOT:  49152 bytes smem
// TF32-DAG:  Used {{[0-9]+}} registers, used 1 barriers{{ *$}}
// TF32:      Compiling entry function 'kiln_impl_f32_kernel' for 'sm_90'
// TF32-NEXT: Function properties for kiln_impl_f32_kernel
// TF32-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// TF32-NEXT: Used {{[0-9]+}} registers, used 1 barriers, 32768 bytes smem
// TF32-NOT:  49152 bytes smem

func.func @bf16(%q: tensor<1x8x4096x64xbf16>, %k: tensor<1x8x4096x64xbf16>, %v: tensor<1x8x4096x64xbf16>) -> (tensor<1x8x4096x64xbf16>, tensor<1x8x4096xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>
  return %o, %lse : tensor<1x8x4096x64xbf16>, tensor<1x8x4096xf32>
}

func.func @bf16_causal(%q: tensor<1x8x4096x64xbf16>, %k: tensor<1x8x4096x64xbf16>, %v: tensor<1x8x4096x64xbf16>) -> (tensor<1x8x4096x64xbf16>, tensor<1x8x4096xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 1.250000e-01 : f64} : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>
  return %o, %lse : tensor<1x8x4096x64xbf16>, tensor<1x8x4096xf32>
}

func.func @bf16_grad(%q: tensor<1x8x4096x64xbf16>, %k: tensor<1x8x4096x64xbf16>, %v: tensor<1x8x4096x64xbf16>, %o: tensor<1x8x4096x64xbf16>, %lse: tensor<1x8x4096xf32>, %do: tensor<1x8x4096x64xbf16>) -> (tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {scale = 1.250000e-01 : f64} : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096xf32>
  return %dq, %dk, %dv : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>
}

func.func @bf16_causal_grad(%q: tensor<1x8x4096x64xbf16>, %k: tensor<1x8x4096x64xbf16>, %v: tensor<1x8x4096x64xbf16>, %o: tensor<1x8x4096x64xbf16>, %lse: tensor<1x8x4096xf32>, %do: tensor<1x8x4096x64xbf16>) -> (tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {causal, scale = 1.250000e-01 : f64} : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096xf32>
  return %dq, %dk, %dv : tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>, tensor<1x8x4096x64xbf16>
}

func.func @f32(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x8x4096x64xf32>, %v: tensor<1x8x4096x64xf32>) -> (tensor<1x8x4096x64xf32>, tensor<1x8x4096xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>
  return %o, %lse : tensor<1x8x4096x64xf32>, tensor<1x8x4096xf32>
}

func.func @f32_causal_grad(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x8x4096x64xf32>, %v: tensor<1x8x4096x64xf32>, %o: tensor<1x8x4096x64xf32>, %lse: tensor<1x8x4096xf32>, %do: tensor<1x8x4096x64xf32>) -> (tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {causal, scale = 1.250000e-01 : f64} : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096xf32>
  return %dq, %dk, %dv : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>
}
