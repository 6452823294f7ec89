// kiln-autocast: f32 matrix products and convolutions get half-precision
// operands and f32 accumulation; everything else keeps its types.
//
// RUN: kiln-opt %s --split-input-file --kiln-autocast | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-autocast="dtype=f16" | FileCheck %s --check-prefix=F16
// RUN: kiln-opt %s --split-input-file --kiln-autocast="function=other" | FileCheck %s --check-prefix=OTHER

// The operands are cast once, right after their definitions, and shared by
// the products that read them; the epilogue stays f32.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.+]]: tensor<8x16xf32>, %[[W1:.+]]: tensor<16x32xf32>, %[[W2:.+]]: tensor<32x4xf32>)
// CHECK-DAG: %[[XH:.+]] = kiln.cast %[[X]] : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK-DAG: %[[W1H:.+]] = kiln.cast %[[W1]] : tensor<16x32xf32> to tensor<16x32xbf16>
// CHECK-DAG: %[[W2H:.+]] = kiln.cast %[[W2]] : tensor<32x4xf32> to tensor<32x4xbf16>
// CHECK: %[[M1:.+]] = kiln.matmul %[[XH]], %[[W1H]] : tensor<8x16xbf16>, tensor<16x32xbf16> -> f32
// CHECK: %[[H:.+]] = kiln.tanh %[[M1]] : tensor<8x32xf32>
// CHECK: %[[HH:.+]] = kiln.cast %[[H]] : tensor<8x32xf32> to tensor<8x32xbf16>
// CHECK: %[[M2:.+]] = kiln.matmul %[[HH]], %[[W2H]] : tensor<8x32xbf16>, tensor<32x4xbf16> -> f32
// CHECK: %[[M3:.+]] = kiln.matmul %[[HH]], %[[W2H]] : tensor<8x32xbf16>, tensor<32x4xbf16> -> f32
// CHECK: %[[S:.+]] = kiln.add %[[M2]], %[[M3]] : tensor<8x4xf32>
// CHECK: kiln.reduce_sum %[[S]]
// F16: kiln.matmul %{{.+}}, %{{.+}} : tensor<8x16xf16>, tensor<16x32xf16> -> f32
// OTHER-LABEL: func.func @mlp
// OTHER-NOT: kiln.cast
// OTHER: kiln.matmul %{{.+}}, %{{.+}} : tensor<8x16xf32>, tensor<16x32xf32>{{$}}
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x4xf32>) -> tensor<f32> {
  %m1 = kiln.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>
  %h = kiln.tanh %m1 : tensor<8x32xf32>
  %m2 = kiln.matmul %h, %w2 : tensor<8x32xf32>, tensor<32x4xf32>
  %m3 = kiln.matmul %h, %w2 : tensor<8x32xf32>, tensor<32x4xf32>
  %s = kiln.add %m2, %m3 : tensor<8x4xf32>
  %l = kiln.reduce_sum %s, dims = [0, 1] : tensor<8x4xf32>
  return %l : tensor<f32>
}

// -----

// A widening cast from bf16 is undone rather than rounded again; products
// that are not f32 (f64, integers, already half precision) are left alone.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: (%[[A:.+]]: tensor<4x4xbf16>, %[[B:.+]]: tensor<4x4xf64>, %[[C:.+]]: tensor<4x4xi32>)
// CHECK: %[[AW:.+]] = kiln.cast %[[A]] : tensor<4x4xbf16> to tensor<4x4xf32>
// CHECK-NOT: kiln.cast
// CHECK: kiln.matmul %[[A]], %[[A]] : tensor<4x4xbf16>, tensor<4x4xbf16> -> f32
// CHECK: kiln.matmul %[[B]], %[[B]] : tensor<4x4xf64>, tensor<4x4xf64>{{$}}
// CHECK: kiln.matmul %[[C]], %[[C]] : tensor<4x4xi32>, tensor<4x4xi32>{{$}}
// CHECK: kiln.matmul %[[A]], %[[A]] : tensor<4x4xbf16>, tensor<4x4xbf16>{{$}}
func.func @kept(%a: tensor<4x4xbf16>, %b: tensor<4x4xf64>, %c: tensor<4x4xi32>) -> (tensor<4x4xf32>, tensor<4x4xf64>, tensor<4x4xi32>, tensor<4x4xbf16>) {
  %aw = kiln.cast %a : tensor<4x4xbf16> to tensor<4x4xf32>
  %0 = kiln.matmul %aw, %aw : tensor<4x4xf32>, tensor<4x4xf32>
  %1 = kiln.matmul %b, %b : tensor<4x4xf64>, tensor<4x4xf64>
  %2 = kiln.matmul %c, %c : tensor<4x4xi32>, tensor<4x4xi32>
  %3 = kiln.matmul %a, %a : tensor<4x4xbf16>, tensor<4x4xbf16>
  return %0, %1, %2, %3 : tensor<4x4xf32>, tensor<4x4xf64>, tensor<4x4xi32>, tensor<4x4xbf16>
}

// -----

// Loop bodies are isolated from above: a carried value is cast at the
// start of the body.
// CHECK-LABEL: func.func @loop
// CHECK: kiln.for 3 iterations
// CHECK-NEXT: ^bb0(%{{.+}}: tensor<i64>, %[[H:.+]]: tensor<8x8xf32>, %[[W:.+]]: tensor<8x8xf32>):
// CHECK-DAG: %[[HH:.+]] = kiln.cast %[[H]] : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK-DAG: %[[WH:.+]] = kiln.cast %[[W]] : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK: kiln.matmul %[[HH]], %[[WH]] : tensor<8x8xbf16>, tensor<8x8xbf16> -> f32
func.func @loop(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r:2 = kiln.for 3 iterations (%x, %w) : (tensor<8x8xf32>, tensor<8x8xf32>) {
  ^bb0(%i: tensor<i64>, %h: tensor<8x8xf32>, %v: tensor<8x8xf32>):
    %m = kiln.matmul %h, %v : tensor<8x8xf32>, tensor<8x8xf32>
    %t = kiln.tanh %m : tensor<8x8xf32>
    kiln.yield %t, %v : tensor<8x8xf32>, tensor<8x8xf32>
  }
  return %r#0 : tensor<8x8xf32>
}

// -----

// A transposed operand is the transpose of the source's cast, which the
// forward product already made.
// CHECK-LABEL: func.func @transposed
// CHECK-SAME: (%[[X:.+]]: tensor<8x16xf32>, %[[W:.+]]: tensor<16x32xf32>, %[[G:.+]]: tensor<8x32xf32>)
// CHECK-DAG: %[[WH:.+]] = kiln.cast %[[W]] : tensor<16x32xf32> to tensor<16x32xbf16>
// CHECK-DAG: %[[GH:.+]] = kiln.cast %[[G]] : tensor<8x32xf32> to tensor<8x32xbf16>
// CHECK-DAG: %[[XH:.+]] = kiln.cast %[[X]] : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK: %[[WT:.+]] = kiln.transpose %[[W]], permutation = [1, 0]
// CHECK: %[[WTH:.+]] = kiln.transpose %[[WH]], permutation = [1, 0] : tensor<16x32xbf16>
// CHECK-NOT: kiln.cast
// CHECK: kiln.matmul %[[XH]], %[[WH]] : tensor<8x16xbf16>, tensor<16x32xbf16> -> f32
// CHECK: kiln.matmul %[[GH]], %[[WTH]] : tensor<8x32xbf16>, tensor<32x16xbf16> -> f32
func.func @transposed(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %g: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x16xf32>) {
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<16x32xf32>
  %y = kiln.matmul %x, %w : tensor<8x16xf32>, tensor<16x32xf32>
  %dx = kiln.matmul %g, %wt : tensor<8x32xf32>, tensor<32x16xf32>
  return %y, %dx : tensor<8x32xf32>, tensor<8x16xf32>
}

// -----

// An f32 convolution runs on half-precision operands and is widened back
// to f32 right after it, so the bias and the ReLU stay f32; a convolution
// reading another's widened result takes its half-precision value. f64
// convolutions are left alone.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[V:.+]]: tensor<4x4x1x1xf32>, %[[B:.+]]: tensor<4xf32>, %[[D:.+]]: tensor<1x1x4x4xf64>)
// CHECK-DAG: %[[XH:.+]] = kiln.cast %[[X]] : tensor<1x3x8x8xf32> to tensor<1x3x8x8xbf16>
// CHECK-DAG: %[[WH:.+]] = kiln.cast %[[W]] : tensor<4x3x3x3xf32> to tensor<4x3x3x3xbf16>
// CHECK-DAG: %[[VH:.+]] = kiln.cast %[[V]] : tensor<4x4x1x1xf32> to tensor<4x4x1x1xbf16>
// CHECK: %[[CH:.+]] = kiln.conv %[[XH]], %[[WH]], strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16>
// CHECK: %[[C:.+]] = kiln.cast %[[CH]] : tensor<1x4x8x8xbf16> to tensor<1x4x8x8xf32>
// CHECK: %[[EH:.+]] = kiln.conv %[[CH]], %[[VH]], {{.*}} : tensor<1x4x8x8xbf16>, tensor<4x4x1x1xbf16>
// CHECK: %[[E:.+]] = kiln.cast %[[EH]] : tensor<1x4x8x8xbf16> to tensor<1x4x8x8xf32>
// CHECK: kiln.add %[[C]], %{{.+}} : tensor<1x4x8x8xf32>
// CHECK: kiln.relu %{{.+}} : tensor<1x4x8x8xf32>
// CHECK: kiln.conv %[[D]], %[[D]], {{.*}} : tensor<1x1x4x4xf64>, tensor<1x1x4x4xf64>
// F16-LABEL: func.func @conv
// F16: kiln.conv %{{.+}}, %{{.+}}, {{.*}} : tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>
// OTHER-LABEL: func.func @conv
// OTHER-NOT: kiln.cast
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %v: tensor<4x4x1x1xf32>, %b: tensor<4xf32>, %d: tensor<1x1x4x4xf64>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x1x1x1xf64>) {
  %c = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  %e = kiln.conv %c, %v, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %s = kiln.add %c, %bb : tensor<1x4x8x8xf32>
  %r = kiln.relu %s : tensor<1x4x8x8xf32>
  %f = kiln.conv %d, %d, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x1x4x4xf64>, tensor<1x1x4x4xf64>
  return %r, %e, %f : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x1x1x1xf64>
}
