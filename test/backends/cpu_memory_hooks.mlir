// kiln-cpu-memory-hooks defines the generic allocation functions that
// finalize-memref-to-llvm{use-generic-functions} calls: each calls the
// runtime's function in its exported slot (kiln/MemoryAbi.h), or malloc and
// free while the slot is empty. Both slots are exported in every module.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-memory-hooks --verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @free(!llvm.ptr)
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_free(
// CHECK-SAME:      %[[P:.*]]: !llvm.ptr)
// CHECK:         %[[SLOT:.*]] = llvm.mlir.addressof @kiln_memory_fn_free
// CHECK:         %[[FN:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[SET:.*]] = llvm.icmp "ne" %[[FN]], %{{.*}}
// CHECK:         llvm.cond_br %[[SET]], ^[[HOOK:.*]], ^[[LIBC:.*]]
// CHECK:       ^[[HOOK]]:
// CHECK:         llvm.call %[[FN]](%[[P]]) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK:       ^[[LIBC]]:
// CHECK:         llvm.call @free(%[[P]])
// CHECK-LABEL: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_alloc(
// CHECK-SAME:      %[[N:.*]]: i64) -> !llvm.ptr
// CHECK:         llvm.mlir.addressof @kiln_memory_fn_alloc
// CHECK:         llvm.cond_br
// CHECK:         %[[B:.*]] = llvm.call %{{.*}}(%[[N]]) : !llvm.ptr, (i64) -> !llvm.ptr
// CHECK:         llvm.return %[[B]]
// CHECK:         %[[M:.*]] = llvm.call @malloc(%[[N]])
// CHECK:         llvm.return %[[M]]
// CHECK-LABEL: llvm.func @f(
// CHECK:         llvm.call @_mlir_memref_to_llvm_alloc
// CHECK:         llvm.call @_mlir_memref_to_llvm_free
// CHECK:       llvm.mlir.global external @kiln_memory_fn_alloc() {{.*}} : !llvm.ptr
// CHECK:         llvm.mlir.zero
// CHECK:       llvm.mlir.global external @kiln_memory_fn_free() {{.*}} : !llvm.ptr
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @f(%n: i64) {
  %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
  llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// A module that allocates nothing exports the slots too.
// CHECK-LABEL: llvm.func @g(
// CHECK-NOT:   _mlir_memref_to_llvm
// CHECK:       llvm.mlir.global external @kiln_memory_fn_alloc()
// CHECK:       llvm.mlir.global external @kiln_memory_fn_free()
llvm.func @g() {
  llvm.return
}

// -----

// expected-error @below {{the module has its memory slots already}}
module {
  llvm.mlir.global external @kiln_memory_fn_alloc() : !llvm.ptr
}
