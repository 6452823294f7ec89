// The loss of one micro-batch of a two-stage MLP (a tanh layer, then a
// linear layer and a squared error), written as a chain of stage calls.
// test/e2e/spmd/CMakeLists.txt derives its pipelined step with
// kiln-pipeline (GPipe and 1F1B, 4 micro-batches) and runs it through MPI
// on 2 ranks against the evaluator's simulated ranks (spmd.pipeline_*);
// PipelineTest.cpp checks the same derivation against gradient
// accumulation in one process.
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=4 batch-args=2,3 schedule=1f1b" | kiln-compile - -o %t.kmod
func.func private @stage0(%w: tensor<6x8xf32>, %x: tensor<2x6xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  return %a : tensor<2x8xf32>
}
func.func private @stage1(%w: tensor<8x3xf32>, %h: tensor<2x8xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %z = kiln.matmul %h, %w : tensor<2x8xf32>, tensor<8x3xf32>
  %d = kiln.sub %z, %y : tensor<2x3xf32>
  %s = kiln.mul %d, %d : tensor<2x3xf32>
  %l = kiln.reduce_mean %s, dims = [0, 1] : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @loss(%w0: tensor<6x8xf32>, %w1: tensor<8x3xf32>, %x: tensor<2x6xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = func.call @stage0(%w0, %x) : (tensor<6x8xf32>, tensor<2x6xf32>) -> tensor<2x8xf32>
  %l = func.call @stage1(%w1, %h, %y) : (tensor<8x3xf32>, tensor<2x8xf32>, tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
