// The loss of one micro-batch of a four-stage MLP (tanh layers 6 -> 8 ->
// 8 -> 8, the middle two with biases, then a linear layer and a squared
// error), as a chain of stage calls; the middle stages call one function.
// test/e2e/spmd/CMakeLists.txt derives its pipelined step with
// kiln-pipeline (GPipe and 1F1B, 6 micro-batches) and runs it through MPI
// on 4 ranks against the evaluator's simulated ranks (spmd.pipeline_*).
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=6 batch-args=6,7" | kiln-compile - -o %t.kmod
func.func private @dense(%w: tensor<6x8xf32>, %x: tensor<2x6xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  return %a : tensor<2x8xf32>
}
func.func private @biased(%w: tensor<8x8xf32>, %b: tensor<8xf32>, %x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w : tensor<2x8xf32>, tensor<8x8xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %s = kiln.add %h, %bb : tensor<2x8xf32>
  %a = kiln.tanh %s : tensor<2x8xf32>
  return %a : tensor<2x8xf32>
}
func.func private @head(%w: tensor<8x5xf32>, %x: tensor<2x8xf32>, %y: tensor<2x5xf32>) -> tensor<f32> {
  %z = kiln.matmul %x, %w : tensor<2x8xf32>, tensor<8x5xf32>
  %d = kiln.sub %z, %y : tensor<2x5xf32>
  %s = kiln.mul %d, %d : tensor<2x5xf32>
  %l = kiln.reduce_mean %s, dims = [0, 1] : tensor<2x5xf32>
  return %l : tensor<f32>
}
func.func @loss(%w0: tensor<6x8xf32>, %w1: tensor<8x8xf32>, %b1: tensor<8xf32>,
                %w2: tensor<8x8xf32>, %b2: tensor<8xf32>, %w3: tensor<8x5xf32>,
                %x: tensor<2x6xf32>, %y: tensor<2x5xf32>) -> tensor<f32> {
  %h0 = func.call @dense(%w0, %x) : (tensor<6x8xf32>, tensor<2x6xf32>) -> tensor<2x8xf32>
  %h1 = func.call @biased(%w1, %b1, %h0) : (tensor<8x8xf32>, tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %h2 = func.call @biased(%w2, %b2, %h1) : (tensor<8x8xf32>, tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %l = func.call @head(%w3, %h2, %y) : (tensor<8x5xf32>, tensor<2x8xf32>, tensor<2x5xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
