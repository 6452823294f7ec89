// kiln-forward-call-results: a call's result copied into the caller's
// out-param is written there by the call, the buffer and the copy gone.
// RUN: kiln-opt %s --split-input-file --kiln-forward-call-results | FileCheck %s

// Both results of an outlined attention: the call takes the out-params.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME:    %[[Q:.*]]: memref<2x8xf32>, %[[O:.*]]: memref<2x8xf32>, %[[L:.*]]: memref<2xf32>)
// CHECK-NEXT:    call @outlined(%[[Q]], %[[O]], %[[L]])
// CHECK-NEXT:    return
func.func @attention(%q: memref<2x8xf32>, %o: memref<2x8xf32>, %l: memref<2xf32>) {
  %x = memref.alloc() : memref<2x8xf32>
  %y = memref.alloc() : memref<2xf32>
  call @outlined(%q, %x, %y) : (memref<2x8xf32>, memref<2x8xf32>, memref<2xf32>) -> ()
  linalg.copy ins(%x : memref<2x8xf32>) outs(%o : memref<2x8xf32>)
  linalg.copy ins(%y : memref<2xf32>) outs(%l : memref<2xf32>)
  return
}
func.func private @outlined(memref<2x8xf32>, memref<2x8xf32>, memref<2xf32>)

// -----

// The buffer is read again after the call (the function computes more from
// it), and the out-param is read after the copy: neither copy goes.
// CHECK-LABEL: func.func @used_elsewhere(
// CHECK:         %[[X:.*]] = memref.alloc()
// CHECK:         %[[Y:.*]] = memref.alloc()
// CHECK:         call @outlined(%{{.*}}, %[[X]], %[[Y]])
// CHECK:         linalg.copy ins(%[[X]] : memref<2x8xf32>) outs(%{{.*}} : memref<2x8xf32>)
// CHECK:         linalg.copy ins(%[[Y]] : memref<2xf32>) outs(%[[L:.*]] : memref<2xf32>)
// CHECK:         memref.load %[[L]]
func.func @used_elsewhere(%q: memref<2x8xf32>, %o: memref<2x8xf32>, %l: memref<2xf32>, %s: memref<2x8xf32>) -> f32 {
  %x = memref.alloc() : memref<2x8xf32>
  %y = memref.alloc() : memref<2xf32>
  call @outlined(%q, %x, %y) : (memref<2x8xf32>, memref<2x8xf32>, memref<2xf32>) -> ()
  linalg.copy ins(%x : memref<2x8xf32>) outs(%o : memref<2x8xf32>)
  linalg.copy ins(%y : memref<2xf32>) outs(%l : memref<2xf32>)
  linalg.copy ins(%x : memref<2x8xf32>) outs(%s : memref<2x8xf32>)
  %c0 = arith.constant 0 : index
  %v = memref.load %l[%c0] : memref<2xf32>
  return %v : f32
}
func.func private @outlined(memref<2x8xf32>, memref<2x8xf32>, memref<2xf32>)

// -----

// A donated argument's new value, written into the argument after the call
// that reads it: the call must not write there while it reads.
// CHECK-LABEL: func.func @donated(
// CHECK:         %[[X:.*]] = memref.alloc()
// CHECK:         call @update(%[[W:.*]], %[[X]])
// CHECK:         linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[W]] : memref<4xf32>)
func.func @donated(%w: memref<4xf32>) {
  %x = memref.alloc() : memref<4xf32>
  call @update(%w, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  linalg.copy ins(%x : memref<4xf32>) outs(%w : memref<4xf32>)
  return
}
func.func private @update(memref<4xf32>, memref<4xf32>)

// -----

// The buffer passed twice to the call, and a copy into a strided view:
// both stay. A copy inside a loop into the function's out-param is
// forwarded (each trip's call writes the out-param, which nothing else
// reads or writes).
// CHECK-LABEL: func.func @others(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<4xf32>, %[[O:[^:]*]]: memref<4xf32>, %[[P:[^:]*]]: memref<4xf32>,
// CHECK:         %[[X:.*]] = memref.alloc()
// CHECK:         call @two(%[[Q]], %[[X]], %[[X]])
// CHECK:         linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[O]] : memref<4xf32>)
// CHECK:         scf.for
// CHECK-NEXT:      func.call @one(%[[Q]], %[[P]])
// CHECK-NEXT:    }
// CHECK:         %[[Z:.*]] = memref.alloc()
// CHECK:         call @one(%[[Q]], %[[Z]])
// CHECK:         linalg.copy ins(%[[Z]] : memref<4xf32>) outs(%{{.*}} : memref<4xf32, strided<[2]>>)
func.func @others(%q: memref<4xf32>, %o: memref<4xf32>, %p: memref<4xf32>, %r: memref<4xf32, strided<[2]>>) {
  %x = memref.alloc() : memref<4xf32>
  call @two(%q, %x, %x) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  linalg.copy ins(%x : memref<4xf32>) outs(%o : memref<4xf32>)
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %y = memref.alloc() : memref<4xf32>
    func.call @one(%q, %y) : (memref<4xf32>, memref<4xf32>) -> ()
    linalg.copy ins(%y : memref<4xf32>) outs(%p : memref<4xf32>)
  }
  %z = memref.alloc() : memref<4xf32>
  call @one(%q, %z) : (memref<4xf32>, memref<4xf32>) -> ()
  linalg.copy ins(%z : memref<4xf32>) outs(%r : memref<4xf32, strided<[2]>>)
  return
}
func.func private @two(memref<4xf32>, memref<4xf32>, memref<4xf32>)
func.func private @one(memref<4xf32>, memref<4xf32>)
