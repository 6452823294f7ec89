// kiln-collective-calls lowers kiln.rank; one-shot bufferization turns
// the flat collectives into calls of the communicator (the models in
// CollectiveCalls.cpp): the buffers reach the calls as memrefs, the wait
// names the start's operand buffer again, and only the @kiln_comm_*
// functions take addresses, calling through exported slots.
// RUN: kiln-opt %s --split-input-file --kiln-decompose-collectives --kiln-collective-calls --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// CHECK-DAG: llvm.mlir.global internal constant @[[$GROUPS:kiln_comm_table[_0-9]*]](dense<[1, 0]> : tensor<2xi64>)
// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[X:.*]]: memref<3x4xf32>, %[[Y:.*]]: memref<3x4xf32>)
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() : memref<3x4xf32>
// CHECK-DAG: %[[TABLE:.*]] = llvm.mlir.addressof @[[$GROUPS]] : !llvm.ptr
// CHECK-DAG: %[[KIND:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[MAX:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[COUNT:.*]] = arith.constant 12 : i64
// CHECK: %[[H:.*]] = call @kiln_comm_start(%[[KIND]], %[[MAX]], %{{.*}}, %[[X]], %[[OUT]], %[[COUNT]], %{{.*}}, %[[TABLE]], %{{.*}}) : (i32, i32, i32, memref<3x4xf32>, memref<3x4xf32>, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64) -> i64
// The second start overlaps the first: its operand is another argument.
// CHECK: %[[H2:.*]] = call @kiln_comm_start(%{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %[[OUT2:[a-z_0-9]+]], %{{.*}}
// CHECK: call @kiln_comm_wait(%[[H]], %[[X]], %[[OUT]]) : (i64, memref<3x4xf32>, memref<3x4xf32>) -> ()
// CHECK: call @kiln_comm_wait(%[[H2]], %[[Y]], %[[OUT2]])
// CHECK: return %[[OUT]], %[[OUT2]]
// CHECK: llvm.mlir.global external @kiln_comm_fn_start() {{.*}} : !llvm.ptr
// CHECK: func.func private @kiln_comm_start({{.*}}, %[[IN:.*]]: memref<3x4xf32>, %[[RES:.*]]: memref<3x4xf32>, {{.*}}) -> i64
// CHECK: llvm.mlir.addressof @kiln_comm_fn_start
// CHECK: llvm.load
// CHECK: memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK: memref.extract_strided_metadata %[[IN]]
// CHECK: memref.extract_aligned_pointer_as_index %[[RES]]
// CHECK: llvm.call %{{.*}}(
// CHECK: llvm.mlir.global external @kiln_comm_fn_wait() {{.*}} : !llvm.ptr
// CHECK: func.func private @kiln_comm_wait(
func.func @all_reduce(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %p = kiln.all_reduce_start %x, kind = max, groups = [[1, 0]] : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %q = kiln.all_reduce_start %y, kind = sum, groups = [[1, 0]] : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = kiln.collective_wait %p, %x : tensor<3x4xf32>, tensor<3x4xf32>
  %s = kiln.collective_wait %q, %y : tensor<3x4xf32>, tensor<3x4xf32>
  return %r, %s : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// Permutes pass their pairs and no groups; rank reads the communicator.
// CHECK-DAG: llvm.mlir.global internal constant @[[$PAIRS:kiln_comm_table[_0-9]*]](dense<[0, 1, 1, 0]> : tensor<4xi64>)
// CHECK-LABEL: func.func @permute
// CHECK-DAG: %[[KIND:.*]] = arith.constant 5 : i32
// CHECK-DAG: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-DAG: %[[P:.*]] = llvm.mlir.addressof @[[$PAIRS]]
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: %[[H:.*]] = call @kiln_comm_start(%[[KIND]], {{.*}}, %[[NULL]], %{{.*}}, %{{.*}}, %[[P]], %[[TWO]])
// CHECK-NEXT: call @kiln_comm_wait(%[[H]]
// CHECK: %[[RANK:.*]] = call @kiln_comm_rank() : () -> i64
// CHECK: memref.store %[[RANK]]
func.func @permute(%x: tensor<5xi1>) -> (tensor<5xi1>, tensor<i64>) {
  %p = kiln.collective_permute %x, pairs = [0, 1, 1, 0] : tensor<5xi1>
  %r = kiln.rank : tensor<i64>
  return %p, %r : tensor<5xi1>, tensor<i64>
}

// -----

// A collective whose result a branch yields while the other branch yields
// the input (a stage's all-reduce in its kiln.cond): the analysis copies the
// pending buffer out of place, and the exchange completes before the copy
// (this failed with "finds no start call filling its buffer").
// CHECK-LABEL: func.func @in_a_branch
// CHECK-SAME: (%[[X:.*]]: memref<8xf32>, %{{.*}}: i1)
// CHECK: scf.if
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[H:.*]] = func.call @kiln_comm_start(%{{.*}}, %{{.*}}, %{{.*}}, %[[X]], %[[OUT]],
// CHECK: %[[COPY:.*]] = memref.alloc()
// CHECK-NEXT: func.call @kiln_comm_wait(%[[H]], %[[X]], %[[OUT]])
// CHECK-NEXT: memref.copy %[[OUT]], %[[COPY]]
// CHECK-NEXT: scf.yield %[[COPY]]
func.func @in_a_branch(%x: tensor<8xf32>, %p: i1) -> tensor<8xf32> {
  %y = scf.if %p -> tensor<8xf32> {
    %s = kiln.all_reduce %x, kind = max, groups = [[0, 1]] : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  } else {
    scf.yield %x : tensor<8xf32>
  }
  return %y : tensor<8xf32>
}

// -----

// A module without collectives gets no slots.
// CHECK: // -----
// CHECK-NOT: kiln_comm
// CHECK-LABEL: func.func @plain
// CHECK-NOT: kiln_comm
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
