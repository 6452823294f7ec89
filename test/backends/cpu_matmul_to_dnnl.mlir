// kiln-cpu-matmul-to-dnnl turns f32 matmuls on memrefs into oneDNN sgemm
// calls (row-major, beta 1); small, f64 and column-strided ones stay.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-matmul-to-dnnl | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-matmul-to-dnnl=min-macs=1 \
// RUN:   | FileCheck %s --check-prefix=ALL

// CHECK:       func.func private @dnnl_sgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32
// CHECK-LABEL: func.func @matmul(
// CHECK-DAG:     %[[N:.*]] = arith.constant 78 : i32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[M:.*]] = arith.constant 64 : i64
// CHECK-DAG:     %[[NN:.*]] = arith.constant 48 : i64
// CHECK-DAG:     %[[K:.*]] = arith.constant 32 : i64
// CHECK:         call @dnnl_sgemm(%[[N]], %[[N]], %[[M]], %[[NN]], %[[K]], %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
// CHECK-NOT:     linalg.matmul
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// -----

// A zero fill right before the product is dropped: beta 0.
// CHECK-LABEL: func.func @zero_init(
// CHECK-NOT:     linalg.fill
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @dnnl_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %{{.*}}, %{{.*}})
// CHECK-NOT:     linalg.fill
func.func @zero_init(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// -----

// A fill with another value stays; beta stays 1.
// CHECK-LABEL: func.func @nonzero_init(
// CHECK:         linalg.fill
// CHECK:         call @dnnl_sgemm
func.func @nonzero_init(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%two : f32) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// -----

// One call per batch, pointers advanced by the batch stride.
// CHECK-LABEL: func.func @batch(
// CHECK:         scf.for
// CHECK:           call @dnnl_sgemm
// CHECK-NOT:     linalg.batch_matmul
func.func @batch(%a: memref<3x33x65xf32>, %b: memref<3x65x17xf32>, %c: memref<3x33x17xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x33x65xf32>, memref<3x65x17xf32>) outs(%c : memref<3x33x17xf32>)
  return
}

// -----

// A view into a wider buffer: the leading dimension is its row stride.
// CHECK-LABEL: func.func @view(
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK:         %[[LDA:.*]] = arith.index_cast %[[STRIDES]]#0 : index to i64
// CHECK:         call @dnnl_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LDA]],
func.func @view(%a: memref<64x32xf32, strided<[100, 1], offset: 7>>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32, strided<[100, 1], offset: 7>>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}

// -----

// Too small for the default threshold, f64, or columns not contiguous:
// loops stay.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     dnnl_sgemm
// CHECK-COUNT-3: linalg.matmul
// ALL-LABEL: func.func @stays(
// ALL:         call @dnnl_sgemm
// ALL-NOT:     call @dnnl_sgemm
// ALL-COUNT-2: linalg.matmul
func.func @stays(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>,
                 %d: memref<64x64xf64>, %e: memref<64x64xf64>,
                 %t: memref<64x64xf32, strided<[1, 64]>>, %u: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matmul ins(%d, %d : memref<64x64xf64>, memref<64x64xf64>) outs(%e : memref<64x64xf64>)
  linalg.matmul ins(%t, %u : memref<64x64xf32, strided<[1, 64]>>, memref<64x64xf32>) outs(%u : memref<64x64xf32>)
  return
}

// -----

// Operands in a planned arena (memref.view), directly or through other
// view-like ops: the address is the arena's pointer plus the byte shift,
// taken from the arena itself (expand-strided-metadata would fold the
// view's metadata into the arena's and drop the shift), plus the offset
// within the view.
// CHECK-LABEL: func.func @arena_operand(
// CHECK-SAME:    %[[ARENA:[^:]*]]: memref<65536xi8>
// CHECK:         %[[SHIFT:.*]] = arith.constant 16384 : index
// CHECK:         %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK:         arith.addi %[[PTR]], %[[SHIFT]] : index
// CHECK:         call @dnnl_sgemm
// CHECK-LABEL: func.func @arena_subview_operand(
// CHECK-SAME:    %[[ARENA2:[^:]*]]: memref<65536xi8>
// CHECK:         %[[SHIFT2:.*]] = arith.constant 16384 : index
// CHECK:         %[[SUB:.*]] = memref.subview
// CHECK:         %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[SUB]]
// CHECK:         %[[PTR2:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA2]]
// CHECK:         %[[BASE2:.*]] = arith.addi %[[PTR2]], %[[SHIFT2]] : index
// CHECK:         %[[BYTES:.*]] = arith.muli %[[OFF]], %{{.*}} : index
// CHECK:         arith.addi %[[BASE2]], %[[BYTES]] : index
// CHECK:         call @dnnl_sgemm
// CHECK-NOT:     linalg.matmul
func.func @arena_operand(%arena: memref<65536xi8>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %shift = arith.constant 16384 : index
  %a = memref.view %arena[%shift][] : memref<65536xi8> to memref<64x64xf32>
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
func.func @arena_subview_operand(%arena: memref<65536xi8>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %shift = arith.constant 16384 : index
  %v = memref.view %arena[%shift][] : memref<65536xi8> to memref<128x64xf32>
  %a = memref.subview %v[64, 0] [64, 64] [1, 1] : memref<128x64xf32> to memref<64x64xf32, strided<[64, 1], offset: 4096>>
  linalg.matmul ins(%a, %b : memref<64x64xf32, strided<[64, 1], offset: 4096>>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
