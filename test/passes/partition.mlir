// The kiln-partition pass: a Megatron MLP block's forward and backward
// products over a tensor-parallel axis (one all-reduce each way), the same
// block on a data x tensor mesh (each axis's collectives act within its own
// groups), a vocabulary-parallel embedding lookup (each rank looks up its
// rows), a table split like the batch of its ids, log-softmax over a split vocabulary (max and sum all-reduced, the
// logits never gathered), attention with its heads split and a layer
// norm's backward pass under a column-parallel product (one all-reduce).
// The exchanges are checked as the rules write them (combine=false);
// combine_collectives.mlir checks how they are combined, and the last RUN
// that the combined programs verify.
// RUN: kiln-opt %s --split-input-file --kiln-partition="combine=false" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-partition="bucket-axis=dp combine=false" | FileCheck %s --check-prefix=BUCKET
// The partitioned IR verifies and round-trips.
// RUN: kiln-opt %s --split-input-file --kiln-partition | kiln-opt --split-input-file --verify-roundtrip -o /dev/null

// y = relu(x w1) w2 with w1 split by columns and w2 by rows over tp = 2,
// and the backward products for a given dy: dx, dw1, dw2. Each rank holds
// 8 of the 16 hidden features. The forward's partial sum y and the
// backward's partial sum dx are all-reduced; the weight gradients come out
// split like their weights, without communication.
// CHECK-LABEL: func.func @megatron_mlp(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W1:[a-z0-9]+]]: tensor<8x8xf32>,
// CHECK-SAME:      %[[W2:[a-z0-9]+]]: tensor<8x8xf32>, %[[DY:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK-SAME:      -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK-NOT:     kiln.sharding
// CHECK-NOT:     kiln.mesh
// CHECK:         %[[H:.+]] = kiln.matmul %[[X]], %[[W1]] : tensor<4x8xf32>, tensor<8x8xf32>
// CHECK-NEXT:    %[[A:.+]] = kiln.relu %[[H]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[YP:.+]] = kiln.matmul %[[A]], %[[W2]] : tensor<4x8xf32>, tensor<8x8xf32>
// CHECK-NOT:     kiln.all_gather
// CHECK:         %[[DA:.+]] = kiln.matmul %[[DY]], %{{.+}} : tensor<4x8xf32>, tensor<8x8xf32>
// CHECK:         %[[DXP:.+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x8xf32>
// CHECK:         %[[DW2:.+]] = kiln.matmul %{{.+}}, %[[DY]] : tensor<8x4xf32>, tensor<4x8xf32>
// CHECK:         %[[DW1:.+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<8x4xf32>, tensor<4x8xf32>
// CHECK-NEXT:    %[[Y:.+]] = kiln.all_reduce %[[YP]], kind = sum, groups = {{\[\[}}0, 1]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[DX:.+]] = kiln.all_reduce %[[DXP]], kind = sum, groups = {{\[\[}}0, 1]] : tensor<4x8xf32>
// CHECK-NEXT:    return %[[Y]], %[[DX]], %[[DW1]], %[[DW2]]
// CHECK-NOT:     kiln.all_reduce
func.func @megatron_mlp(%x: tensor<4x8xf32>,
                        %w1: tensor<8x16xf32> {kiln.sharding = ["", "tp"]},
                        %w2: tensor<16x8xf32> {kiln.sharding = ["tp", ""]},
                        %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>,
        tensor<8x16xf32> {kiln.sharding = ["", "tp"]},
        tensor<16x8xf32> {kiln.sharding = ["tp", ""]})
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  %h = kiln.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x16xf32>
  %a = kiln.relu %h : tensor<4x16xf32>
  %y = kiln.matmul %a, %w2 : tensor<4x16xf32>, tensor<16x8xf32>
  %w2t = kiln.transpose %w2, permutation = [1, 0] : tensor<16x8xf32>
  %da = kiln.matmul %dy, %w2t : tensor<4x8xf32>, tensor<8x16xf32>
  %zero = kiln.constant dense<0.0> : tensor<4x16xf32>
  %pos = kiln.compare gt, %h, %zero : tensor<4x16xf32>
  %dh = kiln.select %pos, %da, %zero : tensor<4x16xi1>, tensor<4x16xf32>
  %w1t = kiln.transpose %w1, permutation = [1, 0] : tensor<8x16xf32>
  %dx = kiln.matmul %dh, %w1t : tensor<4x16xf32>, tensor<16x8xf32>
  %at = kiln.transpose %a, permutation = [1, 0] : tensor<4x16xf32>
  %dw2 = kiln.matmul %at, %dy : tensor<16x4xf32>, tensor<4x8xf32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<4x8xf32>
  %dw1 = kiln.matmul %xt, %dh : tensor<8x4xf32>, tensor<4x16xf32>
  return %y, %dx, %dw1, %dw2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>
}

// -----

// The same forward on a dp x tp = 2 x 2 mesh: rank r is (dp, tp) =
// (r / 2, r % 2). The batch is split over dp (2 rows each), the hidden
// features over tp. The tensor-parallel all-reduces act within the groups
// {0, 1} and {2, 3}: the returned y, and the loss, a mean of y's partial
// sum (a scalar, cheaper to sum than y itself); the loss, a mean over the
// batch, is then a partial sum over dp, summed within {0, 2} and {1, 3}
// (with bucket-axis=dp, asynchronously).
// CHECK-LABEL: func.func @dp_tp(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<2x8xf32>, %[[W1:[a-z0-9]+]]: tensor<8x8xf32>,
// CHECK-SAME:      %[[W2:[a-z0-9]+]]: tensor<8x8xf32>)
// CHECK-SAME:      -> (tensor<f32>, tensor<2x8xf32>)
// CHECK:         kiln.matmul %[[X]], %[[W1]] : tensor<2x8xf32>, tensor<8x8xf32>
// CHECK:         %[[YP:.+]] = kiln.matmul %{{.+}}, %[[W2]] : tensor<2x8xf32>, tensor<8x8xf32>
// CHECK-NEXT:    %[[M:.+]] = kiln.reduce_mean %[[YP]], dims = [0, 1] : tensor<2x8xf32>
// CHECK-NEXT:    %[[HALF:.+]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[MP:.+]] = kiln.mul %[[M]], %[[HALF]] : tensor<f32>
// CHECK-NEXT:    %[[LT:.+]] = kiln.all_reduce %[[MP]], kind = sum, groups = {{\[\[}}0, 1], [2, 3]] : tensor<f32>
// CHECK-NEXT:    %[[Y:.+]] = kiln.all_reduce %[[YP]], kind = sum, groups = {{\[\[}}0, 1], [2, 3]] : tensor<2x8xf32>
// CHECK-NEXT:    %[[L:.+]] = kiln.all_reduce %[[LT]], kind = sum, groups = {{\[\[}}0, 2], [1, 3]] : tensor<f32>
// CHECK-NEXT:    return %[[L]], %[[Y]]
// BUCKET-LABEL: func.func @dp_tp(
// BUCKET:         %[[LT:.+]] = kiln.all_reduce %{{.+}}, kind = sum, groups = {{\[\[}}0, 1], [2, 3]] : tensor<f32>
// BUCKET-NEXT:    %[[P:.+]] = kiln.all_reduce_start %[[LT]], kind = sum, groups = {{\[\[}}0, 2], [1, 3]]
// BUCKET:         kiln.collective_wait %[[P]], %[[LT]]
func.func @dp_tp(%x: tensor<4x8xf32> {kiln.sharding = ["dp", ""]},
                 %w1: tensor<8x16xf32> {kiln.sharding = ["", "tp"]},
                 %w2: tensor<16x8xf32> {kiln.sharding = ["tp", ""]})
    -> (tensor<f32>, tensor<4x8xf32> {kiln.sharding = ["dp", ""]})
    attributes {kiln.mesh = {axes = ["dp", "tp"], shape = array<i64: 2, 2>}} {
  %h = kiln.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x16xf32>
  %a = kiln.relu %h : tensor<4x16xf32>
  %y = kiln.matmul %a, %w2 : tensor<4x16xf32>, tensor<16x8xf32>
  %l = kiln.reduce_mean %y, dims = [0, 1] : tensor<4x8xf32>
  return %l, %y : tensor<f32>, tensor<4x8xf32>
}

// -----

// An embedding table split by rows over tp = 2 (8 rows each): each rank
// clamps the ids as the lookup does, looks up those in its rows
// [tp * 8, tp * 8 + 8) and gives zeros for the others; one all-reduce sums
// the rows.
// CHECK-LABEL: func.func @vocab_embedding(
// CHECK-SAME:      %[[T:[a-z0-9]+]]: tensor<8x4xf32>, %[[IDS:[a-z0-9]+]]: tensor<3xi32>)
// CHECK:         %[[RANK:.+]] = kiln.rank : tensor<i64>
// CHECK:         %[[LO:.+]] = kiln.max %[[IDS]], %{{.+}} : tensor<3xi32>
// CHECK:         %[[CL:.+]] = kiln.min %[[LO]], %{{.+}} : tensor<3xi32>
// CHECK:         kiln.mul %[[RANK]], %{{.+}} : tensor<i64>
// CHECK:         %[[LOCAL:.+]] = kiln.sub %[[CL]], %{{.+}} : tensor<3xi32>
// CHECK:         %[[MINE:.+]] = kiln.and
// CHECK:         %[[ROWS:.+]] = kiln.gather %[[T]], %[[LOCAL]] : tensor<8x4xf32>, tensor<3xi32>
// CHECK:         %[[M:.+]] = kiln.broadcast_in_dim %[[MINE]], dims = [0] : (tensor<3xi1>) -> tensor<3x4xi1>
// CHECK:         %[[PART:.+]] = kiln.select %[[M]], %[[ROWS]], %{{.+}} : tensor<3x4xi1>, tensor<3x4xf32>
// CHECK:         %[[E:.+]] = kiln.all_reduce %[[PART]], kind = sum, groups = {{\[\[}}0, 1]] : tensor<3x4xf32>
// CHECK:         return %[[E]]
func.func @vocab_embedding(%table: tensor<16x4xf32> {kiln.sharding = ["tp", ""]},
                           %ids: tensor<3xi32>) -> tensor<3x4xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  %e = kiln.gather %table, %ids : tensor<16x4xf32>, tensor<3xi32>
  return %e : tensor<3x4xf32>
}

// -----

// A recommendation model's table split by rows over the ranks that split
// the batch of ids (dp = 2): the ids are all-gathered, each rank looks up
// its rows for all of them, and the rows go back to the ids' ranks by one
// reduce-scatter. The table never moves.
// CHECK-LABEL: func.func @sharded_table(
// CHECK-SAME:      %[[T:[a-z0-9]+]]: tensor<8x4xf32>, %[[IDS:[a-z0-9]+]]: tensor<3xi32>) -> tensor<3x4xf32>
// CHECK:         %[[ALL:.+]] = kiln.all_gather %[[IDS]], dim = 0, groups = {{\[\[}}0, 1]] : (tensor<3xi32>) -> tensor<6xi32>
// CHECK:         kiln.gather %[[T]], %{{.+}} : tensor<8x4xf32>, tensor<6xi32>
// CHECK:         %[[PART:.+]] = kiln.select %{{.+}} : tensor<6x4xi1>, tensor<6x4xf32>
// CHECK-NEXT:    %[[E:.+]] = kiln.reduce_scatter %[[PART]], kind = sum, dim = 0, groups = {{\[\[}}0, 1]] : (tensor<6x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    return %[[E]]
func.func @sharded_table(%table: tensor<16x4xf32> {kiln.sharding = ["dp", ""]},
                         %ids: tensor<6xi32> {kiln.sharding = ["dp"]})
    -> (tensor<6x4xf32> {kiln.sharding = ["dp", ""]})
    attributes {kiln.mesh = {axes = ["dp"], shape = array<i64: 2>}} {
  %e = kiln.gather %table, %ids : tensor<16x4xf32>, tensor<6xi32>
  return %e : tensor<6x4xf32>
}

// -----

// Log-softmax over a vocabulary of 16 split over tp = 4: the max over the
// vocabulary is an all-reduce max of one value per row, the sum of the
// exponentials an all-reduce sum of one value per row; the logits stay
// split, and the result is returned split.
// CHECK-LABEL: func.func @vocab_log_softmax(
// CHECK-SAME:      %[[Z:[a-z0-9]+]]: tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NOT:     kiln.all_gather
// CHECK:         %[[LM:.+]] = kiln.reduce_max %[[Z]], dims = [1] : tensor<3x4xf32>
// CHECK-NEXT:    %[[M:.+]] = kiln.all_reduce %[[LM]], kind = max, groups = {{\[\[}}0, 1, 2, 3]] : tensor<3xf32>
// CHECK:         %[[LS:.+]] = kiln.reduce_sum %{{.+}}, dims = [1] : tensor<3x4xf32>
// CHECK-NEXT:    %[[S:.+]] = kiln.all_reduce %[[LS]], kind = sum, groups = {{\[\[}}0, 1, 2, 3]] : tensor<3xf32>
// CHECK-NEXT:    kiln.log %[[S]] : tensor<3xf32>
// CHECK-NOT:     kiln.all_gather
// CHECK:         return %{{.+}} : tensor<3x4xf32>
func.func @vocab_log_softmax(%z: tensor<3x16xf32> {kiln.sharding = ["", "tp"]})
    -> (tensor<3x16xf32> {kiln.sharding = ["", "tp"]})
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 4>}} {
  %m = kiln.reduce_max %z, dims = [1] : tensor<3x16xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
  %c = kiln.sub %z, %mb : tensor<3x16xf32>
  %e = kiln.exp %c : tensor<3x16xf32>
  %s = kiln.reduce_sum %e, dims = [1] : tensor<3x16xf32>
  %ls = kiln.log %s : tensor<3xf32>
  %lb = kiln.broadcast_in_dim %ls, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
  %r = kiln.sub %c, %lb : tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

// Attention over [batch, heads, tokens, features] with the heads split over
// tp = 2: each rank attends with its 2 heads, and returns them.
// CHECK-LABEL: func.func @heads(
// CHECK-SAME:      %[[Q:[a-z0-9]+]]: tensor<1x2x5x3xf32>
// CHECK-NOT:     kiln.all_
// CHECK:         kiln.attention %[[Q]], %{{.+}}, %{{.+}} {causal, scale = 5.000000e-01 : f64} : tensor<1x2x5x3xf32>, tensor<1x2x5x3xf32>, tensor<1x2x5x3xf32>
// CHECK-NOT:     kiln.all_
// CHECK:         return
func.func @heads(%q: tensor<1x4x5x3xf32> {kiln.sharding = ["", "tp", "", ""]},
                 %k: tensor<1x4x5x3xf32> {kiln.sharding = ["", "tp", "", ""]},
                 %v: tensor<1x4x5x3xf32> {kiln.sharding = ["", "tp", "", ""]})
    -> (tensor<1x4x5x3xf32> {kiln.sharding = ["", "tp", "", ""]})
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.5 : f64} : tensor<1x4x5x3xf32>, tensor<1x4x5x3xf32>, tensor<1x4x5x3xf32>
  return %o : tensor<1x4x5x3xf32>
}

// -----

// A function without a mesh is left alone.
// CHECK-LABEL: func.func @single_device(
// CHECK-SAME:      tensor<4x8xf32>
// CHECK-NEXT:    return
func.func @single_device(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}

// -----

// A layer norm's backward pass under a column-parallel product (q = ln(x) w,
// w split by columns): the gradient reaching the layer norm's output, dn =
// dq w^T, is a partial sum, from which the input gradient dx, the gain's
// gradient dg and the per-row mean in between are computed. dn is summed
// once, as Megatron does, and everything after it is computed whole: one
// all-reduce of [4, 8], none of dx itself or of the [8] gradients, which
// summing dx, dg and db apart would have cost 3 exchanges.
// CHECK-LABEL: func.func @layer_norm_backward(
// CHECK:         %[[DN:.+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<4x4xf32>, tensor<4x8xf32>
// CHECK:         %[[WHOLE:.+]] = kiln.all_reduce %[[DN]], kind = sum, groups = {{\[\[}}0, 1]] : tensor<4x8xf32>
// CHECK-NOT:     kiln.all_reduce
// CHECK:         return
func.func @layer_norm_backward(%n: tensor<4x8xf32>, %g: tensor<8xf32>,
                               %w: tensor<8x8xf32> {kiln.sharding = ["", "tp"]},
                               %dq: tensor<4x8xf32> {kiln.sharding = ["", "tp"]})
    -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<8x8xf32>
  %dn = kiln.matmul %dq, %wt : tensor<4x8xf32>, tensor<8x8xf32>
  %gb = kiln.broadcast_in_dim %g, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %dng = kiln.mul %dn, %gb : tensor<4x8xf32>
  %mean = kiln.reduce_mean %dng, dims = [1] : tensor<4x8xf32>
  %meanb = kiln.broadcast_in_dim %mean, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %dx = kiln.sub %dng, %meanb : tensor<4x8xf32>
  %dnn = kiln.mul %dn, %n : tensor<4x8xf32>
  %dg = kiln.reduce_sum %dnn, dims = [0] : tensor<4x8xf32>
  %db = kiln.reduce_sum %dn, dims = [0] : tensor<4x8xf32>
  return %dx, %dg, %db : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}
