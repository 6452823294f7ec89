// Dense layers' backward passes: the weight gradient, a product that reads
// dY with the batch as k, and the bias gradient, dY summed over the batch.
// On CUDA the sum becomes the product's cuBLASLt bias-gradient epilogue
// (kiln-cuda-library-matmul); on the CPU it stays a reduction loop.
// Checked against the evaluator on both, with a sum used before the
// product (a bias's SGD update) and sums the products leave alone: one
// over the other dim, and a batch of products' sums.
//
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --emit=llvm -o - | FileCheck %s

// dW = X^T dY with weights stored [in, out] (flags 1 | 64, B's sum) and
// dW = dY^T X stored [out, in] as PyTorch and ONNX store them (flags
// 1 | 32, A's sum), the gradient's address last after a null bias; then
// those whose sum is used before the product (the product moves up to
// the sum): squared, and a step of SGD on the bias; then the products whose
// sums stay kernels, in the functions' order: one over the other dim, a
// batch of products.
// CHECK: call void @kiln_cuda_matmul(i64 65, {{.*}}, ptr null, ptr %{{[0-9]+}})
// CHECK: call void @kiln_cuda_matmul(i64 33, {{.*}}, ptr null, ptr %{{[0-9]+}})
// CHECK: call void @kiln_cuda_matmul(i64 33, {{.*}}, ptr null, ptr %{{[0-9]+}})
// CHECK: call void @kiln_cuda_matmul(i64 65, {{.*}}, ptr null, ptr %{{[0-9]+}})
// CHECK: call void @kiln_cuda_matmul(i64 1, i64 0, i64 0, i64 1, {{.*}}, ptr null, ptr null)
// CHECK: call void @kiln_cuda_matmul(i64 1, i64 0, i64 0, i64 3, {{.*}}, ptr null, ptr null)
// CHECK-NOT: call void @kiln_cuda_matmul(

func.func @dense_backward(%x: tensor<33x40xf32>, %dy: tensor<33x24xf32>) -> (tensor<40x24xf32>, tensor<24xf32>) {
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<33x40xf32>
  %dw = kiln.matmul %xt, %dy : tensor<40x33xf32>, tensor<33x24xf32>
  %db = kiln.reduce_sum %dy, dims = [0] : tensor<33x24xf32>
  return %dw, %db : tensor<40x24xf32>, tensor<24xf32>
}

func.func @dense_backward_out_in(%x: tensor<65x40xf32>, %dy: tensor<65x24xf32>) -> (tensor<24x40xf32>, tensor<24xf32>) {
  %db = kiln.reduce_sum %dy, dims = [0] : tensor<65x24xf32>
  %dyt = kiln.transpose %dy, permutation = [1, 0] : tensor<65x24xf32>
  %dw = kiln.matmul %dyt, %x : tensor<24x65xf32>, tensor<65x40xf32>
  return %dw, %db : tensor<24x40xf32>, tensor<24xf32>
}

func.func @used_before_the_product(%x: tensor<65x40xf32>, %dy: tensor<65x24xf32>) -> (tensor<24x40xf32>, tensor<24xf32>) {
  %db = kiln.reduce_sum %dy, dims = [0] : tensor<65x24xf32>
  %db2 = kiln.mul %db, %db : tensor<24xf32>
  %dyt = kiln.transpose %dy, permutation = [1, 0] : tensor<65x24xf32>
  %dw = kiln.matmul %dyt, %x : tensor<24x65xf32>, tensor<65x40xf32>
  return %dw, %db2 : tensor<24x40xf32>, tensor<24xf32>
}

func.func @sgd_step(%x: tensor<33x40xf32>, %dy: tensor<33x24xf32>, %w: tensor<40x24xf32>, %b: tensor<24xf32>) -> (tensor<40x24xf32>, tensor<24xf32>) {
  %lr = kiln.constant dense<0.125> : tensor<24xf32>
  %lrw = kiln.constant dense<0.125> : tensor<40x24xf32>
  %db = kiln.reduce_sum %dy, dims = [0] : tensor<33x24xf32>
  %sb = kiln.mul %db, %lr : tensor<24xf32>
  %b2 = kiln.sub %b, %sb : tensor<24xf32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<33x40xf32>
  %dw = kiln.matmul %xt, %dy : tensor<40x33xf32>, tensor<33x24xf32>
  %sw = kiln.mul %dw, %lrw : tensor<40x24xf32>
  %w2 = kiln.sub %w, %sw : tensor<40x24xf32>
  return %w2, %b2 : tensor<40x24xf32>, tensor<24xf32>
}

func.func @row_sums(%x: tensor<33x40xf32>, %dy: tensor<33x24xf32>) -> (tensor<40x24xf32>, tensor<33xf32>) {
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<33x40xf32>
  %dw = kiln.matmul %xt, %dy : tensor<40x33xf32>, tensor<33x24xf32>
  %s = kiln.reduce_sum %dy, dims = [1] : tensor<33x24xf32>
  return %dw, %s : tensor<40x24xf32>, tensor<33xf32>
}

func.func @batched(%x: tensor<3x17x8xf32>, %dy: tensor<3x17x6xf32>) -> (tensor<3x8x6xf32>, tensor<3x6xf32>) {
  %xt = kiln.transpose %x, permutation = [0, 2, 1] : tensor<3x17x8xf32>
  %dw = kiln.matmul %xt, %dy : tensor<3x8x17xf32>, tensor<3x17x6xf32>
  %db = kiln.reduce_sum %dy, dims = [1] : tensor<3x17x6xf32>
  return %dw, %db : tensor<3x8x6xf32>, tensor<3x6xf32>
}
