// kiln-cpu-collective-calls: collectives become calls of the communicator
// through exported slots; the wait names both buffers again.
// RUN: kiln-opt %s --split-input-file --kiln-decompose-collectives --kiln-cpu-collective-calls | FileCheck %s

// CHECK-DAG: llvm.mlir.global internal constant @[[GROUPS:kiln_comm_table[_0-9]*]](dense<[1, 0]> : tensor<2xi64>)
// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>)
// CHECK-DAG: %[[IN:.*]] = bufferization.to_memref %[[X]] read_only : memref<3x4xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() : memref<3x4xf32>
// CHECK-DAG: %[[TABLE:.*]] = llvm.mlir.addressof @[[GROUPS]] : !llvm.ptr
// CHECK-DAG: %[[KIND:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[MAX:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[COUNT:.*]] = arith.constant 12 : i64
// CHECK: %[[H:.*]] = call @kiln_comm_start(%[[KIND]], %[[MAX]], %{{.*}}, %{{.*}}, %{{.*}}, %[[COUNT]], %{{.*}}, %[[TABLE]], %{{.*}}) : (i32, i32, i32, !llvm.ptr, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64) -> i64
// CHECK: kiln.exp
// CHECK: %[[IN2:.*]] = bufferization.to_memref %[[X]] read_only
// CHECK: memref.extract_aligned_pointer_as_index %[[IN2]]
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: call @kiln_comm_wait(%[[H]], %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<3x4xf32>
// CHECK: return %[[R]]
// CHECK: llvm.mlir.global external @kiln_comm_fn_start() {{.*}} : !llvm.ptr
// CHECK: func.func private @kiln_comm_start(
// CHECK: llvm.mlir.addressof @kiln_comm_fn_start
// CHECK: llvm.load
// CHECK: llvm.call %{{.*}}(
// CHECK: llvm.mlir.global external @kiln_comm_fn_wait() {{.*}} : !llvm.ptr
// CHECK: func.func private @kiln_comm_wait(
func.func @all_reduce(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %p = kiln.all_reduce_start %x, kind = max, groups = [[1, 0]] : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %e = kiln.exp %x : tensor<3x4xf32>
  %r = kiln.collective_wait %p, %x : tensor<3x4xf32>, tensor<3x4xf32>
  return %r, %e : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// Permutes pass their pairs and no groups; rank reads the communicator.
// CHECK-DAG: llvm.mlir.global internal constant @[[PAIRS:kiln_comm_table[_0-9]*]](dense<[0, 1, 1, 0]> : tensor<4xi64>)
// CHECK-LABEL: func.func @permute
// CHECK-DAG: %[[KIND:.*]] = arith.constant 5 : i32
// CHECK-DAG: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-DAG: %[[P:.*]] = llvm.mlir.addressof @[[PAIRS]]
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: %[[H:.*]] = call @kiln_comm_start(%[[KIND]], {{.*}}, %[[NULL]], %{{.*}}, %{{.*}}, %[[P]], %[[TWO]])
// CHECK-NEXT: bufferization.to_memref
// CHECK: call @kiln_comm_wait(%[[H]]
// CHECK: %[[RANK:.*]] = call @kiln_comm_rank() : () -> i64
// CHECK: tensor.from_elements %[[RANK]] : tensor<i64>
func.func @permute(%x: tensor<5xi1>) -> (tensor<5xi1>, tensor<i64>) {
  %p = kiln.collective_permute %x, pairs = [0, 1, 1, 0] : tensor<5xi1>
  %r = kiln.rank : tensor<i64>
  return %p, %r : tensor<5xi1>, tensor<i64>
}

// -----

// A module without collectives gets no slots.
// CHECK: // -----
// CHECK-NOT: kiln_comm
// CHECK-LABEL: func.func @plain
// CHECK-NOT: kiln_comm
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = kiln.exp %x : tensor<4xf32>
  return %e : tensor<4xf32>
}
