// One case per verifier error of the kiln ops: the checks in KilnOps.cpp, the
// ODS type constraints and the traits the ops carry.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// A constant must be a tensor literal.
func.func @constant_not_tensor() {
  // expected-error @+1 {{value must be a ranked tensor literal}}
  %0 = kiln.constant dense<1> : vector<2xi32>
  return
}

// -----

// The literal's type is the result type.
func.func @constant_type_mismatch() {
  // expected-error @+1 {{'kiln.constant' op value type 'tensor<2xi32>' does not match result type 'tensor<3xi32>'}}
  %0 = "kiln.constant"() <{value = dense<1> : tensor<2xi32>}> : () -> tensor<3xi32>
  return
}

// -----

// Element types outside f16/bf16/f32/f64/i1/i8 ... i64/ui8 ... ui64 are
// rejected.
func.func @constant_i4() {
  // expected-error @+1 {{'kiln.constant' op result #0 must be statically shaped tensor of}}
  %0 = kiln.constant dense<1> : tensor<2xi4>
  return
}

// -----

func.func @iota_rank0() {
  // expected-error @+1 {{'kiln.iota' op result must have rank >= 1}}
  %0 = kiln.iota dim = 0 : tensor<i32>
  return
}

// -----

func.func @iota_dim_out_of_range() {
  // expected-error @+1 {{'kiln.iota' op dimension 2 is out of range for result of rank 2}}
  %0 = kiln.iota dim = 2 : tensor<2x3xi32>
  return
}

// -----

func.func @iota_bool() {
  // expected-error @+1 {{'kiln.iota' op result #0 must be statically shaped tensor of}}
  %0 = kiln.iota dim = 0 : tensor<2xi1>
  return
}

// -----

// Binary elementwise operands must have the same shape...
func.func @add_shape_mismatch(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.add' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "kiln.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return
}

// -----

// ... and the same element type.
func.func @mul_dtype_mismatch(%a: tensor<2xf32>, %b: tensor<2xf64>) {
  // expected-error @+1 {{'kiln.mul' op requires the same type for all operands and results}}
  %0 = "kiln.mul"(%a, %b) : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xf32>
  return
}

// -----

func.func @sub_result_mismatch(%a: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.sub' op requires the same type for all operands and results}}
  %0 = "kiln.sub"(%a, %a) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi64>
  return
}

// -----

// Arithmetic is not defined on i1.
func.func @add_bool(%a: tensor<2xi1>) {
  // expected-error @+1 {{'kiln.add' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'tensor<2xi1>'}}
  %0 = kiln.add %a, %a : tensor<2xi1>
  return
}

// -----

// Float-only ops reject integers.
func.func @exp_int(%a: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<2xi32>'}}
  %0 = kiln.exp %a : tensor<2xi32>
  return
}

// -----

func.func @pow_int(%a: tensor<2xi64>) {
  // expected-error @+1 {{'kiln.pow' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<2xi64>'}}
  %0 = kiln.pow %a, %a : tensor<2xi64>
  return
}

// -----

func.func @sigmoid_int(%a: tensor<i32>) {
  // expected-error @+1 {{'kiln.sigmoid' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<i32>'}}
  %0 = kiln.sigmoid %a : tensor<i32>
  return
}

// -----

// Dynamic shapes are rejected.
func.func @dynamic_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{'kiln.neg' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.neg %a : tensor<?xf32>
  return
}

// -----

func.func @dynamic_shape_2d(%a: tensor<2x?xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'kiln.matmul' op operand #0 must be statically shaped tensor of}}
  %0 = "kiln.matmul"(%a, %b) : (tensor<2x?xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

// Unranked tensors are rejected.
func.func @unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{'kiln.relu' op operand #0 must be statically shaped tensor of}}
  %0 = "kiln.relu"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @unsupported_element(%a: tensor<2xsi32>) {
  // expected-error @+1 {{'kiln.neg' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'tensor<2xsi32>'}}
  %0 = kiln.neg %a : tensor<2xsi32>
  return
}

// -----

func.func @compare_type_mismatch(%a: tensor<2xf32>, %b: tensor<2xf64>) {
  // expected-error @+1 {{'kiln.compare' op failed to verify that all of {lhs, rhs} have same type}}
  %0 = "kiln.compare"(%a, %b) <{direction = 0 : i32}> : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xi1>
  return
}

// -----

func.func @compare_bad_direction(%a: tensor<2xf32>) {
  // expected-error @+1 {{Invalid attribute `direction` in property conversion: 9 : i32}}
  %0 = "kiln.compare"(%a, %a) <{direction = 9 : i32}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return
}

// -----

func.func @compare_result_not_bool(%a: tensor<2xf32>) {
  // expected-error @+1 {{'kiln.compare' op result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = "kiln.compare"(%a, %a) <{direction = 0 : i32}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

// The select predicate must match the value shape (the Elementwise trait
// reports this before SelectOp::verify).
func.func @select_pred_shape(%p: tensor<2xi1>, %a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.select' op predicate shape [2] must be rank 0 or match the value shape [3]}}
  %0 = kiln.select %p, %a, %a : tensor<2xi1>, tensor<3xf32>
  return
}

// -----

func.func @select_pred_not_bool(%p: tensor<3xi32>, %a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<3xi32>'}}
  %0 = kiln.select %p, %a, %a : tensor<3xi32>, tensor<3xf32>
  return
}

// -----

func.func @select_value_mismatch(%p: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+1 {{'kiln.select' op failed to verify that all of {on_true, on_false, result} have same type}}
  %0 = "kiln.select"(%p, %a, %b) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

// A cast changes the dtype only (the Elementwise trait reports this before
// CastOp::verify).
func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.cast' op operand shape [4] differs from result shape [2,2]}}
  %0 = kiln.cast %a : tensor<4xf32> to tensor<2x2xi32>
  return
}

// -----

func.func @sort_dim(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'kiln.sort' op dimension 2 is out of range for operand of rank 2}}
  %v, %i = kiln.sort %a, dim = 2 : tensor<4x3xf32>
  return
}

// -----

func.func @sort_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'kiln.sort' op operand #0 must be statically shaped tensor of}}
  %v, %i = kiln.sort %a, dim = 0 : tensor<4xi1>
  return
}

// -----

func.func @bitcast_width(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.bitcast' op element types 'f32' and 'i64' differ in bit width}}
  %0 = kiln.bitcast %a : tensor<4xf32> to tensor<4xi64>
  return
}

// -----

func.func @bitcast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.bitcast' op operand shape [4] differs from result shape [2,2]}}
  %0 = kiln.bitcast %a : tensor<4xf32> to tensor<2x2xi32>
  return
}

// -----

func.func @bitcast_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'kiln.bitcast' op cannot reinterpret i1 (its storage is wider than its bit)}}
  %0 = kiln.bitcast %a : tensor<4xi1> to tensor<4xui8>
  return
}

// -----

func.func @cast_unsupported(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.cast' op result #0 must be statically shaped tensor of}}
  %0 = kiln.cast %a : tensor<4xf32> to tensor<4xi4>
  return
}

// -----

func.func @broadcast_dtype(%a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op result element type 'f16' differs from operand's 'f32'}}
  %0 = kiln.broadcast_in_dim %a, dims = [0] : (tensor<3xf32>) -> tensor<3x2xf16>
  return
}

// -----

func.func @broadcast_dims_count(%a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op dims has 2 entries but the operand has rank 1}}
  %0 = kiln.broadcast_in_dim %a, dims = [0, 1] : (tensor<3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @broadcast_dim_too_large(%a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op dims[0] = 2 is out of range for result rank 2}}
  %0 = kiln.broadcast_in_dim %a, dims = [2] : (tensor<3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @broadcast_dim_negative(%a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op dims[0] = -1 is out of range for result rank 2}}
  %0 = kiln.broadcast_in_dim %a, dims = [-1] : (tensor<3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @broadcast_dims_not_increasing(%a: tensor<3x3xf32>) {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op dims must be strictly increasing, but dims[1] = 0 follows 1}}
  %0 = kiln.broadcast_in_dim %a, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @broadcast_bad_size(%a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.broadcast_in_dim' op operand dimension 0 has size 3, which cannot broadcast to result dimension 1 of size 2}}
  %0 = kiln.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'kiln.reshape' op cannot reshape [2,3] (6 elements) into [5] (5 elements)}}
  %0 = kiln.reshape %a : (tensor<2x3xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @reshape_dtype(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'kiln.reshape' op result element type 'i32' differs from operand's 'f32'}}
  %0 = kiln.reshape %a : (tensor<2x3xf32>) -> tensor<6xi32>
  return
}

// -----

func.func @transpose_perm_size(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation has 1 entries but the operand has rank 2}}
  %0 = kiln.transpose %a, permutation = [0] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_perm_repeated(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation [0,0] is not a permutation of 0..1}}
  %0 = kiln.transpose %a, permutation = [0, 0] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_perm_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation [0,2] is not a permutation of 0..1}}
  %0 = kiln.transpose %a, permutation = [0, 2] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_result_type(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kiln.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'kiln.transpose' op failed to infer returned types}}
  %0 = "kiln.transpose"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_limit_past_end(%a: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0: need 0 <= start (0) <= limit (5) <= size (4)}}
  %0 = kiln.slice %a, start = [0], limit = [5], stride = [1] : tensor<4xf32>
  return
}

// -----

func.func @slice_start_after_limit(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{dimension 1: need 0 <= start (3) <= limit (2) <= size (4)}}
  %0 = kiln.slice %a, start = [0, 3], limit = [4, 2], stride = [1, 1] : tensor<4x4xf32>
  return
}

// -----

func.func @slice_negative_start(%a: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0: need 0 <= start (-1) <= limit (2) <= size (4)}}
  %0 = kiln.slice %a, start = [-1], limit = [2], stride = [1] : tensor<4xf32>
  return
}

// -----

func.func @slice_zero_stride(%a: tensor<4xf32>) {
  // expected-error @+1 {{stride[0] = 0 must be >= 1}}
  %0 = kiln.slice %a, start = [0], limit = [2], stride = [0] : tensor<4xf32>
  return
}

// -----

func.func @slice_entry_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{start, limit and stride need 1 entries each (the operand rank), got 2, 1 and 1}}
  %0 = kiln.slice %a, start = [0, 0], limit = [2], stride = [1] : tensor<4xf32>
  return
}

// -----

func.func @concat_size_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{input #1 has size 4 in dimension 1 but input #0 has 3}}
  %0 = kiln.concat %a, %b dim = 0 : tensor<2x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @concat_dtype_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{input #1 has type 'tensor<2x3xf16>', incompatible with input #0 of type 'tensor<2x3xf32>'}}
  %0 = kiln.concat %a, %b dim = 0 : tensor<2x3xf32>, tensor<2x3xf16>
  return
}

// -----

func.func @concat_rank_mismatch(%a: tensor<2x3xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{input #1 has type 'tensor<6xf32>', incompatible with input #0 of type 'tensor<2x3xf32>'}}
  %0 = kiln.concat %a, %b dim = 0 : tensor<2x3xf32>, tensor<6xf32>
  return
}

// -----

func.func @concat_dim_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for inputs of rank 2}}
  %0 = kiln.concat %a, %a dim = 2 : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_rank0(%a: tensor<f32>) {
  // expected-error @+1 {{dimension 0 is out of range for inputs of rank 0}}
  %0 = kiln.concat %a, %a dim = 0 : tensor<f32>, tensor<f32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @+2 {{needs at least one input}}
  // expected-error @+1 {{'kiln.concat' op failed to infer returned types}}
  %0 = "kiln.concat"() <{dimension = 0 : i64}> : () -> tensor<1xf32>
  return
}

// -----

func.func @reduce_dim_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction dimension 2 is out of range for operand of rank 2}}
  %0 = kiln.reduce_sum %a, dims = [2] : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_dim_negative(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction dimension -1 is out of range for operand of rank 2}}
  %0 = kiln.reduce_mean %a, dims = [-1] : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_dim_repeated(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction dimension 1 is listed twice}}
  %0 = kiln.reduce_max %a, dims = [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_mean_int(%a: tensor<2x3xi32>) {
  // expected-error @+1 {{'kiln.reduce_mean' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<2x3xi32>'}}
  %0 = kiln.reduce_mean %a, dims = [1] : tensor<2x3xi32>
  return
}

// -----

func.func @reduce_result_type(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'kiln.reduce_sum' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'kiln.reduce_sum' op failed to infer returned types}}
  %0 = "kiln.reduce_sum"(%a) <{dims = array<i64: 1>}> : (tensor<2x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contracting dimensions differ: lhs [2,3] has K = 3 but rhs [4,5] has K = 4}}
  %0 = kiln.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32>
  return
}

// -----

func.func @matmul_rank_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x3x5xf32>) {
  // expected-error @+1 {{operands must both be rank 2 or both rank 3, got lhs [2,3] and rhs [2,3,5]}}
  %0 = kiln.matmul %a, %b : tensor<2x3xf32>, tensor<2x3x5xf32>
  return
}

// -----

func.func @matmul_rank1(%a: tensor<3xf32>) {
  // expected-error @+1 {{operands must both be rank 2 or both rank 3, got lhs [3] and rhs [3]}}
  %0 = kiln.matmul %a, %a : tensor<3xf32>, tensor<3xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<4x3x5xf32>) {
  // expected-error @+1 {{batch sizes differ: lhs has 2, rhs has 4}}
  %0 = kiln.matmul %a, %b : tensor<2x2x3xf32>, tensor<4x3x5xf32>
  return
}

// -----

func.func @matmul_dtype(%a: tensor<2x3xf32>, %b: tensor<3x5xf16>) {
  // expected-error @+1 {{lhs element type 'f32' differs from rhs's 'f16'}}
  %0 = kiln.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf16>
  return
}

// -----

func.func @matmul_widen_f32(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{result_element_type 'f32' is not supported for 'f32' operands: it may only widen f16 or bf16 operands' product to f32, or 8-bit integers' to i32}}
  %0 = kiln.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> f32
  return
}

// -----

func.func @matmul_widen_to_f64(%a: tensor<2x3xbf16>, %b: tensor<3x5xbf16>) {
  // expected-error @+1 {{result_element_type 'f64' is not supported for 'bf16' operands}}
  %0 = kiln.matmul %a, %b : tensor<2x3xbf16>, tensor<3x5xbf16> -> f64
  return
}

// -----

func.func @matmul_bytes_of_two_types(%a: tensor<2x3xui8>, %b: tensor<3x5xi8>) {
  // expected-error @+1 {{8-bit integer operands of two types ('ui8', 'i8') need result_element_type = i32}}
  %0 = kiln.matmul %a, %b : tensor<2x3xui8>, tensor<3x5xi8>
  return
}

// -----

func.func @matmul_bytes_to_i64(%a: tensor<2x3xui8>, %b: tensor<3x5xi8>) {
  // expected-error @+1 {{result_element_type 'i64' is not supported for 'ui8' operands}}
  %0 = kiln.matmul %a, %b : tensor<2x3xui8>, tensor<3x5xi8> -> i64
  return
}

// -----

func.func @matmul_i16_to_i32(%a: tensor<2x3xi16>, %b: tensor<3x5xi16>) {
  // expected-error @+1 {{result_element_type 'i32' is not supported for 'i16' operands}}
  %0 = kiln.matmul %a, %b : tensor<2x3xi16>, tensor<3x5xi16> -> i32
  return
}

// -----

func.func @matmul_byte_and_i32(%a: tensor<2x3xi8>, %b: tensor<3x5xi32>) {
  // expected-error @+1 {{lhs element type 'i8' differs from rhs's 'i32'}}
  %0 = kiln.matmul %a, %b : tensor<2x3xi8>, tensor<3x5xi32> -> i32
  return
}

// -----

func.func @matmul_bool(%a: tensor<2x3xi1>, %b: tensor<3x5xi1>) {
  // expected-error @+1 {{'kiln.matmul' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.matmul %a, %b : tensor<2x3xi1>, tensor<3x5xi1>
  return
}

// -----

func.func @gather_rank0_table(%t: tensor<f32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{table must have rank >= 1 and at least one row}}
  %0 = kiln.gather %t, %i : tensor<f32>, tensor<2xi32>
  return
}

// -----

func.func @gather_empty_table(%t: tensor<0x4xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{table must have rank >= 1 and at least one row}}
  %0 = kiln.gather %t, %i : tensor<0x4xf32>, tensor<2xi32>
  return
}

// -----

func.func @gather_float_indices(%t: tensor<3x4xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'kiln.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %0 = kiln.gather %t, %i : tensor<3x4xf32>, tensor<2xf32>
  return
}

// -----

func.func @cond_pred_not_rank0(%p: tensor<2xi1>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.cond' op operand #0 must be 0D tensor of 1-bit signless integer values, but got 'tensor<2xi1>'}}
  %0 = kiln.cond %p, (%x) : tensor<2xi1>, (tensor<f32>) -> tensor<f32> {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  } else {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @cond_pred_not_bool(%p: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.cond' op operand #0 must be 0D tensor of 1-bit signless integer values, but got 'tensor<i32>'}}
  %0 = kiln.cond %p, (%x) : tensor<i32>, (tensor<f32>) -> tensor<f32> {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  } else {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @cond_region_arg_count(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.cond' op then region takes 0 arguments but needs 1}}
  %0 = kiln.cond %p, (%x) : tensor<i1>, (tensor<f32>) -> tensor<f32> {
    %c = kiln.constant dense<1.0> : tensor<f32>
    kiln.yield %c : tensor<f32>
  } else {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @cond_region_arg_type(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.cond' op else region argument #0 has type 'tensor<f64>' but needs 'tensor<f32>'}}
  %0 = kiln.cond %p, (%x) : tensor<i1>, (tensor<f32>) -> tensor<f32> {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  } else {
  ^bb0(%a: tensor<f64>):
    %c = kiln.constant dense<1.0> : tensor<f32>
    kiln.yield %c : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @cond_yield_count(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %0 = kiln.cond %p, (%x) : tensor<i1>, (tensor<f32>) -> tensor<f32> {
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'kiln.yield' op in the then region yields 2 values but needs 1}}
    kiln.yield %a, %a : tensor<f32>, tensor<f32>
  } else {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @cond_yield_type(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %0 = kiln.cond %p, (%x) : tensor<i1>, (tensor<f32>) -> tensor<f32> {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  } else {
  ^bb0(%a: tensor<f32>):
    %c = kiln.constant dense<1> : tensor<i32>
    // expected-error @+1 {{'kiln.yield' op in the else region: value #0 has type 'tensor<i32>' but needs 'tensor<f32>'}}
    kiln.yield %c : tensor<i32>
  }
  return %0 : tensor<f32>
}

// -----

// The results are declared, not inferred, so a result type that differs from
// the yielded one is reported at the yield.
func.func @cond_result_type(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f64> {
  %0 = kiln.cond %p, (%x) : tensor<i1>, (tensor<f32>) -> tensor<f64> {
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'kiln.yield' op in the then region: value #0 has type 'tensor<f32>' but needs 'tensor<f64>'}}
    kiln.yield %a : tensor<f32>
  } else {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f64>
}

// -----

func.func @cond_not_yield_terminated(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.cond' op then region must end with kiln.yield}}
  %0 = kiln.cond %p, (%x) : tensor<i1>, (tensor<f32>) -> tensor<f32> {
  ^bb0(%a: tensor<f32>):
    "llvm.unreachable"() : () -> ()
  } else {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// Regions are isolated from above: outer values must be passed as inputs.
func.func @cond_uses_outer_value(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = kiln.cond %p, (%x) : tensor<i1>, (tensor<f32>) -> tensor<f32> {
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'kiln.neg' op using value defined outside the region}}
    %n = kiln.neg %x : tensor<f32>
    kiln.yield %n : tensor<f32>
  } else {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @while_cond_yields_vector(%x: tensor<f32>) -> tensor<f32> {
  %0 = kiln.while(%x) : (tensor<f32>) cond {
  ^bb0(%a: tensor<f32>):
    %c = kiln.constant dense<[true, false]> : tensor<2xi1>
    // expected-error @+1 {{'kiln.yield' op in the cond region: value #0 has type 'tensor<2xi1>' but needs 'tensor<i1>'}}
    kiln.yield %c : tensor<2xi1>
  } do {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @while_cond_yield_count(%x: tensor<f32>) -> tensor<f32> {
  %0 = kiln.while(%x) : (tensor<f32>) cond {
  ^bb0(%a: tensor<f32>):
    %c = kiln.constant dense<true> : tensor<i1>
    // expected-error @+1 {{'kiln.yield' op in the cond region yields 2 values but needs 1}}
    kiln.yield %c, %c : tensor<i1>, tensor<i1>
  } do {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @while_body_yield_type(%x: tensor<f32>) -> tensor<f32> {
  %0 = kiln.while(%x) : (tensor<f32>) cond {
  ^bb0(%a: tensor<f32>):
    %c = kiln.constant dense<true> : tensor<i1>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%a: tensor<f32>):
    %c = kiln.cast %a : tensor<f32> to tensor<f64>
    // expected-error @+1 {{'kiln.yield' op in the body region: value #0 has type 'tensor<f64>' but needs 'tensor<f32>'}}
    kiln.yield %c : tensor<f64>
  }
  return %0 : tensor<f32>
}

// -----

func.func @while_cond_arg_count(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.while' op cond region takes 2 arguments but needs 1}}
  %0 = kiln.while(%x) : (tensor<f32>) cond {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = kiln.constant dense<true> : tensor<i1>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @while_body_arg_type(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.while' op body region argument #0 has type 'tensor<2xf32>' but needs 'tensor<f32>'}}
  %0 = kiln.while(%x) : (tensor<f32>) cond {
  ^bb0(%a: tensor<f32>):
    %c = kiln.constant dense<true> : tensor<i1>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%a: tensor<2xf32>):
    kiln.yield %a : tensor<2xf32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @while_result_type(%x: tensor<f32>) -> tensor<f64> {
  // expected-error @+2 {{'kiln.while' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<f64>'}}
  // expected-error @+1 {{'kiln.while' op failed to infer returned types}}
  %0 = "kiln.while"(%x) ({
  ^bb0(%a: tensor<f32>):
    %c = kiln.constant dense<true> : tensor<i1>
    kiln.yield %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }) : (tensor<f32>) -> tensor<f64>
  return %0 : tensor<f64>
}

// -----

func.func @for_negative_trip_count(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.for' op trip_count must be >= 0, got -1}}
  %0 = kiln.for -1 iterations(%x) : (tensor<f32>) {
  ^bb0(%i: tensor<i64>, %a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @for_missing_index(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.for' op body region takes 1 arguments but needs 2}}
  %0 = kiln.for 2 iterations(%x) : (tensor<f32>) {
  ^bb0(%a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @for_index_type(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.for' op body region argument #0 has type 'tensor<i32>' but needs 'tensor<i64>'}}
  %0 = kiln.for 2 iterations(%x) : (tensor<f32>) {
  ^bb0(%i: tensor<i32>, %a: tensor<f32>):
    kiln.yield %a : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @for_yield_type(%x: tensor<f32>) -> tensor<f32> {
  %0 = kiln.for 2 iterations(%x) : (tensor<f32>) {
  ^bb0(%i: tensor<i64>, %a: tensor<f32>):
    // expected-error @+1 {{'kiln.yield' op in the body region: value #0 has type 'tensor<i64>' but needs 'tensor<f32>'}}
    kiln.yield %i : tensor<i64>
  }
  return %0 : tensor<f32>
}

// -----

func.func @for_yield_count(%x: tensor<f32>) -> tensor<f32> {
  %0 = kiln.for 2 iterations(%x) : (tensor<f32>) {
  ^bb0(%i: tensor<i64>, %a: tensor<f32>):
    // expected-error @+1 {{'kiln.yield' op in the body region yields 0 values but needs 1}}
    kiln.yield
  }
  return %0 : tensor<f32>
}

// -----

func.func @yield_outside_control_flow(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.yield' op expects parent op to be one of 'kiln.cond, kiln.while, kiln.for, kiln.fused, kiln.fused_kernel'}}
  kiln.yield %x : tensor<f32>
}

// -----

// A loop without carried values would compute nothing.
func.func @for_without_carried_values() {
  // expected-error @+1 {{'kiln.for' op needs at least one loop-carried value}}
  "kiln.for"() <{trip_count = 2 : i64}> ({
  ^bb0(%iv: tensor<i64>):
    kiln.yield
  }) : () -> ()
  return
}

// -----

func.func @while_without_carried_values() {
  // expected-error @+1 {{'kiln.while' op needs at least one loop-carried value}}
  "kiln.while"() ({
    %f = kiln.constant dense<false> : tensor<i1>
    kiln.yield %f : tensor<i1>
  }, {
    kiln.yield
  }) : () -> ()
  return
}

// -----

func.func @erf_of_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'kiln.erf' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = kiln.erf %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @sign_of_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'kiln.sign' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'tensor<4xi1>'}}
  %0 = kiln.sign %x : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @and_of_floats(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.and' op operand #0 must be statically shaped tensor of 1-bit signless integer or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'tensor<4xf32>'}}
  %0 = kiln.and %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @xor_mixed_widths(%a: tensor<4xi32>, %b: tensor<4xi64>) -> tensor<4xi32> {
  // expected-error @+1 {{'kiln.xor' op requires the same type for all operands and results}}
  %0 = "kiln.xor"(%a, %b) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @rem_shapes_differ(%a: tensor<4xf32>, %b: tensor<2x2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.rem' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "kiln.rem"(%a, %b) : (tensor<4xf32>, tensor<2x2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @not_of_floats(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.not' op operand #0 must be statically shaped tensor of 1-bit signless integer or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'tensor<4xf32>'}}
  %0 = kiln.not %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @argmax_dim_out_of_range(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{'kiln.argmax' op dimension 2 is out of range for operand of rank 2}}
  %0 = kiln.argmax %x, dim = 2 : tensor<2x3xf32>
  return %0 : tensor<2xi64>
}

// -----

func.func @argmin_of_rank0(%x: tensor<f32>) -> tensor<i64> {
  // expected-error @+1 {{'kiln.argmin' op dimension 0 is out of range for operand of rank 0}}
  %0 = kiln.argmin %x, dim = 0 : tensor<f32>
  return %0 : tensor<i64>
}

// -----

// There is no index of an empty slice.
func.func @argmax_empty_dim(%x: tensor<3x0xf32>) -> tensor<3xi64> {
  // expected-error @+1 {{'kiln.argmax' op dimension 1 has size 0: there is no index to return}}
  %0 = kiln.argmax %x, dim = 1 : tensor<3x0xf32>
  return %0 : tensor<3xi64>
}

// -----

// An empty slice elsewhere is fine: the result is empty too.
func.func @argmin_empty_other_dim(%x: tensor<0x4xi32>) -> tensor<0xi64> {
  %0 = kiln.argmin %x, dim = 1 : tensor<0x4xi32>
  return %0 : tensor<0xi64>
}

// -----

func.func @argmax_wrong_result(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.argmax' op result #0 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<2xi32>'}}
  %0 = "kiln.argmax"(%x) <{dim = 1 : i64}> : (tensor<2x3xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @argmax_of_bool(%x: tensor<2x3xi1>) -> tensor<2xi64> {
  // expected-error @+1 {{'kiln.argmax' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer or 16-bit unsigned integer or 32-bit unsigned integer or 64-bit unsigned integer values, but got 'tensor<2x3xi1>'}}
  %0 = kiln.argmax %x, dim = 1 : tensor<2x3xi1>
  return %0 : tensor<2xi64>
}

// -----

func.func @cumsum_dim_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.cumsum' op dimension -1 is out of range for operand of rank 2}}
  %0 = kiln.cumsum %x, dim = -1 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cumsum_result_type(%x: tensor<2x3xf32>) -> tensor<2x3xf64> {
  // expected-error @+1 {{'kiln.cumsum' op requires the same type for all operands and results}}
  %0 = "kiln.cumsum"(%x) <{dim = 0 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}
