// kiln.conv and kiln.reverse. The f32 convolutions of at least 16384
// multiply-adds call oneDNN's convolution primitive on the CPU (they sum in
// another order, hence the wider absolute tolerance); the smaller ones,
// the input-dilated (transposed) ones and the f64 ones are loops.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// 3x3, padding 1, 8 -> 16 channels (oneDNN), and a 1x1 stride-2
// downsampling (oneDNN), as in a residual network.
// CHECK: conv2d_f32(arg0: f32[1,8,10,10], arg1: f32[16,8,3,3], arg2: f32[2,16,12,12], arg3: f32[32,16,1,1]) -> (out0: f32[1,16,10,10], out1: f32[2,32,6,6])
func.func @conv2d_f32(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %a: tensor<2x16x12x12xf32>, %b: tensor<32x16x1x1xf32>) -> (tensor<1x16x10x10xf32>, tensor<2x32x6x6xf32>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>
  %z = kiln.conv %a, %b, strides = [2, 2], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x12x12xf32>, tensor<32x16x1x1xf32>
  return %y, %z : tensor<1x16x10x10xf32>, tensor<2x32x6x6xf32>
}

// Stride 2 with uneven padding, small enough to stay loops.
// CHECK: conv2d_stride2_small(arg0: f32[2,4,9,9], arg1: f32[8,4,3,3]) -> (out0: f32[2,8,4,5])
func.func @conv2d_stride2_small(%x: tensor<2x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x4x5xf32> {
  %y = kiln.conv %x, %w, strides = [2, 2], padding_low = [1, 1], padding_high = [0, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>
  return %y : tensor<2x8x4x5xf32>
}

// Two groups and depthwise (oneDNN both).
// CHECK: conv2d_groups(arg0: f32[2,8,12,12], arg1: f32[16,4,3,3], arg2: f32[2,16,12,12], arg3: f32[16,1,3,3]) -> (out0: f32[2,16,12,12], out1: f32[2,16,12,12])
func.func @conv2d_groups(%x: tensor<2x8x12x12xf32>, %w: tensor<16x4x3x3xf32>, %a: tensor<2x16x12x12xf32>, %d: tensor<16x1x3x3xf32>) -> (tensor<2x16x12x12xf32>, tensor<2x16x12x12xf32>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 2 : tensor<2x8x12x12xf32>, tensor<16x4x3x3xf32>
  %z = kiln.conv %a, %d, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 16 : tensor<2x16x12x12xf32>, tensor<16x1x3x3xf32>
  return %y, %z : tensor<2x16x12x12xf32>, tensor<2x16x12x12xf32>
}

// 1-d with a dilated kernel (oneDNN) and 3-d (oneDNN).
// CHECK: conv1d_conv3d(arg0: f32[4,8,40], arg1: f32[16,8,5], arg2: f32[1,4,6,6,6], arg3: f32[8,4,3,3,3]) -> (out0: f32[4,16,40], out1: f32[1,8,6,6,6])
func.func @conv1d_conv3d(%x: tensor<4x8x40xf32>, %w: tensor<16x8x5xf32>, %a: tensor<1x4x6x6x6xf32>, %b: tensor<8x4x3x3x3xf32>) -> (tensor<4x16x40xf32>, tensor<1x8x6x6x6xf32>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1], padding_low = [4], padding_high = [4], lhs_dilation = [1], rhs_dilation = [2], groups = 1 : tensor<4x8x40xf32>, tensor<16x8x5xf32>
  %z = kiln.conv %a, %b, strides = [1, 1, 1], padding_low = [1, 1, 1], padding_high = [1, 1, 1], lhs_dilation = [1, 1, 1], rhs_dilation = [1, 1, 1], groups = 1 : tensor<1x4x6x6x6xf32>, tensor<8x4x3x3x3xf32>
  return %y, %z : tensor<4x16x40xf32>, tensor<1x8x6x6x6xf32>
}

// A transposed convolution (input dilation 2, as ONNX ConvTranspose with
// stride 2 writes it), in f32 and f64: loops.
// CHECK: conv_transposed(arg0: f32[1,4,5,5], arg1: f32[3,4,3,3], arg2: f64[1,4,5,5], arg3: f64[3,4,3,3]) -> (out0: f32[1,3,10,10], out1: f64[1,3,10,10])
func.func @conv_transposed(%x: tensor<1x4x5x5xf32>, %w: tensor<3x4x3x3xf32>, %a: tensor<1x4x5x5xf64>, %b: tensor<3x4x3x3xf64>) -> (tensor<1x3x10x10xf32>, tensor<1x3x10x10xf64>) {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 2], padding_high = [2, 1], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x5x5xf32>, tensor<3x4x3x3xf32>
  %z = kiln.conv %a, %b, strides = [1, 1], padding_low = [1, 2], padding_high = [2, 1], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x5x5xf64>, tensor<3x4x3x3xf64>
  return %y, %z : tensor<1x3x10x10xf32>, tensor<1x3x10x10xf64>
}

// f64 with everything: stride, both dilations, uneven padding, groups.
// CHECK: conv_f64_all(arg0: f64[2,4,7,5], arg1: f64[6,2,3,2]) -> (out0: f64[2,6,6,13])
func.func @conv_f64_all(%x: tensor<2x4x7x5xf64>, %w: tensor<6x2x3x2xf64>) -> tensor<2x6x6x13xf64> {
  %y = kiln.conv %x, %w, strides = [2, 1], padding_low = [2, 0], padding_high = [1, 1], lhs_dilation = [2, 3], rhs_dilation = [2, 1], groups = 2 : tensor<2x4x7x5xf64>, tensor<6x2x3x2xf64>
  return %y : tensor<2x6x6x13xf64>
}

// A convolution with a bias and relu after it (the epilogue is fused
// loops, the convolution oneDNN), feeding a second, depthwise one.
// CHECK: conv_bias_relu(arg0: f32[1,8,10,10], arg1: f32[16,8,3,3], arg2: f32[16], arg3: f32[16,1,3,3]) -> (out0: f32[1,16,8,8])
func.func @conv_bias_relu(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %bias: tensor<16xf32>, %d: tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>
  %b = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %s = kiln.add %y, %b : tensor<1x16x8x8xf32>
  %r = kiln.relu %s : tensor<1x16x8x8xf32>
  %z = kiln.conv %r, %d, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 16 : tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>
  return %z : tensor<1x16x8x8xf32>
}

// Empty results: a kernel wider than the padded input, and no batch.
// CHECK: conv_empty(arg0: f32[1,2,2], arg1: f32[3,2,5], arg2: f64[0,2,4], arg3: f64[3,2,2]) -> (out0: f32[1,3,0], out1: f64[0,3,3])
func.func @conv_empty(%x: tensor<1x2x2xf32>, %w: tensor<3x2x5xf32>, %a: tensor<0x2x4xf64>, %b: tensor<3x2x2xf64>) -> (tensor<1x3x0xf32>, tensor<0x3x3xf64>) {
  %y = kiln.conv %x, %w, strides = [1], padding_low = [1], padding_high = [1], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x2x2xf32>, tensor<3x2x5xf32>
  %z = kiln.conv %a, %b, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<0x2x4xf64>, tensor<3x2x2xf64>
  return %y, %z : tensor<1x3x0xf32>, tensor<0x3x3xf64>
}

// Reverse along one, two and no dims, floats and integers.
// CHECK: reverse(arg0: f32[3,4,5], arg1: i32[7], arg2: f64[2,3]) -> (out0: f32[3,4,5], out1: i32[7], out2: f64[2,3])
func.func @reverse(%x: tensor<3x4x5xf32>, %i: tensor<7xi32>, %d: tensor<2x3xf64>) -> (tensor<3x4x5xf32>, tensor<7xi32>, tensor<2x3xf64>) {
  %r = kiln.reverse %x, dims = [2, 0] : tensor<3x4x5xf32>
  %s = kiln.reverse %i, dims = [0] : tensor<7xi32>
  %t = kiln.reverse %d, dims = [] : tensor<2x3xf64>
  return %r, %s, %t : tensor<3x4x5xf32>, tensor<7xi32>, tensor<2x3xf64>
}

// The epilogues oneDNN applies as it writes the result: a 3x3 convolution
// in blocked layouts (256 output positions) of constant weights (reordered
// once, on the first call) with a per-channel bias, a residual addition
// and a ReLU; a 1x1 one (plain layouts) of constant weights with its bias
// only, the ReLU after it staying loops.
// CHECK: conv_epilogues(arg0: f32[1,8,16,16], arg1: f32[8], arg2: f32[1,8,16,16], arg3: f32[1,16,1,1]) -> (out0: f32[1,8,16,16], out1: f32[1,16,16,16])
func.func @conv_epilogues(%x: tensor<1x8x16x16xf32>, %bias: tensor<8xf32>, %res: tensor<1x8x16x16xf32>, %bias2: tensor<1x16x1x1xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x16x16x16xf32>)
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %w = kiln.constant dense<[[[[-0.352, -0.698, 0.302], [-0.855, 0.072, -0.269], [-0.884, 0.015, -0.925]], [[-0.133, -0.86, -0.819], [-0.151, 0.654, -0.752], [-0.554, 0.255, 0.895]], [[0.154, -0.207, 0.953], [-0.907, 0.717, -0.421], [-0.711, -0.764, -0.383]], [[0.632, -0.639, 0.163], [0.278, -0.255, 0.095], [-0.874, -0.881, -0.588]], [[0.361, -0.145, -0.372], [0.171, -0.094, -0.4], [0.589, 0.398, -0.512]], [[0.149, 0.05, 0.75], [0.459, -0.424, 0.96], [-0.764, -0.164, 0.514]], [[-0.696, -0.022, -0.922], [0.336, 0.529, 0.146], [0.751, -0.373, 0.391]], [[0.189, 0.16, -0.088], [0.68, 0.889, -0.052], [0.328, -0.879, 0.403]]], [[[0.294, 0.986, 0.644], [-0.431, -0.228, 0.337], [-0.955, -0.077, -0.664]], [[-0.766, -0.882, 0.536], [-0.741, -0.505, -0.218], [0.743, -0.839, -0.102]], [[0.099, 0.767, 0.639], [0.728, -0.443, -0.169], [-0.282, 0.768, 0.915]], [[-0.698, -0.648, -0.536], [-0.533, -0.03, 0.178], [-0.475, -0.992, -0.162]], [[-0.261, 0.133, 0.906], [0.381, 0.031, 0.235], [0.352, -0.892, 0.799]], [[0.56, 0.749, 0.596], [-0.215, -0.202, -0.793], [0.269, -0.876, -0.865]], [[-0.582, -0.675, -0.32], [-0.895, -1.0, -0.697], [-0.797, -0.273, -0.949]], [[0.749, 0.228, -0.703], [-0.495, -0.305, -0.272], [-0.754, 0.698, 0.986]]], [[[-0.068, -0.032, -0.828], [-0.796, -0.315, -0.47], [0.658, -0.677, -0.954]], [[0.902, 0.057, -0.707], [0.086, -0.946, 0.056], [0.957, 0.727, 0.392]], [[-0.478, -0.267, -0.666], [0.544, 0.065, 0.558], [-0.341, -0.554, 0.623]], [[0.97, 0.705, 0.612], [0.637, 0.48, -0.547], [0.035, -0.289, -0.942]], [[-0.944, -0.441, -0.482], [0.385, 0.913, -0.106], [0.874, 0.976, 0.91]], [[-0.271, -0.559, -0.546], [-0.607, -0.591, 0.248], [0.801, 0.681, -0.041]], [[0.306, 0.599, -0.83], [0.321, 0.82, 0.565], [0.5, -0.044, -0.643]], [[0.578, -0.335, 0.602], [0.943, -0.208, -0.197], [0.894, 0.45, -0.66]]], [[[-0.746, -0.698, 0.81], [0.613, -0.708, 0.653], [0.961, 0.315, -0.299]], [[0.097, -0.738, -0.972], [0.942, 0.299, 0.053], [0.867, -0.132, 0.743]], [[0.652, -0.578, -0.496], [-0.414, -0.519, 0.173], [-0.481, -0.162, -0.738]], [[0.82, -0.292, -0.084], [0.167, 0.809, -0.159], [0.835, 0.003, 0.064]], [[0.047, -0.963, -0.12], [-0.634, -0.992, 0.598], [-0.655, -0.053, 0.45]], [[0.113, -0.348, 0.037], [0.111, 0.569, -0.788], [0.121, -0.503, -0.446]], [[0.545, 0.015, 0.123], [0.52, 0.825, -0.114], [0.225, 0.011, 0.024]], [[0.385, -0.095, 0.067], [-0.044, 0.883, 0.398], [0.753, 0.884, -0.481]]], [[[0.119, 0.887, 0.68], [-0.726, -0.757, -0.116], [-0.855, -0.519, -0.854]], [[0.339, 0.568, 0.794], [-0.691, 0.432, 0.321], [-0.714, 0.766, 0.935]], [[-0.561, 0.905, -0.203], [-0.025, 0.98, 0.665], [-0.677, -0.137, 0.031]], [[-0.322, -0.609, -0.363], [0.444, -0.961, 0.108], [-0.119, -0.964, -0.337]], [[0.248, 0.025, -0.871], [0.97, 0.577, 0.943], [-0.79, -0.469, -0.921]], [[0.558, -0.459, -0.741], [-0.155, 0.823, 0.638], [-0.483, -0.701, 0.838]], [[0.141, 0.401, -0.821], [-0.885, 0.376, -0.149], [-0.855, 0.877, 0.269]], [[0.603, -0.833, 0.712], [-0.867, 0.726, -0.092], [-0.322, 0.106, 0.853]]], [[[-0.464, -0.742, 0.054], [-0.523, -0.781, -0.677], [-0.899, -0.596, -0.376]], [[-0.39, 0.519, -0.42], [0.0, -0.644, -0.306], [-0.964, -0.499, -0.969]], [[0.466, 0.102, -0.621], [-0.05, 0.869, -0.787], [0.638, -0.136, -0.01]], [[0.669, -0.214, 0.013], [0.375, 0.965, -0.315], [0.665, 0.413, 0.272]], [[-0.191, -0.305, -0.891], [-0.74, -0.859, 0.482], [-0.489, -0.674, -0.831]], [[0.683, 0.741, 0.341], [-0.436, -0.516, -0.414], [-0.081, -0.685, -0.108]], [[-0.474, 0.924, 0.945], [0.094, -0.511, 0.931], [-0.381, -0.287, -0.998]], [[-0.237, -0.051, 0.006], [-0.598, 0.009, -0.99], [-0.472, -0.82, -0.201]]], [[[-0.917, -0.955, -0.392], [-0.534, 0.171, 0.058], [0.501, 0.315, 0.432]], [[0.758, -0.221, -0.348], [0.969, -0.701, 0.448], [0.286, -0.912, 0.671]], [[0.784, 0.255, 0.468], [0.624, -0.721, 0.048], [0.009, 0.67, 0.609]], [[0.653, 0.168, 0.786], [0.366, 0.387, -0.54], [-0.938, -0.734, -0.279]], [[-0.79, 0.672, 0.117], [0.256, 0.252, 0.361], [-0.021, -0.993, 0.595]], [[0.497, 0.006, 0.07], [0.319, -0.868, 0.474], [-0.496, -0.851, -0.469]], [[0.459, -0.59, 0.48], [0.951, -0.012, -0.235], [-0.042, 0.367, 0.534]], [[0.234, 0.286, -0.845], [-0.705, -0.492, 0.486], [-0.391, 0.136, -0.975]]], [[[-0.879, -0.462, 0.344], [0.384, 0.351, -0.418], [0.033, -0.071, -0.067]], [[-0.763, 0.787, -0.601], [0.956, 0.873, -0.965], [-0.082, 0.64, 0.936]], [[-0.101, -0.463, -0.58], [0.891, -0.579, 0.163], [-0.717, 0.048, 0.905]], [[-0.735, 0.64, 0.017], [0.774, 0.407, -0.537], [0.795, -0.028, -0.95]], [[-0.993, -0.017, -0.098], [-0.396, -0.719, -0.312], [-0.368, 0.68, -0.997]], [[0.501, 0.678, -0.76], [0.853, 0.426, 0.803], [-0.42, -0.256, -0.214]], [[0.998, 0.178, -0.279], [-0.144, -0.45, -0.903], [-0.797, 0.669, -0.429]], [[0.871, -0.501, -0.469], [0.022, -0.62, -0.253], [0.912, 0.769, 0.624]]]]> : tensor<8x8x3x3xf32>
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %b = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %s = kiln.add %b, %y : tensor<1x8x16x16xf32>
  %t = kiln.add %s, %res : tensor<1x8x16x16xf32>
  %u = kiln.relu %t : tensor<1x8x16x16xf32>
  %w2 = kiln.constant dense<[[[[0.262]], [[0.827]], [[0.881]], [[0.098]], [[0.439]], [[-0.901]], [[0.465]], [[-0.098]]], [[[0.505]], [[0.289]], [[-0.428]], [[-0.902]], [[0.854]], [[-0.745]], [[-0.056]], [[-0.313]]], [[[-0.404]], [[0.478]], [[0.953]], [[-0.48]], [[0.312]], [[-0.398]], [[0.115]], [[-0.211]]], [[[-0.665]], [[-0.677]], [[-0.584]], [[0.812]], [[-0.006]], [[-0.56]], [[0.813]], [[0.993]]], [[[-0.1]], [[-0.721]], [[-0.615]], [[-0.819]], [[-0.316]], [[-0.818]], [[-0.522]], [[-0.483]]], [[[0.139]], [[0.775]], [[0.499]], [[-0.174]], [[-0.172]], [[0.048]], [[-0.246]], [[-0.324]]], [[[-0.876]], [[-0.445]], [[0.935]], [[-0.748]], [[0.007]], [[0.259]], [[0.726]], [[-0.568]]], [[[-0.458]], [[-0.503]], [[-0.2]], [[-0.108]], [[0.908]], [[0.697]], [[0.746]], [[-0.956]]], [[[-0.936]], [[0.419]], [[0.791]], [[-0.053]], [[0.174]], [[-1.0]], [[-0.217]], [[0.854]]], [[[0.651]], [[0.711]], [[0.944]], [[-0.503]], [[-0.782]], [[-0.691]], [[0.045]], [[0.364]]], [[[0.883]], [[0.443]], [[0.295]], [[0.53]], [[-0.085]], [[0.103]], [[-0.921]], [[0.565]]], [[[-0.535]], [[0.84]], [[0.291]], [[-0.392]], [[-0.744]], [[-0.496]], [[0.273]], [[0.397]]], [[[-0.776]], [[-0.859]], [[0.049]], [[0.166]], [[-0.224]], [[-0.553]], [[0.202]], [[-0.979]]], [[[-0.397]], [[-0.079]], [[0.918]], [[0.289]], [[0.768]], [[-0.049]], [[-0.53]], [[-0.506]]], [[[0.921]], [[0.409]], [[-0.385]], [[-0.956]], [[-0.003]], [[0.349]], [[-0.16]], [[-0.485]]], [[[0.335]], [[0.85]], [[-0.546]], [[-0.932]], [[-0.324]], [[-0.159]], [[0.365]], [[-0.604]]]]> : tensor<16x8x1x1xf32>
  %z = kiln.conv %u, %w2, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<16x8x1x1xf32>
  %b2 = kiln.broadcast_in_dim %bias2, dims = [0, 1, 2, 3] : (tensor<1x16x1x1xf32>) -> tensor<1x16x16x16xf32>
  %zb = kiln.add %z, %b2 : tensor<1x16x16x16xf32>
  %zr = kiln.relu %zb : tensor<1x16x16x16xf32>
  return %u, %zr : tensor<1x8x16x16xf32>, tensor<1x16x16x16xf32>
}

// A depthwise convolution (blocked layouts even over 7x7) and a 3x3 one,
// each plus a constant of one value (an untrained model's folded biases),
// which oneDNN adds as a per-channel bias.
// The depthwise one ends in a SiLU, which oneDNN applies as its swish
// post-op.
// CHECK: conv_uniform_bias(arg0: f32[1,16,7,7], arg1: f32[16,1,5,5], arg2: f32[1,8,16,16], arg3: f32[8,8,3,3]) -> (out0: f32[1,16,7,7], out1: f32[1,8,16,16])
func.func @conv_uniform_bias(%x: tensor<1x16x7x7xf32>, %w: tensor<16x1x5x5xf32>, %a: tensor<1x8x16x16xf32>, %v: tensor<8x8x3x3xf32>) -> (tensor<1x16x7x7xf32>, tensor<1x8x16x16xf32>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [2, 2], padding_high = [2, 2], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 16 : tensor<1x16x7x7xf32>, tensor<16x1x5x5xf32>
  %c = kiln.constant dense<-0.375> : tensor<1x16x7x7xf32>
  %yc = kiln.add %y, %c : tensor<1x16x7x7xf32>
  %ys = kiln.sigmoid %yc : tensor<1x16x7x7xf32>
  %yb = kiln.mul %yc, %ys : tensor<1x16x7x7xf32>
  %z = kiln.conv %a, %v, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %d = kiln.constant dense<0.0> : tensor<1x8x16x16xf32>
  %zb = kiln.add %d, %z : tensor<1x8x16x16xf32>
  return %yb, %zb : tensor<1x16x7x7xf32>, tensor<1x8x16x16xf32>
}

// Two bottleneck blocks: the first block's addend (its input, a
// convolution's activated result) dies at the last convolution, which
// writes its result over it (kiln-cpu-conv-addend-in-place) and adds it
// with oneDNN's sum post-op; the second block's addend is returned as well,
// so that convolution writes a buffer of its own. Five convolutions deep
// on inputs in [-2, 2], the intermediates reach the hundreds, and the sums'
// order moves outputs by up to about 3e-3.
// CHECK: conv_residual_blocks(arg0: f32[1,16,16,16], arg1: f32[16,16,1,1], arg2: f32[8,16,1,1], arg3: f32[8,8,3,3], arg4: f32[16,8,1,1]) -> (out0: f32[1,16,16,16], out1: f32[1,16,16,16])
func.func @conv_residual_blocks(%x: tensor<1x16x16x16xf32>, %w0: tensor<16x16x1x1xf32>, %w1: tensor<8x16x1x1xf32>, %w2: tensor<8x8x3x3xf32>, %w3: tensor<16x8x1x1xf32>) -> (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>)
    attributes {kiln.e2e_atol = 1.0e-2 : f64} {
  %a0 = kiln.conv %x, %w0, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x16x16x16xf32>, tensor<16x16x1x1xf32>
  %a = kiln.relu %a0 : tensor<1x16x16x16xf32>
  %b0 = kiln.conv %a, %w1, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x16x16x16xf32>, tensor<8x16x1x1xf32>
  %b = kiln.relu %b0 : tensor<1x8x16x16xf32>
  %c0 = kiln.conv %b, %w2, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %c = kiln.relu %c0 : tensor<1x8x16x16xf32>
  %d = kiln.conv %c, %w3, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<16x8x1x1xf32>
  %e = kiln.add %d, %a : tensor<1x16x16x16xf32>
  %f = kiln.relu %e : tensor<1x16x16x16xf32>
  %g0 = kiln.conv %f, %w1, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x16x16x16xf32>, tensor<8x16x1x1xf32>
  %g = kiln.relu %g0 : tensor<1x8x16x16xf32>
  %h = kiln.conv %g, %w3, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<16x8x1x1xf32>
  %i = kiln.add %f, %h : tensor<1x16x16x16xf32>
  %j = kiln.relu %i : tensor<1x16x16x16xf32>
  return %j, %f : tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>
}
