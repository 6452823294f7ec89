// kiln.fused and kiln.fused_kernel: the printed form round-trips, and one
// case per verifier error
// (KilnFusionOps.cpp).
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --allow-unregistered-dialect | FileCheck %s

// CHECK-LABEL: func.func @elementwise(
// CHECK:         %[[R:.+]]:2 = kiln.fused elementwise (%{{.+}}, %{{.+}}) : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>):
// CHECK-NEXT:      %[[S:.+]] = kiln.add %[[X]], %[[B]] : tensor<8xf32>
// CHECK-NEXT:      %[[T:.+]] = kiln.relu %[[S]] : tensor<8xf32>
// CHECK-NEXT:      kiln.yield %[[S]], %[[T]] : tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
func.func @elementwise(%x: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r:2 = kiln.fused elementwise (%x, %b) : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%x0: tensor<8xf32>, %b0: tensor<8xf32>):
    %s = kiln.add %x0, %b0 : tensor<8xf32>
    %t = kiln.relu %s : tensor<8xf32>
    kiln.yield %s, %t : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A region without inputs (an iota chain), and the other two kinds.
// CHECK-LABEL: func.func @kinds(
// CHECK:         kiln.fused elementwise () : () -> tensor<4xf32>
// CHECK:         kiln.fused reduction (%{{.+}}) : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK:         kiln.fused matmul_epilogue (%{{.+}}, %{{.+}}) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
func.func @kinds(%x: tensor<4x8xf32>, %a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %i = kiln.fused elementwise () : () -> tensor<4xf32> {
    %0 = kiln.iota dim = 0 : tensor<4xf32>
    %1 = kiln.exp %0 : tensor<4xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  %s = kiln.fused reduction (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4x8xf32>):
    %0 = kiln.exp %x0 : tensor<4x8xf32>
    %1 = kiln.reduce_sum %0, dims = [1] : tensor<4x8xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  %m = kiln.fused matmul_epilogue (%a, %b) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a0: tensor<2x3xf32>, %b0: tensor<3x2xf32>):
    %0 = kiln.matmul %a0, %b0 : tensor<2x3xf32>, tensor<3x2xf32>
    %1 = kiln.relu %0 : tensor<2x2xf32>
    kiln.yield %1 : tensor<2x2xf32>
  }
  return %i, %s, %m : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
}

// -----

func.func @no_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.fused' op must produce at least one result}}
  kiln.fused elementwise (%x) : (tensor<4xf32>) -> () {
  ^bb0(%x0: tensor<4xf32>):
    kiln.yield
  }
  return
}

// -----

func.func @argument_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fused' op body takes 0 arguments but the op has 1 inputs}}
  %r = kiln.fused elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    %0 = kiln.iota dim = 0 : tensor<4xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @argument_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fused' op body argument #0 has type 'tensor<4xf64>' but input #0 has type 'tensor<4xf32>'}}
  %r = kiln.fused elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf64>):
    %0 = kiln.cast %x0 : tensor<4xf64> to tensor<4xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.fused elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    %0 = kiln.neg %x0 : tensor<4xf32>
    // expected-error @+1 {{'kiln.yield' op yields 2 values but the kiln.fused has 1 results}}
    kiln.yield %0, %0 : tensor<4xf32>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.fused elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    %0 = kiln.compare lt, %x0, %x0 : tensor<4xf32>
    // expected-error @+1 {{'kiln.yield' op value #0 has type 'tensor<4xi1>' but result #0 has type 'tensor<4xf32>'}}
    kiln.yield %0 : tensor<4xi1>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @not_terminated_by_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fused' op body must end with kiln.yield}}
  %r = kiln.fused elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    "test.end"(%x0) : (tensor<4xf32>) -> ()
  }
  return %r : tensor<4xf32>
}

// -----

// The region is isolated from above: outer values come in as inputs.
func.func @captures(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %r = kiln.fused elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    // expected-error @+1 {{'kiln.add' op using value defined outside the region}}
    %0 = kiln.add %x0, %y : tensor<4xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @non_kiln_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.fused elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    // expected-error @+1 {{'arith.addf' op is not a kiln op; a kiln.fused body holds kiln ops only}}
    %0 = arith.addf %x0, %x0 : tensor<4xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @nested_region(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %r = kiln.fused elementwise (%x, %p) : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>, %p0: tensor<i1>):
    // expected-error @+1 {{'kiln.cond' op has regions; a kiln.fused body holds ops without regions}}
    %0 = kiln.cond %p0, (%x0) : tensor<i1>, (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      kiln.yield %a : tensor<4xf32>
    } else {
    ^bb0(%a: tensor<4xf32>):
      kiln.yield %a : tensor<4xf32>
    }
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @elementwise_with_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fused' op of kind elementwise contains a reduction}}
  %r = kiln.fused elementwise (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4x8xf32>):
    %0 = kiln.reduce_max %x0, dims = [1] : tensor<4x8xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @elementwise_with_matmul(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'kiln.fused' op of kind elementwise contains a matmul}}
  %r = kiln.fused elementwise (%a) : (tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a0: tensor<2x2xf32>):
    %0 = kiln.matmul %a0, %a0 : tensor<2x2xf32>, tensor<2x2xf32>
    kiln.yield %0 : tensor<2x2xf32>
  }
  return %r : tensor<2x2xf32>
}

// -----

func.func @reduction_without_reduction(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fused' op of kind reduction contains no reduction}}
  %r = kiln.fused reduction (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    %0 = kiln.exp %x0 : tensor<4xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @reduction_with_matmul(%a: tensor<2x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.fused' op of kind reduction contains a matmul}}
  %r = kiln.fused reduction (%a) : (tensor<2x2xf32>) -> tensor<2xf32> {
  ^bb0(%a0: tensor<2x2xf32>):
    %0 = kiln.matmul %a0, %a0 : tensor<2x2xf32>, tensor<2x2xf32>
    %1 = kiln.reduce_sum %0, dims = [1] : tensor<2x2xf32>
    kiln.yield %1 : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

// -----

func.func @epilogue_without_matmul(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fused' op of kind matmul_epilogue contains 0 matmuls but needs exactly one}}
  %r = kiln.fused matmul_epilogue (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    %0 = kiln.exp %x0 : tensor<4xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @epilogue_two_matmuls(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'kiln.fused' op of kind matmul_epilogue contains 2 matmuls but needs exactly one}}
  %r = kiln.fused matmul_epilogue (%a) : (tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a0: tensor<2x2xf32>):
    %0 = kiln.matmul %a0, %a0 : tensor<2x2xf32>, tensor<2x2xf32>
    %1 = kiln.matmul %0, %a0 : tensor<2x2xf32>, tensor<2x2xf32>
    kiln.yield %1 : tensor<2x2xf32>
  }
  return %r : tensor<2x2xf32>
}

// -----

func.func @epilogue_with_reduction(%a: tensor<2x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.fused' op of kind matmul_epilogue contains a reduction}}
  %r = kiln.fused matmul_epilogue (%a) : (tensor<2x2xf32>) -> tensor<2xf32> {
  ^bb0(%a0: tensor<2x2xf32>):
    %0 = kiln.matmul %a0, %a0 : tensor<2x2xf32>, tensor<2x2xf32>
    %1 = kiln.reduce_sum %0, dims = [1] : tensor<2x2xf32>
    kiln.yield %1 : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

// -----

func.func @unknown_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [elementwise, reduction, matmul_epilogue]}}
  %r = kiln.fused convolution (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    kiln.yield %x0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// kiln.fused_kernel, the lowered group: its body may hold any ops; the
// verifier checks its signature as for kiln.fused.
// CHECK-LABEL: func.func @kernel(
// CHECK:         %[[R:.+]] = kiln.fused_kernel reduction (%{{.+}}) : (tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[X:.+]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[S:.+]] = "test.sum"(%[[X]])
// CHECK-NEXT:      kiln.yield %[[S]] : tensor<4xf32>
// CHECK-NEXT:    }
func.func @kernel(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = kiln.fused_kernel reduction (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4x8xf32>):
    %s = "test.sum"(%x0) : (tensor<4x8xf32>) -> tensor<4xf32>
    kiln.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @kernel_yield_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.fused_kernel elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x0: tensor<4xf32>):
    %s = "test.op"(%x0) : (tensor<4xf32>) -> tensor<4xi32>
    // expected-error @+1 {{'kiln.yield' op value #0 has type 'tensor<4xi32>' but result #0 has type 'tensor<4xf32>'}}
    kiln.yield %s : tensor<4xi32>
  }
  return %r : tensor<4xf32>
}
