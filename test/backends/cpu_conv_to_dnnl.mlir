// kiln-cpu-conv-to-dnnl replaces each call of a function marked
// kiln.dnnl_conv (after bufferization: input, weight, bias and addend where
// the flags say so, result buffers) by a call of kiln_dnnl_conv_f32 (or
// kiln_dnnl_conv_bf16, flag 32; kiln_dnnl_conv_int8, flag 512) with
// the buffers' addresses (null for no bias or addend), a constant
// global holding the descriptor and a zero-initialized cache slot of its
// own (the calls of one function share its descriptor); the functions, no
// longer called, are erased.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-cpu-conv-to-dnnl | FileCheck %s

// CHECK:       func.func private @kiln_dnnl_conv_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[X:.*]]: memref<2x8x100xf32>, %[[W:.*]]: memref<8x8x3xf32>, %[[Y:.*]]: memref<2x8x98xf32>, %[[Z:.*]]: memref<2x8x98xf32>
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         memref.get_global @[[SLOT0:kiln_dnnl_conv_slot[_0-9]*]]
// CHECK:         memref.get_global @[[DESC0:kiln_dnnl_conv_descriptor[_0-9]*]]
// CHECK:         memref.extract_strided_metadata %[[X]]
// CHECK:         memref.extract_strided_metadata %[[W]]
// CHECK:         memref.extract_strided_metadata %[[Y]]
// CHECK:         call @kiln_dnnl_conv_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]], %[[NULL]], %{{.*}}, %[[NULL]], %[[NULL]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:         memref.get_global @[[SLOT1:kiln_dnnl_conv_slot[_0-9]*]]
// CHECK:         memref.get_global @[[DESC0]]
// CHECK:         memref.extract_strided_metadata %[[Z]]
// CHECK:         call @kiln_dnnl_conv_f32(
// CHECK-NOT:     call @kiln_dnnl_conv(
// CHECK:         return
// CHECK-DAG:   memref.global "private" constant @[[DESC0]] : memref<13xi64> = dense<[1, 1, 2, 8, 8, 0, 100, 3, 98, 1, 0, 0, 1]>
// CHECK-DAG:   memref.global "private" @[[SLOT0]] : memref<1xi64> = dense<0> {alignment = 8 : i64}
// CHECK-DAG:   memref.global "private" @[[SLOT1]] : memref<1xi64> = dense<0> {alignment = 8 : i64}
// CHECK-NOT:   func.func private @kiln_dnnl_conv(
func.func @f(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>, %z: memref<2x8x98xf32>) {
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  call @kiln_dnnl_conv(%x, %w, %z) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 0, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

// A result in an arena (kiln-cpu-plan-memory's memref.view): its address is
// the arena's plus the view's byte shift. Calls of unmarked functions stay.
// CHECK-LABEL: func.func @arena(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12544xi8>
// CHECK:         %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK:         arith.addi %[[BASE]], %{{.*}} : index
// CHECK:         call @kiln_dnnl_conv_f32(
// CHECK:         call @other(
func.func @arena(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %out: memref<2x8x98xf32>) {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<12544xi8>
  %c0 = arith.constant 0 : index
  %y = memref.view %arena[%c0][] : memref<12544xi8> to memref<2x8x98xf32>
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  call @other(%y, %out) : (memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.dealloc %arena : memref<12544xi8>
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 0, 100, 3, 98, 1, 0, 0, 1>} {
  return
}
func.func private @other(memref<2x8x98xf32>, memref<2x8x98xf32>)

// -----

// A fresh result that is only copied into the out-param and freed: the
// call writes the out-param, the allocation and the copy go; not when the
// allocation is read later.
// CHECK-LABEL: func.func @forwarded(
// CHECK-SAME:    %[[X:.*]]: memref<2x8x100xf32>, %[[W:.*]]: memref<8x8x3xf32>, %[[OUT:.*]]: memref<2x8x98xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         memref.extract_strided_metadata %[[OUT]]
// CHECK:         call @kiln_dnnl_conv_f32(
// CHECK-NOT:     linalg.copy
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @forwarded(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %out: memref<2x8x98xf32>) {
  %y = memref.alloc() : memref<2x8x98xf32>
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  linalg.copy ins(%y : memref<2x8x98xf32>) outs(%out : memref<2x8x98xf32>)
  memref.dealloc %y : memref<2x8x98xf32>
  return
}

// CHECK-LABEL: func.func @kept(
// CHECK:         %[[Y:.*]] = memref.alloc()
// CHECK:         memref.extract_strided_metadata %[[Y]]
// CHECK:         call @kiln_dnnl_conv_f32(
// CHECK:         linalg.copy ins(%[[Y]]
// CHECK:         call @other(%[[Y]]
func.func @kept(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %out: memref<2x8x98xf32>) {
  %y = memref.alloc() : memref<2x8x98xf32>
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  linalg.copy ins(%y : memref<2x8x98xf32>) outs(%out : memref<2x8x98xf32>)
  call @other(%y, %out) : (memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.dealloc %y : memref<2x8x98xf32>
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 0, 100, 3, 98, 1, 0, 0, 1>} {
  return
}
func.func private @other(memref<2x8x98xf32>, memref<2x8x98xf32>)

// -----

// A result written over its addend (kiln-cpu-conv-addend-in-place) is not
// forwarded into the out-param it is copied to: the call reads the addend
// from that allocation.
// CHECK-LABEL: func.func @in_place(
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         memref.extract_strided_metadata %[[A]]
// CHECK:         memref.extract_strided_metadata %[[A]]
// CHECK:         call @kiln_dnnl_conv_f32(
// CHECK:         linalg.copy ins(%[[A]]
func.func @in_place(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %out: memref<2x8x98xf32>) {
  %a = memref.alloc() : memref<2x8x98xf32>
  call @init(%a) : (memref<2x8x98xf32>) -> ()
  call @kiln_dnnl_conv(%x, %w, %a, %a) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  linalg.copy ins(%a : memref<2x8x98xf32>) outs(%out : memref<2x8x98xf32>)
  memref.dealloc %a : memref<2x8x98xf32>
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %a: memref<2x8x98xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 2, 100, 3, 98, 1, 0, 0, 1>} {
  return
}
func.func private @init(memref<2x8x98xf32>)

// -----

// With a bias (flag 1) and an addend (2), their addresses come between the
// weight's and the result's.
// CHECK-LABEL: func.func @epilogue(
// CHECK-SAME:    %[[X:.*]]: memref<2x8x100xf32>, %[[W:.*]]: memref<8x8x3xf32>, %[[B:.*]]: memref<1x8x1xf32>, %[[R:.*]]: memref<2x8x98xf32>, %[[Y:.*]]: memref<2x8x98xf32>
// CHECK-NOT:     llvm.mlir.zero
// CHECK:         memref.extract_strided_metadata %[[B]]
// CHECK:         %[[PB:.*]] = llvm.inttoptr
// CHECK:         memref.extract_strided_metadata %[[R]]
// CHECK:         %[[PR:.*]] = llvm.inttoptr
// CHECK:         memref.extract_strided_metadata %[[X]]
// CHECK:         %[[PX:.*]] = llvm.inttoptr
// CHECK:         memref.extract_strided_metadata %[[W]]
// CHECK:         %[[PW:.*]] = llvm.inttoptr
// CHECK:         memref.extract_strided_metadata %[[Y]]
// CHECK:         %[[PY:.*]] = llvm.inttoptr
// CHECK:         call @kiln_dnnl_conv_f32(%{{.*}}, %{{.*}}, %[[PX]], %[[PW]], %[[PB]], %[[PR]], %[[PY]], %{{.*}}, %{{.*}})
func.func @epilogue(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %b: memref<1x8x1xf32>, %r: memref<2x8x98xf32>, %y: memref<2x8x98xf32>) {
  call @kiln_dnnl_conv(%x, %w, %b, %r, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<1x8x1xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %b: memref<1x8x1xf32>, %r: memref<2x8x98xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 3, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

// A ReLU's call that reads the bound an earlier call wrote on its source
// (flag 32768: the memref<f32> after the addend's place) and writes one on
// its result (16384: the last out-param): flags 4 | 16 | 49152 = 49172. The
// pointers follow dst.
// CHECK-LABEL: func.func @bounds(
// CHECK-SAME:    %[[X:.*]]: memref<2x8x100xf32>, %[[W:.*]]: memref<8x8x3xf32>, %[[S:.*]]: memref<f32>, %[[Y:.*]]: memref<2x8x98xf32>, %[[D:.*]]: memref<f32>
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         memref.extract_strided_metadata %[[X]]
// CHECK:         %[[PX:.*]] = llvm.inttoptr
// CHECK:         memref.extract_strided_metadata %[[W]]
// CHECK:         %[[PW:.*]] = llvm.inttoptr
// CHECK:         memref.extract_strided_metadata %[[Y]]
// CHECK:         %[[PY:.*]] = llvm.inttoptr
// CHECK:         memref.extract_strided_metadata %[[S]]
// CHECK:         %[[PS:.*]] = llvm.inttoptr
// CHECK:         memref.extract_strided_metadata %[[D]]
// CHECK:         %[[PD:.*]] = llvm.inttoptr
// CHECK:         call @kiln_dnnl_conv_f32(%{{.*}}, %{{.*}}, %[[PX]], %[[PW]], %[[NULL]], %[[NULL]], %[[PY]], %[[PS]], %[[PD]])
func.func @bounds(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %s: memref<f32>, %y: memref<2x8x98xf32>, %d: memref<f32>) {
  call @kiln_dnnl_conv(%x, %w, %s, %y, %d) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<f32>, memref<2x8x98xf32>, memref<f32>) -> ()
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %s: memref<f32>, %y: memref<2x8x98xf32>, %d: memref<f32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 49172, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

// A call whose operands disagree with the descriptor's flags, and a
// descriptor of the wrong length, are errors.
func.func @wrong(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) {
  // expected-error @+1 {{expected a call of 'kiln_dnnl_conv' on the input, weight, bias, addend and source bound (as the descriptor's flags say; for a quantized one the scales and zero points instead of the addend) and result buffers (and the result's bound)}}
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 1, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

func.func @short(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) {
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  return
}
// expected-error @+1 {{'kiln.dnnl_conv' must hold k (1 to 3), groups, N, C, O, flags, 7 entries per spatial dim and, with a clip, its two bounds}}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

// A clip (flag 8192) without its two bounds.
func.func @clipless(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) {
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  return
}
// expected-error @+1 {{'kiln.dnnl_conv' must hold k (1 to 3), groups, N, C, O, flags, 7 entries per spatial dim and, with a clip, its two bounds}}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 8192, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

// A bf16 convolution (flag 32) calls kiln_dnnl_conv_bf16, which takes the
// bounds after dst like kiln_dnnl_conv_f32 (null here); its buffers'
// offsets count 2-byte elements. Only the entry a module calls is declared.
// CHECK:       func.func private @kiln_dnnl_conv_bf16(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-NOT:   @kiln_dnnl_conv_f32
// CHECK-LABEL: func.func @half(
// CHECK:         %{{.*}}, %[[OFFSET:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %arg0
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK:         arith.muli %[[OFFSET]], %[[TWO]] : index
// CHECK:         call @kiln_dnnl_conv_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL:.*]], %[[NULL]], %{{.*}}, %[[NULL]], %[[NULL]])
// CHECK-DAG:   memref.global "private" constant @{{.*}} : memref<13xi64> = dense<[1, 1, 2, 8, 8, 32, 100, 3, 98, 1, 0, 0, 1]>
func.func @half(%x: memref<2x8x100xbf16, strided<[800, 100, 1], offset: 4>>, %w: memref<8x8x3xbf16>, %y: memref<2x8x98xbf16>) {
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xbf16, strided<[800, 100, 1], offset: 4>>, memref<8x8x3xbf16>, memref<2x8x98xbf16>) -> ()
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xbf16, strided<[800, 100, 1], offset: 4>>, %w: memref<8x8x3xbf16>, %y: memref<2x8x98xbf16>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 32, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

// A quantized convolution (flag 512) calls kiln_dnnl_conv_int8 with its
// uint8 input, int8 weights, bias (flag 1) and its scales and zero points
// in the place of the addend; byte offsets count 1-byte elements. A
// quantized call without the scales is an error.
// CHECK:       func.func private @kiln_dnnl_conv_int8(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: func.func @quantized(
// CHECK-SAME:    %[[X:.*]]: memref<2x8x100xui8>, %[[W:.*]]: memref<8x8x3xi8>, %[[B:.*]]: memref<8xf32>, %[[S:.*]]: memref<10xf32>, %[[Y:.*]]: memref<2x8x98xui8>
// CHECK-DAG:     memref.extract_strided_metadata %[[X]]
// CHECK-DAG:     memref.extract_strided_metadata %[[W]]
// CHECK-DAG:     memref.extract_strided_metadata %[[B]]
// CHECK-DAG:     memref.extract_strided_metadata %[[S]]
// CHECK-DAG:     memref.extract_strided_metadata %[[Y]]
// CHECK:         call @kiln_dnnl_conv_int8(
// CHECK-DAG:   memref.global "private" constant @{{.*}} : memref<13xi64> = dense<[1, 1, 2, 8, 8, 2585, 100, 3, 98, 1, 0, 0, 1]>
func.func @quantized(%x: memref<2x8x100xui8>, %w: memref<8x8x3xi8>, %b: memref<8xf32>, %s: memref<10xf32>, %y: memref<2x8x98xui8>) {
  call @kiln_dnnl_conv(%x, %w, %b, %s, %y) : (memref<2x8x100xui8>, memref<8x8x3xi8>, memref<8xf32>, memref<10xf32>, memref<2x8x98xui8>) -> ()
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xui8>, %w: memref<8x8x3xi8>, %b: memref<8xf32>, %s: memref<10xf32>, %y: memref<2x8x98xui8>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 2585, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

func.func @quantized_wrong(%x: memref<2x8x100xui8>, %w: memref<8x8x3xi8>, %y: memref<2x8x98xf32>) {
  // expected-error @+1 {{for a quantized one the scales and zero points instead of the addend}}
  call @kiln_dnnl_conv(%x, %w, %y) : (memref<2x8x100xui8>, memref<8x8x3xi8>, memref<2x8x98xf32>) -> ()
  return
}
func.func private @kiln_dnnl_conv(%x: memref<2x8x100xui8>, %w: memref<8x8x3xi8>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 536, 100, 3, 98, 1, 0, 0, 1>} {
  return
}
