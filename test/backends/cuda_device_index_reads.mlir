// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cuda-device-index-reads))' | FileCheck %s

// A dynamic slice and a dynamic update of rows, as the pipeline has them
// before the loops become kernels: the host loads the index, clamps it,
// scales it and offsets two views. Each loop gets the load and the part
// of the arithmetic it uses (the first, the slice's clamp; the second, the
// update's), and the host's load is gone.
// CHECK-LABEL: func.func @rows
// CHECK-SAME:  (%[[B:.+]]: memref<8x4xf32>, %[[I:.+]]: memref<i64>, %[[U:.+]]: memref<2x4xf32>, %[[S:.+]]: memref<3x4xf32>)
// CHECK-NOT:   memref.load %[[I]]
// CHECK:       scf.parallel
// CHECK-NEXT:    %[[L:.+]] = memref.load %[[I]][] : memref<i64>
// CHECK-NEXT:    %[[X:.+]] = arith.index_cast %[[L]] : i64 to index
// CHECK-NEXT:    %[[LO:.+]] = arith.maxsi %[[X]], %{{.+}} : index
// CHECK-NEXT:    %[[HI:.+]] = arith.minsi %[[LO]], %{{.+}} : index
// CHECK-NEXT:    %[[OFF:.+]] = arith.muli %[[HI]], %{{.+}} : index
// CHECK-NEXT:    %[[V:.+]] = memref.reinterpret_cast %{{.+}} to offset: [%[[OFF]]], sizes: [3, 4]
// CHECK-NOT:     arith.minsi
// CHECK:         memref.load %[[V]]
// CHECK:       scf.parallel
// CHECK-NEXT:    %[[L2:.+]] = memref.load %[[I]][] : memref<i64>
// CHECK-NEXT:    %[[X2:.+]] = arith.index_cast %[[L2]] : i64 to index
// CHECK-NEXT:    %[[LO2:.+]] = arith.maxsi %[[X2]], %{{.+}} : index
// CHECK-NEXT:    %[[HI2:.+]] = arith.minsi %[[LO2]], %{{.+}} : index
// CHECK-NEXT:    %[[OFF2:.+]] = arith.muli %[[HI2]], %{{.+}} : index
// CHECK-NEXT:    %[[W:.+]] = memref.reinterpret_cast %[[B]] to offset: [%[[OFF2]]], sizes: [2, 4]
// CHECK:         memref.store %{{.+}}, %[[W]]
func.func @rows(%b: memref<8x4xf32>, %i: memref<i64>, %u: memref<2x4xf32>, %s: memref<3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %0 = memref.load %i[] : memref<i64>
  %1 = arith.index_cast %0 : i64 to index
  %2 = arith.maxsi %1, %c0 : index
  %3 = arith.minsi %2, %c5 : index
  %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %b : memref<8x4xf32> -> memref<f32>, index, index, index, index, index
  %4 = arith.muli %3, %c4 : index
  %slice = memref.reinterpret_cast %base to offset: [%4], sizes: [3, 4], strides: [4, 1] : memref<f32> to memref<3x4xf32, strided<[4, 1], offset: ?>>
  scf.parallel (%r, %c) = (%c0, %c0) to (%c3, %c4) step (%c1, %c1) {
    %v = memref.load %slice[%r, %c] : memref<3x4xf32, strided<[4, 1], offset: ?>>
    memref.store %v, %s[%r, %c] : memref<3x4xf32>
    scf.reduce
  }
  %5 = arith.minsi %2, %c6 : index
  %6 = arith.muli %5, %c4 : index
  %rows = memref.reinterpret_cast %b to offset: [%6], sizes: [2, 4], strides: [4, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  scf.parallel (%r, %c) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    %v = memref.load %u[%r, %c] : memref<2x4xf32>
    memref.store %v, %rows[%r, %c] : memref<2x4xf32, strided<[4, 1], offset: ?>>
    scf.reduce
  }
  return
}

// -----

// An index a kernel computes in each iteration of a host loop: the loop's
// kernel reads it (the launch that computes it comes first on the stream).
// CHECK-LABEL: func.func @in_a_loop
// CHECK:       scf.for
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.+}}, %[[J:.+]][] : memref<i64>
// CHECK-NOT:     memref.load %[[J]]
// CHECK:         scf.parallel
// CHECK-NEXT:      memref.load %[[J]][] : memref<i64>
// CHECK:         memref.dealloc %[[J]]
func.func @in_a_loop(%x: memref<6x3xf32>, %acc: memref<6x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %five = arith.constant 5 : i64
  scf.for %k = %c0 to %c6 step %c1 {
    %ki = arith.index_cast %k : index to i64
    %j = memref.alloc() : memref<i64>
    gpu.launch blocks(%a, %b, %c) in (%d = %c1, %e = %c1, %f = %c1) threads(%g, %h, %l) in (%m = %c1, %n = %c1, %o = %c1) {
      %r = arith.subi %five, %ki : i64
      memref.store %r, %j[] : memref<i64>
      gpu.terminator
    }
    %0 = memref.load %j[] : memref<i64>
    %1 = arith.index_cast %0 : i64 to index
    %2 = arith.maxsi %1, %c0 : index
    %3 = arith.minsi %2, %c5 : index
    %4 = arith.muli %3, %c3 : index
    %row = memref.reinterpret_cast %acc to offset: [%4], sizes: [1, 3], strides: [3, 1] : memref<6x3xf32> to memref<1x3xf32, strided<[3, 1], offset: ?>>
    scf.parallel (%r, %c) = (%c0, %c0) to (%c1, %c3) step (%c1, %c1) {
      %v = memref.load %x[%r, %c] : memref<6x3xf32>
      memref.store %v, %row[%r, %c] : memref<1x3xf32, strided<[3, 1], offset: ?>>
      scf.reduce
    }
    memref.dealloc %j : memref<i64>
  }
  return
}

// -----

// Left on the host: an index the host also uses (a loop bound), an index
// whose buffer the host writes (after the kernel, which may not have run
// yet), and a predicate (i1) that the host branches on.
// CHECK-LABEL: func.func @left_alone
// CHECK:       %[[A:.+]] = memref.load %{{.+}}[] : memref<i64>
// CHECK:       scf.for %{{.+}} = %{{.+}} to %{{.+}}
// CHECK:       %[[C:.+]] = memref.load %[[H:.+]][] : memref<i64>
// CHECK:       %[[P:.+]] = memref.load %{{.+}}[] : memref<i1>
// CHECK-NEXT:  scf.if %[[P]]
// CHECK-NOT:   memref.load %{{.+}}[] : memref<i{{(1|32|64)}}>
// CHECK:       return
func.func @left_alone(%x: memref<8xf32>, %i: memref<i64>, %h: memref<i64>, %p: memref<i1>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %nine = arith.constant 9 : i64
  %a = memref.load %i[] : memref<i64>
  %an = arith.index_cast %a : i64 to index
  scf.for %k = %c0 to %an step %c1 {
    scf.parallel (%r) = (%c0) to (%an) step (%c1) {
      %v = memref.load %x[%r] : memref<8xf32>
      memref.store %v, %y[%r] : memref<8xf32>
      scf.reduce
    }
  }
  %c = memref.load %h[] : memref<i64>
  %cn = arith.index_cast %c : i64 to index
  %cv = memref.reinterpret_cast %x to offset: [%cn], sizes: [2], strides: [1] : memref<8xf32> to memref<2xf32, strided<[1], offset: ?>>
  scf.parallel (%r) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %cv[%r] : memref<2xf32, strided<[1], offset: ?>>
    memref.store %v, %y[%r] : memref<8xf32>
    scf.reduce
  }
  memref.store %nine, %h[] : memref<i64>
  %pv = memref.load %p[] : memref<i1>
  scf.if %pv {
    scf.parallel (%r) = (%c0) to (%c2) step (%c1) {
      %v = memref.load %x[%r] : memref<8xf32>
      memref.store %v, %y[%r] : memref<8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A kernel writes the index's buffer between the load and the kernel that
// uses the index: a one-thread kernel in the load's place copies the index
// into a buffer of its own, which the kernel reads, and which is freed
// after it.
// CHECK-LABEL: func.func @copied
// CHECK-SAME:  (%[[X:.+]]: memref<8xf32>, %[[W:.+]]: memref<i32>, %[[Y:.+]]: memref<8xf32>)
// CHECK:       %[[COPY:.+]] = memref.alloc() : memref<i32>
// CHECK:       gpu.launch
// CHECK-NEXT:    %[[V:.+]] = memref.load %[[W]][] : memref<i32>
// CHECK-NEXT:    memref.store %[[V]], %[[COPY]][] : memref<i32>
// CHECK-NEXT:    gpu.terminator
// CHECK:       gpu.launch
// CHECK-NEXT:    memref.store %{{.+}}, %[[W]][] : memref<i32>
// CHECK:       scf.parallel
// CHECK-NEXT:    %[[B:.+]] = memref.load %[[COPY]][] : memref<i32>
// CHECK-NEXT:    %[[BN:.+]] = arith.index_cast %[[B]]
// CHECK-NEXT:    memref.reinterpret_cast %[[X]] to offset: [%[[BN]]]
// CHECK:       memref.dealloc %[[COPY]]
// CHECK-NEXT:  return
func.func @copied(%x: memref<8xf32>, %w: memref<i32>, %y: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %seven = arith.constant 7 : i32
  %b = memref.load %w[] : memref<i32>
  %bn = arith.index_cast %b : i32 to index
  gpu.launch blocks(%q, %s, %t) in (%d = %c1, %e = %c1, %f = %c1) threads(%g, %u, %l) in (%m = %c1, %n = %c1, %o = %c1) {
    memref.store %seven, %w[] : memref<i32>
    gpu.terminator
  }
  %bv = memref.reinterpret_cast %x to offset: [%bn], sizes: [2], strides: [1] : memref<8xf32> to memref<2xf32, strided<[1], offset: ?>>
  scf.parallel (%r) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %bv[%r] : memref<2xf32, strided<[1], offset: ?>>
    memref.store %v, %y[%r] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// A predicate picks a buffer and decides a cond, and a kernel then writes
// the next predicate into its byte before the pick is read (bufferization
// reuses the byte): the pick is read through a copy made on the device,
// the cond keeps its host load of the byte, and the copy is freed after
// the last kernel that reads it, inside the loop around the load.
// CHECK-LABEL: func.func @pick_reused_byte
// CHECK-SAME:  (%[[P:.+]]: memref<i1>, %[[A:.+]]: memref<8xf32>, %[[B:.+]]: memref<8xf32>, %[[Y:.+]]: memref<8xf32>)
// CHECK:       scf.for
// CHECK-NEXT:    %[[COPY:.+]] = memref.alloc() : memref<i1>
// CHECK:         gpu.launch
// CHECK-NEXT:      %[[V:.+]] = memref.load %[[P]][] : memref<i1>
// CHECK-NEXT:      memref.store %[[V]], %[[COPY]][] : memref<i1>
// CHECK:         %[[HOST:.+]] = memref.load %[[P]][] : memref<i1>
// CHECK-NEXT:    scf.if %[[HOST]]
// CHECK:         gpu.launch
// CHECK-NEXT:      memref.store %{{.+}}, %[[P]][] : memref<i1>
// CHECK:         scf.parallel
// CHECK-NEXT:      %[[L:.+]] = memref.load %[[COPY]][] : memref<i1>
// CHECK-NEXT:      %[[S:.+]] = arith.select %[[L]], %[[A]], %[[B]] : memref<8xf32>
// CHECK-NEXT:      memref.load %[[S]]
// CHECK:         memref.dealloc %[[COPY]]
// CHECK-NEXT:  }
// CHECK-NOT:   memref.load %[[P]]
// CHECK:       return
func.func @pick_reused_byte(%p: memref<i1>, %a: memref<8xf32>, %b: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %false = arith.constant false
  scf.for %k = %c0 to %c3 step %c1 {
    %pv = memref.load %p[] : memref<i1>
    %s = arith.select %pv, %a, %b : memref<8xf32>
    scf.if %pv {
      scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
        %v = memref.load %y[%r] : memref<8xf32>
        %d = arith.mulf %v, %two : f32
        memref.store %d, %y[%r] : memref<8xf32>
        scf.reduce
      }
    }
    gpu.launch blocks(%q, %t, %u) in (%d = %c1, %e = %c1, %f = %c1) threads(%g, %h, %l) in (%m = %c1, %n = %c1, %o = %c1) {
      memref.store %false, %p[] : memref<i1>
      gpu.terminator
    }
    scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %s[%r] : memref<8xf32>
      memref.store %v, %y[%r] : memref<8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A select of a whole buffer by a rank-0 predicate (kiln.select with a
// tensor<i1> predicate, which picks one operand's buffer): the kernels
// that read the pick load the predicate and select themselves, and the
// host reads nothing.
// CHECK-LABEL: func.func @pick
// CHECK-SAME:  (%[[P:.+]]: memref<i1>, %[[A:.+]]: memref<8xf32>, %[[B:.+]]: memref<8xf32>, %[[Y:.+]]: memref<8xf32>)
// CHECK-NOT:   memref.load %[[P]]
// CHECK:       scf.parallel
// CHECK-NEXT:    %[[L:.+]] = memref.load %[[P]][] : memref<i1>
// CHECK-NEXT:    %[[S:.+]] = arith.select %[[L]], %[[A]], %[[B]] : memref<8xf32>
// CHECK-NEXT:    memref.load %[[S]]
// CHECK:       scf.parallel
// CHECK-NEXT:    %[[L2:.+]] = memref.load %[[P]][] : memref<i1>
// CHECK-NEXT:    %[[S2:.+]] = arith.select %[[L2]], %[[A]], %[[B]] : memref<8xf32>
// CHECK-NEXT:    memref.load %[[S2]]
// CHECK:       return
func.func @pick(%p: memref<i1>, %a: memref<8xf32>, %b: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %pv = memref.load %p[] : memref<i1>
  %s = arith.select %pv, %a, %b : memref<8xf32>
  scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %s[%r] : memref<8xf32>
    memref.store %v, %y[%r] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %s[%r] : memref<8xf32>
    %d = arith.mulf %v, %two : f32
    memref.store %d, %y[%r] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// The same predicate picks a buffer and decides a cond (a kiln.select and
// a kiln.cond on one tensor<i1>): the kernel that reads the pick loads the
// predicate and selects itself, and the host load stays, the cond's alone
// (kiln-cuda-graph-conds needs a read of its own).
// CHECK-LABEL: func.func @pick_and_cond
// CHECK-SAME:  (%[[P:.+]]: memref<i1>, %[[A:.+]]: memref<8xf32>, %[[B:.+]]: memref<8xf32>, %[[Y:.+]]: memref<8xf32>)
// CHECK:       %[[HOST:.+]] = memref.load %[[P]][] : memref<i1>
// CHECK-NOT:   arith.select %[[HOST]]
// CHECK:       scf.parallel
// CHECK-NEXT:    %[[L:.+]] = memref.load %[[P]][] : memref<i1>
// CHECK-NEXT:    %[[S:.+]] = arith.select %[[L]], %[[A]], %[[B]] : memref<8xf32>
// CHECK-NEXT:    memref.load %[[S]]
// CHECK:       scf.if %[[HOST]]
func.func @pick_and_cond(%p: memref<i1>, %a: memref<8xf32>, %b: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %pv = memref.load %p[] : memref<i1>
  %s = arith.select %pv, %a, %b : memref<8xf32>
  scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %s[%r] : memref<8xf32>
    memref.store %v, %y[%r] : memref<8xf32>
    scf.reduce
  }
  scf.if %pv {
    scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %y[%r] : memref<8xf32>
      %d = arith.mulf %v, %two : f32
      memref.store %d, %y[%r] : memref<8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A pick a branch yields is the host code's too (the cond's result): the
// host load stays, and the branch keeps its terminator.
// CHECK-LABEL: func.func @pick_yielded
// CHECK:       scf.if
// CHECK-NEXT:    %[[PV:.+]] = memref.load %{{.+}}[] : memref<i1>
// CHECK-NEXT:    %[[S:.+]] = arith.select %[[PV]]
// CHECK:         scf.parallel
// CHECK-NOT:       memref.load %{{.+}}[] : memref<i1>
// CHECK:         scf.yield %[[S]] : memref<8xf32>
func.func @pick_yielded(%p: memref<i1>, %q: i1, %a: memref<8xf32>, %b: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.if %q -> (memref<8xf32>) {
    %pv = memref.load %p[] : memref<i1>
    %s = arith.select %pv, %a, %b : memref<8xf32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %s[%i] : memref<8xf32>
      memref.store %v, %y[%i] : memref<8xf32>
      scf.reduce
    }
    scf.yield %s : memref<8xf32>
  } else {
    scf.yield %a : memref<8xf32>
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %r[%i] : memref<8xf32>
    memref.store %v, %y[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// A cond's predicate at an index (a gradient's backward loop reading the
// forward loop's stacked predicates): a one-thread kernel loads it into a
// buffer of its own, which the host reads for the cond and frees, and the
// kernel reads the index itself. A predicate at an index that host code
// other than a cond uses stays a host load.
// CHECK-LABEL: func.func @predicate_at_index
// CHECK-SAME:  (%[[FLAGS:.+]]: memref<4xi1>, %[[I:.+]]: memref<i64>, %[[Y:.+]]: memref<8xf32>)
// CHECK-NOT:   memref.load %[[I]]
// CHECK:       %[[OWN:.+]] = memref.alloc() : memref<i1>
// CHECK-NEXT:  %{{.+}} = arith.constant 1 : index
// CHECK-NEXT:  gpu.launch
// CHECK-NEXT:    %[[L:.+]] = memref.load %[[I]][] : memref<i64>
// CHECK-NEXT:    %[[X:.+]] = arith.index_cast %[[L]] : i64 to index
// CHECK-NEXT:    %[[V:.+]] = memref.reinterpret_cast %[[FLAGS]] to offset: [%[[X]]]
// CHECK-NEXT:    %[[P:.+]] = memref.load %[[V]][]
// CHECK-NEXT:    memref.store %[[P]], %[[OWN]][] : memref<i1>
// CHECK-NEXT:    gpu.terminator
// CHECK:       %[[READ:.+]] = memref.load %[[OWN]][] : memref<i1>
// CHECK-NEXT:  memref.dealloc %[[OWN]] : memref<i1>
// CHECK-NEXT:  scf.if %[[READ]]
// CHECK-LABEL: func.func @predicate_at_index_on_host
// CHECK:       %[[L:.+]] = memref.load %{{.+}}[] : memref<i64>
// CHECK:       memref.load %{{.+}}[] : memref<i1, strided<[], offset: ?>>
// CHECK-NOT:   gpu.launch
func.func @predicate_at_index(%flags: memref<4xi1>, %i: memref<i64>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %l = memref.load %i[] : memref<i64>
  %x = arith.index_cast %l : i64 to index
  %v = memref.reinterpret_cast %flags to offset: [%x], sizes: [], strides: [] : memref<4xi1> to memref<i1, strided<[], offset: ?>>
  %p = memref.load %v[] : memref<i1, strided<[], offset: ?>>
  scf.if %p {
    scf.parallel (%r) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %y[%r] : memref<8xf32>
      scf.reduce
    }
  }
  return
}
func.func @predicate_at_index_on_host(%flags: memref<4xi1>, %i: memref<i64>, %y: memref<8xf32>) -> i1 {
  %l = memref.load %i[] : memref<i64>
  %x = arith.index_cast %l : i64 to index
  %v = memref.reinterpret_cast %flags to offset: [%x], sizes: [], strides: [] : memref<4xi1> to memref<i1, strided<[], offset: ?>>
  %p = memref.load %v[] : memref<i1, strided<[], offset: ?>>
  %q = arith.xori %p, %p : i1
  return %q : i1
}
