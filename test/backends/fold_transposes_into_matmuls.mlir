// kiln-fold-transposes-into-matmuls: a product reads the source of a
// transposed copy in place; the copy and its buffer go.
// RUN: kiln-opt %s --split-input-file --kiln-fold-transposes-into-matmuls | FileCheck %s

// dY * W^T: B read as [n, k].
// CHECK-DAG:   #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @transposed_b(
// CHECK-SAME:    %[[DY:.*]]: memref<64x32xf32>, %[[W:.*]]: memref<48x32xf32>, %[[OUT:.*]]: memref<64x48xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[BT]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[DY]], %[[W]] : memref<64x32xf32>, memref<48x32xf32>) outs(%[[OUT]] : memref<64x48xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
func.func @transposed_b(%dy: memref<64x32xf32>, %w: memref<48x32xf32>, %out: memref<64x48xf32>) {
  %wt = memref.alloc() : memref<32x48xf32>
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) permutation = [1, 0]
  linalg.matmul ins(%dy, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  return
}

// -----

// X^T * dY: A read as [k, m]; ops in between that write other buffers do
// not matter.
// CHECK-DAG:   #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @transposed_a(
// CHECK-SAME:    %[[X:[^:]*]]: memref<32x64xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.fill
// CHECK:         linalg.generic {indexing_maps = [#[[AT]],
// CHECK-SAME:      ins(%[[X]], %{{.*}} : memref<32x64xf32>, memref<32x48xf32>)
func.func @transposed_a(%x: memref<32x64xf32>, %dy: memref<32x48xf32>, %out: memref<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<64x32xf32>
  linalg.transpose ins(%x : memref<32x64xf32>) outs(%xt : memref<64x32xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%out : memref<64x48xf32>)
  linalg.matmul ins(%xt, %dy : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  return
}

// -----

// Both operands transposed, one of them by a transposing generic.
// CHECK-DAG:   #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG:   #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @both(
// CHECK-SAME:    %[[A:[^:]*]]: memref<32x64xf32>, %[[B:[^:]*]]: memref<48x32xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic {indexing_maps = [#[[AT]], #[[BT]],
// CHECK-SAME:      ins(%[[A]], %[[B]] :
// CHECK-NOT:     linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
func.func @both(%a: memref<32x64xf32>, %b: memref<48x32xf32>, %out: memref<64x48xf32>) {
  %at = memref.alloc() : memref<64x32xf32>
  linalg.transpose ins(%a : memref<32x64xf32>) outs(%at : memref<64x32xf32>) permutation = [1, 0]
  %bt = memref.alloc() : memref<32x48xf32>
  linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<48x32xf32>) outs(%bt : memref<32x48xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.matmul ins(%at, %bt : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  return
}

// -----

// Attention's Q * K^T: a batched product with the last two dims of K
// swapped.
// CHECK-DAG:   #[[KT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @batched(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<4x16x8xf32>, %[[K:[^:]*]]: memref<4x16x8xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[KT]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[Q]], %[[K]] :
func.func @batched(%q: memref<4x16x8xf32>, %k: memref<4x16x8xf32>, %out: memref<4x16x16xf32>) {
  %kt = memref.alloc() : memref<4x8x16xf32>
  linalg.transpose ins(%k : memref<4x16x8xf32>) outs(%kt : memref<4x8x16xf32>) permutation = [0, 2, 1]
  linalg.batch_matmul ins(%q, %kt : memref<4x16x8xf32>, memref<4x8x16xf32>) outs(%out : memref<4x16x16xf32>)
  return
}

// -----

// The transposed copy is read by something else too: it stays.
// CHECK-LABEL: func.func @copy_used_twice(
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul
func.func @copy_used_twice(%w: memref<48x32xf32>, %dy: memref<64x32xf32>, %out: memref<64x48xf32>, %keep: memref<32x48xf32>) {
  %wt = memref.alloc() : memref<32x48xf32>
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) permutation = [1, 0]
  linalg.matmul ins(%dy, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  memref.copy %wt, %keep : memref<32x48xf32> to memref<32x48xf32>
  return
}

// -----

// The source is overwritten between the copy and the product: reading it
// in place would see the new values, so the copy stays.
// CHECK-LABEL: func.func @source_overwritten(
// CHECK:         linalg.transpose
// CHECK:         linalg.fill
// CHECK:         linalg.matmul
func.func @source_overwritten(%dy: memref<64x32xf32>, %out: memref<64x48xf32>) {
  %one = arith.constant 1.0 : f32
  %w = memref.alloc() : memref<48x32xf32>
  linalg.fill ins(%one : f32) outs(%w : memref<48x32xf32>)
  %wt = memref.alloc() : memref<32x48xf32>
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) permutation = [1, 0]
  %view = memref.subview %w[0, 0] [16, 32] [1, 1] : memref<48x32xf32> to memref<16x32xf32, strided<[32, 1]>>
  linalg.fill ins(%one : f32) outs(%view : memref<16x32xf32, strided<[32, 1]>>)
  linalg.matmul ins(%dy, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  return
}

// -----

// A call in between may write anything: the copy stays.
// CHECK-LABEL: func.func @unknown_write(
// CHECK:         linalg.transpose
// CHECK:         call @opaque
// CHECK:         linalg.matmul
func.func private @opaque(memref<48x32xf32>)
func.func @unknown_write(%w: memref<48x32xf32>, %dy: memref<64x32xf32>, %out: memref<64x48xf32>) {
  %wt = memref.alloc() : memref<32x48xf32>
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) permutation = [1, 0]
  func.call @opaque(%w) : (memref<48x32xf32>) -> ()
  linalg.matmul ins(%dy, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  return
}

// -----

// A copy that computes (relu of the transposed source) is no permutation:
// it stays.
// CHECK-LABEL: func.func @computing_copy(
// CHECK:         linalg.generic
// CHECK:           arith.maximumf
// CHECK:         linalg.matmul
#id = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
func.func @computing_copy(%w: memref<48x32xf32>, %dy: memref<64x32xf32>, %out: memref<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %wt = memref.alloc() : memref<32x48xf32>
  linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  linalg.matmul ins(%dy, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  return
}

// -----

// Bufferization may transpose into an out-param that is written later:
// overwritten whole after the product, so the copy is only the product's.
// CHECK-LABEL: func.func @into_out_param(
// CHECK-SAME:    %[[W:[^:]*]]: memref<48x32xf32>, %{{.*}}: memref<64x32xf32>, %{{.*}}: memref<64x48xf32>, %[[G:[^:]*]]: memref<32x48xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %[[W]] :
// CHECK:         linalg.fill {{.*}} outs(%[[G]]
func.func @into_out_param(%w: memref<48x32xf32>, %dy: memref<64x32xf32>, %out: memref<64x48xf32>, %grad: memref<32x48xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%grad : memref<32x48xf32>) permutation = [1, 0]
  linalg.matmul ins(%dy, %grad : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  linalg.fill ins(%zero : f32) outs(%grad : memref<32x48xf32>)
  return
}

// -----

// The out-param keeps the transposed values as the function's result: the
// copy stays.
// CHECK-LABEL: func.func @out_param_result(
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul
func.func @out_param_result(%w: memref<48x32xf32>, %dy: memref<64x32xf32>, %out: memref<64x48xf32>, %wt: memref<32x48xf32>) {
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) permutation = [1, 0]
  linalg.matmul ins(%dy, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  return
}

// -----

// Read again after the product (an accumulation into it): the copy stays.
// CHECK-LABEL: func.func @read_after(
// CHECK:         linalg.transpose
// CHECK:         linalg.matmul
func.func @read_after(%w: memref<48x32xf32>, %dy: memref<64x32xf32>, %out: memref<64x48xf32>, %acc: memref<32x48xf32>) {
  %wt = memref.alloc() : memref<32x48xf32>
  linalg.transpose ins(%w : memref<48x32xf32>) outs(%wt : memref<32x48xf32>) permutation = [1, 0]
  linalg.matmul ins(%dy, %wt : memref<64x32xf32>, memref<32x48xf32>) outs(%out : memref<64x48xf32>)
  linalg.add ins(%acc, %wt : memref<32x48xf32>, memref<32x48xf32>) outs(%acc : memref<32x48xf32>)
  return
}

// -----

// In a loop body (an RNN's backward step): the source is a view of a loop
// argument, and the ops in between write only buffers allocated after it,
// which cannot be it. The buffer is transposed into again after the first
// product (overwritten whole), so both copies go. (A product into %out
// would keep its copy: a function argument may be the loop argument.)
// CHECK-LABEL: func.func @in_loop(
// CHECK:         scf.for
// CHECK-NOT:       linalg.transpose
// CHECK:           linalg.fill
// CHECK:           linalg.generic
// CHECK:           linalg.generic
// CHECK-NOT:       linalg.transpose
func.func @in_loop(%hs: memref<4x32x64xf32>, %g: memref<32x48xf32>, %out: memref<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %hs) -> (memref<4x32x64xf32>) {
    %s = memref.subview %h[%i, 0, 0] [1, 32, 64] [1, 1, 1] : memref<4x32x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
    %ht = memref.alloc() : memref<64x32xf32>
    linalg.transpose ins(%s : memref<32x64xf32, strided<[64, 1], offset: ?>>) outs(%ht : memref<64x32xf32>) permutation = [1, 0]
    %acc = memref.alloc() : memref<64x48xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<64x48xf32>)
    linalg.matmul ins(%ht, %g : memref<64x32xf32>, memref<32x48xf32>) outs(%acc : memref<64x48xf32>)
    linalg.transpose ins(%s : memref<32x64xf32, strided<[64, 1], offset: ?>>) outs(%ht : memref<64x32xf32>) permutation = [1, 0]
    linalg.matmul ins(%ht, %g : memref<64x32xf32>, memref<32x48xf32>) outs(%acc : memref<64x48xf32>)
    memref.copy %acc, %out : memref<64x48xf32> to memref<64x48xf32>
    scf.yield %h : memref<4x32x64xf32>
  }
  return
}

// -----

// A loop-invariant transpose whose buffer is allocated before the loop
// (W^T of a recurrence's backward step): nothing but the copy and the
// product uses the buffer, so the copy goes and the buffer with it.
// CHECK-DAG:   #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @allocated_before_loop(
// CHECK-SAME:    %[[DA:[^:]*]]: memref<32x64xf32>, %[[W:[^:]*]]: memref<64x64xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for
// CHECK-NOT:       linalg.transpose
// CHECK:           linalg.generic {indexing_maps = [#{{.*}}, #[[BT]], #{{.*}}]
// CHECK-SAME:        ins(%[[DA]], %[[W]] : memref<32x64xf32>, memref<64x64xf32>)
// CHECK-NOT:     memref.dealloc
func.func @allocated_before_loop(%da: memref<32x64xf32>, %w: memref<64x64xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %wt = memref.alloc() : memref<64x64xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.transpose ins(%w : memref<64x64xf32>) outs(%wt : memref<64x64xf32>) permutation = [1, 0]
    linalg.matmul ins(%da, %wt : memref<32x64xf32>, memref<64x64xf32>) outs(%out : memref<32x64xf32>)
  }
  memref.dealloc %wt : memref<64x64xf32>
  return
}

// -----

// The same buffer also read after the loop: the copy stays.
// CHECK-LABEL: func.func @allocated_before_loop_read_after(
// CHECK:         scf.for
// CHECK:           linalg.transpose
// CHECK:           linalg.matmul
func.func @allocated_before_loop_read_after(%da: memref<32x64xf32>, %w: memref<64x64xf32>, %out: memref<32x64xf32>, %copy: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %wt = memref.alloc() : memref<64x64xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.transpose ins(%w : memref<64x64xf32>) outs(%wt : memref<64x64xf32>) permutation = [1, 0]
    linalg.matmul ins(%da, %wt : memref<32x64xf32>, memref<64x64xf32>) outs(%out : memref<32x64xf32>)
  }
  memref.copy %wt, %copy : memref<64x64xf32> to memref<64x64xf32>
  return
}

// -----

// A product whose result is only read transposed (a weight gradient
// (X^T dY)^T for a weight stored [out, in]) writes the transpose itself:
// C^T = dY^T X, the inputs swapped so that the rows run over the first
// one's dims, and each read by the body as before. The fill moves to the
// target; C, its copy and its deallocation go.
// CHECK-DAG:   #[[DYT:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG:   #[[XT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed_result(
// CHECK-SAME:    %[[X:.*]]: memref<64x32xf32>, %[[DY:.*]]: memref<64x48xf32>, %[[DW:.*]]: memref<48x32xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT:    linalg.fill ins(%[[ZERO]] : f32) outs(%[[DW]] : memref<48x32xf32>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[DYT]], #[[XT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[DY]], %[[X]] : memref<64x48xf32>, memref<64x32xf32>) outs(%[[DW]] : memref<48x32xf32>)
// CHECK-NEXT:    ^bb0(%[[D:.*]]: f32, %[[XE:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[XE]], %[[D]] : f32
// CHECK-NEXT:      arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     memref.dealloc
func.func @transposed_result(%x: memref<64x32xf32>, %dy: memref<64x48xf32>, %dw: memref<48x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<32x64xf32>
  linalg.transpose ins(%x : memref<64x32xf32>) outs(%xt : memref<32x64xf32>) permutation = [1, 0]
  %c = memref.alloc() : memref<32x48xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<32x48xf32>)
  linalg.matmul ins(%xt, %dy : memref<32x64xf32>, memref<64x48xf32>) outs(%c : memref<32x48xf32>)
  linalg.transpose ins(%c : memref<32x48xf32>) outs(%dw : memref<48x32xf32>) permutation = [1, 0]
  memref.dealloc %c : memref<32x48xf32>
  memref.dealloc %xt : memref<32x64xf32>
  return
}

// -----

// The transposed result is allocated after the product (as bufferization
// places it): the allocation moves up to the product, which writes it.
// CHECK-LABEL: func.func @transposed_result_allocated_after(
// CHECK-SAME:    %[[X:.*]]: memref<64x32xf32>, %[[DY:.*]]: memref<64x48xf32>, %[[DW:.*]]: memref<48x32xf32>)
// CHECK:         %[[T:.*]] = memref.alloc() : memref<48x32xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[T]] : memref<48x32xf32>)
// CHECK-NEXT:    linalg.generic
// CHECK-SAME:      ins(%[[DY]], %[[X]] : memref<64x48xf32>, memref<64x32xf32>) outs(%[[T]] : memref<48x32xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[T]] : memref<48x32xf32>) outs(%[[DW]] : memref<48x32xf32>)
// CHECK-NOT:     memref.alloc
#id_after = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposed_result_allocated_after(%x: memref<64x32xf32>, %dy: memref<64x48xf32>, %dw: memref<48x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<32x64xf32>
  linalg.transpose ins(%x : memref<64x32xf32>) outs(%xt : memref<32x64xf32>) permutation = [1, 0]
  %c = memref.alloc() : memref<32x48xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<32x48xf32>)
  linalg.matmul ins(%xt, %dy : memref<32x64xf32>, memref<64x48xf32>) outs(%c : memref<32x48xf32>)
  %t = memref.alloc() : memref<48x32xf32>
  linalg.transpose ins(%c : memref<32x48xf32>) outs(%t : memref<48x32xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [#id_after, #id_after], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<48x32xf32>) outs(%dw : memref<48x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  memref.dealloc %c : memref<32x48xf32>
  memref.dealloc %xt : memref<32x64xf32>
  memref.dealloc %t : memref<48x32xf32>
  return
}

// -----

// A transposed result that another product reads (K^T in Q K^T): the
// reader takes it in place, transposed (its B read as [n, k]); the first
// product keeps writing its own result, and no transpose is left.
// CHECK-DAG:   #[[QA:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[KB:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @transposed_result_read_by_a_product(
// CHECK-SAME:    %[[X:.*]]: memref<64x128xf32>, %[[W:.*]]: memref<128x128xf32>, %[[Q:.*]]: memref<64x128xf32>, %[[S:.*]]: memref<64x64xf32>)
// CHECK:         %[[K:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK:         linalg.matmul ins(%[[X]], %[[W]] : memref<64x128xf32>, memref<128x128xf32>) outs(%[[K]] : memref<64x128xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[QA]], #[[KB]], #{{.*}}]
// CHECK-SAME:      ins(%[[Q]], %[[K]] : memref<64x128xf32>, memref<64x128xf32>) outs(%[[S]] : memref<64x64xf32>)
func.func @transposed_result_read_by_a_product(%x: memref<64x128xf32>, %w: memref<128x128xf32>, %q: memref<64x128xf32>, %s: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %k = memref.alloc() : memref<64x128xf32>
  linalg.fill ins(%zero : f32) outs(%k : memref<64x128xf32>)
  linalg.matmul ins(%x, %w : memref<64x128xf32>, memref<128x128xf32>) outs(%k : memref<64x128xf32>)
  %kt = memref.alloc() : memref<128x64xf32>
  linalg.transpose ins(%k : memref<64x128xf32>) outs(%kt : memref<128x64xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%s : memref<64x64xf32>)
  linalg.matmul ins(%q, %kt : memref<64x128xf32>, memref<128x64xf32>) outs(%s : memref<64x64xf32>)
  memref.dealloc %kt : memref<128x64xf32>
  memref.dealloc %k : memref<64x128xf32>
  return
}

// -----

// A batch of products transposed per matrix: the batch stays first.
// CHECK-DAG:   #[[BB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG:   #[[BA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG:   #[[BOUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @batched_transposed_result(
// CHECK-SAME:    %[[A:.*]]: memref<3x8x5xf32>, %[[B:.*]]: memref<3x5x6xf32>, %[[OUT:.*]]: memref<3x6x8xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<3x6x8xf32>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[BB]], #[[BA]], #[[BOUT]]]
// CHECK-SAME:      ins(%[[B]], %[[A]] : memref<3x5x6xf32>, memref<3x8x5xf32>) outs(%[[OUT]] : memref<3x6x8xf32>)
// CHECK-NOT:     linalg.transpose
func.func @batched_transposed_result(%a: memref<3x8x5xf32>, %b: memref<3x5x6xf32>, %out: memref<3x6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<3x8x6xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<3x8x6xf32>)
  linalg.batch_matmul ins(%a, %b : memref<3x8x5xf32>, memref<3x5x6xf32>) outs(%c : memref<3x8x6xf32>)
  linalg.transpose ins(%c : memref<3x8x6xf32>) outs(%out : memref<3x6x8xf32>) permutation = [0, 2, 1]
  memref.dealloc %c : memref<3x8x6xf32>
  return
}

// -----

// Left as they are: a permutation that moves the batch (no GEMM form
// after it); a result also read untransposed; a target read between the
// product and the copy; a product that reads the target; a result without
// a fill before the product.
// CHECK-LABEL: func.func @results_left_alone(
// CHECK-COUNT-5: linalg.transpose
// CHECK-NOT:     linalg.generic
func.func @results_left_alone(%a: memref<3x8x5xf32>, %b: memref<3x5x6xf32>, %out: memref<8x3x6xf32>,
                              %x: memref<6x6xf32>, %y: memref<6x6xf32>, %t: memref<6x6xf32>, %keep: memref<6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<3x8x6xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<3x8x6xf32>)
  linalg.batch_matmul ins(%a, %b : memref<3x8x5xf32>, memref<3x5x6xf32>) outs(%c : memref<3x8x6xf32>)
  linalg.transpose ins(%c : memref<3x8x6xf32>) outs(%out : memref<8x3x6xf32>) permutation = [1, 0, 2]
  memref.dealloc %c : memref<3x8x6xf32>

  %d = memref.alloc() : memref<6x6xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<6x6xf32>)
  linalg.matmul ins(%x, %y : memref<6x6xf32>, memref<6x6xf32>) outs(%d : memref<6x6xf32>)
  linalg.transpose ins(%d : memref<6x6xf32>) outs(%t : memref<6x6xf32>) permutation = [1, 0]
  memref.copy %d, %keep : memref<6x6xf32> to memref<6x6xf32>
  memref.dealloc %d : memref<6x6xf32>

  %e = memref.alloc() : memref<6x6xf32>
  linalg.fill ins(%zero : f32) outs(%e : memref<6x6xf32>)
  linalg.matmul ins(%x, %y : memref<6x6xf32>, memref<6x6xf32>) outs(%e : memref<6x6xf32>)
  memref.copy %t, %keep : memref<6x6xf32> to memref<6x6xf32>
  linalg.transpose ins(%e : memref<6x6xf32>) outs(%t : memref<6x6xf32>) permutation = [1, 0]
  memref.dealloc %e : memref<6x6xf32>

  %f = memref.alloc() : memref<6x6xf32>
  linalg.fill ins(%zero : f32) outs(%f : memref<6x6xf32>)
  linalg.matmul ins(%x, %t : memref<6x6xf32>, memref<6x6xf32>) outs(%f : memref<6x6xf32>)
  linalg.transpose ins(%f : memref<6x6xf32>) outs(%t : memref<6x6xf32>) permutation = [1, 0]
  memref.dealloc %f : memref<6x6xf32>

  %g = memref.alloc() : memref<6x6xf32>
  linalg.matmul ins(%x, %y : memref<6x6xf32>, memref<6x6xf32>) outs(%g : memref<6x6xf32>)
  linalg.transpose ins(%g : memref<6x6xf32>) outs(%t : memref<6x6xf32>) permutation = [1, 0]
  memref.dealloc %g : memref<6x6xf32>
  return
}
