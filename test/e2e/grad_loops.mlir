// Gradients through kiln.for and kiln.while derived by the kiln-grad pass,
// checked like every end-to-end program: native code against the reference
// evaluator on random inputs. The forward functions are followed by what
//
//   kiln-opt --kiln-grad="function=rnn_loss value-and-grad=true" \
//            --kiln-grad="function=decay_sum" --kiln-grad="function=alternating" \
//            --kiln-grad="function=cond_with_loop" --kiln-grad="function=shrink_while"
//
// derives from them: a recurrent cell over a sequence (weights carried
// unchanged, inputs read with dynamic_slice), a loop with two changing
// carried values that uses its index as data, a loop whose body holds
// a cond on the parity of the index, a cond whose branch holds a loop
// (its gradient's branch frees the loop's buffers through bufferization's
// run-time alias check), and a kiln.while whose trip count depends on the
// data (up to 12 trips, fewer as the values shrink): its gradient pushes
// each trip's input onto a run-time stack, filled by an inner loop inside
// a loop that doubles the stack's capacity, and reads it back in reverse.
// Each forward kiln.for stores what changes
// per iteration with dynamic_update_slice; each backward loop runs in
// reverse and reads it back with dynamic_slice. Finite-difference checks
// of the same constructions are in test/unit/autodiff.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: rnn_loss_value_and_grad(arg0: f32[8], arg1: f32[8,8], arg2: f32[6,8]) -> (out0: f32[], out1: f32[8], out2: f32[8,8], out3: f32[6,8])
// CHECK: decay_sum_grad(arg0: f64[4], arg1: f64[4], arg2: f64[], arg3: f64[4]) -> (out0: f64[], out1: f64[4], out2: f64[4], out3: f64[4])
// CHECK: alternating_grad(arg0: f32[16], arg1: f32[16], arg2: f32[16]) -> (out0: f32[16], out1: f32[16], out2: f32[16])
// CHECK: cond_with_loop_grad(arg0: f32[], arg1: f32[]) -> (out0: f32[], out1: f32[])
// CHECK: shrink_while_grad(arg0: f32[8], arg1: f32[]) -> (out0: f32[], out1: f32[8])

func.func @rnn_loss(%arg0: tensor<8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<6x8xf32>) -> tensor<f32> {
  %0 = kiln.constant dense<1.250000e-01> : tensor<8x8xf32>
  %1 = kiln.mul %arg1, %0 : tensor<8x8xf32>
  %2:3 = kiln.for 6 iterations(%arg0, %1, %arg2) : (tensor<8xf32>, tensor<8x8xf32>, tensor<6x8xf32>) {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<8xf32>, %arg5: tensor<8x8xf32>, %arg6: tensor<6x8xf32>):
    %5 = kiln.dynamic_slice %arg6[%arg3], size = 1 : tensor<6x8xf32>
    %6 = kiln.reshape %arg4 : (tensor<8xf32>) -> tensor<1x8xf32>
    %7 = kiln.matmul %6, %arg5 : tensor<1x8xf32>, tensor<8x8xf32>
    %8 = kiln.add %7, %5 : tensor<1x8xf32>
    %9 = kiln.tanh %8 : tensor<1x8xf32>
    %10 = kiln.reshape %9 : (tensor<1x8xf32>) -> tensor<8xf32>
    kiln.yield %10, %arg5, %arg6 : tensor<8xf32>, tensor<8x8xf32>, tensor<6x8xf32>
  }
  %3 = kiln.mul %2#0, %2#0 : tensor<8xf32>
  %4 = kiln.reduce_mean %3, dims = [0] : tensor<8xf32>
  return %4 : tensor<f32>
}

func.func @rnn_loss_value_and_grad(%arg0: tensor<8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<6x8xf32>) -> (tensor<f32>, tensor<8xf32>, tensor<8x8xf32>, tensor<6x8xf32>) {
  %0 = kiln.constant dense<1.250000e-01> : tensor<8x8xf32>
  %1 = kiln.mul %arg1, %0 : tensor<8x8xf32>
  %2 = kiln.constant dense<0.000000e+00> : tensor<6x1x8xf32>
  %3 = kiln.constant dense<0.000000e+00> : tensor<6x1x8xf32>
  %4:5 = kiln.for 6 iterations(%arg0, %1, %arg2, %2, %3) : (tensor<8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<6x1x8xf32>, tensor<6x1x8xf32>) {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<8xf32>, %arg5: tensor<8x8xf32>, %arg6: tensor<6x8xf32>, %arg7: tensor<6x1x8xf32>, %arg8: tensor<6x1x8xf32>):
    %18 = kiln.dynamic_slice %arg6[%arg3], size = 1 : tensor<6x8xf32>
    %19 = kiln.reshape %arg4 : (tensor<8xf32>) -> tensor<1x8xf32>
    %20 = kiln.matmul %19, %arg5 : tensor<1x8xf32>, tensor<8x8xf32>
    %21 = kiln.add %20, %18 : tensor<1x8xf32>
    %22 = kiln.tanh %21 : tensor<1x8xf32>
    %23 = kiln.reshape %22 : (tensor<1x8xf32>) -> tensor<8xf32>
    %24 = kiln.reshape %22 : (tensor<1x8xf32>) -> tensor<1x1x8xf32>
    %25 = kiln.dynamic_update_slice %arg7[%arg3], %24 : tensor<6x1x8xf32>, tensor<1x1x8xf32>
    %26 = kiln.reshape %19 : (tensor<1x8xf32>) -> tensor<1x1x8xf32>
    %27 = kiln.dynamic_update_slice %arg8[%arg3], %26 : tensor<6x1x8xf32>, tensor<1x1x8xf32>
    kiln.yield %23, %arg5, %arg6, %25, %27 : tensor<8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<6x1x8xf32>, tensor<6x1x8xf32>
  }
  %5 = kiln.mul %4#0, %4#0 : tensor<8xf32>
  %6 = kiln.reduce_mean %5, dims = [0] : tensor<8xf32>
  %7 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %8 = kiln.constant dense<8.000000e+00> : tensor<f32>
  %9 = kiln.div %7, %8 : tensor<f32>
  %10 = kiln.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %11 = kiln.mul %10, %4#0 : tensor<8xf32>
  %12 = kiln.mul %10, %4#0 : tensor<8xf32>
  %13 = kiln.add %11, %12 : tensor<8xf32>
  %14 = kiln.constant dense<0.000000e+00> : tensor<8x8xf32>
  %15 = kiln.constant dense<0.000000e+00> : tensor<6x8xf32>
  %16:6 = kiln.for 6 iterations(%13, %14, %15, %4#3, %1, %4#4) : (tensor<8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<6x1x8xf32>, tensor<8x8xf32>, tensor<6x1x8xf32>) {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<8xf32>, %arg5: tensor<8x8xf32>, %arg6: tensor<6x8xf32>, %arg7: tensor<6x1x8xf32>, %arg8: tensor<8x8xf32>, %arg9: tensor<6x1x8xf32>):
    %18 = kiln.constant dense<5> : tensor<i64>
    %19 = kiln.sub %18, %arg3 : tensor<i64>
    %20 = kiln.dynamic_slice %arg7[%19], size = 1 : tensor<6x1x8xf32>
    %21 = kiln.reshape %20 : (tensor<1x1x8xf32>) -> tensor<1x8xf32>
    %22 = kiln.dynamic_slice %arg9[%19], size = 1 : tensor<6x1x8xf32>
    %23 = kiln.reshape %22 : (tensor<1x1x8xf32>) -> tensor<1x8xf32>
    %24 = kiln.reshape %arg4 : (tensor<8xf32>) -> tensor<1x8xf32>
    %25 = kiln.mul %21, %21 : tensor<1x8xf32>
    %26 = kiln.constant dense<1.000000e+00> : tensor<1x8xf32>
    %27 = kiln.sub %26, %25 : tensor<1x8xf32>
    %28 = kiln.mul %24, %27 : tensor<1x8xf32>
    %29 = kiln.transpose %arg8, permutation = [1, 0] : tensor<8x8xf32>
    %30 = kiln.matmul %28, %29 : tensor<1x8xf32>, tensor<8x8xf32>
    %31 = kiln.transpose %23, permutation = [1, 0] : tensor<1x8xf32>
    %32 = kiln.matmul %31, %28 : tensor<8x1xf32>, tensor<1x8xf32>
    %33 = kiln.add %arg5, %32 : tensor<8x8xf32>
    %34 = kiln.reshape %30 : (tensor<1x8xf32>) -> tensor<8xf32>
    %35 = kiln.constant dense<0.000000e+00> : tensor<6x8xf32>
    %36 = kiln.dynamic_update_slice %35[%19], %28 : tensor<6x8xf32>, tensor<1x8xf32>
    %37 = kiln.add %arg6, %36 : tensor<6x8xf32>
    kiln.yield %34, %33, %37, %arg7, %arg8, %arg9 : tensor<8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<6x1x8xf32>, tensor<8x8xf32>, tensor<6x1x8xf32>
  }
  %17 = kiln.mul %16#1, %0 : tensor<8x8xf32>
  return %6, %16#0, %17, %16#2 : tensor<f32>, tensor<8xf32>, tensor<8x8xf32>, tensor<6x8xf32>
}

func.func @decay_sum(%arg0: tensor<4xf64>, %arg1: tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>) {
  %0 = kiln.constant dense<0.000000e+00> : tensor<f64>
  %1:3 = kiln.for 10 iterations(%0, %arg1, %arg0) : (tensor<f64>, tensor<4xf64>, tensor<4xf64>) {
  ^bb0(%arg2: tensor<i64>, %arg3: tensor<f64>, %arg4: tensor<4xf64>, %arg5: tensor<4xf64>):
    %2 = kiln.cast %arg2 : tensor<i64> to tensor<f64>
    %3 = kiln.constant dense<1.000000e+00> : tensor<f64>
    %4 = kiln.add %2, %3 : tensor<f64>
    %5 = kiln.broadcast_in_dim %4, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %6 = kiln.mul %arg5, %arg4 : tensor<4xf64>
    %7 = kiln.div %6, %5 : tensor<4xf64>
    %8 = kiln.reduce_sum %7, dims = [0] : tensor<4xf64>
    %9 = kiln.add %arg3, %8 : tensor<f64>
    %10 = kiln.constant dense<9.000000e-01> : tensor<4xf64>
    %11 = kiln.mul %arg4, %10 : tensor<4xf64>
    %12 = kiln.sin %11 : tensor<4xf64>
    kiln.yield %9, %12, %arg5 : tensor<f64>, tensor<4xf64>, tensor<4xf64>
  }
  return %1#0, %1#1 : tensor<f64>, tensor<4xf64>
}

func.func @decay_sum_grad(%arg0: tensor<4xf64>, %arg1: tensor<4xf64>, %arg2: tensor<f64>, %arg3: tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %0 = kiln.constant dense<0.000000e+00> : tensor<f64>
  %1 = kiln.constant dense<0.000000e+00> : tensor<10x4xf64>
  %2 = kiln.constant dense<0.000000e+00> : tensor<10x4xf64>
  %3 = kiln.constant dense<0.000000e+00> : tensor<10x4xf64>
  %4:6 = kiln.for 10 iterations(%0, %arg1, %arg0, %1, %2, %3) : (tensor<f64>, tensor<4xf64>, tensor<4xf64>, tensor<10x4xf64>, tensor<10x4xf64>, tensor<10x4xf64>) {
  ^bb0(%arg4: tensor<i64>, %arg5: tensor<f64>, %arg6: tensor<4xf64>, %arg7: tensor<4xf64>, %arg8: tensor<10x4xf64>, %arg9: tensor<10x4xf64>, %arg10: tensor<10x4xf64>):
    %7 = kiln.cast %arg4 : tensor<i64> to tensor<f64>
    %8 = kiln.constant dense<1.000000e+00> : tensor<f64>
    %9 = kiln.add %7, %8 : tensor<f64>
    %10 = kiln.broadcast_in_dim %9, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %11 = kiln.mul %arg7, %arg6 : tensor<4xf64>
    %12 = kiln.div %11, %10 : tensor<4xf64>
    %13 = kiln.reduce_sum %12, dims = [0] : tensor<4xf64>
    %14 = kiln.add %arg5, %13 : tensor<f64>
    %15 = kiln.constant dense<9.000000e-01> : tensor<4xf64>
    %16 = kiln.mul %arg6, %15 : tensor<4xf64>
    %17 = kiln.sin %16 : tensor<4xf64>
    %18 = kiln.reshape %16 : (tensor<4xf64>) -> tensor<1x4xf64>
    %19 = kiln.dynamic_update_slice %arg8[%arg4], %18 : tensor<10x4xf64>, tensor<1x4xf64>
    %20 = kiln.reshape %10 : (tensor<4xf64>) -> tensor<1x4xf64>
    %21 = kiln.dynamic_update_slice %arg9[%arg4], %20 : tensor<10x4xf64>, tensor<1x4xf64>
    %22 = kiln.reshape %arg6 : (tensor<4xf64>) -> tensor<1x4xf64>
    %23 = kiln.dynamic_update_slice %arg10[%arg4], %22 : tensor<10x4xf64>, tensor<1x4xf64>
    kiln.yield %14, %17, %arg7, %19, %21, %23 : tensor<f64>, tensor<4xf64>, tensor<4xf64>, tensor<10x4xf64>, tensor<10x4xf64>, tensor<10x4xf64>
  }
  %5 = kiln.constant dense<0.000000e+00> : tensor<4xf64>
  %6:7 = kiln.for 10 iterations(%arg2, %arg3, %5, %4#3, %4#4, %4#5, %arg0) : (tensor<f64>, tensor<4xf64>, tensor<4xf64>, tensor<10x4xf64>, tensor<10x4xf64>, tensor<10x4xf64>, tensor<4xf64>) {
  ^bb0(%arg4: tensor<i64>, %arg5: tensor<f64>, %arg6: tensor<4xf64>, %arg7: tensor<4xf64>, %arg8: tensor<10x4xf64>, %arg9: tensor<10x4xf64>, %arg10: tensor<10x4xf64>, %arg11: tensor<4xf64>):
    %7 = kiln.constant dense<9> : tensor<i64>
    %8 = kiln.sub %7, %arg4 : tensor<i64>
    %9 = kiln.dynamic_slice %arg8[%8], size = 1 : tensor<10x4xf64>
    %10 = kiln.reshape %9 : (tensor<1x4xf64>) -> tensor<4xf64>
    %11 = kiln.constant dense<9.000000e-01> : tensor<4xf64>
    %12 = kiln.dynamic_slice %arg9[%8], size = 1 : tensor<10x4xf64>
    %13 = kiln.reshape %12 : (tensor<1x4xf64>) -> tensor<4xf64>
    %14 = kiln.dynamic_slice %arg10[%8], size = 1 : tensor<10x4xf64>
    %15 = kiln.reshape %14 : (tensor<1x4xf64>) -> tensor<4xf64>
    %16 = kiln.cos %10 : tensor<4xf64>
    %17 = kiln.mul %arg6, %16 : tensor<4xf64>
    %18 = kiln.mul %17, %11 : tensor<4xf64>
    %19 = kiln.broadcast_in_dim %arg5, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %20 = kiln.div %19, %13 : tensor<4xf64>
    %21 = kiln.mul %20, %15 : tensor<4xf64>
    %22 = kiln.add %arg7, %21 : tensor<4xf64>
    %23 = kiln.mul %20, %arg11 : tensor<4xf64>
    %24 = kiln.add %18, %23 : tensor<4xf64>
    kiln.yield %arg5, %24, %22, %arg8, %arg9, %arg10, %arg11 : tensor<f64>, tensor<4xf64>, tensor<4xf64>, tensor<10x4xf64>, tensor<10x4xf64>, tensor<10x4xf64>, tensor<4xf64>
  }
  return %4#0, %4#1, %6#2, %6#1 : tensor<f64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}

func.func @alternating(%arg0: tensor<16xf32>, %arg1: tensor<16xf32>) -> tensor<16xf32> {
  %0:2 = kiln.for 7 iterations(%arg0, %arg1) : (tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%arg2: tensor<i64>, %arg3: tensor<16xf32>, %arg4: tensor<16xf32>):
    %1 = kiln.constant dense<2> : tensor<i64>
    %2 = kiln.div %arg2, %1 : tensor<i64>
    %3 = kiln.mul %2, %1 : tensor<i64>
    %4 = kiln.compare eq, %3, %arg2 : tensor<i64>
    %5 = kiln.cond %4, (%arg3, %arg4) : tensor<i1>, (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> {
    ^bb0(%arg5: tensor<16xf32>, %arg6: tensor<16xf32>):
      %6 = kiln.tanh %arg5 : tensor<16xf32>
      %7 = kiln.mul %6, %arg6 : tensor<16xf32>
      kiln.yield %7 : tensor<16xf32>
    } else {
    ^bb0(%arg5: tensor<16xf32>, %arg6: tensor<16xf32>):
      %6 = kiln.sin %arg5 : tensor<16xf32>
      %7 = kiln.add %6, %arg6 : tensor<16xf32>
      kiln.yield %7 : tensor<16xf32>
    }
    kiln.yield %5, %arg4 : tensor<16xf32>, tensor<16xf32>
  }
  return %0#0 : tensor<16xf32>
}

func.func @alternating_grad(%arg0: tensor<16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %0 = kiln.constant dense<false> : tensor<7xi1>
  %1 = kiln.constant dense<0.000000e+00> : tensor<7x16xf32>
  %2 = kiln.constant dense<0.000000e+00> : tensor<7x16xf32>
  %3:5 = kiln.for 7 iterations(%arg0, %arg1, %0, %1, %2) : (tensor<16xf32>, tensor<16xf32>, tensor<7xi1>, tensor<7x16xf32>, tensor<7x16xf32>) {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<16xf32>, %arg5: tensor<16xf32>, %arg6: tensor<7xi1>, %arg7: tensor<7x16xf32>, %arg8: tensor<7x16xf32>):
    %6 = kiln.constant dense<2> : tensor<i64>
    %7 = kiln.div %arg3, %6 : tensor<i64>
    %8 = kiln.mul %7, %6 : tensor<i64>
    %9 = kiln.compare eq, %8, %arg3 : tensor<i64>
    %10:2 = kiln.cond %9, (%arg4, %arg5) : tensor<i1>, (tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
    ^bb0(%arg9: tensor<16xf32>, %arg10: tensor<16xf32>):
      %17 = kiln.tanh %arg9 : tensor<16xf32>
      %18 = kiln.mul %17, %arg10 : tensor<16xf32>
      kiln.yield %18, %17 : tensor<16xf32>, tensor<16xf32>
    } else {
    ^bb0(%arg9: tensor<16xf32>, %arg10: tensor<16xf32>):
      %17 = kiln.sin %arg9 : tensor<16xf32>
      %18 = kiln.add %17, %arg10 : tensor<16xf32>
      %19 = kiln.constant dense<0.000000e+00> : tensor<16xf32>
      kiln.yield %18, %19 : tensor<16xf32>, tensor<16xf32>
    }
    %11 = kiln.reshape %9 : (tensor<i1>) -> tensor<1xi1>
    %12 = kiln.dynamic_update_slice %arg6[%arg3], %11 : tensor<7xi1>, tensor<1xi1>
    %13 = kiln.reshape %10#1 : (tensor<16xf32>) -> tensor<1x16xf32>
    %14 = kiln.dynamic_update_slice %arg7[%arg3], %13 : tensor<7x16xf32>, tensor<1x16xf32>
    %15 = kiln.reshape %arg4 : (tensor<16xf32>) -> tensor<1x16xf32>
    %16 = kiln.dynamic_update_slice %arg8[%arg3], %15 : tensor<7x16xf32>, tensor<1x16xf32>
    kiln.yield %10#0, %arg5, %12, %14, %16 : tensor<16xf32>, tensor<16xf32>, tensor<7xi1>, tensor<7x16xf32>, tensor<7x16xf32>
  }
  %4 = kiln.constant dense<0.000000e+00> : tensor<16xf32>
  %5:6 = kiln.for 7 iterations(%arg2, %4, %3#2, %arg1, %3#3, %3#4) : (tensor<16xf32>, tensor<16xf32>, tensor<7xi1>, tensor<16xf32>, tensor<7x16xf32>, tensor<7x16xf32>) {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<16xf32>, %arg5: tensor<16xf32>, %arg6: tensor<7xi1>, %arg7: tensor<16xf32>, %arg8: tensor<7x16xf32>, %arg9: tensor<7x16xf32>):
    %6 = kiln.constant dense<6> : tensor<i64>
    %7 = kiln.sub %6, %arg3 : tensor<i64>
    %8 = kiln.dynamic_slice %arg6[%7], size = 1 : tensor<7xi1>
    %9 = kiln.reshape %8 : (tensor<1xi1>) -> tensor<i1>
    %10 = kiln.dynamic_slice %arg8[%7], size = 1 : tensor<7x16xf32>
    %11 = kiln.reshape %10 : (tensor<1x16xf32>) -> tensor<16xf32>
    %12 = kiln.dynamic_slice %arg9[%7], size = 1 : tensor<7x16xf32>
    %13 = kiln.reshape %12 : (tensor<1x16xf32>) -> tensor<16xf32>
    %14:2 = kiln.cond %9, (%arg4, %arg7, %11, %13) : tensor<i1>, (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
    ^bb0(%arg10: tensor<16xf32>, %arg11: tensor<16xf32>, %arg12: tensor<16xf32>, %arg13: tensor<16xf32>):
      %16 = kiln.mul %arg10, %arg11 : tensor<16xf32>
      %17 = kiln.mul %arg10, %arg12 : tensor<16xf32>
      %18 = kiln.mul %arg12, %arg12 : tensor<16xf32>
      %19 = kiln.constant dense<1.000000e+00> : tensor<16xf32>
      %20 = kiln.sub %19, %18 : tensor<16xf32>
      %21 = kiln.mul %16, %20 : tensor<16xf32>
      kiln.yield %21, %17 : tensor<16xf32>, tensor<16xf32>
    } else {
    ^bb0(%arg10: tensor<16xf32>, %arg11: tensor<16xf32>, %arg12: tensor<16xf32>, %arg13: tensor<16xf32>):
      %16 = kiln.cos %arg13 : tensor<16xf32>
      %17 = kiln.mul %arg10, %16 : tensor<16xf32>
      kiln.yield %17, %arg10 : tensor<16xf32>, tensor<16xf32>
    }
    %15 = kiln.add %arg5, %14#1 : tensor<16xf32>
    kiln.yield %14#0, %15, %arg6, %arg7, %arg8, %arg9 : tensor<16xf32>, tensor<16xf32>, tensor<7xi1>, tensor<16xf32>, tensor<7x16xf32>, tensor<7x16xf32>
  }
  return %3#0, %5#0, %5#1 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

func.func @cond_with_loop(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = kiln.constant dense<5.000000e-01> : tensor<f32>
  %1 = kiln.compare le, %arg0, %0 : tensor<f32>
  %2 = kiln.cond %1, (%arg0) : tensor<i1>, (tensor<f32>) -> tensor<f32> {
  ^bb0(%arg1: tensor<f32>):
    %3 = kiln.abs %arg1 : tensor<f32>
    %4:2 = kiln.for 2 iterations(%3, %3) : (tensor<f32>, tensor<f32>) {
    ^bb0(%arg2: tensor<i64>, %arg3: tensor<f32>, %arg4: tensor<f32>):
      %5 = kiln.constant dense<5.000000e-01> : tensor<f32>
      %6 = kiln.mul %arg3, %5 : tensor<f32>
      %7 = kiln.tanh %arg3 : tensor<f32>
      %8 = kiln.add %6, %7 : tensor<f32>
      %9 = kiln.mul %arg4, %5 : tensor<f32>
      %10 = kiln.sin %6 : tensor<f32>
      %11 = kiln.add %9, %10 : tensor<f32>
      kiln.yield %8, %11 : tensor<f32>, tensor<f32>
    }
    kiln.yield %4#1 : tensor<f32>
  } else {
  ^bb0(%arg1: tensor<f32>):
    kiln.yield %arg1 : tensor<f32>
  }
  return %2 : tensor<f32>
}

func.func @cond_with_loop_grad(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = kiln.constant dense<5.000000e-01> : tensor<f32>
  %1 = kiln.compare le, %arg0, %0 : tensor<f32>
  %2:3 = kiln.cond %1, (%arg0) : tensor<i1>, (tensor<f32>) -> (tensor<f32>, tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%arg2: tensor<f32>):
    %4 = kiln.abs %arg2 : tensor<f32>
    %5 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %6 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %7:4 = kiln.for 2 iterations(%4, %4, %5, %6) : (tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>) {
    ^bb0(%arg3: tensor<i64>, %arg4: tensor<f32>, %arg5: tensor<f32>, %arg6: tensor<2xf32>, %arg7: tensor<2xf32>):
      %8 = kiln.constant dense<5.000000e-01> : tensor<f32>
      %9 = kiln.mul %arg4, %8 : tensor<f32>
      %10 = kiln.tanh %arg4 : tensor<f32>
      %11 = kiln.add %9, %10 : tensor<f32>
      %12 = kiln.mul %arg5, %8 : tensor<f32>
      %13 = kiln.sin %9 : tensor<f32>
      %14 = kiln.add %12, %13 : tensor<f32>
      %15 = kiln.reshape %9 : (tensor<f32>) -> tensor<1xf32>
      %16 = kiln.dynamic_update_slice %arg6[%arg3], %15 : tensor<2xf32>, tensor<1xf32>
      %17 = kiln.reshape %10 : (tensor<f32>) -> tensor<1xf32>
      %18 = kiln.dynamic_update_slice %arg7[%arg3], %17 : tensor<2xf32>, tensor<1xf32>
      kiln.yield %11, %14, %16, %18 : tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>
    }
    kiln.yield %7#1, %7#2, %7#3 : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  } else {
  ^bb0(%arg2: tensor<f32>):
    %4 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %5 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    kiln.yield %arg2, %4, %5 : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  }
  %3 = kiln.cond %1, (%arg1, %2#1, %2#2, %arg0) : tensor<i1>, (tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>) -> tensor<f32> {
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<2xf32>, %arg4: tensor<2xf32>, %arg5: tensor<f32>):
    %4 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %5:4 = kiln.for 2 iterations(%4, %arg2, %arg3, %arg4) : (tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>) {
    ^bb0(%arg6: tensor<i64>, %arg7: tensor<f32>, %arg8: tensor<f32>, %arg9: tensor<2xf32>, %arg10: tensor<2xf32>):
      %13 = kiln.constant dense<1> : tensor<i64>
      %14 = kiln.sub %13, %arg6 : tensor<i64>
      %15 = kiln.dynamic_slice %arg9[%14], size = 1 : tensor<2xf32>
      %16 = kiln.reshape %15 : (tensor<1xf32>) -> tensor<f32>
      %17 = kiln.constant dense<5.000000e-01> : tensor<f32>
      %18 = kiln.dynamic_slice %arg10[%14], size = 1 : tensor<2xf32>
      %19 = kiln.reshape %18 : (tensor<1xf32>) -> tensor<f32>
      %20 = kiln.cos %16 : tensor<f32>
      %21 = kiln.mul %arg8, %20 : tensor<f32>
      %22 = kiln.mul %arg8, %17 : tensor<f32>
      %23 = kiln.add %21, %arg7 : tensor<f32>
      %24 = kiln.mul %19, %19 : tensor<f32>
      %25 = kiln.constant dense<1.000000e+00> : tensor<f32>
      %26 = kiln.sub %25, %24 : tensor<f32>
      %27 = kiln.mul %arg7, %26 : tensor<f32>
      %28 = kiln.mul %23, %17 : tensor<f32>
      %29 = kiln.add %27, %28 : tensor<f32>
      kiln.yield %29, %22, %arg9, %arg10 : tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>
    }
    %6 = kiln.add %5#0, %5#1 : tensor<f32>
    %7 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %8 = kiln.compare gt, %arg5, %7 : tensor<f32>
    %9 = kiln.compare lt, %arg5, %7 : tensor<f32>
    %10 = kiln.neg %6 : tensor<f32>
    %11 = kiln.select %9, %10, %7 : tensor<i1>, tensor<f32>
    %12 = kiln.select %8, %6, %11 : tensor<i1>, tensor<f32>
    kiln.yield %12 : tensor<f32>
  } else {
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<2xf32>, %arg4: tensor<2xf32>, %arg5: tensor<f32>):
    kiln.yield %arg2 : tensor<f32>
  }
  return %2#0, %3 : tensor<f32>, tensor<f32>
}

func.func @shrink_while(%arg0: tensor<8xf32>) -> tensor<f32> {
  %0 = kiln.constant dense<0> : tensor<i64>
  %1:2 = kiln.while(%0, %arg0) : (tensor<i64>, tensor<8xf32>) cond {
  ^bb0(%arg1: tensor<i64>, %arg2: tensor<8xf32>):
    %2 = kiln.constant dense<12> : tensor<i64>
    %3 = kiln.compare lt, %arg1, %2 : tensor<i64>
    %4 = kiln.abs %arg2 : tensor<8xf32>
    %5 = kiln.reduce_max %4, dims = [0] : tensor<8xf32>
    %6 = kiln.constant dense<5.000000e-02> : tensor<f32>
    %7 = kiln.compare gt, %5, %6 : tensor<f32>
    %8 = kiln.and %3, %7 : tensor<i1>
    kiln.yield %8 : tensor<i1>
  } do {
  ^bb0(%arg1: tensor<i64>, %arg2: tensor<8xf32>):
    %2 = kiln.sin %arg2 : tensor<8xf32>
    %3 = kiln.constant dense<7.500000e-01> : tensor<8xf32>
    %4 = kiln.mul %2, %3 : tensor<8xf32>
    %5 = kiln.constant dense<1> : tensor<i64>
    %6 = kiln.add %arg1, %5 : tensor<i64>
    kiln.yield %6, %4 : tensor<i64>, tensor<8xf32>
  }
  %2 = kiln.mul %1#1, %1#1 : tensor<8xf32>
  %3 = kiln.reduce_sum %2, dims = [0] : tensor<8xf32>
  return %3 : tensor<f32>
}

func.func @shrink_while_grad(%arg0: tensor<8xf32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<8xf32>) {
  %0 = kiln.constant dense<0> : tensor<i64>
  %1 = kiln.constant dense<0> : tensor<i64>
  %2 = kiln.stack_empty : tensor<?x8xf32>
  %3:4 = kiln.while(%0, %arg0, %1, %2) : (tensor<i64>, tensor<8xf32>, tensor<i64>, tensor<?x8xf32>) cond {
  ^bb0(%arg2: tensor<i64>, %arg3: tensor<8xf32>, %arg4: tensor<i64>, %arg5: tensor<?x8xf32>):
    %11 = kiln.constant dense<12> : tensor<i64>
    %12 = kiln.compare lt, %arg2, %11 : tensor<i64>
    %13 = kiln.abs %arg3 : tensor<8xf32>
    %14 = kiln.reduce_max %13, dims = [0] : tensor<8xf32>
    %15 = kiln.constant dense<5.000000e-02> : tensor<f32>
    %16 = kiln.compare gt, %14, %15 : tensor<f32>
    %17 = kiln.and %12, %16 : tensor<i1>
    kiln.yield %17 : tensor<i1>
  } do {
  ^bb0(%arg2: tensor<i64>, %arg3: tensor<8xf32>, %arg4: tensor<i64>, %arg5: tensor<?x8xf32>):
    %11 = kiln.constant dense<4> : tensor<i64>
    %12 = kiln.constant dense<2> : tensor<i64>
    %13 = kiln.mul %arg4, %12 : tensor<i64>
    %14 = kiln.max %13, %11 : tensor<i64>
    %15 = kiln.stack_reserve %arg5, %14 : tensor<?x8xf32>
    %16:5 = kiln.while(%arg2, %arg3, %arg4, %15, %14) : (tensor<i64>, tensor<8xf32>, tensor<i64>, tensor<?x8xf32>, tensor<i64>) cond {
    ^bb0(%arg6: tensor<i64>, %arg7: tensor<8xf32>, %arg8: tensor<i64>, %arg9: tensor<?x8xf32>, %arg10: tensor<i64>):
      %17 = kiln.constant dense<12> : tensor<i64>
      %18 = kiln.compare lt, %arg6, %17 : tensor<i64>
      %19 = kiln.abs %arg7 : tensor<8xf32>
      %20 = kiln.reduce_max %19, dims = [0] : tensor<8xf32>
      %21 = kiln.constant dense<5.000000e-02> : tensor<f32>
      %22 = kiln.compare gt, %20, %21 : tensor<f32>
      %23 = kiln.and %18, %22 : tensor<i1>
      %24 = kiln.compare lt, %arg8, %arg10 : tensor<i64>
      %25 = kiln.constant dense<false> : tensor<i1>
      %26 = kiln.select %23, %24, %25 : tensor<i1>, tensor<i1>
      kiln.yield %26 : tensor<i1>
    } do {
    ^bb0(%arg6: tensor<i64>, %arg7: tensor<8xf32>, %arg8: tensor<i64>, %arg9: tensor<?x8xf32>, %arg10: tensor<i64>):
      %17 = kiln.sin %arg7 : tensor<8xf32>
      %18 = kiln.constant dense<7.500000e-01> : tensor<8xf32>
      %19 = kiln.mul %17, %18 : tensor<8xf32>
      %20 = kiln.constant dense<1> : tensor<i64>
      %21 = kiln.add %arg6, %20 : tensor<i64>
      %22 = kiln.constant dense<1> : tensor<i64>
      %23 = kiln.add %arg8, %22 : tensor<i64>
      %24 = kiln.stack_push %arg9[%arg8], %arg7 : tensor<?x8xf32>, tensor<8xf32>
      kiln.yield %21, %19, %23, %24, %arg10 : tensor<i64>, tensor<8xf32>, tensor<i64>, tensor<?x8xf32>, tensor<i64>
    }
    kiln.yield %16#0, %16#1, %16#2, %16#3 : tensor<i64>, tensor<8xf32>, tensor<i64>, tensor<?x8xf32>
  }
  %4 = kiln.mul %3#1, %3#1 : tensor<8xf32>
  %5 = kiln.reduce_sum %4, dims = [0] : tensor<8xf32>
  %6 = kiln.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %7 = kiln.mul %6, %3#1 : tensor<8xf32>
  %8 = kiln.mul %6, %3#1 : tensor<8xf32>
  %9 = kiln.add %7, %8 : tensor<8xf32>
  %10:3 = kiln.while(%3#2, %9, %3#3) : (tensor<i64>, tensor<8xf32>, tensor<?x8xf32>) cond {
  ^bb0(%arg2: tensor<i64>, %arg3: tensor<8xf32>, %arg4: tensor<?x8xf32>):
    %11 = kiln.constant dense<0> : tensor<i64>
    %12 = kiln.compare gt, %arg2, %11 : tensor<i64>
    kiln.yield %12 : tensor<i1>
  } do {
  ^bb0(%arg2: tensor<i64>, %arg3: tensor<8xf32>, %arg4: tensor<?x8xf32>):
    %11 = kiln.constant dense<1> : tensor<i64>
    %12 = kiln.sub %arg2, %11 : tensor<i64>
    %13 = kiln.constant dense<7.500000e-01> : tensor<8xf32>
    %14 = kiln.stack_read %arg4[%12] : tensor<?x8xf32> -> tensor<8xf32>
    %15 = kiln.mul %arg3, %13 : tensor<8xf32>
    %16 = kiln.cos %14 : tensor<8xf32>
    %17 = kiln.mul %15, %16 : tensor<8xf32>
    kiln.yield %12, %17, %arg4 : tensor<i64>, tensor<8xf32>, tensor<?x8xf32>
  }
  return %5, %10#1 : tensor<f32>, tensor<8xf32>
}
