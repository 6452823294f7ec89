// The object emitter asks LLVM for 512-bit vectors on CPUs with AVX-512F
// (LLVM prefers 256 bits on most of them otherwise) and leaves other CPUs
// alone. The CPUs are named, so this runs on any x86-64 host;
// cpu_object_emitter_host.mlir checks the host's own code.
// RUN: kiln-compile %s --target-cpu=skylake-avx512 --emit=llvm | FileCheck %s --check-prefix=AVX512
// RUN: kiln-compile %s --target-cpu=sapphirerapids --emit=llvm | FileCheck %s --check-prefix=AVX512
// RUN: kiln-compile %s --target-cpu=haswell --emit=llvm | FileCheck %s --check-prefix=AVX2

// AVX512: define {{.*}}@kiln_entry_scale_shift({{.*}} #[[ATTRS:[0-9]+]]
// AVX512: fmul {{.*}}<16 x float>
// AVX512: attributes #[[ATTRS]] = {{.*}}"prefer-vector-width"="512"

// AVX2-NOT: prefer-vector-width
// AVX2: fmul {{.*}}<8 x float>
// AVX2-NOT: <16 x float>
// AVX2-NOT: prefer-vector-width
func.func @scale_shift(%x: tensor<4099xf32>, %a: tensor<4099xf32>,
                       %b: tensor<4099xf32>) -> tensor<4099xf32> {
  %xa = kiln.mul %x, %a : tensor<4099xf32>
  %y = kiln.add %xa, %b : tensor<4099xf32>
  return %y : tensor<4099xf32>
}
