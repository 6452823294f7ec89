// The loss of one micro-batch of a two-stage MLP with tensor-parallel
// stages: stage 0 a column-parallel then a row-parallel tanh layer
// (Megatron's MLP), stage 1 a row-parallel linear layer and a squared
// error. The kiln.sharding annotations split the weights over "tp".
// test/e2e/spmd/CMakeLists.txt derives its pipelined step with
// kiln-pipeline tp=2 (2 stages x 2 ranks, GPipe and 1F1B) and runs it
// through MPI on 4 ranks against the evaluator's simulated ranks
// (spmd.pipeline_tp_two_stages_*); each stage's all-reduces run inside the
// kiln.cond that only its two ranks enter (group-local collectives).
// PipelineTest.TensorParallelStages checks the same derivation against
// gradient accumulation in one process.
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=4 batch-args=4,5 schedule=1f1b tp=2" | kiln-compile - -o %t.kmod
func.func private @stage0(%w0: tensor<6x8xf32>, %w1: tensor<8x8xf32>, %b1: tensor<8xf32>,
                          %x: tensor<2x6xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w0 : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  %h1 = kiln.matmul %a, %w1 : tensor<2x8xf32>, tensor<8x8xf32>
  %bb = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %s = kiln.add %h1, %bb : tensor<2x8xf32>
  %a1 = kiln.tanh %s : tensor<2x8xf32>
  return %a1 : tensor<2x8xf32>
}
func.func private @stage1(%w: tensor<8x3xf32>, %h: tensor<2x8xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %z = kiln.matmul %h, %w : tensor<2x8xf32>, tensor<8x3xf32>
  %d = kiln.sub %z, %y : tensor<2x3xf32>
  %s = kiln.mul %d, %d : tensor<2x3xf32>
  %l = kiln.reduce_mean %s, dims = [0, 1] : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @loss(%w0: tensor<6x8xf32> {kiln.sharding = ["", "tp"]},
                %w1: tensor<8x8xf32> {kiln.sharding = ["tp", ""]},
                %b1: tensor<8xf32>,
                %w2: tensor<8x3xf32> {kiln.sharding = ["tp", ""]},
                %x: tensor<2x6xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = func.call @stage0(%w0, %w1, %b1, %x) : (tensor<6x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<2x6xf32>) -> tensor<2x8xf32>
  %l = func.call @stage1(%w2, %h, %y) : (tensor<8x3xf32>, tensor<2x8xf32>, tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
