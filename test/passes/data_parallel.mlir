// The kiln-data-parallel pass: the SGD step of an MLP as kiln::jit traces
// it (the states propagate through forward and backward pass; only the
// gradients and the loss are exchanged, in one bucket), what falls back to
// whole operands (a while loop, a call, an op of a partial sum without a
// rule, a slice of the batch), the conversions between states, and the
// buckets (several with a tiny bucket-mb, a bucket closed early because a
// result is needed before the next operand exists, no overlap).
// Every case splits its arguments #0 and #1 over 2 ranks.
// RUN: kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1 bucket-mb=0.00004" | FileCheck %s --check-prefix=SMALL
// RUN: kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1 overlap=false" | FileCheck %s --check-prefix=SERIAL
// The rewritten IR verifies and round-trips.
// RUN: kiln-opt %s --split-input-file --kiln-data-parallel="ranks=2 batch-args=0,1" | kiln-opt --split-input-file --verify-roundtrip -o /dev/null

// The batch (x, onehot) is split: 4 rows per rank. The forward pass runs on
// the local rows; the loss's mean over the batch is the local mean times
// 1/2, a partial sum; the backward pass's weight gradients contract the
// batch (x^T dh), partial sums too. The gradients themselves are summed,
// as DDP sums them: the learning rate and the loss's negation apply to the
// sums. One bucket (257 floats, far below 25 MiB) carries the loss and the
// four gradients, started after the last gradient; the updates read its
// slices.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x16xf32>, %[[Y:[a-z0-9]+]]: tensor<4x4xf32>,
// CHECK-SAME:      %[[W1:[a-z0-9]+]]: tensor<16x12xf32>, %[[B1:[a-z0-9]+]]: tensor<12xf32>,
// CHECK-SAME:      %[[W2:[a-z0-9]+]]: tensor<12x4xf32>, %[[B2:[a-z0-9]+]]: tensor<4xf32>)
// CHECK-SAME:      -> (tensor<f32>, tensor<16x12xf32>, tensor<12xf32>, tensor<12x4xf32>, tensor<4xf32>)
// CHECK-NOT:     kiln.all_gather
// CHECK:         %[[H:.+]] = kiln.matmul %[[X]], %[[W1]] : tensor<4x16xf32>, tensor<16x12xf32>
// CHECK:         kiln.broadcast_in_dim %[[B1]], dims = [1] : (tensor<12xf32>) -> tensor<4x12xf32>
// CHECK:         %[[MEAN:.+]] = kiln.reduce_mean %{{.+}}, dims = [0] : tensor<4xf32>
// CHECK-NEXT:    %[[HALF:.+]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[PART:.+]] = kiln.mul %[[MEAN]], %[[HALF]] : tensor<f32>
// The cotangent of the mean, -1/8 per row, broadcast at the local shape.
// CHECK:         %[[EIGHT:.+]] = kiln.constant dense<8.000000e+00> : tensor<f32>
// CHECK:         %[[DROW:.+]] = kiln.div %{{.+}}, %[[EIGHT]] : tensor<f32>
// CHECK-NEXT:    kiln.broadcast_in_dim %[[DROW]], dims = [] : (tensor<f32>) -> tensor<4xf32>
// The relu mask's zero, made at the local shape.
// CHECK:         kiln.constant dense<0.000000e+00> : tensor<4x12xf32>
// CHECK:         %[[XT:.+]] = kiln.transpose %[[X]], permutation = [1, 0] : tensor<4x16xf32>
// CHECK-NEXT:    %[[G1:.+]] = kiln.matmul %[[XT]], %{{.+}} : tensor<16x4xf32>, tensor<4x12xf32>
// CHECK-NEXT:    %[[F0:.+]] = kiln.reshape %[[PART]] : (tensor<f32>) -> tensor<1xf32>
// CHECK:         %[[F4:.+]] = kiln.reshape %[[G1]] : (tensor<16x12xf32>) -> tensor<192xf32>
// CHECK-NEXT:    %[[ALL:.+]] = kiln.concat %[[F0]], %{{.+}}, %{{.+}}, %{{.+}}, %[[F4]] dim = 0 : tensor<1xf32>, tensor<4xf32>, tensor<48xf32>, tensor<12xf32>, tensor<192xf32>
// CHECK-NEXT:    %[[P:.+]] = kiln.all_reduce_start %[[ALL]], kind = sum, groups = {{\[\[}}0, 1]] : (tensor<257xf32>) -> tensor<257xf32>
// CHECK:         %[[SUM:.+]] = kiln.collective_wait %[[P]], %[[ALL]] : tensor<257xf32>, tensor<257xf32>
// CHECK-NEXT:    %[[L0:.+]] = kiln.slice %[[SUM]], start = [0], limit = [1], stride = [1] : tensor<257xf32>
// CHECK-NEXT:    %[[L:.+]] = kiln.reshape %[[L0]] : (tensor<1xf32>) -> tensor<f32>
// CHECK:         %[[D1:.+]] = kiln.slice %[[SUM]], start = [65], limit = [257], stride = [1] : tensor<257xf32>
// CHECK-NEXT:    %[[D1R:.+]] = kiln.reshape %[[D1]] : (tensor<192xf32>) -> tensor<16x12xf32>
// CHECK-NEXT:    %[[S1:.+]] = kiln.mul %{{.+}}, %[[D1R]] : tensor<16x12xf32>
// CHECK-NEXT:    %[[NW1:.+]] = kiln.sub %[[W1]], %[[S1]] : tensor<16x12xf32>
// CHECK:         %[[NL:.+]] = kiln.neg %[[L]] : tensor<f32>
// CHECK-NEXT:    return %[[NL]], %[[NW1]],
// CHECK-NOT:     kiln.all_reduce
// With 41-byte buckets: the loss and db2 (5 floats) and each larger
// gradient on its own, each started right after its operand.
// SMALL-LABEL: func.func @train_step(
// SMALL-COUNT-4: kiln.all_reduce_start
// SMALL-NOT:     kiln.all_reduce_start
// SMALL:         return
// Without overlap, the one bucket starts where it is waited for.
// SERIAL-LABEL: func.func @train_step(
// SERIAL:        kiln.concat
// SERIAL-NEXT:   kiln.all_reduce_start
// SERIAL-NEXT:   kiln.collective_wait
func.func @train_step(%x: tensor<8x16xf32>, %onehot: tensor<8x4xf32>,
                       %w1: tensor<16x12xf32>, %b1: tensor<12xf32>,
                       %w2: tensor<12x4xf32>, %b2: tensor<4xf32>)
    -> (tensor<f32>, tensor<16x12xf32>, tensor<12xf32>, tensor<12x4xf32>, tensor<4xf32>) {
  %0 = kiln.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x12xf32>
  %1 = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<12xf32>) -> tensor<8x12xf32>
  %2 = kiln.add %0, %1 : tensor<8x12xf32>
  %3 = kiln.relu %2 : tensor<8x12xf32>
  %4 = kiln.matmul %3, %w2 : tensor<8x12xf32>, tensor<12x4xf32>
  %5 = kiln.broadcast_in_dim %b2, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  %6 = kiln.add %4, %5 : tensor<8x4xf32>
  %7 = kiln.reduce_max %6, dims = [1] : tensor<8x4xf32>
  %8 = kiln.reshape %7 : (tensor<8xf32>) -> tensor<8x1xf32>
  %9 = kiln.broadcast_in_dim %8, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x4xf32>
  %10 = kiln.sub %6, %9 : tensor<8x4xf32>
  %11 = kiln.exp %10 : tensor<8x4xf32>
  %12 = kiln.reduce_sum %11, dims = [1] : tensor<8x4xf32>
  %13 = kiln.reshape %12 : (tensor<8xf32>) -> tensor<8x1xf32>
  %14 = kiln.log %13 : tensor<8x1xf32>
  %15 = kiln.broadcast_in_dim %14, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x4xf32>
  %16 = kiln.sub %10, %15 : tensor<8x4xf32>
  %17 = kiln.mul %onehot, %16 : tensor<8x4xf32>
  %18 = kiln.reduce_sum %17, dims = [1] : tensor<8x4xf32>
  %19 = kiln.reduce_mean %18, dims = [0] : tensor<8xf32>
  %20 = kiln.neg %19 : tensor<f32>
  %21 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %22 = kiln.neg %21 : tensor<f32>
  %23 = kiln.constant dense<8.000000e+00> : tensor<f32>
  %24 = kiln.div %22, %23 : tensor<f32>
  %25 = kiln.broadcast_in_dim %24, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %26 = kiln.broadcast_in_dim %25, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  %27 = kiln.mul %26, %onehot : tensor<8x4xf32>
  %28 = kiln.neg %27 : tensor<8x4xf32>
  %29 = kiln.reduce_sum %28, dims = [1] : tensor<8x4xf32>
  %30 = kiln.reshape %29 : (tensor<8xf32>) -> tensor<8x1xf32>
  %31 = kiln.div %30, %13 : tensor<8x1xf32>
  %32 = kiln.reshape %31 : (tensor<8x1xf32>) -> tensor<8xf32>
  %33 = kiln.broadcast_in_dim %32, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  %34 = kiln.mul %33, %11 : tensor<8x4xf32>
  %35 = kiln.add %27, %34 : tensor<8x4xf32>
  %36 = kiln.neg %35 : tensor<8x4xf32>
  %37 = kiln.reduce_sum %36, dims = [1] : tensor<8x4xf32>
  %38 = kiln.reshape %37 : (tensor<8xf32>) -> tensor<8x1xf32>
  %39 = kiln.reshape %38 : (tensor<8x1xf32>) -> tensor<8xf32>
  %40 = kiln.broadcast_in_dim %7, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  %41 = kiln.compare eq, %6, %40 : tensor<8x4xf32>
  %42 = kiln.cast %41 : tensor<8x4xi1> to tensor<8x4xf32>
  %43 = kiln.reduce_sum %42, dims = [1] : tensor<8x4xf32>
  %44 = kiln.div %39, %43 : tensor<8xf32>
  %45 = kiln.broadcast_in_dim %44, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  %46 = kiln.mul %42, %45 : tensor<8x4xf32>
  %47 = kiln.add %35, %46 : tensor<8x4xf32>
  %48 = kiln.reduce_sum %47, dims = [0] : tensor<8x4xf32>
  %49 = kiln.transpose %w2, permutation = [1, 0] : tensor<12x4xf32>
  %50 = kiln.matmul %47, %49 : tensor<8x4xf32>, tensor<4x12xf32>
  %51 = kiln.transpose %3, permutation = [1, 0] : tensor<8x12xf32>
  %52 = kiln.matmul %51, %47 : tensor<12x8xf32>, tensor<8x4xf32>
  %53 = kiln.constant dense<0.000000e+00> : tensor<8x12xf32>
  %54 = kiln.compare gt, %2, %53 : tensor<8x12xf32>
  %55 = kiln.select %54, %50, %53 : tensor<8x12xi1>, tensor<8x12xf32>
  %56 = kiln.reduce_sum %55, dims = [0] : tensor<8x12xf32>
  %57 = kiln.transpose %x, permutation = [1, 0] : tensor<8x16xf32>
  %58 = kiln.matmul %57, %55 : tensor<16x8xf32>, tensor<8x12xf32>
  %59 = kiln.constant dense<3.000000e-01> : tensor<16x12xf32>
  %60 = kiln.mul %59, %58 : tensor<16x12xf32>
  %61 = kiln.sub %w1, %60 : tensor<16x12xf32>
  %62 = kiln.constant dense<3.000000e-01> : tensor<12xf32>
  %63 = kiln.mul %62, %56 : tensor<12xf32>
  %64 = kiln.sub %b1, %63 : tensor<12xf32>
  %65 = kiln.constant dense<3.000000e-01> : tensor<12x4xf32>
  %66 = kiln.mul %65, %52 : tensor<12x4xf32>
  %67 = kiln.sub %w2, %66 : tensor<12x4xf32>
  %68 = kiln.constant dense<3.000000e-01> : tensor<4xf32>
  %69 = kiln.mul %68, %48 : tensor<4xf32>
  %70 = kiln.sub %b2, %69 : tensor<4xf32>
  return %20, %61, %64, %67, %70 : tensor<f32>, tensor<16x12xf32>, tensor<12xf32>, tensor<12x4xf32>, tensor<4xf32>
}

// -----

// No state enters a region: the loop and the call get x and y whole
// (gathered once each), and so does a slice that cuts the batch. The exp
// of a partial sum (the column sums of y) needs the whole sum first.
// CHECK-LABEL: func.func @fallbacks(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x3xf32>, %[[Y:[a-z0-9]+]]: tensor<4x3xf32>)
// CHECK:         %[[XG:.+]] = kiln.all_gather %[[X]], dim = 0, groups = {{\[\[}}0, 1]] : (tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %[[LOOP:.+]] = kiln.while(%[[XG]]) : (tensor<8x3xf32>)
// CHECK:         %[[YG:.+]] = kiln.all_gather %[[Y]], dim = 0, groups = {{\[\[}}0, 1]] : (tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %[[CALL:.+]] = call @helper(%[[YG]]) : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %[[ROWS:.+]] = kiln.slice %[[XG]], start = [1, 0], limit = [7, 3], stride = [2, 1] : tensor<8x3xf32>
// CHECK-NEXT:    %[[COLS:.+]] = kiln.reduce_sum %[[Y]], dims = [0] : tensor<4x3xf32>
// CHECK-NEXT:    %[[P:.+]] = kiln.all_reduce_start %[[COLS]], kind = sum, groups = {{\[\[}}0, 1]] : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[SUM:.+]] = kiln.collective_wait %[[P]], %[[COLS]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT:    %[[E:.+]] = kiln.exp %[[SUM]] : tensor<3xf32>
// CHECK-NEXT:    return %[[LOOP]], %[[CALL]], %[[ROWS]], %[[E]]
func.func private @helper(%a: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %n = kiln.neg %a : tensor<8x3xf32>
  return %n : tensor<8x3xf32>
}

func.func @fallbacks(%x: tensor<8x3xf32>, %y: tensor<8x3xf32>)
    -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<3x3xf32>, tensor<3xf32>) {
  %loop = kiln.while (%x) : (tensor<8x3xf32>) cond {
  ^bb0(%a: tensor<8x3xf32>):
    %s = kiln.reduce_sum %a, dims = [0, 1] : tensor<8x3xf32>
    %limit = kiln.constant dense<100.0> : tensor<f32>
    %p = kiln.compare lt, %s, %limit : tensor<f32>
    kiln.yield %p : tensor<i1>
  } do {
  ^bb0(%a: tensor<8x3xf32>):
    %d = kiln.add %a, %a : tensor<8x3xf32>
    kiln.yield %d : tensor<8x3xf32>
  }
  %call = func.call @helper(%y) : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %rows = kiln.slice %x, start = [1, 0], limit = [7, 3], stride = [2, 1] : tensor<8x3xf32>
  %cols = kiln.reduce_sum %y, dims = [0] : tensor<8x3xf32>
  %e = kiln.exp %cols : tensor<3xf32>
  return %loop, %call, %rows, %e : tensor<8x3xf32>, tensor<8x3xf32>, tensor<3x3xf32>, tensor<3xf32>
}

// -----

// kiln.sort along the columns of the split batch sorts each rank's rows:
// values and indices stay split and are gathered only to be returned. A
// sort along the batch itself needs the whole batch.
// CHECK-LABEL: func.func @sorts(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x3xf32>
// CHECK:         %[[V:.+]], %[[I:.+]] = kiln.sort %[[X]], dim = 1 descending : tensor<4x3xf32>
// CHECK-NEXT:    %[[XG:.+]] = kiln.all_gather %[[X]], dim = 0, groups = {{\[\[}}0, 1]] : (tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %{{.+}}, %[[R:.+]] = kiln.sort %[[XG]], dim = 0 : tensor<8x3xf32>
// CHECK-NEXT:    %[[VG:.+]] = kiln.all_gather %[[V]], dim = 0, {{.+}} -> tensor<8x3xf32>
// CHECK-NEXT:    %[[IG:.+]] = kiln.all_gather %[[I]], dim = 0, {{.+}} -> tensor<8x3xi64>
// CHECK-NEXT:    return %[[VG]], %[[IG]], %[[R]]
func.func @sorts(%x: tensor<8x3xf32>, %y: tensor<8x3xf32>)
    -> (tensor<8x3xf32>, tensor<8x3xi64>, tensor<8x3xi64>) {
  %v, %i = kiln.sort %x, dim = 1 descending : tensor<8x3xf32>
  %w, %r = kiln.sort %x, dim = 0 : tensor<8x3xf32>
  return %v, %i, %r : tensor<8x3xf32>, tensor<8x3xi64>, tensor<8x3xi64>
}

// -----

// Conversions between states. The maximum over the batch is an all_reduce
// max of the local maxima. x^T (sharded along columns) added to x is
// exchanged into rows by one all_to_all; the partial sum x^T x added to x
// is reduced and scattered at once; the replicated c (not a splat) is cut
// locally at rows kiln.rank * 4.
// CHECK-LABEL: func.func @conversions(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[IDS:[a-z0-9]+]]: tensor<4xi32>, %[[C:[a-z0-9]+]]: tensor<8x8xf32>)
// CHECK:         %[[RANK:.+]] = kiln.rank : tensor<i64>
// CHECK:         %[[LMAX:.+]] = kiln.reduce_max %[[X]], dims = [0] : tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX:.+]] = kiln.all_reduce %[[LMAX]], kind = max, groups = {{\[\[}}0, 1]] : tensor<8xf32>
// CHECK-NEXT:    %[[XT:.+]] = kiln.transpose %[[X]], permutation = [1, 0] : tensor<4x8xf32>
// CHECK-NEXT:    %[[ROWS:.+]] = kiln.all_to_all %[[XT]], split_dim = 0, concat_dim = 1, groups = {{\[\[}}0, 1]] : (tensor<8x4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SYM:.+]] = kiln.add %[[X]], %[[ROWS]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[GRAM:.+]] = kiln.matmul %[[XT]], %[[X]] : tensor<8x4xf32>, tensor<4x8xf32>
// CHECK-NEXT:    %[[PIECE:.+]] = kiln.reduce_scatter %[[GRAM]], kind = sum, dim = 0, groups = {{\[\[}}0, 1]] : (tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[XG:.+]] = kiln.add %[[X]], %[[PIECE]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[FOUR:.+]] = kiln.constant dense<4> : tensor<i64>
// CHECK-NEXT:    %[[AT:.+]] = kiln.mul %[[RANK]], %[[FOUR]] : tensor<i64>
// CHECK-NEXT:    %[[CL:.+]] = kiln.dynamic_slice %[[C]][%[[AT]]], size = 4 : tensor<8x8xf32>
// CHECK-NEXT:    %[[XC:.+]] = kiln.add %[[X]], %[[CL]] : tensor<4x8xf32>
func.func @conversions(%x: tensor<8x8xf32>, %ids: tensor<8xi32>, %c: tensor<8x8xf32>)
    -> (tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %max = kiln.reduce_max %x, dims = [0] : tensor<8x8xf32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<8x8xf32>
  %sym = kiln.add %x, %xt : tensor<8x8xf32>
  %gram = kiln.matmul %xt, %x : tensor<8x8xf32>, tensor<8x8xf32>
  %xg = kiln.add %x, %gram : tensor<8x8xf32>
  %xc = kiln.add %x, %c : tensor<8x8xf32>
  return %max, %sym, %xg, %xc : tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Three partial sums: two of 16 bytes, one of 64. In 25 MiB they share one
// bucket started after the last (the matmul), which overlaps the exp and
// the gathering of its result.
// CHECK-LABEL: func.func @buckets(
// CHECK:         %[[A:.+]] = kiln.reduce_sum %{{.+}}, dims = [0] : tensor<4x4xf32>
// CHECK-NEXT:    %[[B:.+]] = kiln.reduce_sum %{{.+}}, dims = [0] : tensor<4x4xf32>
// CHECK-NEXT:    %[[XT:.+]] = kiln.transpose
// CHECK-NEXT:    %[[C:.+]] = kiln.matmul %[[XT]], %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT:    %[[CF:.+]] = kiln.reshape %[[C]] : (tensor<4x4xf32>) -> tensor<16xf32>
// CHECK-NEXT:    %[[ALL:.+]] = kiln.concat %[[A]], %[[B]], %[[CF]] dim = 0 : tensor<4xf32>, tensor<4xf32>, tensor<16xf32>
// CHECK-NEXT:    %[[P:.+]] = kiln.all_reduce_start %[[ALL]], kind = sum, groups = {{\[\[}}0, 1]] : (tensor<24xf32>) -> tensor<24xf32>
// CHECK-NEXT:    %[[E:.+]] = kiln.exp
// CHECK-NEXT:    kiln.all_gather %[[E]]
// CHECK-NEXT:    %[[W:.+]] = kiln.collective_wait %[[P]], %[[ALL]] : tensor<24xf32>, tensor<24xf32>
// In 41-byte buckets: a and b (32 bytes) together, started after b, then c
// alone, started on c itself; both waits come after the exp.
// SMALL-LABEL: func.func @buckets(
// SMALL:         %[[A:.+]] = kiln.reduce_sum %{{.+}}, dims = [0] : tensor<4x4xf32>
// SMALL-NEXT:    %[[B:.+]] = kiln.reduce_sum %{{.+}}, dims = [0] : tensor<4x4xf32>
// SMALL-NEXT:    %[[AB:.+]] = kiln.concat %[[A]], %[[B]] dim = 0 : tensor<4xf32>, tensor<4xf32>
// SMALL-NEXT:    %[[P1:.+]] = kiln.all_reduce_start %[[AB]], kind = sum, groups = {{\[\[}}0, 1]] : (tensor<8xf32>) -> tensor<8xf32>
// SMALL-NEXT:    %[[XT:.+]] = kiln.transpose
// SMALL-NEXT:    %[[C:.+]] = kiln.matmul %[[XT]], %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>
// SMALL-NEXT:    %[[P2:.+]] = kiln.all_reduce_start %[[C]], kind = sum, groups = {{\[\[}}0, 1]] : (tensor<4x4xf32>) -> tensor<4x4xf32>
// SMALL-NEXT:    kiln.exp
// SMALL-NEXT:    kiln.all_gather
// SMALL-NEXT:    %[[W1:.+]] = kiln.collective_wait %[[P1]], %[[AB]] : tensor<8xf32>, tensor<8xf32>
// SMALL-NEXT:    %[[SA:.+]] = kiln.slice %[[W1]], start = [0], limit = [4], stride = [1] : tensor<8xf32>
// SMALL-NEXT:    %[[SB:.+]] = kiln.slice %[[W1]], start = [4], limit = [8], stride = [1] : tensor<8xf32>
// SMALL-NEXT:    %[[W2:.+]] = kiln.collective_wait %[[P2]], %[[C]] : tensor<4x4xf32>, tensor<4x4xf32>
// SMALL-NEXT:    return %{{.+}}, %[[SA]], %[[SB]], %[[W2]]
// Without overlap, the exchange starts right before the wait.
// SERIAL-LABEL: func.func @buckets(
// SERIAL:        kiln.exp
// SERIAL-NEXT:   kiln.all_gather
// SERIAL-NEXT:   kiln.reshape
// SERIAL-NEXT:   kiln.concat
// SERIAL-NEXT:   kiln.all_reduce_start
// SERIAL-NEXT:   kiln.collective_wait
func.func @buckets(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>)
    -> (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>) {
  %a = kiln.reduce_sum %x, dims = [0] : tensor<8x4xf32>
  %b = kiln.reduce_sum %y, dims = [0] : tensor<8x4xf32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<8x4xf32>
  %c = kiln.matmul %xt, %y : tensor<4x8xf32>, tensor<8x4xf32>
  %e = kiln.exp %x : tensor<8x4xf32>
  return %e, %a, %b, %c : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>
}

// -----

// A bucket must complete before any of its results is used: a * a needs a
// whole before b exists, so a and b go in separate buckets however large
// the cap.
// CHECK-LABEL: func.func @bucket_order(
// CHECK:         %[[A:.+]] = kiln.reduce_sum %{{.+}}, dims = [0] : tensor<4x4xf32>
// CHECK-NEXT:    %[[PA:.+]] = kiln.all_reduce_start %[[A]], kind = sum
// CHECK-NEXT:    %[[WA:.+]] = kiln.collective_wait %[[PA]], %[[A]]
// CHECK-NEXT:    %[[SQ:.+]] = kiln.mul %[[WA]], %[[WA]] : tensor<4xf32>
// CHECK-NEXT:    %[[B:.+]] = kiln.reduce_sum %{{.+}}, dims = [0] : tensor<4x4xf32>
// CHECK-NEXT:    %[[PB:.+]] = kiln.all_reduce_start %[[B]], kind = sum
// CHECK-NEXT:    %[[WB:.+]] = kiln.collective_wait %[[PB]], %[[B]]
// CHECK-NEXT:    return %[[SQ]], %[[WB]]
func.func @bucket_order(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %a = kiln.reduce_sum %x, dims = [0] : tensor<8x4xf32>
  %sq = kiln.mul %a, %a : tensor<4xf32>
  %b = kiln.reduce_sum %y, dims = [0] : tensor<8x4xf32>
  return %sq, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Adam's moments read the gradient g twice, once scaled by 1 - beta1 and
// once squared: g itself is summed once (9 floats, not 18), and both
// readers use the sum.
// CHECK-LABEL: func.func @adam_moments(
// CHECK:         %[[G:.+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<2x3xf32>
// CHECK-NEXT:    %[[P:.+]] = kiln.all_reduce_start %[[G]], kind = sum, groups = {{\[\[}}0, 1]] : (tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK:         %[[SUM:.+]] = kiln.collective_wait %[[P]], %[[G]] : tensor<3x3xf32>, tensor<3x3xf32>
// CHECK-NEXT:    kiln.mul %{{.+}}, %[[SUM]] : tensor<3x3xf32>
// CHECK:         kiln.mul %[[SUM]], %[[SUM]] : tensor<3x3xf32>
// CHECK-NOT:     kiln.all_reduce
// CHECK:         return
func.func @adam_moments(%x: tensor<4x3xf32>, %d: tensor<4x3xf32>, %m: tensor<3x3xf32>, %v: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<4x3xf32>
  %g = kiln.matmul %xt, %d : tensor<3x4xf32>, tensor<4x3xf32>
  %c1 = kiln.constant dense<1.000000e-01> : tensor<3x3xf32>
  %b1 = kiln.constant dense<9.000000e-01> : tensor<3x3xf32>
  %sg = kiln.mul %c1, %g : tensor<3x3xf32>
  %bm = kiln.mul %b1, %m : tensor<3x3xf32>
  %m1 = kiln.add %bm, %sg : tensor<3x3xf32>
  %gg = kiln.mul %g, %g : tensor<3x3xf32>
  %c2 = kiln.constant dense<1.000000e-03> : tensor<3x3xf32>
  %sgg = kiln.mul %c2, %gg : tensor<3x3xf32>
  %b2 = kiln.constant dense<9.990000e-01> : tensor<3x3xf32>
  %bv = kiln.mul %b2, %v : tensor<3x3xf32>
  %v1 = kiln.add %bv, %sgg : tensor<3x3xf32>
  return %m1, %v1 : tensor<3x3xf32>, tensor<3x3xf32>
}
