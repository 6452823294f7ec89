// kiln stacks lower to tensor ops on the same tensor<?x...>: stack_empty is
// an empty tensor of 0 rows, stack_push grows the tensor (to at least
// twice its rows) when the row index reaches its rows and inserts the row,
// stack_read extracts the row.
// RUN: kiln-opt %s --kiln-to-linalg | FileCheck %s
// The whole CPU pipeline bufferizes them and frees the buffers.
// RUN: kiln-opt %s --kiln-cpu-lowering | FileCheck %s --check-prefix=LLVM \
// RUN:   --implicit-check-not=tensor. --implicit-check-not=kiln.
// LLVM: llvm.call @malloc
// LLVM: llvm.call @free

// CHECK-LABEL: func.func @push_read
// CHECK-SAME:      (%[[V:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<i64>)
// CHECK:         %[[S:.*]] = tensor.empty(%{{.*}}) : tensor<?x2x3xf32>
// CHECK:         %[[E:.*]] = tensor.extract %[[I]][] : tensor<i64>
// CHECK:         %[[X:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK:         %[[CAP:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<?x2x3xf32>
// CHECK:         %[[FULL:.*]] = arith.cmpi uge, %[[X]], %[[CAP]] : index
// CHECK:         %[[G:.*]] = scf.if %[[FULL]] -> (tensor<?x2x3xf32>) {
// CHECK:           %[[N:.*]] = tensor.empty(%{{.*}}) : tensor<?x2x3xf32>
// CHECK:           %[[C:.*]] = tensor.insert_slice %[[S]] into %[[N]][0, 0, 0] [%[[CAP]], 2, 3] [1, 1, 1]
// CHECK:           scf.yield %[[C]]
// CHECK:         } else {
// CHECK:           scf.yield %[[S]]
// CHECK:         }
// CHECK:         %[[T:.*]] = tensor.insert_slice %[[V]] into %[[G]][%[[X]], 0, 0] [1, 2, 3] [1, 1, 1] : tensor<2x3xf32> into tensor<?x2x3xf32>
// CHECK:         tensor.extract_slice %[[T]][%{{.*}}, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<?x2x3xf32> to tensor<2x3xf32>
func.func @push_read(%v: tensor<2x3xf32>, %i: tensor<i64>) -> tensor<2x3xf32> {
  %s = kiln.stack_empty : tensor<?x2x3xf32>
  %t = kiln.stack_push %s[%i], %v : tensor<?x2x3xf32>, tensor<2x3xf32>
  %r = kiln.stack_read %t[%i] : tensor<?x2x3xf32> -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
