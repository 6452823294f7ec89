func.func @main(%p: tensor<i1>, %q: tensor<i1>, %x: tensor<64xf32>) -> tensor<f32> {
  %a = kiln.cond %p, (%x, %q) : tensor<i1>, (tensor<64xf32>, tensor<i1>) -> (tensor<64xf32>) {
  ^bb0(%v: tensor<64xf32>, %r: tensor<i1>):
    %e = kiln.exp %v : tensor<64xf32>
    %f = kiln.select %r, %v, %e : tensor<i1>, tensor<64xf32>
    kiln.yield %f : tensor<64xf32>
  } else {
  ^bb0(%v: tensor<64xf32>, %r: tensor<i1>):
    kiln.yield %v : tensor<64xf32>
  }
  %s = kiln.reduce_sum %a, dims = [0] : tensor<64xf32>
  %b = kiln.cond %q, (%a, %s) : tensor<i1>, (tensor<64xf32>, tensor<f32>) -> (tensor<64xf32>) {
  ^bb0(%v: tensor<64xf32>, %c: tensor<f32>):
    %t = kiln.tanh %v : tensor<64xf32>
    kiln.yield %t : tensor<64xf32>
  } else {
  ^bb0(%v: tensor<64xf32>, %c: tensor<f32>):
    %cb = kiln.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %u = kiln.add %v, %cb : tensor<64xf32>
    kiln.yield %u : tensor<64xf32>
  }
  %t = kiln.reduce_sum %b, dims = [0] : tensor<64xf32>
  return %t : tensor<f32>
}
