// kiln-free-after-last-use moves each buffer's bufferization.dealloc from the
// end of its block to right after the last op that uses the buffer or an
// alias of it, unless an alias is deallocated or retained elsewhere.
// RUN: kiln-opt %s --split-input-file --kiln-free-after-last-use | FileCheck %s
// free_after_last_use_ownership.mlir runs it after upstream's
// ownership-based deallocation.

// Two buffers: the first is freed after its reader, the second after the
// copy into the output.
// CHECK-LABEL: func.func @straight
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         %[[B:.*]] = memref.alloc()
// CHECK:         linalg.copy ins(%[[A]] : {{.*}}) outs(%[[B]] : {{.*}})
// CHECK-NEXT:    bufferization.dealloc (%[[A]] : memref<1024xf32>) if (%true)
// CHECK-NEXT:    linalg.copy ins(%[[B]] : {{.*}}) outs(%arg1 : {{.*}})
// CHECK-NEXT:    bufferization.dealloc (%[[B]] : memref<1024xf32>) if (%true)
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    return
func.func @straight(%x: f32, %out: memref<1024xf32>, %other: memref<8xf32>) {
  %true = arith.constant true
  %a = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<1024xf32>)
  %b = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>)
  linalg.copy ins(%b : memref<1024xf32>) outs(%out : memref<1024xf32>)
  linalg.fill ins(%x : f32) outs(%other : memref<8xf32>)
  bufferization.dealloc (%a, %b : memref<1024xf32>, memref<1024xf32>) if (%true, %true)
  return
}

// -----

// A use in a loop's body frees the buffer after the loop; a view's use
// counts as the buffer's.
// CHECK-LABEL: func.func @nested
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         scf.for
// CHECK:           memref.subview %[[A]]
// CHECK:         }
// CHECK-NEXT:    bufferization.dealloc (%[[A]] : memref<64xf32>) if (%true)
// CHECK-NEXT:    linalg.fill
func.func @nested(%x: f32, %out: memref<16xf32>, %other: memref<8xf32>) {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<64xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.subview %a[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.copy ins(%v : memref<16xf32, strided<[1], offset: ?>>) outs(%out : memref<16xf32>)
  }
  linalg.fill ins(%x : f32) outs(%other : memref<8xf32>)
  bufferization.dealloc (%a : memref<64xf32>) if (%true)
  return
}

// -----

// A buffer that the scf.if may yield as its result is freed after the
// scf.if, its last use, unless it is the result: its dealloc retains the
// result and passes the ownership on to the result's dealloc, after the
// result's last reader.
// CHECK-LABEL: func.func @may_alias
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         %[[R:.*]]:2 = scf.if
// CHECK:           scf.yield %[[A]], %false
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[PASSED:.*]] = bufferization.dealloc (%[[A]] : memref<8xf32>) if (%true) retain (%[[R]]#0 : memref<8xf32>)
// CHECK-NEXT:    %[[OWN:.*]] = arith.ori %[[R]]#1, %[[PASSED]] : i1
// CHECK-NEXT:    linalg.copy ins(%[[R]]#0 : {{.*}})
// CHECK-NEXT:    bufferization.dealloc (%[[R]]#0 : memref<8xf32>) if (%[[OWN]])
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    return
func.func @may_alias(%p: i1, %x: f32, %out: memref<8xf32>, %other: memref<8xf32>) {
  %true = arith.constant true
  %false = arith.constant false
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<8xf32>)
  %r:2 = scf.if %p -> (memref<8xf32>, i1) {
    %b = memref.alloc() : memref<8xf32>
    linalg.fill ins(%x : f32) outs(%b : memref<8xf32>)
    scf.yield %b, %true : memref<8xf32>, i1
  } else {
    scf.yield %a, %false : memref<8xf32>, i1
  }
  linalg.copy ins(%r#0 : memref<8xf32>) outs(%out : memref<8xf32>)
  linalg.fill ins(%x : f32) outs(%other : memref<8xf32>)
  bufferization.dealloc (%a, %r#0 : memref<8xf32>, memref<8xf32>) if (%true, %r#1)
  return
}

// -----

// A buffer retained by the dealloc (it leaves the block) stays; the other
// one moves, and the retained value's ownership is unchanged.
// CHECK-LABEL: func.func private @retained
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         %[[B:.*]] = memref.alloc()
// CHECK:         linalg.copy ins(%[[A]] : {{.*}}) outs(%[[B]] : {{.*}})
// CHECK-NEXT:    bufferization.dealloc (%[[A]] : memref<8xf32>) if (%true)
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    %[[OWN:.*]] = bufferization.dealloc retain (%[[B]] : memref<8xf32>)
// CHECK-NEXT:    return %[[B]], %[[OWN]]
func.func private @retained(%x: f32, %other: memref<8xf32>) -> (memref<8xf32>, i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<8xf32>)
  %b = memref.alloc() : memref<8xf32>
  linalg.copy ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  linalg.fill ins(%x : f32) outs(%other : memref<8xf32>)
  %own = bufferization.dealloc (%a : memref<8xf32>) if (%true) retain (%b : memref<8xf32>)
  return %b, %own : memref<8xf32>, i1
}
