// kiln-entry-points: every public function gets the wrapper
// `kiln_entry_<name>(void **args)` that the runtime calls on both targets,
// loading the i-th data pointer from args into a memref descriptor of the
// argument's static shape; every defined function is renamed kiln_impl_<name>
// and made internal, so a function named like a libm routine cannot clash.
// RUN: kiln-opt %s --kiln-entry-points | FileCheck %s

// CHECK-LABEL: func.func @kiln_impl_tanh(
// CHECK-SAME:      memref<4xf32>, %{{.+}}: memref<2x3xi64>)
// CHECK-SAME:      llvm.linkage = #llvm.linkage<internal>
// CHECK:         call @kiln_impl_helper(
// CHECK-LABEL: func.func @kiln_entry_tanh(
// CHECK-SAME:      %[[ARGS:.+]]: !llvm.ptr)
// CHECK:         %[[P0:.+]] = llvm.getelementptr %[[ARGS]][0]
// CHECK:         %[[D0:.+]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.insertvalue %[[D0]], %{{.+}}[0]
// CHECK:         llvm.insertvalue %[[D0]], %{{.+}}[1]
// CHECK:         %[[M0:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<4xf32>
// CHECK:         %[[P1:.+]] = llvm.getelementptr %[[ARGS]][1]
// CHECK:         %[[D1:.+]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.mlir.constant(2 : index)
// CHECK:         llvm.mlir.constant(3 : index)
// CHECK:         %[[M1:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<2x3xi64>
// CHECK:         call @kiln_impl_tanh(%[[M0]], %[[M1]])
// CHECK-NOT:   func.func @kiln_entry_helper
// CHECK-LABEL: func.func private @kiln_impl_helper(
// CHECK-SAME:      llvm.linkage = #llvm.linkage<internal>
func.func @tanh(%x: memref<4xf32>, %y: memref<2x3xi64>) {
  call @helper(%x) : (memref<4xf32>) -> ()
  return
}
func.func private @helper(%x: memref<4xf32>) {
  return
}
