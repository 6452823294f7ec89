// --cuda-arch=native compiles for this machine's GPU: the newest
// architecture kiln supports that the GPU runs.
// REQUIRES: cuda-backend, cuda-driver
// RUN: kiln-compile %s --target=cuda --cuda-arch=native --emit=ptx | FileCheck %s
// RUN: kiln-compile %s --target=cuda --cuda-arch=native -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST

// CHECK:       .target sm_{{70|75|80|86|89|90}}
// CHECK:       .entry
// LIST:        cuda-sm_{{70|75|80|86|89|90}}

func.func @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.add %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
