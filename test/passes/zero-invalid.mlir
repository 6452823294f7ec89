// Requests kiln-zero rejects, each reported at the op or function at
// fault, and bad options. Every case is first split over 2 ranks by
// kiln-data-parallel (arguments #0 and #1 are the batch) and then asks
// kiln-zero to shard arguments #2 and #3 and results #1 and #2.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-data-parallel="ranks=2 batch-args=0,1" \
// RUN:   --kiln-zero="stage=2 sharded-args=2,3 sharded-results=1,2"
// RUN: not kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="stage=0 sharded-args=2 sharded-results=1" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="stage=1" 2>&1 | FileCheck %s --check-prefix=LISTS
// RUN: not kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="stage=1 sharded-args=9 sharded-results=1" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="stage=1 sharded-args=2 sharded-results=1 bucket-mb=-1" 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="stage=1 sharded-args=2 sharded-results=1 function=nowhere" 2>&1 | FileCheck %s --check-prefix=FUNCTION
// STAGE: error: kiln-zero: stage must be 1, 2 or 3, not 0
// LISTS: error: kiln-zero needs the sharded arguments and results: sharded-args=<i>,... sharded-results=<j>,...
// RANGE: error: kiln-zero: argument index 9 is out of range: @norm_of_state has 4 arguments
// BUCKET: error: kiln-zero: bucket-mb must be >= 0, not -1
// FUNCTION: error: kiln-zero: there is no function body named @nowhere

// The update may not read the state whole: a norm of the momentum is not
// elementwise.
func.func @norm_of_state(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  %d = kiln.sub %x, %t : tensor<4x3xf32>
  %g = kiln.reduce_sum %d, dims = [0] : tensor<4x3xf32>
  %m1 = kiln.add %m, %g : tensor<3xf32>
  %v1 = kiln.add %v, %g : tensor<3xf32>
  // expected-error@+1 {{kiln-zero: 'kiln.reduce_sum' reads sharded argument #2 whole; with stage=1 or 2 only the elementwise optimizer update may read a sharded argument (stage=3 gathers parameters before such reads)}}
  %n = kiln.reduce_sum %m, dims = [0] : tensor<3xf32>
  return %n, %m1, %v1 : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Nor what the update computes from it.
func.func @norm_of_new_state(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  %d = kiln.sub %x, %t : tensor<4x3xf32>
  %g = kiln.reduce_sum %d, dims = [0] : tensor<4x3xf32>
  %m1 = kiln.add %m, %g : tensor<3xf32>
  %v1 = kiln.add %v, %g : tensor<3xf32>
  // expected-error@+1 {{kiln-zero: 'kiln.reduce_max' reads whole a value the update computes from sharded state; the update must be elementwise in (parameter, gradient, optimizer state)}}
  %n = kiln.reduce_max %m1, dims = [0] : tensor<3xf32>
  return %n, %m1, %v1 : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A sharded result must be computed elementwise: a reversal moves elements
// between the blocks.
func.func @reversed_state(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %d = kiln.sub %x, %t : tensor<4x3xf32>
  %g = kiln.reduce_sum %d, dims = [0] : tensor<4x3xf32>
  %m1 = kiln.add %m, %g : tensor<3xf32>
  // expected-error@+1 {{kiln-zero: sharded result #2 of @reversed_state is computed by 'kiln.reverse', which is not elementwise in (parameter, gradient, optimizer state)}}
  %v1 = kiln.reverse %v, dims = [0] : tensor<3xf32>
  return %g, %m1, %v1 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// With stage=1 or 2 the parameters stay whole: a parameter listed as sharded
// is read by the forward pass.
func.func @parameter_without_stage_three(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %w: tensor<3x3xf32>, %m: tensor<3x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  // expected-error@+1 {{kiln-zero: 'kiln.matmul' reads sharded argument #2 whole}}
  %y = kiln.matmul %x, %w : tensor<4x3xf32>, tensor<3x3xf32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<4x3xf32>
  %g = kiln.matmul %xt, %t : tensor<3x4xf32>, tensor<4x3xf32>
  %m1 = kiln.add %m, %g : tensor<3x3xf32>
  %w1 = kiln.sub %w, %m1 : tensor<3x3xf32>
  return %y, %w1, %m1 : tensor<4x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}

// -----

// The step count stays whole.
// expected-error@+1 {{kiln-zero: sharded argument #2 of @step_count has type 'tensor<i64>'; only tensors of rank >= 1 and static shape are sharded (the step count and other scalars stay whole)}}
func.func @step_count(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %count: tensor<i64>, %m: tensor<3xf32>) -> (tensor<3xf32>, tensor<i64>, tensor<3xf32>) {
  %d = kiln.sub %x, %t : tensor<4x3xf32>
  %g = kiln.reduce_sum %d, dims = [0] : tensor<4x3xf32>
  %one = kiln.constant dense<1> : tensor<i64>
  %c1 = kiln.add %count, %one : tensor<i64>
  %m1 = kiln.add %m, %g : tensor<3xf32>
  return %g, %c1, %m1 : tensor<3xf32>, tensor<i64>, tensor<3xf32>
}

// -----

// kiln-zero takes the ranks from the collectives kiln-data-parallel made;
// this function has none (its results do not depend on the batch).
// expected-error@+1 {{kiln-zero runs on the output of kiln-data-parallel, but @no_exchange has no collective over all ranks to take their number from}}
func.func @no_exchange(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %two = kiln.constant dense<2.000000e+00> : tensor<3xf32>
  %m1 = kiln.mul %m, %two : tensor<3xf32>
  %v1 = kiln.mul %v, %two : tensor<3xf32>
  return %m, %m1, %v1 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
