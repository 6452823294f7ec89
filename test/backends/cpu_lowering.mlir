// The CPU pipeline lowers kiln all the way to the LLVM dialect. Results
// become out-params, and every public function gets a wrapper
// `kiln_entry_<name>(!llvm.ptr)` that loads the i-th data pointer from an
// array (inputs, then outputs), builds the static memref descriptors and
// calls the function. Private functions get no wrapper.
// RUN: kiln-opt %s --kiln-cpu-lowering | FileCheck %s
// RUN: kiln-opt %s --kiln-cpu-lowering | FileCheck %s --check-prefix=LLVM-ONLY \
// RUN:   --implicit-check-not=kiln. --implicit-check-not=linalg. \
// RUN:   --implicit-check-not=scf. --implicit-check-not=memref. \
// RUN:   --implicit-check-not=tensor. --implicit-check-not=bufferization. \
// RUN:   --implicit-check-not=arith. --implicit-check-not=math. \
// RUN:   --implicit-check-not=cf. --implicit-check-not=affine. \
// RUN:   --implicit-check-not=func.func --implicit-check-not=func.call \
// RUN:   --implicit-check-not=unrealized_conversion_cast

// Nothing above the LLVM dialect is left anywhere in the module (the
// implicit-check-not patterns above apply to the whole output).
// LLVM-ONLY: module {
// LLVM-ONLY: llvm.func internal @kiln_impl_scale(
// LLVM-ONLY: llvm.func @kiln_entry_scale(
// LLVM-ONLY: llvm.func internal @kiln_impl_helper(
// LLVM-ONLY: llvm.func internal @kiln_impl_uses_helper(
// LLVM-ONLY: llvm.func @kiln_entry_uses_helper(
// LLVM-ONLY: llvm.func internal @kiln_impl_loop(
// LLVM-ONLY: llvm.func @kiln_entry_loop(

// x * broadcast(s): a rank-1 input, a rank-0 input and a rank-1 output.
// The lowered function takes the three descriptors expanded:
// (allocated, aligned, offset, size, stride), (allocated, aligned, offset),
// and the output descriptor last.
// CHECK-LABEL: llvm.func internal @kiln_impl_scale(
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64,
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: i64,
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64)
// CHECK-NOT: llvm.func
// CHECK: llvm.fmul %{{.+}}, %{{.+}} : f32
// CHECK: llvm.return

// CHECK-LABEL: llvm.func @kiln_entry_scale(
// CHECK-SAME: %[[ARGS:.+]]: !llvm.ptr) {
// CHECK-DAG: %[[ONE:.+]] = llvm.mlir.constant(1 : index) : i64
// CHECK-DAG: %[[FOUR:.+]] = llvm.mlir.constant(4 : index) : i64
// CHECK-DAG: %[[ZERO:.+]] = llvm.mlir.constant(0 : index) : i64
// Input 0 is at args[0]: its pointer is both the allocated and the aligned
// pointer, with offset 0, size 4 and stride 1.
// CHECK: %[[X:.+]] = llvm.load %[[ARGS]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[X0:.+]] = llvm.insertvalue %[[X]], %{{.+}}[0]
// CHECK-NEXT: %[[X1:.+]] = llvm.insertvalue %[[X]], %[[X0]][1]
// CHECK-NEXT: %[[X2:.+]] = llvm.insertvalue %[[ZERO]], %[[X1]][2]
// CHECK-NEXT: %[[X3:.+]] = llvm.insertvalue %[[FOUR]], %[[X2]][3, 0]
// CHECK-NEXT: %[[X4:.+]] = llvm.insertvalue %[[ONE]], %[[X3]][4, 0]
// Input 1 (rank 0) at args[1].
// CHECK: %[[SLOT1:.+]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[S:.+]] = llvm.load %[[SLOT1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S0:.+]] = llvm.insertvalue %[[S]], %{{.+}}[0] : !llvm.struct<(ptr, ptr, i64)>
// Output 0 at args[2].
// CHECK: %[[SLOT2:.+]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[OUT:.+]] = llvm.load %[[SLOT2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NOT: llvm.getelementptr %[[ARGS]][3]
// CHECK: %[[XA:.+]] = llvm.extractvalue %[[X4]][0]
// CHECK: llvm.call @kiln_impl_scale(%[[XA]], {{.+}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-NEXT: llvm.return
func.func @scale(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %b = kiln.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %0 = kiln.mul %x, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A private callee is lowered but gets no entry point; its caller's
// temporary buffer is allocated and freed. Its f32 exp is a polynomial
// (kiln-cpu-math-approximation), no call.
// CHECK-LABEL: llvm.func internal @kiln_impl_helper(
// CHECK-SAME: sym_visibility = "private"
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.intr.fma(%{{.+}}) : (f32, f32, f32) -> f32
// CHECK-NOT: llvm.intr.exp
// CHECK-LABEL: llvm.func internal @kiln_impl_uses_helper(
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @kiln_impl_helper(
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK-LABEL: llvm.func @kiln_entry_uses_helper(%{{.+}}: !llvm.ptr)
// CHECK: llvm.call @kiln_impl_uses_helper(
// CHECK-NOT: @kiln_entry_helper
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @uses_helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.add %0, %x : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// Control flow becomes branches; f64 tanh becomes a libm call. Two results
// give two out-params: args[2] and args[3].
// CHECK-LABEL: llvm.func internal @kiln_impl_loop(
// CHECK: llvm.cond_br
// CHECK: llvm.call @tanh(%{{.+}}) : (f64) -> f64
// CHECK-LABEL: llvm.func @kiln_entry_loop(
// CHECK-SAME: %[[LARGS:.+]]: !llvm.ptr)
// CHECK: llvm.getelementptr %[[LARGS]][1]
// CHECK: llvm.getelementptr %[[LARGS]][2]
// CHECK: llvm.getelementptr %[[LARGS]][3]
// CHECK-NOT: llvm.getelementptr %[[LARGS]][4]
// CHECK: llvm.call @kiln_impl_loop(
// CHECK-NOT: @kiln_entry_dealloc_helper
func.func @loop(%n: tensor<i32>, %x: tensor<3xf64>) -> (tensor<i32>, tensor<3xf64>) {
  %r:2 = kiln.while (%n, %x) : (tensor<i32>, tensor<3xf64>) cond {
  ^bb0(%c: tensor<i32>, %v: tensor<3xf64>):
    %z = kiln.constant dense<0> : tensor<i32>
    %p = kiln.compare gt, %c, %z : tensor<i32>
    kiln.yield %p : tensor<i1>
  } do {
  ^bb0(%c: tensor<i32>, %v: tensor<3xf64>):
    %one = kiln.constant dense<1> : tensor<i32>
    %c1 = kiln.sub %c, %one : tensor<i32>
    %v1 = kiln.tanh %v : tensor<3xf64>
    kiln.yield %c1, %v1 : tensor<i32>, tensor<3xf64>
  }
  return %r#0, %r#1 : tensor<i32>, tensor<3xf64>
}
