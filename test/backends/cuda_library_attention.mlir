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

// -----

// A function marked for kiln's kernels too (kiln-cuda-outline-library-
// attention's tune) makes its call a tuned call site of two variants,
// kiln's kernels first: variant 0 calls a function marked for
// kiln-cuda-flash-attention alone, the other is the runtime's cuDNN call.
// The result copied into the out-param is forwarded before the site, so
// both write the out-param.
// CHECK-LABEL: memref.global "private" constant @kiln_tuned_site_names : memref<11xi8> = dense<[107, 105, 108, 110, 44, 99, 117, 100, 110, 110, 0]>
// CHECK-LABEL: func.func @tuned_forward(
// CHECK-SAME:    %[[Q:.*]]: memref<1x8x128x64xbf16>, %[[O:.*]]: memref<1x8x128x64xbf16>, %[[L:.*]]: memref<1x8x128xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-DAG:     %[[SITE:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         %[[ROUNDS:.*]] = call @kiln_cuda_tune_rounds(%[[SITE]], %[[TWO]], %{{.*}}) : (i64, i64, !llvm.ptr) -> i64
// CHECK:         scf.for
// CHECK:           %[[VARIANT:.*]] = func.call @kiln_cuda_tune_begin(%[[SITE]], %{{.*}})
// CHECK:           %[[KILN:.*]] = arith.cmpi eq, %[[VARIANT]], %c0_i64
// CHECK:           scf.if %[[KILN]] {
// CHECK-NEXT:        func.call @[[F:kiln_cuda_flash_attention[_0-9]*]](%[[Q]], %[[Q]], %[[Q]], %[[O]], %[[L]]) : (memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128xf32>) -> ()
// CHECK-NEXT:      } else {
// CHECK:             func.call @kiln_cuda_attention(
// CHECK:           } {kiln.cuda_tuned_variant = 0 : i64}
// CHECK-NEXT:      func.call @kiln_cuda_tune_end(%[[SITE]], %{{.*}})
// CHECK-NEXT:    } {kiln.cuda_tuned_site = 0 : i64}
// CHECK-NOT:     linalg.copy
// CHECK:         return
// CHECK:       func.func private @[[F]](memref<1x8x128x64xbf16> {bufferization.access = "read"}, memref<1x8x128x64xbf16> {bufferization.access = "read"}, memref<1x8x128x64xbf16> {bufferization.access = "read"}, memref<1x8x128x64xbf16>, memref<1x8x128xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.250000e-01 : f64}}
// CHECK-NOT:   func.func private @kiln_cuda_cudnn_attention
func.func private @kiln_cuda_cudnn_attention(memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.250000e-01 : f64}, kiln.cudnn_attention = array<i64: 6, 0, 1, 8, 128, 128, 64, 64, 1, 1, 1, 1, 4593671619917905920>}
func.func @tuned_forward(%q: memref<1x8x128x64xbf16>, %o: memref<1x8x128x64xbf16>, %lse: memref<1x8x128xf32>) {
  %a = memref.alloc() : memref<1x8x128x64xbf16>
  call @kiln_cuda_cudnn_attention(%q, %q, %q, %a, %lse) : (memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128x64xbf16>, memref<1x8x128xf32>) -> ()
  linalg.copy ins(%a : memref<1x8x128x64xbf16>) outs(%o : memref<1x8x128x64xbf16>)
  memref.dealloc %a : memref<1x8x128x64xbf16>
  return
}

// -----

// A tuned masked gradient: kiln's kernels take q, k, v, do, lse, the
// rowsum and the mask, cuDNN q, k, v, o, lse, do and the mask (the rowsum
// dropped), with its scratch allocated inside its variant.
// CHECK-LABEL: func.func @tuned_gradient(
// CHECK-SAME:    %[[X:[^:]*]]: memref<2x4x32x16xf16>, %[[O:[^:]*]]: memref<2x4x32x16xf16>, %[[L:[^:]*]]: memref<2x4x32xf32>, %[[S:[^:]*]]: memref<2x4x32xf32>, %[[M:[^:]*]]: memref<2x1x1x32xf16>, %[[DQ:[^:]*]]: memref<2x4x32x16xf16>, %[[DK:[^:]*]]: memref<2x4x32x16xf16>, %[[DV:[^:]*]]: memref<2x4x32x16xf16>)
// CHECK:         call @kiln_cuda_tune_rounds(
// CHECK:           scf.if
// CHECK-NEXT:        func.call @[[F:kiln_cuda_flash_attention_grad[_0-9]*]](%[[X]], %[[X]], %[[X]], %[[X]], %[[L]], %[[S]], %[[M]], %[[DQ]], %[[DK]], %[[DV]])
// CHECK-NEXT:      } else {
// CHECK:             %[[SCRATCH:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4352xf32>
// CHECK:             func.call @kiln_cuda_attention_grad(
// CHECK-NEXT:        memref.dealloc %[[SCRATCH]]
// CHECK:       func.func private @[[F]]({{.*}}) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.250000e-01 : f64}}
func.func private @kiln_cuda_cudnn_attention_grad(memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32xf32>, memref<2x4x32x16xf16>, memref<2x4x32xf32>, memref<2x1x1x32xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.250000e-01 : f64}, kiln.cudnn_attention_grad = array<i64: 5, 2, 2, 4, 32, 32, 16, 16, 2, 1, 1, 32, 4593671619917905920>}
func.func @tuned_gradient(%x: memref<2x4x32x16xf16>, %o: memref<2x4x32x16xf16>, %lse: memref<2x4x32xf32>, %sum: memref<2x4x32xf32>, %m: memref<2x1x1x32xf16>, %dq: memref<2x4x32x16xf16>, %dk: memref<2x4x32x16xf16>, %dv: memref<2x4x32x16xf16>) {
  call @kiln_cuda_cudnn_attention_grad(%x, %x, %x, %o, %lse, %x, %sum, %m, %dq, %dk, %dv) : (memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32xf32>, memref<2x4x32x16xf16>, memref<2x4x32xf32>, memref<2x1x1x32xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>, memref<2x4x32x16xf16>) -> ()
  return
}

// -----

// A tuned gradient's call without its rowsum is an error.
func.func private @kiln_cuda_cudnn_attention_grad(memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16xf32>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.250000e-01 : f64}, kiln.cudnn_attention_grad = array<i64: 6, 0, 1, 4, 16, 16, 64, 64, 1, 1, 1, 1, 4593671619917905920>}
func.func @tuned_without_rowsum(%x: memref<4x16x64xbf16>, %lse: memref<4x16xf32>) {
  // expected-error @+1 {{expected a call of 'kiln_cuda_cudnn_attention_grad' on 7 static input buffers and 3 result buffers}}
  call @kiln_cuda_cudnn_attention_grad(%x, %x, %x, %x, %lse, %x, %x, %x, %x) : (memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16xf32>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>, memref<4x16x64xbf16>) -> ()
  return
}
