// kiln-cpu-bf16-as-i16 loads and stores bf16 values (scalars and vectors)
// as i16 with bit casts, keeping alignment, volatility and
// non-temporality; other accesses stay as they are.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-bf16-as-i16 | FileCheck %s

// A copy of a bf16 element: an i16 load, bit-cast to bf16 and back, an i16
// store.
// CHECK-LABEL: llvm.func @copy(
// CHECK-SAME:    %[[P:.*]]: !llvm.ptr, %[[Q:.*]]: !llvm.ptr
// CHECK:         %[[W:.*]] = llvm.load %[[P]] {alignment = 2 : i64} : !llvm.ptr -> i16
// CHECK:         %[[B:.*]] = llvm.bitcast %[[W]] : i16 to bf16
// CHECK:         %[[V:.*]] = llvm.bitcast %[[B]] : bf16 to i16
// CHECK:         llvm.store volatile %[[V]], %[[Q]] {alignment = 2 : i64, nontemporal} : i16, !llvm.ptr
// CHECK-NOT:     bf16, !llvm.ptr
llvm.func @copy(%p: !llvm.ptr, %q: !llvm.ptr) {
  %v = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> bf16
  llvm.store volatile %v, %q {alignment = 2 : i64, nontemporal} : bf16, !llvm.ptr
  llvm.return
}

// -----

// Vectors of bf16 as vectors of i16; f32 and i1 accesses are not touched.
// CHECK-LABEL: llvm.func @vectors(
// CHECK:         %[[W:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<8xi16>
// CHECK:         %[[B:.*]] = llvm.bitcast %[[W]] : vector<8xi16> to vector<8xbf16>
// CHECK:         %[[V:.*]] = llvm.bitcast %[[B]] : vector<8xbf16> to vector<8xi16>
// CHECK:         llvm.store %[[V]], %{{.*}} : vector<8xi16>, !llvm.ptr
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> i1
llvm.func @vectors(%p: !llvm.ptr, %q: !llvm.ptr) -> i1 {
  %v = llvm.load %p : !llvm.ptr -> vector<8xbf16>
  llvm.store %v, %q : vector<8xbf16>, !llvm.ptr
  %f = llvm.load %p : !llvm.ptr -> f32
  llvm.store %f, %q : f32, !llvm.ptr
  %b = llvm.load %p : !llvm.ptr -> i1
  llvm.return %b : i1
}
