// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-graph-conds | FileCheck %s

// A cond as kiln-cuda-device-allocations leaves a kiln.cond: a kernel
// computes the predicate, the host copies it back, waits and branches;
// each branch allocates its result (the first one a temporary too, which
// it frees). It gets a graph form for the runtime to take while it
// captures a call: a home for the result, the predicate's device address
// to the runtime's begin call, both branches writing into the home (not a
// buffer of their own), between the runtime's else and end calls. The
// predicate's read and the cond as they were are the other form, which
// runs otherwise.
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
