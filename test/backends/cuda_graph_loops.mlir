// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-graph-loops | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-graph-loops --kiln-cuda-graph-loops | FileCheck %s --check-prefix=TWICE
// RUN: kiln-opt %s --split-input-file --kiln-cuda-graph-loops=inside-host-loops=true | FileCheck %s --check-prefix=INSIDE

// A loop as kiln-cuda-device-allocations leaves a kiln.while: the test
// copies the carried value forward into a buffer of its own and computes
// the predicate in a kernel, which the host reads back; the body yields a
// fresh buffer and frees its argument. It becomes a graph where the
// runtime can: a home for the carried value (a copy of the input), the
// test reading it and forwarding its own buffer, which the body reads (no
// free of it inside) and which is the loop's result; the predicate's
// device address goes to the runtime instead of a host read; the body
// writes its result into the carried home instead of a fresh buffer; the
// test runs again after the body (the graph's do-while), reading the same
// home and forwarding into the same buffer, and its predicate's address
// goes to the runtime's end call. The host loop stays in the other branch.
// Run again, the pass leaves the host loop alone (kiln-cuda-graph-forms
// runs it until nothing changes).
// TWICE-LABEL: func.func @fixed_point
// TWICE-COUNT-1: call @kiln_cuda_graph_loops()
// TWICE-NOT:   call @kiln_cuda_graph_loops()
// TWICE:       return
// CHECK:       func.func private @kiln_cuda_graph_while_end_iteration(!llvm.ptr, !llvm.ptr)
// CHECK:       func.func private @kiln_cuda_graph_while_test(!llvm.ptr, !llvm.ptr)
// CHECK:       func.func private @kiln_cuda_graph_while_begin() -> !llvm.ptr
// CHECK:       func.func private @kiln_cuda_graph_loops() -> i32
// With inside-host-loops, a root loop is left to the pass without it.
// INSIDE-LABEL: func.func @fixed_point
// INSIDE-NOT: kiln_cuda_graph
// INSIDE:     scf.while
// INSIDE:     return
// CHECK-LABEL: func.func @fixed_point
// CHECK:       %[[OK:.+]] = call @kiln_cuda_graph_loops() : () -> i32
// CHECK:       %[[ON:.+]] = arith.cmpi ne, %[[OK]]
// CHECK:       %[[R:.+]] = scf.if %[[ON]] -> (memref<256xf32>) {
// CHECK:         %[[HOME:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<256xf32>
// CHECK:         gpu.memcpy async [%{{.+}}] %[[HOME]], %[[INIT:.+]] : memref<256xf32>, memref<256xf32>
// CHECK:         %[[LOOP:.+]] = func.call @kiln_cuda_graph_while_begin() : () -> !llvm.ptr
// CHECK-NOT:     memref.load
// CHECK:         %[[COPY:.+]], %{{.+}} = gpu.alloc async
// CHECK:         gpu.launch async
// CHECK:           memref.load %[[HOME]]
// CHECK:           memref.store %{{.+}}, %[[COPY]]
// CHECK-NOT:     gpu.memcpy
// CHECK-NOT:     gpu.dealloc async [%{{.+}}] %[[COPY]]
// CHECK:         %[[PTR:.+]] = llvm.inttoptr
// CHECK:         func.call @kiln_cuda_graph_while_test(%[[LOOP]], %[[PTR]])
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch async
// CHECK:           memref.load %[[COPY]]
// CHECK:           memref.store %{{.+}}, %[[HOME]]
// CHECK-NOT:     gpu.dealloc async [%{{.+}}] %[[COPY]]
// CHECK-NOT:     gpu.dealloc async [%{{.+}}] %[[HOME]]
// CHECK-NOT:     gpu.memcpy
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch async
// CHECK:           memref.load %[[HOME]]
// CHECK:           memref.store %{{.+}}, %[[COPY]]
// CHECK-NOT:     gpu.dealloc async [%{{.+}}] %[[COPY]]
// CHECK-NOT:     gpu.dealloc async [%{{.+}}] %[[HOME]]
// CHECK-NOT:     gpu.memcpy
// CHECK:         %[[PTR2:.+]] = llvm.inttoptr
// CHECK:         func.call @kiln_cuda_graph_while_end_iteration(%[[LOOP]], %[[PTR2]])
// CHECK:         gpu.dealloc async [%{{.+}}] %[[HOME]]
// CHECK-NEXT:    scf.yield %[[COPY]] : memref<256xf32>
// CHECK-NEXT:  } else {
// CHECK:         %[[HOST:.+]] = scf.while
// CHECK:           memref.load
// CHECK:         scf.yield %[[HOST]] : memref<256xf32>
// CHECK:       }
// CHECK:       gpu.dealloc async [%{{.+}}] %[[R]]
func.func @fixed_point(%x0: memref<256xf32>, %out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %true = arith.constant true
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %arena, %ta = gpu.alloc async [%t0] () : memref<64xi8>
  %r = scf.while (%x = %x0, %owned = %false) : (memref<256xf32>, i1) -> memref<256xf32> {
    %p = memref.view %arena[%c0][] : memref<64xi8> to memref<i1>
    %t1 = gpu.wait async
    %copy, %t2 = gpu.alloc async [%t1] () : memref<256xf32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<256xf32>
      memref.store %v, %copy[%tx] : memref<256xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t4]
    %more = memref.load %slot[] : memref<i1>
    %base, %offset, %size, %stride = memref.extract_strided_metadata %x : memref<256xf32> -> memref<f32>, index, index, index
    scf.if %owned {
      %t5 = gpu.wait async
      %t6 = gpu.dealloc async [%t5] %base : memref<f32>
    }
    scf.condition(%more) %copy : memref<256xf32>
  } do {
  ^bb0(%y: memref<256xf32>):
    %t1 = gpu.wait async
    %next, %t2 = gpu.alloc async [%t1] () : memref<256xf32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %v = memref.load %y[%tx] : memref<256xf32>
      %half = arith.constant 0.5 : f32
      %w = arith.mulf %v, %half : f32
      memref.store %w, %next[%tx] : memref<256xf32>
      gpu.terminator
    }
    %t4 = gpu.wait async
    %t5 = gpu.dealloc async [%t4] %y : memref<256xf32>
    scf.yield %next, %true : memref<256xf32>, i1
  }
  %t7 = gpu.wait async
  %t8 = gpu.memcpy async [%t7] %out, %r : memref<256xf32>, memref<256xf32>
  %t9 = gpu.dealloc async [%t8] %r : memref<256xf32>
  %t10 = gpu.dealloc async [%t9] %arena : memref<64xi8>
  return
}

// -----

// The test forwards the carried value itself, not a buffer of its own: the
// forwarded value gets a home too, which the test fills with a copy and
// the body reads; the body's result, written into the carried home, does
// not overwrite what the body reads.
// CHECK-LABEL: func.func @forwards_argument
// CHECK:       scf.if
// CHECK:         %[[HOME:.+]], %{{.+}} = gpu.alloc async
// CHECK:         gpu.memcpy async [%{{.+}}] %[[HOME]], %{{.+}}
// CHECK:         %[[FWD:.+]], %{{.+}} = gpu.alloc async
// CHECK:         %[[LOOP:.+]] = func.call @kiln_cuda_graph_while_begin()
// CHECK:         gpu.launch async
// CHECK:         gpu.memcpy async [%{{.+}}] %[[FWD]], %[[HOME]]
// CHECK:         func.call @kiln_cuda_graph_while_test(%[[LOOP]]
// CHECK:         gpu.launch async
// CHECK:           memref.load %[[FWD]]
// CHECK:           memref.store %{{.+}}, %[[HOME]]
// CHECK:         gpu.launch async
// CHECK:           memref.load %[[HOME]]
// CHECK:         gpu.memcpy async [%{{.+}}] %[[FWD]], %[[HOME]]
// CHECK:         func.call @kiln_cuda_graph_while_end_iteration(%[[LOOP]], %{{.+}})
// CHECK:         gpu.dealloc async [%{{.+}}] %[[HOME]]
// CHECK-NEXT:    scf.yield %[[FWD]] : memref<4xf32>
func.func @forwards_argument(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %t1 = gpu.wait async
    %next, %t2 = gpu.alloc async [%t1] () : memref<4xf32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %y[%tx] : memref<4xf32>
      %one = arith.constant 1.0 : f32
      %w = arith.subf %v, %one : f32
      memref.store %w, %next[%tx] : memref<4xf32>
      gpu.terminator
    }
    scf.yield %next : memref<4xf32>
  }
  return
}

// -----

// The body reads a value on the host (a managed buffer): the loop stays a
// host loop.
// CHECK-LABEL: func.func @host_read_in_body
// CHECK-NOT:   kiln_cuda_graph
// CHECK:       scf.while
func.func @host_read_in_body(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %m, %tm = gpu.alloc async [%t0] host_shared () : memref<4xf32>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %v = memref.load %m[%c0] : memref<4xf32>
    memref.store %v, %m[%c1] : memref<4xf32>
    scf.yield %y : memref<4xf32>
  }
  return
}

// -----

// A counted loop (a kiln.for of three trips) in the body, as ownership-based
// deallocation leaves it: a fresh buffer per trip, the previous one freed
// under the ownership flag it carries, then the run-time alias check that
// frees the forwarded value where the result is another buffer. The
// capture of the iteration runs the counted loop (each trip's kernel a node
// of the iteration); the alias check's free of the forwarded value, a home
// in the graph form, is dropped; the counted loop's result, a buffer of its
// last trip, is copied into the carried home and freed.
// CHECK-LABEL: func.func @counted_in_body
// CHECK:       call @kiln_cuda_graph_loops()
// CHECK:       scf.if
// CHECK:         %[[HOME:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<4xf32>
// CHECK:         func.call @kiln_cuda_graph_while_test
// CHECK:         %[[TRIPS:.+]]:2 = scf.for
// CHECK:           scf.if %{{.+}} {
// CHECK:             gpu.dealloc
// CHECK:           }
// CHECK:         }
// CHECK-NOT:     scf.if
// CHECK:         gpu.memcpy async [%{{.+}}] %[[HOME]], %[[TRIPS]]#0
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.dealloc async [%{{.+}}] %[[TRIPS]]#0
// CHECK:         func.call @kiln_cuda_graph_while_end_iteration
// CHECK:       } else {
// CHECK:         scf.while
func.func @counted_in_body(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %false = arith.constant false
  %true = arith.constant true
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %copy, %t2 = gpu.alloc async [%t1] () : memref<4xf32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32>
      memref.store %v, %copy[%tx] : memref<4xf32>
      %ten = arith.constant 10.0 : f32
      %gt = arith.cmpf ogt, %v, %ten : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t4]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %copy : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %f:2 = scf.for %k = %c0 to %c3 step %c1 iter_args(%u = %y, %owned = %false) -> (memref<4xf32>, i1) {
      %v1 = gpu.wait async
      %half, %v2 = gpu.alloc async [%v1] () : memref<4xf32>
      %v3 = gpu.launch async [%v2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %u[%tx] : memref<4xf32>
        %h = arith.constant 0.5 : f32
        %m = arith.mulf %v, %h : f32
        memref.store %m, %half[%tx] : memref<4xf32>
        gpu.terminator
      }
      %base, %offset, %size, %stride = memref.extract_strided_metadata %u : memref<4xf32> -> memref<f32>, index, index, index
      scf.if %owned {
        %w1 = gpu.wait async
        %w2 = gpu.dealloc async [%w1] %base : memref<f32>
      }
      scf.yield %half, %true : memref<4xf32>, i1
    }
    %ybase, %yoffset, %ysize, %ystride = memref.extract_strided_metadata %y : memref<4xf32> -> memref<f32>, index, index, index
    %yp = memref.extract_aligned_pointer_as_index %y : memref<4xf32> -> index
    %fp = memref.extract_aligned_pointer_as_index %f#0 : memref<4xf32> -> index
    %other = arith.cmpi ne, %yp, %fp : index
    scf.if %other {
      %d1 = gpu.wait async
      %d2 = gpu.dealloc async [%d1] %ybase : memref<f32>
    }
    scf.yield %f#0 : memref<4xf32>
  }
  %e1 = gpu.wait async
  %e2 = gpu.dealloc async [%e1] %r : memref<4xf32>
  return
}

// -----

// A counted loop whose trips the host knows only at run time, and a body
// that frees a buffer from before the loop (a replayed iteration would free
// it again): both loops stay host loops.
// CHECK-LABEL: func.func @uncounted_in_body
// CHECK-NOT:   kiln_cuda_graph
// CHECK:       return
// CHECK-LABEL: func.func @frees_outside_buffer
// CHECK-NOT:   kiln_cuda_graph
// CHECK:       return
func.func @uncounted_in_body(%x0: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    scf.for %k = %c0 to %n step %c1 {
      %v1 = gpu.wait async
      %v2 = gpu.launch async [%v1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
        %v = memref.load %y[%c0] : memref<4xf32>
        %h = arith.constant 0.5 : f32
        %m = arith.mulf %v, %h : f32
        memref.store %m, %y[%c0] : memref<4xf32>
        gpu.terminator
      }
    }
    scf.yield %y : memref<4xf32>
  }
  return
}
func.func @frees_outside_buffer(%x0: memref<4xf32>, %before: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %yp = memref.extract_aligned_pointer_as_index %y : memref<4xf32> -> index
    %bp = memref.extract_aligned_pointer_as_index %before : memref<4xf32> -> index
    %other = arith.cmpi ne, %yp, %bp : index
    scf.if %other {
      %d1 = gpu.wait async
      %d2 = gpu.dealloc async [%d1] %before : memref<4xf32>
    }
    scf.yield %y : memref<4xf32>
  }
  return
}

// -----

// A loop inside a counted loop (a kiln.for) with no loop around that: it
// takes its graph form, as a loop outside any loop does (the capture of
// the call runs the counted loop's trips). Inside a loop of trips the host
// knows only at run time it stays a host loop, as inside any host loop.
// CHECK-LABEL: func.func @while_in_counted
// CHECK:       scf.for
// CHECK:         call @kiln_cuda_graph_loops()
// CHECK:         func.call @kiln_cuda_graph_while_begin
// CHECK-LABEL: func.func @while_in_uncounted
// CHECK-NOT:   kiln_cuda_graph
// CHECK:       return
// With inside-host-loops, the loop in the counted loop (a root) is left
// alone and the loop in the host loop of run-time trips gets its form.
// INSIDE-LABEL: func.func @while_in_counted
// INSIDE-NOT: kiln_cuda_graph
// INSIDE:     func.func @while_in_uncounted
// INSIDE:     scf.for
// INSIDE:       call @kiln_cuda_graph_loops()
// INSIDE:       scf.if
// INSIDE:         func.call @kiln_cuda_graph_while_begin()
// INSIDE:       } else {
// INSIDE:         scf.while
// INSIDE:     return
func.func @while_in_counted(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  scf.for %k = %c0 to %c3 step %c1 {
    %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
      %t1 = gpu.wait async
      %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
        %v = memref.load %x[%c0] : memref<4xf32>
        %ten = arith.constant 10.0 : f32
        %gt = arith.cmpf ogt, %v, %ten : f32
        memref.store %gt, %p[] : memref<i1>
        gpu.terminator
      }
      %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
      gpu.wait [%t3]
      %more = memref.load %slot[] : memref<i1>
      scf.condition(%more) %x : memref<4xf32>
    } do {
    ^bb0(%y: memref<4xf32>):
      %v1 = gpu.wait async
      %v2 = gpu.launch async [%v1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
        %v = memref.load %y[%c0] : memref<4xf32>
        %h = arith.constant 0.5 : f32
        %m = arith.mulf %v, %h : f32
        memref.store %m, %y[%c0] : memref<4xf32>
        gpu.terminator
      }
      scf.yield %y : memref<4xf32>
    }
  }
  return
}
func.func @while_in_uncounted(%x0: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  scf.for %k = %c0 to %n step %c1 {
    %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
      %t1 = gpu.wait async
      %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
        %v = memref.load %x[%c0] : memref<4xf32>
        %ten = arith.constant 10.0 : f32
        %gt = arith.cmpf ogt, %v, %ten : f32
        memref.store %gt, %p[] : memref<i1>
        gpu.terminator
      }
      %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
      gpu.wait [%t3]
      %more = memref.load %slot[] : memref<i1>
      scf.condition(%more) %x : memref<4xf32>
    } do {
    ^bb0(%y: memref<4xf32>):
      scf.yield %y : memref<4xf32>
    }
  }
  return
}

// -----

// A convolution in the body whose descriptor is not a constant of the
// module (kiln-cuda-library-conv passes a constant global's address): the
// runtime could not be asked whether cuDNN made its plan (which a capture
// cannot hold), so the loop stays a host loop.
// CHECK-LABEL: func.func @convolution_in_body
// CHECK-NOT:   kiln_cuda_graph
// CHECK:       scf.while
func.func private @kiln_cuda_conv(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @convolution_in_body(%x0: memref<4xf32>, %d: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    func.call @kiln_cuda_conv(%d, %d, %d, %d) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
    scf.yield %y : memref<4xf32>
  }
  return
}

// -----

// A convolution in the body as kiln-cuda-library-conv makes it, its
// descriptor a constant global: the loop asks
// kiln_cuda_graph_loops_planned, with no tuned site and the call's code
// (KILN_CUDA_PLANNED_CONV) and descriptor in a constant global, so that
// it runs on the host until cuDNN has run the convolution (made its plan),
// and as a graph from then on, the convolution captured with the body.
// CHECK-LABEL: func.func @planned_convolution_in_body
// CHECK:       %[[NONE:.*]] = arith.constant 0 : i64
// CHECK:       %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:       %[[SIZE:.*]] = arith.constant 22 : i64
// CHECK:       memref.get_global @[[CALLS:kiln_graph_loop_calls[_0-9]*]] : memref<22xi64>
// CHECK:       %[[ASK:.*]] = call @kiln_cuda_graph_loops_planned(%[[NONE]], %[[NULL]], %[[SIZE]], %{{.*}}) : (i64, !llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK:       %[[GRAPH:.*]] = arith.cmpi ne, %[[ASK]]
// CHECK:       scf.if %[[GRAPH]]
// CHECK:         call @kiln_cuda_graph_while_begin()
// CHECK:         call @kiln_cuda_graph_while_test(
// CHECK:         func.call @kiln_cuda_conv(
// CHECK:         call @kiln_cuda_graph_while_end_iteration(
// CHECK:       } else {
// CHECK:         scf.while
// CHECK:       memref.global "private" constant @[[CALLS]] : memref<22xi64> = dense<[1, 2, 1, 0, 0, 1, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1]> {alignment = 8 : i64}
// TWICE-LABEL: func.func @planned_convolution_in_body
// TWICE-COUNT-1: call @kiln_cuda_graph_loops_planned
// TWICE-NOT:   call @kiln_cuda_graph_loops_planned
// TWICE:       return
memref.global "private" constant @conv_descriptor : memref<21xi64> = dense<[2, 1, 0, 0, 1, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1]> {alignment = 8 : i64}
func.func private @kiln_cuda_conv(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @planned_convolution_in_body(%x0: memref<4xf32>, %b: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %g = memref.get_global @conv_descriptor : memref<21xi64>
    %i = memref.extract_aligned_pointer_as_index %g : memref<21xi64> -> index
    %a = arith.index_cast %i : index to i64
    %d = llvm.inttoptr %a : i64 to !llvm.ptr
    func.call @kiln_cuda_conv(%d, %b, %b, %b) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
    scf.yield %y : memref<4xf32>
  }
  return
}

// -----

// The same convolution twice, and a tuned call site whose second variant
// calls cuDNN's attention: the loop asks about the site and the
// convolution, once. Not about the attention: the site is decided after
// each variant ran (cuDNN made its plan), or, untimed, for variant 0,
// whose work alone a capture then holds.
// CHECK-LABEL: func.func @planned_calls_and_site
// CHECK:       %[[N:.*]] = arith.constant 1 : i64
// CHECK:       memref.get_global @[[SITES:kiln_graph_loop_sites[_0-9]*]] : memref<1xi64>
// CHECK:       %[[SIZE:.*]] = arith.constant 22 : i64
// CHECK:       memref.get_global @[[CALLS:kiln_graph_loop_calls[_0-9]*]] : memref<22xi64>
// CHECK:       call @kiln_cuda_graph_loops_planned(%[[N]], %{{.*}}, %[[SIZE]], %{{.*}}) : (i64, !llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK:       memref.global "private" constant @[[SITES]] : memref<1xi64> = dense<4>
// CHECK:       memref.global "private" constant @[[CALLS]] : memref<22xi64> = dense<[1, 2, 1, 0, 0, 1, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1]>
memref.global "private" constant @conv_descriptor : memref<21xi64> = dense<[2, 1, 0, 0, 1, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1]> {alignment = 8 : i64}
memref.global "private" constant @attention_descriptor : memref<13xi64> = dense<[4, 0, 1, 2, 64, 64, 64, 64, 1, 1, 1, 1, 0]> {alignment = 8 : i64}
func.func private @kiln_cuda_conv(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func private @kiln_cuda_attention(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func private @kiln_cuda_tune_rounds(i64, i64, !llvm.ptr) -> i64
func.func private @kiln_cuda_tune_begin(i64, i64) -> i64
func.func private @kiln_cuda_tune_end(i64, i64)
func.func @planned_calls_and_site(%x0: memref<4xf32>, %b: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %site = arith.constant 4 : i64
  %two = arith.constant 2 : i64
  %zero64 = arith.constant 0 : i64
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %g = memref.get_global @conv_descriptor : memref<21xi64>
    %i = memref.extract_aligned_pointer_as_index %g : memref<21xi64> -> index
    %a = arith.index_cast %i : index to i64
    %d = llvm.inttoptr %a : i64 to !llvm.ptr
    func.call @kiln_cuda_conv(%d, %b, %b, %b) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
    func.call @kiln_cuda_conv(%d, %b, %b, %b) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
    %rounds = func.call @kiln_cuda_tune_rounds(%site, %two, %b) : (i64, i64, !llvm.ptr) -> i64
    %n = arith.index_cast %rounds : i64 to index
    scf.for %k = %c0 to %n step %c1 {
      %round = arith.index_cast %k : index to i64
      %variant = func.call @kiln_cuda_tune_begin(%site, %round) : (i64, i64) -> i64
      %first = arith.cmpi eq, %variant, %zero64 : i64
      scf.if %first {
        %t4 = gpu.wait async
        %t5 = gpu.launch async [%t4] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
          %v = memref.load %y[%tx] : memref<4xf32>
          memref.store %v, %y[%tx] : memref<4xf32>
          gpu.terminator
        }
      } else {
        %ga = memref.get_global @attention_descriptor : memref<13xi64>
        %ia = memref.extract_aligned_pointer_as_index %ga : memref<13xi64> -> index
        %aa = arith.index_cast %ia : index to i64
        %da = llvm.inttoptr %aa : i64 to !llvm.ptr
        func.call @kiln_cuda_attention(%da, %b, %b, %b, %b, %b, %b) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
      } {kiln.cuda_tuned_variant = 4 : i64}
      func.call @kiln_cuda_tune_end(%site, %round) : (i64, i64) -> ()
    } {kiln.cuda_tuned_site = 4 : i64}
    scf.yield %y : memref<4xf32>
  }
  return
}

// -----

// A tuned call site in the body (TunedSites.h: the runtime times its
// variants at its first call outside a capture, and a loop is captured at
// each run): the loop's graph form is asked for with
// kiln_cuda_graph_loops_tuned and the site's number (a constant global),
// so that the loop runs on the host until the site is decided; the graph
// form runs the site's rounds (one, of the chosen variant, where
// captured) and its choice of variant.
// CHECK-LABEL: func.func @tuned_site_in_body
// CHECK:       %[[N:.*]] = arith.constant 1 : i64
// CHECK:       memref.get_global @[[SITES:kiln_graph_loop_sites[_0-9]*]] : memref<1xi64>
// CHECK:       %[[ASK:.*]] = call @kiln_cuda_graph_loops_tuned(%[[N]], %{{.*}}) : (i64, !llvm.ptr) -> i32
// CHECK:       %[[GRAPH:.*]] = arith.cmpi ne, %[[ASK]]
// CHECK:       scf.if %[[GRAPH]]
// CHECK:         call @kiln_cuda_graph_while_begin()
// CHECK:         call @kiln_cuda_graph_while_test(
// CHECK:         scf.for
// CHECK:           func.call @kiln_cuda_tune_begin
// CHECK:           } {kiln.cuda_tuned_variant = 0 : i64}
// CHECK:         } {kiln.cuda_tuned_site = 0 : i64}
// CHECK:         call @kiln_cuda_graph_while_end_iteration(
// CHECK:       } else {
// CHECK:         scf.while
// CHECK:       memref.global "private" constant @[[SITES]] : memref<1xi64> = dense<0> {alignment = 8 : i64}
func.func private @kiln_cuda_tune_rounds(i64, i64, !llvm.ptr) -> i64
func.func private @kiln_cuda_tune_begin(i64, i64) -> i64
func.func private @kiln_cuda_tune_end(i64, i64)
func.func @tuned_site_in_body(%x0: memref<4xf32>, %names: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %site = arith.constant 0 : i64
  %two = arith.constant 2 : i64
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %zero = arith.constant 0.0 : f32
      %gt = arith.cmpf ogt, %v, %zero : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %rounds = func.call @kiln_cuda_tune_rounds(%site, %two, %names) : (i64, i64, !llvm.ptr) -> i64
    %n = arith.index_cast %rounds : i64 to index
    scf.for %i = %c0 to %n step %c1 {
      %round = arith.index_cast %i : index to i64
      %variant = func.call @kiln_cuda_tune_begin(%site, %round) : (i64, i64) -> i64
      %first = arith.cmpi eq, %variant, %site : i64
      scf.if %first {
        %t4 = gpu.wait async
        %t5 = gpu.launch async [%t4] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
          %v = memref.load %y[%tx] : memref<4xf32>
          memref.store %v, %y[%tx] : memref<4xf32>
          gpu.terminator
        }
      } else {
        %t4 = gpu.wait async
        %t5 = gpu.memcpy async [%t4] %y, %y : memref<4xf32>, memref<4xf32>
      } {kiln.cuda_tuned_variant = 0 : i64}
      func.call @kiln_cuda_tune_end(%site, %round) : (i64, i64) -> ()
    } {kiln.cuda_tuned_site = 0 : i64}
    scf.yield %y : memref<4xf32>
  }
  return
}

// -----

// A loop inside a loop: both stay host loops.
// CHECK-LABEL: func.func @nested
// CHECK-NOT:   kiln_cuda_graph
// CHECK:       scf.for
// CHECK:         scf.while
func.func @nested(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  scf.for %i = %c0 to %c3 step %c1 {
    %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
      %t1 = gpu.wait async
      %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
        %v = memref.load %x[%c0] : memref<4xf32>
        %zero = arith.constant 0.0 : f32
        %gt = arith.cmpf ogt, %v, %zero : f32
        memref.store %gt, %p[] : memref<i1>
        gpu.terminator
      }
      %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
      gpu.wait [%t3]
      %more = memref.load %slot[] : memref<i1>
      scf.condition(%more) %x : memref<4xf32>
    } do {
    ^bb0(%y: memref<4xf32>):
      scf.yield %y : memref<4xf32>
    }
  }
  return
}

// -----

// A loop inside a loop, both of whose tests and bodies only queue device
// work: the inner loop gets its graph form first and the outer's graph
// form holds it (the runtime puts the inner WHILE node into the outer's
// iteration). The outer body yields the inner loop's result, a buffer the
// inner graph form allocates: the outer copies it into its carried home
// and frees it.
// With inside-host-loops, neither loop is taken: the outer one is a root
// that can run as a graph, whose form holds the inner one.
// INSIDE-LABEL: func.func @while_in_while
// INSIDE-NOT: kiln_cuda_graph
// INSIDE:     return
// CHECK-LABEL: func.func @while_in_while
// CHECK:       call @kiln_cuda_graph_loops()
// CHECK:       scf.if
// CHECK:         %[[OUTER:.+]] = func.call @kiln_cuda_graph_while_begin()
// CHECK:         func.call @kiln_cuda_graph_while_test(%[[OUTER]], %{{.+}})
// CHECK:         call @kiln_cuda_graph_loops()
// CHECK:         %[[S:.+]] = scf.if
// CHECK:           %[[INNER:.+]] = func.call @kiln_cuda_graph_while_begin()
// CHECK:           func.call @kiln_cuda_graph_while_test(%[[INNER]], %{{.+}})
// CHECK:           func.call @kiln_cuda_graph_while_end_iteration(%[[INNER]], %{{.+}})
// CHECK:         } else {
// CHECK:           scf.while
// CHECK:         }
// CHECK:         gpu.memcpy async [%{{.+}}] %{{.+}}, %[[S]]
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.dealloc async [%{{.+}}] %[[S]]
// CHECK:         func.call @kiln_cuda_graph_while_end_iteration(%[[OUTER]], %{{.+}})
// CHECK:       } else {
// CHECK:         scf.while
// CHECK:           scf.if
// CHECK:             func.call @kiln_cuda_graph_while_begin()
// CHECK:           } else {
// CHECK:             scf.while
func.func @while_in_while(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %slot = memref.alloca() : memref<i1>
  %inner_slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %q, %tq = gpu.alloc async [%tp] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %copy, %t2 = gpu.alloc async [%t1] () : memref<4xf32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32>
      memref.store %v, %copy[%tx] : memref<4xf32>
      %ten = arith.constant 10.0 : f32
      %gt = arith.cmpf ogt, %v, %ten : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t4]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %copy : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %s = scf.while (%z = %y) : (memref<4xf32>) -> memref<4xf32> {
      %u1 = gpu.wait async
      %zc, %u2 = gpu.alloc async [%u1] () : memref<4xf32>
      %u3 = gpu.launch async [%u2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %z[%tx] : memref<4xf32>
        memref.store %v, %zc[%tx] : memref<4xf32>
        %one = arith.constant 1.0 : f32
        %gt = arith.cmpf ogt, %v, %one : f32
        memref.store %gt, %q[] : memref<i1>
        gpu.terminator
      }
      %u4 = gpu.memcpy async [%u3] %inner_slot, %q : memref<i1>, memref<i1>
      gpu.wait [%u4]
      %again = memref.load %inner_slot[] : memref<i1>
      scf.condition(%again) %zc : memref<4xf32>
    } do {
    ^bb0(%w: memref<4xf32>):
      %v1 = gpu.wait async
      %half, %v2 = gpu.alloc async [%v1] () : memref<4xf32>
      %v3 = gpu.launch async [%v2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %w[%tx] : memref<4xf32>
        %h = arith.constant 0.5 : f32
        %m = arith.mulf %v, %h : f32
        memref.store %m, %half[%tx] : memref<4xf32>
        gpu.terminator
      }
      %v4 = gpu.wait async
      %v5 = gpu.dealloc async [%v4] %w : memref<4xf32>
      scf.yield %half : memref<4xf32>
    }
    %d1 = gpu.wait async
    %d2 = gpu.dealloc async [%d1] %y : memref<4xf32>
    scf.yield %s : memref<4xf32>
  }
  %e1 = gpu.wait async
  %e2 = gpu.dealloc async [%e1] %r : memref<4xf32>
  return
}

// -----

// A loop inside a cond (still read on the host) inside a loop: the outer
// loop cannot run as a graph while the cond cannot, so the inner loop gets
// a graph form of its own, which lets kiln-cuda-graph-conds give the cond
// one, and then this pass the outer loop (kiln-cuda-graph-forms runs them
// in turn). Run twice, the pass adds nothing more.
// CHECK-LABEL: func.func @while_in_cond_in_while
// CHECK-NOT:   kiln_cuda_graph
// CHECK:       scf.while
// CHECK:       } do {
// CHECK:         %[[BIG:.+]] = memref.load %{{.+}}[] : memref<i1>
// CHECK-NEXT:    scf.if %[[BIG]]
// CHECK:           call @kiln_cuda_graph_loops()
// CHECK:           scf.if
// CHECK:             %[[INNER:.+]] = func.call @kiln_cuda_graph_while_begin()
// CHECK:             func.call @kiln_cuda_graph_while_end_iteration(%[[INNER]], %{{.+}})
// CHECK:           } else {
// CHECK:             scf.while
// TWICE-LABEL: func.func @while_in_cond_in_while
// TWICE-COUNT-1: call @kiln_cuda_graph_loops()
// TWICE-NOT:   call @kiln_cuda_graph_loops()
// TWICE:       return
func.func @while_in_cond_in_while(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %slot = memref.alloca() : memref<i1>
  %odd_slot = memref.alloca() : memref<i1>
  %inner_slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %o, %to = gpu.alloc async [%tp] () : memref<i1>
  %q, %tq = gpu.alloc async [%to] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %copy, %t2 = gpu.alloc async [%t1] () : memref<4xf32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32>
      memref.store %v, %copy[%tx] : memref<4xf32>
      %ten = arith.constant 10.0 : f32
      %gt = arith.cmpf ogt, %v, %ten : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t4]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %copy : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %o1 = gpu.wait async
    %o2 = gpu.launch async [%o1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %y[%c0] : memref<4xf32>
      %hundred = arith.constant 100.0 : f32
      %gt = arith.cmpf ogt, %v, %hundred : f32
      memref.store %gt, %o[] : memref<i1>
      gpu.terminator
    }
    %o3 = gpu.memcpy async [%o2] %odd_slot, %o : memref<i1>, memref<i1>
    gpu.wait [%o3]
    %big = memref.load %odd_slot[] : memref<i1>
    %b = scf.if %big -> (memref<4xf32>) {
      %s = scf.while (%z = %y) : (memref<4xf32>) -> memref<4xf32> {
        %u1 = gpu.wait async
        %zc, %u2 = gpu.alloc async [%u1] () : memref<4xf32>
        %u3 = gpu.launch async [%u2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
          %v = memref.load %z[%tx] : memref<4xf32>
          memref.store %v, %zc[%tx] : memref<4xf32>
          %one = arith.constant 1.0 : f32
          %gt = arith.cmpf ogt, %v, %one : f32
          memref.store %gt, %q[] : memref<i1>
          gpu.terminator
        }
        %u4 = gpu.memcpy async [%u3] %inner_slot, %q : memref<i1>, memref<i1>
        gpu.wait [%u4]
        %again = memref.load %inner_slot[] : memref<i1>
        scf.condition(%again) %zc : memref<4xf32>
      } do {
      ^bb0(%w: memref<4xf32>):
        %v1 = gpu.wait async
        %half, %v2 = gpu.alloc async [%v1] () : memref<4xf32>
        %v3 = gpu.launch async [%v2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
          %v = memref.load %w[%tx] : memref<4xf32>
          %h = arith.constant 0.5 : f32
          %m = arith.mulf %v, %h : f32
          memref.store %m, %half[%tx] : memref<4xf32>
          gpu.terminator
        }
        %v4 = gpu.wait async
        %v5 = gpu.dealloc async [%v4] %w : memref<4xf32>
        scf.yield %half : memref<4xf32>
      }
      scf.yield %s : memref<4xf32>
    } else {
      %w1 = gpu.wait async
      %twice, %w2 = gpu.alloc async [%w1] () : memref<4xf32>
      %w3 = gpu.launch async [%w2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %y[%tx] : memref<4xf32>
        %m = arith.addf %v, %v : f32
        memref.store %m, %twice[%tx] : memref<4xf32>
        gpu.terminator
      }
      %w4 = gpu.wait async
      %w5 = gpu.dealloc async [%w4] %y : memref<4xf32>
      scf.yield %twice : memref<4xf32>
    }
    scf.yield %b : memref<4xf32>
  }
  %e1 = gpu.wait async
  %e2 = gpu.dealloc async [%e1] %r : memref<4xf32>
  return
}

// -----

// A loop whose body holds a cond in its graph form (kiln-cuda-graph-conds):
// the loop runs as a graph with the cond's graph form in its iteration
// (its host form, which reads the predicate, runs only where the runtime
// has no graphs). The cond's result, which the body yields, has a layout
// of dynamic strides, and so has the loop-carried value; every buffer it
// takes is dense (a cast of a dense input, the cond's fresh home), so its
// home is a dense buffer: the input is copied in from its dense source,
// and the cond's result, viewed at offset 0 with identity layout (no
// memref.cast, which the copy would fold), is copied in and freed.
// CHECK-LABEL: func.func @cond_in_while
// CHECK:       call @kiln_cuda_graph_loops()
// CHECK:       scf.if
// CHECK:         %[[HOME:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<4xf32>
// CHECK:         gpu.memcpy async [%{{.+}}] %[[HOME]], %arg0 : memref<4xf32>, memref<4xf32>
// CHECK:         %[[LOOP:.+]] = func.call @kiln_cuda_graph_while_begin()
// CHECK:         func.call @kiln_cuda_graph_while_test(%[[LOOP]], %{{.+}})
// CHECK:         call @kiln_cuda_graph_conds()
// CHECK:         %[[R:.+]] = scf.if
// CHECK:           func.call @kiln_cuda_graph_if_begin
// CHECK:         } else {
// CHECK:           memref.load
// CHECK:         }
// CHECK:         %[[DENSE:.+]] = memref.reinterpret_cast %[[R]] to offset: [0], sizes: [4], strides: [1] : memref<4xf32, strided<[?], offset: ?>> to memref<4xf32>
// CHECK:         gpu.memcpy async [%{{.+}}] %[[HOME]], %[[DENSE]] : memref<4xf32>, memref<4xf32>
// CHECK:         gpu.dealloc async [%{{.+}}] %[[R]]
// CHECK:         func.call @kiln_cuda_graph_while_end_iteration(%[[LOOP]], %{{.+}})
// CHECK:         gpu.dealloc async [%{{.+}}] %[[HOME]]
// CHECK:       } else {
// CHECK:         scf.while
func.func private @kiln_cuda_graph_conds() -> i32
func.func private @kiln_cuda_graph_if_begin(!llvm.ptr) -> !llvm.ptr
func.func private @kiln_cuda_graph_if_else(!llvm.ptr)
func.func private @kiln_cuda_graph_if_end(!llvm.ptr)
func.func @cond_in_while(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c0_i32 = arith.constant 0 : i32
  %slot = memref.alloca() : memref<i1>
  %branch_slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %q, %tq = gpu.alloc async [%tp] () : memref<i1>
  %init = memref.cast %x0 : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
  %r = scf.while (%x = %init) : (memref<4xf32, strided<[?], offset: ?>>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %copy, %t2 = gpu.alloc async [%t1] () : memref<4xf32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32, strided<[?], offset: ?>>
      memref.store %v, %copy[%tx] : memref<4xf32>
      %ten = arith.constant 10.0 : f32
      %lt = arith.cmpf olt, %v, %ten : f32
      memref.store %lt, %p[] : memref<i1>
      memref.store %lt, %q[] : memref<i1>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t4]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %copy : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %answer = func.call @kiln_cuda_graph_conds() : () -> i32
    %on = arith.cmpi ne, %answer, %c0_i32 : i32
    %s = scf.if %on -> (memref<4xf32, strided<[?], offset: ?>>) {
      %h1 = gpu.wait async
      %home, %h2 = gpu.alloc async [%h1] () : memref<4xf32>
      %qi = memref.extract_aligned_pointer_as_index %q : memref<i1> -> index
      %ql = arith.index_cast %qi : index to i64
      %qp = llvm.inttoptr %ql : i64 to !llvm.ptr
      %b = func.call @kiln_cuda_graph_if_begin(%qp) : (!llvm.ptr) -> !llvm.ptr
      %h3 = gpu.wait async
      %h4 = gpu.launch async [%h3] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %y[%tx] : memref<4xf32>
        %w = arith.addf %v, %v : f32
        memref.store %w, %home[%tx] : memref<4xf32>
        gpu.terminator
      }
      func.call @kiln_cuda_graph_if_else(%b) : (!llvm.ptr) -> ()
      %h5 = gpu.wait async
      %h6 = gpu.launch async [%h5] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %y[%tx] : memref<4xf32>
        %one = arith.constant 1.0 : f32
        %w = arith.addf %v, %one : f32
        memref.store %w, %home[%tx] : memref<4xf32>
        gpu.terminator
      }
      func.call @kiln_cuda_graph_if_end(%b) : (!llvm.ptr) -> ()
      %cast = memref.cast %home : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
      scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
    } else {
      %e1 = gpu.wait async
      %e2 = gpu.memcpy async [%e1] %branch_slot, %q : memref<i1>, memref<i1>
      gpu.wait [%e2]
      %which = memref.load %branch_slot[] : memref<i1>
      %picked = scf.if %which -> (memref<4xf32, strided<[?], offset: ?>>) {
        %f1 = gpu.wait async
        %two, %f2 = gpu.alloc async [%f1] () : memref<4xf32>
        %f3 = gpu.launch async [%f2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
          %v = memref.load %y[%tx] : memref<4xf32>
          %w = arith.addf %v, %v : f32
          memref.store %w, %two[%tx] : memref<4xf32>
          gpu.terminator
        }
        %cast = memref.cast %two : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
        scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
      } else {
        %f1 = gpu.wait async
        %inc, %f2 = gpu.alloc async [%f1] () : memref<4xf32>
        %f3 = gpu.launch async [%f2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
          %v = memref.load %y[%tx] : memref<4xf32>
          %one = arith.constant 1.0 : f32
          %w = arith.addf %v, %one : f32
          memref.store %w, %inc[%tx] : memref<4xf32>
          gpu.terminator
        }
        %cast = memref.cast %inc : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
        scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
      }
      scf.yield %picked : memref<4xf32, strided<[?], offset: ?>>
    }
    %d1 = gpu.wait async
    %d2 = gpu.dealloc async [%d1] %y : memref<4xf32>
    scf.yield %s : memref<4xf32, strided<[?], offset: ?>>
  }
  %e1 = gpu.wait async
  %e2 = gpu.dealloc async [%e1] %r : memref<4xf32>
  return
}


// -----

// The same loop, the cond's graph form freeing a buffer of its own through
// bufferization's run-time alias check on host buffers it allocates (the
// gradient of a cond holding a kiln.for): the capture of the iteration
// decides the check, so the loop still takes its graph form.
// CHECK-LABEL: func.func @alias_check_in_cond_in_while
// CHECK:       call @kiln_cuda_graph_loops()
// CHECK:         func.call @kiln_cuda_graph_while_begin()
// CHECK:           func.call @kiln_cuda_graph_if_begin
// CHECK:           func.call @dealloc_helper
// CHECK:         func.call @kiln_cuda_graph_while_end_iteration
func.func private @kiln_cuda_graph_conds() -> i32
func.func private @kiln_cuda_graph_if_begin(!llvm.ptr) -> !llvm.ptr
func.func private @kiln_cuda_graph_if_else(!llvm.ptr)
func.func private @kiln_cuda_graph_if_end(!llvm.ptr)
func.func private @dealloc_helper(memref<?xindex>, memref<?xindex>, memref<?xi1>, memref<?xi1>, memref<?xi1>)
func.func @alias_check_in_cond_in_while(%x0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c0_i32 = arith.constant 0 : i32
  %slot = memref.alloca() : memref<i1>
  %branch_slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %q, %tq = gpu.alloc async [%tp] () : memref<i1>
  %init = memref.cast %x0 : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
  %r = scf.while (%x = %init) : (memref<4xf32, strided<[?], offset: ?>>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %copy, %t2 = gpu.alloc async [%t1] () : memref<4xf32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32, strided<[?], offset: ?>>
      memref.store %v, %copy[%tx] : memref<4xf32>
      %ten = arith.constant 10.0 : f32
      %lt = arith.cmpf olt, %v, %ten : f32
      memref.store %lt, %p[] : memref<i1>
      memref.store %lt, %q[] : memref<i1>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t4]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %copy : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    %answer = func.call @kiln_cuda_graph_conds() : () -> i32
    %on = arith.cmpi ne, %answer, %c0_i32 : i32
    %s = scf.if %on -> (memref<4xf32, strided<[?], offset: ?>>) {
      %h1 = gpu.wait async
      %home, %h2 = gpu.alloc async [%h1] () : memref<4xf32>
      %qi = memref.extract_aligned_pointer_as_index %q : memref<i1> -> index
      %ql = arith.index_cast %qi : index to i64
      %qp = llvm.inttoptr %ql : i64 to !llvm.ptr
      %b = func.call @kiln_cuda_graph_if_begin(%qp) : (!llvm.ptr) -> !llvm.ptr
      %h3 = gpu.wait async
      %h4 = gpu.launch async [%h3] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %y[%tx] : memref<4xf32>
        %w = arith.addf %v, %v : f32
        memref.store %w, %home[%tx] : memref<4xf32>
        gpu.terminator
      }
      %ptrs = memref.alloc() : memref<1xindex>
      %conds = memref.alloc() : memref<1xi1>
      %none = memref.alloc() : memref<0xindex>
      %frees = memref.alloc() : memref<1xi1>
      %owned = memref.alloc() : memref<0xi1>
      %k1 = gpu.wait async
      %tmp, %k2 = gpu.alloc async [%k1] () : memref<4xf32>
      %it = memref.extract_aligned_pointer_as_index %tmp : memref<4xf32> -> index
      memref.store %it, %ptrs[%c0] : memref<1xindex>
      %true = arith.constant true
      memref.store %true, %conds[%c0] : memref<1xi1>
      %pc = memref.cast %ptrs : memref<1xindex> to memref<?xindex>
      %nc = memref.cast %none : memref<0xindex> to memref<?xindex>
      %cc = memref.cast %conds : memref<1xi1> to memref<?xi1>
      %fc = memref.cast %frees : memref<1xi1> to memref<?xi1>
      %oc = memref.cast %owned : memref<0xi1> to memref<?xi1>
      func.call @dealloc_helper(%pc, %nc, %cc, %fc, %oc) : (memref<?xindex>, memref<?xindex>, memref<?xi1>, memref<?xi1>, memref<?xi1>) -> ()
      %f0 = memref.load %frees[%c0] : memref<1xi1>
      scf.if %f0 {
        %k3 = gpu.wait async
        %k4 = gpu.dealloc async [%k3] %tmp : memref<4xf32>
      }
      memref.dealloc %ptrs : memref<1xindex>
      memref.dealloc %conds : memref<1xi1>
      memref.dealloc %none : memref<0xindex>
      memref.dealloc %frees : memref<1xi1>
      memref.dealloc %owned : memref<0xi1>
      func.call @kiln_cuda_graph_if_else(%b) : (!llvm.ptr) -> ()
      %h5 = gpu.wait async
      %h6 = gpu.launch async [%h5] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %y[%tx] : memref<4xf32>
        %one = arith.constant 1.0 : f32
        %w = arith.addf %v, %one : f32
        memref.store %w, %home[%tx] : memref<4xf32>
        gpu.terminator
      }
      func.call @kiln_cuda_graph_if_end(%b) : (!llvm.ptr) -> ()
      %cast = memref.cast %home : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
      scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
    } else {
      %e1 = gpu.wait async
      %e2 = gpu.memcpy async [%e1] %branch_slot, %q : memref<i1>, memref<i1>
      gpu.wait [%e2]
      %which = memref.load %branch_slot[] : memref<i1>
      %picked = scf.if %which -> (memref<4xf32, strided<[?], offset: ?>>) {
        %f1 = gpu.wait async
        %two, %f2 = gpu.alloc async [%f1] () : memref<4xf32>
        %f3 = gpu.launch async [%f2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
          %v = memref.load %y[%tx] : memref<4xf32>
          %w = arith.addf %v, %v : f32
          memref.store %w, %two[%tx] : memref<4xf32>
          gpu.terminator
        }
        %cast = memref.cast %two : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
        scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
      } else {
        %f1 = gpu.wait async
        %inc, %f2 = gpu.alloc async [%f1] () : memref<4xf32>
        %f3 = gpu.launch async [%f2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
          %v = memref.load %y[%tx] : memref<4xf32>
          %one = arith.constant 1.0 : f32
          %w = arith.addf %v, %one : f32
          memref.store %w, %inc[%tx] : memref<4xf32>
          gpu.terminator
        }
        %cast = memref.cast %inc : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
        scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
      }
      scf.yield %picked : memref<4xf32, strided<[?], offset: ?>>
    }
    %d1 = gpu.wait async
    %d2 = gpu.dealloc async [%d1] %y : memref<4xf32>
    scf.yield %s : memref<4xf32, strided<[?], offset: ?>>
  }
  %e1 = gpu.wait async
  %e2 = gpu.dealloc async [%e1] %r : memref<4xf32>
  return
}

// -----

// A loop inside a loop that reads a value on the host in its body (a
// reverse-mode gradient's stack growth reads the stack's new capacity):
// the outer loop stays a host loop, and so does the inner one without
// inside-host-loops. With it, the inner loop gets a graph form of its own,
// inside the host loop's body, which the runtime captures at each trip.
// CHECK-LABEL: func.func @while_in_host_while
// CHECK-NOT:   kiln_cuda_graph
// CHECK:       return
// INSIDE-LABEL: func.func @while_in_host_while
// INSIDE:     scf.while
// INSIDE:       memref.load %{{.+}}[] : memref<index>
// INSIDE:       %[[ON:.+]] = arith.cmpi ne
// INSIDE:       scf.if %[[ON]] -> (memref<4xf32>) {
// INSIDE:         %[[LOOP:.+]] = func.call @kiln_cuda_graph_while_begin()
// INSIDE:         func.call @kiln_cuda_graph_while_test(%[[LOOP]], %{{.+}})
// INSIDE:         func.call @kiln_cuda_graph_while_end_iteration(%[[LOOP]], %{{.+}})
// INSIDE:       } else {
// INSIDE:         scf.while
// INSIDE:       }
// INSIDE:       scf.yield
// INSIDE:     return
func.func @while_in_host_while(%x0: memref<4xf32>, %sizes: memref<index>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %inner_slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %q, %tq = gpu.alloc async [%tp] () : memref<i1>
  %r = scf.while (%x = %x0) : (memref<4xf32>) -> memref<4xf32> {
    %t1 = gpu.wait async
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%c0] : memref<4xf32>
      %ten = arith.constant 10.0 : f32
      %gt = arith.cmpf ogt, %v, %ten : f32
      memref.store %gt, %p[] : memref<i1>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t3]
    %more = memref.load %slot[] : memref<i1>
    scf.condition(%more) %x : memref<4xf32>
  } do {
  ^bb0(%y: memref<4xf32>):
    // What the host reads: the outer loop cannot be captured.
    %n = memref.load %sizes[] : memref<index>
    memref.store %n, %sizes[] : memref<index>
    %s = scf.while (%z = %y) : (memref<4xf32>) -> memref<4xf32> {
      %u1 = gpu.wait async
      %u2 = gpu.launch async [%u1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
        %v = memref.load %z[%c0] : memref<4xf32>
        %one = arith.constant 1.0 : f32
        %gt = arith.cmpf ogt, %v, %one : f32
        memref.store %gt, %q[] : memref<i1>
        gpu.terminator
      }
      %u3 = gpu.memcpy async [%u2] %inner_slot, %q : memref<i1>, memref<i1>
      gpu.wait [%u3]
      %again = memref.load %inner_slot[] : memref<i1>
      scf.condition(%again) %z : memref<4xf32>
    } do {
    ^bb0(%w: memref<4xf32>):
      %v1 = gpu.wait async
      %v2 = gpu.launch async [%v1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
        %v = memref.load %w[%c0] : memref<4xf32>
        %h = arith.constant 0.5 : f32
        %m = arith.mulf %v, %h : f32
        memref.store %m, %w[%c0] : memref<4xf32>
        gpu.terminator
      }
      scf.yield %w : memref<4xf32>
    }
    scf.yield %s : memref<4xf32>
  }
  return
}
