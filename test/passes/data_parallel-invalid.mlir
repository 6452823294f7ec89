// Requests kiln-data-parallel rejects, each reported at the function or op
// at fault (every split asks for 4 ranks and splits argument #1), and bad
// options, reported at the module.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-data-parallel="ranks=4 batch-args=1"
// RUN: not kiln-opt %s --kiln-data-parallel="ranks=0 batch-args=1" 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not kiln-opt %s --kiln-data-parallel="ranks=2" 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=1 bucket-mb=-1" 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=1 function=nowhere" 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RANKS: error: kiln-data-parallel needs the number of ranks: --kiln-data-parallel="ranks=N batch-args=..." with N >= 1
// BATCH: error: kiln-data-parallel needs the batch arguments to split: --kiln-data-parallel="ranks=N batch-args=<i>,<j>,..."
// BUCKET: error: kiln-data-parallel: bucket-mb must be >= 0, not -1
// FUNCTION: error: kiln-data-parallel: there is no function body named @nowhere

// 4 ranks cannot split 6 rows.
// expected-error@+1 {{kiln-data-parallel: batch argument #1 of @indivisible has 6 rows, which 4 ranks cannot split evenly}}
func.func @indivisible(%w: tensor<3xf32>, %x: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %b = kiln.broadcast_in_dim %w, dims = [1] : (tensor<3xf32>) -> tensor<6x3xf32>
  %y = kiln.mul %x, %b : tensor<6x3xf32>
  return %y : tensor<6x3xf32>
}

// -----

// The batch argument must exist.
// expected-error@+1 {{kiln-data-parallel: batch-args index 1 is out of range: @one_argument has 1 arguments}}
func.func @one_argument(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  return %x : tensor<8x3xf32>
}

// -----

// A batch argument needs a leading dimension.
// expected-error@+1 {{kiln-data-parallel: batch argument #1 of @scalar has type 'tensor<f32>', which has no leading dimension to split}}
func.func @scalar(%w: tensor<3xf32>, %x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

// The input must be a single-device program.
func.func @already_spmd(%w: tensor<3xf32>, %x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  // expected-error@+1 {{kiln-data-parallel rewrites single-device programs, but @already_spmd already communicates between ranks here}}
  %s = kiln.all_reduce %x, kind = sum, groups = [[0]] : tensor<8x3xf32>
  return %s : tensor<8x3xf32>
}

// -----

// A function that is called keeps its signature for its callers.
// expected-error@+1 {{kiln-data-parallel: @callee is called in this module, and its callers would pass the whole batch; rewrite the caller instead (function=<name>)}}
func.func @callee(%w: tensor<3xf32>, %x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  return %x : tensor<8x3xf32>
}

func.func private @caller(%w: tensor<3xf32>, %x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %y = func.call @callee(%w, %x) : (tensor<3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  return %y : tensor<8x3xf32>
}
