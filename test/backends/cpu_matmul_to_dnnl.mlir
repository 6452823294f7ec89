// kiln-cpu-matmul-to-dnnl turns f32 matmuls on memrefs into oneDNN sgemm
// calls (row-major, beta 1, transposed operands in place), and those that
// read B transposed and A not, and every bf16 one, into kiln_dnnl_matmul
// calls (oneDNN's matmul primitive, cached in a slot per call site); small,
// f64 and column-strided ones stay. The products of few rows by a constant
// B that kiln's packed kernel takes (`packed=query`, the default: at most
// 16 rows on every CPU), and the transposed copies of the other constant
// Bs where oneDNN on the compiling CPU would read B unpacked, are checked
// with `packed=always` (PACKED, the last cases) and `query` (QUERY); the
// other runs say `never`, so that what they check does not depend on the
// CPU.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-matmul-to-dnnl=packed=never \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-matmul-to-dnnl="min-macs=1 packed=never" \
// RUN:   | FileCheck %s --check-prefix=ALL
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-matmul-to-dnnl="min-macs=1 packed=always" --cse \
// RUN:   | FileCheck %s --check-prefix=PACKED

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

// Too small for the default threshold, f64, or neither rows nor columns
// contiguous: loops stay.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     dnnl_sgemm
// CHECK-COUNT-3: linalg.matmul
// ALL-LABEL: func.func @stays(
// ALL:         call @dnnl_sgemm
// ALL-NOT:     call @dnnl_sgemm
// ALL-COUNT-2: linalg.matmul
func.func @stays(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>,
                 %d: memref<64x64xf64>, %e: memref<64x64xf64>,
                 %t: memref<64x64xf32, strided<[128, 2]>>, %u: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matmul ins(%d, %d : memref<64x64xf64>, memref<64x64xf64>) outs(%e : memref<64x64xf64>)
  linalg.matmul ins(%t, %u : memref<64x64xf32, strided<[128, 2]>>, memref<64x64xf32>) outs(%u : memref<64x64xf32>)
  return
}

// -----

// A column-major view (a transposed strided view of a row-major buffer) is
// read with the 'T' flag, its column stride the leading dimension; a
// column-major result is not an sgemm.
// CHECK-LABEL: func.func @column_major(
// CHECK-SAME:    %[[A:[^:]*]]: memref<64x32xf32, strided<[1, 70]>>
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK-DAG:     %[[T:.*]] = arith.constant 84 : i32
// CHECK-DAG:     %[[N:.*]] = arith.constant 78 : i32
// CHECK-DAG:     %[[LDA:.*]] = arith.index_cast %[[STRIDES]]#1 : index to i64
// CHECK:         call @dnnl_sgemm(%[[T]], %[[N]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LDA]],
// CHECK:         linalg.matmul
func.func @column_major(%a: memref<64x32xf32, strided<[1, 70]>>, %b: memref<32x48xf32>, %c: memref<64x48xf32>,
                        %ct: memref<64x48xf32, strided<[1, 64]>>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32, strided<[1, 70]>>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf32, strided<[1, 70]>>, memref<32x48xf32>) outs(%ct : memref<64x48xf32, strided<[1, 64]>>)
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

// -----

// Transposed operands are read in place with sgemm's 'T' flag ('T' = 84,
// 'N' = 78): the named _transpose_a/_b ops, a contraction generic with both
// operands transposed, and a batched one reading K as [b, n, k]. The
// leading dimension is the row stride of the stored (untransposed) matrix.
// CHECK-LABEL: func.func @transposed_a(
// CHECK-DAG:     %[[T:.*]] = arith.constant 84 : i32
// CHECK-DAG:     %[[N:.*]] = arith.constant 78 : i32
// CHECK-DAG:     %[[M:.*]] = arith.constant 64 : i64
// CHECK-DAG:     %[[NN:.*]] = arith.constant 48 : i64
// CHECK-DAG:     %[[K:.*]] = arith.constant 32 : i64
// CHECK:         call @dnnl_sgemm(%[[T]], %[[N]], %[[M]], %[[NN]], %[[K]],
// CHECK-NOT:     linalg.matmul_transpose_a
func.func @transposed_a(%a: memref<32x64xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul_transpose_a ins(%a, %b : memref<32x64xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}
// B transposed and A not: the matmul primitive, with flags 2 (B
// transposed) + 4 (accumulate: no zero fill before), batch 1 and batch
// strides 0, through a slot of its own, and a null bias.
// CHECK-LABEL: func.func @transposed_b(
// CHECK-DAG:     %[[SLOT:.*]] = memref.get_global @kiln_dnnl_matmul_slot : memref<1xi64>
// CHECK-DAG:     %[[FLAGS:.*]] = arith.constant 6 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[M:.*]] = arith.constant 64 : i64
// CHECK-DAG:     %[[NN:.*]] = arith.constant 48 : i64
// CHECK-DAG:     %[[K:.*]] = arith.constant 32 : i64
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[FLAGS]], %[[ONE]], %[[M]], %[[NN]], %[[K]], %{{.*}}, %{{.*}}, %[[ZERO]], %{{.*}}, %{{.*}}, %[[ZERO]], %{{.*}}, %{{.*}}, %[[ZERO]], %[[NULL]]) : (!llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr) -> ()
// CHECK-NOT:     dnnl_sgemm
func.func @transposed_b(%a: memref<64x32xf32>, %b: memref<48x32xf32>, %c: memref<64x48xf32>) {
  linalg.matmul_transpose_b ins(%a, %b : memref<64x32xf32>, memref<48x32xf32>) outs(%c : memref<64x48xf32>)
  return
}
// CHECK-LABEL: func.func @transposed_both(
// CHECK-SAME:    %[[A:[^:]*]]: memref<32x64xf32, strided<[80, 1]>>
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK-DAG:     %[[T:.*]] = arith.constant 84 : i32
// CHECK-DAG:     %[[M:.*]] = arith.constant 64 : i64
// CHECK-DAG:     %[[NN:.*]] = arith.constant 48 : i64
// CHECK-DAG:     %[[K:.*]] = arith.constant 32 : i64
// CHECK-DAG:     %[[LDA:.*]] = arith.index_cast %[[STRIDES]]#0 : index to i64
// CHECK:         call @dnnl_sgemm(%[[T]], %[[T]], %[[M]], %[[NN]], %[[K]], %{{.*}}, %{{.*}}, %[[LDA]],
// CHECK-NOT:     linalg.generic
#at = affine_map<(d0, d1, d2) -> (d2, d0)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @transposed_both(%a: memref<32x64xf32, strided<[80, 1]>>, %b: memref<48x32xf32>, %c: memref<64x48xf32>) {
  linalg.generic {indexing_maps = [#at, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x64xf32, strided<[80, 1]>>, memref<48x32xf32>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// Four products of 64x64x32 with B transposed: one call of the primitive
// for the whole batch, its batch strides those of the memrefs.
// CHECK-LABEL: func.func @batched_transposed_b(
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}:3, %[[QS:.*]]:3 = memref.extract_strided_metadata %arg0
// CHECK-DAG:     %[[FLAGS:.*]] = arith.constant 6 : i64
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK-DAG:     %[[QB:.*]] = arith.index_cast %[[QS]]#0 : index to i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[FLAGS]], %[[FOUR]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[QB]],
// CHECK-NOT:     scf.parallel
// CHECK-NOT:     linalg.batch_matmul_transpose_b
func.func @batched_transposed_b(%q: memref<4x64x32xf32>, %k: memref<4x64x32xf32>, %s: memref<4x64x64xf32>) {
  linalg.batch_matmul_transpose_b ins(%q, %k : memref<4x64x32xf32>, memref<4x64x32xf32>) outs(%s : memref<4x64x64xf32>)
  return
}

// -----

// Many small products that sgemm runs (B not transposed): a parallel loop
// over the batch, worth the multiply-adds of one product per iteration.
// CHECK-LABEL: func.func @batched_small(
// CHECK-DAG:     %[[N:.*]] = arith.constant 78 : i32
// CHECK:         scf.parallel
// CHECK:           call @dnnl_sgemm(%[[N]], %[[N]],
// CHECK:         } {kiln.body_work = 131072 : i64}
// CHECK-NOT:     linalg.batch_matmul
func.func @batched_small(%q: memref<4x64x32xf32>, %k: memref<4x32x64xf32>, %s: memref<4x64x64xf32>) {
  linalg.batch_matmul ins(%q, %k : memref<4x64x32xf32>, memref<4x32x64xf32>) outs(%s : memref<4x64x64xf32>)
  return
}

// -----

// bf16 operands into f32, whatever the transposes: the primitive (flag 8),
// and a zero fill before is dropped (no accumulate flag 4). One slot per
// call site.
// CHECK-LABEL: memref.global "private" @kiln_dnnl_matmul_slot : memref<1xi64> = dense<0> {alignment = 8 : i64}
// CHECK:       memref.global "private" @kiln_dnnl_matmul_slot_0 : memref<1xi64> = dense<0> {alignment = 8 : i64}
// CHECK-LABEL: func.func @bf16(
// CHECK-NOT:     linalg.fill
// CHECK:         %[[PLAIN:.*]] = arith.constant 8 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[PLAIN]],
// CHECK:         %[[BOTH:.*]] = arith.constant 15 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[BOTH]],
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     dnnl_sgemm
#at = affine_map<(d0, d1, d2) -> (d2, d0)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @bf16(%a: memref<64x32xbf16>, %b: memref<32x48xbf16>, %c: memref<64x48xf32>,
                %at: memref<32x64xbf16>, %bt: memref<48x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xbf16>, memref<32x48xbf16>) outs(%c : memref<64x48xf32>)
  linalg.generic {indexing_maps = [#at, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%at, %bt : memref<32x64xbf16>, memref<48x32xbf16>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 8-bit operands widened into i32: the primitive's int8 kernels (flag 64),
// uint8 A or B where the body widens it with extui (flags 128 and 256),
// signed otherwise, whatever the transposes; a zero fill of C is dropped as
// for floats, and without one the call adds to C (flag 4). The named i8
// matmul widens both signed. An i32 product of i32 operands stays.
// CHECK-LABEL: func.func @int8(
// CHECK-NOT:     linalg.fill
// CHECK:         %[[UNSIGNED:.*]] = arith.constant 192 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[UNSIGNED]],
// CHECK:         %[[ACCUMULATE:.*]] = arith.constant 70 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[ACCUMULATE]],
// CHECK:         %[[NAMED:.*]] = arith.constant 64 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[NAMED]],
// CHECK:         %[[BOTH:.*]] = arith.constant 452 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[BOTH]],
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.matmul ins(%{{.*}} : memref<64x32xi32>, memref<32x48xi32>)
// CHECK-NOT:     kiln_dnnl_matmul
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @int8(%a: memref<64x32xi8>, %b: memref<32x48xi8>, %bt: memref<48x32xi8>,
                %c: memref<64x48xi32>, %a32: memref<64x32xi32>, %b32: memref<32x48xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<64x48xi32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xi8>, memref<32x48xi8>) outs(%c : memref<64x48xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extui %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %bt : memref<64x32xi8>, memref<48x32xi8>) outs(%c : memref<64x48xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extsi %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  linalg.fill ins(%zero : i32) outs(%c : memref<64x48xi32>)
  linalg.matmul ins(%a, %b : memref<64x32xi8>, memref<32x48xi8>) outs(%c : memref<64x48xi32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xi8>, memref<32x48xi8>) outs(%c : memref<64x48xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extui %x : i8 to i32
    %yw = arith.extui %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  linalg.matmul ins(%a32, %b32 : memref<64x32xi32>, memref<32x48xi32>) outs(%c : memref<64x48xi32>)
  return
}

// -----

// Contractions that are no sgemm stay: the result transposed (C read as
// [n, m]), and a product that is not a multiply-add.
// CHECK-LABEL: func.func @no_gemm(
// CHECK-NOT:     dnnl_sgemm
// CHECK-COUNT-2: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#ct = affine_map<(d0, d1, d2) -> (d1, d0)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @no_gemm(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %ct: memref<48x64xf32>, %c: memref<64x48xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #ct], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%ct : memref<48x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A one-row product whose B is a constant global (a recurrence's weights)
// runs through the primitive with B packed once (flags 16, here with
// accumulation 4: 20); one of two rows, and one whose B is a
// mutable global, stay sgemm calls. A static view of the constant counts
// as the constant (flags 16 | 4 | 2, B read transposed: 22).
// CHECK-LABEL: func.func @constant_b(
// CHECK:         %[[F20:.*]] = arith.constant 20 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[F20]],
// CHECK:         call @dnnl_sgemm(
// CHECK:         call @dnnl_sgemm(
// CHECK:         %[[F22:.*]] = arith.constant 22 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[F22]],
memref.global "private" constant @weights : memref<64x256xf32> = dense<0.5>
memref.global "private" @state : memref<64x256xf32> = dense<0.5>
memref.global "private" constant @wide : memref<256x128xf32> = dense<0.25>
func.func @constant_b(%h: memref<1x64xf32>, %h2: memref<2x64xf32>, %c: memref<1x256xf32>, %c2: memref<2x256xf32>, %t: memref<1x64xf32>, %ct: memref<1x256xf32>) {
  %w = memref.get_global @weights : memref<64x256xf32>
  linalg.matmul ins(%h, %w : memref<1x64xf32>, memref<64x256xf32>) outs(%c : memref<1x256xf32>)
  linalg.matmul ins(%h2, %w : memref<2x64xf32>, memref<64x256xf32>) outs(%c2 : memref<2x256xf32>)
  %s = memref.get_global @state : memref<64x256xf32>
  linalg.matmul ins(%h, %s : memref<1x64xf32>, memref<64x256xf32>) outs(%c : memref<1x256xf32>)
  %wide = memref.get_global @wide : memref<256x128xf32>
  %v = memref.subview %wide[0, 0] [256, 64] [1, 1] : memref<256x128xf32> to memref<256x64xf32, strided<[128, 1]>>
  linalg.matmul_transpose_b ins(%t, %v : memref<1x64xf32>, memref<256x64xf32, strided<[128, 1]>>) outs(%ct : memref<1x256xf32>)
  return
}

// -----

// A product of a constant B with at least 2^24 multiply-adds (a
// transformer's projection, 128x768 by 768x256: 25 million) also runs
// through the primitive with B packed once (flags 16 | 4: 20); one below
// the threshold (64x768 by 768x256, 12.6 million) stays an sgemm call, and
// so does the large product of a B that is not constant.
// CHECK-LABEL: func.func @large_constant_b(
// CHECK:         %[[F20:.*]] = arith.constant 20 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[F20]],
// CHECK:         call @dnnl_sgemm(
// CHECK:         call @dnnl_sgemm(
// CHECK-NOT:     call @kiln_dnnl_matmul(
memref.global "private" constant @projection : memref<768x256xf32> = dense<0.5>
func.func @large_constant_b(%x: memref<128x768xf32>, %y: memref<128x256xf32>, %x64: memref<64x768xf32>, %y64: memref<64x256xf32>, %w: memref<768x256xf32>) {
  %p = memref.get_global @projection : memref<768x256xf32>
  linalg.matmul ins(%x, %p : memref<128x768xf32>, memref<768x256xf32>) outs(%y : memref<128x256xf32>)
  linalg.matmul ins(%x64, %p : memref<64x768xf32>, memref<768x256xf32>) outs(%y64 : memref<64x256xf32>)
  linalg.matmul ins(%x, %w : memref<128x768xf32>, memref<768x256xf32>) outs(%y : memref<128x256xf32>)
  return
}

// -----

// A bias row added to the product in place right after it (a dense
// layer's bias): the primitive adds it (flags 16 | 32 = 48, the zero fill
// gone: no accumulation), and the separate pass goes, also past the
// deallocation of the product's A freed after its last use. A bias of another
// shape, or one added into another buffer, stays a pass of its own after
// the call.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @bias_after(
// CHECK-SAME:    %[[BIAS:[^:]*]]: memref<256xf32>
// CHECK:         %[[F48:.*]] = arith.constant 48 : i64
// CHECK:         %{{.*}}, %[[BOFF:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[BIAS]]
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[F48]], {{.*}}, %{{.*}}) : (!llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr) -> ()
// CHECK-NEXT:    memref.dealloc
// CHECK-NOT:     linalg.generic
// CHECK:         %[[F16:.*]] = arith.constant 16 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[F16]],
// CHECK:         linalg.generic
// CHECK:         %[[F16B:.*]] = arith.constant 16 : i64
// CHECK:         call @kiln_dnnl_matmul(%{{.*}}, %[[F16B]],
// CHECK:         linalg.generic
memref.global "private" constant @dense : memref<768x256xf32> = dense<0.5>
func.func @bias_after(%x: memref<128x768xf32>, %y: memref<128x256xf32>, %bias: memref<256xf32>, %rows: memref<128xf32>, %z: memref<128x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @dense : memref<768x256xf32>
  %t = memref.alloc() : memref<128x768xf32>
  memref.copy %x, %t : memref<128x768xf32> to memref<128x768xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<128x256xf32>)
  linalg.matmul ins(%t, %w : memref<128x768xf32>, memref<768x256xf32>) outs(%y : memref<128x256xf32>)
  memref.dealloc %t : memref<128x768xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %bias : memref<128x256xf32>, memref<256xf32>) outs(%y : memref<128x256xf32>) {
  ^bb0(%p: f32, %b: f32, %o: f32):
    %s = arith.addf %b, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%y : memref<128x256xf32>)
  linalg.matmul ins(%x, %w : memref<128x768xf32>, memref<768x256xf32>) outs(%y : memref<128x256xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %rows : memref<128x256xf32>, memref<128xf32>) outs(%y : memref<128x256xf32>) {
  ^bb0(%p: f32, %b: f32, %o: f32):
    %s = arith.addf %p, %b : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%y : memref<128x256xf32>)
  linalg.matmul ins(%x, %w : memref<128x768xf32>, memref<768x256xf32>) outs(%y : memref<128x256xf32>)
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %bias : memref<128x256xf32>, memref<256xf32>) outs(%z : memref<128x256xf32>) {
  ^bb0(%p: f32, %b: f32, %o: f32):
    %s = arith.addf %p, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// With packed=always, products of at most 16 rows by a constant B call
// kiln's packed kernel over a copy of B packed into the module (panels of
// 16 columns, K rows each, zeros past N: the 3x20 B below is 2 panels).
// The second product of the same B shares the copy; B itself goes, since
// nothing else reads it. 16 rows is the most the kernel takes: 17 rows go
// to the primitive over a copy of their constant B transposed, [n, k]
// (flags 4 | 2: read transposed, accumulate; not 16, a constant B that
// the primitive would reorder back), and the constant goes; the product
// by a mutable global stays an sgemm call. The kernel's flags 0 (C
// overwritten: the fill goes) and 2 (accumulate).
// PACKED:       memref.global "private" constant @small_packed : memref<2x3x16xf32> = dense<
// PACKED-SAME:    {{\[\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, {{.*}}, 1.500000e+01], [2.000000e+01, {{.*}}, 3.500000e+01], [4.000000e+01, {{.*}}, 5.500000e+01]]
// PACKED-SAME:    {{\[\[}}1.600000e+01, 1.700000e+01, 1.800000e+01, 1.900000e+01, 0.000000e+00, {{.*}}], [3.600000e+01, 3.700000e+01, 3.800000e+01, 3.900000e+01, 0.000000e+00, {{.*}}], [5.600000e+01, 5.700000e+01, 5.800000e+01, 5.900000e+01, 0.000000e+00, {{.*}}]]]> {alignment = 64 : i64}
// PACKED-NOT:   @small :
// PACKED:       memref.global "private" constant @tall_transposed : memref<20x3xf32> = dense<5.000000e-01> {alignment = 64 : i64}
// PACKED-NOT:   @tall :
// PACKED-NOT:   @tall_packed
// PACKED-LABEL: func.func @packed_b(
// PACKED-NOT:     linalg.fill
// PACKED:         memref.get_global @small_packed : memref<2x3x16xf32>
// PACKED-DAG:     %[[F0:.*]] = arith.constant 0 : i64
// PACKED-DAG:     %[[F2:.*]] = arith.constant 2 : i64
// PACKED-DAG:     %[[N:.*]] = arith.constant 20 : i64
// PACKED-DAG:     %[[K:.*]] = arith.constant 3 : i64
// PACKED:         call @kiln_packed_matmul_f32(%[[F0]], %[[F2]], %[[N]], %[[K]], {{.*}}) : (i64, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> ()
// PACKED-DAG:     %[[M16:.*]] = arith.constant 16 : i64
// PACKED:         call @kiln_packed_matmul_f32(%[[F2]], %[[M16]], %[[N]], %[[K]],
// PACKED:         memref.get_global @tall_transposed : memref<20x3xf32>
// PACKED-DAG:     %[[F6:.*]] = arith.constant 6 : i64
// PACKED-DAG:     %[[M17:.*]] = arith.constant 17 : i64
// PACKED:         call @kiln_dnnl_matmul(%{{.*}}, %[[F6]], %{{.*}}, %[[M17]], %[[N]], %[[K]],
// PACKED:         memref.get_global @mutable
// PACKED:         call @dnnl_sgemm(
// PACKED-NOT:     linalg.matmul
memref.global "private" constant @small : memref<3x20xf32> = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0], [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0]]>
memref.global "private" constant @tall : memref<3x20xf32> = dense<0.5>
memref.global "private" @mutable : memref<3x20xf32> = dense<0.5>
func.func @packed_b(%a2: memref<2x3xf32>, %c2: memref<2x20xf32>, %a16: memref<16x3xf32>, %c16: memref<16x20xf32>, %a17: memref<17x3xf32>, %c17: memref<17x20xf32>) {
  %zero = arith.constant 0.0 : f32
  %b = memref.get_global @small : memref<3x20xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<2x20xf32>)
  linalg.matmul ins(%a2, %b : memref<2x3xf32>, memref<3x20xf32>) outs(%c2 : memref<2x20xf32>)
  linalg.matmul ins(%a16, %b : memref<16x3xf32>, memref<3x20xf32>) outs(%c16 : memref<16x20xf32>)
  %t = memref.get_global @tall : memref<3x20xf32>
  linalg.matmul ins(%a17, %t : memref<17x3xf32>, memref<3x20xf32>) outs(%c17 : memref<17x20xf32>)
  %m = memref.get_global @mutable : memref<3x20xf32>
  linalg.matmul ins(%a2, %m : memref<2x3xf32>, memref<3x20xf32>) outs(%c2 : memref<2x20xf32>)
  return
}

// -----

// B read transposed through a static view of a constant (B[q][j] =
// W[j][q], W 5x4, of which the view takes all): the packed copy holds B's
// columns, W's rows. The other product (17 rows) reads a copy of W
// transposed, and W goes with the view. A read transposed too (flags 1 |
// 2: 3).
// PACKED:       memref.global "private" constant @w_packed : memref<1x4x16xf32> = dense<
// PACKED-SAME:    {{\[\[\[}}0.000000e+00, 4.000000e+00, 8.000000e+00, 1.200000e+01, 1.600000e+01, 0.000000e+00, {{.*}}], [1.000000e+00, 5.000000e+00, 9.000000e+00, 1.300000e+01, 1.700000e+01, 0.000000e+00, {{.*}}], [2.000000e+00, {{.*}}], [3.000000e+00, 7.000000e+00, 1.100000e+01, 1.500000e+01, 1.900000e+01, 0.000000e+00, {{.*}}]]]>
// PACKED:       memref.global "private" constant @w_transposed : memref<4x5xf32> = dense<{{\[\[}}0.000000e+00, 4.000000e+00, 8.000000e+00, 1.200000e+01, 1.600000e+01], [1.000000e+00, 5.000000e+00, {{.*}}]]>
// PACKED-NOT:   @w :
// PACKED-LABEL: func.func @transposed(
// PACKED-NOT:     memref.subview
// PACKED:         %[[F3:.*]] = arith.constant 3 : i64
// PACKED:         call @kiln_packed_matmul_f32(%[[F3]],
// PACKED:         memref.get_global @w_transposed
// PACKED:         call @kiln_dnnl_matmul(
memref.global "private" constant @w : memref<5x4xf32> = dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0]]>
#ta = affine_map<(m, n, k) -> (k, m)>
#tb = affine_map<(m, n, k) -> (n, k)>
#tc = affine_map<(m, n, k) -> (m, n)>
func.func @transposed(%at: memref<4x2xf32>, %c: memref<2x5xf32>, %x: memref<17x5xf32>, %y: memref<17x4xf32>) {
  %w = memref.get_global @w : memref<5x4xf32>
  %v = memref.subview %w[0, 0] [5, 4] [1, 1] : memref<5x4xf32> to memref<5x4xf32, strided<[4, 1]>>
  linalg.generic {indexing_maps = [#ta, #tb, #tc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%at, %v : memref<4x2xf32>, memref<5x4xf32, strided<[4, 1]>>) outs(%c : memref<2x5xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%x, %w : memref<17x5xf32>, memref<5x4xf32>) outs(%y : memref<17x4xf32>)
  return
}

// -----

// A product of enough work (8x512 by 512x256, an LSTM step's shape) runs
// in chunks of two panels (8 * 512 * 32 = 2^17 multiply-adds each), one
// call per chunk in an scf.parallel that says what an iteration costs. A
// splat B whose columns fill whole panels stays a splat. The bias added
// in place after the product goes into the call (flags 4).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// PACKED:       memref.global "private" constant @recurrent_packed : memref<16x512x16xf32> = dense<2.500000e-01> {alignment = 64 : i64}
// PACKED-LABEL: func.func @chunks(
// PACKED:         memref.get_global @recurrent_packed : memref<16x512x16xf32>
// PACKED:         %[[EIGHT:.*]] = arith.constant 8 : index
// PACKED:         scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[EIGHT]]) step (%{{.*}}) {
// PACKED-DAG:       %[[F4:.*]] = arith.constant 4 : i64
// PACKED-DAG:       %[[COLS:.*]] = arith.constant 32 : i64
// PACKED-DAG:       %[[N:.*]] = arith.constant 256 : i64
// PACKED-DAG:       %[[IDX:.*]] = arith.index_cast %[[I]] : index to i64
// PACKED-DAG:       %[[COL:.*]] = arith.muli %[[IDX]], %[[COLS]] : i64
// PACKED-DAG:       %[[LEFT:.*]] = arith.subi %[[N]], %[[COL]] : i64
// PACKED-DAG:       %[[WIDTH:.*]] = arith.minsi %[[COLS]], %[[LEFT]] : i64
// PACKED:           call @kiln_packed_matmul_f32(%[[F4]], %{{.*}}, %[[WIDTH]],
// PACKED:         } {kiln.body_work = 131072 : i64}
// PACKED-NOT:     linalg.generic
memref.global "private" constant @recurrent : memref<512x256xf32> = dense<0.25>
func.func @chunks(%h: memref<8x512xf32>, %g: memref<8x256xf32>, %bias: memref<256xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @recurrent : memref<512x256xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<8x256xf32>)
  linalg.matmul ins(%h, %w : memref<8x512xf32>, memref<512x256xf32>) outs(%g : memref<8x256xf32>)
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %bias : memref<8x256xf32>, memref<256xf32>) outs(%g : memref<8x256xf32>) {
  ^bb0(%p: f32, %b: f32, %o: f32):
    %s = arith.addf %p, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// With `packed=query` (the default) the products of at most 16 rows by a
// constant B take the packed kernel on every CPU, also where oneDNN's
// primitive would pack B itself (AVX-512): here one of 1 row and one of 8.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-matmul-to-dnnl="min-macs=1" --cse \
// RUN:   | FileCheck %s --check-prefix=QUERY
// QUERY:       memref.global "private" constant @gates_packed : memref<2x64x16xf32>
// QUERY-LABEL: func.func @few_rows(
// QUERY-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// QUERY-DAG:     %[[N:.*]] = arith.constant 32 : i64
// QUERY-DAG:     %[[K:.*]] = arith.constant 64 : i64
// QUERY:         call @kiln_packed_matmul_f32(%{{.*}}, %[[ONE]], %[[N]], %[[K]],
// QUERY:         %[[EIGHT:.*]] = arith.constant 8 : i64
// QUERY:         call @kiln_packed_matmul_f32(%{{.*}}, %[[EIGHT]], %[[N]], %[[K]],
// QUERY-NOT:     linalg.matmul
// QUERY:         return
memref.global "private" constant @gates : memref<64x32xf32> = dense<0.125>
func.func @few_rows(%h: memref<1x64xf32>, %g: memref<1x32xf32>, %h8: memref<8x64xf32>, %g8: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @gates : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<1x32xf32>)
  linalg.matmul ins(%h, %w : memref<1x64xf32>, memref<64x32xf32>) outs(%g : memref<1x32xf32>)
  linalg.fill ins(%zero : f32) outs(%g8 : memref<8x32xf32>)
  linalg.matmul ins(%h8, %w : memref<8x64xf32>, memref<64x32xf32>) outs(%g8 : memref<8x32xf32>)
  return
}

// -----

// An unknown packed option is an error.
// RUN: not kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-matmul-to-dnnl=packed=sometimes 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: packed must be 'query', 'always' or 'never', not 'sometimes'
func.func @bad_packed(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  return
}
