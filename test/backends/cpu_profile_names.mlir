// kiln-cpu-profile-names: every kiln op but constants, fused regions and
// terminators gets a location naming it, wrapping the one it had; running
// it again changes nothing; every function is marked kiln.profiled.
// RUN: kiln-opt %s --kiln-cpu-profile-names --mlir-print-debuginfo | FileCheck %s
// RUN: kiln-opt %s --kiln-cpu-profile-names --kiln-cpu-profile-names --mlir-print-debuginfo | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK-SAME: attributes {kiln.profiled}
// CHECK: kiln.constant {{.*}} loc(#[[CONST:loc[0-9]*]])
// CHECK: kiln.add {{.*}} loc(#[[ADD:loc[0-9]*]])
// CHECK: kiln.for {{.*}}
// CHECK: kiln.tanh {{.*}} loc(#[[TANH:loc[0-9]*]])
// CHECK: kiln.yield {{.*}} loc(#[[YIELD:loc[0-9]*]])
// CHECK: } loc(#[[FOR:loc[0-9]*]])
// CHECK: return
// CHECK-DAG: #[[CONST]] = loc("{{.*}}cpu_profile_names.mlir":25:8)
// CHECK-DAG: #[[ADDLOC:loc[0-9]*]] = loc("{{.*}}cpu_profile_names.mlir":26:8)
// CHECK-DAG: #[[ADD]] = loc("add"(#[[ADDLOC]]))
// CHECK-DAG: #[[TANHLOC:loc[0-9]*]] = loc("{{.*}}cpu_profile_names.mlir":29:10)
// CHECK-DAG: #[[TANH]] = loc("tanh"(#[[TANHLOC]]))
// CHECK-DAG: #[[YIELD]] = loc("{{.*}}cpu_profile_names.mlir":30:5)
// CHECK-DAG: #[[FORLOC:loc[0-9]*]] = loc("{{.*}}cpu_profile_names.mlir":27:8)
// CHECK-DAG: #[[FOR]] = loc("for"(#[[FORLOC]]))
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = kiln.constant dense<1.0> : tensor<4xf32>
  %a = kiln.add %x, %c : tensor<4xf32>
  %r = kiln.for 3 iterations (%a) : (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %h: tensor<4xf32>):
    %t = kiln.tanh %h : tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
