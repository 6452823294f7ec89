// kiln-fuse-linalg-groups without recompute-transcendentals (the CPU
// pipeline's setting): a producer that evaluates erf or exp and that
// several reductions read (directly or through elementwise ops) is computed
// once, into a tensor its readers read; with the option (the default) it is
// recomputed in each reader. So is one that the region returns and a
// reduction reads (it is written anyway). One reduction and elementwise
// readers (softmax), or plain arithmetic, recompute it either way.
// RUN: kiln-opt %s --split-input-file --kiln-fuse --kiln-to-linalg \
// RUN:   --kiln-fuse-linalg-groups=recompute-transcendentals=false \
// RUN:   --kiln-inline-fused-kernels --canonicalize --cse | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fuse --kiln-to-linalg \
// RUN:   --kiln-fuse-linalg-groups --kiln-inline-fused-kernels \
// RUN:   --canonicalize --cse | FileCheck %s --check-prefix=RECOMPUTE

// A GELU read by a dynamic quantization: its minimum (as -max(-x)), its
// maximum and the rounding loop. The erf is computed once; the arithmetic
// around it is recomputed in each reader.
// CHECK-LABEL: func.func @gelu_quantized
// CHECK: %[[ERF:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[X:[a-z0-9_]+]] :
// CHECK: math.erf
// CHECK-NOT: math.erf
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%[[X]], %[[ERF]] :
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%[[X]], %[[ERF]] :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[X]], %[[ERF]],
// CHECK: math.roundeven
// RECOMPUTE-LABEL: func.func @gelu_quantized
// RECOMPUTE-COUNT-3: math.erf
func.func @gelu_quantized(%x: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<f32>) {
  %r2 = kiln.constant dense<1.41421354> : tensor<16x32xf32>
  %d = kiln.div %x, %r2 : tensor<16x32xf32>
  %e = kiln.erf %d : tensor<16x32xf32>
  %one = kiln.constant dense<1.0> : tensor<16x32xf32>
  %e1 = kiln.add %e, %one : tensor<16x32xf32>
  %g = kiln.mul %x, %e1 : tensor<16x32xf32>
  %ng = kiln.neg %g : tensor<16x32xf32>
  %nmin = kiln.reduce_max %ng, dims = [0, 1] : tensor<16x32xf32>
  %min = kiln.neg %nmin : tensor<f32>
  %max = kiln.reduce_max %g, dims = [0, 1] : tensor<16x32xf32>
  %w = kiln.sub %max, %min : tensor<f32>
  %c255 = kiln.constant dense<255.0> : tensor<f32>
  %scale = kiln.div %w, %c255 : tensor<f32>
  %sb = kiln.broadcast_in_dim %scale, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
  %q = kiln.div %g, %sb : tensor<16x32xf32>
  %r = kiln.round %q : tensor<16x32xf32>
  return %r, %scale : tensor<16x32xf32>, tensor<f32>
}

// -----

// Softmax: exp(x - max) is read by one reduction (the sum) and by the
// normalization: recomputed.
// CHECK-LABEL: func.func @softmax
// CHECK-COUNT-2: math.exp
// CHECK-NOT: math.exp
// RECOMPUTE-LABEL: func.func @softmax
// RECOMPUTE-COUNT-2: math.exp
// RECOMPUTE-NOT: math.exp
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<4x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %s = kiln.sub %x, %mb : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  %sum = kiln.reduce_sum %e, dims = [1] : tensor<4x8xf32>
  %sumb = kiln.broadcast_in_dim %sum, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %y = kiln.div %e, %sumb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Plain arithmetic read by two reductions is still recomputed in each.
// CHECK-LABEL: func.func @arithmetic
// CHECK-COUNT-2: arith.mulf
// CHECK-NOT: arith.mulf
func.func @arithmetic(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sq = kiln.mul %x, %x : tensor<4x8xf32>
  %sum = kiln.reduce_sum %sq, dims = [1] : tensor<4x8xf32>
  %max = kiln.reduce_max %sq, dims = [1] : tensor<4x8xf32>
  return %sum, %max : tensor<4xf32>, tensor<4xf32>
}

// -----

// A squeeze-excitation gate: the sigmoid of 16 values scales a 4x6x16
// activation through a broadcast. Fused into the product it would evaluate
// exp once per activation; it is computed once, into a tensor of 16 that
// the product reads. With the option it is one generic.
// CHECK-LABEL: func.func @gate
// CHECK: %[[GATE:.+]] = linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} ins(%{{.*}} : tensor<16xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} ins(%{{.*}}, %[[GATE]] : tensor<4x6x16xf32>, tensor<16xf32>)
// CHECK-NOT: math.exp
// CHECK: return
// RECOMPUTE-LABEL: func.func @gate
// RECOMPUTE: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// RECOMPUTE: math.exp
// RECOMPUTE-NOT: linalg.generic
// RECOMPUTE: return
func.func @gate(%g: tensor<16xf32>, %x: tensor<4x6x16xf32>) -> tensor<4x6x16xf32> {
  %s = kiln.sigmoid %g : tensor<16xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [2] : (tensor<16xf32>) -> tensor<4x6x16xf32>
  %y = kiln.mul %x, %sb : tensor<4x6x16xf32>
  return %y : tensor<4x6x16xf32>
}

// -----

// The same sigmoid read element for element (as many iterations as
// elements) is fused: one generic, one exp per element either way.
// CHECK-LABEL: func.func @same_shape
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @same_shape(%g: tensor<6x16xf32>, %x: tensor<6x16xf32>) -> tensor<6x16xf32> {
  %s = kiln.sigmoid %g : tensor<6x16xf32>
  %y = kiln.mul %x, %s : tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

// -----

// A squeeze-excitation block's SiLU: the region returns it (the gate will
// scale it) and its spatial mean reads it. The mean reads the returned
// values instead of evaluating the SiLU a second time; recomputed with
// the option.
// CHECK-LABEL: func.func @silu_mean
// CHECK: %[[SILU:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]{{.*}} ins(%[[SILU]] :
// CHECK: return %[[SILU]],
// RECOMPUTE-LABEL: func.func @silu_mean
// RECOMPUTE-COUNT-2: math.exp
// RECOMPUTE-NOT: math.exp
func.func @silu_mean(%x: tensor<4x6x8xf32>) -> (tensor<4x6x8xf32>, tensor<4x8xf32>) {
  %s = kiln.sigmoid %x : tensor<4x6x8xf32>
  %y = kiln.mul %x, %s : tensor<4x6x8xf32>
  %m = kiln.reduce_mean %y, dims = [1] : tensor<4x6x8xf32>
  return %y, %m : tensor<4x6x8xf32>, tensor<4x8xf32>
}
