// The RNN of rnn_for.mlir as a kiln.while whose trip count is an input
// (at most 64, the rows of %xs): the gradient pushes onto stacks.
func.func @rnn(%h0: tensor<32x256xf32>, %w: tensor<256x256xf32>, %xs: tensor<64x32x256xf32>, %n: tensor<i64>) -> tensor<f32> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:5 = kiln.while (%h0, %w, %xs, %zero, %n) : (tensor<32x256xf32>, tensor<256x256xf32>, tensor<64x32x256xf32>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%h: tensor<32x256xf32>, %ww: tensor<256x256xf32>, %x: tensor<64x32x256xf32>, %i: tensor<i64>, %nn: tensor<i64>):
    %c = kiln.compare lt, %i, %nn : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<32x256xf32>, %ww: tensor<256x256xf32>, %x: tensor<64x32x256xf32>, %i: tensor<i64>, %nn: tensor<i64>):
    %xi = kiln.dynamic_slice %x[%i], size = 1 : tensor<64x32x256xf32>
    %xr = kiln.reshape %xi : (tensor<1x32x256xf32>) -> tensor<32x256xf32>
    %m = kiln.matmul %h, %ww : tensor<32x256xf32>, tensor<256x256xf32>
    %a = kiln.add %m, %xr : tensor<32x256xf32>
    %t = kiln.tanh %a : tensor<32x256xf32>
    %one = kiln.constant dense<1> : tensor<i64>
    %i1 = kiln.add %i, %one : tensor<i64>
    kiln.yield %t, %ww, %x, %i1, %nn : tensor<32x256xf32>, tensor<256x256xf32>, tensor<64x32x256xf32>, tensor<i64>, tensor<i64>
  }
  %s = kiln.mul %r#0, %r#0 : tensor<32x256xf32>
  %l = kiln.reduce_sum %s, dims = [0, 1] : tensor<32x256xf32>
  return %l : tensor<f32>
}
