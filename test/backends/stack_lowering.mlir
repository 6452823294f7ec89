// kiln stacks lower to tensor ops on the same tensor<?x...>: stack_empty is
// an empty tensor of 0 rows, stack_reserve copies the rows into a new
// tensor of max(rows, capacity) rows, stack_push inserts a row
// in place and stack_read extracts one.
// RUN: kiln-opt %s --kiln-to-linalg | FileCheck %s
// The whole CPU pipeline bufferizes them and frees the buffers.
// RUN: kiln-opt %s --kiln-cpu-lowering | FileCheck %s --check-prefix=LLVM \
// RUN:   --implicit-check-not=tensor. --implicit-check-not=kiln.
// LLVM: llvm.call @_mlir_memref_to_llvm_alloc
// LLVM: llvm.call @_mlir_memref_to_llvm_free
// RUN: kiln-opt %s --kiln-to-linalg \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries allow-return-allocs-from-loops" \
// RUN:   | FileCheck %s --check-prefix=BUFFERS

// CHECK-LABEL: func.func @push_read
// CHECK-SAME:      (%[[V:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<i64>, %[[N:.*]]: tensor<i64>)
// CHECK:         %[[S:.*]] = tensor.empty(%{{.*}}) : tensor<?x2x3xf32>
// CHECK:         %[[E:.*]] = tensor.extract %[[N]][] : tensor<i64>
// CHECK:         %[[ROWS:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK:         %[[CAP:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<?x2x3xf32>
// CHECK:         %[[SIZE:.*]] = arith.maxsi %[[ROWS]], %[[CAP]] : index
// CHECK:         %[[NEW:.*]] = tensor.empty(%[[SIZE]]) : tensor<?x2x3xf32>
// CHECK:         %[[G:.*]] = tensor.insert_slice %[[S]] into %[[NEW]][0, 0, 0] [%[[CAP]], 2, 3] [1, 1, 1]
// CHECK-NOT:     scf.if
// CHECK:         %[[IE:.*]] = tensor.extract %[[I]][] : tensor<i64>
// CHECK:         %[[X:.*]] = arith.index_cast %[[IE]] : i64 to index
// CHECK:         %[[T:.*]] = tensor.insert_slice %[[V]] into %[[G]][%[[X]], 0, 0] [1, 2, 3] [1, 1, 1] : tensor<2x3xf32> into tensor<?x2x3xf32>
// CHECK:         tensor.extract_slice %[[T]][%{{.*}}, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<?x2x3xf32> to tensor<2x3xf32>
func.func @push_read(%v: tensor<2x3xf32>, %i: tensor<i64>, %n: tensor<i64>) -> tensor<2x3xf32> {
  %s = kiln.stack_empty : tensor<?x2x3xf32>
  %r = kiln.stack_reserve %s, %n : tensor<?x2x3xf32>
  %t = kiln.stack_push %r[%i], %v : tensor<?x2x3xf32>, tensor<2x3xf32>
  %x = kiln.stack_read %t[%i] : tensor<?x2x3xf32> -> tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}

// A loop that only pushes writes into the buffer it carries: no copy of
// the stack in the loop (the only copies are the two of the rank-0
// counter and of the pushed row).
// CHECK-LABEL: func.func @push_loop
// BUFFERS-LABEL: func.func @push_loop
// BUFFERS:         scf.while
// BUFFERS-NOT:     memref.alloc({{.*}}) {{.*}} : memref<?x3xf64>
// BUFFERS:         return
func.func @push_loop(%v: tensor<3xf64>, %n: tensor<i64>) -> tensor<3xf64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %s = kiln.stack_empty : tensor<?x3xf64>
  %r = kiln.stack_reserve %s, %n : tensor<?x3xf64>
  %w:4 = kiln.while (%zero, %n, %v, %r) : (tensor<i64>, tensor<i64>, tensor<3xf64>, tensor<?x3xf64>) cond {
  ^bb0(%k: tensor<i64>, %m: tensor<i64>, %x: tensor<3xf64>, %t: tensor<?x3xf64>):
    %c = kiln.compare lt, %k, %m : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%k: tensor<i64>, %m: tensor<i64>, %x: tensor<3xf64>, %t: tensor<?x3xf64>):
    %t2 = kiln.stack_push %t[%k], %x : tensor<?x3xf64>, tensor<3xf64>
    %one = kiln.constant dense<1> : tensor<i64>
    %k1 = kiln.add %k, %one : tensor<i64>
    kiln.yield %k1, %m, %x, %t2 : tensor<i64>, tensor<i64>, tensor<3xf64>, tensor<?x3xf64>
  }
  %x = kiln.stack_read %w#3[%zero] : tensor<?x3xf64> -> tensor<3xf64>
  return %x : tensor<3xf64>
}
