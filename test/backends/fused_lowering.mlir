// kiln.fused in the backends: kiln-to-linalg lowers each region into a
// kiln.fused_kernel holding the region's ops lowered to linalg;
// kiln-fuse-linalg-groups then fuses the linalg ops of one kernel (upstream
// elementwise fusion) and never those of two kernels.
// RUN: kiln-opt %s --split-input-file --kiln-fuse --kiln-to-linalg \
// RUN:   --kiln-fuse-linalg-groups --kiln-inline-fused-kernels \
// RUN:   --canonicalize --cse | FileCheck %s
// Before the linalg fusion: one generic per kiln op, each op of a region in
// the body of the region's kernel.
// RUN: kiln-opt %s --split-input-file --kiln-fuse --kiln-to-linalg \
// RUN:   | FileCheck %s --check-prefix=KERNEL
// The whole CPU pipeline, with fusion (the default) and without: the gelu
// is one loop in native code, or one loop per kiln op.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-lowering \
// RUN:   | FileCheck %s --check-prefix=LOOPS
// RUN: kiln-opt %s --split-input-file --kiln-cpu-lowering=fuse=false \
// RUN:   | FileCheck %s --check-prefix=LOOPS-UNFUSED

// gelu(x * a + b) * c (tanh approximation) becomes a single linalg.generic:
// one loop nest reading the four inputs and writing the result.
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<1024xf32>, %[[A:[a-z0-9]+]]: tensor<1024xf32>, %[[B:[a-z0-9]+]]: tensor<1024xf32>, %[[C:[a-z0-9]+]]: tensor<1024xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         %[[Y:.+]] = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel"]
// CHECK-SAME:      ins(%[[X]], %[[A]], %[[B]], %[[C]] :
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:           math.tanh
// CHECK-NOT:       math.tanh
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[Y]]

// LOOPS-LABEL: llvm.func internal @kiln_impl_gelu(
// LOOPS-COUNT-1: llvm.cond_br
// LOOPS-NOT:     llvm.cond_br
// LOOPS-LABEL: llvm.func @kiln_entry_gelu(

// LOOPS-UNFUSED-LABEL: llvm.func internal @kiln_impl_gelu(
// LOOPS-UNFUSED-COUNT-12: llvm.cond_br
// LOOPS-UNFUSED-NOT:     llvm.cond_br
// LOOPS-UNFUSED-LABEL: llvm.func @kiln_entry_gelu(

// KERNEL-LABEL: func.func @gelu(
// KERNEL-NOT:      linalg.generic
// KERNEL:          kiln.fused_kernel elementwise
// KERNEL-COUNT-12:   } -> tensor<1024xf32>
// KERNEL-NOT:        linalg.generic
// KERNEL:            kiln.yield
// KERNEL-NOT:      kiln.fused_kernel
// KERNEL:          return
func.func @gelu(%x: tensor<1024xf32>, %a: tensor<1024xf32>, %b: tensor<1024xf32>,
                %c: tensor<1024xf32>) -> tensor<1024xf32> {
  %half = kiln.constant dense<0.5> : tensor<1024xf32>
  %one = kiln.constant dense<1.0> : tensor<1024xf32>
  %k0 = kiln.constant dense<0.797884583> : tensor<1024xf32>
  %k1 = kiln.constant dense<0.044715> : tensor<1024xf32>
  %xa = kiln.mul %x, %a : tensor<1024xf32>
  %u = kiln.add %xa, %b : tensor<1024xf32>
  %u2 = kiln.mul %u, %u : tensor<1024xf32>
  %u3 = kiln.mul %u2, %u : tensor<1024xf32>
  %t0 = kiln.mul %u3, %k1 : tensor<1024xf32>
  %t1 = kiln.add %u, %t0 : tensor<1024xf32>
  %t2 = kiln.mul %t1, %k0 : tensor<1024xf32>
  %t3 = kiln.tanh %t2 : tensor<1024xf32>
  %t4 = kiln.add %t3, %one : tensor<1024xf32>
  %t5 = kiln.mul %u, %half : tensor<1024xf32>
  %g = kiln.mul %t5, %t4 : tensor<1024xf32>
  %y = kiln.mul %g, %c : tensor<1024xf32>
  return %y : tensor<1024xf32>
}

// -----

// The linalg fusion follows kiln-fuse's decisions, not upstream's own: %d
// is kept out of the region of %a and %b (the transpose would make a cycle),
// so its generic is not fused with theirs although it is their only reader.
// Inside the region, %a is read by the mul and by the transpose outside:
// upstream fuses it into the mul by recomputing it there and keeps it as a
// loop nest of its own for the transpose.
// CHECK-LABEL: func.func @regions_stay_apart(
// CHECK-SAME:      %[[X:.+]]: tensor<4x4xf32>)
// CHECK:         %[[A:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[X]] :
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        math.exp
// CHECK-NEXT:        linalg.yield
// CHECK:         %[[B:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[X]] :
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        math.exp
// CHECK-NEXT:        arith.mulf
// CHECK-NEXT:        linalg.yield
// CHECK:         %[[T:.+]] = linalg.transpose ins(%[[A]] :
// CHECK:         %[[D:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[B]], %[[T]] :
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        linalg.yield
// CHECK:         return %[[D]]

// KERNEL-LABEL: func.func @regions_stay_apart(
// KERNEL:          kiln.fused_kernel elementwise
// KERNEL-COUNT-2:    } -> tensor<4x4xf32>
// KERNEL-NEXT:       kiln.yield
// KERNEL-NOT:      kiln.fused_kernel
// KERNEL:          linalg.transpose
// KERNEL-NOT:      kiln.fused_kernel
// KERNEL:          } -> tensor<4x4xf32>
// KERNEL-NOT:      kiln.fused_kernel
// KERNEL:          return
func.func @regions_stay_apart(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = kiln.exp %x : tensor<4x4xf32>
  %b = kiln.mul %a, %a : tensor<4x4xf32>
  %t = kiln.transpose %a, permutation = [1, 0] : tensor<4x4xf32>
  %d = kiln.add %b, %t : tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}

// -----

// A reshape inside a region is folded by expansion: the chain is one generic
// over the 4x8 shape, the other operand expanded and the result collapsed
// (both views).
// CHECK-LABEL: func.func @reshape_chain(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[Y:[a-z0-9]+]]: tensor<32xf32>)
// CHECK:         %[[YE:.+]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1]]
// CHECK:         %[[G:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[X]], %[[YE]] :
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[G]] {{\[\[}}0, 1]]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]

func.func @reshape_chain(%x: tensor<4x8xf32>, %y: tensor<32xf32>) -> tensor<32xf32> {
  %e = kiln.exp %x : tensor<4x8xf32>
  %f = kiln.reshape %e : (tensor<4x8xf32>) -> tensor<32xf32>
  %g = kiln.add %f, %y : tensor<32xf32>
  return %g : tensor<32xf32>
}

// -----

// Softmax (one reduction region): upstream fuses only all-parallel producers,
// so the two reductions stay loop nests of their own. The shifted exp is
// fused into the sum and, recomputed, into the final division; nothing of
// [4x8] size is written except the result. Three loop nests in all.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[X:.+]]: tensor<4x8xf32>)
// CHECK:         %[[MAX:.+]] = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%[[X]] :
// CHECK:           arith.maximumf
// CHECK:         %[[SUM:.+]] = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%[[X]], %[[MAX]] :
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         %[[Y:.+]] = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel"]
// CHECK-SAME:      ins(%[[X]], %[[MAX]], %[[SUM]] :
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[Y]]

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

// Matmul epilogue: linalg.matmul stays a named op; bias, relu and the
// residual add become one generic after it.
// CHECK-LABEL: func.func @mlp_layer(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>, %[[RES:[a-z0-9]+]]: tensor<4x16xf32>)
// CHECK:         %[[M:.+]] = linalg.matmul ins(%[[X]], %[[W]] :
// CHECK:         %[[Y:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[M]], %[[B]], %[[RES]] :
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[Y]]

// KERNEL-LABEL: func.func @mlp_layer(
// KERNEL:          kiln.fused_kernel matmul_epilogue
// KERNEL:            linalg.matmul
// KERNEL-COUNT-3:    } -> tensor<4x16xf32>
// KERNEL-NEXT:       kiln.yield
func.func @mlp_layer(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>,
                     %res: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
  %m = kiln.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32>
  %a = kiln.add %m, %bb : tensor<4x16xf32>
  %r = kiln.relu %a : tensor<4x16xf32>
  %y = kiln.add %r, %res : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// An epilogue that reads a reshaped value (a recurrent cell adding its
// precomputed input projection, a row of [T, 4, 16]): the reshape is not
// propagated through the matmul, which stays a named 2-d linalg.matmul
// (the form oneDNN's sgemm takes), not a [1, 4, 16] generic.
// CHECK-LABEL: func.func @reshaped_epilogue(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x16xf32>
// CHECK:         %[[M:.+]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK:         %[[ME:.+]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2]]
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.+}}, %[[ME]] :
// CHECK:           arith.addf
func.func @reshaped_epilogue(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>,
                             %row: tensor<1x4x16xf32>) -> tensor<4x16xf32> {
  %m = kiln.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32>
  %r = kiln.reshape %row : (tensor<1x4x16xf32>) -> tensor<4x16xf32>
  %y = kiln.add %r, %m : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A region inside a loop body is inlined into the scf body and fused there.
// CHECK-LABEL: func.func @in_loop(
// CHECK:         scf.for
// CHECK:           %[[G:.+]] = linalg.generic
// CHECK:             arith.mulf
// CHECK:             math.tanh
// CHECK:             arith.addf
// CHECK-NOT:       linalg.generic
// CHECK:           scf.yield %[[G]]

func.func @in_loop(%h: tensor<16xf32>, %w: tensor<16xf32>) -> tensor<16xf32> {
  %r:2 = kiln.for 4 iterations (%h, %w) : (tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%i: tensor<i64>, %a: tensor<16xf32>, %b: tensor<16xf32>):
    %m = kiln.mul %a, %b : tensor<16xf32>
    %t = kiln.tanh %m : tensor<16xf32>
    %s = kiln.add %t, %a : tensor<16xf32>
    kiln.yield %s, %b : tensor<16xf32>, tensor<16xf32>
  }
  return %r#0 : tensor<16xf32>
}

// -----

// Softmax over an axis of size 1: the reshapes of the two reductions' results
// stay reshapes (folding them by expansion through a reduction re-expanded
// its own result forever); the exponential still fuses into the division.
// CHECK-LABEL: func.func @softmax_over_a_unit_axis
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @softmax_over_a_unit_axis(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %1 = kiln.reduce_max %x, dims = [0] : tensor<1x3xf32>
  %2 = kiln.reshape %1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %3 = kiln.sub %x, %2 : tensor<1x3xf32>
  %4 = kiln.exp %3 : tensor<1x3xf32>
  %5 = kiln.reduce_sum %4, dims = [0] : tensor<1x3xf32>
  %6 = kiln.reshape %5 : (tensor<3xf32>) -> tensor<1x3xf32>
  %7 = kiln.div %4, %6 : tensor<1x3xf32>
  return %7 : tensor<1x3xf32>
}
