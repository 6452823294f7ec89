// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-graph-conds | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-graph-conds --kiln-cuda-graph-conds | FileCheck %s --check-prefix=TWICE

// A cond as kiln-cuda-device-allocations leaves a kiln.cond: a kernel
// computes the predicate, the host copies it back, waits and branches;
// each branch allocates its result (the first one a temporary too, which
// it frees). It gets a graph form for the runtime to take while it
// captures a call: a home for the result, the predicate's device address
// to the runtime's begin call, both branches writing into the home (not a
// buffer of their own), between the runtime's else and end calls. The
// predicate's read and the cond as they were are the other form, which
// runs otherwise. Run again, the pass leaves the host form alone.
// TWICE-LABEL: func.func @choose
// TWICE-COUNT-1: call @kiln_cuda_graph_conds()
// TWICE-NOT:   call @kiln_cuda_graph_conds()
// TWICE:       return
// CHECK:       func.func private @kiln_cuda_graph_if_end(!llvm.ptr)
// CHECK:       func.func private @kiln_cuda_graph_if_else(!llvm.ptr)
// CHECK:       func.func private @kiln_cuda_graph_if_begin(!llvm.ptr) -> !llvm.ptr
// CHECK:       func.func private @kiln_cuda_graph_conds() -> i32
// CHECK-LABEL: func.func @choose
// CHECK:       %[[SLOT:.+]] = memref.alloca() : memref<i1>
// CHECK:       %[[P:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<i1>
// CHECK:       gpu.launch async
// CHECK-NOT:   gpu.memcpy
// CHECK:       %[[Q:.+]] = call @kiln_cuda_graph_conds() : () -> i32
// CHECK:       %[[ON:.+]] = arith.cmpi ne, %[[Q]], %{{.+}} : i32
// CHECK:       %[[R:.+]] = scf.if %[[ON]] -> (memref<4xf32, strided<[?], offset: ?>>) {
// CHECK:         %[[HOME:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<4xf32>
// CHECK:         memref.extract_strided_metadata %[[P]]
// CHECK:         %[[PTR:.+]] = llvm.inttoptr %{{.+}} : i64 to !llvm.ptr
// CHECK:         %[[B:.+]] = func.call @kiln_cuda_graph_if_begin(%[[PTR]])
// CHECK-NOT:     gpu.alloc async [%{{.+}}] () : memref<4xf32>
// CHECK:         %[[TMP:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<8xf32>
// CHECK:         gpu.launch async
// CHECK:           memref.store %{{.+}}, %[[HOME]]
// CHECK:         gpu.dealloc async [%{{.+}}] %[[TMP]]
// CHECK:         func.call @kiln_cuda_graph_if_else(%[[B]])
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch async
// CHECK:           memref.store %{{.+}}, %[[HOME]]
// CHECK:         func.call @kiln_cuda_graph_if_end(%[[B]])
// CHECK:         %[[CAST:.+]] = memref.cast %[[HOME]]
// CHECK:         scf.yield %[[CAST]]
// CHECK:       } else {
// CHECK:         gpu.memcpy async [%{{.+}}] %[[SLOT]], %[[P]]
// CHECK-NEXT:    gpu.wait [
// CHECK-NEXT:    %[[MORE:.+]] = memref.load %[[SLOT]][]
// CHECK-NEXT:    %[[HOST:.+]] = scf.if %[[MORE]]
// CHECK:         scf.yield %[[HOST]]
// CHECK:       }
// CHECK:       gpu.memcpy async [%{{.+}}] %{{.+}}, %[[R]]
func.func @choose(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %t1 = gpu.launch async [%tp] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%c0] : memref<4xf32>
    %zero = arith.constant 0.0 : f32
    %gt = arith.cmpf ogt, %v, %zero : f32
    memref.store %gt, %p[] : memref<i1>
    gpu.terminator
  }
  %t2 = gpu.memcpy async [%t1] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t2]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32, strided<[?], offset: ?>>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tmp, %tt = gpu.alloc async [%ta] () : memref<8xf32>
    %l = gpu.launch async [%tt] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32>
      memref.store %v, %tmp[%tx] : memref<8xf32>
      %s = arith.addf %v, %v : f32
      memref.store %s, %a[%tx] : memref<4xf32>
      gpu.terminator
    }
    %td = gpu.dealloc async [%l] %tmp : memref<8xf32>
    %cast = memref.cast %a : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
    scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %l = gpu.launch async [%ta] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32>
      %n = arith.negf %v : f32
      memref.store %n, %a[%tx] : memref<4xf32>
      gpu.terminator
    }
    %cast = memref.cast %a : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
    scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
  }
  %t3 = gpu.wait async
  %t4 = gpu.memcpy async [%t3] %y, %r : memref<4xf32>, memref<4xf32, strided<[?], offset: ?>>
  %base, %offset, %size, %stride = memref.extract_strided_metadata %r : memref<4xf32, strided<[?], offset: ?>> -> memref<f32>, index, index, index
  %t5 = gpu.dealloc async [%t4] %base : memref<f32>
  return
}

// -----

// Conds that keep their host form only: a branch that yields a buffer it
// did not allocate, one that frees a buffer from outside, one that reads
// on the host, a cond with a result that is not a buffer, and one whose
// predicate is not read from the device.
// CHECK-NOT:   kiln_cuda_graph_conds
// CHECK:       func.func @not_a_read(
// CHECK-NOT:   kiln_cuda_graph_conds
// CHECK:       // -----
func.func @yields_input(%x: memref<4xf32>, %p: memref<i1>) -> memref<4xf32> {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    scf.yield %x : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r : memref<4xf32>
}
func.func @frees_outside(%x: memref<4xf32>, %p: memref<i1>) -> memref<4xf32> {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %td = gpu.dealloc async [%ta] %x : memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r : memref<4xf32>
}
func.func @reads_on_host(%x: memref<4xf32>, %p: memref<i1>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %m, %tm = gpu.alloc async [%t0] host_shared () : memref<4xf32>
  %t1 = gpu.memcpy async [%tm] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    %v = memref.load %m[%c0] : memref<4xf32>
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r : memref<4xf32>
}
func.func @flag_result(%p: memref<i1>) -> (memref<4xf32>, i1) {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r:2 = scf.if %more -> (memref<4xf32>, i1) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %true = arith.constant true
    scf.yield %a, %true : memref<4xf32>, i1
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %false = arith.constant false
    scf.yield %a, %false : memref<4xf32>, i1
  }
  return %r#0, %r#1 : memref<4xf32>, i1
}
func.func @not_a_read(%flag: i1) -> memref<4xf32> {
  %r = scf.if %flag -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// The same cond with both branches qualifying takes the graph form (the
// control for the cases above).
// CHECK-LABEL: func.func @qualifies
// CHECK:       call @kiln_cuda_graph_conds()
func.func @qualifies(%x: memref<4xf32>, %p: memref<i1>) -> memref<4xf32> {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<4xf32>, memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// A branch that yields a reshape of the buffer it allocates (a kiln.reshape
// of its result, bufferized): the branch writes the home through a view of
// the buffer's shape; the other branch's buffer is the home itself.
// CHECK-LABEL: func.func @reshaped
// CHECK:       scf.if
// CHECK:         %[[HOME:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<6xf32>
// CHECK:         call @kiln_cuda_graph_if_begin
// CHECK-NOT:     gpu.alloc
// CHECK:         %[[VIEW:.*]] = memref.reinterpret_cast %[[HOME]] to offset: [0], sizes: [2, 3], strides: [3, 1] : memref<6xf32> to memref<2x3xf32>
// CHECK:         gpu.memcpy async [%{{.*}}] %[[VIEW]], %{{.*}} : memref<2x3xf32>, memref<2x3xf32>
// CHECK:         call @kiln_cuda_graph_if_else
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.memcpy async [%{{.*}}] %[[HOME]], %{{.*}} : memref<6xf32>, memref<6xf32>
// CHECK:         call @kiln_cuda_graph_if_end
// CHECK:         scf.yield %[[HOME]]
func.func @reshaped(%x: memref<2x3xf32>, %y: memref<6xf32>, %p: memref<i1>) -> memref<6xf32> {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<6xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<2x3xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<2x3xf32>, memref<2x3xf32>
    %flat = memref.reinterpret_cast %a to offset: [0], sizes: [6], strides: [1] : memref<2x3xf32> to memref<6xf32>
    scf.yield %flat : memref<6xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<6xf32>
    %tc = gpu.memcpy async [%ta] %a, %y : memref<6xf32>, memref<6xf32>
    scf.yield %a : memref<6xf32>
  }
  return %r : memref<6xf32>
}

// -----

// A branch that yields one buffer for two results: the second home takes a
// copy of the first after the branch.
// CHECK-LABEL: func.func @yielded_twice
// CHECK:         %[[H0:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<4xf32>
// CHECK:         %[[H1:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<4xf32>
// CHECK:         call @kiln_cuda_graph_if_begin
// CHECK:         gpu.memcpy async [%{{.*}}] %[[H0]], %{{.*}} : memref<4xf32>, memref<4xf32>
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.memcpy async [%{{.*}}] %[[H1]], %[[H0]] : memref<4xf32>, memref<4xf32>
// CHECK-NEXT:    call @kiln_cuda_graph_if_else
// CHECK:         call @kiln_cuda_graph_if_end
// CHECK:         scf.yield %[[H0]], %[[H1]]
func.func @yielded_twice(%x: memref<4xf32>, %p: memref<i1>) -> (memref<4xf32>, memref<4xf32>) {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r:2 = scf.if %more -> (memref<4xf32>, memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<4xf32>, memref<4xf32>
    scf.yield %a, %a : memref<4xf32>, memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %w2 = gpu.wait async
    %b, %tb = gpu.alloc async [%w2] () : memref<4xf32>
    scf.yield %a, %b : memref<4xf32>, memref<4xf32>
  }
  return %r#0, %r#1 : memref<4xf32>, memref<4xf32>
}

// -----

// A branch that yields one buffer through two values (the buffer and a
// cast of it) takes the graph form too; a branch that yields one buffer
// in two shapes (through a reshape) keeps the host form, its homes being
// of different shapes.
// CHECK-LABEL: func.func @yielded_as_two_values
// CHECK:         call @kiln_cuda_graph_if_begin
// CHECK:         gpu.memcpy async [%{{.*}}] %{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>
// CHECK-NEXT:    call @kiln_cuda_graph_if_else
// CHECK:       func.func @yielded_in_two_shapes(
// CHECK-NOT:   kiln_cuda_graph_if_begin
// CHECK:       // -----
func.func @yielded_as_two_values(%p: memref<i1>) -> (memref<4xf32>, memref<4xf32, strided<[?], offset: ?>>) {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r:2 = scf.if %more -> (memref<4xf32>, memref<4xf32, strided<[?], offset: ?>>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %c = memref.cast %a : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
    scf.yield %a, %c : memref<4xf32>, memref<4xf32, strided<[?], offset: ?>>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %w2 = gpu.wait async
    %b, %tb = gpu.alloc async [%w2] () : memref<4xf32>
    %c = memref.cast %b : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
    scf.yield %a, %c : memref<4xf32>, memref<4xf32, strided<[?], offset: ?>>
  }
  return %r#0, %r#1 : memref<4xf32>, memref<4xf32, strided<[?], offset: ?>>
}
func.func @yielded_in_two_shapes(%p: memref<i1>) -> (memref<2x2xf32>, memref<4xf32>) {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r:2 = scf.if %more -> (memref<2x2xf32>, memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<2x2xf32>
    %flat = memref.reinterpret_cast %a to offset: [0], sizes: [4], strides: [1] : memref<2x2xf32> to memref<4xf32>
    scf.yield %a, %flat : memref<2x2xf32>, memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<2x2xf32>
    %w2 = gpu.wait async
    %b, %tb = gpu.alloc async [%w2] () : memref<4xf32>
    scf.yield %a, %b : memref<2x2xf32>, memref<4xf32>
  }
  return %r#0, %r#1 : memref<2x2xf32>, memref<4xf32>
}

// -----

// A branch that yields one buffer for two results, whose ownership flags
// go to bufferization's run-time alias check (dealloc_helper): the flags
// only decide frees, so the cond takes the graph form (where its results
// are two fresh homes, both owned). The same cond whose flags the host
// also reads otherwise keeps its host form.
// CHECK-LABEL: func.func @alias_check_flags
// CHECK:         %[[CHOICE:.*]]:4 = scf.if
// CHECK:           call @kiln_cuda_graph_if_begin
// CHECK:           call @kiln_cuda_graph_if_end
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %true{{.*}}, %true{{.*}} :
// CHECK:         memref.store %[[CHOICE]]#2, %{{.*}}[%{{.*}}] : memref<2xi1>
// CHECK:       func.func @flags_read(
// CHECK-NOT:   kiln_cuda_graph_if_begin
// CHECK:       // -----
func.func private @dealloc_helper(memref<?xindex>, memref<?xindex>, memref<?xi1>, memref<?xi1>, memref<?xi1>)
func.func @alias_check_flags(%x: memref<4xf32>, %p: memref<i1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r:4 = scf.if %more -> (memref<4xf32>, memref<4xf32>, i1, i1) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %w2 = gpu.wait async
    %b, %tb = gpu.alloc async [%w2] () : memref<4xf32>
    %true = arith.constant true
    scf.yield %a, %b, %true, %true : memref<4xf32>, memref<4xf32>, i1, i1
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<4xf32>, memref<4xf32>
    %true = arith.constant true
    scf.yield %a, %a, %true, %true : memref<4xf32>, memref<4xf32>, i1, i1
  }
  %pointers = memref.alloc() : memref<2xindex>
  %conditions = memref.alloc() : memref<2xi1>
  %retained = memref.alloc() : memref<0xindex>
  %i0 = memref.extract_aligned_pointer_as_index %r#0 : memref<4xf32> -> index
  memref.store %i0, %pointers[%c0] : memref<2xindex>
  %i1 = memref.extract_aligned_pointer_as_index %r#1 : memref<4xf32> -> index
  memref.store %i1, %pointers[%c1] : memref<2xindex>
  memref.store %r#2, %conditions[%c0] : memref<2xi1>
  memref.store %r#3, %conditions[%c1] : memref<2xi1>
  %pc = memref.cast %pointers : memref<2xindex> to memref<?xindex>
  %cc = memref.cast %conditions : memref<2xi1> to memref<?xi1>
  %rc = memref.cast %retained : memref<0xindex> to memref<?xindex>
  %frees = memref.alloc() : memref<2xi1>
  %owned = memref.alloc() : memref<0xi1>
  %fc = memref.cast %frees : memref<2xi1> to memref<?xi1>
  %oc = memref.cast %owned : memref<0xi1> to memref<?xi1>
  call @dealloc_helper(%pc, %rc, %cc, %fc, %oc) : (memref<?xindex>, memref<?xindex>, memref<?xi1>, memref<?xi1>, memref<?xi1>) -> ()
  %f0 = memref.load %frees[%c0] : memref<2xi1>
  scf.if %f0 {
    %w = gpu.wait async
    %td = gpu.dealloc async [%w] %r#0 : memref<4xf32>
  }
  %f1 = memref.load %frees[%c1] : memref<2xi1>
  scf.if %f1 {
    %w = gpu.wait async
    %td = gpu.dealloc async [%w] %r#1 : memref<4xf32>
  }
  memref.dealloc %pointers : memref<2xindex>
  memref.dealloc %retained : memref<0xindex>
  memref.dealloc %conditions : memref<2xi1>
  memref.dealloc %frees : memref<2xi1>
  memref.dealloc %owned : memref<0xi1>
  return
}
func.func @flags_read(%x: memref<4xf32>, %p: memref<i1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r:4 = scf.if %more -> (memref<4xf32>, memref<4xf32>, i1, i1) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %w2 = gpu.wait async
    %b, %tb = gpu.alloc async [%w2] () : memref<4xf32>
    %true = arith.constant true
    scf.yield %a, %b, %true, %true : memref<4xf32>, memref<4xf32>, i1, i1
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<4xf32>, memref<4xf32>
    %true = arith.constant true
    scf.yield %a, %a, %true, %true : memref<4xf32>, memref<4xf32>, i1, i1
  }
  %pointers = memref.alloc() : memref<2xindex>
  %conditions = memref.alloc() : memref<2xi1>
  %retained = memref.alloc() : memref<0xindex>
  %i0 = memref.extract_aligned_pointer_as_index %r#0 : memref<4xf32> -> index
  memref.store %i0, %pointers[%c0] : memref<2xindex>
  %i1 = memref.extract_aligned_pointer_as_index %r#1 : memref<4xf32> -> index
  memref.store %i1, %pointers[%c1] : memref<2xindex>
  memref.store %r#2, %conditions[%c0] : memref<2xi1>
  memref.store %r#3, %conditions[%c1] : memref<2xi1>
  %seen = memref.load %conditions[%c0] : memref<2xi1>
  %sink = memref.alloca() : memref<i1>
  memref.store %seen, %sink[] : memref<i1>
  %pc = memref.cast %pointers : memref<2xindex> to memref<?xindex>
  %cc = memref.cast %conditions : memref<2xi1> to memref<?xi1>
  %rc = memref.cast %retained : memref<0xindex> to memref<?xindex>
  %frees = memref.alloc() : memref<2xi1>
  %owned = memref.alloc() : memref<0xi1>
  %fc = memref.cast %frees : memref<2xi1> to memref<?xi1>
  %oc = memref.cast %owned : memref<0xi1> to memref<?xi1>
  call @dealloc_helper(%pc, %rc, %cc, %fc, %oc) : (memref<?xindex>, memref<?xindex>, memref<?xi1>, memref<?xi1>, memref<?xi1>) -> ()
  %f0 = memref.load %frees[%c0] : memref<2xi1>
  scf.if %f0 {
    %w = gpu.wait async
    %td = gpu.dealloc async [%w] %r#0 : memref<4xf32>
  }
  %f1 = memref.load %frees[%c1] : memref<2xi1>
  scf.if %f1 {
    %w = gpu.wait async
    %td = gpu.dealloc async [%w] %r#1 : memref<4xf32>
  }
  memref.dealloc %pointers : memref<2xindex>
  memref.dealloc %retained : memref<0xindex>
  memref.dealloc %conditions : memref<2xi1>
  memref.dealloc %frees : memref<2xi1>
  memref.dealloc %owned : memref<0xi1>
  return
}

// -----

// Two conds on one predicate read (a cond and its gradient's cond): the
// second reads a device copy of the byte, queued where the host copies
// it, and both take the graph form. Where one of them cannot, both keep
// their host forms and the one read.
// CHECK-LABEL: func.func @shared_read(
// CHECK-SAME:    %[[X:[^:]*]]: memref<4xf32>, %[[P:[^:]*]]: memref<i1>
// CHECK:         %[[SLOT2:.*]] = memref.alloca() : memref<i1>
// CHECK:         %[[BYTE:.*]], %[[TB:.*]] = gpu.alloc async [%{{.*}}] () : memref<i1>
// CHECK:         gpu.memcpy async [%[[TB]]] %[[BYTE]], %[[P]] : memref<i1>, memref<i1>
// CHECK:         scf.if
// CHECK:           call @kiln_cuda_graph_if_begin
// CHECK:         } else {
// CHECK:           gpu.memcpy async [%{{.*}}] %{{.*}}, %[[P]]
// CHECK:         scf.if
// CHECK:           memref.extract_strided_metadata %[[BYTE]]
// CHECK:           call @kiln_cuda_graph_if_begin
// CHECK:         } else {
// CHECK:           %[[T:.*]] = gpu.memcpy async [%{{.*}}] %[[SLOT2]], %[[BYTE]]
// CHECK-NEXT:      gpu.wait [%[[T]]]
// CHECK-NEXT:      %[[MORE2:.*]] = memref.load %[[SLOT2]][]
// CHECK-NEXT:      scf.if %[[MORE2]]
// CHECK:         gpu.dealloc async [%{{.*}}] %[[BYTE]] : memref<i1>
// CHECK-NEXT:    return
// CHECK:       func.func @shared_read_host(
// CHECK-NOT:     kiln_cuda_graph_if_begin
// CHECK:       // -----
func.func @shared_read(%x: memref<4xf32>, %p: memref<i1>) -> (memref<4xf32>, memref<4xf32>) {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<4xf32>, memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  %g = scf.if %more -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %r : memref<4xf32>, memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r, %g : memref<4xf32>, memref<4xf32>
}
func.func @shared_read_host(%x: memref<4xf32>, %p: memref<i1>) -> (memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<4xf32>, memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  %g = scf.if %more -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %r : memref<4xf32>, memref<4xf32>
    %v = memref.load %x[%c0] : memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r, %g : memref<4xf32>, memref<4xf32>
}

// -----

// A branch that frees a buffer of its own through bufferization's run-time
// alias check (dealloc_helper on host buffers the branch allocates) takes
// the graph form: the capture decides the check from buffer addresses,
// which the graph keeps. A check on a host buffer from outside the branch
// keeps the host form.
// CHECK-LABEL: func.func @alias_check_in_branch(
// CHECK:         call @kiln_cuda_graph_if_begin
// CHECK:         call @dealloc_helper
// CHECK:         call @kiln_cuda_graph_if_else
// CHECK:       func.func @alias_check_outside(
// CHECK-NOT:     kiln_cuda_graph_if_begin
// CHECK:       // -----
func.func private @dealloc_helper(memref<?xindex>, memref<?xindex>, memref<?xi1>, memref<?xi1>, memref<?xi1>)
func.func @alias_check_in_branch(%x: memref<4xf32>, %p: memref<i1>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %w2 = gpu.wait async
    %b, %tb = gpu.alloc async [%w2] () : memref<4xf32>
    %tc = gpu.memcpy async [%tb] %a, %x : memref<4xf32>, memref<4xf32>
    %ptrs = memref.alloc() : memref<1xindex>
    %conds = memref.alloc() : memref<1xi1>
    %none = memref.alloc() : memref<0xindex>
    %frees = memref.alloc() : memref<1xi1>
    %owned = memref.alloc() : memref<0xi1>
    %ib = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
    memref.store %ib, %ptrs[%c0] : memref<1xindex>
    memref.store %true, %conds[%c0] : memref<1xi1>
    %pc = memref.cast %ptrs : memref<1xindex> to memref<?xindex>
    %nc = memref.cast %none : memref<0xindex> to memref<?xindex>
    %cc = memref.cast %conds : memref<1xi1> to memref<?xi1>
    %fc = memref.cast %frees : memref<1xi1> to memref<?xi1>
    %oc = memref.cast %owned : memref<0xi1> to memref<?xi1>
    func.call @dealloc_helper(%pc, %nc, %cc, %fc, %oc) : (memref<?xindex>, memref<?xindex>, memref<?xi1>, memref<?xi1>, memref<?xi1>) -> ()
    %f0 = memref.load %frees[%c0] : memref<1xi1>
    scf.if %f0 {
      %wd = gpu.wait async
      %td = gpu.dealloc async [%wd] %b : memref<4xf32>
    }
    memref.dealloc %ptrs : memref<1xindex>
    memref.dealloc %conds : memref<1xi1>
    memref.dealloc %none : memref<0xindex>
    memref.dealloc %frees : memref<1xi1>
    memref.dealloc %owned : memref<0xi1>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r : memref<4xf32>
}
func.func @alias_check_outside(%x: memref<4xf32>, %p: memref<i1>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %conds = memref.alloc() : memref<1xi1>
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %w2 = gpu.wait async
    %b, %tb = gpu.alloc async [%w2] () : memref<4xf32>
    %tc = gpu.memcpy async [%tb] %a, %x : memref<4xf32>, memref<4xf32>
    %ptrs = memref.alloc() : memref<1xindex>
    %none = memref.alloc() : memref<0xindex>
    %frees = memref.alloc() : memref<1xi1>
    %owned = memref.alloc() : memref<0xi1>
    %ib = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
    memref.store %ib, %ptrs[%c0] : memref<1xindex>
    memref.store %true, %conds[%c0] : memref<1xi1>
    %pc = memref.cast %ptrs : memref<1xindex> to memref<?xindex>
    %nc = memref.cast %none : memref<0xindex> to memref<?xindex>
    %cc = memref.cast %conds : memref<1xi1> to memref<?xi1>
    %fc = memref.cast %frees : memref<1xi1> to memref<?xi1>
    %oc = memref.cast %owned : memref<0xi1> to memref<?xi1>
    func.call @dealloc_helper(%pc, %nc, %cc, %fc, %oc) : (memref<?xindex>, memref<?xindex>, memref<?xi1>, memref<?xi1>, memref<?xi1>) -> ()
    %f0 = memref.load %frees[%c0] : memref<1xi1>
    scf.if %f0 {
      %wd = gpu.wait async
      %td = gpu.dealloc async [%wd] %b : memref<4xf32>
    }
    memref.dealloc %ptrs : memref<1xindex>
    memref.dealloc %none : memref<0xindex>
    memref.dealloc %frees : memref<1xi1>
    memref.dealloc %owned : memref<0xi1>
    scf.yield %a : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// A branch that yields a view of part of the buffer it allocates keeps the
// host form: the home would hold fewer elements than the branch writes.
// CHECK-NOT:   kiln_cuda_graph_conds
// CHECK:       func.func @part_of_buffer(
// CHECK-NOT:   kiln_cuda_graph_conds
// CHECK:       // -----
func.func @part_of_buffer(%x: memref<2x4xf32>, %p: memref<i1>) -> memref<6xf32> {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<6xf32>) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<2x4xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<2x4xf32>, memref<2x4xf32>
    %part = memref.reinterpret_cast %a to offset: [0], sizes: [6], strides: [1] : memref<2x4xf32> to memref<6xf32>
    scf.yield %part : memref<6xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<6xf32>
    scf.yield %a : memref<6xf32>
  }
  return %r : memref<6xf32>
}

// -----

// A cond whose first branch holds a loop in its graph form (as
// kiln-cuda-graph-loops leaves it) and yields the loop's result: where the
// runtime captures the branch, the loop's graph form runs (its host form,
// which waits for the stream, does not), its WHILE node inside the
// branch's IF node. The loop's result is a fresh buffer there, which the
// branch copies into the cond's home and frees. A second run of the pass
// leaves the host form of the cond alone.
// CHECK-LABEL: func.func @loop_in_branch
// CHECK:       %[[Q:.+]] = call @kiln_cuda_graph_conds() : () -> i32
// CHECK:       scf.if %{{.+}} -> (memref<4xf32>) {
// CHECK:         %[[HOME:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<4xf32>
// CHECK:         %[[B:.+]] = func.call @kiln_cuda_graph_if_begin(
// CHECK:         func.call @kiln_cuda_graph_loops()
// CHECK:         %[[L:.+]] = scf.if
// CHECK:           func.call @kiln_cuda_graph_while_begin()
// CHECK:         } else {
// CHECK:           scf.while
// CHECK:         }
// CHECK:         gpu.memcpy async [%{{.+}}] %[[HOME]], %[[L]] : memref<4xf32>, memref<4xf32>
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.dealloc async [%{{.+}}] %[[L]]
// CHECK:         func.call @kiln_cuda_graph_if_else(%[[B]])
// CHECK:         func.call @kiln_cuda_graph_if_end(%[[B]])
// CHECK:         scf.yield %[[HOME]]
// CHECK:       } else {
// CHECK:         memref.load
// CHECK-NOT:     kiln_cuda_graph_conds
// CHECK:         scf.if
// CHECK:       }
// TWICE-LABEL: func.func @loop_in_branch
// TWICE-COUNT-1: call @kiln_cuda_graph_conds()
// TWICE-NOT:   call @kiln_cuda_graph_conds()
// TWICE:       return
func.func private @kiln_cuda_graph_loops() -> i32
func.func private @kiln_cuda_graph_while_begin() -> !llvm.ptr
func.func private @kiln_cuda_graph_while_test(!llvm.ptr, !llvm.ptr)
func.func private @kiln_cuda_graph_while_end_iteration(!llvm.ptr, !llvm.ptr)
func.func @loop_in_branch(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c0_i32 = arith.constant 0 : i32
  %slot = memref.alloca() : memref<i1>
  %loop_slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %p, %tp = gpu.alloc async [%t0] () : memref<i1>
  %q, %tq = gpu.alloc async [%tp] () : memref<i1>
  %t1 = gpu.launch async [%tq] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%c0] : memref<4xf32>
    %zero = arith.constant 0.0 : f32
    %gt = arith.cmpf ogt, %v, %zero : f32
    memref.store %gt, %p[] : memref<i1>
    gpu.terminator
  }
  %t2 = gpu.memcpy async [%t1] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t2]
  %more = memref.load %slot[] : memref<i1>
  %r = scf.if %more -> (memref<4xf32>) {
    %answer = func.call @kiln_cuda_graph_loops() : () -> i32
    %on = arith.cmpi ne, %answer, %c0_i32 : i32
    %l = scf.if %on -> (memref<4xf32>) {
      %w = gpu.wait async
      %home, %th = gpu.alloc async [%w] () : memref<4xf32>
      %state = func.call @kiln_cuda_graph_while_begin() : () -> !llvm.ptr
      %w1 = gpu.wait async
      %l1 = gpu.launch async [%w1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %x[%tx] : memref<4xf32>
        memref.store %v, %home[%tx] : memref<4xf32>
        %ten = arith.constant 10.0 : f32
        %lt = arith.cmpf olt, %v, %ten : f32
        memref.store %lt, %q[] : memref<i1>
        gpu.terminator
      }
      %qi = memref.extract_aligned_pointer_as_index %q : memref<i1> -> index
      %ql = arith.index_cast %qi : index to i64
      %qp = llvm.inttoptr %ql : i64 to !llvm.ptr
      func.call @kiln_cuda_graph_while_test(%state, %qp) : (!llvm.ptr, !llvm.ptr) -> ()
      %w2 = gpu.wait async
      %l2 = gpu.launch async [%w2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
        %v = memref.load %home[%tx] : memref<4xf32>
        %s = arith.addf %v, %v : f32
        memref.store %s, %home[%tx] : memref<4xf32>
        %ten = arith.constant 10.0 : f32
        %lt = arith.cmpf olt, %s, %ten : f32
        memref.store %lt, %q[] : memref<i1>
        gpu.terminator
      }
      func.call @kiln_cuda_graph_while_end_iteration(%state, %qp) : (!llvm.ptr, !llvm.ptr) -> ()
      scf.yield %home : memref<4xf32>
    } else {
      %w = gpu.wait async
      %first, %tf = gpu.alloc async [%w] () : memref<4xf32>
      %cp = gpu.memcpy async [%tf] %first, %x : memref<4xf32>, memref<4xf32>
      %h = scf.while (%c = %first) : (memref<4xf32>) -> memref<4xf32> {
        %w3 = gpu.wait async
        %l3 = gpu.launch async [%w3] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
          %v = memref.load %c[%c0] : memref<4xf32>
          %ten = arith.constant 10.0 : f32
          %lt = arith.cmpf olt, %v, %ten : f32
          memref.store %lt, %q[] : memref<i1>
          gpu.terminator
        }
        %m = gpu.memcpy async [%l3] %loop_slot, %q : memref<i1>, memref<i1>
        gpu.wait [%m]
        %go = memref.load %loop_slot[] : memref<i1>
        scf.condition(%go) %c : memref<4xf32>
      } do {
      ^bb0(%d: memref<4xf32>):
        %w4 = gpu.wait async
        %l4 = gpu.launch async [%w4] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
            threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
          %v = memref.load %d[%tx] : memref<4xf32>
          %s = arith.addf %v, %v : f32
          memref.store %s, %d[%tx] : memref<4xf32>
          gpu.terminator
        }
        scf.yield %d : memref<4xf32>
      }
      scf.yield %h : memref<4xf32>
    }
    scf.yield %l : memref<4xf32>
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %l = gpu.launch async [%ta] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<4xf32>
      %n = arith.negf %v : f32
      memref.store %n, %a[%tx] : memref<4xf32>
      gpu.terminator
    }
    scf.yield %a : memref<4xf32>
  }
  %t3 = gpu.wait async
  %t4 = gpu.memcpy async [%t3] %y, %r : memref<4xf32>, memref<4xf32>
  %t5 = gpu.dealloc async [%t4] %r : memref<4xf32>
  return
}

// -----

// A cond whose first branch runs a counted loop (a kiln.for of two trips,
// a fresh buffer per trip) and yields its result, as ownership-based
// deallocation leaves it: the branch frees its copy of the input where the
// result is another buffer, and the cond has an ownership flag result,
// which only decides frees after it. Where the runtime captures the
// branch, it runs the counted loop's trips; its result is copied into the
// cond's home and freed, and the graph form's flag is true (its results
// are fresh homes).
// CHECK-LABEL: func.func @counted_in_branch
// CHECK:       %[[Q:.+]] = call @kiln_cuda_graph_conds() : () -> i32
// CHECK:       %[[R:.+]]:2 = scf.if %{{.+}} -> (memref<4xf32>, i1) {
// CHECK:         %[[HOME:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<4xf32>
// CHECK-NEXT:    %[[TRUE:.+]] = arith.constant true
// CHECK:         %[[B:.+]] = func.call @kiln_cuda_graph_if_begin(
// CHECK:         %[[TRIPS:.+]]:2 = scf.for
// CHECK:         gpu.memcpy async [%{{.+}}] %[[HOME]], %[[TRIPS]]#0
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.dealloc async [%{{.+}}] %[[TRIPS]]#0
// CHECK:         func.call @kiln_cuda_graph_if_else(%[[B]])
// CHECK:         func.call @kiln_cuda_graph_if_end(%[[B]])
// CHECK:         scf.yield %[[HOME]], %[[TRUE]] : memref<4xf32>, i1
// CHECK:       } else {
// CHECK:       scf.if %[[R]]#1 {
// CHECK:         gpu.dealloc async [%{{.+}}] %[[R]]#0
func.func @counted_in_branch(%x: memref<4xf32>, %p: memref<i1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %false = arith.constant false
  %true = arith.constant true
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
  gpu.wait [%t1]
  %more = memref.load %slot[] : memref<i1>
  %r:2 = scf.if %more -> (memref<4xf32>, i1) {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    %tc = gpu.memcpy async [%ta] %a, %x : memref<4xf32>, memref<4xf32>
    %f:2 = scf.for %k = %c0 to %c2 step %c1 iter_args(%u = %a, %owned = %false) -> (memref<4xf32>, i1) {
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
        %d1 = gpu.wait async
        %d2 = gpu.dealloc async [%d1] %base : memref<f32>
      }
      scf.yield %half, %true : memref<4xf32>, i1
    }
    %ap = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
    %fp = memref.extract_aligned_pointer_as_index %f#0 : memref<4xf32> -> index
    %other = arith.cmpi ne, %ap, %fp : index
    scf.if %other {
      %d1 = gpu.wait async
      %d2 = gpu.dealloc async [%d1] %a : memref<4xf32>
    }
    %same = arith.cmpi eq, %ap, %fp : index
    %own = arith.ori %same, %f#1 : i1
    scf.yield %f#0, %own : memref<4xf32>, i1
  } else {
    %w = gpu.wait async
    %a, %ta = gpu.alloc async [%w] () : memref<4xf32>
    scf.yield %a, %true : memref<4xf32>, i1
  }
  scf.if %r#1 {
    %e1 = gpu.wait async
    %e2 = gpu.dealloc async [%e1] %r#0 : memref<4xf32>
  }
  return
}
