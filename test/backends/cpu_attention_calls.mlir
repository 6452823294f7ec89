// kiln-cpu-attention-calls replaces each call of a function marked
// kiln.cpu_attention (after bufferization: the operand buffers, then the
// result buffers) by an scf.parallel over (batch entry, query tile) calling
// kiln_attention_f32_forward, or over batch entries calling
// kiln_attention_f32_backward, with the buffers' addresses (null for no
// mask) and a constant global holding the descriptor; kiln.body_work tells
// kiln-cpu-parallel-loops what an iteration is worth. The functions, no
// longer called, are erased.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-cpu-attention-calls | FileCheck %s

// CHECK-DAG:   func.func private @kiln_attention_f32_forward(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-DAG:   func.func private @kiln_attention_f32_backward(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64)
// CHECK-LABEL: func.func @forward(
// CHECK:         memref.get_global @[[DESC:kiln_attention_descriptor[_0-9]*]]
// CHECK-DAG:     %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[B:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[T:.*]] = arith.constant 3 : index
// CHECK:         scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[C0]], %[[C0]]) to (%[[B]], %[[T]]) step (%[[C1]], %[[C1]])
// CHECK:           %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           %[[J64:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK:           func.call @kiln_attention_f32_forward(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]], %{{.*}}, %{{.*}}, %[[I64]], %[[J64]])
// CHECK:         } {kiln.body_work = 16384 : i64}
// CHECK-NOT:     call @kiln_attention(
// CHECK:         return
// CHECK:       memref.global "private" constant @[[DESC]] : memref<10xi64> = dense<[8, 40, 16, 32, 32, 0, 4607182418800017408, 16, 1, 8]>
// CHECK-NOT:   func.func private @kiln_attention(
func.func @forward(%q: memref<8x40x32xf32>, %k: memref<8x16x32xf32>, %v: memref<8x16x32xf32>, %o: memref<8x40x32xf32>, %l: memref<8x40xf32>) {
  call @kiln_attention(%q, %k, %v, %o, %l) : (memref<8x40x32xf32>, memref<8x16x32xf32>, memref<8x16x32xf32>, memref<8x40x32xf32>, memref<8x40xf32>) -> ()
  return
}
func.func private @kiln_attention(%q: memref<8x40x32xf32>, %k: memref<8x16x32xf32>, %v: memref<8x16x32xf32>, %o: memref<8x40x32xf32>, %l: memref<8x40xf32>) attributes {kiln.cpu_attention = array<i64: 8, 40, 16, 32, 32, 0, 4607182418800017408, 16, 1, 8>} {
  return
}

// -----

// A masked backward: the mask (the last operand) goes to the kernel's mask
// slot, then out, lse, dout, dq, dk, dv; one iteration per batch entry.
// CHECK-LABEL: func.func @backward(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<2x4x8xf32>, %[[K:[^:]*]]: memref<2x6x8xf32>, %[[V:[^:]*]]: memref<2x6x8xf32>, %[[O:[^:]*]]: memref<2x4x8xf32>, %[[L:[^:]*]]: memref<2x4xf32>, %[[DO:[^:]*]]: memref<2x4x8xf32>, %[[M:[^:]*]]: memref<1x4x6xf32>
// CHECK:         memref.extract_strided_metadata %[[M]]
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK:           func.call @kiln_attention_f32_backward(
// CHECK:         } {kiln.body_work = 960 : i64}
func.func @backward(%q: memref<2x4x8xf32>, %k: memref<2x6x8xf32>, %v: memref<2x6x8xf32>, %o: memref<2x4x8xf32>, %l: memref<2x4xf32>, %do: memref<2x4x8xf32>, %m: memref<1x4x6xf32>, %dq: memref<2x4x8xf32>, %dk: memref<2x6x8xf32>, %dv: memref<2x6x8xf32>) {
  call @kiln_attention(%q, %k, %v, %o, %l, %do, %m, %dq, %dk, %dv) : (memref<2x4x8xf32>, memref<2x6x8xf32>, memref<2x6x8xf32>, memref<2x4x8xf32>, memref<2x4xf32>, memref<2x4x8xf32>, memref<1x4x6xf32>, memref<2x4x8xf32>, memref<2x6x8xf32>, memref<2x6x8xf32>) -> ()
  return
}
func.func private @kiln_attention(%q: memref<2x4x8xf32>, %k: memref<2x6x8xf32>, %v: memref<2x6x8xf32>, %o: memref<2x4x8xf32>, %l: memref<2x4xf32>, %do: memref<2x4x8xf32>, %m: memref<1x4x6xf32>, %dq: memref<2x4x8xf32>, %dk: memref<2x6x8xf32>, %dv: memref<2x6x8xf32>) attributes {kiln.cpu_attention = array<i64: 2, 4, 6, 8, 8, 2, 4607182418800017408, 64, 1, 2, 0, 6, 1>, kiln.cpu_attention_backward} {
  return
}

// -----

func.func @malformed(%q: memref<2x4x8xf32>, %o: memref<2x4x8xf32>) {
  call @kiln_attention(%q, %o) : (memref<2x4x8xf32>, memref<2x4x8xf32>) -> ()
  return
}
// expected-error @+1 {{'kiln.cpu_attention' must hold the header of AttentionAbi.h, the leading dims and, with a mask, its strides}}
func.func private @kiln_attention(%q: memref<2x4x8xf32>, %o: memref<2x4x8xf32>) attributes {kiln.cpu_attention = array<i64: 2, 4>} {
  return
}

// -----

func.func @wrong_operands(%q: memref<2x4x8xf32>, %o: memref<2x4x8xf32>) {
  // expected-error @+1 {{expected a call of 'kiln_attention' on f32 buffers: the attention's operands and then its result buffers}}
  call @kiln_attention(%q, %o) : (memref<2x4x8xf32>, memref<2x4x8xf32>) -> ()
  return
}
func.func private @kiln_attention(%q: memref<2x4x8xf32>, %o: memref<2x4x8xf32>) attributes {kiln.cpu_attention = array<i64: 2, 4, 4, 8, 8, 0, 4607182418800017408, 64, 1, 2>} {
  return
}
