// kiln-cpu-conv-addend-in-place gives a call of a kiln.dnnl_conv function
// with an addend (flag 2) the addend's buffer as its result buffer where
// the addend dies at the call: both allocations in the call's block, of
// one type, every other use of the addend before the call and only an
// access, no other operand the addend, no use of the result before.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-conv-addend-in-place | FileCheck %s

// The residual block's end: the addend, written before, becomes the result
// buffer; the result's own allocation goes, and its readers read the addend's.
// CHECK-LABEL: func.func @residual(
// CHECK-SAME:    %[[X:.*]]: memref<2x8x100xf32>, %[[W:.*]]: memref<8x8x3xf32>, %[[OUT:.*]]: memref<2x8x98xf32>
// CHECK:         %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x8x98xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         call @conv_short(%[[X]], %[[W]], %[[A]])
// CHECK:         call @conv_add(%[[X]], %[[W]], %[[A]], %[[A]])
// CHECK:         memref.copy %[[A]], %[[OUT]]
func.func @residual(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %out: memref<2x8x98xf32>) {
  %a = memref.alloc() : memref<2x8x98xf32>
  call @conv_short(%x, %w, %a) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>) -> ()
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x8x98xf32>
  call @conv_add(%x, %w, %a, %y) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.copy %y, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  return
}
func.func private @conv_short(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 0, 100, 3, 98, 1, 0, 0, 1>} {
  return
}
func.func private @conv_add(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %a: memref<2x8x98xf32> {bufferization.access = "read"}, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 2, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

// With a bias before the addend, a bound after the result (flags 1, 2,
// 16384) and the addend read through a view before the call.
// CHECK-LABEL: func.func @bias_and_bound(
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2x8x98xf32>
// CHECK:         memref.collapse_shape %[[A]]
// CHECK:         call @conv(%{{.*}}, %{{.*}}, %{{.*}}, %[[A]], %[[A]], %{{.*}})
func.func @bias_and_bound(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %b: memref<8xf32>, %bound: memref<f32>, %out: memref<2x8x98xf32>) {
  %a = memref.alloc() : memref<2x8x98xf32>
  %flat = memref.collapse_shape %a [[0, 1, 2]] : memref<2x8x98xf32> into memref<1568xf32>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %flat[%c0] : memref<1568xf32>
  %y = memref.alloc() : memref<2x8x98xf32>
  call @conv(%x, %w, %b, %a, %y, %bound) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<8xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>, memref<f32>) -> ()
  memref.copy %y, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  return
}
func.func private @conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %b: memref<8xf32>, %a: memref<2x8x98xf32>, %y: memref<2x8x98xf32>, %bound: memref<f32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 16387, 100, 3, 98, 1, 0, 0, 1>} {
  return
}

// -----

// Where the addend lives on, the two buffers stay apart: read after the
// call, a function argument, the call's input too (or a view of it is),
// inside a loop body
// that runs the call again, of another type, passed to a function the
// module only declares, or the result buffer used before the call; and a
// quantized call (flag 512), whose scales take the addend's place.
// CHECK-LABEL: func.func @kept(
// CHECK-SAME:    %{{[^:]*}}: memref<2x8x100xf32>, %{{[^:]*}}: memref<8x8x3xf32>, %[[ARG:[^:]*]]: memref<2x8x98xf32>
// CHECK:         %[[A0:.*]] = memref.alloc()
// CHECK:         %[[Y0:.*]] = memref.alloc()
// CHECK:         call @conv(%{{.*}}, %{{.*}}, %[[A0]], %[[Y0]])
// CHECK:         %[[Y1:.*]] = memref.alloc()
// CHECK:         call @conv(%{{.*}}, %{{.*}}, %[[ARG]], %[[Y1]])
// CHECK:         %[[A2:.*]] = memref.alloc()
// CHECK:         %[[Y2:.*]] = memref.alloc()
// CHECK:         call @same(%[[A2]], %{{.*}}, %[[A2]], %[[Y2]])
// CHECK:         %[[A9:.*]] = memref.alloc()
// CHECK:         %[[V9:.*]] = memref.expand_shape %[[A9]]
// CHECK:         %[[Y9:.*]] = memref.alloc()
// CHECK:         call @viewed(%[[V9]], %{{.*}}, %[[A9]], %[[Y9]])
// CHECK:         %[[A3:.*]] = memref.alloc()
// CHECK:         scf.for
// CHECK:           %[[Y3:.*]] = memref.alloc()
// CHECK:           func.call @conv(%{{.*}}, %{{.*}}, %[[A3]], %[[Y3]])
// CHECK:         %[[A4:.*]] = memref.alloc()
// CHECK:         %[[Y4:.*]] = memref.alloc()
// CHECK:         call @strided(%{{.*}}, %{{.*}}, %[[A4]], %[[Y4]])
// CHECK:         %[[A5:.*]] = memref.alloc()
// CHECK:         call @keep(%[[A5]])
// CHECK:         %[[Y5:.*]] = memref.alloc()
// CHECK:         call @conv(%{{.*}}, %{{.*}}, %[[A5]], %[[Y5]])
// CHECK:         %[[A6:.*]] = memref.alloc()
// CHECK:         %[[Y6:.*]] = memref.alloc()
// CHECK:         call @conv(%{{.*}}, %{{.*}}, %[[A6]], %[[Y6]])
// CHECK:         %[[A7:.*]] = memref.alloc()
// CHECK:         %[[Y7:.*]] = memref.alloc()
// CHECK:         scf.for
// CHECK:           func.call @conv(%{{.*}}, %{{.*}}, %[[A7]], %[[Y7]])
// CHECK:         %[[A8:.*]] = memref.alloc()
// CHECK:         %[[Y8:.*]] = memref.alloc()
// CHECK:         call @quantized(%{{.*}}, %{{.*}}, %[[A8]], %[[Y8]])
func.func @kept(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %arg: memref<2x8x98xf32>, %out: memref<2x8x98xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // Read after the call.
  %a0 = memref.alloc() : memref<2x8x98xf32>
  linalg.fill ins(%zero : f32) outs(%a0 : memref<2x8x98xf32>)
  %y0 = memref.alloc() : memref<2x8x98xf32>
  call @conv(%x, %w, %a0, %y0) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.copy %a0, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  memref.copy %y0, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  // A function argument.
  %y1 = memref.alloc() : memref<2x8x98xf32>
  call @conv(%x, %w, %arg, %y1) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.copy %y1, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  // The call's input too (a convolution of 98 positions onto 98).
  %a2 = memref.alloc() : memref<2x8x98xf32>
  linalg.fill ins(%zero : f32) outs(%a2 : memref<2x8x98xf32>)
  %y2 = memref.alloc() : memref<2x8x98xf32>
  call @same(%a2, %w, %a2, %y2) : (memref<2x8x98xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.copy %y2, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  // A view of it the call's input.
  %a9 = memref.alloc() : memref<2x8x98xf32>
  linalg.fill ins(%zero : f32) outs(%a9 : memref<2x8x98xf32>)
  %v9 = memref.expand_shape %a9 [[0], [1], [2, 3]] output_shape [2, 8, 98, 1] : memref<2x8x98xf32> into memref<2x8x98x1xf32>
  %y9 = memref.alloc() : memref<2x8x98xf32>
  call @viewed(%v9, %w, %a9, %y9) : (memref<2x8x98x1xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.copy %y9, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  // In a loop body, the addend from before the loop.
  %a3 = memref.alloc() : memref<2x8x98xf32>
  linalg.fill ins(%zero : f32) outs(%a3 : memref<2x8x98xf32>)
  scf.for %i = %c0 to %n step %c1 {
    %y3 = memref.alloc() : memref<2x8x98xf32>
    func.call @conv(%x, %w, %a3, %y3) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
    memref.copy %y3, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  }
  // Another type (the same shape in another layout).
  %a4 = memref.alloc() : memref<2x8x98xf32, strided<[784, 98, 1], offset: 0>>
  %y4 = memref.alloc() : memref<2x8x98xf32>
  call @strided(%x, %w, %a4, %y4) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32, strided<[784, 98, 1], offset: 0>>, memref<2x8x98xf32>) -> ()
  memref.copy %y4, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  // Passed to a function the module only declares, which may keep it.
  %a5 = memref.alloc() : memref<2x8x98xf32>
  call @keep(%a5) : (memref<2x8x98xf32>) -> ()
  %y5 = memref.alloc() : memref<2x8x98xf32>
  call @conv(%x, %w, %a5, %y5) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.copy %y5, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  // The result buffer used before the call.
  %a6 = memref.alloc() : memref<2x8x98xf32>
  %y6 = memref.alloc() : memref<2x8x98xf32>
  linalg.fill ins(%zero : f32) outs(%y6 : memref<2x8x98xf32>)
  call @conv(%x, %w, %a6, %y6) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.copy %y6, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  // The addend and the result in a loop body where the call is not.
  %a7 = memref.alloc() : memref<2x8x98xf32>
  %y7 = memref.alloc() : memref<2x8x98xf32>
  scf.for %i = %c0 to %n step %c1 {
    func.call @conv(%x, %w, %a7, %y7) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  }
  memref.copy %y7, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  // Quantized: the third operand holds scales.
  %a8 = memref.alloc() : memref<2x8x98xf32>
  %y8 = memref.alloc() : memref<2x8x98xf32>
  call @quantized(%x, %w, %a8, %y8) : (memref<2x8x100xf32>, memref<8x8x3xf32>, memref<2x8x98xf32>, memref<2x8x98xf32>) -> ()
  memref.copy %y8, %out : memref<2x8x98xf32> to memref<2x8x98xf32>
  return
}
func.func private @keep(memref<2x8x98xf32>)
func.func private @conv(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %a: memref<2x8x98xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 2, 100, 3, 98, 1, 0, 0, 1>} {
  return
}
func.func private @same(%x: memref<2x8x98xf32>, %w: memref<8x8x3xf32>, %a: memref<2x8x98xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 2, 98, 3, 98, 1, 1, 1, 1>} {
  return
}
func.func private @viewed(%x: memref<2x8x98x1xf32>, %w: memref<8x8x3xf32>, %a: memref<2x8x98xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 2, 98, 3, 98, 1, 1, 1, 1>} {
  return
}
func.func private @strided(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %a: memref<2x8x98xf32, strided<[784, 98, 1], offset: 0>>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 2, 100, 3, 98, 1, 0, 0, 1>} {
  return
}
func.func private @quantized(%x: memref<2x8x100xf32>, %w: memref<8x8x3xf32>, %a: memref<2x8x98xf32>, %y: memref<2x8x98xf32>) attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 514, 100, 3, 98, 1, 0, 0, 1>} {
  return
}
