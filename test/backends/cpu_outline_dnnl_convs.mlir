// kiln-cpu-outline-dnnl-convs moves each f32 or bf16 kiln.conv that oneDNN's
// forward primitive takes into a private function carrying the descriptor;
// f64, f16, input-dilated, empty and small convolutions stay.
// The layouts are pinned (plain; channels-last for the LAST prefix, and as
// they are, only the weights in oneDNN's layout, for DIRECT; blocked by 8
// channels as they are for BLOCKED), so that
// what oneDNN prefers on the CPU that runs the test does not matter.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs=layouts=plain | FileCheck %s
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs="min-macs=1 layouts=plain" \
// RUN:   | FileCheck %s --check-prefix=ALL
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs=layouts=channels-last \
// RUN:   | FileCheck %s --check-prefix=LAST
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs="layouts=channels-last winograd=always" \
// RUN:   | FileCheck %s --check-prefix=WINO
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs="layouts=blocked-8 winograd=own" \
// RUN:   | FileCheck %s --check-prefix=OWN
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs="layouts=blocked-8 winograd=query" \
// RUN:   | FileCheck %s --check-prefix=QUERY
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs=layouts=channels-last-direct \
// RUN:   | FileCheck %s --check-prefix=DIRECT
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs=layouts=blocked-8 \
// RUN:   | FileCheck %s --check-prefix=BLOCKED

// 16 * 5 * 7 outputs of 4 * 3 * 3 = 36 multiply-adds: 20160. The
// descriptor: k = 2, groups 1, N 1, C 4, O 16, flags 0 (35 output
// positions: plain layouts, so the ReLU stays out), then per dim D 10 10,
// K 3 3, E 5 7, strides 2 1, padding low 0 1, high 1 0, rhs dilation 1 2.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x10x10xf32>, %[[W:.*]]: tensor<16x4x3x3xf32>
// CHECK:         %[[Y:.*]] = call @kiln_dnnl_conv(%[[X]], %[[W]]) : (tensor<1x4x10x10xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x5x7xf32>
// CHECK:         %[[R:.*]] = kiln.relu %[[Y]]
// CHECK:         return %[[R]]
// CHECK:       func.func private @kiln_dnnl_conv(%[[A:.*]]: tensor<1x4x10x10xf32>, %[[B:.*]]: tensor<16x4x3x3xf32>) -> tensor<1x16x5x7xf32>
// CHECK-SAME:    attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 4, 16, 0, 10, 10, 3, 3, 5, 7, 2, 1, 0, 1, 1, 0, 1, 2>}
// CHECK:         %[[C:.*]] = kiln.conv %[[A]], %[[B]], strides = [2, 1], padding_low = [0, 1], padding_high = [1, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 2], groups = 1
// CHECK:         return %[[C]]
// Channels-last as they are (DIRECT): flags 128 | 256 | 262144 (only the
// weights in oneDNN's layout, no BLOCKED), and the ReLU goes into the call
// (flag 4) as it does for blocked layouts: 262532.
// DIRECT-LABEL: func.func @conv(
// DIRECT:         kiln.transpose %{{.*}}, permutation = [0, 2, 3, 1] : tensor<1x4x10x10xf32>
// DIRECT:         call @[[F:kiln_dnnl_conv[_0-9]*]]({{.*}}) : (tensor<1x10x10x4xf32>, tensor<16x4x3x3xf32>) -> tensor<1x5x7x16xf32>
// DIRECT-NOT:     kiln.relu
// DIRECT:       func.func private @[[F]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 4, 16, 262532, 10, 10, 3, 3, 5, 7, 2, 1, 0, 1, 1, 0, 1, 2>}
// DIRECT:         kiln.relu
// Blocked by 8 (BLOCKED): 4 input channels stay plain, the 16 outputs are
// [N, 2, E..., 8] (flags 1048576 | 262144, the ReLU 4: 1310724), relaid
// out by a transpose and a reshape after the call, into that layout by a
// reshape and a transpose in the body.
// BLOCKED-LABEL: func.func @conv(
// BLOCKED-SAME:    %[[X:.*]]: tensor<1x4x10x10xf32>, %[[W:.*]]: tensor<16x4x3x3xf32>
// BLOCKED:         %[[Y:.*]] = call @[[F:kiln_dnnl_conv[_0-9]*]](%[[X]], %[[W]]) : (tensor<1x4x10x10xf32>, tensor<16x4x3x3xf32>) -> tensor<1x2x5x7x8xf32>
// BLOCKED:         %[[T:.*]] = kiln.transpose %[[Y]], permutation = [0, 1, 4, 2, 3] : tensor<1x2x5x7x8xf32>
// BLOCKED:         %[[L:.*]] = kiln.reshape %[[T]] : (tensor<1x2x8x5x7xf32>) -> tensor<1x16x5x7xf32>
// BLOCKED:         return %[[L]]
// BLOCKED:       func.func private @[[F]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 4, 16, 1310724, 10, 10, 3, 3, 5, 7, 2, 1, 0, 1, 1, 0, 1, 2>}
// BLOCKED:         %[[R:.*]] = kiln.relu
// BLOCKED:         %[[B:.*]] = kiln.reshape %[[R]] : (tensor<1x16x5x7xf32>) -> tensor<1x2x8x5x7xf32>
// BLOCKED:         %[[O:.*]] = kiln.transpose %[[B]], permutation = [0, 1, 3, 4, 2] : tensor<1x2x8x5x7xf32>
// BLOCKED:         return %[[O]]
func.func @conv(%x: tensor<1x4x10x10xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<1x16x5x7xf32> {
  %y = kiln.conv %x, %w, strides = [2, 1], padding_low = [0, 1], padding_high = [1, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 2], groups = 1 : tensor<1x4x10x10xf32>, tensor<16x4x3x3xf32>
  %r = kiln.relu %y : tensor<1x16x5x7xf32>
  return %r : tensor<1x16x5x7xf32>
}

// -----

// Two convolutions get two functions with distinct names, also inside a
// region; groups go into the descriptor. 196 output positions and a
// window: blocked layouts (flag 16).
// CHECK-LABEL: func.func @two(
// CHECK:         call @[[F0:kiln_dnnl_conv[_0-9]*]](
// CHECK:         kiln.cond
// CHECK:           call @[[F1:kiln_dnnl_conv[_0-9]*]](
// CHECK-DAG:   func.func private @[[F0]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 16, 100, 3, 98, 1, 0, 0, 1>}
// CHECK-DAG:   func.func private @[[F1]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 1, 4, 2, 8, 16, 16, 100, 3, 98, 1, 0, 0, 1>}
// LAST-LABEL: func.func @two(
// LAST:         kiln.transpose %{{.*}}, permutation = [0, 2, 1] : tensor<2x8x100xf32>
// LAST:         call @[[F0:kiln_dnnl_conv[_0-9]*]]({{.*}}) : (tensor<2x100x8xf32>, tensor<8x8x3xf32>) -> tensor<2x98x8xf32>
// LAST:         kiln.transpose %{{.*}}, permutation = [0, 2, 1] : tensor<2x98x8xf32>
// LAST-DAG:   func.func private @[[F0]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 400, 100, 3, 98, 1, 0, 0, 1>}
// DIRECT-LABEL: func.func @two(
// DIRECT-DAG:   func.func private @{{.*}}({{.*}} attributes {kiln.dnnl_conv = array<i64: 1, 1, 2, 8, 8, 262528, 100, 3, 98, 1, 0, 0, 1>}
// DIRECT-DAG:   func.func private @{{.*}}({{.*}} attributes {kiln.dnnl_conv = array<i64: 1, 4, 2, 8, 16, 262528, 100, 3, 98, 1, 0, 0, 1>}
func.func @two(%p: tensor<i1>, %x: tensor<2x8x100xf32>, %w: tensor<8x8x3xf32>, %d: tensor<16x2x3xf32>) -> (tensor<2x8x98xf32>, tensor<2x16x98xf32>) {
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<2x8x100xf32>, tensor<8x8x3xf32>
  %z = kiln.cond %p, (%x, %d) : tensor<i1>, (tensor<2x8x100xf32>, tensor<16x2x3xf32>) -> (tensor<2x16x98xf32>) {
  ^bb0(%a: tensor<2x8x100xf32>, %b: tensor<16x2x3xf32>):
    %c = kiln.conv %a, %b, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 4 : tensor<2x8x100xf32>, tensor<16x2x3xf32>
    kiln.yield %c : tensor<2x16x98xf32>
  } else {
  ^bb0(%a: tensor<2x8x100xf32>, %b: tensor<16x2x3xf32>):
    %e = kiln.constant dense<0.0> : tensor<2x16x98xf32>
    kiln.yield %e : tensor<2x16x98xf32>
  }
  return %y, %z : tensor<2x8x98xf32>, tensor<2x16x98xf32>
}

// -----

// What oneDNN's forward primitive does not take stays a kiln.conv: f64,
// input dilation, an empty result, and (below min-macs) a small one; ALL
// still keeps the first three.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     call
// CHECK-COUNT-4: kiln.conv
// CHECK-NOT:     func.func private
// ALL-LABEL:   func.func @stays(
// ALL-COUNT-3:   kiln.conv
// ALL:           call @kiln_dnnl_conv
// ALL:         func.func private @kiln_dnnl_conv
func.func @stays(%a: tensor<1x8x40xf64>, %b: tensor<8x8x5xf64>, %c: tensor<1x8x40xf32>, %d: tensor<8x8x5xf32>, %e: tensor<1x8x2xf32>, %f: tensor<2x8x3xf32>) -> (tensor<1x8x36xf64>, tensor<1x8x75xf32>, tensor<1x8x0xf32>, tensor<1x2x1xf32>) {
  %y = kiln.conv %a, %b, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x8x40xf64>, tensor<8x8x5xf64>
  %z = kiln.conv %c, %d, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [2], rhs_dilation = [1], groups = 1 : tensor<1x8x40xf32>, tensor<8x8x5xf32>
  %u = kiln.conv %e, %d, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x8x2xf32>, tensor<8x8x5xf32>
  %v = kiln.conv %e, %f, strides = [1], padding_low = [1], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x8x2xf32>, tensor<2x8x3xf32>
  return %y, %z, %u, %v : tensor<1x8x36xf64>, tensor<1x8x75xf32>, tensor<1x8x0xf32>, tensor<1x2x1xf32>
}

// -----

// A blocked convolution (flag 16) of constant weights (8) takes its
// epilogue along: the per-channel bias (1), the residual addition (2) and
// the ReLU (4). The call replaces the ReLU; the body recomputes the chain.
// CHECK-LABEL: func.func @epilogue(
// CHECK-SAME:    %[[X:.*]]: tensor<1x8x16x16xf32>, %[[B:.*]]: tensor<1x8x1x1xf32>, %[[R:.*]]: tensor<1x8x16x16xf32>
// CHECK:         %[[W:.*]] = kiln.constant
// CHECK-NOT:     kiln.add
// CHECK-NOT:     kiln.relu
// CHECK:         %[[Y:.*]] = call @kiln_dnnl_conv(%[[X]], %[[W]], %[[B]], %[[R]]) : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<1x8x1x1xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// CHECK:         return %[[Y]]
// CHECK:       func.func private @kiln_dnnl_conv(%[[A0:.*]]: tensor<1x8x16x16xf32>, %[[A1:.*]]: tensor<8x8x3x3xf32>, %[[A2:.*]]: tensor<1x8x1x1xf32>, %[[A3:.*]]: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// CHECK-SAME:    kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 31, 16, 16,
// CHECK:         %[[C:.*]] = kiln.conv %[[A0]], %[[A1]]
// CHECK:         %[[BB:.*]] = kiln.broadcast_in_dim %[[A2]]
// CHECK:         %[[S:.*]] = kiln.add %[[C]], %[[BB]]
// CHECK:         %[[T:.*]] = kiln.add %[[A3]], %[[S]]
// CHECK:         %[[U:.*]] = kiln.relu %[[T]]
// CHECK:         return %[[U]]
// Channels-last (flags 128 and 256 as well: 415): the input and the addend
// are transposed into [N, H, W, C] before the call and its result out of
// it after; the body transposes its arguments back and its result forth,
// so it still computes what the moved ops did.
// LAST-LABEL: func.func @epilogue(
// LAST-SAME:    %[[X:.*]]: tensor<1x8x16x16xf32>, %[[B:.*]]: tensor<1x8x1x1xf32>, %[[R:.*]]: tensor<1x8x16x16xf32>
// LAST:         %[[W:.*]] = kiln.constant
// LAST:         %[[XT:.*]] = kiln.transpose %[[X]], permutation = [0, 2, 3, 1]
// LAST:         %[[RT:.*]] = kiln.transpose %[[R]], permutation = [0, 2, 3, 1]
// LAST:         %[[Y:.*]] = call @kiln_dnnl_conv(%[[XT]], %[[W]], %[[B]], %[[RT]]) : (tensor<1x16x16x8xf32>, tensor<8x8x3x3xf32>, tensor<1x8x1x1xf32>, tensor<1x16x16x8xf32>) -> tensor<1x16x16x8xf32>
// LAST:         %[[YT:.*]] = kiln.transpose %[[Y]], permutation = [0, 3, 1, 2]
// LAST:         return %[[YT]]
// LAST:       func.func private @kiln_dnnl_conv(%[[A0:.*]]: tensor<1x16x16x8xf32>, %{{.*}}: tensor<8x8x3x3xf32>, %{{.*}}: tensor<1x8x1x1xf32>, %[[A3:.*]]: tensor<1x16x16x8xf32>) -> tensor<1x16x16x8xf32>
// LAST-SAME:    kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 415, 16, 16,
// LAST:         %[[I:.*]] = kiln.transpose %[[A0]], permutation = [0, 3, 1, 2]
// LAST:         %[[D:.*]] = kiln.transpose %[[A3]], permutation = [0, 3, 1, 2]
// LAST:         kiln.conv %[[I]]
// LAST:         kiln.add %[[D]]
// LAST:         %[[U:.*]] = kiln.relu
// LAST:         %[[O:.*]] = kiln.transpose %[[U]], permutation = [0, 2, 3, 1]
// LAST:         return %[[O]]
// Blocked by 8 (BLOCKED): the input and the addend are relaid into
// [1, 1, 16, 16, 8] (a reshape splitting the channels, a transpose moving
// the lanes last), the call returns that layout (flags 15 | 262144 |
// 524288 | 1048576), relaid out after it.
// BLOCKED-LABEL: func.func @epilogue(
// BLOCKED-SAME:    %[[X:.*]]: tensor<1x8x16x16xf32>, %[[B:.*]]: tensor<1x8x1x1xf32>, %[[R:.*]]: tensor<1x8x16x16xf32>
// BLOCKED:         %[[XS:.*]] = kiln.reshape %[[X]] : (tensor<1x8x16x16xf32>) -> tensor<1x1x8x16x16xf32>
// BLOCKED:         %[[XB:.*]] = kiln.transpose %[[XS]], permutation = [0, 1, 3, 4, 2] : tensor<1x1x8x16x16xf32>
// BLOCKED:         %[[RS:.*]] = kiln.reshape %[[R]] : (tensor<1x8x16x16xf32>) -> tensor<1x1x8x16x16xf32>
// BLOCKED:         %[[RB:.*]] = kiln.transpose %[[RS]], permutation = [0, 1, 3, 4, 2] : tensor<1x1x8x16x16xf32>
// BLOCKED:         %[[Y:.*]] = call @[[F:kiln_dnnl_conv[_0-9]*]](%[[XB]], %{{.*}}, %[[B]], %[[RB]]) : (tensor<1x1x16x16x8xf32>, tensor<8x8x3x3xf32>, tensor<1x8x1x1xf32>, tensor<1x1x16x16x8xf32>) -> tensor<1x1x16x16x8xf32>
// BLOCKED:         %[[T:.*]] = kiln.transpose %[[Y]], permutation = [0, 1, 4, 2, 3] : tensor<1x1x16x16x8xf32>
// BLOCKED:         %[[L:.*]] = kiln.reshape %[[T]] : (tensor<1x1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// BLOCKED:         return %[[L]]
// BLOCKED:       func.func private @[[F]]({{.*}}) -> tensor<1x1x16x16x8xf32>
// BLOCKED-SAME:    kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 1835023, 16, 16,
func.func @epilogue(%x: tensor<1x8x16x16xf32>, %b: tensor<1x8x1x1xf32>, %r: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x8x3x3xf32>
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [0, 1, 2, 3] : (tensor<1x8x1x1xf32>) -> tensor<1x8x16x16xf32>
  %s = kiln.add %y, %bb : tensor<1x8x16x16xf32>
  %t = kiln.add %r, %s : tensor<1x8x16x16xf32>
  %u = kiln.relu %t : tensor<1x8x16x16xf32>
  return %u : tensor<1x8x16x16xf32>
}

// -----

// A 1x1 convolution (plain layouts, GEMM-based) takes only the bias
// (flags 1); the residual addition and the ReLU stay. A bias that is not
// per channel, and a value used twice, end the chain.
// CHECK-LABEL: func.func @plain(
// CHECK:         %[[Y:.*]] = call @[[F0:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1, %arg2)
// CHECK:         %[[T:.*]] = kiln.add %arg3, %[[Y]]
// CHECK:         kiln.relu %[[T]]
// CHECK:         %[[Z:.*]] = call @[[F1:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1)
// CHECK:         kiln.add %[[Z]], %{{.*}}
// CHECK:         %[[V:.*]] = call @[[F2:kiln_dnnl_conv[_0-9]*]](%arg5, %arg6)
// CHECK:         kiln.relu %[[V]]
// CHECK:         kiln.add %[[V]]
// CHECK-DAG:   func.func private @[[F0]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 32, 1, 16, 16,
// CHECK-DAG:   func.func private @[[F1]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 32, 0, 16, 16,
// CHECK-DAG:   func.func private @[[F2]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 16, 16, 16,
func.func @plain(%x: tensor<1x8x16x16xf32>, %w: tensor<32x8x1x1xf32>, %b: tensor<1x32x1x1xf32>, %r: tensor<1x32x16x16xf32>, %c: tensor<1x32x16x1xf32>, %x2: tensor<1x8x16x16xf32>, %w2: tensor<8x8x3x3xf32>) -> (tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [0, 1, 2, 3] : (tensor<1x32x1x1xf32>) -> tensor<1x32x16x16xf32>
  %s = kiln.add %y, %bb : tensor<1x32x16x16xf32>
  %t = kiln.add %r, %s : tensor<1x32x16x16xf32>
  %u = kiln.relu %t : tensor<1x32x16x16xf32>
  %z = kiln.conv %x, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>
  %cb = kiln.broadcast_in_dim %c, dims = [0, 1, 2, 3] : (tensor<1x32x16x1xf32>) -> tensor<1x32x16x16xf32>
  %zc = kiln.add %z, %cb : tensor<1x32x16x16xf32>
  %v = kiln.conv %x2, %w2, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %vr = kiln.relu %v : tensor<1x8x16x16xf32>
  %vs = kiln.add %v, %vr : tensor<1x8x16x16xf32>
  return %u, %zc, %vr, %vs : tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>
}

// -----

// A clip after a blocked convolution (ONNX's Clip, a ReLU6: kiln.max with a
// splat constant, then kiln.min with one; or a ReLU then kiln.min) moves
// into the call: flag 8192, its bounds the two last entries as f32 bits
// (0.0 is 0, 6.0 is 1086324736, -inf 4286578688). After a bias: 8209.
// min(x, 6) then max(x, 7) is not a clamp: only the min moves. A NaN bound
// (every result NaN, which oneDNN's clip would not give) stays out.
// CHECK-LABEL: func.func @clips(
// CHECK:         call @[[F0:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1, %{{.*}})
// CHECK:         call @[[F1:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1)
// CHECK:         %[[C:.*]] = call @[[F2:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1)
// CHECK:         kiln.max %[[C]]
// CHECK:         %[[D:.*]] = call @[[F3:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1)
// CHECK:         kiln.max %[[D]]
// The function computes the moved ops: the bias, then the clip.
// CHECK:       func.func private @[[F0]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 8209, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1086324736>}
// CHECK:         kiln.conv
// CHECK:         kiln.add
// CHECK:         %[[L:.*]] = kiln.max
// CHECK:         %[[H:.*]] = kiln.min %[[L]]
// CHECK:         return %[[H]]
// CHECK:       func.func private @[[F1]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 8208, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1086324736>}
// CHECK:       func.func private @[[F2]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 8208, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 4286578688, 1086324736>}
// CHECK:       func.func private @[[F3]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 16, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1>}
func.func @clips(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<1x8x16x16xf32>
  %six = kiln.constant dense<6.0> : tensor<1x8x16x16xf32>
  %seven = kiln.constant dense<7.0> : tensor<1x8x16x16xf32>
  %nan = kiln.constant dense<0x7FC00000> : tensor<1x8x16x16xf32>
  %a = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %ab = kiln.add %a, %bb : tensor<1x8x16x16xf32>
  %al = kiln.max %ab, %zero : tensor<1x8x16x16xf32>
  %ah = kiln.min %al, %six : tensor<1x8x16x16xf32>
  %r = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %rl = kiln.relu %r : tensor<1x8x16x16xf32>
  %rh = kiln.min %six, %rl : tensor<1x8x16x16xf32>
  %c = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %ch = kiln.min %c, %six : tensor<1x8x16x16xf32>
  %cl = kiln.max %ch, %seven : tensor<1x8x16x16xf32>
  %d = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %dn = kiln.max %d, %nan : tensor<1x8x16x16xf32>
  return %ah, %rh, %cl, %dn : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>
}

// -----

// A convolution with an activation whose result is another's input returns
// a bound on its magnitude too (flag 16384: +inf in the body, the library
// call computes one), which the other's call takes after its weights
// (32768), also through the relayouts of channels-last: flags 16 | 8192 |
// 16384 and 16 | 4 | 32768 (plus 128 | 256 channels-last).
// CHECK-LABEL: func.func @chain(
// CHECK:         %[[A:.*]]:2 = call @[[F0:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1) : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> (tensor<1x8x16x16xf32>, tensor<f32>)
// CHECK:         call @[[F1:kiln_dnnl_conv[_0-9]*]](%[[A]]#0, %arg1, %[[A]]#1) : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<f32>) -> tensor<1x8x16x16xf32>
// CHECK:       func.func private @[[F0]]({{.*}} -> (tensor<1x8x16x16xf32>, tensor<f32>) attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 24592, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1086324736>}
// CHECK:         %[[I:.*]] = kiln.constant dense<0x7F800000> : tensor<f32>
// CHECK:         return %{{.*}}, %[[I]]
// CHECK:       func.func private @[[F1]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 32788, 16, 16,
// LAST-LABEL: func.func @chain(
// LAST:         %[[A:.*]]:2 = call @{{.*}} -> (tensor<1x16x16x8xf32>, tensor<f32>)
// LAST:         call @{{.*}}(%{{.*}}, %arg1, %[[A]]#1)
func.func @chain(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %zero = kiln.constant dense<0.0> : tensor<1x8x16x16xf32>
  %six = kiln.constant dense<6.0> : tensor<1x8x16x16xf32>
  %a = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %al = kiln.max %a, %zero : tensor<1x8x16x16xf32>
  %ah = kiln.min %al, %six : tensor<1x8x16x16xf32>
  %b = kiln.conv %ah, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %br = kiln.relu %b : tensor<1x8x16x16xf32>
  return %br : tensor<1x8x16x16xf32>
}

// -----

// bf16 convolutions are outlined too, with flag 32; where the ops after one
// are bf16 ops (no kiln.cast widens its result), it takes no epilogue: the
// program rounds the bias, the addition and the ReLU to bf16 too (flags
// 48: bf16, blocked; the 1x1 one plain: 32). f16 stays loops.
// CHECK-LABEL: func.func @bf16(
// CHECK:         %[[Y:.*]] = call @[[F0:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1) : (tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>) -> tensor<1x8x16x16xbf16>
// CHECK:         %[[S:.*]] = kiln.add %[[Y]], %{{.*}} : tensor<1x8x16x16xbf16>
// CHECK:         kiln.relu %[[S]]
// CHECK:         call @[[F1:kiln_dnnl_conv[_0-9]*]](%arg0, %arg3)
// CHECK:         kiln.conv %arg4, %arg5
// CHECK-DAG:   func.func private @[[F0]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 48, 16, 16,
// CHECK-DAG:   func.func private @[[F1]]({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 32, 32, 16, 16,
// bf16 convolutions are laid out channels-last too (AMX's kernels want
// them so), still without an epilogue: flags 16 | 32 | 128 | 256.
// LAST-LABEL: func.func @bf16(
// LAST:         kiln.transpose %arg0, permutation = [0, 2, 3, 1] : tensor<1x8x16x16xbf16>
// LAST:         call @{{.*}} : (tensor<1x16x16x8xbf16>, tensor<8x8x3x3xbf16>) -> tensor<1x16x16x8xbf16>
// LAST:         kiln.conv %arg4, %arg5
// LAST-DAG:   func.func private @{{.*}}({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 432, 16, 16,
// LAST-DAG:   func.func private @{{.*}}({{.*}} {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 32, 432, 16, 16,
func.func @bf16(%x: tensor<1x8x16x16xbf16>, %w: tensor<8x8x3x3xbf16>, %b: tensor<8xbf16>, %w1: tensor<32x8x1x1xbf16>, %h: tensor<1x8x16x16xf16>, %g: tensor<8x8x3x3xf16>) -> (tensor<1x8x16x16xbf16>, tensor<1x32x16x16xbf16>, tensor<1x8x16x16xf16>) {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xbf16>) -> tensor<1x8x16x16xbf16>
  %s = kiln.add %y, %bb : tensor<1x8x16x16xbf16>
  %r = kiln.relu %s : tensor<1x8x16x16xbf16>
  %z = kiln.conv %x, %w1, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xbf16>, tensor<32x8x1x1xbf16>
  %f = kiln.conv %h, %g, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf16>, tensor<8x8x3x3xf16>
  return %r, %z, %f : tensor<1x8x16x16xbf16>, tensor<1x32x16x16xbf16>, tensor<1x8x16x16xf16>
}

// -----

// What kiln-autocast makes: each bf16 convolution's result widened to f32
// for its bias and clip, narrowed again for the next convolution. The
// call takes the bias and the clip and returns bf16 in place of the
// narrowing cast: flags 1 bias, 16 blocked, 32 bf16, 8192 clip and 16384
// (its result is the next one's input: 24625), then the clip's bounds.
// The next one's ReLU takes that bound (32768 | 32 | 16 | 4 = 32820).
// CHECK-LABEL: func.func @autocast_clip(
// CHECK:         %[[XH:.*]] = kiln.cast %arg0 : tensor<1x8x16x16xf32> to tensor<1x8x16x16xbf16>
// CHECK:         %[[WH:.*]] = kiln.cast %arg1
// CHECK:         %[[VH:.*]] = kiln.cast %arg3
// CHECK:         %[[Y:.*]]:2 = call @[[F0:kiln_dnnl_conv[_0-9]*]](%[[XH]], %[[WH]], %arg2) : (tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>, tensor<8xf32>) -> (tensor<1x8x16x16xbf16>, tensor<f32>)
// CHECK-NEXT:    %[[Z:.*]] = call @[[F1:kiln_dnnl_conv[_0-9]*]](%[[Y]]#0, %[[VH]], %[[Y]]#1) : (tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>, tensor<f32>) -> tensor<1x8x16x16xbf16>
// CHECK-NEXT:    return %[[Z]]
// CHECK:       func.func private @[[F0]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 24625, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1086324736>}
// CHECK:         %[[C:.*]] = kiln.conv
// CHECK-NEXT:    %[[W:.*]] = kiln.cast %[[C]] : tensor<1x8x16x16xbf16> to tensor<1x8x16x16xf32>
// CHECK:         %[[S:.*]] = kiln.add %[[W]],
// CHECK:         %[[M:.*]] = kiln.max %[[S]],
// CHECK:         %[[N:.*]] = kiln.min %[[M]],
// CHECK-NEXT:    %[[R:.*]] = kiln.cast %[[N]] : tensor<1x8x16x16xf32> to tensor<1x8x16x16xbf16>
// CHECK:         return %[[R]], %{{.*}} : tensor<1x8x16x16xbf16>, tensor<f32>
// CHECK:       func.func private @[[F1]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 32820, 16, 16,
// CHECK:         kiln.relu
// CHECK-NEXT:    kiln.cast {{.*}} to tensor<1x8x16x16xbf16>
func.func @autocast_clip(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>, %v: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xbf16> {
  %lo = kiln.constant dense<0.0> : tensor<1x8x16x16xf32>
  %hi = kiln.constant dense<6.0> : tensor<1x8x16x16xf32>
  %xh = kiln.cast %x : tensor<1x8x16x16xf32> to tensor<1x8x16x16xbf16>
  %wh = kiln.cast %w : tensor<8x8x3x3xf32> to tensor<8x8x3x3xbf16>
  %vh = kiln.cast %v : tensor<8x8x3x3xf32> to tensor<8x8x3x3xbf16>
  %yh = kiln.conv %xh, %wh, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>
  %y = kiln.cast %yh : tensor<1x8x16x16xbf16> to tensor<1x8x16x16xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %s = kiln.add %y, %bb : tensor<1x8x16x16xf32>
  %m = kiln.max %s, %lo : tensor<1x8x16x16xf32>
  %c = kiln.min %m, %hi : tensor<1x8x16x16xf32>
  %ch = kiln.cast %c : tensor<1x8x16x16xf32> to tensor<1x8x16x16xbf16>
  %zh = kiln.conv %ch, %vh, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>
  %z = kiln.cast %zh : tensor<1x8x16x16xbf16> to tensor<1x8x16x16xf32>
  %r = kiln.relu %z : tensor<1x8x16x16xf32>
  %rh = kiln.cast %r : tensor<1x8x16x16xf32> to tensor<1x8x16x16xbf16>
  return %rh : tensor<1x8x16x16xbf16>
}

// -----

// A residual addition keeps its f32 sum: the call takes the bias and the
// f32 addend and returns f32 (131072 | 32 | 16 | 2 | 1 = 131123).
// CHECK-LABEL: func.func @autocast_residual(
// CHECK:         %[[T:.*]] = call @[[F:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1, %arg2, %arg3) : (tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>, tensor<8xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// CHECK-NEXT:    return %[[T]]
// CHECK:       func.func private @[[F]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 131123, 16, 16,

func.func @autocast_residual(%xh: tensor<1x8x16x16xbf16>, %wh: tensor<8x8x3x3xbf16>, %b: tensor<8xf32>, %res: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %yh = kiln.conv %xh, %wh, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>
  %y = kiln.cast %yh : tensor<1x8x16x16xbf16> to tensor<1x8x16x16xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %s = kiln.add %y, %bb : tensor<1x8x16x16xf32>
  %t = kiln.add %s, %res : tensor<1x8x16x16xf32>
  return %t : tensor<1x8x16x16xf32>
}

// -----

// No SiLU on a bf16 convolution: the call takes the bias (49, a splat
// constant as the [O] vector) and returns bf16, widened again for the
// SiLU. The 1x1 convolution runs on plain layouts, so its call takes the
// bias only (33) and its ReLU reads the widened result. With nothing to
// take (an exp), the convolution's own result is widened (48).
// CHECK-LABEL: func.func @autocast_silu(
// CHECK:         %[[B:.*]] = kiln.constant dense<5.000000e-01> : tensor<8xf32>
// CHECK:         %[[Y:.*]] = call @[[F0:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1, %[[B]]) : (tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>, tensor<8xf32>) -> tensor<1x8x16x16xbf16>
// CHECK-NEXT:    %[[W:.*]] = kiln.cast %[[Y]] : tensor<1x8x16x16xbf16> to tensor<1x8x16x16xf32>
// CHECK-NEXT:    %[[G:.*]] = kiln.sigmoid %[[W]]
// CHECK-NEXT:    kiln.mul %[[W]], %[[G]]
// CHECK:         %[[Z:.*]] = call @[[F1:kiln_dnnl_conv[_0-9]*]](%arg0, %arg2, %{{.*}}) : (tensor<1x8x16x16xbf16>, tensor<32x8x1x1xbf16>, tensor<32xf32>) -> tensor<1x32x16x16xbf16>
// CHECK-NEXT:    %[[ZW:.*]] = kiln.cast %[[Z]] : tensor<1x32x16x16xbf16> to tensor<1x32x16x16xf32>
// CHECK-NEXT:    kiln.relu %[[ZW]]
// CHECK-NEXT:    %[[U:.*]] = call @[[F2:kiln_dnnl_conv[_0-9]*]](%arg0, %arg1) : (tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>) -> tensor<1x8x16x16xbf16>
// CHECK-NEXT:    %[[UW:.*]] = kiln.cast %[[U]]
// CHECK-NEXT:    kiln.exp %[[UW]]
// CHECK:       func.func private @[[F0]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 49, 16, 16,
// CHECK:         kiln.add
// CHECK-NEXT:    kiln.cast {{.*}} to tensor<1x8x16x16xbf16>
// CHECK:       func.func private @[[F1]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 32, 33, 16, 16,
// CHECK:       func.func private @[[F2]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 48, 16, 16,
// CHECK-NOT:     kiln.cast
// CHECK:         return

func.func @autocast_silu(%xh: tensor<1x8x16x16xbf16>, %wh: tensor<8x8x3x3xbf16>, %w1: tensor<32x8x1x1xbf16>) -> (tensor<1x8x16x16xf32>, tensor<1x32x16x16xf32>, tensor<1x8x16x16xf32>) {
  %bias = kiln.constant dense<0.5> : tensor<1x8x16x16xf32>
  %bias1 = kiln.constant dense<0.25> : tensor<1x32x16x16xf32>
  %yh = kiln.conv %xh, %wh, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>
  %y = kiln.cast %yh : tensor<1x8x16x16xbf16> to tensor<1x8x16x16xf32>
  %s = kiln.add %y, %bias : tensor<1x8x16x16xf32>
  %g = kiln.sigmoid %s : tensor<1x8x16x16xf32>
  %silu = kiln.mul %s, %g : tensor<1x8x16x16xf32>
  %zh = kiln.conv %xh, %w1, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xbf16>, tensor<32x8x1x1xbf16>
  %z = kiln.cast %zh : tensor<1x32x16x16xbf16> to tensor<1x32x16x16xf32>
  %zs = kiln.add %z, %bias1 : tensor<1x32x16x16xf32>
  %zr = kiln.relu %zs : tensor<1x32x16x16xf32>
  %uh = kiln.conv %xh, %wh, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xbf16>, tensor<8x8x3x3xbf16>
  %u = kiln.cast %uh : tensor<1x8x16x16xbf16> to tensor<1x8x16x16xf32>
  %e = kiln.exp %u : tensor<1x8x16x16xf32>
  return %silu, %zr, %e : tensor<1x8x16x16xf32>, tensor<1x32x16x16xf32>, tensor<1x8x16x16xf32>
}

// -----

// A grouped (here depthwise) convolution runs blocked (flag 16) even with
// few output positions (49, where an ungrouped one stays plain): on plain
// layouts oneDNN would run one small GEMM per group. 1152 * 49 outputs of
// 25 multiply-adds each.
// CHECK-LABEL: func.func @depthwise(
// CHECK:         call @kiln_dnnl_conv
// CHECK:       func.func private @kiln_dnnl_conv({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1152, 1, 1152, 1152, 16, 7, 7, 5, 5, 7, 7,
func.func @depthwise(%x: tensor<1x1152x7x7xf32>, %w: tensor<1152x1x5x5xf32>) -> tensor<1x1152x7x7xf32> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [2, 2], padding_high = [2, 2], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1152 : tensor<1x1152x7x7xf32>, tensor<1152x1x5x5xf32>
  return %y : tensor<1x1152x7x7xf32>
}

// -----

// A splat constant of the result's shape added to the result (an untrained
// model's zero biases, which the constant folder makes such a constant) is
// a bias of one value: the call takes it as an [O] vector (flag 1), not a
// tensor of the result's shape to add on each call (flag 2).
// CHECK-LABEL: func.func @uniform_bias(
// CHECK:         %[[B:.+]] = kiln.constant dense<2.500000e-01> : tensor<8xf32>
// CHECK:         call @kiln_dnnl_conv(%arg0, %arg1, %[[B]])
// CHECK:       func.func private @kiln_dnnl_conv({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 17,
func.func @uniform_bias(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %b = kiln.constant dense<0.25> : tensor<1x8x16x16xf32>
  %z = kiln.add %y, %b : tensor<1x8x16x16xf32>
  return %z : tensor<1x8x16x16xf32>
}

// -----

// A SiLU after a blocked convolution and its bias (EfficientNet's blocks)
// stays kiln's loop (oneDNN's swish post-op costs more): the function
// takes the bias only (flags 17: bias 1, blocked 16).
// CHECK-LABEL: func.func @silu(
// CHECK:         %[[Y:.+]] = call @kiln_dnnl_conv(%arg0, %arg1, %arg2)
// CHECK-NEXT:    %[[S:.+]] = kiln.sigmoid %[[Y]] :
// CHECK-NEXT:    %[[M:.+]] = kiln.mul %[[Y]], %[[S]]
// CHECK-NEXT:    return %[[M]]
// CHECK:       func.func private @kiln_dnnl_conv({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 17,
// CHECK:         kiln.conv
// CHECK:         kiln.add
// CHECK-NOT:     kiln.sigmoid
// CHECK:         return
func.func @silu(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %bias: tensor<8xf32>) -> tensor<1x8x16x16xf32> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %b = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %z = kiln.add %y, %b : tensor<1x8x16x16xf32>
  %s = kiln.sigmoid %z : tensor<1x8x16x16xf32>
  %m = kiln.mul %z, %s : tensor<1x8x16x16xf32>
  return %m : tensor<1x8x16x16xf32>
}

// -----

// Not a SiLU: the sigmoid multiplies another value, or the value has a
// third user; the convolution keeps its bias only.
// CHECK-LABEL: func.func @not_silu(
// CHECK:         kiln.sigmoid
// CHECK:         kiln.mul
// CHECK:       func.func private @kiln_dnnl_conv({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 8, 8, 17,
func.func @not_silu(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %bias: tensor<8xf32>, %v: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %b = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %z = kiln.add %y, %b : tensor<1x8x16x16xf32>
  %s = kiln.sigmoid %z : tensor<1x8x16x16xf32>
  %m = kiln.mul %v, %s : tensor<1x8x16x16xf32>
  return %m : tensor<1x8x16x16xf32>
}

// -----

// A quantized convolution (ONNX's QDQ form): the input is 8-bit integers
// dequantized, (x - zero point) * scale with splat constants, and the
// weights are int8 values times a scale exactly, here one per output
// channel (0.5 and 0.125: no single scale fits both). The call takes the
// uint8 source, the int8 weights, and the scales (the input's times the
// weights') followed by the src and dst zero points; flags 536: int8 512,
// blocked 16, constant weights 8. The function computes the same from its
// arguments.
// ALL-LABEL: func.func @quantized(
// ALL-DAG:     %[[Q:.+]] = kiln.constant dense<{{\[\[\[\[}}127]], {{\[\[}}-2]], {{\[\[}}5]], {{\[\[}}1]]], {{\[\[\[}}127]], {{\[\[}}2]], {{\[\[}}-3]], {{\[\[}}8]]]]> : tensor<2x4x1x1xi8>
// ALL-DAG:     %[[S:.+]] = kiln.constant dense<[3.125000e-02, 7.812500e-03, 1.280000e+02, 0.000000e+00]> : tensor<4xf32>
// ALL:         %[[Y:.+]] = call @kiln_dnnl_conv(%arg0, %[[Q]], %[[S]]) : (tensor<1x4x16x16xui8>, tensor<2x4x1x1xi8>, tensor<4xf32>) -> tensor<1x2x16x16xf32>
// ALL-NEXT:    return %[[Y]]
// ALL:       func.func private @kiln_dnnl_conv(%[[X:.+]]: tensor<1x4x16x16xui8>, %[[W:.+]]: tensor<2x4x1x1xi8>, %[[C:.+]]: tensor<4xf32>) -> tensor<1x2x16x16xf32> attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 4, 2, 536,
// ALL:         %[[XF:.+]] = kiln.cast %[[X]] : tensor<1x4x16x16xui8> to tensor<1x4x16x16xf32>
// ALL:         %[[PS:.+]] = kiln.slice %[[C]], start = [2], limit = [3], stride = [1]
// ALL:         %[[PR:.+]] = kiln.reshape %[[PS]]
// ALL:         %[[PB:.+]] = kiln.broadcast_in_dim %[[PR]], dims = []
// ALL:         %[[D:.+]] = kiln.sub %[[XF]], %[[PB]]
// ALL:         %[[WF:.+]] = kiln.cast %[[W]] : tensor<2x4x1x1xi8> to tensor<2x4x1x1xf32>
// ALL:         %[[V:.+]] = kiln.conv %[[D]], %[[WF]]
// ALL:         %[[CS:.+]] = kiln.slice %[[C]], start = [0], limit = [2], stride = [1]
// ALL:         %[[CB:.+]] = kiln.broadcast_in_dim %[[CS]], dims = [1]
// ALL:         %[[R:.+]] = kiln.mul %[[V]], %[[CB]]
// ALL:         return %[[R]]
func.func @quantized(%x: tensor<1x4x16x16xui8>) -> tensor<1x2x16x16xf32> {
  %z = kiln.constant dense<128.0> : tensor<1x4x16x16xf32>
  %s = kiln.constant dense<0.0625> : tensor<1x4x16x16xf32>
  %w = kiln.constant dense<[[[[63.5]], [[-1.0]], [[2.5]], [[0.5]]], [[[15.875]], [[0.25]], [[-0.375]], [[1.0]]]]> : tensor<2x4x1x1xf32>
  %c = kiln.cast %x : tensor<1x4x16x16xui8> to tensor<1x4x16x16xf32>
  %d = kiln.sub %c, %z : tensor<1x4x16x16xf32>
  %e = kiln.mul %s, %d : tensor<1x4x16x16xf32>
  %y = kiln.conv %e, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x16x16xf32>, tensor<2x4x1x1xf32>
  return %y : tensor<1x2x16x16xf32>
}

// -----

// An int8 source without a zero point, the weights one scale for all
// (0.25, where 31.75 is 127 of it): flags 1560 add the signed source, 1024;
// the zero points passed are 0.
// ALL-LABEL: func.func @quantized_signed(
// ALL-DAG:     kiln.constant dense<{{\[\[\[\[}}127]], {{\[\[}}-4]]], {{\[\[\[}}1]], {{\[\[}}0]]]]> : tensor<2x2x1x1xi8>
// ALL-DAG:     kiln.constant dense<[2.500000e-01, 2.500000e-01, 0.000000e+00, 0.000000e+00]> : tensor<4xf32>
// ALL:         call @kiln_dnnl_conv(%arg0, {{.*}}) : (tensor<1x2x16x16xi8>,
// ALL:       func.func private @kiln_dnnl_conv({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 2, 2, 1560,
func.func @quantized_signed(%x: tensor<1x2x16x16xi8>) -> tensor<1x2x16x16xf32> {
  %s = kiln.constant dense<1.0> : tensor<1x2x16x16xf32>
  %w = kiln.constant dense<[[[[31.75]], [[-1.0]]], [[[0.25]], [[0.0]]]]> : tensor<2x2x1x1xf32>
  %c = kiln.cast %x : tensor<1x2x16x16xi8> to tensor<1x2x16x16xf32>
  %e = kiln.mul %c, %s : tensor<1x2x16x16xf32>
  %y = kiln.conv %e, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x2x16x16xf32>, tensor<2x2x1x1xf32>
  return %y : tensor<1x2x16x16xf32>
}

// -----

// A quantized convolution's bias (a constant per channel), ReLU and
// QuantizeLinear (divide by 0.5, round, add 4, cast to uint8) move into the
// call, which then writes uint8: flags 6687 = int8 512, requantized 2048,
// constant weights 8, blocked 16, bias 1, relu 4, and channels-last 128 |
// 256 (the LAST run). The weights are 127 times 0.25 / 127, so each
// channel's scale is 0.25 * 0.25 / 127; the bias is divided by it (oneDNN
// adds the bias before scaling: 127 and -254), and the scales by the
// QuantizeLinear's 0.5; the dst zero point follows the src one.
// LAST-LABEL: func.func @requantized(
// LAST-DAG:     %[[B:.+]] = kiln.constant dense<[1.270000e+02, -2.540000e+02]> : tensor<2xf32>
// LAST-DAG:     %[[S:.+]] = kiln.constant dense<[9.842520e-04, 9.842520e-04, 1.280000e+02, 4.000000e+00]> : tensor<4xf32>
// LAST:         %[[T:.+]] = kiln.transpose %arg0, permutation = [0, 2, 3, 1] : tensor<1x4x16x16xui8>
// LAST:         %[[Y:.+]] = call @kiln_dnnl_conv(%[[T]], %{{.+}}, %[[B]], %[[S]]) : (tensor<1x16x16x4xui8>, tensor<2x4x3x3xi8>, tensor<2xf32>, tensor<4xf32>) -> tensor<1x16x16x2xui8>
// LAST:         %[[R:.+]] = kiln.transpose %[[Y]], permutation = [0, 3, 1, 2] : tensor<1x16x16x2xui8>
// LAST-NEXT:    return %[[R]]
// LAST:       func.func private @kiln_dnnl_conv({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 4, 2, 2973,
// LAST:         kiln.conv
// LAST:         kiln.add
// LAST:         kiln.mul
// LAST:         kiln.relu
// LAST:         kiln.add
// LAST:         kiln.round
// LAST:         kiln.cast %{{.+}} : tensor<1x2x16x16xf32> to tensor<1x2x16x16xui8>
func.func @requantized(%x: tensor<1x4x16x16xui8>) -> tensor<1x2x16x16xui8> {
  %z = kiln.constant dense<128.0> : tensor<1x4x16x16xf32>
  %s = kiln.constant dense<0.25> : tensor<1x4x16x16xf32>
  %w = kiln.constant dense<0.25> : tensor<2x4x3x3xf32>
  %c = kiln.cast %x : tensor<1x4x16x16xui8> to tensor<1x4x16x16xf32>
  %d = kiln.sub %c, %z : tensor<1x4x16x16xf32>
  %e = kiln.mul %d, %s : tensor<1x4x16x16xf32>
  %y = kiln.conv %e, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x16x16xf32>, tensor<2x4x3x3xf32>
  %b = kiln.constant dense<[0.0625, -0.125]> : tensor<2xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<1x2x16x16xf32>
  %yb = kiln.add %y, %bb : tensor<1x2x16x16xf32>
  %yr = kiln.relu %yb : tensor<1x2x16x16xf32>
  %qs = kiln.constant dense<0.5> : tensor<1x2x16x16xf32>
  %qz = kiln.constant dense<4.0> : tensor<1x2x16x16xf32>
  %q1 = kiln.div %yr, %qs : tensor<1x2x16x16xf32>
  %q2 = kiln.round %q1 : tensor<1x2x16x16xf32>
  %q3 = kiln.add %q2, %qz : tensor<1x2x16x16xf32>
  %q = kiln.cast %q3 : tensor<1x2x16x16xf32> to tensor<1x2x16x16xui8>
  return %q : tensor<1x2x16x16xui8>
}

// -----

// An odd zero point: oneDNN, which adds it before rounding, would round
// ties the other way, so the QuantizeLinear stays out of the call (flags
// 925: f32 dst with the bias and the ReLU).
// LAST-LABEL: func.func @odd_zero_point(
// LAST:         call @kiln_dnnl_conv({{.*}}) -> tensor<1x16x16x2xf32>
// LAST:         kiln.round
// LAST:       func.func private @kiln_dnnl_conv({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 4, 2, 925,
func.func @odd_zero_point(%x: tensor<1x4x16x16xui8>) -> tensor<1x2x16x16xui8> {
  %s = kiln.constant dense<0.25> : tensor<1x4x16x16xf32>
  %w = kiln.constant dense<0.25> : tensor<2x4x3x3xf32>
  %c = kiln.cast %x : tensor<1x4x16x16xui8> to tensor<1x4x16x16xf32>
  %e = kiln.mul %c, %s : tensor<1x4x16x16xf32>
  %y = kiln.conv %e, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x16x16xf32>, tensor<2x4x3x3xf32>
  %b = kiln.constant dense<[0.0625, -0.125]> : tensor<2xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<1x2x16x16xf32>
  %yb = kiln.add %y, %bb : tensor<1x2x16x16xf32>
  %yr = kiln.relu %yb : tensor<1x2x16x16xf32>
  %qs = kiln.constant dense<0.5> : tensor<1x2x16x16xf32>
  %qz = kiln.constant dense<3.0> : tensor<1x2x16x16xf32>
  %q1 = kiln.div %yr, %qs : tensor<1x2x16x16xf32>
  %q2 = kiln.round %q1 : tensor<1x2x16x16xf32>
  %q3 = kiln.add %q2, %qz : tensor<1x2x16x16xf32>
  %q = kiln.cast %q3 : tensor<1x2x16x16xf32> to tensor<1x2x16x16xui8>
  return %q : tensor<1x2x16x16xui8>
}

// -----

// Not quantized convolutions, which stay f32 (flags 8: constant weights):
// weights that are no int8 values times a scale (0.70710677 and 0.5 are
// no q * s for one s, in f32, per tensor or per channel), a zero point
// that is no uint8 value, and an input that is no dequantized integers.
// ALL-LABEL: func.func @not_quantized(
// ALL-COUNT-3: call @kiln_dnnl_conv{{.*}} : (tensor<1x2x16x16xf32>, tensor<2x2x1x1xf32>)
// ALL-NOT:     xi8>
func.func @not_quantized(%x: tensor<1x2x16x16xui8>, %f: tensor<1x2x16x16xf32>) -> (tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>) {
  %s = kiln.constant dense<1.0> : tensor<1x2x16x16xf32>
  %z = kiln.constant dense<300.0> : tensor<1x2x16x16xf32>
  %w = kiln.constant dense<[[[[1.0]], [[-1.0]]], [[[0.70710677]], [[0.5]]]]> : tensor<2x2x1x1xf32>
  %v = kiln.constant dense<[[[[1.0]], [[-1.0]]], [[[0.25]], [[0.0]]]]> : tensor<2x2x1x1xf32>
  %c = kiln.cast %x : tensor<1x2x16x16xui8> to tensor<1x2x16x16xf32>
  %e = kiln.mul %c, %s : tensor<1x2x16x16xf32>
  %y = kiln.conv %e, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x2x16x16xf32>, tensor<2x2x1x1xf32>
  %d = kiln.sub %c, %z : tensor<1x2x16x16xf32>
  %g = kiln.mul %d, %s : tensor<1x2x16x16xf32>
  %u = kiln.conv %g, %v, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x2x16x16xf32>, tensor<2x2x1x1xf32>
  %t = kiln.conv %f, %v, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x2x16x16xf32>, tensor<2x2x1x1xf32>
  return %y, %u, %t : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>
}

// -----

// oneDNN's Winograd algorithm (flag 65536, with 16: its own layouts) for a
// 3x3 window at stride 1 with at least 16 input channels, 64 output
// channels and 392 output positions (two 14x14), where `winograd` allows it;
// its call reads magnitudes like an activation's: %a's bound goes to %g.
// The others keep direct sums: two 13x14 positions, stride 2, 32 output
// channels, a 5x5 window, two groups (flags 16 | 128 | 256 = 400). %a:
// 400 | 4 (ReLU) | 16384 (bound) = 16788, with 65536 82324; %g: 400 |
// 65536 | 32768 (takes the bound) = 98704.
// WINO-LABEL: func.func @winograd(
// WINO:         %[[A:[0-9]+]]:2 = call @[[FA:kiln_dnnl_conv[_0-9]*]](
// WINO:         call @[[FB:kiln_dnnl_conv[_0-9]*]](
// WINO:         call @[[FC:kiln_dnnl_conv[_0-9]*]](
// WINO:         call @[[FD:kiln_dnnl_conv[_0-9]*]](
// WINO:         call @[[FE:kiln_dnnl_conv[_0-9]*]](
// WINO:         call @[[FF:kiln_dnnl_conv[_0-9]*]](
// WINO:         call @[[FG:kiln_dnnl_conv[_0-9]*]](%{{.*}}, %arg7, %[[A]]#1)
// WINO-DAG:   func.func private @[[FA]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 82324, 14, 14, 3, 3, 14, 14,
// WINO-DAG:   func.func private @[[FB]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 400, 13, 14, 3, 3, 13, 14,
// WINO-DAG:   func.func private @[[FC]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 400, 28, 28, 3, 3, 14, 14, 2, 2,
// WINO-DAG:   func.func private @[[FD]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 32, 400, 14, 14, 3, 3,
// WINO-DAG:   func.func private @[[FE]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 400, 14, 14, 5, 5,
// WINO-DAG:   func.func private @[[FF]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 2, 2, 16, 64, 400, 14, 14, 3, 3,
// WINO-DAG:   func.func private @[[FG]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 64, 64, 98704, 14, 14, 3, 3,
// kiln's own Winograd algorithm (flag 4194304, prefix OWN) wherever the shape
// allows, on the layouts chosen (blocked by 8 as they are: 524288 |
// 1048576 | 262144 = 1835008): %a with its ReLU and its bound (| 4 |
// 16384 = 6045700), the 13x14 maps and the 32 output channels (6029312),
// %g taking %a's bound (| 32768 = 6062080); stride 2, the 5x5 window and
// the groups stay direct.
// OWN-LABEL: func.func @winograd(
// OWN:         %[[A:[0-9]+]]:2 = call @[[FA:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FB:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FC:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FD:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FE:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FF:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FG:kiln_dnnl_conv[_0-9]*]](%{{.*}}, %arg7, %[[A]]#1)
// OWN-DAG:   func.func private @[[FA]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 6045700, 14, 14, 3, 3, 14, 14,
// OWN-DAG:   func.func private @[[FB]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 6029312, 13, 14, 3, 3, 13, 14,
// OWN-DAG:   func.func private @[[FC]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 1835008, 28, 28, 3, 3, 14, 14, 2, 2,
// OWN-DAG:   func.func private @[[FD]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 32, 6029312, 14, 14, 3, 3,
// OWN-DAG:   func.func private @[[FE]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 1835008, 14, 14, 5, 5,
// OWN-DAG:   func.func private @[[FF]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 2, 2, 16, 64, 1835008, 14, 14, 3, 3,
// OWN-DAG:   func.func private @[[FG]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 64, 64, 6062080, 14, 14, 3, 3,
// LAST-LABEL: func.func @winograd(
// LAST:         call @[[FA:kiln_dnnl_conv[_0-9]*]](
// LAST-DAG:   func.func private @[[FA]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 16, 64, 16788, 14, 14, 3, 3, 14, 14,
func.func @winograd(%x: tensor<2x16x14x14xf32>, %w: tensor<64x16x3x3xf32>, %x13: tensor<2x16x13x14xf32>, %x28: tensor<2x16x28x28xf32>, %w32: tensor<32x16x3x3xf32>, %w5: tensor<64x16x5x5xf32>, %wg: tensor<64x8x3x3xf32>, %v: tensor<64x64x3x3xf32>) -> (tensor<2x64x14x14xf32>, tensor<2x64x13x14xf32>, tensor<2x64x14x14xf32>, tensor<2x32x14x14xf32>, tensor<2x64x14x14xf32>, tensor<2x64x14x14xf32>) {
  %a = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x14x14xf32>, tensor<64x16x3x3xf32>
  %ar = kiln.relu %a : tensor<2x64x14x14xf32>
  %b = kiln.conv %x13, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x13x14xf32>, tensor<64x16x3x3xf32>
  %c = kiln.conv %x28, %w, strides = [2, 2], padding_low = [1, 1], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x28x28xf32>, tensor<64x16x3x3xf32>
  %d = kiln.conv %x, %w32, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x14x14xf32>, tensor<32x16x3x3xf32>
  %e = kiln.conv %x, %w5, strides = [1, 1], padding_low = [2, 2], padding_high = [2, 2], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x14x14xf32>, tensor<64x16x5x5xf32>
  %f = kiln.conv %x, %wg, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 2 : tensor<2x16x14x14xf32>, tensor<64x8x3x3xf32>
  %g = kiln.conv %ar, %v, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x14x14xf32>, tensor<64x64x3x3xf32>
  return %g, %b, %c, %d, %e, %f : tensor<2x64x14x14xf32>, tensor<2x64x13x14xf32>, tensor<2x64x14x14xf32>, tensor<2x32x14x14xf32>, tensor<2x64x14x14xf32>, tensor<2x64x14x14xf32>
}

// -----

// kiln's own Winograd algorithm for windows of one row or one column (F(m,
// r) along the window's dim, 3 <= r <= 7): 1x7, 7x1 and 1x3 at stride 1
// (6029312 = 1835008 | 4194304); a 1x9 window and a 1x7 one at stride 2
// stay direct (1835008).
// OWN-LABEL: func.func @winograd_lines(
// OWN:         call @[[FA:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FB:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FC:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FD:kiln_dnnl_conv[_0-9]*]](
// OWN:         call @[[FE:kiln_dnnl_conv[_0-9]*]](
// OWN-DAG:   func.func private @[[FA]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 64, 64, 6029312, 17, 17, 1, 7, 17, 17, 1, 1, 0, 3, 0, 3, 1, 1>}
// OWN-DAG:   func.func private @[[FB]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 64, 64, 6029312, 17, 17, 7, 1, 17, 17, 1, 1, 3, 0, 3, 0, 1, 1>}
// OWN-DAG:   func.func private @[[FC]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 64, 64, 6029312, 17, 17, 1, 3, 17, 17,
// OWN-DAG:   func.func private @[[FD]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 64, 64, 1835008, 17, 17, 1, 9, 17, 17,
// OWN-DAG:   func.func private @[[FE]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 64, 64, 1835008, 17, 17, 1, 7, 17, 9, 1, 2,
func.func @winograd_lines(%x: tensor<1x64x17x17xf32>, %w17: tensor<64x64x1x7xf32>, %w71: tensor<64x64x7x1xf32>, %w13: tensor<64x64x1x3xf32>, %w19: tensor<64x64x1x9xf32>) -> (tensor<1x64x17x17xf32>, tensor<1x64x17x17xf32>, tensor<1x64x17x17xf32>, tensor<1x64x17x17xf32>, tensor<1x64x17x9xf32>) {
  %a = kiln.conv %x, %w17, strides = [1, 1], padding_low = [0, 3], padding_high = [0, 3], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x64x17x17xf32>, tensor<64x64x1x7xf32>
  %b = kiln.conv %x, %w71, strides = [1, 1], padding_low = [3, 0], padding_high = [3, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x64x17x17xf32>, tensor<64x64x7x1xf32>
  %c = kiln.conv %x, %w13, strides = [1, 1], padding_low = [0, 1], padding_high = [0, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x64x17x17xf32>, tensor<64x64x1x3xf32>
  %d = kiln.conv %x, %w19, strides = [1, 1], padding_low = [0, 4], padding_high = [0, 4], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x64x17x17xf32>, tensor<64x64x1x9xf32>
  %e = kiln.conv %x, %w17, strides = [1, 2], padding_low = [0, 3], padding_high = [0, 3], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x64x17x17xf32>, tensor<64x64x1x7xf32>
  return %a, %b, %c, %d, %e : tensor<1x64x17x17xf32>, tensor<1x64x17x17xf32>, tensor<1x64x17x17xf32>, tensor<1x64x17x17xf32>, tensor<1x64x17x9xf32>
}

// -----

// Where kiln's own F(4x4, 3x3) pays (`winograd=query`, the same on every
// CPU; flag 4194304 on blocked-8's 1835008 = 6029312): at least 8 tiles of
// 4x4 outputs, C K / (C + K) at least 32 and at least 57 / (4 covered -
// 1), covered being the share of the tiles' outputs inside the map.
// 128 -> 64 (42.7) on a 28x28 map runs it, 128 -> 32 (25.6) not; 64 -> 64
// (32) on two 5x5 maps (8 tiles covered 0.39: at least 102) not, on one
// 7x7 map (4 tiles) not, on two (8 tiles covered 0.77: at least 27.7) it
// does; 256 -> 256 on a 14x14 map (16 tiles) does.
// QUERY-LABEL: func.func @winograd_pays(
// QUERY:         call @[[FA:kiln_dnnl_conv[_0-9]*]](
// QUERY:         call @[[FB:kiln_dnnl_conv[_0-9]*]](
// QUERY:         call @[[FC:kiln_dnnl_conv[_0-9]*]](
// QUERY:         call @[[FD:kiln_dnnl_conv[_0-9]*]](
// QUERY:         call @[[FE:kiln_dnnl_conv[_0-9]*]](
// QUERY:         call @[[FF:kiln_dnnl_conv[_0-9]*]](
// QUERY-DAG:   func.func private @[[FA]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 128, 64, 6029312, 28, 28,
// QUERY-DAG:   func.func private @[[FB]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 128, 32, 1835008, 28, 28,
// QUERY-DAG:   func.func private @[[FC]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 64, 64, 1835008, 5, 5,
// QUERY-DAG:   func.func private @[[FD]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 64, 64, 1835008, 7, 7,
// QUERY-DAG:   func.func private @[[FE]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 2, 64, 64, 6029312, 7, 7,
// QUERY-DAG:   func.func private @[[FF]]({{.*}} attributes {kiln.dnnl_conv = array<i64: 2, 1, 1, 256, 256, 6029312, 14, 14,
func.func @winograd_pays(%x28: tensor<1x128x28x28xf32>, %w64: tensor<64x128x3x3xf32>, %w32: tensor<32x128x3x3xf32>, %x5: tensor<2x64x5x5xf32>, %x7: tensor<1x64x7x7xf32>, %y7: tensor<2x64x7x7xf32>, %v: tensor<64x64x3x3xf32>, %x14: tensor<1x256x14x14xf32>, %u: tensor<256x256x3x3xf32>) -> (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<2x64x5x5xf32>, tensor<1x64x7x7xf32>, tensor<2x64x7x7xf32>, tensor<1x256x14x14xf32>) {
  %a = kiln.conv %x28, %w64, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x128x28x28xf32>, tensor<64x128x3x3xf32>
  %b = kiln.conv %x28, %w32, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x128x28x28xf32>, tensor<32x128x3x3xf32>
  %c = kiln.conv %x5, %v, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x5x5xf32>, tensor<64x64x3x3xf32>
  %e = kiln.conv %x7, %v, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>
  %f = kiln.conv %y7, %v, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x7x7xf32>, tensor<64x64x3x3xf32>
  %g = kiln.conv %x14, %u, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32>
  return %a, %b, %c, %e, %f, %g : tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<2x64x5x5xf32>, tensor<1x64x7x7xf32>, tensor<2x64x7x7xf32>, tensor<1x256x14x14xf32>
}

// -----

// An unknown winograd option is an error.
// RUN: not kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs=winograd=sometimes 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADW
// BADW: winograd must be 'query', 'always', 'own' or 'never', not 'sometimes'
func.func @bad_winograd(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  return %y : tensor<1x8x16x16xf32>
}

// -----

// An unknown layouts option is an error.
// RUN: not kiln-opt %s --split-input-file \
// RUN:   --kiln-cpu-outline-dnnl-convs=layouts=sideways 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: layouts must be 'query', 'channels-last', 'channels-last-direct', 'blocked-8', 'blocked-16' or 'plain', not 'sideways'
func.func @bad(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  return %y : tensor<1x8x16x16xf32>
}
