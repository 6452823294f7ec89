// The PTX of each kind of kernel the CUDA backend generates today; float
// matmuls are kernels only with --no-cublas, otherwise cuBLASLt calls.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --no-cublas --emit=ptx | FileCheck %s
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx | FileCheck %s --check-prefix=SM90
// RUN: kiln-compile %s --target=cuda --emit=ptx | FileCheck %s --check-prefix=LIBRARY
// LIBRARY-NOT: kiln_impl_mm_kernel

// CHECK:       .version 7.0
// CHECK:       .target sm_80
// SM90:        .version 7.8
// SM90:        .target sm_90
// Math comes from libdevice, linked in: no external function is left.
// CHECK-NOT:   .extern

// Elementwise (tanh then exp, one fused kernel): a grid-stride loop over
// global memory.
// CHECK-LABEL: .visible .entry kiln_impl_scale_tanh_kernel(
// CHECK:         .maxntid 256, 1, 1
// CHECK:         %ctaid.x
// CHECK:         %nctaid.x
// CHECK:         ld.global.f32
// CHECK:         ex2.approx
// CHECK:         st.global.{{[fu]}}32
// CHECK:         bra
func.func @scale_tanh(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %t = kiln.tanh %x : tensor<1000xf32>
  %e = kiln.exp %t : tensor<1000xf32>
  return %e : tensor<1000xf32>
}

// Reduction over the inner dimension: a kernel filling the accumulator,
// then a block per row: per-thread partial sums, warp shuffles, a
// shared-memory exchange between warps, one store per row.
// CHECK-LABEL: .visible .entry kiln_impl_row_sum_kernel(
// CHECK:         st.global.{{[fu]}}32
// CHECK-LABEL: .visible .entry kiln_impl_row_sum_kernel_0(
// CHECK:         .shared .align 4 .b8 __wg_kiln_impl_row_sum_kernel_0_0[128];
// CHECK:         ld.global.f32
// CHECK:         add.rn.f32
// CHECK:         shfl.sync.bfly.b32
// CHECK:         st.shared.f32
// CHECK:         bar.sync
// CHECK:         ld.shared.f32
// CHECK:         shfl.sync.bfly.b32
// CHECK:         st.global.{{[fu]}}32
func.func @row_sum(%x: tensor<8x100xf32>) -> tensor<8xf32> {
  %s = kiln.reduce_sum %x, dims = [1] : tensor<8x100xf32>
  return %s : tensor<8xf32>
}

// Matmul: 16x16 tiles of A and B staged in shared memory, a dot product
// over each pair of tiles between barriers, then C updated.
// CHECK-LABEL: .visible .entry kiln_impl_mm_kernel(
// CHECK-LABEL: .visible .entry kiln_impl_mm_kernel_1(
// CHECK:         .shared .align 4 .b8 __wg_kiln_impl_mm_kernel_1_0[1024];
// CHECK:         .shared .align 4 .b8 __wg_kiln_impl_mm_kernel_1_1[1024];
// CHECK:         ld.global.f32
// CHECK:         st.shared.f32
// CHECK:         ld.global.f32
// CHECK:         st.shared.f32
// CHECK:         bar.sync
// CHECK:         ld.shared.f32
// CHECK:         ld.shared.f32
// CHECK:         mul.rn.f32
// CHECK:         ld.global.f32
// CHECK:         st.global.{{[fu]}}32
func.func @mm(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %c = kiln.matmul %a, %b : tensor<16x32xf32>, tensor<32x8xf32>
  return %c : tensor<16x8xf32>
}
