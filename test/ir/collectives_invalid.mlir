// One case per verifier error of the collective ops. A shape error of an op
// with an inferred result type also fails the generic inference check.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @rank_twice(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.all_reduce' op replica groups name rank 1 twice; each rank is in exactly one group}}
  %y = kiln.all_reduce %x, kind = sum, groups = [[0, 1], [1, 2]] : tensor<4xf32>
  return
}

// -----

func.func @rank_out_of_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.all_reduce' op replica groups name rank 5, but 4 ranks in groups must be the ranks 0..3}}
  %y = kiln.all_reduce %x, kind = max, groups = [[0, 1], [2, 5]] : tensor<4xf32>
  return
}

// -----

func.func @ragged_groups(%x: tensor<4xf32>) {
  // expected-error @+1 {{replica groups must all have the same size, but one has 1 ranks and another 2}}
  %y = kiln.all_reduce %x, kind = sum, groups = [[0, 1], [2]] : tensor<4xf32>
  return
}

// -----

func.func @integer_mean(%x: tensor<4xi32>) {
  // expected-error @+1 {{'kiln.all_reduce' op kind = mean needs a float operand, not 'tensor<4xi32>'}}
  %y = kiln.all_reduce %x, kind = mean, groups = [[0, 1]] : tensor<4xi32>
  return
}

// -----

func.func @gather_dim(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.all_gather' op dim 1 is out of range for an operand of rank 1}}
  %y = kiln.all_gather %x, dim = 1, groups = [[0, 1]] : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @gather_result(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.all_gather' op inferred type(s) 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  %y = kiln.all_gather %x, dim = 0, groups = [[0, 1]] : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @scatter_divisibility(%x: tensor<3x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.reduce_scatter' op dim 0 has size 3, which is not divisible by the group size 2}}
  %y = kiln.reduce_scatter %x, kind = sum, dim = 0, groups = [[0, 1]] : (tensor<3x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @all_to_all_divisibility(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.all_to_all' op split_dim 1 has size 3, which is not divisible by the group size 2}}
  %y = kiln.all_to_all %x, split_dim = 1, concat_dim = 0, groups = [[0, 1]] : (tensor<4x3xf32>) -> tensor<8x1xf32>
  return
}

// -----

func.func @broadcast_root(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.collective_broadcast' op root 2 is not a group index (0..1)}}
  %y = kiln.collective_broadcast %x, root = 2, groups = [[0, 1], [2, 3]] : tensor<4xf32>
  return
}

// -----

func.func @permute_targets(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.collective_permute' op rank 1 is the target of two pairs}}
  %y = kiln.collective_permute %x, pairs = [0, 1, 2, 1] : tensor<4xf32>
  return
}

// -----

func.func @permute_odd(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.collective_permute' op pairs must hold (source, target) pairs, but has 3 entries}}
  %y = kiln.collective_permute %x, pairs = [0, 1, 2] : tensor<4xf32>
  return
}

// -----

func.func @start_without_wait(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.all_reduce_start' op result must have exactly one use, a kiln.collective_wait, but has 2}}
  %p = kiln.all_reduce_start %x, kind = sum, groups = [[0, 1]] : (tensor<4xf32>) -> tensor<4xf32>
  %a = kiln.collective_wait %p, %x : tensor<4xf32>, tensor<4xf32>
  %b = kiln.add %p, %a : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

func.func @start_used_elsewhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.all_reduce_start' op result must be the pending operand of a kiln.collective_wait}}
  %p = kiln.all_reduce_start %x, kind = sum, groups = [[0, 1]] : (tensor<4xf32>) -> tensor<4xf32>
  %b = kiln.exp %p : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

func.func @wait_wrong_source(%x: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %p = kiln.all_reduce_start %x, kind = sum, groups = [[0, 1]] : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'kiln.collective_wait' op source must be the operand of the start op that began the exchange}}
  %a = kiln.collective_wait %p, %z : tensor<4xf32>, tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @wait_not_pending(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.collective_wait' op pending operand must be the result of a kiln.*_start op}}
  %a = kiln.collective_wait %x, %x : tensor<4xf32>, tensor<4xf32>
  return %a : tensor<4xf32>
}
