// kiln-tied-results: after buffer-results-to-out-params, an out-param
// marked kiln.tied_argument stands for the donated argument's own buffer
// (the runtime passes it for both), which holds the result already: it must
// be unused, and the mark goes.
// RUN: kiln-opt %s --split-input-file --kiln-tied-results --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @tied(
// CHECK-SAME:      %[[X:[^:]+]]: memref<4xf32>, %[[OUT:[^:]+]]: memref<4xf32>, %{{[^:]+}}: memref<4xf32>)
// CHECK-NOT:     kiln.tied_argument
// CHECK:         linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT:    return
func.func @tied(%x: memref<4xf32>, %out: memref<4xf32>,
                %t: memref<4xf32> {kiln.tied_argument = 0 : i64}) {
  linalg.copy ins(%x : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

// A use of such an out-param would write a buffer the runtime does not
// give the function: refused.
func.func @written(%x: memref<4xf32>, %y: memref<4xf32>,
                   %t: memref<4xf32> {kiln.tied_argument = 0 : i64}) {
  // expected-error @+1 {{uses out-param #2, which is the buffer of donated argument #0 and holds the result already}}
  linalg.copy ins(%y : memref<4xf32>) outs(%t : memref<4xf32>)
  return
}
