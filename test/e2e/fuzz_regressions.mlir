// Programs that kiln-program-fuzz (test/fuzz) found wrong, reduced, each
// kept once its bug was fixed (the table in test/fuzz/README.md).
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-run %t.kmod --function argmin_constant_body_fixed_input | FileCheck %s --check-prefix=FIXED
// RUN: kiln-run %t.kmod --function sliced_through_a_branch_fixed_input | FileCheck %s --check-prefix=BRANCH
// RUN: kiln-run %t.kmod --function sliced_through_a_select_fixed_input | FileCheck %s --check-prefix=SELECT

// Seed 546 of the first generator. Every element is (|argmin| + 1) -
// |argmin| = 1. After fusion and CSE the elementwise kernel and the argmin
// share one tensor.empty, so bufferization writes the kernel in place
// (`ins(%b) outs(%b)`); its body folds to the constant 1, and MLIR 19's
// canonicalizer then erased it as an identity, returning the argmin
// (kiln-canonicalize-buffers, test/backends/canonicalize_buffers.mlir).
// CHECK: argmin_constant_body(arg0: f64[8,2,2]) -> (out0: i64[2,2])
func.func @argmin_constant_body(%x: tensor<8x2x2xf64>) -> tensor<2x2xi64> {
  %a = kiln.argmin %x, dim = 0 : tensor<8x2x2xf64>
  %abs = kiln.abs %a : tensor<2x2xi64>
  %one = kiln.constant dense<1> : tensor<2x2xi64>
  %p = kiln.add %abs, %one : tensor<2x2xi64>
  %r = kiln.sub %p, %abs : tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}

// The same on an input whose argmins are 1, 0, 2 and 4, none all 1.
// FIXED: out0: i64[2,2] = {{\[\[}}1, 1], [1, 1]]
func.func @argmin_constant_body_fixed_input() -> tensor<2x2xi64> {
  %x = kiln.constant dense<[[[3.0, 1.0], [2.0, 5.0]], [[1.0, 4.0], [0.5, 2.0]], [[2.0, 0.0], [7.0, 1.0]], [[5.0, 3.0], [3.0, 6.0]], [[4.0, 2.0], [1.0, 0.5]], [[6.0, 7.0], [9.0, 8.0]], [[0.0, 5.0], [4.0, 3.0]], [[8.0, 6.0], [6.0, 9.0]]]> : tensor<8x2x2xf64>
  %r = func.call @argmin_constant_body(%x) : (tensor<8x2x2xf64>) -> tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}

// Seed 85 of the generator with f16 and bf16 (reduced from 67 ops): a pad
// of a half-precision tensor did not compile ("failed to legalize
// operation 'kiln.pad'"), though kiln-to-linalg lets f16 and bf16 through
// to data movement; the pad pattern refused them (WindowLowering.cpp).
// CHECK: pad_half(arg0: bf16[8,5], arg1: bf16[], arg2: f16[3,4], arg3: f16[]) -> (out0: bf16[6,17], out1: f16[4,9])
func.func @pad_half(%a: tensor<8x5xbf16>, %av: tensor<bf16>, %b: tensor<3x4xf16>, %bv: tensor<f16>) -> (tensor<6x17xbf16>, tensor<4x9xf16>) {
  %0 = kiln.pad %a, %av, low = [0, 1], high = [2, 0], interior = [1, 0] : tensor<8x5xbf16>, tensor<bf16>
  %1 = kiln.transpose %0, permutation = [1, 0] : tensor<17x6xbf16>
  %2 = kiln.pad %b, %bv, low = [1, 2], high = [0, 0], interior = [0, 1] : tensor<3x4xf16>, tensor<f16>
  return %1, %2 : tensor<6x17xbf16>, tensor<4x9xf16>
}

// Seed 1875 of the generator (reduced by hand from 12 ops): the call's
// operand is a dynamic_update_slice of a slice of an intermediate, which
// bufferization writes in place into the slice's strided view; the call
// then got an invalid memref.cast to the callee's identity layout ("cast
// incompatible", a compile failure under every configuration).
// kiln-copy-sliced-call-operands now follows values written into a slice
// (backends/common/CopySlicedCallOperands.cpp,
// test/backends/copy_sliced_call_operands.mlir).
// CHECK: sliced_update_call(arg0: f32[13,17], arg1: i64[], arg2: f32[7,9]) -> (out0: f32[])
func.func @sliced_update_call(%x: tensor<13x17xf32>, %i: tensor<i64>, %u: tensor<7x9xf32>) -> tensor<f32> {
  %y = kiln.add %x, %x : tensor<13x17xf32>
  %s = kiln.slice %y, start = [0, 5], limit = [13, 14], stride = [1, 1] : tensor<13x17xf32>
  %d = kiln.dynamic_update_slice %s[%i], %u : tensor<13x9xf32>, tensor<7x9xf32>
  %r = func.call @sliced_update_callee(%d) : (tensor<13x9xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
func.func private @sliced_update_callee(%a: tensor<13x9xf32>) -> tensor<f32> {
  %m = kiln.reduce_sum %a, dims = [0, 1] : tensor<13x9xf32>
  return %m : tensor<f32>
}

// Seed 2632 of the generator (reduced from 120 ops to 40 by the reducer,
// then by hand): a kiln.cond passes a dynamic_slice through one branch and
// its result goes to a call. The slice's buffer is a view at a dynamic
// offset; the call got it cast to the callee's identity layout, dropping
// the offset, so the callee read the first elements instead (a wrong
// answer under every configuration). kiln-copy-sliced-call-operands now
// follows values through branches and loops to a slice.
// CHECK: sliced_through_a_branch(arg0: f32[8], arg1: i64[], arg2: i1[]) -> (out0: f32[2])
func.func @sliced_through_a_branch(%x: tensor<8xf32>, %i: tensor<i64>, %p: tensor<i1>) -> tensor<2xf32> {
  %s = kiln.dynamic_slice %x[%i], size = 2 : tensor<8xf32>
  %c = kiln.cond %p, (%s) : tensor<i1>, (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    kiln.yield %a : tensor<2xf32>
  } else {
  ^bb0(%a: tensor<2xf32>):
    %n = kiln.neg %a : tensor<2xf32>
    kiln.yield %n : tensor<2xf32>
  }
  %r = func.call @sliced_through_a_branch_callee(%c) : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
func.func private @sliced_through_a_branch_callee(%a: tensor<2xf32>) -> tensor<2xf32> {
  %d = kiln.add %a, %a : tensor<2xf32>
  return %d : tensor<2xf32>
}

// Elements 3 and 4 of 0, 1, ..., 7, doubled (the offset dropped gave 0, 2).
// BRANCH: out0: f32[2] = [6, 8]
func.func @sliced_through_a_branch_fixed_input() -> tensor<2xf32> {
  %x = kiln.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  %i = kiln.constant dense<3> : tensor<i64>
  %p = kiln.constant dense<true> : tensor<i1>
  %r = func.call @sliced_through_a_branch(%x, %i, %p) : (tensor<8xf32>, tensor<i64>, tensor<i1>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// Seed 2096 of the generator with kiln.scatter_add (its campaign slice
// 2000:2200), reduced from 14 ops: a dynamic_slice as large as the strided
// slice it reads, passed to a call, failed to compile under every
// configuration ("'memref.cast' op operand type 'memref<1x2xf64,
// strided<[6, 1], offset: ?>>' and result type 'memref<1x2xf64>' are cast
// incompatible"). kiln-copy-sliced-call-operands took a slice whose result
// type equals its source's for no view at all; it now follows it to its
// source, here the strided slice.
// CHECK: slice_of_a_strided_slice_call(arg0: f64[31,2], arg1: i64[]) -> (out0: f64[1,6], out1: f64[1,2])
func.func @slice_of_a_strided_slice_call(%x: tensor<31x2xf64>, %i: tensor<i64>) -> (tensor<1x6xf64>, tensor<1x2xf64>) {
  %s = kiln.slice %x, start = [0, 0], limit = [3, 2], stride = [3, 1] : tensor<31x2xf64>
  %d = kiln.dynamic_slice %s[%i], size = 1 : tensor<1x2xf64>
  %r:2 = func.call @slice_of_a_strided_slice_callee(%d) : (tensor<1x2xf64>) -> (tensor<1x6xf64>, tensor<1x2xf64>)
  return %r#0, %r#1 : tensor<1x6xf64>, tensor<1x2xf64>
}
func.func private @slice_of_a_strided_slice_callee(%a: tensor<1x2xf64>) -> (tensor<1x6xf64>, tensor<1x2xf64>) {
  %c = kiln.concat %a, %a, %a dim = 1 : tensor<1x2xf64>, tensor<1x2xf64>, tensor<1x2xf64>
  return %c, %a : tensor<1x6xf64>, tensor<1x2xf64>
}

// Seed 5291 of the generator with kiln.scatter_add (its campaign slice
// 4000:10000), reduced by --reduce from 33 ops to 4: a wrong answer under
// every configuration (element 0: 2.94481157 expected, -1.02138555 given).
// A kiln.select with a scalar predicate chose between a strided slice and
// an argument and passed the result to a call; it bufferizes to an
// arith.select of the two buffers, which kiln-copy-sliced-call-operands
// did not follow, so the slice's strided view reached the call, cast to
// the callee's identity layout, and the callee read the input's first
// elements. It now follows both values of a select.
// CHECK: sliced_through_a_select(arg0: f64[1,8,16,16], arg1: f64[1,5,4,16], arg2: i1[]) -> (out0: f64[5,16])
func.func @sliced_through_a_select(%x: tensor<1x8x16x16xf64>, %y: tensor<1x5x4x16xf64>, %p: tensor<i1>) -> tensor<5x16xf64> {
  %s = kiln.slice %x, start = [0, 1, 0, 0], limit = [1, 6, 16, 16], stride = [4, 1, 4, 1] : tensor<1x8x16x16xf64>
  %c = kiln.select %p, %s, %y : tensor<i1>, tensor<1x5x4x16xf64>
  %r = func.call @sliced_through_a_select_callee(%c) : (tensor<1x5x4x16xf64>) -> tensor<5x16xf64>
  return %r : tensor<5x16xf64>
}
func.func private @sliced_through_a_select_callee(%a: tensor<1x5x4x16xf64>) -> tensor<5x16xf64> {
  %r = kiln.reduce_sum %a, dims = [2, 0] : tensor<1x5x4x16xf64>
  return %r : tensor<5x16xf64>
}

// x[0, c, h, w] = c * 1000 + h * 16 + w: the slice takes channels 1 to 5
// and rows 0, 4, 8, 12, so out[c - 1, w] = 4 (c * 1000 + w) + 16 * 24
// (the dropped view gave the sums of channel 0, rows 0 to 3 instead).
// SELECT: out0: f64[5,16] = {{\[\[}}4384, 4388, 4392,
// SELECT-SAME: [8384, 8388,
func.func @sliced_through_a_select_fixed_input() -> tensor<5x16xf64> {
  %c = kiln.iota dim = 1 : tensor<1x8x16x16xf64>
  %h = kiln.iota dim = 2 : tensor<1x8x16x16xf64>
  %w = kiln.iota dim = 3 : tensor<1x8x16x16xf64>
  %k = kiln.constant dense<1000.0> : tensor<1x8x16x16xf64>
  %s = kiln.constant dense<16.0> : tensor<1x8x16x16xf64>
  %ck = kiln.mul %c, %k : tensor<1x8x16x16xf64>
  %hs = kiln.mul %h, %s : tensor<1x8x16x16xf64>
  %a = kiln.add %ck, %hs : tensor<1x8x16x16xf64>
  %x = kiln.add %a, %w : tensor<1x8x16x16xf64>
  %y = kiln.constant dense<0.0> : tensor<1x5x4x16xf64>
  %p = kiln.constant dense<true> : tensor<i1>
  %r = func.call @sliced_through_a_select(%x, %y, %p) : (tensor<1x8x16x16xf64>, tensor<1x5x4x16xf64>, tensor<i1>) -> tensor<5x16xf64>
  return %r : tensor<5x16xf64>
}

// Seed 5985 of the generator with kiln.scatter_add, reduced by --reduce
// from 23 ops to 4 and differentiated by kiln-grad: the gradient of a
// reduce_max of cos(x) recomputes cos(x) for its equality mask and divides
// by the number of elements equal to the maximum. Compiled code must give
// cos(x) the same value in both kernels, or no element equals the maximum
// and the gradient is 0 / 0. A build that vectorized cos through glibc's
// libmvec (while the scalar remainder and unvectorized loops kept libm)
// gave NaN for two of the three columns; that change was reverted.
// CHECK: max_of_cos_gradient(arg0: f64[32,16,3,1], arg1: f64[], arg2: f64[7,7,7]) -> (out0: f64[7,7,7], out1: f64[32,16,3,1], out2: f64[])
func.func @max_of_cos_gradient(%arg0: tensor<32x16x3x1xf64>, %arg1: tensor<f64>, %arg2: tensor<7x7x7xf64>) -> (tensor<7x7x7xf64>, tensor<32x16x3x1xf64>, tensor<f64>) {
  %0 = kiln.cos %arg0 : tensor<32x16x3x1xf64>
  %1 = kiln.reduce_max %0, dims = [0, 1] : tensor<32x16x3x1xf64>
  %2 = kiln.broadcast_in_dim %1, dims = [0, 2] : (tensor<3x1xf64>) -> tensor<3x3x5xf64>
  %3 = kiln.pad %2, %arg1, low = [2, 2, 1], high = [2, 0, 1], interior = [0, 1, 0] : tensor<3x3x5xf64>, tensor<f64>
  %4 = kiln.slice %arg2, start = [2, 2, 1], limit = [5, 7, 6], stride = [1, 2, 1] : tensor<7x7x7xf64>
  %5 = kiln.constant dense<1.000000e+00> : tensor<f64>
  %6 = kiln.constant dense<0.000000e+00> : tensor<3x3x5xf64>
  %7 = kiln.pad %6, %5, low = [2, 2, 1], high = [2, 0, 1], interior = [0, 1, 0] : tensor<3x3x5xf64>, tensor<f64>
  %8 = kiln.mul %arg2, %7 : tensor<7x7x7xf64>
  %9 = kiln.reduce_sum %8, dims = [0, 1, 2] : tensor<7x7x7xf64>
  %10 = kiln.reduce_sum %4, dims = [1, 2] : tensor<3x3x5xf64>
  %11 = kiln.reshape %10 : (tensor<3xf64>) -> tensor<3x1xf64>
  %12 = kiln.broadcast_in_dim %1, dims = [2, 3] : (tensor<3x1xf64>) -> tensor<32x16x3x1xf64>
  %13 = kiln.compare eq, %0, %12 : tensor<32x16x3x1xf64>
  %14 = kiln.cast %13 : tensor<32x16x3x1xi1> to tensor<32x16x3x1xf64>
  %15 = kiln.reduce_sum %14, dims = [0, 1] : tensor<32x16x3x1xf64>
  %16 = kiln.div %11, %15 : tensor<3x1xf64>
  %17 = kiln.broadcast_in_dim %16, dims = [2, 3] : (tensor<3x1xf64>) -> tensor<32x16x3x1xf64>
  %18 = kiln.mul %14, %17 : tensor<32x16x3x1xf64>
  %19 = kiln.sin %arg0 : tensor<32x16x3x1xf64>
  %20 = kiln.mul %18, %19 : tensor<32x16x3x1xf64>
  %21 = kiln.neg %20 : tensor<32x16x3x1xf64>
  return %3, %21, %9 : tensor<7x7x7xf64>, tensor<32x16x3x1xf64>, tensor<f64>
}

// Seed 11242 of the generator (reduced by --reduce from 63 ops to 8): a
// compile failure under every configuration with fusion, "'kiln.fused_kernel'
// op of kind reduction holds no reduction but reads one computed outside
// it: its group lost a member". x xor x folds to false before fusion, but
// `and %cmp, false` did not, so the reduce_max of %a stayed alive and its
// group was built around it; after the lowering, arith's folds erased it and
// the group's kernel held no reduction. kiln.and and kiln.or now fold with a
// splat constant on either side (absorbing element and identity,
// KilnFolds.cpp, test/ir/canonicalize.mlir), so the reduction dies before
// fusion.
// CHECK: and_false_reduction(arg0: i32[66096,1], arg1: f64[22032,1], arg2: i32[]) -> (out0: f64[])
func.func @and_false_reduction(%a: tensor<66096x1xi32>, %b: tensor<22032x1xf64>, %t: tensor<i32>) -> tensor<f64> {
  %0 = kiln.reduce_max %a, dims = [0, 1] : tensor<66096x1xi32>
  %1 = kiln.compare gt, %0, %t : tensor<i32>
  %2 = kiln.xor %1, %1 : tensor<i1>
  %3 = kiln.and %1, %2 : tensor<i1>
  %4 = kiln.cast %3 : tensor<i1> to tensor<f64>
  %5 = kiln.reduce_max %b, dims = [0, 1] : tensor<22032x1xf64>
  %6 = kiln.compare lt, %4, %5 : tensor<f64>
  %7 = kiln.select %6, %5, %4 : tensor<i1>, tensor<f64>
  return %7 : tensor<f64>
}

// Seed 777207 of the generator (reduced by --reduce from 77 ops to 30, by
// hand to 6): a compile failure under every configuration with fusion,
// "'kiln.fused_kernel' op of kind reduction holds no reduction but reads
// one computed outside it: its group lost a member". The second group holds
// the reduce_max of %a and reads the first group's reduce_max of %b;
// select(ma == mb, ma, mb) is mb, so after the lowering arith's folds erased
// the second group's reduction, as a dead member may be. kiln-inline-fused-
// kernels then checked each kernel right before inlining it, after the first
// kernel was inlined, and took the first group's reduction, now outside any
// kernel, for one the second had lost. It checks every kernel first now
// (FusedKernels.cpp, test/backends/fused_kernels.mlir).
// CHECK: select_equal_reduction(arg0: i64[8,4], arg1: f32[6,4], arg2: i64[]) -> (out0: i1[])
func.func @select_equal_reduction(%a: tensor<8x4xi64>, %b: tensor<6x4xf32>, %t: tensor<i64>) -> tensor<i1> {
  %0 = kiln.reduce_max %a, dims = [0, 1] : tensor<8x4xi64>
  %c = kiln.cast %b : tensor<6x4xf32> to tensor<6x4xi64>
  %1 = kiln.reduce_max %c, dims = [0, 1] : tensor<6x4xi64>
  %2 = kiln.compare eq, %0, %1 : tensor<i64>
  %3 = kiln.select %2, %0, %1 : tensor<i1>, tensor<i64>
  %4 = kiln.compare gt, %3, %t : tensor<i64>
  return %4 : tensor<i1>
}

// Seed 503 with --cuda --grad (reduced by hand from 40 ops to 4): the CUDA
// backend refused the program, "the host code reads or writes the elements
// of argument #7 itself, but a CUDA function's arguments live in device
// memory". The select's rank-0 predicate is a reshape of the returned
// tensor<1xi1>, so the host reads it through a view of the out-param
// (expand-strided-metadata's base buffer), and kiln-cuda-predicate-copies
// took the view, whose one use is that read, for a host-only buffer
// instead of looking through it to the argument (PredicateCopies.cpp,
// test/backends/cuda_predicate_copies.mlir; the CUDA compile of this file
// is cuda-ptxas.fuzz_regressions).
// CHECK: predicate_in_an_output(arg0: f32[1], arg1: f32[1]) -> (out0: i1[1], out1: f32[1])
func.func @predicate_in_an_output(%a: tensor<1xf32>, %b: tensor<1xf32>) -> (tensor<1xi1>, tensor<1xf32>) {
  %p = kiln.compare gt, %a, %b : tensor<1xf32>
  %s = kiln.reshape %p : (tensor<1xi1>) -> tensor<i1>
  %r = kiln.select %s, %a, %b : tensor<i1>, tensor<1xf32>
  return %p, %r : tensor<1xi1>, tensor<1xf32>
}

// A fresh seed, 730630937 with --grad (reduced to one 3-d convolution of
// f64 whose input and output have dims of size 1; this is its gradient as
// kiln-grad derives it): kiln-compile crashed (segfault) in
// kiln-cpu-row-copies. A copy's source had leading dims of size 1 outside
// its dense rows and one inside them; the rank-reducing subview that takes
// the rows inferred which dims of size 1 to drop, kept the wrong one, and
// the collapse of the rows it kept was invalid (RowCopies.cpp now gives the
// subview its type; test/backends/cpu_row_copies.mlir @unit_dims_in_rows).
// CHECK: conv3d_grad_unit_dims(arg0: f64[1,2,1,2,4], arg1: f64[2,2,1,2,2], arg2: f64[1,2,1,2,3]) -> (out0: f64[1,2,1,2,3], out1: f64[1,2,1,2,4], out2: f64[2,2,1,2,2])
func.func @conv3d_grad_unit_dims(%arg0: tensor<1x2x1x2x4xf64>, %arg1: tensor<2x2x1x2x2xf64>, %arg2: tensor<1x2x1x2x3xf64>) -> (tensor<1x2x1x2x3xf64>, tensor<1x2x1x2x4xf64>, tensor<2x2x1x2x2xf64>) {
  %0 = kiln.conv %arg0, %arg1, strides = [3, 2, 2], padding_low = [1, 2, 0], padding_high = [0, 1, 2], lhs_dilation = [1, 1, 1], rhs_dilation = [1, 2, 1], groups = 1 : tensor<1x2x1x2x4xf64>, tensor<2x2x1x2x2xf64>
  %1 = kiln.reshape %arg1 : (tensor<2x2x1x2x2xf64>) -> tensor<1x2x2x1x2x2xf64>
  %2 = kiln.transpose %1, permutation = [0, 2, 1, 3, 4, 5] : tensor<1x2x2x1x2x2xf64>
  %3 = kiln.reshape %2 : (tensor<1x2x2x1x2x2xf64>) -> tensor<2x2x1x2x2xf64>
  %4 = kiln.reverse %3, dims = [2, 3, 4] : tensor<2x2x1x2x2xf64>
  %5 = kiln.conv %arg2, %4, strides = [1, 1, 1], padding_low = [0, 0, 1], padding_high = [1, 1, 1], lhs_dilation = [3, 2, 2], rhs_dilation = [1, 2, 1], groups = 1 : tensor<1x2x1x2x3xf64>, tensor<2x2x1x2x2xf64>
  %6 = kiln.slice %5, start = [0, 0, 1, 0, 0], limit = [1, 2, 2, 2, 4], stride = [1, 1, 1, 1, 1] : tensor<1x2x2x2x6xf64>
  %7 = kiln.reshape %arg0 : (tensor<1x2x1x2x4xf64>) -> tensor<1x1x2x1x2x4xf64>
  %8 = kiln.transpose %7, permutation = [2, 1, 0, 3, 4, 5] : tensor<1x1x2x1x2x4xf64>
  %9 = kiln.reshape %8 : (tensor<2x1x1x1x2x4xf64>) -> tensor<2x1x1x2x4xf64>
  %10 = kiln.reshape %arg2 : (tensor<1x2x1x2x3xf64>) -> tensor<1x1x2x1x2x3xf64>
  %11 = kiln.transpose %10, permutation = [1, 2, 0, 3, 4, 5] : tensor<1x1x2x1x2x3xf64>
  %12 = kiln.reshape %11 : (tensor<1x2x1x1x2x3xf64>) -> tensor<2x1x1x2x3xf64>
  %13 = kiln.conv %9, %12, strides = [1, 2, 1], padding_low = [1, 2, 0], padding_high = [0, 1, 2], lhs_dilation = [1, 1, 1], rhs_dilation = [3, 2, 2], groups = 1 : tensor<2x1x1x2x4xf64>, tensor<2x1x1x2x3xf64>
  %14 = kiln.slice %13, start = [0, 0, 0, 0, 0], limit = [2, 2, 1, 2, 2], stride = [1, 1, 1, 1, 1] : tensor<2x2x2x2x2xf64>
  %15 = kiln.transpose %14, permutation = [1, 0, 2, 3, 4] : tensor<2x2x1x2x2xf64>
  return %0, %6, %15 : tensor<1x2x1x2x3xf64>, tensor<1x2x1x2x4xf64>, tensor<2x2x1x2x2xf64>
}

// Seed 12 of kiln-program-fuzz on a GPU (the GPU kit, 2026-12-05; reduced
// by hand from 62 ops to a call and a product): an illegal address on
// every call. The result of a private function whose one writer is a
// batched product (a cuBLASLt call) was unused by its caller, so the
// caller's buffer for it was used only by the callee taking its address
// for the call; kiln-cuda-device-allocations took that for the
// deallocation's host bookkeeping and left it host memory, which cuBLASLt
// then wrote on the device. An address made a pointer again keeps a buffer
// out of the bookkeeping now (HostBuffers.cpp,
// test/backends/cuda_device_allocations.mlir @address_to_a_library).
// CHECK: dead_product_result(arg0: f32[8,1,3]) -> (out0: f32[8,1,3])
func.func @dead_product_result(%x: tensor<8x1x3xf32>) -> tensor<8x1x3xf32> {
  %r = func.call @dead_product_result_callee(%x) : (tensor<8x1x3xf32>) -> tensor<8x1x16xf32>
  %y = kiln.add %x, %x : tensor<8x1x3xf32>
  return %y : tensor<8x1x3xf32>
}
func.func private @dead_product_result_callee(%a: tensor<8x1x3xf32>) -> tensor<8x1x16xf32> {
  %b = kiln.iota dim = 0 : tensor<8x3x16xf32>
  %p = kiln.matmul %a, %b : tensor<8x1x3xf32>, tensor<8x3x16xf32>
  return %p : tensor<8x1x16xf32>
}
