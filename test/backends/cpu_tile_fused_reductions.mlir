// REQUIRES: openmp
// kiln-cpu-tile-fused-reductions: each kiln.fused_kernel with reductions
// (softmax, layer norm, log-sum-exp) becomes one scf.forall over its rows,
// the reductions computed per row inside it; kernels without a generic
// reduction (a matmul epilogue) are left alone.
// RUN: kiln-opt %s --split-input-file --kiln-fuse --kiln-to-linalg \
// RUN:   --kiln-fuse-linalg-groups --canonicalize --cse \
// RUN:   --kiln-cpu-tile-fused-reductions --kiln-inline-fused-kernels \
// RUN:   | FileCheck %s
// The whole CPU pipeline: a softmax large enough for threads is one OpenMP
// parallel loop; without fusion it is one per kiln op that survives.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-lowering \
// RUN:   | FileCheck %s --check-prefix=LOWERED
// RUN: kiln-opt %s --split-input-file --kiln-cpu-lowering=fuse=false \
// RUN:   | FileCheck %s --check-prefix=UNFUSED

// Softmax over rows of 192 (a multiple of 64 f32 lanes): both reductions
// are split into 64 partial results per row (the lane loop is parallel, so it
// vectorizes) and combined, all inside the row loop; every tile is written
// into a shared output of the loop, never a buffer of its own.
// CHECK-LABEL: func.func @softmax(
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[ROW:.+]]) in (512) shared_outs(
// CHECK:           %[[IN:.+]] = tensor.extract_slice %{{.+}}[%[[ROW]], 0, 0] [1, 3, 64]
// CHECK:           linalg.fill
// CHECK:           %[[MAXL:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]{{.*}} ins(%[[IN]] :
// CHECK:             arith.maximumf
// CHECK:           %[[MAX:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[MAXL]] :
// CHECK:             arith.maximumf
// CHECK:           %[[SUML:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]{{.*}} ins(%{{.+}}, %[[MAX]] :
// CHECK:             math.exp
// CHECK:             arith.addf
// CHECK:           %[[SUM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[SUML]] :
// CHECK:           %[[Y:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%{{.+}}, %[[MAX]], %[[SUM]] :
// CHECK:             math.exp
// CHECK:             arith.divf
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %[[Y]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
// LOWERED-LABEL: llvm.func internal @kiln_impl_softmax(
// LOWERED:         omp.parallel
// LOWERED-NOT:     @_mlir_memref_to_llvm_alloc
// LOWERED:         omp.terminator
// LOWERED-NOT:     omp.parallel
// LOWERED:       llvm.func @kiln_entry_softmax(
// UNFUSED-LABEL: llvm.func internal @kiln_impl_softmax(
// UNFUSED:         omp.parallel
// UNFUSED:         omp.parallel
// UNFUSED:       llvm.func @kiln_entry_softmax(
func.func @softmax(%x: tensor<512x192xf32>) -> tensor<512x192xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<512x192xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<512xf32>) -> tensor<512x192xf32>
  %s = kiln.sub %x, %mb : tensor<512x192xf32>
  %e = kiln.exp %s : tensor<512x192xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<512x192xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0] : (tensor<512xf32>) -> tensor<512x192xf32>
  %y = kiln.div %e, %zb : tensor<512x192xf32>
  return %y : tensor<512x192xf32>
}

// -----

// Layer norm over the last dim of a rank-3 tensor, rows of 37 (not split):
// the loop runs over both leading dims; the mean and the variance
// accumulate into destinations of their own.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[I:.+]], %[[J:.+]]) in (8, 4) shared_outs(%[[OUT:[a-z0-9]+]] = %{{[^,]+}}, %[[A:[a-z0-9]+]] = %{{[^,]+}}, %[[B:[a-z0-9]+]] = %{{[^)]+}})
// CHECK:           %[[X:.+]] = tensor.extract_slice %{{.+}}[%[[I]], %[[J]], 0] [1, 1, 37] [1, 1, 1]
// CHECK-DAG:       %[[SA:.+]] = tensor.extract_slice %[[A]][%[[I]], %[[J]]] [1, 1]
// CHECK-DAG:       %[[SB:.+]] = tensor.extract_slice %[[B]][%[[I]], %[[J]]] [1, 1]
// CHECK-DAG:       %[[FA:.+]] = linalg.fill {{.*}} outs(%[[SA]] :
// CHECK-DAG:       %[[FB:.+]] = linalg.fill {{.*}} outs(%[[SB]] :
// CHECK:           %[[MEAN:.+]] = linalg.generic {{.*}}"reduction"]{{.*}} ins(%[[X]] : {{.*}} outs(%[[FB]] :
// CHECK:           %[[VAR:.+]] = linalg.generic {{.*}}"reduction"]{{.*}} ins(%[[X]], %[[MEAN]] : {{.*}} outs(%[[FA]] :
// CHECK:           %[[Y:.+]] = linalg.generic {{.*}}["parallel", "parallel", "parallel"]{{.*}} ins(%[[X]], %[[MEAN]], %[[VAR]],
// CHECK:             math.sqrt
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice %[[Y]] into %[[OUT]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @layer_norm(%x: tensor<8x4x37xf32>, %g: tensor<37xf32>, %b: tensor<37xf32>) -> tensor<8x4x37xf32> {
  %mean = kiln.reduce_mean %x, dims = [2] : tensor<8x4x37xf32>
  %mb = kiln.broadcast_in_dim %mean, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<8x4x37xf32>
  %xc = kiln.sub %x, %mb : tensor<8x4x37xf32>
  %sq = kiln.mul %xc, %xc : tensor<8x4x37xf32>
  %var = kiln.reduce_mean %sq, dims = [2] : tensor<8x4x37xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<8x4xf32>
  %ve = kiln.add %var, %eps : tensor<8x4xf32>
  %r = kiln.rsqrt %ve : tensor<8x4xf32>
  %rb = kiln.broadcast_in_dim %r, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<8x4x37xf32>
  %n = kiln.mul %xc, %rb : tensor<8x4x37xf32>
  %gb = kiln.broadcast_in_dim %g, dims = [2] : (tensor<37xf32>) -> tensor<8x4x37xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [2] : (tensor<37xf32>) -> tensor<8x4x37xf32>
  %ng = kiln.mul %n, %gb : tensor<8x4x37xf32>
  %y = kiln.add %ng, %bb : tensor<8x4x37xf32>
  return %y : tensor<8x4x37xf32>
}

// -----

// Log-sum-exp: the epilogue is over the rows themselves, one element per
// iteration, with the max and the sum of that row computed before it.
// CHECK-LABEL: func.func @log_sum_exp(
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[ROW:.+]]) in (5)
// CHECK:           %[[MAX:.+]] = linalg.generic {{.*}}["parallel", "reduction"]
// CHECK:             arith.maximumf
// CHECK:           %[[SUM:.+]] = linalg.generic {{.*}}["parallel", "reduction"]{{.*}} ins(%{{.+}}, %[[MAX]] :
// CHECK:             math.exp
// CHECK:           %[[Y:.+]] = linalg.generic {{.*}}["parallel"]{{.*}} ins(%[[SUM]], %[[MAX]] :
// CHECK:             math.log
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice %[[Y]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @log_sum_exp(%x: tensor<5x12xf32>) -> tensor<5xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<5x12xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<5xf32>) -> tensor<5x12xf32>
  %s = kiln.sub %x, %mb : tensor<5x12xf32>
  %e = kiln.exp %s : tensor<5x12xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<5x12xf32>
  %l = kiln.log %z : tensor<5xf32>
  %y = kiln.add %l, %m : tensor<5xf32>
  return %y : tensor<5xf32>
}

// -----

// A matmul epilogue region has a contraction but no generic reduction: it
// is not tiled, so the matmul stays whole (for oneDNN).
// CHECK-LABEL: func.func @matmul_bias(
// CHECK-NOT:     scf.forall
// CHECK:         linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<16x32xf32>, tensor<32x8xf32>)
// CHECK:         linalg.generic
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @matmul_bias(%a: tensor<16x32xf32>, %w: tensor<32x8xf32>, %b: tensor<8xf32>) -> tensor<16x8xf32> {
  %p = kiln.matmul %a, %w : tensor<16x32xf32>, tensor<32x8xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<16x8xf32>
  %y = kiln.add %p, %bb : tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}

// -----

// Two reductions of the rows, read along different dims of the epilogue
// (r1[i] * r2[j]): tiling would recompute each once per element, so the
// region is left as it is.
// CHECK-LABEL: func.func @outer_product_of_reductions(
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @outer_product_of_reductions(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %s = kiln.reduce_sum %x, dims = [1] : tensor<32x32xf32>
  %m = kiln.reduce_max %x, dims = [1] : tensor<32x32xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0] : (tensor<32xf32>) -> tensor<32x32xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [1] : (tensor<32xf32>) -> tensor<32x32xf32>
  %y = kiln.mul %sb, %mb : tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}

// -----

// A reduction kernel that reads the reduction of another group (the max,
// kept apart from the sum by the matmul between them): once tiled, its own
// reduction is inside the row loop, and reading the max from outside is
// not a lost member.
// CHECK-LABEL: func.func @reads_reduction_of_another_group
// CHECK: linalg.matmul
// CHECK: scf.forall
// CHECK: arith.divf
// CHECK: return
func.func @reads_reduction_of_another_group(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<4x8xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
  %d = kiln.sub %x, %mb : tensor<4x8xf32>
  %e = kiln.exp %d : tensor<4x8xf32>
  %p = kiln.matmul %e, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %s = kiln.reduce_sum %p, dims = [1] : tensor<4x8xf32>
  %q = kiln.div %s, %m : tensor<4xf32>
  return %q : tensor<4xf32>
}

// -----

// A bias gradient's update: a column sum (over the outer dim only) and the
// elementwise step after it. A row loop would walk the input by columns,
// so the kernel stays untiled and unsplit: the sum is one nest with the
// reduced dim outer and the contiguous dim inner.
// CHECK-LABEL: func.func @column_sum_update(
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%{{.+}} : tensor<256x1024xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK:           arith.mulf
// CHECK:           arith.subf
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @column_sum_update(%g: tensor<256x1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %s = kiln.reduce_sum %g, dims = [0] : tensor<256x1024xf32>
  %c = kiln.constant dense<1.000000e-01> : tensor<1024xf32>
  %m = kiln.mul %s, %c : tensor<1024xf32>
  %u = kiln.sub %b, %m : tensor<1024xf32>
  return %u : tensor<1024xf32>
}

// -----

// Softmax of scores plus a mask broadcast over heads and rows (BERT's
// attention mask, 1x1x1xN, read through (d0, 0, 0, d3)): the reductions
// read the mask through a collapse_shape without its unit dims, (d0, d3)
// on 1xN, a projected permutation, so both are split into 64 lanes as an
// unmasked softmax is. The epilogue, which is not split, still reads the
// mask through the broadcast map. The kernel is one row loop.
// CHECK-DAG:   #[[LANES:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG:   #[[MASKLANES:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// CHECK-DAG:   #[[MASK:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
// CHECK-LABEL: func.func @masked_softmax(
// CHECK:         %[[M:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2, 3]] : tensor<1x1x1x128xf32> into tensor<1x128xf32>
// CHECK:         tensor.expand_shape %[[M]] {{\[}}[0], [1, 2]] output_shape [1, 2, 64] : tensor<1x128xf32> into tensor<1x2x64xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 4, 8) shared_outs(
// CHECK:           linalg.generic {indexing_maps = [#[[LANES]], #[[MASKLANES]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK:             arith.maximumf
// CHECK:           linalg.generic {{.*}}["parallel", "parallel", "parallel", "reduction"]}
// CHECK:             arith.maximumf
// CHECK:           linalg.generic {indexing_maps = [#[[LANES]], #[[MASKLANES]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK:             math.exp
// CHECK:           linalg.generic {{.*}}["parallel", "parallel", "parallel", "reduction"]}
// CHECK:             arith.addf
// CHECK:           linalg.generic {indexing_maps = [#{{.+}}, #[[MASK]], {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK:             arith.divf
// CHECK:           scf.forall.in_parallel
// CHECK-NOT:     linalg.generic
// CHECK:         return
// LOWERED-LABEL: llvm.func @kiln_entry_masked_softmax(
// UNFUSED-LABEL: llvm.func @kiln_entry_masked_softmax(
func.func @masked_softmax(%x: tensor<1x4x8x128xf32>, %m: tensor<1x1x1x128xf32>) -> tensor<1x4x8x128xf32> {
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1, 2, 3] : (tensor<1x1x1x128xf32>) -> tensor<1x4x8x128xf32>
  %xm = kiln.add %x, %mb : tensor<1x4x8x128xf32>
  %mx = kiln.reduce_max %xm, dims = [3] : tensor<1x4x8x128xf32>
  %mxb = kiln.broadcast_in_dim %mx, dims = [0, 1, 2] : (tensor<1x4x8xf32>) -> tensor<1x4x8x128xf32>
  %s = kiln.sub %xm, %mxb : tensor<1x4x8x128xf32>
  %e = kiln.exp %s : tensor<1x4x8x128xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<1x4x8x128xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<1x4x8xf32>) -> tensor<1x4x8x128xf32>
  %y = kiln.div %e, %zb : tensor<1x4x8x128xf32>
  return %y : tensor<1x4x8x128xf32>
}

// -----

// A log-sum-exp of rows shifted by one value broadcast from 1x1: the
// reductions read it through a rank-0 collapse_shape (a map with no
// results) and are split into 16 lanes.
// CHECK-DAG:   #[[SHIFT:.+]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @shifted_log_sum_exp(
// CHECK:         tensor.collapse_shape %{{.+}} [] : tensor<1x1xf32> into tensor<f32>
// CHECK:         scf.forall (%{{.+}}) in (6)
// CHECK:           linalg.generic {indexing_maps = [#{{.+}}, #[[SHIFT]], #{{.+}}], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:             arith.maximumf
// CHECK:           scf.forall.in_parallel
// CHECK:         return
// LOWERED-LABEL: llvm.func @kiln_entry_shifted_log_sum_exp(
func.func @shifted_log_sum_exp(%x: tensor<6x32xf32>, %c: tensor<1x1xf32>) -> tensor<6xf32> {
  %cb = kiln.broadcast_in_dim %c, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<6x32xf32>
  %xs = kiln.add %x, %cb : tensor<6x32xf32>
  %m = kiln.reduce_max %xs, dims = [1] : tensor<6x32xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<6xf32>) -> tensor<6x32xf32>
  %s = kiln.sub %xs, %mb : tensor<6x32xf32>
  %e = kiln.exp %s : tensor<6x32xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<6x32xf32>
  %l = kiln.log %z : tensor<6xf32>
  %y = kiln.add %l, %m : tensor<6xf32>
  return %y : tensor<6xf32>
}

// -----

// A mean of sigmoid(x) over H and W (a squeeze-and-excitation block): the
// two reduced loops are collapsed into one of 56 * 56 = 3136 (a multiple
// of 64 lanes where 56 is not) and split into lanes, inside the loop over
// the 144 channels.
// CHECK-LABEL: func.func @mean_over_window(
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x144x56x56xf32> into tensor<1x144x3136xf32>
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %{{.+}} [1, 1, 49, 64]
// CHECK:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK:             math.exp
// CHECK:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
func.func @mean_over_window(%x: tensor<1x144x56x56xf32>) -> tensor<1x144xf32> {
  %s = kiln.sigmoid %x : tensor<1x144x56x56xf32>
  %m = kiln.reduce_mean %s, dims = [2, 3] : tensor<1x144x56x56xf32>
  return %m : tensor<1x144xf32>
}

// -----

// A 28x28 window, 784 elements: a multiple of 16 f32 lanes (one vector),
// not of 32 or 64, so the row is split into 16 lanes.
// CHECK-LABEL: func.func @mean_over_small_window(
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x240x28x28xf32> into tensor<1x240x784xf32>
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %{{.+}} [1, 1, 49, 16]
func.func @mean_over_small_window(%x: tensor<1x240x28x28xf32>) -> tensor<1x240xf32> {
  %s = kiln.sigmoid %x : tensor<1x240x28x28xf32>
  %m = kiln.reduce_mean %s, dims = [2, 3] : tensor<1x240x28x28xf32>
  return %m : tensor<1x240xf32>
}

// -----

// A reduction whose body reads its loop index (an iota, as the counters of
// random bits are) is collapsed but not split into lanes: the split would
// leave the index naming the outer lane loop. The collapsed index is
// recovered as row and column.
// CHECK-LABEL: func.func @sum_of_positions(
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<16x12xf32> into tensor<192xf32>
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic
// CHECK:           %[[N:.+]] = linalg.index 0 : index
// CHECK:           arith.remui %[[N]]
// CHECK:           arith.divui %[[N]]
func.func @sum_of_positions(%x: tensor<16x12xf32>) -> tensor<f32> {
  %r = kiln.iota dim = 0 : tensor<16x12xf32>
  %c = kiln.iota dim = 1 : tensor<16x12xf32>
  %p = kiln.mul %r, %c : tensor<16x12xf32>
  %w = kiln.mul %x, %p : tensor<16x12xf32>
  %s = kiln.reduce_sum %w, dims = [0, 1] : tensor<16x12xf32>
  return %s : tensor<f32>
}
