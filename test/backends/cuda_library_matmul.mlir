// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-library-matmul | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-library-matmul=tf32=true | FileCheck %s --check-prefix=TF32

// A product after a zero fill of C overwrites C: the fill is dropped and the
// flags have no ACCUMULATE (4). The operands are (flags, ab_dtype, c_dtype,
// batch, m, n, k) then pointer, leading dimension and batch stride of A, B
// and C, then the bias and the bias gradient (null without); f32 is dtype
// 0. Without a batch the strides are 0. A, B and the bias are only read
// (`llvm.readonly`, which lets kiln-cuda-resident-constants pass a constant
// in place), C and the bias gradient are not.
// CHECK-LABEL: func.func private @kiln_cuda_matmul(i64, i64, i64, i64, i64, i64, i64, !llvm.ptr {llvm.readonly}, i64, i64, !llvm.ptr {llvm.readonly}, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr {llvm.readonly}, !llvm.ptr)
// CHECK-LABEL: func.func @overwrite
// CHECK-NOT:     linalg.fill
// CHECK:         %{{.+}}, %{{.+}}, %{{.+}}:2, %[[SA:.+]]:2 = memref.extract_strided_metadata %arg0
// CHECK:         %[[A:.+]] = llvm.inttoptr
// CHECK:         %[[LDA:.+]] = arith.index_cast %[[SA]]#0 : index to i64
// CHECK:         %[[B:.+]] = llvm.inttoptr
// CHECK:         %[[LDB:.+]] = arith.index_cast
// CHECK:         %[[C:.+]] = llvm.inttoptr
// CHECK:         %[[LDC:.+]] = arith.index_cast
// CHECK:         %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @kiln_cuda_matmul(%c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c40_i64{{[_0-9]*}}, %c24_i64{{[_0-9]*}}, %c30_i64{{[_0-9]*}}, %[[A]], %[[LDA]], %c0_i64{{[_0-9]*}}, %[[B]], %[[LDB]], %c0_i64{{[_0-9]*}}, %[[C]], %[[LDC]], %c0_i64{{[_0-9]*}}, %[[NULL]], %[[NULL]])
// CHECK-NOT:     linalg.matmul
// TF32-LABEL: func.func @overwrite
// TF32:         call @kiln_cuda_matmul(%c8_i64{{[_0-9]*}}, %c0_i64
func.func @overwrite(%a: memref<40x30xf32>, %b: memref<30x24xf32>, %c: memref<40x24xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<40x24xf32>)
  linalg.matmul ins(%a, %b : memref<40x30xf32>, memref<30x24xf32>) outs(%c : memref<40x24xf32>)
  return
}

// -----

// Without a zero fill right before, the product accumulates (flags 4), and
// a fill of another value stays.
// CHECK-LABEL: func.func @accumulate
// CHECK:         linalg.fill
// CHECK:         call @kiln_cuda_matmul(%c4_i64{{[_0-9]*}}, %c0_i64
func.func @accumulate(%a: memref<4x3xf32>, %b: memref<3x2xf32>, %c: memref<4x2xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<4x2xf32>)
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x2xf32>) outs(%c : memref<4x2xf32>)
  return
}

// -----

// Batched bf16 into f32 (dtypes 6 and 0) with no fill before: it
// accumulates (flags 4, under tf32=true too, which applies to f32 products
// only). A's leading dimension is its middle stride, its batch stride the
// outer one.
// CHECK-LABEL: func.func @batched_bf16
// CHECK:         %{{.+}}, %{{.+}}, %{{.+}}:3, %[[STRIDES:.+]]:3 = memref.extract_strided_metadata %arg0
// CHECK:         %[[LDA:.+]] = arith.index_cast %[[STRIDES]]#1 : index to i64
// CHECK:         %[[SA:.+]] = arith.index_cast %[[STRIDES]]#0 : index to i64
// CHECK:         call @kiln_cuda_matmul(%c4_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}}, %{{.+}}, %[[LDA]], %[[SA]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// TF32-LABEL: func.func @batched_bf16
// TF32:         call @kiln_cuda_matmul(%c4_i64{{[_0-9]*}}, %c6_i64
func.func @batched_bf16(%a: memref<3x4x5xbf16>, %b: memref<3x5x2xbf16>, %c: memref<3x4x2xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x4x5xbf16>, memref<3x5x2xbf16>) outs(%c : memref<3x4x2xf32>)
  return
}

// -----

// B read transposed (matmul_transpose_b) and A a column-major view (a
// transpose of row-major storage): flags TRANSPOSE_A | TRANSPOSE_B |
// ACCUMULATE = 7, f16 in and out (dtype 5).
// CHECK-LABEL: func.func @transposed
// CHECK:         call @kiln_cuda_matmul(%c7_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}},
func.func @transposed(%at: memref<8x6xf16>, %b: memref<5x8xf16>, %c: memref<6x5xf16>) {
  %a = memref.transpose %at (i, j) -> (j, i) : memref<8x6xf16> to memref<6x8xf16, strided<[1, 6]>>
  linalg.matmul_transpose_b ins(%a, %b : memref<6x8xf16, strided<[1, 6]>>, memref<5x8xf16>) outs(%c : memref<6x5xf16>)
  return
}

// -----

// What the library does not run stays a linalg op for the kernels: integer
// products, f16 into f64, products with an empty dimension, and dynamic
// shapes. No declaration is made when nothing is called.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     call @kiln_cuda_matmul
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT:     func.func private @kiln_cuda_matmul
// CHECK:         // -----
func.func @left_alone(%ai: memref<4x3xi32>, %bi: memref<3x2xi32>, %ci: memref<4x2xi32>,
                      %ah: memref<4x3xf16>, %bh: memref<3x2xf16>, %cd: memref<4x2xf64>,
                      %ae: memref<4x0xf32>, %be: memref<0x2xf32>, %ce: memref<4x2xf32>,
                      %ad: memref<?x3xf32>, %bd: memref<3x2xf32>, %cdyn: memref<?x2xf32>) {
  linalg.matmul ins(%ai, %bi : memref<4x3xi32>, memref<3x2xi32>) outs(%ci : memref<4x2xi32>)
  linalg.matmul ins(%ah, %bh : memref<4x3xf16>, memref<3x2xf16>) outs(%cd : memref<4x2xf64>)
  linalg.matmul ins(%ae, %be : memref<4x0xf32>, memref<0x2xf32>) outs(%ce : memref<4x2xf32>)
  linalg.matmul ins(%ad, %bd : memref<?x3xf32>, memref<3x2xf32>) outs(%cdyn : memref<?x2xf32>)
  return
}

// -----

// A bf16 product into a zero-filled f32 temporary whose only reader rounds
// it to bf16: the product writes bf16 into the truncation's target itself
// (dtypes 6 -> 6); the temporary, its fill, the truncation and the
// deallocation go.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @narrowed
// CHECK-NOT:     memref.alloc
// CHECK:         %{{.+}}, %{{.+}}, %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %arg2
// CHECK:         call @kiln_cuda_matmul(%c0_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}},
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @narrowed(%a: memref<8x4xbf16>, %b: memref<4x2xbf16>, %out: memref<8x2xbf16>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x2xbf16>) outs(%t : memref<8x2xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x2xf32>) outs(%out : memref<8x2xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %t : memref<8x2xf32>
  return
}

// -----

// The truncation's target is the product's own input (bufferization
// reused it in place): the product writes a fresh f16 buffer (dtype 5),
// copied to the target where the truncation was.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @narrowed_in_place
// CHECK:         %[[FRESH:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x4xf16>
// CHECK:         memref.extract_strided_metadata %[[FRESH]]
// CHECK:         call @kiln_cuda_matmul(%c0_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}}, %c5_i64{{[_0-9]*}},
// CHECK-NEXT:    memref.copy %[[FRESH]], %arg1
// CHECK-NEXT:    memref.dealloc %[[FRESH]]
// CHECK-NOT:     linalg.generic
func.func @narrowed_in_place(%a: memref<4x4xf16>, %x: memref<4x4xf16>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4x4xf32>)
  linalg.matmul ins(%a, %x : memref<4x4xf16>, memref<4x4xf16>) outs(%t : memref<4x4xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4x4xf32>) outs(%x : memref<4x4xf16>) {
  ^bb0(%in: f32, %o: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  }
  memref.dealloc %t : memref<4x4xf32>
  return
}

// -----

// Not narrowed: the f32 sums are read again (also returned in f32), or an
// op between the product and the truncation reads the target. The products
// write f32 (dtypes 6 -> 0) and the truncations stay.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @kept_wide
// CHECK:         call @kiln_cuda_matmul(%c0_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}},
// CHECK:         linalg.generic
// CHECK:         memref.copy
// CHECK:         call @kiln_cuda_matmul(%c0_i64{{[_0-9]*}}, %c6_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}},
// CHECK:         memref.copy
// CHECK:         linalg.generic
func.func @kept_wide(%a: memref<8x4xbf16>, %b: memref<4x2xbf16>, %out: memref<8x2xbf16>,
                     %wide: memref<8x2xf32>, %seen: memref<8x2xbf16>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x2xbf16>) outs(%t : memref<8x2xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x2xf32>) outs(%out : memref<8x2xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.copy %t, %wide : memref<8x2xf32> to memref<8x2xf32>
  %u = memref.alloc() {alignment = 64 : i64} : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x2xbf16>) outs(%u : memref<8x2xf32>)
  memref.copy %out, %seen : memref<8x2xbf16> to memref<8x2xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%u : memref<8x2xf32>) outs(%out : memref<8x2xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %t : memref<8x2xf32>
  memref.dealloc %u : memref<8x2xf32>
  return
}

// -----

// A bias added to the product's result in place by the next op to touch it
// is the product's epilogue (flags 16, the bias's address last): the
// addition goes. Before it, an op that touches neither C nor the bias.
// CHECK-LABEL: func.func @bias_epilogue
// CHECK:         %{{.+}}, %{{.+}}, %{{.+}}, %[[SBIAS:.+]] = memref.extract_strided_metadata %arg2
// CHECK:         %[[BIAS:.+]] = llvm.inttoptr
// CHECK:         %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @kiln_cuda_matmul(%c16_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, {{.*}}, %[[BIAS]], %[[NULL]])
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.fill
// CHECK-NOT:     linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @bias_epilogue(%a: memref<8x4xf32>, %b: memref<4x6xf32>, %bias: memref<6xf32>, %c: memref<8x6xf32>, %other: memref<3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x6xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x6xf32>) outs(%c : memref<8x6xf32>)
  linalg.fill ins(%zero : f32) outs(%other : memref<3xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<8x6xf32>, memref<6xf32>) outs(%c : memref<8x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %y, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not epilogues, each product a plain one (flags 0, null bias) and the
// generic kept: a ReLU after the addition (kiln's propagates NaN); a bias
// indexed by the row; the sum written elsewhere; the bias written between
// the product and the addition; a product that accumulates.
// CHECK-LABEL: func.func @not_epilogues
// CHECK-COUNT-4: call @kiln_cuda_matmul(%c0_i64
// CHECK:         call @kiln_cuda_matmul(%c4_i64
// CHECK-NOT:     %c16_i64
// CHECK:         return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col2 = affine_map<(d0, d1) -> (d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @not_epilogues(%a: memref<6x4xf32>, %b: memref<4x6xf32>, %bias: memref<6xf32>, %c: memref<6x6xf32>, %d: memref<6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<6x6xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x6xf32>) outs(%c : memref<6x6xf32>)
  linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x6xf32>, memref<6xf32>) outs(%c : memref<6x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<6x6xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x6xf32>) outs(%c : memref<6x6xf32>)
  linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x6xf32>, memref<6xf32>) outs(%c : memref<6x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<6x6xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x6xf32>) outs(%c : memref<6x6xf32>)
  linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<6x6xf32>, memref<6xf32>) outs(%d : memref<6x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%d : memref<6x6xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x6xf32>) outs(%d : memref<6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%bias : memref<6xf32>)
  linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d, %bias : memref<6x6xf32>, memref<6xf32>) outs(%d : memref<6x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x6xf32>) outs(%d : memref<6x6xf32>)
  linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d, %bias : memref<6x6xf32>, memref<6xf32>) outs(%d : memref<6x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A bias that is a row of C itself is read after the product writes C: the
// epilogue would read it before, so the addition stays a kernel.
// CHECK-LABEL: func.func @bias_in_c
// CHECK:         call @kiln_cuda_matmul(%c0_i64
// CHECK:         linalg.generic
#id3 = affine_map<(d0, d1) -> (d0, d1)>
#col3 = affine_map<(d0, d1) -> (d1)>
func.func @bias_in_c(%a: memref<6x4xf32>, %b: memref<4x6xf32>, %c: memref<6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<6x6xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x6xf32>) outs(%c : memref<6x6xf32>)
  %row = memref.subview %c[0, 0] [1, 6] [1, 1] : memref<6x6xf32> to memref<6xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%c, %row : memref<6x6xf32>, memref<6xf32, strided<[1]>>) outs(%c : memref<6x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A's rows are a dynamic slice at an index in device memory (a view offset
// by a value the host loads): the library would need the host to read the
// index, so a copy of the rows into a fresh buffer comes first (a
// linalg.copy, whose kernel reads the index itself), the product reads
// the copy at its own address, and the copy is freed after the call. B,
// a plain buffer, is read in place.
// CHECK-LABEL: func.func @rows_at_an_index
// CHECK-SAME:  (%[[B:.+]]: memref<8x4xf32>, %{{.+}}: memref<i64>, %[[W:.+]]: memref<4x16xf32>, %{{.+}}: memref<3x16xf32>)
// CHECK:         %[[VIEW:.+]] = memref.reinterpret_cast %[[B]]
// CHECK:         %[[COPY:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x4xf32>
// CHECK-NEXT:    linalg.copy ins(%[[VIEW]] : memref<3x4xf32, strided<[4, 1], offset: ?>>) outs(%[[COPY]] : memref<3x4xf32>)
// CHECK-NOT:     linalg.copy
// CHECK:         memref.extract_strided_metadata %[[COPY]]
// CHECK:         memref.extract_strided_metadata %[[W]]
// CHECK:         call @kiln_cuda_matmul(%c0_i64
// CHECK-NEXT:    memref.dealloc %[[COPY]] : memref<3x4xf32>
func.func @rows_at_an_index(%b: memref<8x4xf32>, %i: memref<i64>, %w: memref<4x16xf32>, %c: memref<3x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %l = memref.load %i[] : memref<i64>
  %x = arith.index_cast %l : i64 to index
  %lo = arith.maxsi %x, %c0 : index
  %row = arith.minsi %lo, %c5 : index
  %offset = arith.muli %row, %c4 : index
  %rows = memref.reinterpret_cast %b to offset: [%offset], sizes: [3, 4], strides: [4, 1] : memref<8x4xf32> to memref<3x4xf32, strided<[4, 1], offset: ?>>
  linalg.fill ins(%zero : f32) outs(%c : memref<3x16xf32>)
  linalg.matmul ins(%rows, %w : memref<3x4xf32, strided<[4, 1], offset: ?>>, memref<4x16xf32>) outs(%c : memref<3x16xf32>)
  return
}

// -----

// B picked by a predicate in device memory (a kiln.select of whole
// tensors): read through a copy too.
// CHECK-LABEL: func.func @picked
// CHECK:         %[[PICK:.+]] = arith.select
// CHECK:         %[[COPY:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x2xf32>
// CHECK-NEXT:    linalg.copy ins(%[[PICK]] : memref<3x2xf32>) outs(%[[COPY]] : memref<3x2xf32>)
// CHECK:         call @kiln_cuda_matmul(%c4_i64
// CHECK-NEXT:    memref.dealloc %[[COPY]] : memref<3x2xf32>
func.func @picked(%p: memref<i1>, %a: memref<4x3xf32>, %b1: memref<3x2xf32>, %b2: memref<3x2xf32>, %c: memref<4x2xf32>) {
  %pv = memref.load %p[] : memref<i1>
  %b = arith.select %pv, %b1, %b2 : memref<3x2xf32>
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x2xf32>) outs(%c : memref<4x2xf32>)
  return
}

// -----

// Rows at an offset the host computes without reading memory (a loop's
// counter) are read in place: no copy.
// CHECK-LABEL: func.func @rows_at_a_counter
// CHECK-NOT:     linalg.copy
// CHECK:         call @kiln_cuda_matmul(
// CHECK-NOT:     memref.dealloc
func.func @rows_at_a_counter(%b: memref<8x4xf32>, %w: memref<4x16xf32>, %c: memref<3x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  scf.for %k = %c0 to %c6 step %c1 {
    %offset = arith.muli %k, %c4 : index
    %rows = memref.reinterpret_cast %b to offset: [%offset], sizes: [3, 4], strides: [4, 1] : memref<8x4xf32> to memref<3x4xf32, strided<[4, 1], offset: ?>>
    linalg.matmul ins(%rows, %w : memref<3x4xf32, strided<[4, 1], offset: ?>>, memref<4x16xf32>) outs(%c : memref<3x16xf32>)
  }
  return
}

// -----

// A dense layer's bias gradient beside its weight gradient: the sum of dY
// over its rows (the batch) is B's sum over k in dW = X^T dY (flags
// 1 | 64: A transposed, BIAS_GRADIENT_B) and A's in dW^T = dY^T X (flags
// 1 | 32, BIAS_GRADIENT_A), before the product or after it (two layers,
// dY and dY2). The call
// writes the gradient (its address last, after a null bias), and the sum
// and its zero fill go; a fill of another buffer between them stays.
// CHECK-LABEL: func.func @bias_gradients
// CHECK-SAME:  (%{{[^:]+}}: memref<16x8xf32>, %{{[^:]+}}: memref<16x6xf32>, %[[DB:[^:]+]]: memref<6xf32>, %{{[^:]+}}: memref<8x6xf32>, %{{[^:]+}}: memref<16x6xf32>, %[[DB2:[^:]+]]: memref<6xf32>, %{{[^:]+}}: memref<6x8xf32>, %[[OTHER:[^:]+]]: memref<3xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[OTHER]] : memref<3xf32>)
// CHECK-NOT:     linalg
// CHECK:         %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} = memref.extract_strided_metadata %[[DB]]
// CHECK:         %[[G:.+]] = llvm.inttoptr
// CHECK:         call @kiln_cuda_matmul(%c65_i64{{[_0-9]*}}, {{.*}}, %[[G]])
// CHECK:         %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} = memref.extract_strided_metadata %[[DB2]]
// CHECK:         %[[G2:.+]] = llvm.inttoptr
// CHECK:         call @kiln_cuda_matmul(%c33_i64{{[_0-9]*}}, {{.*}}, %[[G2]])
// CHECK-NOT:     linalg
// CHECK:         return
#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
#xt = affine_map<(d0, d1, d2) -> (d2, d0)>
#dy = affine_map<(d0, d1, d2) -> (d2, d1)>
#dw = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @bias_gradients(%x: memref<16x8xf32>, %dy: memref<16x6xf32>, %db: memref<6xf32>, %dw: memref<8x6xf32>,
                          %dy2: memref<16x6xf32>, %db2: memref<6xf32>, %dwt: memref<6x8xf32>, %other: memref<3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<6xf32>)
  linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<16x6xf32>) outs(%db : memref<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%other : memref<3xf32>)
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x6xf32>)
  linalg.generic {indexing_maps = [#xt, #dy, #dw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<16x8xf32>, memref<16x6xf32>) outs(%dw : memref<8x6xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dwt : memref<6x8xf32>)
  linalg.generic {indexing_maps = [#xt, #dy, #dw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy2, %x : memref<16x6xf32>, memref<16x8xf32>) outs(%dwt : memref<6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%db2 : memref<6xf32>)
  linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%dy2 : memref<16x6xf32>) outs(%db2 : memref<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Sums the products cannot compute, each kept with its fill and every
// product plain (flags 1, null gradient): a sum over the other dim (dY's
// row sums, over n); a sum that accumulates (no zero fill); the gradient
// read between the sum and the product, and the product's result too (it
// cannot move up to the sum); dY written between the product and the sum;
// a product into f32 of bf16 operands. Each sum goes to its
// own buffer, and all five stay.
// CHECK-LABEL: func.func @not_bias_gradients
// CHECK-COUNT-3: iterator_types = ["{{reduction|parallel}}", "{{reduction|parallel}}"]
// CHECK-COUNT-2: call @kiln_cuda_matmul(%c1_i64{{[_0-9]*}}, {{.*}}, %[[NULL:[^,]+]], %[[NULL]])
// CHECK:         iterator_types = ["reduction", "parallel"]
// CHECK:         call @kiln_cuda_matmul(%c1_i64{{[_0-9]*}}, {{.*}}, %[[NULL:[^,]+]], %[[NULL]])
// CHECK:         iterator_types = ["reduction", "parallel"]
// CHECK-NOT:     call
// CHECK:         return
#rows2 = affine_map<(d0, d1) -> (d0, d1)>
#cols2 = affine_map<(d0, d1) -> (d1)>
#first2 = affine_map<(d0, d1) -> (d0)>
#xt2 = affine_map<(d0, d1, d2) -> (d2, d0)>
#dy2 = affine_map<(d0, d1, d2) -> (d2, d1)>
#dw2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @not_bias_gradients(%x: memref<16x8xf32>, %dy: memref<16x6xf32>, %dw: memref<8x6xf32>,
                              %s1: memref<16xf32>, %s2: memref<6xf32>, %s3: memref<6xf32>, %s4: memref<6xf32>,
                              %read: memref<6xf32>, %xh: memref<16x8xbf16>, %dyh: memref<16x6xbf16>, %s5: memref<6xbf16>,
                              %dwold: memref<8x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %zeroh = arith.constant 0.0 : bf16
  // Over n.
  linalg.fill ins(%zero : f32) outs(%s1 : memref<16xf32>)
  linalg.generic {indexing_maps = [#rows2, #first2], iterator_types = ["parallel", "reduction"]}
      ins(%dy : memref<16x6xf32>) outs(%s1 : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  // Accumulating.
  linalg.generic {indexing_maps = [#rows2, #cols2], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<16x6xf32>) outs(%s2 : memref<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  // Read before the product.
  linalg.fill ins(%zero : f32) outs(%s3 : memref<6xf32>)
  linalg.generic {indexing_maps = [#rows2, #cols2], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<16x6xf32>) outs(%s3 : memref<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  memref.copy %s3, %read : memref<6xf32> to memref<6xf32>
  memref.copy %dw, %dwold : memref<8x6xf32> to memref<8x6xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x6xf32>)
  linalg.generic {indexing_maps = [#xt2, #dy2, #dw2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<16x8xf32>, memref<16x6xf32>) outs(%dw : memref<8x6xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  // dY written between the product and the sum.
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x6xf32>)
  linalg.generic {indexing_maps = [#xt2, #dy2, #dw2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<16x8xf32>, memref<16x6xf32>) outs(%dw : memref<8x6xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dy : memref<16x6xf32>)
  linalg.fill ins(%zero : f32) outs(%s4 : memref<6xf32>)
  linalg.generic {indexing_maps = [#rows2, #cols2], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<16x6xf32>) outs(%s4 : memref<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  // bf16 operands.
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x6xf32>)
  linalg.generic {indexing_maps = [#xt2, #dy2, #dw2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xh, %dyh : memref<16x8xbf16>, memref<16x6xbf16>) outs(%dw : memref<8x6xf32>) {
  ^bb0(%a: bf16, %b: bf16, %out: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zeroh : bf16) outs(%s5 : memref<6xbf16>)
  linalg.generic {indexing_maps = [#rows2, #cols2], iterator_types = ["reduction", "parallel"]}
      ins(%dyh : memref<16x6xbf16>) outs(%s5 : memref<6xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %s = arith.addf %out, %in : bf16
    linalg.yield %s : bf16
  }
  return
}

// -----

// Sums over k of an operand stored with k along its columns (A's row sums
// in A B, B's in A B^T), which cuBLASLt's kernels do not compute: the
// products stay plain (flags 0 and 2) and both sums stay.
// CHECK-LABEL: func.func @gradients_along_columns
// CHECK:         call @kiln_cuda_matmul(%c0_i64{{[_0-9]*}}, {{.*}}, %[[NULL:[^,]+]], %[[NULL]])
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:         call @kiln_cuda_matmul(%c2_i64{{[_0-9]*}}, {{.*}}, %[[NULL2:[^,]+]], %[[NULL2]])
// CHECK:         iterator_types = ["parallel", "reduction"]
#rows3 = affine_map<(d0, d1) -> (d0, d1)>
#first3 = affine_map<(d0, d1) -> (d0)>
func.func @gradients_along_columns(%a: memref<16x6xf32>, %b: memref<6x8xf32>, %c: memref<16x8xf32>, %sa: memref<16xf32>,
                                   %bt: memref<8x6xf32>, %sb: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x8xf32>)
  linalg.matmul ins(%a, %b : memref<16x6xf32>, memref<6x8xf32>) outs(%c : memref<16x8xf32>)
  linalg.fill ins(%zero : f32) outs(%sa : memref<16xf32>)
  linalg.generic {indexing_maps = [#rows3, #first3], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<16x6xf32>) outs(%sa : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<16x8xf32>)
  linalg.matmul_transpose_b ins(%a, %bt : memref<16x6xf32>, memref<8x6xf32>) outs(%c : memref<16x8xf32>)
  linalg.fill ins(%zero : f32) outs(%sb : memref<8xf32>)
  linalg.generic {indexing_maps = [#rows3, #first3], iterator_types = ["parallel", "reduction"]}
      ins(%bt : memref<8x6xf32>) outs(%sb : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The bias gradient is used before the product (a step of SGD on the
// bias): the product moves up to the sum, with its zero fill, and its call
// writes the gradient before the update reads it.
// CHECK-LABEL: func.func @used_before_the_product
// CHECK-SAME:  (%{{[^:]+}}: memref<16x8xf32>, %{{[^:]+}}: memref<16x6xf32>, %[[DB:[^:]+]]: memref<6xf32>, %[[B:[^:]+]]: memref<6xf32>, %{{[^:]+}}: memref<8x6xf32>)
// CHECK-NOT:     linalg
// CHECK:         call @kiln_cuda_matmul(%c65_i64
// CHECK-NEXT:    linalg.generic
// CHECK-SAME:      ins(%[[B]], %[[DB]] : memref<6xf32>, memref<6xf32>) outs(%[[DB]] : memref<6xf32>)
// CHECK-NOT:     linalg.{{generic|fill}}
// CHECK:         return
#rows4 = affine_map<(d0, d1) -> (d0, d1)>
#cols4 = affine_map<(d0, d1) -> (d1)>
#vec4 = affine_map<(d0) -> (d0)>
#xt4 = affine_map<(d0, d1, d2) -> (d2, d0)>
#dy4 = affine_map<(d0, d1, d2) -> (d2, d1)>
#dw4 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @used_before_the_product(%x: memref<16x8xf32>, %dy: memref<16x6xf32>, %db: memref<6xf32>, %b: memref<6xf32>, %dw: memref<8x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.125 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<6xf32>)
  linalg.generic {indexing_maps = [#rows4, #cols4], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<16x6xf32>) outs(%db : memref<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#vec4, #vec4, #vec4], iterator_types = ["parallel"]}
      ins(%b, %db : memref<6xf32>, memref<6xf32>) outs(%db : memref<6xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %m = arith.mulf %g, %lr : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x6xf32>)
  linalg.generic {indexing_maps = [#xt4, #dy4, #dw4], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : memref<16x8xf32>, memref<16x6xf32>) outs(%dw : memref<8x6xf32>) {
  ^bb0(%a: f32, %bb: f32, %out: f32):
    %p = arith.mulf %a, %bb : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  return
}
