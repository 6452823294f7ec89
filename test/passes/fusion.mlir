// The kiln-fuse pass: one case per kind of group (elementwise chains,
// reductions with prologue and epilogue, siblings, matmul epilogues), the
// rules that keep groups apart (no duplicated producer, no cycle, no matmul
// prologue, no reduction of a reduction), diamonds, splat constants and
// fusion inside control-flow bodies.
// RUN: kiln-opt %s --split-input-file --kiln-fuse | FileCheck %s
// The fused IR verifies and round-trips.
// RUN: kiln-opt %s --split-input-file --kiln-fuse | kiln-opt --split-input-file --verify-roundtrip -o /dev/null

// gelu(x * a + b) * c with the tanh approximation is one elementwise region.
// Its splat constants are copied into the region, not passed as inputs.
// CHECK-LABEL: func.func @gelu_chain(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<64xf32>, %[[A:[a-z0-9]+]]: tensor<64xf32>, %[[B:[a-z0-9]+]]: tensor<64xf32>, %[[C:[a-z0-9]+]]: tensor<64xf32>)
// CHECK-NOT:     kiln.constant
// CHECK:         %[[Y:.+]] = kiln.fused elementwise (%[[X]], %[[A]], %[[B]], %[[C]]) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
// CHECK-NEXT:    ^bb0(%[[X0:.+]]: tensor<64xf32>, %[[A0:.+]]: tensor<64xf32>, %[[B0:.+]]: tensor<64xf32>, %[[C0:.+]]: tensor<64xf32>):
// CHECK-NEXT:      %[[XA:.+]] = kiln.mul %[[X0]], %[[A0]]
// CHECK-NEXT:      %[[U:.+]] = kiln.add %[[XA]], %[[B0]]
// CHECK:           kiln.tanh
// CHECK:           %[[R:.+]] = kiln.mul %{{.+}}, %[[C0]]
// CHECK-NEXT:      kiln.yield %[[R]] : tensor<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]]
func.func @gelu_chain(%x: tensor<64xf32>, %a: tensor<64xf32>, %b: tensor<64xf32>,
                      %c: tensor<64xf32>) -> tensor<64xf32> {
  %half = kiln.constant dense<0.5> : tensor<64xf32>
  %one = kiln.constant dense<1.0> : tensor<64xf32>
  %k0 = kiln.constant dense<0.797884583> : tensor<64xf32>
  %k1 = kiln.constant dense<0.044715> : tensor<64xf32>
  %xa = kiln.mul %x, %a : tensor<64xf32>
  %u = kiln.add %xa, %b : tensor<64xf32>
  %u2 = kiln.mul %u, %u : tensor<64xf32>
  %u3 = kiln.mul %u2, %u : tensor<64xf32>
  %t0 = kiln.mul %u3, %k1 : tensor<64xf32>
  %t1 = kiln.add %u, %t0 : tensor<64xf32>
  %t2 = kiln.mul %t1, %k0 : tensor<64xf32>
  %t3 = kiln.tanh %t2 : tensor<64xf32>
  %t4 = kiln.add %t3, %one : tensor<64xf32>
  %t5 = kiln.mul %u, %half : tensor<64xf32>
  %g = kiln.mul %t5, %t4 : tensor<64xf32>
  %y = kiln.mul %g, %c : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// A broadcast and a reshape join the chain.
// CHECK-LABEL: func.func @broadcast_reshape_chain(
// CHECK:         kiln.fused elementwise (%{{.+}}, %{{.+}}) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<32xf32>
// CHECK:           kiln.broadcast_in_dim
// CHECK:           kiln.add
// CHECK:           kiln.exp
// CHECK:           kiln.reshape
// CHECK:           kiln.yield
// CHECK-NOT:     kiln.fused
func.func @broadcast_reshape_chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<32xf32> {
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %s = kiln.add %x, %bb : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  %r = kiln.reshape %e : (tensor<4x8xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// Softmax: both reductions with everything around them in one region.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[Y:.+]] = kiln.fused reduction (%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK:           kiln.reduce_max
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      kiln.sub
// CHECK-NEXT:      kiln.exp
// CHECK-NEXT:      kiln.reduce_sum
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      kiln.div
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<4x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %s = kiln.sub %x, %mb : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<4x8xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = kiln.div %e, %zb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Layer norm: the two means, the [4]-shaped epsilon add and rsqrt between
// them, and the scale and shift by broadcast parameters are one region.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[G:[a-z0-9]+]]: tensor<8xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>)
// CHECK-NEXT:    %[[Y:.+]] = kiln.fused reduction (%[[X]], %[[G]], %[[B]])
// CHECK-COUNT-2:   kiln.reduce_mean
// CHECK:           kiln.constant dense<9.99999974E-6> : tensor<4xf32>
// CHECK:           kiln.rsqrt
// CHECK:           kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]]
func.func @layer_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %mean = kiln.reduce_mean %x, dims = [1] : tensor<4x8xf32>
  %mb = kiln.broadcast_in_dim %mean, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %xc = kiln.sub %x, %mb : tensor<4x8xf32>
  %sq = kiln.mul %xc, %xc : tensor<4x8xf32>
  %var = kiln.reduce_mean %sq, dims = [1] : tensor<4x8xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<4xf32>
  %ve = kiln.add %var, %eps : tensor<4xf32>
  %r = kiln.rsqrt %ve : tensor<4xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %n = kiln.mul %xc, %rb : tensor<4x8xf32>
  %gb = kiln.broadcast_in_dim %g, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %s = kiln.mul %n, %gb : tensor<4x8xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %y = kiln.add %s, %bb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// log-sum-exp: max, shifted exp, sum, log and the add back of the max.
// CHECK-LABEL: func.func @log_sum_exp(
// CHECK-NEXT:    %[[Y:.+]] = kiln.fused reduction (%{{.+}}) : (tensor<3x16xf32>) -> tensor<3xf32> {
// CHECK:           kiln.reduce_max
// CHECK:           kiln.reduce_sum
// CHECK-NEXT:      kiln.log
// CHECK-NEXT:      kiln.add
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]]
func.func @log_sum_exp(%x: tensor<3x16xf32>) -> tensor<3xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<3x16xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
  %s = kiln.sub %x, %mb : tensor<3x16xf32>
  %e = kiln.exp %s : tensor<3x16xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<3x16xf32>
  %l = kiln.log %z : tensor<3xf32>
  %y = kiln.add %l, %m : tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Multi-output fusion: two elementwise ops and two reductions that read the
// same input form one region each, with two results.
// CHECK-LABEL: func.func @siblings(
// CHECK-SAME:      %[[X:.+]]: tensor<16xf32>, %[[M:.+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[E:.+]]:2 = kiln.fused elementwise (%[[X]]) : (tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
// CHECK:           %[[EXP:.+]] = kiln.exp
// CHECK-NEXT:      %[[SIN:.+]] = kiln.sin
// CHECK-NEXT:      kiln.yield %[[EXP]], %[[SIN]]
// CHECK:         %[[R:.+]]:2 = kiln.fused reduction (%[[M]]) : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK:           %[[SUM:.+]] = kiln.reduce_sum
// CHECK-NEXT:      %[[MAX:.+]] = kiln.reduce_max
// CHECK-NEXT:      kiln.yield %[[SUM]], %[[MAX]]
// CHECK:         return %[[E]]#0, %[[E]]#1, %[[R]]#0, %[[R]]#1
func.func @siblings(%x: tensor<16xf32>, %m: tensor<4x8xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = kiln.exp %x : tensor<16xf32>
  %b = kiln.sin %x : tensor<16xf32>
  %s = kiln.reduce_sum %m, dims = [1] : tensor<4x8xf32>
  %t = kiln.reduce_max %m, dims = [1] : tensor<4x8xf32>
  return %a, %b, %s, %t : tensor<16xf32>, tensor<16xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Siblings over different shapes, or reductions over different dims, are
// not merged: they would not be one loop nest.
// CHECK-LABEL: func.func @siblings_apart(
// CHECK-NOT:     kiln.fused
// CHECK:         return
func.func @siblings_apart(%m: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %s = kiln.reduce_sum %m, dims = [1] : tensor<4x8xf32>
  %t = kiln.reduce_max %m, dims = [0] : tensor<4x8xf32>
  return %s, %t : tensor<4xf32>, tensor<8xf32>
}

// -----

// Matmul epilogue: bias (with its broadcast), relu and a residual add. The
// matmul's operands are inputs of the region.
// CHECK-LABEL: func.func @matmul_epilogue(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>, %[[RES:[a-z0-9]+]]: tensor<4x16xf32>)
// CHECK-NEXT:    %[[Y:.+]] = kiln.fused matmul_epilogue (%[[B]], %[[X]], %[[W]], %[[RES]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.broadcast_in_dim
// CHECK-NEXT:      kiln.matmul
// CHECK-NEXT:      kiln.add
// CHECK-NEXT:      kiln.relu
// CHECK-NEXT:      kiln.add
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]]
func.func @matmul_epilogue(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>,
                           %res: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
  %m = kiln.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32>
  %a = kiln.add %m, %bb : tensor<4x16xf32>
  %r = kiln.relu %a : tensor<4x16xf32>
  %y = kiln.add %r, %res : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Two layers: each matmul gets its own epilogue region; the second matmul
// never joins the first one's region (one matmul per region) and the
// elementwise prologue of a matmul stays outside (it would be recomputed per
// output tile).
// CHECK-LABEL: func.func @two_layers(
// CHECK:         %[[IN:.+]] = kiln.fused elementwise
// CHECK:           kiln.tanh
// CHECK:           kiln.neg
// CHECK:         %[[H:.+]] = kiln.fused matmul_epilogue (%[[IN]], %{{.+}})
// CHECK:           kiln.matmul
// CHECK-NEXT:      kiln.relu
// CHECK:         %[[O:.+]] = kiln.fused matmul_epilogue (%[[H]], %{{.+}})
// CHECK:           kiln.matmul
// CHECK-NEXT:      kiln.sigmoid
// CHECK:         return %[[O]]
func.func @two_layers(%x: tensor<4x4xf32>, %w1: tensor<4x4xf32>, %w2: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %t = kiln.tanh %x : tensor<4x4xf32>
  %in = kiln.neg %t : tensor<4x4xf32>
  %m1 = kiln.matmul %in, %w1 : tensor<4x4xf32>, tensor<4x4xf32>
  %h = kiln.relu %m1 : tensor<4x4xf32>
  %m2 = kiln.matmul %h, %w2 : tensor<4x4xf32>, tensor<4x4xf32>
  %o = kiln.sigmoid %m2 : tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}

// -----

// An epilogue op that changes the shape of the matmul's result does not
// join the epilogue.
// CHECK-LABEL: func.func @epilogue_reshape(
// CHECK:         kiln.fused matmul_epilogue
// CHECK:           kiln.matmul
// CHECK-NEXT:      kiln.relu
// CHECK-NEXT:      kiln.yield
// CHECK:         kiln.fused elementwise
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      kiln.reshape
// CHECK-NEXT:      kiln.exp
func.func @epilogue_reshape(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<16xf32> {
  %m = kiln.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32>
  %r = kiln.relu %m : tensor<4x4xf32>
  %f = kiln.reshape %r : (tensor<4x4xf32>) -> tensor<16xf32>
  %e = kiln.exp %f : tensor<16xf32>
  return %e : tensor<16xf32>
}

// -----

// No duplication: the reduction feeds its epilogue inside the region and a
// transpose outside it, so the region yields it as a second result; it is
// computed once. The matmul read by two epilogues is computed once too.
// CHECK-LABEL: func.func @no_duplication(
// CHECK:         %[[R:.+]]:2 = kiln.fused reduction
// CHECK-COUNT-1:   kiln.reduce_sum
// CHECK-NOT:       kiln.reduce_sum
// CHECK:           kiln.yield %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK:         kiln.transpose %[[R]]#
// CHECK:         kiln.fused matmul_epilogue
// CHECK-COUNT-1:   kiln.matmul
// CHECK-NOT:       kiln.matmul
// CHECK:           kiln.relu
// CHECK:           kiln.sigmoid
// CHECK:         return
func.func @no_duplication(%x: tensor<4x8x2xf32>, %a: tensor<4x4xf32>, %b: tensor<4x4xf32>)
    -> (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %s = kiln.reduce_sum %x, dims = [2] : tensor<4x8x2xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  %t = kiln.transpose %s, permutation = [1, 0] : tensor<4x8xf32>
  %m = kiln.matmul %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
  %r = kiln.relu %m : tensor<4x4xf32>
  %g = kiln.sigmoid %m : tensor<4x4xf32>
  return %e, %t, %r, %g : tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// No cycle: %d reads %b (in the region of %a and %b) and the transpose of
// %a. Putting %d in that region would make it both feed and read the
// transpose, so %d stays outside, after the transpose.
// CHECK-LABEL: func.func @no_cycle(
// CHECK:         %[[F:.+]]:2 = kiln.fused elementwise
// CHECK:           %[[A:.+]] = kiln.exp
// CHECK-NEXT:      %[[B:.+]] = kiln.mul
// CHECK-NEXT:      kiln.yield %[[A]], %[[B]]
// CHECK:         %[[T:.+]] = kiln.transpose %[[F]]#0
// CHECK-NEXT:    %[[D:.+]] = kiln.add %[[F]]#1, %[[T]]
// CHECK-NEXT:    return %[[D]]
func.func @no_cycle(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = kiln.exp %x : tensor<4x4xf32>
  %b = kiln.mul %a, %a : tensor<4x4xf32>
  %t = kiln.transpose %a, permutation = [1, 0] : tensor<4x4xf32>
  %d = kiln.add %b, %t : tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// -----

// No cycle through another group: %c reads %a and the matmul, which reads
// %a too. %a and %c cannot share a region that leaves the matmul out (the
// matmul's group would be fed by it and feed it), and %a cannot join the
// matmul's region (no prologue), so %c joins the matmul alone.
// CHECK-LABEL: func.func @no_cycle_through_group(
// CHECK:         %[[A:.+]] = kiln.exp %{{.+}} : tensor<4x4xf32>
// CHECK-NEXT:    %[[R:.+]] = kiln.fused matmul_epilogue (%[[A]], %{{.+}})
// CHECK:           kiln.matmul
// CHECK-NEXT:      kiln.add
// CHECK-NEXT:      kiln.yield
// CHECK:         return %[[R]]
func.func @no_cycle_through_group(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = kiln.exp %x : tensor<4x4xf32>
  %m = kiln.matmul %a, %w : tensor<4x4xf32>, tensor<4x4xf32>
  %c = kiln.add %a, %m : tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

// Diamonds: %x feeds two branches that meet again, twice over. Everything
// is one region and every op appears once.
// CHECK-LABEL: func.func @diamond(
// CHECK-SAME:      %[[X:.+]]: tensor<8xf32>)
// CHECK-NEXT:    %[[Y:.+]] = kiln.fused elementwise (%[[X]]) : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-COUNT-1:   kiln.exp
// CHECK-COUNT-1:   kiln.sin
// CHECK-COUNT-1:   kiln.mul
// CHECK-COUNT-1:   kiln.cos
// CHECK-COUNT-1:   kiln.add
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]]
func.func @diamond(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = kiln.exp %x : tensor<8xf32>
  %b = kiln.sin %x : tensor<8xf32>
  %c = kiln.mul %a, %b : tensor<8xf32>
  %d = kiln.cos %a : tensor<8xf32>
  %e = kiln.add %c, %d : tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// A reduction of a reduction's result is a second pass over other data: the
// row sums and their exp are one region, the total is not in it.
// CHECK-LABEL: func.func @reduction_of_reduction(
// CHECK:         %[[R:.+]] = kiln.fused reduction
// CHECK:           kiln.reduce_sum %{{.+}}, dims = [1] : tensor<4x8xf32>
// CHECK-NEXT:      kiln.exp
// CHECK-NEXT:      kiln.yield
// CHECK:         kiln.reduce_sum %[[R]], dims = [0] : tensor<4xf32>
func.func @reduction_of_reduction(%x: tensor<4x8xf32>) -> tensor<f32> {
  %s = kiln.reduce_sum %x, dims = [1] : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4xf32>
  %t = kiln.reduce_sum %e, dims = [0] : tensor<4xf32>
  return %t : tensor<f32>
}

// -----

// A softmax over [4, 1, 8] broadcast into a [4, 16, 8] outer product (a
// per-example weight gradient): the product would reduce again for each of
// the 16 copies, so the softmax is a region of its own and the product
// reads its result.
// CHECK-LABEL: func.func @broadcast_of_reduction(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x1x8xf32>, %[[H:[a-z0-9]+]]: tensor<4x16x1xf32>)
// CHECK:         %[[P:.+]] = kiln.fused reduction (%[[X]]) : (tensor<4x1x8xf32>) -> tensor<4x1x8xf32> {
// CHECK:           kiln.reduce_max
// CHECK:           kiln.reduce_sum
// CHECK:           kiln.div
// CHECK-NEXT:      kiln.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[O:.+]] = kiln.fused elementwise (%[[P]], %[[H]])
// CHECK-NOT:       kiln.reduce
// CHECK:           kiln.mul {{.+}} : tensor<4x16x8xf32>
// CHECK:         return %[[O]]
func.func @broadcast_of_reduction(%x: tensor<4x1x8xf32>, %h: tensor<4x16x1xf32>) -> tensor<4x16x8xf32> {
  %m = kiln.reduce_max %x, dims = [2] : tensor<4x1x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x1x8xf32>
  %s = kiln.sub %x, %mb : tensor<4x1x8xf32>
  %e = kiln.exp %s : tensor<4x1x8xf32>
  %z = kiln.reduce_sum %e, dims = [2] : tensor<4x1x8xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x1x8xf32>
  %p = kiln.div %e, %zb : tensor<4x1x8xf32>
  %pb = kiln.broadcast_in_dim %p, dims = [0, 1, 2] : (tensor<4x1x8xf32>) -> tensor<4x16x8xf32>
  %hb = kiln.broadcast_in_dim %h, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x8xf32>
  %o = kiln.mul %pb, %hb : tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}

// -----

// Opaque ops (gather, concat) never join a region; a single fusible op gets
// no region of its own; a splat constant read by two regions is copied into
// both and the original disappears.
// CHECK-LABEL: func.func @boundaries(
// CHECK-NOT:     kiln.constant
// CHECK:         %[[F1:.+]] = kiln.fused elementwise
// CHECK:           kiln.constant dense<2.000000e+00>
// CHECK:           kiln.mul
// CHECK:           kiln.exp
// CHECK:         %[[G:.+]] = kiln.gather %[[F1]]
// CHECK:         %[[F2:.+]] = kiln.fused elementwise (%[[G]])
// CHECK:           kiln.constant dense<2.000000e+00>
// CHECK:           kiln.add
// CHECK:           kiln.neg
// CHECK:         %[[C:.+]] = kiln.concat %[[F2]], %[[F2]]
// CHECK-NEXT:    %[[S:.+]] = kiln.sqrt %[[C]]
// CHECK-NEXT:    return %[[S]]
func.func @boundaries(%x: tensor<4x2xf32>, %i: tensor<3xi32>) -> tensor<6x2xf32> {
  %two = kiln.constant dense<2.0> : tensor<4x2xf32>
  %two3 = kiln.constant dense<2.0> : tensor<3x2xf32>
  %a = kiln.mul %x, %two : tensor<4x2xf32>
  %b = kiln.exp %a : tensor<4x2xf32>
  %g = kiln.gather %b, %i : tensor<4x2xf32>, tensor<3xi32>
  %c = kiln.add %g, %two3 : tensor<3x2xf32>
  %d = kiln.neg %c : tensor<3x2xf32>
  %e = kiln.concat %d, %d dim = 0 : tensor<3x2xf32>, tensor<3x2xf32>
  %s = kiln.sqrt %e : tensor<6x2xf32>
  return %s : tensor<6x2xf32>
}

// -----

// Pad and pooling are opaque too: the elementwise ops around them form
// regions of their own.
// CHECK-LABEL: func.func @pooling_boundaries(
// CHECK:         %[[F1:.+]] = kiln.fused elementwise
// CHECK:           kiln.relu
// CHECK:           kiln.exp
// CHECK:         %[[P:.+]] = kiln.pad %[[F1]]
// CHECK:         %[[R:.+]] = kiln.reduce_window %[[P]]
// CHECK:         %[[F2:.+]] = kiln.fused elementwise (%[[R]])
// CHECK:           kiln.neg
// CHECK:           kiln.tanh
// CHECK:         return %[[F2]]
func.func @pooling_boundaries(%x: tensor<2x6xf32>, %v: tensor<f32>) -> tensor<2x4xf32> {
  %a = kiln.relu %x : tensor<2x6xf32>
  %b = kiln.exp %a : tensor<2x6xf32>
  %p = kiln.pad %b, %v, low = [0, 1], high = [0, 1], interior = [0, 0] : tensor<2x6xf32>, tensor<f32>
  %r = kiln.reduce_window %p, kind = max, window = [1, 3], strides = [1, 2], padding_low = [0, 0], padding_high = [0, 1], dilations = [1, 1] : tensor<2x8xf32>
  %n = kiln.neg %r : tensor<2x4xf32>
  %t = kiln.tanh %n : tensor<2x4xf32>
  return %t : tensor<2x4xf32>
}

// -----

// Inside control flow: each body is fused on its own, recursively (a cond
// inside a while), and nothing crosses a region boundary.
// CHECK-LABEL: func.func @loop_bodies(
// CHECK:         kiln.while
// CHECK:         cond {
// CHECK-NOT:       kiln.fused
// CHECK:           kiln.compare
// CHECK:         } do {
// CHECK:           kiln.fused elementwise
// CHECK:             kiln.mul
// CHECK:             kiln.tanh
// CHECK:             kiln.add
// CHECK:             kiln.yield
// CHECK:           kiln.cond
// CHECK:             kiln.fused reduction
// CHECK:               kiln.reduce_max
// CHECK:               kiln.sub
// CHECK:               kiln.exp
// CHECK:               kiln.yield
// CHECK:             kiln.yield
// CHECK:           } else {
// CHECK-NOT:         kiln.fused
// CHECK:             kiln.yield
// CHECK:           }
// CHECK:           kiln.yield
// CHECK:         }
// CHECK:         kiln.for
// CHECK:           kiln.fused elementwise
// CHECK:             kiln.sigmoid
// CHECK:             kiln.mul
// CHECK:             kiln.yield
// CHECK:           kiln.yield
func.func @loop_bodies(%h: tensor<2x8xf32>, %w: tensor<2x8xf32>, %n: tensor<i64>,
                       %p: tensor<i1>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:4 = kiln.while (%h, %w, %zero, %p) : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<i64>, tensor<i1>) cond {
  ^bb0(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>, %i: tensor<i64>, %q: tensor<i1>):
    %lt = kiln.compare lt, %i, %i : tensor<i64>
    kiln.yield %lt : tensor<i1>
  } do {
  ^bb0(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>, %i: tensor<i64>, %q: tensor<i1>):
    %m = kiln.mul %a, %b : tensor<2x8xf32>
    %t = kiln.tanh %m : tensor<2x8xf32>
    %s = kiln.add %t, %a : tensor<2x8xf32>
    %c = kiln.cond %q, (%s) : tensor<i1>, (tensor<2x8xf32>) -> tensor<2x8xf32> {
    ^bb0(%v: tensor<2x8xf32>):
      %mx = kiln.reduce_max %v, dims = [1] : tensor<2x8xf32>
      %mb = kiln.broadcast_in_dim %mx, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
      %d = kiln.sub %v, %mb : tensor<2x8xf32>
      %e = kiln.exp %d : tensor<2x8xf32>
      kiln.yield %e : tensor<2x8xf32>
    } else {
    ^bb0(%v: tensor<2x8xf32>):
      %e = kiln.neg %v : tensor<2x8xf32>
      kiln.yield %e : tensor<2x8xf32>
    }
    %one = kiln.constant dense<1> : tensor<i64>
    %i1 = kiln.add %i, %one : tensor<i64>
    kiln.yield %c, %b, %i1, %q : tensor<2x8xf32>, tensor<2x8xf32>, tensor<i64>, tensor<i1>
  }
  %f = kiln.for 3 iterations (%r#0) : (tensor<2x8xf32>) {
  ^bb0(%k: tensor<i64>, %v: tensor<2x8xf32>):
    %sg = kiln.sigmoid %v : tensor<2x8xf32>
    %o = kiln.mul %sg, %v : tensor<2x8xf32>
    kiln.yield %o : tensor<2x8xf32>
  }
  return %r#1, %f : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// The new elementwise ops fuse like the others: exact gelu with erf, and a
// mask built with compare/and/not feeding a select, are one region. argmax
// and cumsum are not elementwise and stay outside, cutting the chain.
// CHECK-LABEL: func.func @erf_gelu_and_masks(
// CHECK:         %[[G:.+]] = kiln.fused elementwise
// CHECK:           kiln.erf
// CHECK:           kiln.and
// CHECK:           kiln.not
// CHECK:           kiln.select
// CHECK:           kiln.yield
// CHECK:         %[[C:.+]] = kiln.cumsum %[[G]], dim = 0 : tensor<64xf32>
// CHECK:         %[[S:.+]] = kiln.fused elementwise (%[[C]])
// CHECK:           kiln.sign
// CHECK:           kiln.rem
// CHECK:           kiln.yield
// CHECK:         %[[I:.+]] = kiln.argmax %[[S]], dim = 0 : tensor<64xf32>
// CHECK:         return %[[S]], %[[I]]
func.func @erf_gelu_and_masks(%x: tensor<64xf32>, %y: tensor<64xf32>) -> (tensor<64xf32>, tensor<i64>) {
  %half = kiln.constant dense<0.5> : tensor<64xf32>
  %one = kiln.constant dense<1.0> : tensor<64xf32>
  %rsqrt2 = kiln.constant dense<0.707106769> : tensor<64xf32>
  %zero = kiln.constant dense<0.0> : tensor<64xf32>
  %s = kiln.mul %x, %rsqrt2 : tensor<64xf32>
  %e = kiln.erf %s : tensor<64xf32>
  %e1 = kiln.add %e, %one : tensor<64xf32>
  %hx = kiln.mul %x, %half : tensor<64xf32>
  %gelu = kiln.mul %hx, %e1 : tensor<64xf32>
  %p = kiln.compare gt, %x, %zero : tensor<64xf32>
  %q = kiln.compare lt, %y, %zero : tensor<64xf32>
  %pq = kiln.and %p, %q : tensor<64xi1>
  %m = kiln.not %pq : tensor<64xi1>
  %g = kiln.select %m, %gelu, %y : tensor<64xi1>, tensor<64xf32>
  %c = kiln.cumsum %g, dim = 0 : tensor<64xf32>
  %sg = kiln.sign %c : tensor<64xf32>
  %r = kiln.rem %c, %sg : tensor<64xf32>
  %i = kiln.argmax %r, dim = 0 : tensor<64xf32>
  return %r, %i : tensor<64xf32>, tensor<i64>
}

// -----

// Dead ops are erased before grouping: the unused loss (a reduction and an
// add) shares %a with the live chain, and grouped with it the reduction
// region would lose its reduction to DCE. Only the live chain is fused.
// CHECK-LABEL: func.func @dead_reduction_is_not_fused
// CHECK-NOT: kiln.reduce_sum
// CHECK: kiln.fused elementwise
// CHECK-NOT: kiln.reduce_sum
// CHECK: return
func.func @dead_reduction_is_not_fused(%a: tensor<5x3xf64>, %b: tensor<3xf64>) -> tensor<5x3xf64> {
  %0 = kiln.mul %a, %a : tensor<5x3xf64>
  %1 = kiln.reduce_sum %0, dims = [0, 1] : tensor<5x3xf64>
  %2 = kiln.reduce_sum %b, dims = [0] : tensor<3xf64>
  %3 = kiln.add %1, %2 : tensor<f64>
  %4 = kiln.mul %a, %a : tensor<5x3xf64>
  %5 = kiln.add %4, %a : tensor<5x3xf64>
  return %5 : tensor<5x3xf64>
}

// -----

// A quantized residual block: the block's u8 output %q is read by the next
// convolution (a call, which no group joins) and dequantized for the next
// residual addition. The dequantizing cast joins its readers' region, which
// reads the u8 value; fused into the quantizing region, it would make that
// region write the f32 value as a second result.
// CHECK-LABEL: func.func @dequantize_in_reader(
// CHECK:         %[[Q:.+]] = kiln.fused elementwise ({{.+}}) : (tensor<8x16xf32>) -> tensor<8x16xui8> {
// CHECK:           kiln.round
// CHECK:           kiln.yield %{{.+}} : tensor<8x16xui8>
// CHECK:         %[[C:.+]] = call @conv(%[[Q]])
// CHECK:         %[[R:.+]] = kiln.fused elementwise (%[[Q]], %[[C]]) : (tensor<8x16xui8>, tensor<8x16xf32>) -> tensor<8x16xf32> {
// CHECK:           kiln.cast %{{.+}} : tensor<8x16xui8> to tensor<8x16xf32>
// CHECK:           kiln.sub
// CHECK:           kiln.mul
// CHECK:           kiln.add
// CHECK:         return %[[R]]
func.func private @conv(tensor<8x16xui8>) -> tensor<8x16xf32>
func.func @dequantize_in_reader(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %scale = kiln.constant dense<0.5> : tensor<8x16xf32>
  %zero = kiln.constant dense<3.0> : tensor<8x16xf32>
  %d = kiln.div %x, %scale : tensor<8x16xf32>
  %r = kiln.round %d : tensor<8x16xf32>
  %z = kiln.add %r, %zero : tensor<8x16xf32>
  %q = kiln.cast %z : tensor<8x16xf32> to tensor<8x16xui8>
  %c = call @conv(%q) : (tensor<8x16xui8>) -> tensor<8x16xf32>
  %w = kiln.cast %q : tensor<8x16xui8> to tensor<8x16xf32>
  %s = kiln.sub %w, %zero : tensor<8x16xf32>
  %m = kiln.mul %s, %scale : tensor<8x16xf32>
  %sum = kiln.add %m, %c : tensor<8x16xf32>
  return %sum : tensor<8x16xf32>
}

// -----

// The same cast read by the function's return alone has no region to
// join: it stays with its producer, which writes both values.
// CHECK-LABEL: func.func @dequantize_returned(
// CHECK:         %[[F:.+]]:2 = kiln.fused elementwise ({{.+}}) : (tensor<8x16xf32>) -> (tensor<8x16xui8>, tensor<8x16xf32>) {
// CHECK:         %[[C:.+]] = call @conv(%[[F]]#0)
// CHECK:         return %[[F]]#1, %[[C]]
func.func private @conv(tensor<8x16xui8>) -> tensor<8x16xf32>
func.func @dequantize_returned(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %scale = kiln.constant dense<0.5> : tensor<8x16xf32>
  %d = kiln.div %x, %scale : tensor<8x16xf32>
  %r = kiln.round %d : tensor<8x16xf32>
  %q = kiln.cast %r : tensor<8x16xf32> to tensor<8x16xui8>
  %c = call @conv(%q) : (tensor<8x16xui8>) -> tensor<8x16xf32>
  %w = kiln.cast %q : tensor<8x16xui8> to tensor<8x16xf32>
  return %w, %c : tensor<8x16xf32>, tensor<8x16xf32>
}
