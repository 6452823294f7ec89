// kiln-cpu-plan-memory puts the intermediates of a block into one arena;
// buffers whose lifetimes do not overlap share bytes.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-plan-memory=report=true \
// RUN:   -verify-diagnostics | FileCheck %s

// %a dies at the copy into %b; %c (same size as %a) reuses its bytes, %b
// sits after them.
// CHECK-LABEL: func.func @chain(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK:         %[[A:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         %[[B:.*]] = memref.view %[[ARENA]][%c4096{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         memref.copy %[[A]], %[[B]]
// CHECK:         %[[C:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<8192xi8> to memref<512xf64>
// CHECK-NOT:     memref.alloc()
// expected-remark @below {{memory plan for @chain: intermediates 12288 bytes in total, 8192 bytes after planning}}
func.func @chain(%x: memref<1024xf32>, %out: memref<512xf64>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  memref.copy %x, %a : memref<1024xf32> to memref<1024xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  memref.copy %a, %b : memref<1024xf32> to memref<1024xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<512xf64>
  memref.copy %out, %c : memref<512xf64> to memref<512xf64>
  %i = arith.constant 3 : index
  %v = memref.load %b[%i] : memref<1024xf32>
  %w = arith.extf %v : f32 to f64
  memref.store %w, %c[%i] : memref<512xf64>
  memref.copy %c, %out : memref<512xf64> to memref<512xf64>
  return
}

// -----

// A returned buffer escapes and keeps its allocation, which leaves one
// buffer (read inside a loop): nothing to share, nothing changes.
// CHECK-LABEL: func.func @loop_and_escape(
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<256xf32>
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<256xf32>
// CHECK-NOT:     memref.view
// expected-remark @below {{memory plan for @loop_and_escape: intermediates 2048 bytes in total, 2048 bytes after planning}}
func.func @loop_and_escape(%x: memref<256xf32>) -> memref<256xf32> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  memref.copy %x, %a : memref<256xf32> to memref<256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<256xf32>
    memref.store %v, %x[%i] : memref<256xf32>
  }
  %r = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  memref.copy %x, %r : memref<256xf32> to memref<256xf32>
  return %r : memref<256xf32>
}

// -----

// The communicator's calls use their buffers from the start of an exchange
// to its wait: %in and %out live until the wait, so %later (allocated
// between start and wait, same size) may not take their bytes, while %after
// (allocated once the wait has returned and %in is dead) reuses %in's.
// CHECK-LABEL: func.func @exchange(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<12288xi8>
// CHECK:         %[[IN:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<12288xi8> to memref<1024xf32>
// CHECK:         %[[OUT:.*]] = memref.view %[[ARENA]][%c4096{{.*}}][] : memref<12288xi8> to memref<1024xf32>
// CHECK:         call @kiln_comm_start(%[[IN]], %[[OUT]])
// CHECK:         %[[LATER:.*]] = memref.view %[[ARENA]][%c8192{{.*}}][] : memref<12288xi8> to memref<1024xf32>
// CHECK:         call @kiln_comm_wait(%{{.*}}, %[[IN]], %[[OUT]])
// CHECK:         %[[AFTER:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<12288xi8> to memref<1024xf32>
// expected-remark @below {{memory plan for @exchange: intermediates 16384 bytes in total, 12288 bytes after planning}}
func.func @exchange(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %in = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  memref.copy %x, %in : memref<1024xf32> to memref<1024xf32>
  %out = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  %h = call @kiln_comm_start(%in, %out) : (memref<1024xf32>, memref<1024xf32>) -> i64
  %later = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  memref.copy %x, %later : memref<1024xf32> to memref<1024xf32>
  memref.copy %later, %y : memref<1024xf32> to memref<1024xf32>
  call @kiln_comm_wait(%h, %in, %out) : (i64, memref<1024xf32>, memref<1024xf32>) -> ()
  %after = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  memref.copy %out, %after : memref<1024xf32> to memref<1024xf32>
  memref.copy %after, %y : memref<1024xf32> to memref<1024xf32>
  return
}
// expected-remark @below {{memory plan for @kiln_comm_start: intermediates 0 bytes in total, 0 bytes after planning}}
func.func private @kiln_comm_start(memref<1024xf32>, memref<1024xf32>) -> i64 attributes {kiln.comm_function = "start"}
// expected-remark @below {{memory plan for @kiln_comm_wait: intermediates 0 bytes in total, 0 bytes after planning}}
func.func private @kiln_comm_wait(i64, memref<1024xf32>, memref<1024xf32>) attributes {kiln.comm_function = "wait"}

// -----

// A function of the module uses its arguments during the call only: %a,
// read by @conv, dies there and %c reuses its bytes (the outlined
// convolutions of a CNN are such calls). A buffer passed to a function the
// module only declares, or to one that returns a buffer, escapes.
// CHECK-LABEL: func.func @calls(
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK:         %[[A:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         %[[B:.*]] = memref.view %[[ARENA]][%c4096{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         call @conv(%[[A]], %[[B]])
// CHECK:         %[[C:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         call @conv(%[[B]], %[[C]])
// CHECK:         %[[D:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
// CHECK:         call @external(%[[D]])
// CHECK:         %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
// CHECK:         call @identity(%[[E]])
// expected-remark @below {{memory plan for @calls: intermediates 20480 bytes in total, 16384 bytes after planning}}
func.func @calls(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  memref.copy %x, %a : memref<1024xf32> to memref<1024xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  call @conv(%a, %b) : (memref<1024xf32>, memref<1024xf32>) -> ()
  %c = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  call @conv(%b, %c) : (memref<1024xf32>, memref<1024xf32>) -> ()
  memref.copy %c, %y : memref<1024xf32> to memref<1024xf32>
  %d = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  memref.copy %x, %d : memref<1024xf32> to memref<1024xf32>
  call @external(%d) : (memref<1024xf32>) -> ()
  %e = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  memref.copy %x, %e : memref<1024xf32> to memref<1024xf32>
  %f = call @identity(%e) : (memref<1024xf32>) -> memref<1024xf32>
  memref.copy %f, %y : memref<1024xf32> to memref<1024xf32>
  return
}
// expected-remark @below {{memory plan for @conv: intermediates 0 bytes in total, 0 bytes after planning}}
func.func private @conv(%src: memref<1024xf32>, %dst: memref<1024xf32>) {
  memref.copy %src, %dst : memref<1024xf32> to memref<1024xf32>
  return
}
// expected-remark @below {{memory plan for @external: intermediates 0 bytes in total, 0 bytes after planning}}
func.func private @external(memref<1024xf32>)
// expected-remark @below {{memory plan for @identity: intermediates 0 bytes in total, 0 bytes after planning}}
func.func private @identity(%x: memref<1024xf32>) -> memref<1024xf32> {
  return %x : memref<1024xf32>
}
