// The kiln-zero pass on kiln-data-parallel's output: one SGD step with
// momentum of a linear layer (w 3x3, b 3) on a batch of 4, split over 2
// ranks. The momentum buffers (arguments #4, #5, results #3, #4) are
// sharded in every stage, the parameters (arguments #2, #3, results #1,
// #2) too with stage 3. Blocks: w's 9 elements padded to 10, 5 per rank;
// b's 3 padded to 4, 2 per rank.
// RUN: kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="function=step stage=1 sharded-args=4,5 sharded-results=3,4" | FileCheck %s --check-prefix=ZERO1
// RUN: kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="function=step stage=2 sharded-args=4,5 sharded-results=3,4" | FileCheck %s --check-prefix=ZERO2
// RUN: kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="function=step stage=3 sharded-args=2,3,4,5 sharded-results=1,2,3,4" | FileCheck %s --check-prefix=ZERO3
// RUN: kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="function=step stage=2 sharded-args=4,5 sharded-results=3,4 bucket-mb=0.00001" | FileCheck %s --check-prefix=SMALL
// RUN: kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="function=step stage=3 sharded-args=2,3,4,5 sharded-results=1,2,3,4 overlap=false" | FileCheck %s --check-prefix=SERIAL
// RUN: kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="function=second_moment stage=2 sharded-args=2 sharded-results=0" | FileCheck %s --check-prefix=SCALED
// The rewritten IR verifies and round-trips.
// RUN: kiln-opt %s --kiln-data-parallel="ranks=2 batch-args=0,1" --kiln-zero="function=step stage=3 sharded-args=2,3,4,5 sharded-results=1,2,3,4" | kiln-opt --verify-roundtrip -o /dev/null

// ZeRO-1: the gradients stay in kiln-data-parallel's all-reduce bucket
// (loss, w's, b's); each rank cuts its block of the reduced gradients and
// of the replicated parameters at kiln.rank * 5 and kiln.rank * 2, updates
// its blocks of the momentum and the parameters, and all-gathers the new
// parameters, started as soon as each block exists.
// ZERO1-LABEL: func.func @step
// ZERO1-SAME: %[[W:[^:]+]]: tensor<3x3xf32>, %[[B:[^:]+]]: tensor<3xf32>, %[[MW:[^:]+]]: tensor<5xf32>, %[[MB:[^:]+]]: tensor<2xf32>)
// ZERO1-SAME: -> (tensor<f32>, tensor<3x3xf32>, tensor<3xf32>, tensor<5xf32>, tensor<2xf32>)
// ZERO1: %[[RANK:.+]] = kiln.rank
// ZERO1: %[[FIVE:.+]] = kiln.constant dense<5> : tensor<i64>
// ZERO1: %[[AT5:.+]] = kiln.mul %[[RANK]], %[[FIVE]]
// ZERO1: kiln.all_reduce_start %{{.+}} : (tensor<13xf32>) -> tensor<13xf32>
// ZERO1: %[[MOM:.+]] = kiln.mul %[[MW]], %{{.+}} : tensor<5xf32>
// ZERO1: %[[SUM:.+]] = kiln.collective_wait
// ZERO1: %[[GW:.+]] = kiln.slice %[[SUM]], start = [1], limit = [10]
// ZERO1: %[[GWPAD:.+]] = kiln.pad %{{.+}}, %{{.+}}, low = [0], high = [1], interior = [0] : tensor<9xf32>
// ZERO1: %[[GWBLOCK:.+]] = kiln.dynamic_slice %[[GWPAD]][%[[AT5]]], size = 5 : tensor<10xf32>
// ZERO1: %[[NEWMW:.+]] = kiln.add %[[MOM]], %[[GWBLOCK]] : tensor<5xf32>
// ZERO1: %[[WFLAT:.+]] = kiln.reshape %[[W]] : (tensor<3x3xf32>) -> tensor<9xf32>
// ZERO1: %[[WPAD:.+]] = kiln.pad %[[WFLAT]]
// ZERO1: %[[WBLOCK:.+]] = kiln.dynamic_slice %[[WPAD]][%[[AT5]]], size = 5
// ZERO1: %[[NEWW:.+]] = kiln.sub %[[WBLOCK]], %{{.+}} : tensor<5xf32>
// ZERO1-NEXT: %[[PW:.+]] = kiln.all_gather_start %[[NEWW]], dim = 0, groups = {{\[\[}}0, 1]] : (tensor<5xf32>) -> tensor<10xf32>
// ZERO1: %[[NEWB:.+]] = kiln.sub %{{.+}}, %{{.+}} : tensor<2xf32>
// ZERO1-NEXT: kiln.all_gather_start %[[NEWB]], dim = 0
// ZERO1: %[[WHOLE:.+]] = kiln.collective_wait %[[PW]], %[[NEWW]] : tensor<10xf32>, tensor<5xf32>
// ZERO1: %[[CUT:.+]] = kiln.slice %[[WHOLE]], start = [0], limit = [9]
// ZERO1: %[[WOUT:.+]] = kiln.reshape %[[CUT]] : (tensor<9xf32>) -> tensor<3x3xf32>
// ZERO1: return %{{.+}}, %[[WOUT]], %{{.+}}, %[[NEWMW]], %{{.+}} : tensor<f32>, tensor<3x3xf32>, tensor<3xf32>, tensor<5xf32>, tensor<2xf32>
// ZERO1-NOT: kiln.reduce_scatter
// ZERO1-LABEL: func.func @second_moment

// ZeRO-2: the loss alone is all-reduced; the two gradients, flattened and
// padded, are laid out block-major ([2, 5] and [2, 2] joined along 1) and
// reduce-scattered in one bucket, each rank receiving row r: its block of
// each summed gradient. No whole reduced gradient exists.
// ZERO2-LABEL: func.func @step
// ZERO2: %[[LOSS:.+]] = kiln.all_reduce_start %{{.+}} : (tensor<f32>) -> tensor<f32>
// ZERO2: %[[GW:.+]] = kiln.matmul %{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<2x3xf32>
// ZERO2: %[[GWFLAT:.+]] = kiln.reshape %[[GW]] : (tensor<3x3xf32>) -> tensor<9xf32>
// ZERO2: %[[GWPAD:.+]] = kiln.pad %[[GWFLAT]]
// ZERO2: %[[GB:.+]] = kiln.reduce_sum %{{.+}}, dims = [0] : tensor<2x3xf32>
// ZERO2: %[[GBPAD:.+]] = kiln.pad %[[GB]]
// ZERO2: %[[ROWSW:.+]] = kiln.reshape %[[GWPAD]] : (tensor<10xf32>) -> tensor<2x5xf32>
// ZERO2: %[[ROWSB:.+]] = kiln.reshape %[[GBPAD]] : (tensor<4xf32>) -> tensor<2x2xf32>
// ZERO2: %[[LAYOUT:.+]] = kiln.concat %[[ROWSW]], %[[ROWSB]] dim = 1 : tensor<2x5xf32>, tensor<2x2xf32>
// ZERO2-NEXT: %[[P:.+]] = kiln.reduce_scatter_start %[[LAYOUT]], kind = sum, dim = 0, groups = {{\[\[}}0, 1]] : (tensor<2x7xf32>) -> tensor<1x7xf32>
// ZERO2: %[[ROW:.+]] = kiln.collective_wait %[[P]], %[[LAYOUT]] : tensor<1x7xf32>, tensor<2x7xf32>
// ZERO2: %[[S0:.+]] = kiln.slice %[[ROW]], start = [0, 0], limit = [1, 5]
// ZERO2: %[[GWBLOCK:.+]] = kiln.reshape %[[S0]] : (tensor<1x5xf32>) -> tensor<5xf32>
// ZERO2: %[[S1:.+]] = kiln.slice %[[ROW]], start = [0, 5], limit = [1, 7]
// ZERO2: %[[GBBLOCK:.+]] = kiln.reshape %[[S1]] : (tensor<1x2xf32>) -> tensor<2xf32>
// ZERO2: %[[NEWMW:.+]] = kiln.add %{{.+}}, %[[GWBLOCK]] : tensor<5xf32>
// ZERO2: %[[NEWMB:.+]] = kiln.add %{{.+}}, %[[GBBLOCK]] : tensor<2xf32>
// ZERO2: kiln.all_gather_start
// ZERO2: kiln.all_gather_start
// ZERO2: %[[L:.+]] = kiln.collective_wait %[[LOSS]]
// ZERO2-NEXT: %[[MEAN:.+]] = kiln.mul %[[L]], %{{.+}} : tensor<f32>
// ZERO2: return %[[MEAN]], %{{.+}}, %{{.+}}, %[[NEWMW]], %[[NEWMB]]
// ZERO2-NOT: kiln.all_reduce
// ZERO2-LABEL: func.func @second_moment

// ZeRO-3: the parameters are blocks too. The forward pass gathers w right
// before the matmul (started at the top) and b right before its broadcast
// (started after the matmul, the previous reader); the backward pass of
// this layer reads neither (x^T d and the sum of d), so nothing is
// gathered again. The update runs on the blocks and returns them.
// ZERO3-LABEL: func.func @step
// ZERO3-SAME: %[[W:[^:]+]]: tensor<5xf32>, %[[B:[^:]+]]: tensor<2xf32>, %[[MW:[^:]+]]: tensor<5xf32>, %[[MB:[^:]+]]: tensor<2xf32>)
// ZERO3-SAME: -> (tensor<f32>, tensor<5xf32>, tensor<2xf32>, tensor<5xf32>, tensor<2xf32>)
// ZERO3-NEXT: %[[PW:.+]] = kiln.all_gather_start %[[W]], dim = 0, groups = {{\[\[}}0, 1]] : (tensor<5xf32>) -> tensor<10xf32>
// ZERO3: %[[WW:.+]] = kiln.collective_wait %[[PW]], %[[W]]
// ZERO3-NEXT: %[[WCUT:.+]] = kiln.slice %[[WW]], start = [0], limit = [9]
// ZERO3-NEXT: %[[WFULL:.+]] = kiln.reshape %[[WCUT]] : (tensor<9xf32>) -> tensor<3x3xf32>
// ZERO3-NEXT: kiln.matmul %{{.+}}, %[[WFULL]]
// ZERO3-NEXT: %[[PB:.+]] = kiln.all_gather_start %[[B]], dim = 0
// ZERO3-NEXT: %[[BW:.+]] = kiln.collective_wait %[[PB]], %[[B]]
// ZERO3-NEXT: %[[BFULL:.+]] = kiln.slice %[[BW]], start = [0], limit = [3]
// ZERO3-NEXT: kiln.broadcast_in_dim %[[BFULL]]
// ZERO3: kiln.reduce_scatter_start %{{.+}} : (tensor<2x7xf32>) -> tensor<1x7xf32>
// ZERO3: %[[NEWMW:.+]] = kiln.add %{{.+}}, %{{.+}} : tensor<5xf32>
// ZERO3: %[[NEWMB:.+]] = kiln.add %{{.+}}, %{{.+}} : tensor<2xf32>
// ZERO3: %[[NEWW:.+]] = kiln.sub %[[W]], %{{.+}} : tensor<5xf32>
// ZERO3: %[[NEWB:.+]] = kiln.sub %[[B]], %{{.+}} : tensor<2xf32>
// ZERO3: return %{{.+}}, %[[NEWW]], %[[NEWB]], %[[NEWMW]], %[[NEWMB]] : tensor<f32>, tensor<5xf32>, tensor<2xf32>, tensor<5xf32>, tensor<2xf32>
// ZERO3-NOT: kiln.all_gather
// ZERO3-LABEL: func.func @second_moment

// A bucket cap below the gradients' size: one reduce-scatter each, w's
// started right after its gradient, before b's gradient is computed.
// SMALL-LABEL: func.func @step
// SMALL: kiln.reduce_scatter_start %{{.+}} : (tensor<10xf32>) -> tensor<5xf32>
// SMALL-NEXT: kiln.reduce_sum %{{.+}}, dims = [0]
// SMALL: kiln.reduce_scatter_start %{{.+}} : (tensor<4xf32>) -> tensor<2xf32>

// Without overlap every wait directly follows its start.
// SERIAL-LABEL: func.func @step
// SERIAL: kiln.all_gather_start
// SERIAL-NEXT: kiln.collective_wait
// SERIAL: kiln.all_gather_start
// SERIAL-NEXT: kiln.collective_wait
// SERIAL: kiln.reduce_scatter_start
// SERIAL-NEXT: kiln.collective_wait
// SERIAL: kiln.all_reduce_start
// SERIAL-NEXT: kiln.collective_wait
// SERIAL-NEXT: kiln.mul
// SERIAL-NEXT: return
func.func @step(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %w: tensor<3x3xf32>, %b: tensor<3xf32>, %mw: tensor<3x3xf32>, %mb: tensor<3xf32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3xf32>) {
  %y0 = kiln.matmul %x, %w : tensor<4x3xf32>, tensor<3x3xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %y = kiln.add %y0, %bb : tensor<4x3xf32>
  %d = kiln.sub %y, %t : tensor<4x3xf32>
  %sq = kiln.mul %d, %d : tensor<4x3xf32>
  %s = kiln.reduce_sum %sq, dims = [0, 1] : tensor<4x3xf32>
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %loss = kiln.mul %s, %half : tensor<f32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<4x3xf32>
  %gw = kiln.matmul %xt, %d : tensor<3x4xf32>, tensor<4x3xf32>
  %gb = kiln.reduce_sum %d, dims = [0] : tensor<4x3xf32>
  %muw = kiln.constant dense<9.000000e-01> : tensor<3x3xf32>
  %mub = kiln.constant dense<9.000000e-01> : tensor<3xf32>
  %lrw = kiln.constant dense<1.000000e-01> : tensor<3x3xf32>
  %lrb = kiln.constant dense<1.000000e-01> : tensor<3xf32>
  %mw1 = kiln.mul %mw, %muw : tensor<3x3xf32>
  %mw2 = kiln.add %mw1, %gw : tensor<3x3xf32>
  %mb1 = kiln.mul %mb, %mub : tensor<3xf32>
  %mb2 = kiln.add %mb1, %gb : tensor<3xf32>
  %dw = kiln.mul %lrw, %mw2 : tensor<3x3xf32>
  %w1 = kiln.sub %w, %dw : tensor<3x3xf32>
  %db = kiln.mul %lrb, %mb2 : tensor<3xf32>
  %b1 = kiln.sub %b, %db : tensor<3xf32>
  return %loss, %w1, %b1, %mw2, %mb2 : tensor<f32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3xf32>
}

// Adam's second moment reads g twice, once scaled: kiln-data-parallel sums
// g once and scales the sum; kiln-zero reduce-scatters g and scales its
// block.
// SCALED-LABEL: func.func @second_moment
// SCALED-SAME: %[[V:[^:]+]]: tensor<2xf32>) -> tensor<2xf32>
// SCALED: %[[G:.+]] = kiln.reduce_sum %{{.+}}, dims = [0] : tensor<2x3xf32>
// SCALED: %[[GPAD:.+]] = kiln.pad %[[G]]
// SCALED-NEXT: %[[P:.+]] = kiln.reduce_scatter_start %[[GPAD]], kind = sum, dim = 0, groups = {{\[\[}}0, 1]] : (tensor<4xf32>) -> tensor<2xf32>
// SCALED-NEXT: %[[C:.+]] = kiln.constant dense<1.000000e-03> : tensor<2xf32>
// SCALED-NEXT: %[[BLOCK:.+]] = kiln.collective_wait %[[P]], %[[GPAD]]
// SCALED-NEXT: %[[CG:.+]] = kiln.mul %[[C]], %[[BLOCK]] : tensor<2xf32>
// SCALED-NEXT: %[[CGG:.+]] = kiln.mul %[[CG]], %[[BLOCK]] : tensor<2xf32>
// SCALED: %[[BV:.+]] = kiln.mul %{{.+}}, %[[V]] : tensor<2xf32>
// SCALED-NEXT: %[[NEW:.+]] = kiln.add %[[BV]], %[[CGG]] : tensor<2xf32>
// SCALED-NEXT: return %[[NEW]] : tensor<2xf32>
// SCALED-NOT: kiln.reduce_scatter_start
// SCALED-NOT: kiln.all_reduce
func.func @second_moment(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %d = kiln.sub %x, %t : tensor<4x3xf32>
  %g = kiln.reduce_sum %d, dims = [0] : tensor<4x3xf32>
  %c = kiln.constant dense<1.000000e-03> : tensor<3xf32>
  %cg = kiln.mul %c, %g : tensor<3xf32>
  %cgg = kiln.mul %cg, %g : tensor<3xf32>
  %beta = kiln.constant dense<9.990000e-01> : tensor<3xf32>
  %bv = kiln.mul %beta, %v : tensor<3xf32>
  %v1 = kiln.add %bv, %cgg : tensor<3xf32>
  return %v1 : tensor<3xf32>
}
