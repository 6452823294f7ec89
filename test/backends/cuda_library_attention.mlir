// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-library-attention --verify-diagnostics | FileCheck %s

// A forward call becomes kiln_cuda_attention(descriptor, q, k, v, mask,
// o, lse) with the buffers' addresses and a null mask; the descriptor is
// a constant global, read-only with q, k, v and the mask. The function
// goes.
// CHECK: func.func private @kiln_cuda_attention(!llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: memref.global "private" constant @kiln_cuda_attention_descriptor : memref<13xi64> = dense<[6, 0, 1, 8, 128, 128, 64, 64, 1, 1, 1, 1, 4593671619917905920]> {alignment = 8 : i64}
// CHECK-NOT: func.func private @kiln_cuda_cudnn_attention
// CHECK-LABEL: func.func @forward
// CHECK: memref.get_global @kiln_cuda_attention_descriptor
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: call @kiln_cuda_attention(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: call @kiln_cuda_cudnn_attention
func.func private @kiln_cuda_cudnn_attention(memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128xf32>) attributes {kiln.cudnn_attention = array<i64: 6, 0, 1, 8, 128, 128, 64, 64, 1, 1, 1, 1, 4593671619917905920>}
func.func @forward(%q: memref<1x8x128x64xbf16>, %o: memref<1x8x128x64xbf16>, %lse: memref<1x8x128xf32>) {
  call @kiln_cuda_cudnn_attention(%q, %q, %q, %o, %lse) : (memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128xf32>) -> ()
  return
}

// -----

// A masked gradient: kiln_cuda_attention_grad(descriptor, q, k, v, o,
// lse, do, mask, dq, dk, dv, scratch), the f32 scratch of B * H * Nq *
// (D + 1) = 2 * 4 * 32 * 17 elements allocated around the call; dq, dk
// and dv written into the out-params they were copied to.
// CHECK: func.func private @kiln_cuda_attention_grad(!llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: func.func @gradient
// CHECK-NOT: linalg.copy
// CHECK: %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4352xf32>
// CHECK: call @kiln_cuda_attention_grad(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: memref.dealloc %[[S]]
// CHECK-NOT: linalg.copy
// CHECK: return
func.func private @kiln_cuda_cudnn_attention_grad(memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32xf32>, memref<2x4x32x16xf16>, memref<2x1x1x32xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>) attributes {kiln.cudnn_attention_grad = array<i64: 5, 2, 2, 4, 32, 32, 16, 16, 2, 1, 1, 32, 4593671619917905920>}
func.func @gradient(%x: memref<2x4x32x16xf16>, %lse: memref<2x4x32xf32>, %m: memref<2x1x1x32xf16>, %dq: memref<2x4x32x16xf16>, %dk: memref<2x4x32x16xf16>, %dv: memref<2x4x32x16xf16>) {
  %a = memref.alloc() : memref<2x4x32x16xf16>
  %b = memref.alloc() : memref<2x4x32x16xf16>
  %c = memref.alloc() : memref<2x4x32x16xf16>
  call @kiln_cuda_cudnn_attention_grad(%x, %x, %x, %x, %lse, %x, %m, %a, %b, %c) : (memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32xf32>, memref<2x4x32x16xf16>, memref<2x1x1x32xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>) -> ()
  linalg.copy ins(%a : memref<2x4x32x16xf16>) outs(%dq : memref<2x4x32x16xf16>)
  linalg.copy ins(%b : memref<2x4x32x16xf16>) outs(%dk : memref<2x4x32x16xf16>)
  linalg.copy ins(%c : memref<2x4x32x16xf16>) outs(%dv : memref<2x4x32x16xf16>)
  memref.dealloc %a : memref<2x4x32x16xf16>
  memref.dealloc %b : memref<2x4x32x16xf16>
  memref.dealloc %c : memref<2x4x32x16xf16>
  return
}

// -----

// A strided input goes through a dense copy.
// CHECK-LABEL: func.func @strided
// CHECK: %[[D:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16x64xbf16>
// CHECK: linalg.copy ins(%{{.*}} : memref<4x16x64xbf16, strided<[2048, 128, 1]>>) outs(%[[D]]
// CHECK: call @kiln_cuda_attention(
// CHECK: memref.dealloc %[[D]]
func.func private @kiln_cuda_cudnn_attention(memref<4x16x64xbf16, strided<[2048, 128, 1]>>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16xf32>) attributes {kiln.cudnn_attention = array<i64: 6, 0, 1, 4, 16, 16, 64, 64, 1, 1, 1, 1, 4593671619917905920>}
func.func @strided(%q: memref<4x16x64xbf16, strided<[2048, 128, 1]>>, %x: memref<4x16x64xbf16>, %o: memref<4x16x64xbf16>, %lse: memref<4x16xf32>) {
  call @kiln_cuda_cudnn_attention(%q, %x, %x, %o, %lse) : (memref<4x16x64xbf16, strided<[2048, 128, 1]>>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16xf32>) -> ()
  return
}

// -----

// expected-error @+1 {{'kiln.cudnn_attention' must hold 13 values}}
func.func private @kiln_cuda_cudnn_attention(memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16xf32>) attributes {kiln.cudnn_attention = array<i64: 6, 0, 1, 4>}
func.func @short(%x: memref<4x16x64xbf16>, %lse: memref<4x16xf32>) {
  call @kiln_cuda_cudnn_attention(%x, %x, %x, %x, %lse) : (memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16xf32>) -> ()
  return
}

// -----

func.func private @kiln_cuda_cudnn_attention(memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16xf32>) attributes {kiln.cudnn_attention = array<i64: 6, 2, 1, 4, 16, 16, 64, 64, 1, 1, 16, 16, 4593671619917905920>}
func.func @missing_mask(%x: memref<4x16x64xbf16>, %lse: memref<4x16xf32>) {
  // expected-error @+1 {{expected a call of 'kiln_cuda_cudnn_attention' on 4 static input buffers and 2 result buffers}}
  call @kiln_cuda_cudnn_attention(%x, %x, %x, %x, %lse) : (memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16xf32>) -> ()
  return
}
