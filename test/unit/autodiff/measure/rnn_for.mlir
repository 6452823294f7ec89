// An RNN (hidden 256, batch 32, 64 steps) as a kiln.for, for measuring the
// cost of its gradient; see README.md next to this file.
func.func @rnn(%h0: tensor<32x256xf32>, %w: tensor<256x256xf32>, %xs: tensor<64x32x256xf32>) -> tensor<f32> {
  %r:3 = kiln.for 64 iterations (%h0, %w, %xs) : (tensor<32x256xf32>, tensor<256x256xf32>, tensor<64x32x256xf32>) {
  ^bb0(%i: tensor<i64>, %h: tensor<32x256xf32>, %ww: tensor<256x256xf32>, %x: tensor<64x32x256xf32>):
    %xi = kiln.dynamic_slice %x[%i], size = 1 : tensor<64x32x256xf32>
    %xr = kiln.reshape %xi : (tensor<1x32x256xf32>) -> tensor<32x256xf32>
    %m = kiln.matmul %h, %ww : tensor<32x256xf32>, tensor<256x256xf32>
    %a = kiln.add %m, %xr : tensor<32x256xf32>
    %t = kiln.tanh %a : tensor<32x256xf32>
    kiln.yield %t, %ww, %x : tensor<32x256xf32>, tensor<256x256xf32>, tensor<64x32x256xf32>
  }
  %s = kiln.mul %r#0, %r#0 : tensor<32x256xf32>
  %l = kiln.reduce_sum %s, dims = [0, 1] : tensor<32x256xf32>
  return %l : tensor<f32>
}
