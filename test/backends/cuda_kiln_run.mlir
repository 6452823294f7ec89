// A CUDA module on a machine without a CUDA driver: it loads and lists,
// and running it says why it cannot run.
// UNSUPPORTED: cuda-driver
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST
// RUN: not kiln-run %t.kmod --input 1.5 2>&1 | FileCheck %s --check-prefix=CALL
// RUN: not kiln-run %t.kmod --device=cuda --list 2>&1 | FileCheck %s --check-prefix=CALL
// RUN: not kiln-run %t.kmod --device=cpu --list 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not kiln-run %t.kmod --device=tpu --list 2>&1 | FileCheck %s --check-prefix=BAD

// LIST: cuda-sm_80
// LIST: twice(arg0: f32[]) -> (out0: f32[])
// CALL: no CUDA driver found (libcuda.so.1
// CPU: the module was compiled for cuda (target 'cuda-sm_80'), not for cpu
// BAD: --device must be 'cpu' or 'cuda', not 'tpu'
func.func @twice(%x: tensor<f32>) -> tensor<f32> {
  %y = kiln.add %x, %x : tensor<f32>
  return %y : tensor<f32>
}
