// kiln-cpu-byte-booleans reads and writes i1 in memory as i8: a load
// becomes an i8 load compared with zero, a store of an i1 a store of it
// zero-extended. Alignment and volatility carry over; vectors of i1 and
// other types are left alone.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-byte-booleans | FileCheck %s

// CHECK-LABEL: llvm.func @scalar(
// CHECK-SAME:    %[[P:[^:]*]]: !llvm.ptr, %[[Q:[^:]*]]: !llvm.ptr
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0 : i8) : i8
// CHECK-DAG:     %[[BYTE:.*]] = llvm.load %[[P]] {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK:         %[[BOOL:.*]] = llvm.icmp "ne" %[[BYTE]], %[[ZERO]] : i8
// CHECK:         %[[WIDE:.*]] = llvm.zext %[[BOOL]] : i1 to i8
// CHECK:         llvm.store volatile %[[WIDE]], %[[Q]] {alignment = 1 : i64} : i8, !llvm.ptr
// CHECK:         llvm.return %[[BOOL]] : i1
llvm.func @scalar(%p: !llvm.ptr, %q: !llvm.ptr) -> i1 {
  %b = llvm.load %p {alignment = 1 : i64} : !llvm.ptr -> i1
  llvm.store volatile %b, %q {alignment = 1 : i64} : i1, !llvm.ptr
  llvm.return %b : i1
}

// -----

// CHECK-LABEL: llvm.func @left_alone(
// CHECK:         llvm.store %{{.*}}, %{{.*}} : vector<8xi1>, !llvm.ptr
// CHECK:         %[[W:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<8xi1>
// CHECK:         llvm.store %[[W]], %{{.*}} : vector<8xi1>, !llvm.ptr
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         llvm.store %{{.*}}, %{{.*}} : i8, !llvm.ptr
// CHECK-NOT:     llvm.zext
// CHECK-NOT:     llvm.icmp
llvm.func @left_alone(%p: !llvm.ptr, %v: vector<8xi1>, %i: i8) -> f32 {
  llvm.store %v, %p : vector<8xi1>, !llvm.ptr
  %w = llvm.load %p : !llvm.ptr -> vector<8xi1>
  llvm.store %w, %p : vector<8xi1>, !llvm.ptr
  %f = llvm.load %p : !llvm.ptr -> f32
  llvm.store %i, %p : i8, !llvm.ptr
  llvm.return %f : f32
}
