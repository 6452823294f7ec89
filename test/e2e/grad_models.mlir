// Gradients derived by the kiln-grad pass, checked like every end-to-end
// program: native code against the reference evaluator on random inputs.
// The forward functions are followed by what
//
//   kiln-opt --kiln-grad="function=mlp_loss value-and-grad=true" \
//            --kiln-grad="function=gated" --kiln-grad="function=embedding"
//
// derives from them: an MLP's softmax cross-entropy loss and its gradient
// with respect to the inputs and all weights; a cond whose branches use
// sigmoid, strided slices and concat; an embedding lookup (gather) feeding
// a batched matmul and relu. Finite-difference checks of the same rules are
// in test/unit/autodiff.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: mlp_loss_value_and_grad(arg0: f32[8,4], arg1: f32[4,16], arg2: f32[16], arg3: f32[16,3], arg4: i32[8]) -> (out0: f32[], out1: f32[8,4], out2: f32[4,16], out3: f32[16], out4: f32[16,3])
// CHECK: gated_grad(arg0: i1[], arg1: f32[16], arg2: f32[16], arg3: f32[16]) -> (out0: f32[16], out1: f32[16], out2: f32[16])
// CHECK: embedding_grad(arg0: f32[10,4], arg1: i64[3,2], arg2: f32[2,4,5], arg3: f32[3,5]) -> (out0: f32[3,5], out1: f32[10,4], out2: f32[2,4,5])

func.func @mlp_loss(%arg0: tensor<8x4xf32>, %arg1: tensor<4x16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16x3xf32>, %arg4: tensor<8xi32>) -> tensor<f32> {
  %0 = kiln.matmul %arg0, %arg1 : tensor<8x4xf32>, tensor<4x16xf32>
  %1 = kiln.broadcast_in_dim %arg2, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %2 = kiln.add %0, %1 : tensor<8x16xf32>
  %3 = kiln.tanh %2 : tensor<8x16xf32>
  %4 = kiln.matmul %3, %arg3 : tensor<8x16xf32>, tensor<16x3xf32>
  %5 = kiln.reduce_max %4, dims = [1] : tensor<8x3xf32>
  %6 = kiln.broadcast_in_dim %5, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %7 = kiln.sub %4, %6 : tensor<8x3xf32>
  %8 = kiln.exp %7 : tensor<8x3xf32>
  %9 = kiln.reduce_sum %8, dims = [1] : tensor<8x3xf32>
  %10 = kiln.log %9 : tensor<8xf32>
  %11 = kiln.broadcast_in_dim %10, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %12 = kiln.sub %7, %11 : tensor<8x3xf32>
  %13 = kiln.iota dim = 1 : tensor<8x3xi32>
  %14 = kiln.broadcast_in_dim %arg4, dims = [0] : (tensor<8xi32>) -> tensor<8x3xi32>
  %15 = kiln.compare eq, %13, %14 : tensor<8x3xi32>
  %16 = kiln.cast %15 : tensor<8x3xi1> to tensor<8x3xf32>
  %17 = kiln.mul %16, %12 : tensor<8x3xf32>
  %18 = kiln.reduce_mean %17, dims = [0, 1] : tensor<8x3xf32>
  %19 = kiln.neg %18 : tensor<f32>
  return %19 : tensor<f32>
}

func.func @mlp_loss_value_and_grad(%arg0: tensor<8x4xf32>, %arg1: tensor<4x16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16x3xf32>, %arg4: tensor<8xi32>) -> (tensor<f32>, tensor<8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x3xf32>) {
  %0 = kiln.matmul %arg0, %arg1 : tensor<8x4xf32>, tensor<4x16xf32>
  %1 = kiln.broadcast_in_dim %arg2, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %2 = kiln.add %0, %1 : tensor<8x16xf32>
  %3 = kiln.tanh %2 : tensor<8x16xf32>
  %4 = kiln.matmul %3, %arg3 : tensor<8x16xf32>, tensor<16x3xf32>
  %5 = kiln.reduce_max %4, dims = [1] : tensor<8x3xf32>
  %6 = kiln.broadcast_in_dim %5, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %7 = kiln.sub %4, %6 : tensor<8x3xf32>
  %8 = kiln.exp %7 : tensor<8x3xf32>
  %9 = kiln.reduce_sum %8, dims = [1] : tensor<8x3xf32>
  %10 = kiln.log %9 : tensor<8xf32>
  %11 = kiln.broadcast_in_dim %10, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %12 = kiln.sub %7, %11 : tensor<8x3xf32>
  %13 = kiln.iota dim = 1 : tensor<8x3xi32>
  %14 = kiln.broadcast_in_dim %arg4, dims = [0] : (tensor<8xi32>) -> tensor<8x3xi32>
  %15 = kiln.compare eq, %13, %14 : tensor<8x3xi32>
  %16 = kiln.cast %15 : tensor<8x3xi1> to tensor<8x3xf32>
  %17 = kiln.mul %16, %12 : tensor<8x3xf32>
  %18 = kiln.reduce_mean %17, dims = [0, 1] : tensor<8x3xf32>
  %19 = kiln.neg %18 : tensor<f32>
  %20 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %21 = kiln.neg %20 : tensor<f32>
  %22 = kiln.constant dense<2.400000e+01> : tensor<f32>
  %23 = kiln.div %21, %22 : tensor<f32>
  %24 = kiln.broadcast_in_dim %23, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
  %25 = kiln.mul %24, %16 : tensor<8x3xf32>
  %26 = kiln.neg %25 : tensor<8x3xf32>
  %27 = kiln.reduce_sum %26, dims = [1] : tensor<8x3xf32>
  %28 = kiln.div %27, %9 : tensor<8xf32>
  %29 = kiln.broadcast_in_dim %28, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %30 = kiln.mul %29, %8 : tensor<8x3xf32>
  %31 = kiln.add %25, %30 : tensor<8x3xf32>
  %32 = kiln.neg %31 : tensor<8x3xf32>
  %33 = kiln.reduce_sum %32, dims = [1] : tensor<8x3xf32>
  %34 = kiln.broadcast_in_dim %5, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %35 = kiln.compare eq, %4, %34 : tensor<8x3xf32>
  %36 = kiln.cast %35 : tensor<8x3xi1> to tensor<8x3xf32>
  %37 = kiln.reduce_sum %36, dims = [1] : tensor<8x3xf32>
  %38 = kiln.div %33, %37 : tensor<8xf32>
  %39 = kiln.broadcast_in_dim %38, dims = [0] : (tensor<8xf32>) -> tensor<8x3xf32>
  %40 = kiln.mul %36, %39 : tensor<8x3xf32>
  %41 = kiln.add %31, %40 : tensor<8x3xf32>
  %42 = kiln.transpose %arg3, permutation = [1, 0] : tensor<16x3xf32>
  %43 = kiln.matmul %41, %42 : tensor<8x3xf32>, tensor<3x16xf32>
  %44 = kiln.transpose %3, permutation = [1, 0] : tensor<8x16xf32>
  %45 = kiln.matmul %44, %41 : tensor<16x8xf32>, tensor<8x3xf32>
  %46 = kiln.mul %3, %3 : tensor<8x16xf32>
  %47 = kiln.constant dense<1.000000e+00> : tensor<8x16xf32>
  %48 = kiln.sub %47, %46 : tensor<8x16xf32>
  %49 = kiln.mul %43, %48 : tensor<8x16xf32>
  %50 = kiln.reduce_sum %49, dims = [0] : tensor<8x16xf32>
  %51 = kiln.transpose %arg1, permutation = [1, 0] : tensor<4x16xf32>
  %52 = kiln.matmul %49, %51 : tensor<8x16xf32>, tensor<16x4xf32>
  %53 = kiln.transpose %arg0, permutation = [1, 0] : tensor<8x4xf32>
  %54 = kiln.matmul %53, %49 : tensor<4x8xf32>, tensor<8x16xf32>
  return %19, %52, %54, %50, %45 : tensor<f32>, tensor<8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x3xf32>
}

func.func @gated(%arg0: tensor<i1>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>) -> tensor<16xf32> {
  %0 = kiln.cond %arg0, (%arg1, %arg2) : tensor<i1>, (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%arg3: tensor<16xf32>, %arg4: tensor<16xf32>):
    %1 = kiln.mul %arg3, %arg4 : tensor<16xf32>
    %2 = kiln.sigmoid %1 : tensor<16xf32>
    %3 = kiln.mul %2, %arg3 : tensor<16xf32>
    kiln.yield %3 : tensor<16xf32>
  } else {
  ^bb0(%arg3: tensor<16xf32>, %arg4: tensor<16xf32>):
    %1 = kiln.slice %arg3, start = [1], limit = [16], stride = [3] : tensor<16xf32>
    %2 = kiln.slice %arg4, start = [0], limit = [15], stride = [3] : tensor<16xf32>
    %3 = kiln.mul %1, %2 : tensor<5xf32>
    %4 = kiln.concat %3, %1, %3, %2 dim = 0 : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
    %5 = kiln.slice %4, start = [2], limit = [18], stride = [1] : tensor<20xf32>
    %6 = kiln.tanh %5 : tensor<16xf32>
    kiln.yield %6 : tensor<16xf32>
  }
  return %0 : tensor<16xf32>
}

func.func @gated_grad(%arg0: tensor<i1>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %0:4 = kiln.cond %arg0, (%arg1, %arg2) : tensor<i1>, (tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<5xf32>, tensor<5xf32>) {
  ^bb0(%arg4: tensor<16xf32>, %arg5: tensor<16xf32>):
    %2 = kiln.mul %arg4, %arg5 : tensor<16xf32>
    %3 = kiln.sigmoid %2 : tensor<16xf32>
    %4 = kiln.mul %3, %arg4 : tensor<16xf32>
    %5 = kiln.constant dense<0.000000e+00> : tensor<5xf32>
    %6 = kiln.constant dense<0.000000e+00> : tensor<5xf32>
    kiln.yield %4, %3, %5, %6 : tensor<16xf32>, tensor<16xf32>, tensor<5xf32>, tensor<5xf32>
  } else {
  ^bb0(%arg4: tensor<16xf32>, %arg5: tensor<16xf32>):
    %2 = kiln.slice %arg4, start = [1], limit = [16], stride = [3] : tensor<16xf32>
    %3 = kiln.slice %arg5, start = [0], limit = [15], stride = [3] : tensor<16xf32>
    %4 = kiln.mul %2, %3 : tensor<5xf32>
    %5 = kiln.concat %4, %2, %4, %3 dim = 0 : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
    %6 = kiln.slice %5, start = [2], limit = [18], stride = [1] : tensor<20xf32>
    %7 = kiln.tanh %6 : tensor<16xf32>
    %8 = kiln.constant dense<0.000000e+00> : tensor<16xf32>
    kiln.yield %7, %8, %3, %2 : tensor<16xf32>, tensor<16xf32>, tensor<5xf32>, tensor<5xf32>
  }
  %1:2 = kiln.cond %arg0, (%arg3, %arg1, %0#1, %arg2, %0#0, %0#2, %0#3) : tensor<i1>, (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%arg4: tensor<16xf32>, %arg5: tensor<16xf32>, %arg6: tensor<16xf32>, %arg7: tensor<16xf32>, %arg8: tensor<16xf32>, %arg9: tensor<5xf32>, %arg10: tensor<5xf32>):
    %2 = kiln.mul %arg4, %arg5 : tensor<16xf32>
    %3 = kiln.mul %arg4, %arg6 : tensor<16xf32>
    %4 = kiln.constant dense<1.000000e+00> : tensor<16xf32>
    %5 = kiln.sub %4, %arg6 : tensor<16xf32>
    %6 = kiln.mul %arg6, %5 : tensor<16xf32>
    %7 = kiln.mul %2, %6 : tensor<16xf32>
    %8 = kiln.mul %7, %arg7 : tensor<16xf32>
    %9 = kiln.add %3, %8 : tensor<16xf32>
    %10 = kiln.mul %7, %arg5 : tensor<16xf32>
    kiln.yield %9, %10 : tensor<16xf32>, tensor<16xf32>
  } else {
  ^bb0(%arg4: tensor<16xf32>, %arg5: tensor<16xf32>, %arg6: tensor<16xf32>, %arg7: tensor<16xf32>, %arg8: tensor<16xf32>, %arg9: tensor<5xf32>, %arg10: tensor<5xf32>):
    %2 = kiln.mul %arg8, %arg8 : tensor<16xf32>
    %3 = kiln.constant dense<1.000000e+00> : tensor<16xf32>
    %4 = kiln.sub %3, %2 : tensor<16xf32>
    %5 = kiln.mul %arg4, %4 : tensor<16xf32>
    %6 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %7 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %8 = kiln.concat %6, %5, %7 dim = 0 : tensor<2xf32>, tensor<16xf32>, tensor<2xf32>
    %9 = kiln.slice %8, start = [0], limit = [5], stride = [1] : tensor<20xf32>
    %10 = kiln.slice %8, start = [5], limit = [10], stride = [1] : tensor<20xf32>
    %11 = kiln.slice %8, start = [10], limit = [15], stride = [1] : tensor<20xf32>
    %12 = kiln.add %9, %11 : tensor<5xf32>
    %13 = kiln.slice %8, start = [15], limit = [20], stride = [1] : tensor<20xf32>
    %14 = kiln.mul %12, %arg9 : tensor<5xf32>
    %15 = kiln.add %10, %14 : tensor<5xf32>
    %16 = kiln.mul %12, %arg10 : tensor<5xf32>
    %17 = kiln.add %13, %16 : tensor<5xf32>
    %18 = kiln.reshape %17 : (tensor<5xf32>) -> tensor<5x1xf32>
    %19 = kiln.constant dense<0.000000e+00> : tensor<5x2xf32>
    %20 = kiln.concat %18, %19 dim = 1 : tensor<5x1xf32>, tensor<5x2xf32>
    %21 = kiln.reshape %20 : (tensor<5x3xf32>) -> tensor<15xf32>
    %22 = kiln.slice %21, start = [0], limit = [13], stride = [1] : tensor<15xf32>
    %23 = kiln.constant dense<0.000000e+00> : tensor<3xf32>
    %24 = kiln.concat %22, %23 dim = 0 : tensor<13xf32>, tensor<3xf32>
    %25 = kiln.reshape %15 : (tensor<5xf32>) -> tensor<5x1xf32>
    %26 = kiln.constant dense<0.000000e+00> : tensor<5x2xf32>
    %27 = kiln.concat %25, %26 dim = 1 : tensor<5x1xf32>, tensor<5x2xf32>
    %28 = kiln.reshape %27 : (tensor<5x3xf32>) -> tensor<15xf32>
    %29 = kiln.slice %28, start = [0], limit = [13], stride = [1] : tensor<15xf32>
    %30 = kiln.constant dense<0.000000e+00> : tensor<1xf32>
    %31 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %32 = kiln.concat %30, %29, %31 dim = 0 : tensor<1xf32>, tensor<13xf32>, tensor<2xf32>
    kiln.yield %32, %24 : tensor<16xf32>, tensor<16xf32>
  }
  return %0#0, %1#0, %1#1 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

func.func @embedding(%arg0: tensor<10x4xf32>, %arg1: tensor<3x2xi64>, %arg2: tensor<2x4x5xf32>) -> tensor<3x5xf32> {
  %0 = kiln.gather %arg0, %arg1 : tensor<10x4xf32>, tensor<3x2xi64>
  %1 = kiln.transpose %0, permutation = [1, 0, 2] : tensor<3x2x4xf32>
  %2 = kiln.matmul %1, %arg2 : tensor<2x3x4xf32>, tensor<2x4x5xf32>
  %3 = kiln.reduce_sum %2, dims = [0] : tensor<2x3x5xf32>
  %4 = kiln.relu %3 : tensor<3x5xf32>
  return %4 : tensor<3x5xf32>
}

func.func @embedding_grad(%arg0: tensor<10x4xf32>, %arg1: tensor<3x2xi64>, %arg2: tensor<2x4x5xf32>, %arg3: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<10x4xf32>, tensor<2x4x5xf32>) {
  %0 = kiln.gather %arg0, %arg1 : tensor<10x4xf32>, tensor<3x2xi64>
  %1 = kiln.transpose %0, permutation = [1, 0, 2] : tensor<3x2x4xf32>
  %2 = kiln.matmul %1, %arg2 : tensor<2x3x4xf32>, tensor<2x4x5xf32>
  %3 = kiln.reduce_sum %2, dims = [0] : tensor<2x3x5xf32>
  %4 = kiln.relu %3 : tensor<3x5xf32>
  %5 = kiln.constant dense<0.000000e+00> : tensor<3x5xf32>
  %6 = kiln.compare gt, %3, %5 : tensor<3x5xf32>
  %7 = kiln.select %6, %arg3, %5 : tensor<3x5xi1>, tensor<3x5xf32>
  %8 = kiln.broadcast_in_dim %7, dims = [1, 2] : (tensor<3x5xf32>) -> tensor<2x3x5xf32>
  %9 = kiln.transpose %arg2, permutation = [0, 2, 1] : tensor<2x4x5xf32>
  %10 = kiln.matmul %8, %9 : tensor<2x3x5xf32>, tensor<2x5x4xf32>
  %11 = kiln.transpose %1, permutation = [0, 2, 1] : tensor<2x3x4xf32>
  %12 = kiln.matmul %11, %8 : tensor<2x4x3xf32>, tensor<2x3x5xf32>
  %13 = kiln.transpose %10, permutation = [1, 0, 2] : tensor<2x3x4xf32>
  %14 = kiln.reshape %arg1 : (tensor<3x2xi64>) -> tensor<6xi64>
  %15 = kiln.constant dense<0> : tensor<6xi64>
  %16 = kiln.constant dense<9> : tensor<6xi64>
  %17 = kiln.max %14, %15 : tensor<6xi64>
  %18 = kiln.min %17, %16 : tensor<6xi64>
  %19 = kiln.iota dim = 0 : tensor<10x6xi64>
  %20 = kiln.broadcast_in_dim %18, dims = [1] : (tensor<6xi64>) -> tensor<10x6xi64>
  %21 = kiln.compare eq, %19, %20 : tensor<10x6xi64>
  %22 = kiln.cast %21 : tensor<10x6xi1> to tensor<10x6xf32>
  %23 = kiln.reshape %13 : (tensor<3x2x4xf32>) -> tensor<6x4xf32>
  %24 = kiln.matmul %22, %23 : tensor<10x6xf32>, tensor<6x4xf32>
  return %4, %24, %12 : tensor<3x5xf32>, tensor<10x4xf32>, tensor<2x4x5xf32>
}
