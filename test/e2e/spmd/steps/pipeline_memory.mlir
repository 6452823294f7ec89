// The loss of one micro-batch of a four-stage MLP (three tanh layers of
// width 128, then a linear layer and a squared error) on 64 rows, as a
// chain of stage calls: activations of 32 KiB, large enough that what a
// pipeline stage holds shows in the bytes its buffers take.
// pipeline_memory.py derives its step without recomputation under GPipe and
// 1F1B for several micro-batch counts and runs it on 4 MPI ranks with
// `kiln-run --stats`, which reports the most bytes the code's buffers held
// (spmd.pipeline_memory.n4).
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=4 batch-args=4,5 recompute=false" | kiln-compile - -o %t.kmod
func.func private @layer(%w: tensor<128x128xf32>, %x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %h = kiln.matmul %x, %w : tensor<64x128xf32>, tensor<128x128xf32>
  %a = kiln.tanh %h : tensor<64x128xf32>
  return %a : tensor<64x128xf32>
}
func.func private @head(%w: tensor<128x128xf32>, %h: tensor<64x128xf32>, %y: tensor<64x128xf32>) -> tensor<f32> {
  %z = kiln.matmul %h, %w : tensor<64x128xf32>, tensor<128x128xf32>
  %d = kiln.sub %z, %y : tensor<64x128xf32>
  %s = kiln.mul %d, %d : tensor<64x128xf32>
  %l = kiln.reduce_mean %s, dims = [0, 1] : tensor<64x128xf32>
  return %l : tensor<f32>
}
func.func @loss(%w0: tensor<128x128xf32>, %w1: tensor<128x128xf32>,
                %w2: tensor<128x128xf32>, %w3: tensor<128x128xf32>,
                %x: tensor<64x128xf32>, %y: tensor<64x128xf32>) -> tensor<f32> {
  %h0 = func.call @layer(%w0, %x) : (tensor<128x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %h1 = func.call @layer(%w1, %h0) : (tensor<128x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %h2 = func.call @layer(%w2, %h1) : (tensor<128x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %l = func.call @head(%w3, %h2, %y) : (tensor<128x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
