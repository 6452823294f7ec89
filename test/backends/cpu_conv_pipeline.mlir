// The CPU pipeline on f32 convolutions that oneDNN takes: each becomes a
// call of kiln_dnnl_conv_f32 (the outlined functions are gone), a
// returned result is written straight into the output (no allocation, no
// copy loop), also after another convolution and an elementwise op.
// In the plain layouts (the first RUN): channels-last adds the relayouts of
// the arguments and results, and those of the chained convolutions cancel
// (the LAST prefix).
// REQUIRES: dnnl
// RUN: kiln-opt %s --kiln-cpu-lowering=conv-layouts=plain | FileCheck %s
// RUN: kiln-opt %s --kiln-cpu-lowering=conv-layouts=channels-last \
// RUN:   | FileCheck %s --check-prefix=LAST

// CHECK-NOT:   @kiln_dnnl_conv(
// CHECK-LABEL: llvm.func internal @kiln_impl_returned(
// CHECK-NOT:     llvm.call @_mlir_memref_to_llvm_alloc
// CHECK:         llvm.call @kiln_dnnl_conv_f32(
// CHECK-NOT:     llvm.br
// CHECK-NOT:     llvm.call @_mlir_memref_to_llvm_free
// CHECK:         llvm.return
func.func @returned(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x10x10xf32> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>
  return %y : tensor<1x16x10x10xf32>
}

// CHECK-LABEL: llvm.func internal @kiln_impl_chained(
// CHECK:         llvm.call @kiln_dnnl_conv_f32(
// CHECK:         llvm.call @kiln_dnnl_conv_f32(
// CHECK-NOT:     llvm.br
// CHECK:         llvm.return
// CHECK-NOT:   @kiln_dnnl_conv(
// Channels-last: the relayout out of the first convolution's layout and
// into the second's cancel, so no loop runs between the two calls (the
// ReLU goes into the first as its post-op).
// LAST-LABEL: llvm.func internal @kiln_impl_chained(
// LAST:         llvm.call @kiln_dnnl_conv_f32(
// LAST-NOT:     llvm.br
// LAST:         llvm.call @kiln_dnnl_conv_f32(
// LAST:         llvm.return
func.func @chained(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %v: tensor<16x16x1x1xf32>) -> tensor<1x16x10x10xf32> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>
  %r = kiln.relu %y : tensor<1x16x10x10xf32>
  %z = kiln.conv %r, %v, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x16x10x10xf32>, tensor<16x16x1x1xf32>
  return %z : tensor<1x16x10x10xf32>
}

// A convolution of a channel slice (a split, as in ShuffleNet): the slice is
// copied before the call of the outlined convolution
// (kiln-copy-sliced-call-operands); bufferization emitted an invalid
// memref.cast of the strided view to the callee's identity layout before.
// CHECK-LABEL: llvm.func internal @kiln_impl_sliced(
// CHECK:         llvm.call @kiln_dnnl_conv_f32(
// CHECK:         llvm.return
func.func @sliced(%x: tensor<2x16x10x10xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<2x8x10x10xf32> {
  %s = kiln.slice %x, start = [0, 8, 0, 0], limit = [2, 16, 10, 10], stride = [1, 1, 1, 1] : tensor<2x16x10x10xf32>
  %y = kiln.conv %s, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x8x10x10xf32>, tensor<8x8x3x3xf32>
  return %y : tensor<2x8x10x10xf32>
}
