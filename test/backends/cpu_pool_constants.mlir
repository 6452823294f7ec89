// kiln-cpu-pool-constants gives each large constant global an offset in the
// module's constant pool (a multiple of 64, in the order of their names) and
// makes each of its addresses an invariant load of the pool's base from the
// exported slot plus that offset (an i64 operand: a GEP's constant indices
// hold 29 bits, and BERT's pool is larger); the pool's size is exported too
// (kiln/ConstantsAbi.h). Small, splat, bit-packed, mutable constants and
// those a global initializer refers to stay in the code.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-pool-constants="min-bytes=16" --verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.mlir.global private constant @w(dense<
// CHECK-SAME:    alignment = 64 : i64, kiln.pool_offset = 64 : i64}
// CHECK-LABEL: llvm.mlir.global private constant @v(dense<
// CHECK-SAME:    alignment = 64 : i64, kiln.pool_offset = 0 : i64}
// CHECK-LABEL: llvm.func @f(
// CHECK:         %[[SLOT:.*]] = llvm.mlir.addressof @kiln_constants : !llvm.ptr
// CHECK:         %[[BASE:.*]] = llvm.load %[[SLOT]] invariant {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[OFF:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK:         %[[W:.*]] = llvm.getelementptr inbounds %[[BASE]][%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NOT:     llvm.mlir.addressof @w
// CHECK:         llvm.load %[[W]] : !llvm.ptr -> i8
// CHECK:         %[[SLOT2:.*]] = llvm.mlir.addressof @kiln_constants : !llvm.ptr
// CHECK:         %[[BASE2:.*]] = llvm.load %[[SLOT2]] invariant
// CHECK-NOT:     llvm.getelementptr
// CHECK:         llvm.load %[[BASE2]] : !llvm.ptr -> f32
// CHECK:       llvm.mlir.global external @kiln_constants() {{.*}}alignment = 8 : i64} : !llvm.ptr
// CHECK:         llvm.mlir.zero
// CHECK:       llvm.mlir.global external constant @kiln_constants_size(84 : i64) {{.*}}alignment = 8 : i64} : i64
llvm.mlir.global private constant @w(dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]> : tensor<20xi8>) {alignment = 64 : i64} : !llvm.array<20 x i8>
llvm.mlir.global private constant @v(dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>) {alignment = 64 : i64} : !llvm.array<5 x f32>
llvm.func @f() -> f32 {
  %w = llvm.mlir.addressof @w : !llvm.ptr
  %b = llvm.load %w : !llvm.ptr -> i8
  %v = llvm.mlir.addressof @v : !llvm.ptr
  %x = llvm.load %v : !llvm.ptr -> f32
  llvm.return %x : f32
}

// -----

// Below min-bytes, a splat, i1 (bit-packed in the attribute), a mutable
// global and a constant whose address another global holds: no pool, no
// slot.
// CHECK-LABEL: llvm.mlir.global private constant @small(dense<[1, 2, 3, 4]> : tensor<4xi8>)
// CHECK-NOT:     kiln.pool_offset
// CHECK-LABEL: llvm.mlir.global private constant @splat(dense<1.000000e+00> : tensor<8xf32>)
// CHECK-NOT:     kiln.pool_offset
// CHECK-LABEL: llvm.mlir.global private constant @bits(dense<
// CHECK-NOT:     kiln.pool_offset
// CHECK-LABEL: llvm.mlir.global private @mutable(dense<
// CHECK-NOT:     kiln.pool_offset
// CHECK-LABEL: llvm.mlir.global private constant @pinned(dense<
// CHECK-NOT:     kiln.pool_offset
// CHECK-LABEL: llvm.func @g(
// CHECK-NOT:   kiln_constants
llvm.mlir.global private constant @small(dense<[1, 2, 3, 4]> : tensor<4xi8>) : !llvm.array<4 x i8>
llvm.mlir.global private constant @splat(dense<1.0> : tensor<8xf32>) : !llvm.array<8 x f32>
llvm.mlir.global private constant @bits(dense<[true, false, false, true, true, false, false, true, true, false, false, true, true, false, false, true, true, false, false, true, true, false, false, true, true, false, false, true, true, false, false, true]> : tensor<32xi1>) : !llvm.array<32 x i1>
llvm.mlir.global private @mutable(dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>) : !llvm.array<5 x f32>
llvm.mlir.global private constant @pinned(dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>) : !llvm.array<5 x f32>
llvm.mlir.global private constant @table() : !llvm.ptr {
  %p = llvm.mlir.addressof @pinned : !llvm.ptr
  llvm.return %p : !llvm.ptr
}
llvm.func @g() -> f32 {
  %a = llvm.mlir.addressof @small : !llvm.ptr
  %b = llvm.mlir.addressof @splat : !llvm.ptr
  %c = llvm.mlir.addressof @bits : !llvm.ptr
  %d = llvm.mlir.addressof @mutable : !llvm.ptr
  %e = llvm.mlir.addressof @pinned : !llvm.ptr
  %x = llvm.load %e : !llvm.ptr -> f32
  llvm.return %x : f32
}

// -----

// A module that exports the slot already is refused: its pool would be
// overwritten.
// expected-error @below {{the module has its constant pool already}}
module {
  llvm.mlir.global external @kiln_constants() : !llvm.ptr
}
