// kiln-free-after-last-use after upstream's ownership-based deallocation,
// as the CPU pipeline runs it (buildDeallocationPipeline): the buffers a
// kiln.cond's scf.if yields are freed, where this block owns them, after
// their last reader instead of at the return.
// RUN: kiln-opt %s --split-input-file --ownership-based-buffer-deallocation --canonicalize --buffer-deallocation-simplification --kiln-free-after-last-use | FileCheck %s

// The result of a kiln.cond (an scf.if that allocates in one branch and
// passes an argument through in the other) is freed, if this block owns
// it, after its last reader; the argument it may alias is not this
// block's to free.
// CHECK-LABEL: func.func @cond_result
// CHECK:         %[[R:[0-9]+]]:2 = scf.if
// CHECK:         linalg.copy ins(%[[R]]#0 : {{.*}}) outs(%arg3 : {{.*}})
// CHECK-NEXT:    %[[BASE:[^,]*]], {{.*}} = memref.extract_strided_metadata %[[R]]#0
// CHECK-NEXT:    bufferization.dealloc (%[[BASE]] : memref<f32>) if (%[[R]]#1)
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    return
func.func @cond_result(%p: i1, %x: f32, %in: memref<1024xf32>, %out: memref<1024xf32>, %other: memref<8xf32>) {
  %r = scf.if %p -> (memref<1024xf32>) {
    %b = memref.alloc() : memref<1024xf32>
    linalg.fill ins(%x : f32) outs(%b : memref<1024xf32>)
    scf.yield %b : memref<1024xf32>
  } else {
    scf.yield %in : memref<1024xf32>
  }
  linalg.copy ins(%r : memref<1024xf32>) outs(%out : memref<1024xf32>)
  linalg.fill ins(%x : f32) outs(%other : memref<8xf32>)
  return
}

// -----

// Two conds that pass the same argument through: each result is owned by
// this block only where its branch allocated it, and the argument is no
// block's to free, so each result is freed after its own last reader.
// CHECK-LABEL: func.func @two_conds
// CHECK:         %[[R:[0-9]+]]:2 = scf.if
// CHECK:         %[[S:[0-9]+]]:2 = scf.if
// CHECK:         linalg.copy ins(%[[R]]#0 : {{.*}}) outs(%arg4 : {{.*}})
// CHECK-NEXT:    %[[BASE:[^,]*]], {{.*}} = memref.extract_strided_metadata %[[R]]#0
// CHECK-NEXT:    bufferization.dealloc (%[[BASE]] : memref<f32>) if (%[[R]]#1)
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    linalg.copy ins(%[[S]]#0 : {{.*}}) outs(%arg4 : {{.*}})
// CHECK-NEXT:    %[[BASE2:[^,]*]], {{.*}} = memref.extract_strided_metadata %[[S]]#0
// CHECK-NEXT:    bufferization.dealloc (%[[BASE2]] : memref<f32>) if (%[[S]]#1)
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    return
func.func @two_conds(%p: i1, %q: i1, %x: f32, %in: memref<1024xf32>, %out: memref<1024xf32>, %other: memref<8xf32>) {
  %r = scf.if %p -> (memref<1024xf32>) {
    %b = memref.alloc() : memref<1024xf32>
    linalg.fill ins(%x : f32) outs(%b : memref<1024xf32>)
    scf.yield %b : memref<1024xf32>
  } else {
    scf.yield %in : memref<1024xf32>
  }
  %s = scf.if %q -> (memref<1024xf32>) {
    %b = memref.alloc() : memref<1024xf32>
    linalg.fill ins(%x : f32) outs(%b : memref<1024xf32>)
    scf.yield %b : memref<1024xf32>
  } else {
    scf.yield %in : memref<1024xf32>
  }
  linalg.copy ins(%r : memref<1024xf32>) outs(%out : memref<1024xf32>)
  linalg.fill ins(%x : f32) outs(%other : memref<8xf32>)
  linalg.copy ins(%s : memref<1024xf32>) outs(%out : memref<1024xf32>)
  linalg.fill ins(%x : f32) outs(%other : memref<8xf32>)
  return
}
