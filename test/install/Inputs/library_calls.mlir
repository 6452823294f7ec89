// A model whose compiled code calls kiln's support archives: a
// convolution and a product through oneDNN (kiln_dnnl_support) and an
// attention through the FlashAttention kernels (kiln_attention). The input
// scales constant data, so nothing folds at compile time; the output is one
// number, which the install test compares between the installed tools and
// the build tree's.
func.func @library_calls(%s: tensor<f32>) -> tensor<f32> {
  %i = kiln.iota dim = 3 : tensor<1x8x16x16xf32>
  %sx = kiln.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<1x8x16x16xf32>
  %x = kiln.mul %i, %sx : tensor<1x8x16x16xf32>
  %w = kiln.constant dense<0.01> : tensor<8x8x3x3xf32>
  %c = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %m = kiln.reshape %c : (tensor<1x8x16x16xf32>) -> tensor<128x16xf32>
  %b = kiln.constant dense<0.02> : tensor<16x64xf32>
  %p = kiln.matmul %m, %b : tensor<128x16xf32>, tensor<16x64xf32>
  %q = kiln.reshape %p : (tensor<128x64xf32>) -> tensor<2x64x64xf32>
  %o, %lse = kiln.attention %q, %q, %q {scale = 0.125 : f64} : tensor<2x64x64xf32>, tensor<2x64x64xf32>, tensor<2x64x64xf32>
  %r = kiln.reduce_sum %o, dims = [0, 1, 2] : tensor<2x64x64xf32>
  return %r : tensor<f32>
}
