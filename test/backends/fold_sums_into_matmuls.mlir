// kiln-fold-sums-into-matmuls: the sum of a tensor and a matrix product
// becomes the product accumulating into that tensor (linalg's C += A * B);
// the zero fill goes.
// RUN: kiln-opt %s --split-input-file --kiln-fold-sums-into-matmuls | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @residual(
// CHECK-SAME:    %[[A:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<16x4xf32>, %[[X:.+]]: tensor<8x4xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[P:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x16xf32>, tensor<16x4xf32>) outs(%[[X]] : tensor<8x4xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[P]]
func.func @residual(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %p : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// The product first and the addend second, and the addf's operands the
// other way round.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @product_first(
// CHECK-SAME:    %[[A:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<16x4xf32>, %[[X:.+]]: tensor<8x4xf32>
// CHECK:         %[[P:.+]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[X]] : tensor<8x4xf32>)
// CHECK:         return %[[P]]
func.func @product_first(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant -0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %x : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %v, %u : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// A batched product.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batched(
// CHECK-SAME:    %[[A:.+]]: tensor<3x8x16xf32>, %[[B:.+]]: tensor<3x16x4xf32>, %[[X:.+]]: tensor<3x8x4xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[P:.+]] = linalg.batch_matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[X]] : tensor<3x8x4xf32>)
// CHECK:         return %[[P]]
func.func @batched(%a: tensor<3x8x16xf32>, %b: tensor<3x16x4xf32>, %x: tensor<3x8x4xf32>) -> tensor<3x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x8x4xf32>) -> tensor<3x8x4xf32>
  %p = linalg.batch_matmul ins(%a, %b : tensor<3x8x16xf32>, tensor<3x16x4xf32>) outs(%f : tensor<3x8x4xf32>) -> tensor<3x8x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %p : tensor<3x8x4xf32>, tensor<3x8x4xf32>) outs(%e : tensor<3x8x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<3x8x4xf32>
  return %s : tensor<3x8x4xf32>
}

// -----

// A gradient summed over a loop's steps: the product accumulates into the
// loop-carried tensor, which bufferization can update in place.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @loop_carried(
// CHECK:         scf.for {{.*}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (tensor<16x4xf32>)
// CHECK-NEXT:      %[[P:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<16x8xf32>, tensor<8x4xf32>) outs(%[[ACC]] : tensor<16x4xf32>)
// CHECK-NEXT:      scf.yield %[[P]]
func.func @loop_carried(%xt: tensor<16x8xf32>, %dy: tensor<8x4xf32>, %init: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %init) -> (tensor<16x4xf32>) {
    %e = tensor.empty() : tensor<16x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
    %p = linalg.matmul ins(%xt, %dy : tensor<16x8xf32>, tensor<8x4xf32>) outs(%f : tensor<16x4xf32>) -> tensor<16x4xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %p : tensor<16x4xf32>, tensor<16x4xf32>) outs(%e : tensor<16x4xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %t = arith.addf %u, %v : f32
      linalg.yield %t : f32
    } -> tensor<16x4xf32>
    scf.yield %s : tensor<16x4xf32>
  }
  return %r : tensor<16x4xf32>
}

// -----

// A recurrence's step: the product [B, 4H] expanded to [1, B, 4H] and added
// to that step's slice of the input projections. The product accumulates
// into the slice collapsed to [B, 4H], and its result is expanded as the
// sum's was.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @expanded(
// CHECK-SAME:    %[[H:.+]]: tensor<8x16xf32>, %[[R:.+]]: tensor<16x64xf32>, %[[XS:.+]]: tensor<4x8x64xf32>, %[[T:.+]]: index
// CHECK:         %[[S:.+]] = tensor.extract_slice %[[XS]][%[[T]], 0, 0] [1, 8, 64] [1, 1, 1]
// CHECK-NOT:     linalg.fill
// CHECK:         %[[C:.+]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2]] : tensor<1x8x64xf32> into tensor<8x64xf32>
// CHECK:         %[[P:.+]] = linalg.matmul ins(%[[H]], %[[R]] : tensor<8x16xf32>, tensor<16x64xf32>) outs(%[[C]] : tensor<8x64xf32>)
// CHECK:         %[[E:.+]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [1, 8, 64] : tensor<8x64xf32> into tensor<1x8x64xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[E]]
func.func @expanded(%h: tensor<8x16xf32>, %r: tensor<16x64xf32>, %xs: tensor<4x8x64xf32>, %t: index) -> tensor<1x8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %x = tensor.extract_slice %xs[%t, 0, 0] [1, 8, 64] [1, 1, 1] : tensor<4x8x64xf32> to tensor<1x8x64xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %p = linalg.matmul ins(%h, %r : tensor<8x16xf32>, tensor<16x64xf32>) outs(%f : tensor<8x64xf32>) -> tensor<8x64xf32>
  %pe = tensor.expand_shape %p [[0, 1], [2]] output_shape [1, 8, 64] : tensor<8x64xf32> into tensor<1x8x64xf32>
  %e3 = tensor.empty() : tensor<1x8x64xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %pe : tensor<1x8x64xf32>, tensor<1x8x64xf32>) outs(%e3 : tensor<1x8x64xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r2 = arith.addf %u, %v : f32
    linalg.yield %r2 : f32
  } -> tensor<1x8x64xf32>
  return %s : tensor<1x8x64xf32>
}

// -----

// An expanded product read by something else too stays apart.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @expanded_twice(
// CHECK:         %[[ZERO:.+]] = linalg.fill
// CHECK-NEXT:    linalg.matmul {{.*}} outs(%[[ZERO]] : tensor<8x64xf32>)
// CHECK-NEXT:    tensor.expand_shape
// CHECK:         linalg.generic
func.func @expanded_twice(%h: tensor<8x16xf32>, %r: tensor<16x64xf32>, %x: tensor<1x8x64xf32>) -> (tensor<1x8x64xf32>, tensor<1x8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %p = linalg.matmul ins(%h, %r : tensor<8x16xf32>, tensor<16x64xf32>) outs(%f : tensor<8x64xf32>) -> tensor<8x64xf32>
  %pe = tensor.expand_shape %p [[0, 1], [2]] output_shape [1, 8, 64] : tensor<8x64xf32> into tensor<1x8x64xf32>
  %e3 = tensor.empty() : tensor<1x8x64xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %pe : tensor<1x8x64xf32>, tensor<1x8x64xf32>) outs(%e3 : tensor<1x8x64xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r2 = arith.addf %u, %v : f32
    linalg.yield %r2 : f32
  } -> tensor<1x8x64xf32>
  return %s, %pe : tensor<1x8x64xf32>, tensor<1x8x64xf32>
}

// -----

// Left alone: the product is read twice, its init is not zero, the sum
// broadcasts a bias, the body is not a sum of the inputs.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @not_folded(
// CHECK:         %[[ZERO:.+]] = linalg.fill
// CHECK-NEXT:    linalg.matmul {{.*}} outs(%[[ZERO]] : tensor<8x4xf32>)
// CHECK-NEXT:    linalg.generic
// CHECK:         %[[ONE:.+]] = linalg.fill
// CHECK-NEXT:    linalg.matmul {{.*}} outs(%[[ONE]] : tensor<8x4xf32>)
// CHECK-NEXT:    linalg.generic
// CHECK:         linalg.matmul {{.*}} outs(%[[ZERO]] : tensor<8x4xf32>)
// CHECK-NEXT:    linalg.generic
// CHECK:         linalg.generic
// CHECK-NOT:     linalg.matmul
func.func @not_folded(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %x: tensor<8x4xf32>, %bias: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %p : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %g = linalg.fill ins(%one : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %q = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%g : tensor<8x4xf32>) -> tensor<8x4xf32>
  %ones = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %q : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %t = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %biased = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %t : tensor<4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %diff = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %p : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %twice, %ones, %biased, %diff, %p : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
