// kiln-read-only-arguments marks the tensor arguments of public functions
// read only for one-shot bufferization; private functions and declarations
// keep theirs. Then an update of an argument writes into a copy.
// RUN: kiln-opt %s --split-input-file --kiln-read-only-arguments | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-read-only-arguments --kiln-to-linalg --one-shot-bufferize=bufferize-function-boundaries | FileCheck %s --check-prefix=BUFFERS

// CHECK-LABEL: func.func @update
// CHECK-SAME:      (%{{.*}}: tensor<6xf32> {bufferization.writable = false}, %{{.*}}: tensor<i64> {bufferization.writable = false}, %{{.*}}: tensor<2xf32> {bufferization.writable = false})
// CHECK-LABEL: func.func private @helper
// CHECK-SAME:      (%{{.*}}: tensor<6xf32>)
// BUFFERS-LABEL: func.func @update
// BUFFERS-SAME:      (%[[X:.*]]: memref<6xf32
// BUFFERS:         %[[COPY:.*]] = memref.alloc() {{.*}}: memref<6xf32>
// BUFFERS:         memref.copy %[[X]], %[[COPY]]
// BUFFERS:         memref.subview %[[COPY]]
func.func @update(%x: tensor<6xf32>, %i: tensor<i64>, %u: tensor<2xf32>) -> tensor<6xf32> {
  %s = kiln.dynamic_update_slice %x[%i], %u : tensor<6xf32>, tensor<2xf32>
  return %s : tensor<6xf32>
}
func.func private @helper(%x: tensor<6xf32>) -> tensor<6xf32> {
  return %x : tensor<6xf32>
}

// -----

// A donated argument (kiln.tied_result) stays writable, and its update is
// made in place.
// CHECK-LABEL: func.func @donated
// CHECK-SAME:      (%{{.*}}: tensor<6xf32> {kiln.tied_result = 0 : i64}, %{{.*}}: tensor<i64> {bufferization.writable = false}, %{{.*}}: tensor<2xf32> {bufferization.writable = false})
// BUFFERS-LABEL: func.func @donated
// BUFFERS-SAME:      (%[[X:[^:]*]]: memref<6xf32
// BUFFERS-NOT:     memref.alloc
// BUFFERS:         memref.subview %[[X]]
func.func @donated(%x: tensor<6xf32> {kiln.tied_result = 0 : i64}, %i: tensor<i64>, %u: tensor<2xf32>) -> tensor<6xf32> {
  %s = kiln.dynamic_update_slice %x[%i], %u : tensor<6xf32>, tensor<2xf32>
  return %s : tensor<6xf32>
}
