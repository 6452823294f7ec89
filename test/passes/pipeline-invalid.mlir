// Losses kiln-pipeline refuses, each reported at the loss or the call at
// fault, and bad options, reported at the module.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-pipeline="function=loss microbatches=2 batch-args=1"
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="microbatches=2" 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="function=loss schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="function=loss microbatches=0 batch-args=1" 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="function=loss batch-args=7" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="function=loss batch-args=1 replicas=0" 2>&1 | FileCheck %s --check-prefix=REPLICAS
// FUNCTION: error: kiln-pipeline needs the loss to pipeline: --kiln-pipeline="function=<name> microbatches=M batch-args=<i>,..."
// SCHEDULE: error: kiln-pipeline: schedule must be gpipe or 1f1b, not 'zigzag'
// MICRO: error: kiln-pipeline: microbatches must be >= 1, not 0
// RANGE: error: kiln-pipeline: batch-args index 7 is out of range: @loss has 2 arguments
// REPLICAS: error: kiln-pipeline: replicas must be >= 1, not 0
// Without recomputation a stage hands what its backward pass reads from one
// function to another; a kiln.while's run-time stack cannot travel (the
// last case below, which pipelines with recomputation).
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="function=loss microbatches=2 batch-args=1 recompute=false" 2>&1 | FileCheck %s --check-prefix=KEEP
// KEEP: error: cannot split @loss_pipeline_stage0_vjp: its backward pass reads a value of type 'tensor<?x2x4xf32>' (a kiln.while's stack), which cannot cross a function boundary
// Cutting a loss into stages (stages=P): the last case below reads its first
// weight again at the end, so only one place can be cut (before the sum);
// losses of too few ops are refused too.
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="function=loss stages=3 microbatches=2 batch-args=1" 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: error: kiln-pipeline: @loss has only 1 op to cut into 3 stages
// CUT: error: kiln-pipeline: @loss cannot be cut into 3 stages: one f32 value and no parameter crosses at 1 place, after op #4 ('kiln.matmul')
// KEEP: error: kiln-pipeline: stage 0 cannot keep its intermediates between its forward and backward passes; run it with recomputation

// Tensor-parallel stages (tp=T): only parameters split over "tp"; tp >= 1;
// a split kiln-partition cannot make is reported at the stage's call (the
// third case below: 4 rows do not split over 3 ranks).
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="function=loss batch-args=1 tp=0" 2>&1 | FileCheck %s --check-prefix=TP0
// RUN: not kiln-opt %s --split-input-file --kiln-pipeline="function=loss microbatches=2 batch-args=1 tp=3" 2>&1 | FileCheck %s --check-prefix=TP3
// TP0: error: kiln-pipeline: tp must be >= 1, not 0
// TP3: error: kiln-pipeline: stage 0 cannot be split over tp = 3 as its parameters are annotated (the error above says why)

func.func private @tp_stage(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %m = kiln.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = kiln.reduce_sum %m, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
// expected-error@+1 {{kiln-pipeline: data argument #1 is split (kiln.sharding); the data are whole on every rank of a stage}}
func.func @loss(%w: tensor<4x4xf32>, %x: tensor<2x4xf32> {kiln.sharding = ["tp", ""]}) -> tensor<f32> {
  %l = func.call @tp_stage(%w, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func private @tp_stage(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %m = kiln.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = kiln.reduce_sum %m, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
// expected-error@+1 {{kiln-pipeline: argument #0 is split as ["", "dp"]; a stage's parameters can be split over "tp" only}}
func.func @loss(%w: tensor<4x4xf32> {kiln.sharding = ["", "dp"]}, %x: tensor<2x4xf32>) -> tensor<f32> {
  %l = func.call @tp_stage(%w, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Pipelines with tp = 1 (a split over an axis of size 1 is the whole).
func.func private @tp_stage(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %m = kiln.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = kiln.reduce_sum %m, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
func.func @loss(%w: tensor<4x4xf32> {kiln.sharding = ["tp", ""]}, %x: tensor<2x4xf32>) -> tensor<f32> {
  %l = func.call @tp_stage(%w, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An op other than a stage call.
func.func @loss(%w: tensor<4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  // expected-error@+1 {{kiln-pipeline: the body of @loss must be a chain of stage calls (func.call), not 'kiln.broadcast_in_dim'}}
  %b = kiln.broadcast_in_dim %w, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %m = kiln.mul %x, %b : tensor<2x4xf32>
  %l = kiln.reduce_sum %m, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

func.func private @s0(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %h = kiln.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  return %h : tensor<2x4xf32>
}
func.func private @s1(%w: tensor<4x4xf32>, %h: tensor<2x4xf32>) -> tensor<f32> {
  %z = kiln.matmul %h, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = kiln.reduce_sum %z, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
// One weight in two stages (tied weights are not pipelined).
func.func @loss(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %h = func.call @s0(%w, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-error@+1 {{kiln-pipeline: argument #0 is read by stages 0 and 1; each parameter belongs to one stage (name data in batch-args)}}
  %l = func.call @s1(%w, %h) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func private @s0(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %h = kiln.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  return %h : tensor<2x4xf32>
}
func.func private @s1(%w: tensor<4x4xf32>, %h: tensor<2x4xf32>) -> tensor<f32> {
  %z = kiln.matmul %h, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = kiln.reduce_sum %z, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
// A stage that skips the previous stage's result.
func.func @loss(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>, %v: tensor<4x4xf32>) -> tensor<f32> {
  %h = func.call @s0(%w, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-error@+1 {{kiln-pipeline: stage 1 does not read stage 0's result}}
  %l = func.call @s1(%v, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func private @s0(%w: tensor<4x4xf64>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %l = kiln.reduce_sum %x, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
// Parameters travel packed as f32.
func.func @loss(%w: tensor<4x4xf64>, %x: tensor<2x4xf32>) -> tensor<f32> {
  // expected-error@+1 {{kiln-pipeline: parameter argument #0 has type 'tensor<4x4xf64>'; the stages' parameters travel packed as f32}}
  %l = func.call @s0(%w, %x) : (tensor<4x4xf64>, tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func private @s0(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %h = kiln.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  return %h : tensor<2x4xf32>
}
// The loss is the last stage's f32 scalar.
// expected-error@+1 {{kiln-pipeline: the last stage returns 'tensor<2x4xf32>'; a pipeline's loss is an f32 scalar}}
func.func @loss(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %h = func.call @s0(%w, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %h : tensor<2x4xf32>
}

// -----

func.func private @s0(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %l = kiln.reduce_sum %x, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
// A name the derived step would take.
// expected-error@+1 {{kiln-pipeline: cannot add @loss_pipeline: the name is taken}}
func.func @loss(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %l = func.call @s0(%w, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func @loss_pipeline() {
  return
}

// -----

// A data-dependent loop in a stage: fine with recomputation (this run),
// refused without (the KEEP run above).
func.func private @s0(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %r:3 = kiln.while (%x, %zero, %w) : (tensor<2x4xf32>, tensor<f32>, tensor<4x4xf32>) cond {
  ^bb0(%h: tensor<2x4xf32>, %t: tensor<f32>, %v: tensor<4x4xf32>):
    %s = kiln.reduce_sum %h, dims = [0, 1] : tensor<2x4xf32>
    %c = kiln.compare lt, %t, %s : tensor<f32>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<2x4xf32>, %t: tensor<f32>, %v: tensor<4x4xf32>):
    %m = kiln.matmul %h, %v : tensor<2x4xf32>, tensor<4x4xf32>
    %a = kiln.tanh %m : tensor<2x4xf32>
    %one = kiln.constant dense<1.0> : tensor<f32>
    %u = kiln.add %t, %one : tensor<f32>
    kiln.yield %a, %u, %v : tensor<2x4xf32>, tensor<f32>, tensor<4x4xf32>
  }
  return %r#0 : tensor<2x4xf32>
}
func.func private @s1(%w: tensor<4x4xf32>, %h: tensor<2x4xf32>) -> tensor<f32> {
  %m = kiln.matmul %h, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = kiln.reduce_sum %m, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
func.func @loss(%w0: tensor<4x4xf32>, %x: tensor<2x4xf32>, %w1: tensor<4x4xf32>) -> tensor<f32> {
  %h = func.call @s0(%w0, %x) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = func.call @s1(%w1, %h) : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A tied weight: %w is read by the first and the last product (the CUT run
// above); not a chain of calls for the others.
func.func @loss(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>, %v: tensor<4x4xf32>) -> tensor<f32> {
  // expected-error@+1 {{kiln-pipeline: the body of @loss must be a chain of stage calls (func.call), not 'kiln.matmul'}}
  %h = kiln.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %a = kiln.tanh %h : tensor<2x4xf32>
  %g = kiln.matmul %a, %v : tensor<2x4xf32>, tensor<4x4xf32>
  %b = kiln.tanh %g : tensor<2x4xf32>
  %o = kiln.matmul %b, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = kiln.reduce_sum %o, dims = [0, 1] : tensor<2x4xf32>
  return %l : tensor<f32>
}
