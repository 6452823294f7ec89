// --cuda-arch=native on a machine without a CUDA driver: an error (exit
// status 1, not a usage error) that says why and what to name instead; no
// architecture is taken silently.
// UNSUPPORTED: cuda-driver
// REQUIRES: cuda-backend
// RUN: rm -f %t.kmod
// RUN: sh -c 'kiln-compile %s --target=cuda --cuda-arch=native -o %t.kmod 2>&1; echo "status $?"' | FileCheck %s
// RUN: not test -e %t.kmod

// CHECK:       kiln-compile: error: --cuda-arch=native: no CUDA driver found (libcuda.so.1 {{.*}}; name the architecture instead (--cuda-arch=sm_80, ...)
// CHECK-NEXT:  status 1

func.func @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.add %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
