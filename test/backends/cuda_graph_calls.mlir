// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-graph-calls | FileCheck %s

// A function whose host code only queues device work, as
// kiln-cuda-device-allocations leaves it: an arena, a product through the
// runtime, a kernel, a constant's copy, a loop of two kernels with
// constant bounds, a branch on a host value, a free. Its entry (which
// unpacks the argument array and calls it) is bracketed by the runtime's
// graph call functions; the function itself is unchanged.
// CHECK:       func.func private @kiln_cuda_graph_call_end()
// CHECK:       func.func private @kiln_cuda_graph_call_begin() -> i32
// CHECK-LABEL: func.func @kiln_impl_step
// CHECK-NOT:   kiln_cuda_graph_call
// CHECK:       return
// CHECK-LABEL: func.func @kiln_entry_step(
// CHECK-NEXT:    %[[B:.+]] = call @kiln_cuda_graph_call_begin() : () -> i32
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[GO:.+]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i32
// CHECK-NEXT:    scf.if %[[GO]] {
// CHECK:           llvm.load
// CHECK:           call @kiln_impl_step(
// CHECK-NEXT:      call @kiln_cuda_graph_call_end() : () -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func private @kiln_cuda_matmul(i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, !llvm.ptr)
func.func private @kiln_cuda_copy_constant(!llvm.ptr, !llvm.ptr, i64)
func.func @kiln_impl_step(%x: memref<4xf32>, %y: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c0_i64 = arith.constant 0 : i64
  %c16_i64 = arith.constant 16 : i64
  %t0 = gpu.wait async
  %arena, %ta = gpu.alloc async [%t0] () : memref<64xi8>
  %t = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  %p = llvm.mlir.zero : !llvm.ptr
  call @kiln_cuda_matmul(%c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %c0_i64, %p, %c0_i64, %c0_i64, %p, %c0_i64, %c0_i64, %p, %c0_i64, %c0_i64, %p, %p) : (i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, !llvm.ptr) -> ()
  call @kiln_cuda_copy_constant(%p, %p, %c16_i64) : (!llvm.ptr, !llvm.ptr, i64) -> ()
  %t1 = gpu.wait async
  %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<4xf32>
    memref.store %v, %t[%tx] : memref<4xf32>
    gpu.terminator
  }
  scf.for %i = %c0 to %c3 step %c1 {
    %t3 = gpu.wait async
    %t4 = gpu.launch async [%t3] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %t[%tx] : memref<4xf32>
      memref.store %v, %y[%tx] : memref<4xf32>
      gpu.terminator
    }
    %t5 = gpu.memcpy async [%t4] %t, %y : memref<4xf32>, memref<4xf32>
  }
  %same = arith.cmpi eq, %c0, %c1 : index
  scf.if %same {
    %t6 = gpu.wait async
    %t7 = gpu.memcpy async [%t6] %y, %t : memref<4xf32>, memref<4xf32>
  }
  %t8 = gpu.wait async
  %t9 = gpu.dealloc async [%t8] %arena : memref<64xi8>
  return
}
func.func @kiln_entry_step(%args: !llvm.ptr) {
  %0 = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %c0 = llvm.mlir.constant(0 : index) : i64
  %c1 = llvm.mlir.constant(1 : index) : i64
  %c4 = llvm.mlir.constant(4 : index) : i64
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %2 = llvm.insertvalue %1, %0[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %3 = llvm.insertvalue %1, %2[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %4 = llvm.insertvalue %c0, %3[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %5 = llvm.insertvalue %c4, %4[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %6 = llvm.insertvalue %c1, %5[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %x = builtin.unrealized_conversion_cast %6 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
  %7 = llvm.getelementptr %args[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %8 = llvm.load %7 : !llvm.ptr -> !llvm.ptr
  %9 = llvm.insertvalue %8, %0[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %10 = llvm.insertvalue %8, %9[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %11 = llvm.insertvalue %c0, %10[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %12 = llvm.insertvalue %c4, %11[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %13 = llvm.insertvalue %c1, %12[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %y = builtin.unrealized_conversion_cast %13 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
  call @kiln_impl_step(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// Each of these functions does something a capture cannot take, so its
// entry stays as it was: a wait for the stream, a predicate read on the
// host, a copy from host memory, a host-shared (managed) buffer, a launch
// the host waits for, a loop whose bounds are not constants, a call of a
// function without a body, and a function that calls itself.
// CHECK-NOT:   kiln_cuda_graph_call
// CHECK:       func.func @kiln_entry_recursive(
// CHECK-NOT:   kiln_cuda_graph_call
// CHECK:       // -----
func.func @kiln_impl_waits(%x: memref<4xf32>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %x, %x : memref<4xf32>, memref<4xf32>
  gpu.wait [%t1]
  return
}
func.func @kiln_entry_waits(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_waits(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_impl_reads(%x: memref<i1>) {
  %slot = memref.alloca() : memref<i1>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %slot, %x : memref<i1>, memref<i1>
  %v = memref.load %slot[] : memref<i1>
  return
}
func.func @kiln_entry_reads(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<i1>
  call @kiln_impl_reads(%x) : (memref<i1>) -> ()
  return
}
memref.global "private" constant @table : memref<4xf32> = dense<1.0>
func.func @kiln_impl_copies_from_host(%x: memref<4xf32>) {
  %g = memref.get_global @table : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %x, %g : memref<4xf32>, memref<4xf32>
  return
}
func.func @kiln_entry_copies_from_host(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_copies_from_host(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_impl_managed(%x: memref<4xf32>) {
  %t0 = gpu.wait async
  %m, %t1 = gpu.alloc async [%t0] host_shared () : memref<4xf32>
  return
}
func.func @kiln_entry_managed(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_managed(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_impl_blocking_launch(%x: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}
func.func @kiln_entry_blocking_launch(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_blocking_launch(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_impl_dynamic_trips(%x: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %x, %x : memref<4xf32>, memref<4xf32>
  }
  return
}
func.func @kiln_entry_dynamic_trips(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  %2 = llvm.getelementptr %args[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %n = llvm.load %2 : !llvm.ptr -> i64
  %i = arith.index_cast %n : i64 to index
  call @kiln_impl_dynamic_trips(%x, %i) : (memref<4xf32>, index) -> ()
  return
}
func.func private @elsewhere(memref<4xf32>)
func.func @kiln_entry_external(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @elsewhere(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_impl_recursive(%x: memref<4xf32>) {
  call @kiln_impl_recursive(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_entry_recursive(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_recursive(%x) : (memref<4xf32>) -> ()
  return
}

// -----

// A loop that would unroll into more than 100000 graph nodes.
// CHECK-LABEL: func.func @kiln_entry_huge(
// CHECK-NOT:   kiln_cuda_graph_call
// CHECK:       return
// CHECK-LABEL: func.func @kiln_entry_large(
// CHECK:       kiln_cuda_graph_call_begin
func.func @kiln_impl_huge(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %trips = arith.constant 50001 : index
  scf.for %i = %c0 to %trips step %c1 {
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %x, %x : memref<4xf32>, memref<4xf32>
    %t2 = gpu.memcpy async [%t1] %x, %x : memref<4xf32>, memref<4xf32>
  }
  return
}
func.func @kiln_entry_huge(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_huge(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_impl_large(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %trips = arith.constant 50000 : index
  scf.for %i = %c0 to %trips step %c1 {
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %x, %x : memref<4xf32>, memref<4xf32>
    %t2 = gpu.memcpy async [%t1] %x, %x : memref<4xf32>, memref<4xf32>
  }
  return
}
func.func @kiln_entry_large(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_large(%x) : (memref<4xf32>) -> ()
  return
}

// -----

// Loops and conds in their graph forms (kiln-cuda-graph-loops,
// kiln-cuda-graph-conds): the runtime takes the graph form while it
// captures a call, so the host form's predicate read does not keep the
// call from being captured.
// CHECK-LABEL: func.func @kiln_entry_graph_forms(
// CHECK:       kiln_cuda_graph_call_begin
// CHECK:       kiln_cuda_graph_call_end
func.func private @kiln_cuda_graph_loops() -> i32
func.func private @kiln_cuda_graph_while_begin() -> !llvm.ptr
func.func private @kiln_cuda_graph_while_test(!llvm.ptr, !llvm.ptr)
func.func private @kiln_cuda_graph_while_end_iteration(!llvm.ptr, !llvm.ptr)
func.func private @kiln_cuda_graph_conds() -> i32
func.func private @kiln_cuda_graph_if_begin(!llvm.ptr) -> !llvm.ptr
func.func private @kiln_cuda_graph_if_else(!llvm.ptr)
func.func private @kiln_cuda_graph_if_end(!llvm.ptr)
func.func @kiln_impl_graph_forms(%x: memref<4xf32>, %p: memref<i1>) {
  %c0_i32 = arith.constant 0 : i32
  %null = llvm.mlir.zero : !llvm.ptr
  %slot = memref.alloca() : memref<i1>
  %loops = call @kiln_cuda_graph_loops() : () -> i32
  %graph_loop = arith.cmpi ne, %loops, %c0_i32 : i32
  scf.if %graph_loop {
    %loop = func.call @kiln_cuda_graph_while_begin() : () -> !llvm.ptr
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %x, %x : memref<4xf32>, memref<4xf32>
    func.call @kiln_cuda_graph_while_test(%loop, %null) : (!llvm.ptr, !llvm.ptr) -> ()
    func.call @kiln_cuda_graph_while_end_iteration(%loop, %null) : (!llvm.ptr, !llvm.ptr) -> ()
  } else {
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t1]
    %more = memref.load %slot[] : memref<i1>
  }
  %conds = call @kiln_cuda_graph_conds() : () -> i32
  %graph_cond = arith.cmpi ne, %conds, %c0_i32 : i32
  scf.if %graph_cond {
    %b = func.call @kiln_cuda_graph_if_begin(%null) : (!llvm.ptr) -> !llvm.ptr
    func.call @kiln_cuda_graph_if_else(%b) : (!llvm.ptr) -> ()
    func.call @kiln_cuda_graph_if_end(%b) : (!llvm.ptr) -> ()
  } else {
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %slot, %p : memref<i1>, memref<i1>
    gpu.wait [%t1]
    %more = memref.load %slot[] : memref<i1>
  }
  return
}
func.func @kiln_entry_graph_forms(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  %2 = llvm.getelementptr %args[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %3 = llvm.load %2 : !llvm.ptr -> !llvm.ptr
  %p = builtin.unrealized_conversion_cast %3 : !llvm.ptr to memref<i1>
  call @kiln_impl_graph_forms(%x, %p) : (memref<4xf32>, memref<i1>) -> ()
  return
}

// -----

// The run-time alias check of ownership-based deallocation
// (bufferization's dealloc_helper) is host work on host buffers of the
// host code's own: it queues nothing, so the call is captured, its loops
// of any trip count included. The same helper handed a device buffer (an
// argument) would read device memory on the host: that call is not.
// CHECK-LABEL: func.func @kiln_entry_alias_check(
// CHECK:       kiln_cuda_graph_call_begin
// CHECK-LABEL: func.func @kiln_entry_device_to_helper(
// CHECK-NOT:   kiln_cuda_graph_call_begin
// CHECK:       return
func.func private @dealloc_helper(%ptrs: memref<?xindex>, %flags: memref<?xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %ptrs, %c0 : memref<?xindex>
  scf.for %i = %c0 to %n step %c1 {
    %p = memref.load %ptrs[%i] : memref<?xindex>
    %zero = arith.cmpi eq, %p, %c0 : index
    memref.store %zero, %flags[%i] : memref<?xi1>
  }
  return
}
func.func @kiln_impl_alias_check(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %t0 = gpu.wait async
  %a, %ta = gpu.alloc async [%t0] () : memref<4xf32>
  %t1 = gpu.memcpy async [%ta] %a, %x : memref<4xf32>, memref<4xf32>
  %ptrs = memref.alloc() : memref<1xindex>
  %flags = memref.alloc() : memref<1xi1>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  memref.store %p, %ptrs[%c0] : memref<1xindex>
  %ptrsd = memref.cast %ptrs : memref<1xindex> to memref<?xindex>
  %flagsd = memref.cast %flags : memref<1xi1> to memref<?xi1>
  call @dealloc_helper(%ptrsd, %flagsd) : (memref<?xindex>, memref<?xi1>) -> ()
  %free = memref.load %flags[%c0] : memref<1xi1>
  scf.if %free {
    %t2 = gpu.wait async
    %t3 = gpu.dealloc async [%t2] %a : memref<4xf32>
  }
  memref.dealloc %ptrs : memref<1xindex>
  memref.dealloc %flags : memref<1xi1>
  return
}
func.func @kiln_entry_alias_check(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_alias_check(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_impl_device_to_helper(%ptrs: memref<1xindex>) {
  %flags = memref.alloc() : memref<1xi1>
  %ptrsd = memref.cast %ptrs : memref<1xindex> to memref<?xindex>
  %flagsd = memref.cast %flags : memref<1xi1> to memref<?xi1>
  call @dealloc_helper(%ptrsd, %flagsd) : (memref<?xindex>, memref<?xi1>) -> ()
  memref.dealloc %flags : memref<1xi1>
  return
}
func.func @kiln_entry_device_to_helper(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %ptrs = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<1xindex>
  call @kiln_impl_device_to_helper(%ptrs) : (memref<1xindex>) -> ()
  return
}

// -----

// A tuned call site (TunedSites.h): its loop's bound is the runtime's
// answer, not a constant, but the runtime decides a site at its first
// call, which is not captured, and a captured call runs one round of the
// variant chosen; so the capture takes the site as one round, and the
// entry is bracketed. The same loop without the site's mark is not.
// CHECK-LABEL: func.func @kiln_entry_tuned(
// CHECK-NEXT:    call @kiln_cuda_graph_call_begin()
// CHECK-LABEL: func.func @kiln_entry_unmarked(
// CHECK-NOT:     kiln_cuda_graph_call
// CHECK:         return
func.func private @kiln_cuda_tune_rounds(i64, i64, !llvm.ptr) -> i64
func.func private @kiln_cuda_tune_begin(i64, i64) -> i64
func.func private @kiln_cuda_tune_end(i64, i64)
func.func @kiln_impl_tuned(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %site = arith.constant 0 : i64
  %two = arith.constant 2 : i64
  %names = llvm.mlir.zero : !llvm.ptr
  %rounds = call @kiln_cuda_tune_rounds(%site, %two, %names) : (i64, i64, !llvm.ptr) -> i64
  %n = arith.index_cast %rounds : i64 to index
  scf.for %i = %c0 to %n step %c1 {
    %round = arith.index_cast %i : index to i64
    %variant = func.call @kiln_cuda_tune_begin(%site, %round) : (i64, i64) -> i64
    %first = arith.cmpi eq, %variant, %site : i64
    scf.if %first {
      %t0 = gpu.wait async
      %t1 = gpu.launch async [%t0] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
          threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
        %v = memref.load %x[%tx] : memref<4xf32>
        memref.store %v, %x[%tx] : memref<4xf32>
        gpu.terminator
      }
    } else {
      %t0 = gpu.wait async
      %t1 = gpu.memcpy async [%t0] %x, %x : memref<4xf32>, memref<4xf32>
    } {kiln.cuda_tuned_variant = 0 : i64}
    func.call @kiln_cuda_tune_end(%site, %round) : (i64, i64) -> ()
  } {kiln.cuda_tuned_site = 0 : i64}
  return
}
func.func @kiln_entry_tuned(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_tuned(%x) : (memref<4xf32>) -> ()
  return
}
func.func @kiln_impl_unmarked(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %site = arith.constant 0 : i64
  %two = arith.constant 2 : i64
  %names = llvm.mlir.zero : !llvm.ptr
  %rounds = call @kiln_cuda_tune_rounds(%site, %two, %names) : (i64, i64, !llvm.ptr) -> i64
  %n = arith.index_cast %rounds : i64 to index
  scf.for %i = %c0 to %n step %c1 {
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %x, %x : memref<4xf32>, memref<4xf32>
  }
  return
}
func.func @kiln_entry_unmarked(%args: !llvm.ptr) {
  %1 = llvm.load %args : !llvm.ptr -> !llvm.ptr
  %x = builtin.unrealized_conversion_cast %1 : !llvm.ptr to memref<4xf32>
  call @kiln_impl_unmarked(%x) : (memref<4xf32>) -> ()
  return
}
