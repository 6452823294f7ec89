// kiln-cpu-propagate-layouts moves each transpose out of channels-last
// ([0, r-1, 1, ..., r-2]) down through the ops that compute the same in
// either layout, where it meets a transpose back into channels-last and
// both fold away.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-propagate-layouts | FileCheck %s

// Between two convolutions' relayouts: the elementwise ops run in
// channels-last and no transpose is left.
// CHECK-LABEL: func.func @cancel(
// CHECK-SAME:    %[[Y:.*]]: tensor<1x6x7x8xf32>
// CHECK-NOT:     kiln.transpose
// CHECK:         %[[R:.*]] = kiln.relu %[[Y]] : tensor<1x6x7x8xf32>
// CHECK:         %[[E:.*]] = kiln.exp %[[R]] : tensor<1x6x7x8xf32>
// CHECK-NOT:     kiln.transpose
// CHECK:         return %[[E]]
func.func @cancel(%y: tensor<1x6x7x8xf32>) -> tensor<1x6x7x8xf32> {
  %t = kiln.transpose %y, permutation = [0, 3, 1, 2] : tensor<1x6x7x8xf32>
  %r = kiln.relu %t : tensor<1x8x6x7xf32>
  %e = kiln.exp %r : tensor<1x8x6x7xf32>
  %u = kiln.transpose %e, permutation = [0, 2, 3, 1] : tensor<1x8x6x7xf32>
  return %u : tensor<1x6x7x8xf32>
}

// -----

// Other operands: the same transpose (a residual addition), a constant
// (transposed as it folds), broadcasts of a [C] bias and of a [1, C, 1, 1]
// one (broadcast into the other order; the second transposed first); a
// comparison's i1 result too. One transpose after each chain.
// CHECK-LABEL: func.func @operands(
// CHECK-SAME:    %[[A:[^:]*]]: tensor<1x4x5x3xf32>, %[[B:[^:]*]]: tensor<1x4x5x3xf32>, %[[V:[^:]*]]: tensor<3xf32>, %[[W:[^:]*]]: tensor<1x3x1x1xf32>
// CHECK:         %[[C:.*]] = kiln.constant dense<{{\[\[\[\[}}1.000000e+00, 6.000000e+00, 7.000000e+00], [2.000000e+00, 6.000000e+00, 7.000000e+00], {{.*}} : tensor<1x4x5x3xf32>
// CHECK:         %[[S:.*]] = kiln.add %[[A]], %[[B]] : tensor<1x4x5x3xf32>
// CHECK:         %[[M:.*]] = kiln.mul %[[S]], %[[C]] : tensor<1x4x5x3xf32>
// CHECK:         %[[VB:.*]] = kiln.broadcast_in_dim %[[V]], dims = [3] : (tensor<3xf32>) -> tensor<1x4x5x3xf32>
// CHECK:         %[[N:.*]] = kiln.add %[[M]], %[[VB]] : tensor<1x4x5x3xf32>
// CHECK:         %[[WT:.*]] = kiln.transpose %[[W]], permutation = [0, 2, 3, 1] : tensor<1x3x1x1xf32>
// CHECK:         %[[WB:.*]] = kiln.broadcast_in_dim %[[WT]], dims = [0, 1, 2, 3] : (tensor<1x1x1x3xf32>) -> tensor<1x4x5x3xf32>
// CHECK:         %[[P:.*]] = kiln.sub %[[N]], %[[WB]] : tensor<1x4x5x3xf32>
// CHECK-DAG:     %[[Q:.*]] = kiln.compare gt, %[[P]], %[[A]] : tensor<1x4x5x3xf32>
// CHECK-DAG:     %[[T:.*]] = kiln.transpose %[[P]], permutation = [0, 3, 1, 2] : tensor<1x4x5x3xf32>
// CHECK-DAG:     %[[TQ:.*]] = kiln.transpose %[[Q]], permutation = [0, 3, 1, 2] : tensor<1x4x5x3xi1>
// CHECK:         return %[[T]], %[[TQ]]
func.func @operands(%a: tensor<1x4x5x3xf32>, %b: tensor<1x4x5x3xf32>, %v: tensor<3xf32>, %w: tensor<1x3x1x1xf32>) -> (tensor<1x3x4x5xf32>, tensor<1x3x4x5xi1>) {
  %ta = kiln.transpose %a, permutation = [0, 3, 1, 2] : tensor<1x4x5x3xf32>
  %tb = kiln.transpose %b, permutation = [0, 3, 1, 2] : tensor<1x4x5x3xf32>
  %s = kiln.add %ta, %tb : tensor<1x3x4x5xf32>
  %c = kiln.constant dense<[[[[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0]], [[6.0, 6.0, 6.0, 6.0, 6.0], [6.0, 6.0, 6.0, 6.0, 6.0], [6.0, 6.0, 6.0, 6.0, 6.0], [6.0, 6.0, 6.0, 6.0, 6.0]], [[7.0, 7.0, 7.0, 7.0, 7.0], [7.0, 7.0, 7.0, 7.0, 7.0], [7.0, 7.0, 7.0, 7.0, 7.0], [7.0, 7.0, 7.0, 7.0, 7.0]]]]> : tensor<1x3x4x5xf32>
  %m = kiln.mul %s, %c : tensor<1x3x4x5xf32>
  %vb = kiln.broadcast_in_dim %v, dims = [1] : (tensor<3xf32>) -> tensor<1x3x4x5xf32>
  %n = kiln.add %m, %vb : tensor<1x3x4x5xf32>
  %wb = kiln.broadcast_in_dim %w, dims = [0, 1, 2, 3] : (tensor<1x3x1x1xf32>) -> tensor<1x3x4x5xf32>
  %p = kiln.sub %n, %wb : tensor<1x3x4x5xf32>
  %q = kiln.compare gt, %p, %ta : tensor<1x3x4x5xf32>
  return %p, %q : tensor<1x3x4x5xf32>, tensor<1x3x4x5xi1>
}

// -----

// Pooling, padding and slicing permute their per-dim attributes.
// CHECK-LABEL: func.func @per_dim(
// CHECK-SAME:    %[[Y:.*]]: tensor<1x8x8x16xf32>
// CHECK:         %[[P:.*]] = kiln.reduce_window %[[Y]], kind = max, window = [1, 3, 3, 1], strides = [1, 2, 2, 1], padding_low = [0, 1, 1, 0], padding_high = [0, 1, 1, 0], dilations = [1, 1, 1, 1] : tensor<1x8x8x16xf32>
// CHECK:         %[[D:.*]] = kiln.pad %[[P]], %{{.*}}, low = [0, 1, 0, 0], high = [0, 0, 2, 0], interior = [0, 0, 0, 0] : tensor<1x4x4x16xf32>
// CHECK:         %[[S:.*]] = kiln.slice %[[D]], start = [0, 1, 0, 2], limit = [1, 5, 6, 10], stride = [1, 2, 1, 1] : tensor<1x5x6x16xf32>
// CHECK:         kiln.transpose %[[S]], permutation = [0, 3, 1, 2] : tensor<1x2x6x8xf32>
func.func @per_dim(%y: tensor<1x8x8x16xf32>) -> tensor<1x8x2x6xf32> {
  %t = kiln.transpose %y, permutation = [0, 3, 1, 2] : tensor<1x8x8x16xf32>
  %p = kiln.reduce_window %t, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x16x8x8xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %d = kiln.pad %p, %zero, low = [0, 0, 1, 0], high = [0, 0, 0, 2], interior = [0, 0, 0, 0] : tensor<1x16x4x4xf32>, tensor<f32>
  %s = kiln.slice %d, start = [0, 2, 1, 0], limit = [1, 10, 5, 6], stride = [1, 1, 2, 1] : tensor<1x16x5x6xf32>
  return %s : tensor<1x8x2x6xf32>
}

// -----

// A global pool over the spatial dims keeps [N, C] in order: no transpose
// after it. A reduction over one spatial dim leaves [N, W, C], transposed
// to [N, C, W].
// CHECK-LABEL: func.func @reductions(
// CHECK-SAME:    %[[Y:.*]]: tensor<2x5x7x3xf32>
// CHECK:         %[[M:.*]] = kiln.reduce_mean %[[Y]], dims = [1, 2] : tensor<2x5x7x3xf32>
// CHECK:         %[[S:.*]] = kiln.reduce_sum %[[Y]], dims = [1] : tensor<2x5x7x3xf32>
// CHECK:         %[[T:.*]] = kiln.transpose %[[S]], permutation = [0, 2, 1] : tensor<2x7x3xf32>
// CHECK:         %[[X:.*]] = kiln.reduce_max %[[Y]], dims = [0, 3] : tensor<2x5x7x3xf32>
// CHECK:         return %[[M]], %[[T]], %[[X]]
func.func @reductions(%y: tensor<2x5x7x3xf32>) -> (tensor<2x3xf32>, tensor<2x3x7xf32>, tensor<5x7xf32>) {
  %t = kiln.transpose %y, permutation = [0, 3, 1, 2] : tensor<2x5x7x3xf32>
  %m = kiln.reduce_mean %t, dims = [2, 3] : tensor<2x3x5x7xf32>
  %s = kiln.reduce_sum %t, dims = [2] : tensor<2x3x5x7xf32>
  %x = kiln.reduce_max %t, dims = [0, 1] : tensor<2x3x5x7xf32>
  return %m, %s, %x : tensor<2x3xf32>, tensor<2x3x7xf32>, tensor<5x7xf32>
}

// -----

// A channel concatenation of channels-last values concatenates their last
// dim.
// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    %[[A:[^:]*]]: tensor<1x4x4x8xf32>, %[[B:[^:]*]]: tensor<1x4x4x16xf32>
// CHECK:         %[[C:.*]] = kiln.concat %[[A]], %[[B]] dim = 3
// CHECK:         kiln.transpose %[[C]], permutation = [0, 3, 1, 2] : tensor<1x4x4x24xf32>
func.func @concat(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x16xf32>) -> tensor<1x24x4x4xf32> {
  %ta = kiln.transpose %a, permutation = [0, 3, 1, 2] : tensor<1x4x4x8xf32>
  %tb = kiln.transpose %b, permutation = [0, 3, 1, 2] : tensor<1x4x4x16xf32>
  %c = kiln.concat %ta, %tb dim = 1 : tensor<1x8x4x4xf32>, tensor<1x16x4x4xf32>
  return %c : tensor<1x24x4x4xf32>
}

// -----

// What stays: an elementwise op with another operand in the other layout
// (neither the same transpose, a constant nor a broadcast), a reshape, a
// concatenation with a value in the other layout, and transposes that do
// not leave channels-last. A transpose with several users moves past each
// that allows it and stays for the others.
// CHECK-LABEL: func.func @stays(
// CHECK-SAME:    %[[Y:[^:]*]]: tensor<1x2x3x4xf32>, %[[Z:[^:]*]]: tensor<1x4x2x3xf32>
// CHECK:         %[[T:.*]] = kiln.transpose %[[Y]], permutation = [0, 3, 1, 2]
// CHECK:         kiln.add %[[T]], %[[Z]]
// CHECK:         kiln.reshape %[[T]]
// CHECK:         kiln.concat %[[T]], %[[Z]] dim = 1
// CHECK:         %[[O:.*]] = kiln.transpose %[[Y]], permutation = [0, 2, 1, 3]
// CHECK:         kiln.relu %[[O]]
// CHECK:         %[[N:.*]] = kiln.neg %[[Y]] : tensor<1x2x3x4xf32>
// CHECK:         kiln.transpose %[[N]], permutation = [0, 3, 1, 2]
func.func @stays(%y: tensor<1x2x3x4xf32>, %z: tensor<1x4x2x3xf32>) -> (tensor<1x4x2x3xf32>, tensor<24xf32>, tensor<1x8x2x3xf32>, tensor<1x3x2x4xf32>, tensor<1x4x2x3xf32>) {
  %t = kiln.transpose %y, permutation = [0, 3, 1, 2] : tensor<1x2x3x4xf32>
  %a = kiln.add %t, %z : tensor<1x4x2x3xf32>
  %r = kiln.reshape %t : (tensor<1x4x2x3xf32>) -> tensor<24xf32>
  %c = kiln.concat %t, %z dim = 1 : tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>
  %o = kiln.transpose %y, permutation = [0, 2, 1, 3] : tensor<1x2x3x4xf32>
  %p = kiln.relu %o : tensor<1x3x2x4xf32>
  %n = kiln.neg %t : tensor<1x4x2x3xf32>
  return %a, %r, %c, %p, %n : tensor<1x4x2x3xf32>, tensor<24xf32>, tensor<1x8x2x3xf32>, tensor<1x3x2x4xf32>, tensor<1x4x2x3xf32>
}

// -----

// Blocked by 8 ([N, C/8, H, W, 8], oneDNN's nChw8c): a relayout out of it
// is a transpose [0, 1, 4, 2, 3] then a reshape merging blocks and lanes.
// Between two convolutions' relayouts the ops run on the blocks and both
// relayouts fold away; a [C] bias and a [1, C, 1, 1] one are split into
// [C/8, 8] and broadcast over the blocked dims; a splat constant is
// relaid as it folds (the folder puts it first); a [1, 1, 1, 1] one
// broadcasts as it is.
// CHECK-LABEL: func.func @blocked(
// CHECK-SAME:    %[[Y:[^:]*]]: tensor<2x2x3x5x8xf32>, %[[V:[^:]*]]: tensor<16xf32>, %[[W:[^:]*]]: tensor<1x16x1x1xf32>, %[[U:[^:]*]]: tensor<1x1x1x1xf32>
// CHECK-NOT:     kiln.transpose
// CHECK:         %[[C:.*]] = kiln.constant dense<6.000000e+00> : tensor<2x2x3x5x8xf32>
// CHECK:         %[[VR:.*]] = kiln.reshape %[[V]] : (tensor<16xf32>) -> tensor<2x8xf32>
// CHECK:         %[[VB:.*]] = kiln.broadcast_in_dim %[[VR]], dims = [1, 4] : (tensor<2x8xf32>) -> tensor<2x2x3x5x8xf32>
// CHECK:         %[[A:.*]] = kiln.add %[[Y]], %[[VB]] : tensor<2x2x3x5x8xf32>
// CHECK:         %[[WR:.*]] = kiln.reshape %[[W]] : (tensor<1x16x1x1xf32>) -> tensor<1x2x8x1x1xf32>
// CHECK:         %[[WT:.*]] = kiln.transpose %[[WR]], permutation = [0, 1, 3, 4, 2] : tensor<1x2x8x1x1xf32>
// CHECK:         %[[WB:.*]] = kiln.broadcast_in_dim %[[WT]], dims = [0, 1, 2, 3, 4] : (tensor<1x2x1x1x8xf32>) -> tensor<2x2x3x5x8xf32>
// CHECK:         %[[M:.*]] = kiln.mul %[[A]], %[[WB]] : tensor<2x2x3x5x8xf32>
// CHECK:         %[[UB:.*]] = kiln.broadcast_in_dim %[[U]], dims = [0, 1, 2, 3] : (tensor<1x1x1x1xf32>) -> tensor<2x2x3x5x8xf32>
// CHECK:         %[[S:.*]] = kiln.sub %[[M]], %[[UB]] : tensor<2x2x3x5x8xf32>
// CHECK:         %[[N:.*]] = kiln.min %[[S]], %[[C]] : tensor<2x2x3x5x8xf32>
// CHECK-NOT:     kiln.transpose
// CHECK-NOT:     kiln.reshape
// CHECK:         return %[[N]]
func.func @blocked(%y: tensor<2x2x3x5x8xf32>, %v: tensor<16xf32>, %w: tensor<1x16x1x1xf32>, %u: tensor<1x1x1x1xf32>) -> tensor<2x2x3x5x8xf32> {
  %t = kiln.transpose %y, permutation = [0, 1, 4, 2, 3] : tensor<2x2x3x5x8xf32>
  %l = kiln.reshape %t : (tensor<2x2x8x3x5xf32>) -> tensor<2x16x3x5xf32>
  %vb = kiln.broadcast_in_dim %v, dims = [1] : (tensor<16xf32>) -> tensor<2x16x3x5xf32>
  %a = kiln.add %l, %vb : tensor<2x16x3x5xf32>
  %wb = kiln.broadcast_in_dim %w, dims = [0, 1, 2, 3] : (tensor<1x16x1x1xf32>) -> tensor<2x16x3x5xf32>
  %m = kiln.mul %a, %wb : tensor<2x16x3x5xf32>
  %ub = kiln.broadcast_in_dim %u, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xf32>) -> tensor<2x16x3x5xf32>
  %s = kiln.sub %m, %ub : tensor<2x16x3x5xf32>
  %c = kiln.constant dense<6.0> : tensor<2x16x3x5xf32>
  %n = kiln.min %s, %c : tensor<2x16x3x5xf32>
  %b = kiln.reshape %n : (tensor<2x16x3x5xf32>) -> tensor<2x2x8x3x5xf32>
  %r = kiln.transpose %b, permutation = [0, 1, 3, 4, 2] : tensor<2x2x8x3x5xf32>
  return %r : tensor<2x2x3x5x8xf32>
}

// -----

// Blocked pooling, padding and slicing keep the channel dim as it is and
// have it as [1, 1] (a slice's limit: the blocks and the lanes); a residual
// addition of two blocked values and a channel concatenation join blocks;
// a global pool leaves [N, C/8, 8], reshaped to [N, C] with no transpose.
// CHECK-LABEL: func.func @blocked_ops(
// CHECK-SAME:    %[[Y:[^:]*]]: tensor<1x2x8x8x8xf32>, %[[Z:[^:]*]]: tensor<1x1x4x4x8xf32>
// CHECK:         %[[P:.*]] = kiln.reduce_window %[[Y]], kind = max, window = [1, 1, 3, 3, 1], strides = [1, 1, 2, 2, 1], padding_low = [0, 0, 1, 1, 0], padding_high = [0, 0, 1, 1, 0], dilations = [1, 1, 1, 1, 1] : tensor<1x2x8x8x8xf32>
// CHECK:         %[[D:.*]] = kiln.pad %[[P]], %{{.*}}, low = [0, 0, 1, 0, 0], high = [0, 0, 0, 1, 0], interior = [0, 0, 0, 0, 0] : tensor<1x2x4x4x8xf32>
// CHECK:         %[[S:.*]] = kiln.slice %[[D]], start = [0, 0, 1, 0, 0], limit = [1, 2, 5, 4, 8], stride = [1, 1, 1, 1, 1] : tensor<1x2x5x5x8xf32>
// CHECK:         %[[C:.*]] = kiln.concat %[[S]], %[[Z]] dim = 1 : tensor<1x2x4x4x8xf32>, tensor<1x1x4x4x8xf32>
// CHECK:         %[[M:.*]] = kiln.reduce_mean %[[C]], dims = [2, 3] : tensor<1x3x4x4x8xf32>
// CHECK-NOT:     kiln.transpose
// CHECK:         %[[R:.*]] = kiln.reshape %[[M]] : (tensor<1x3x8xf32>) -> tensor<1x24xf32>
// CHECK:         return %[[R]]
func.func @blocked_ops(%y: tensor<1x2x8x8x8xf32>, %z: tensor<1x1x4x4x8xf32>) -> tensor<1x24xf32> {
  %t = kiln.transpose %y, permutation = [0, 1, 4, 2, 3] : tensor<1x2x8x8x8xf32>
  %l = kiln.reshape %t : (tensor<1x2x8x8x8xf32>) -> tensor<1x16x8x8xf32>
  %p = kiln.reduce_window %l, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x16x8x8xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %d = kiln.pad %p, %zero, low = [0, 0, 1, 0], high = [0, 0, 0, 1], interior = [0, 0, 0, 0] : tensor<1x16x4x4xf32>, tensor<f32>
  %s = kiln.slice %d, start = [0, 0, 1, 0], limit = [1, 16, 5, 4], stride = [1, 1, 1, 1] : tensor<1x16x5x5xf32>
  %tz = kiln.transpose %z, permutation = [0, 1, 4, 2, 3] : tensor<1x1x4x4x8xf32>
  %lz = kiln.reshape %tz : (tensor<1x1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = kiln.concat %s, %lz dim = 1 : tensor<1x16x4x4xf32>, tensor<1x8x4x4xf32>
  %m = kiln.reduce_mean %c, dims = [2, 3] : tensor<1x24x4x4xf32>
  return %m : tensor<1x24xf32>
}

// -----

// What stays blocked-wise: a slice of some channels (not a whole block's
// worth of the layout), a reduction over the channels, an operand in
// another layout (channels-last), and a reshape into blocks that is not a
// relayout (its transpose keeps the lanes in place).
// CHECK-LABEL: func.func @blocked_stays(
// CHECK:         kiln.transpose %{{.*}}, permutation = [0, 1, 4, 2, 3]
// CHECK:         %[[L:.*]] = kiln.reshape
// CHECK:         kiln.slice %[[L]], start = [0, 0, 0, 0], limit = [1, 8, 4, 4]
// CHECK:         kiln.reduce_sum %[[L]], dims = [1]
// CHECK:         kiln.add %[[L]], %{{.*}} : tensor<1x16x4x4xf32>
// CHECK:         kiln.relu %{{.*}} : tensor<1x16x4x4xf32>
func.func @blocked_stays(%y: tensor<1x2x4x4x8xf32>, %z: tensor<1x4x4x16xf32>, %w: tensor<1x2x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) {
  %t = kiln.transpose %y, permutation = [0, 1, 4, 2, 3] : tensor<1x2x4x4x8xf32>
  %l = kiln.reshape %t : (tensor<1x2x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %s = kiln.slice %l, start = [0, 0, 0, 0], limit = [1, 8, 4, 4], stride = [1, 1, 1, 1] : tensor<1x16x4x4xf32>
  %r = kiln.reduce_sum %l, dims = [1] : tensor<1x16x4x4xf32>
  %tz = kiln.transpose %z, permutation = [0, 3, 1, 2] : tensor<1x4x4x16xf32>
  %a = kiln.add %l, %tz : tensor<1x16x4x4xf32>
  %tw = kiln.transpose %w, permutation = [0, 1, 2, 3, 4] : tensor<1x2x8x4x4xf32>
  %lw = kiln.reshape %tw : (tensor<1x2x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %e = kiln.relu %lw : tensor<1x16x4x4xf32>
  return %s, %r, %a, %e : tensor<1x8x4x4xf32>, tensor<1x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>
}
