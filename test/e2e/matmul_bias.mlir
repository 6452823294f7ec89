// Dense layers, a product followed by a bias added along its columns: on
// CUDA the addition becomes the product's cuBLASLt bias epilogue
// (kiln-cuda-library-matmul); on the CPU it stays an elementwise loop.
// Checked against the evaluator on both, with the forms that must not
// become an epilogue: a ReLU after the bias, a bias along the rows, and a
// product whose plain result is used besides.
//
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --emit=llvm -o - | FileCheck %s

// The dense layer and the one with a transposed weight (flag 2) pass their
// bias to the product (flag 16, the bias pointer second to last, before a
// null bias gradient); the others do not, in the functions' order.
// CHECK: call void @kiln_cuda_matmul(i64 16, {{.*}}, ptr %{{[0-9]+}}, ptr null)
// CHECK: call void @kiln_cuda_matmul(i64 18, {{.*}}, ptr %{{[0-9]+}}, ptr null)
// CHECK-COUNT-3: call void @kiln_cuda_matmul(i64 0, {{.*}}, ptr null, ptr null)
// CHECK-NOT: call void @kiln_cuda_matmul(

func.func @dense(%x: tensor<33x40xf32>, %w: tensor<40x24xf32>, %b: tensor<24xf32>) -> tensor<33x24xf32> {
  %y = kiln.matmul %x, %w : tensor<33x40xf32>, tensor<40x24xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<24xf32>) -> tensor<33x24xf32>
  %z = kiln.add %y, %bb : tensor<33x24xf32>
  return %z : tensor<33x24xf32>
}

func.func @dense_transposed(%x: tensor<16x40xf32>, %w: tensor<24x40xf32>, %b: tensor<24xf32>) -> tensor<16x24xf32> {
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<24x40xf32>
  %y = kiln.matmul %x, %wt : tensor<16x40xf32>, tensor<40x24xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<24xf32>) -> tensor<16x24xf32>
  %z = kiln.add %bb, %y : tensor<16x24xf32>
  return %z : tensor<16x24xf32>
}

func.func @dense_relu(%x: tensor<16x40xf32>, %w: tensor<40x24xf32>, %b: tensor<24xf32>) -> tensor<16x24xf32> {
  %y = kiln.matmul %x, %w : tensor<16x40xf32>, tensor<40x24xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<24xf32>) -> tensor<16x24xf32>
  %z = kiln.add %y, %bb : tensor<16x24xf32>
  %r = kiln.relu %z : tensor<16x24xf32>
  return %r : tensor<16x24xf32>
}

func.func @row_bias(%x: tensor<16x40xf32>, %w: tensor<40x16xf32>, %b: tensor<16xf32>) -> tensor<16x16xf32> {
  %y = kiln.matmul %x, %w : tensor<16x40xf32>, tensor<40x16xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
  %z = kiln.add %y, %bb : tensor<16x16xf32>
  return %z : tensor<16x16xf32>
}

func.func @both(%x: tensor<16x40xf32>, %w: tensor<40x24xf32>, %b: tensor<24xf32>) -> (tensor<16x24xf32>, tensor<16x24xf32>) {
  %y = kiln.matmul %x, %w : tensor<16x40xf32>, tensor<40x24xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<24xf32>) -> tensor<16x24xf32>
  %z = kiln.add %y, %bb : tensor<16x24xf32>
  return %y, %z : tensor<16x24xf32>, tensor<16x24xf32>
}
