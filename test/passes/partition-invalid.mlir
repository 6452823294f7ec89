// Annotations kiln-partition refuses, each reported at the function with
// the argument or result, the dimension and the axis at fault; and bad
// options.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-partition
// RUN: not kiln-opt %s --split-input-file --kiln-partition="bucket-axis=tp" 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not kiln-opt %s --kiln-partition="function=nowhere" 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RUN: not kiln-opt %s --kiln-partition="bucket-mb=-1 function=indivisible" 2>&1 | FileCheck %s --check-prefix=MB
// BUCKET: error: kiln-partition: bucket-axis=tp must be the first axis of @unknown_axis's mesh ("dp"), the one partitioned last
// FUNCTION: error: kiln-partition: there is no function body named @nowhere
// MB: error: kiln-partition: bucket-mb must be >= 0, not -1

// 3 ranks cannot split 16 columns.
// expected-error@+1 {{kiln-partition: argument #0 of @indivisible splits dimension 1 of size 16 over the axis "tp" of 3 ranks, which do not divide it}}
func.func @indivisible(%w: tensor<8x16xf32> {kiln.sharding = ["", "tp"]}) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 3>}} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: result #0 of @unknown_axis splits dimension 0 over the axis "model", which the mesh does not have (its axes: "dp" "tp")}}
func.func @unknown_axis(%w: tensor<8x16xf32>) -> (tensor<8x16xf32> {kiln.sharding = ["model", ""]})
    attributes {kiln.mesh = {axes = ["dp", "tp"], shape = array<i64: 2, 2>}} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: argument #0 of @same_axis_twice splits dimensions 0 and 1 over the same axis "tp"; an axis splits one dimension of a value}}
func.func @same_axis_twice(%w: tensor<8x16xf32> {kiln.sharding = ["tp", "tp"]}) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: argument #1 of @wrong_rank has kiln.sharding = ["tp"] with 1 entries, but its type 'tensor<8x16xf32>' has rank 2}}
func.func @wrong_rank(%x: tensor<4xf32>, %w: tensor<8x16xf32> {kiln.sharding = ["tp"]}) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: argument #0 of @not_names has kiln.sharding = [0, 1]; it must list one mesh axis name per dimension ("" for a dimension that is not split)}}
func.func @not_names(%w: tensor<8x16xf32> {kiln.sharding = [0, 1]}) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: @duplicate_axes's kiln.mesh names the axis "tp" twice}}
func.func @duplicate_axes(%w: tensor<8x16xf32>) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["tp", "tp"], shape = array<i64: 2, 2>}} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: @empty_axis's kiln.mesh gives the axis "tp" the size 0; sizes are >= 1}}
func.func @empty_axis(%w: tensor<8x16xf32>) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 0>}} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: @sizes_mismatch's kiln.mesh names 2 axes and 1 sizes; it needs one size per axis, and an axis}}
func.func @sizes_mismatch(%w: tensor<8x16xf32>) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["dp", "tp"], shape = array<i64: 2>}} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: @malformed_mesh's kiln.mesh must be {axes = ["name", ...], shape = array<i64: size, ...>}, not ["tp", 2]}}
func.func @malformed_mesh(%w: tensor<8x16xf32>) -> tensor<8x16xf32>
    attributes {kiln.mesh = ["tp", 2]} {
  return %w : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: @no_mesh has kiln.sharding annotations but no kiln.mesh to split them over}}
func.func @no_mesh(%w: tensor<8x16xf32> {kiln.sharding = ["", "tp"]}) -> tensor<8x16xf32> {
  return %w : tensor<8x16xf32>
}

// -----

func.func @communicates(%w: tensor<8x16xf32> {kiln.sharding = ["", "tp"]}) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  // expected-error@+1 {{kiln-partition rewrites single-device programs, but @communicates already communicates between ranks here}}
  %s = kiln.all_reduce %w, kind = sum, groups = [[0, 1]] : tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{kiln-partition: @called is called in this module, and its callers would pass whole values; partition the caller instead (function=<name>)}}
func.func @called(%w: tensor<8x16xf32> {kiln.sharding = ["", "tp"]}) -> tensor<8x16xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  return %w : tensor<8x16xf32>
}

func.func @caller(%w: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = func.call @called(%w) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
