// The module kiln-runtime-churn loads, calls and unloads (runtime.churn):
// a layer whose product goes to oneDNN and whose epilogue and reduction
// run on OpenMP threads (512 x 512 elements), and a loop with a
// data-dependent trip count whose gradient (kiln-opt --kiln-grad, derived
// by churn.sh) pushes onto stacks that grow at run time.
func.func @layer(%x: tensor<512x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> (tensor<512x512xf32>, tensor<512xf32>) {
  %h = kiln.matmul %x, %w : tensor<512x256xf32>, tensor<256x512xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<512xf32>) -> tensor<512x512xf32>
  %s = kiln.add %h, %bb : tensor<512x512xf32>
  %t = kiln.tanh %s : tensor<512x512xf32>
  %r = kiln.reduce_sum %t, dims = [0] : tensor<512x512xf32>
  return %t, %r : tensor<512x512xf32>, tensor<512xf32>
}

func.func @loop(%x: tensor<64xf32>, %n: tensor<i64>) -> tensor<f32> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.while (%x, %zero, %n) : (tensor<64xf32>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%h: tensor<64xf32>, %k: tensor<i64>, %m: tensor<i64>):
    %c = kiln.compare lt, %k, %m : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<64xf32>, %k: tensor<i64>, %m: tensor<i64>):
    %t = kiln.tanh %h : tensor<64xf32>
    %s = kiln.sin %t : tensor<64xf32>
    %one = kiln.constant dense<1> : tensor<i64>
    %j = kiln.add %k, %one : tensor<i64>
    kiln.yield %s, %j, %m : tensor<64xf32>, tensor<i64>, tensor<i64>
  }
  %q = kiln.mul %r#0, %r#0 : tensor<64xf32>
  %l = kiln.reduce_sum %q, dims = [0] : tensor<64xf32>
  return %l : tensor<f32>
}
