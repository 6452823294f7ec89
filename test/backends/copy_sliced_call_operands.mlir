// A call operand that is a proper slice (a view with an offset after
// bufferization), or a value written into one in place (an insert_slice or
// a linalg kernel whose destination is a slice), is copied into a fresh
// tensor; a whole tensor, a
// whole-tensor slice and a non-call use of the slice are left alone. The
// last case runs the whole CPU pipeline on a oneDNN convolution of a
// channel slice (before the copy, bufferization emitted an invalid
// memref.cast to the callee's identity layout).
// With loop-inits (the CUDA pipeline's), a loop's init that is a slice or
// a pick is copied too (the last case).
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-copy-sliced-call-operands))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-copy-sliced-call-operands{loop-inits=true}))' | FileCheck %s --check-prefix=LOOPS

func.func private @callee(tensor<2x8xf32>) -> tensor<2x8xf32>

// CHECK-LABEL: func.func @sliced(
// CHECK-SAME:    %[[X:.*]]: tensor<2x16xf32>
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[X]][0, 8] [2, 8] [1, 1]
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK:         %[[C:.*]] = linalg.copy ins(%[[S]] : tensor<2x8xf32>) outs(%[[E]] : tensor<2x8xf32>)
// CHECK:         call @callee(%[[C]])
// CHECK:         %[[N:.*]] = arith.addf %[[S]], %[[S]]
func.func @sliced(%x: tensor<2x16xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = tensor.extract_slice %x[0, 8] [2, 8] [1, 1] : tensor<2x16xf32> to tensor<2x8xf32>
  %r = call @callee(%s) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %n = arith.addf %s, %s : tensor<2x8xf32>
  return %r, %n : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

func.func private @callee(tensor<2x8xf32>) -> tensor<2x8xf32>

// A slice seen through a reshape is copied too.
// CHECK-LABEL: func.func @reshaped(
// CHECK:         %[[S:.*]] = tensor.extract_slice
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[S]]
// CHECK:         %[[C:.*]] = linalg.copy ins(%[[R]] : tensor<2x8xf32>)
// CHECK:         call @callee(%[[C]])
func.func @reshaped(%x: tensor<2x2x8xf32>) -> tensor<2x8xf32> {
  %s = tensor.extract_slice %x[0, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<2x2x8xf32> to tensor<1x2x8xf32>
  %r = tensor.collapse_shape %s [[0, 1], [2]] : tensor<1x2x8xf32> into tensor<2x8xf32>
  %c = call @callee(%r) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

func.func private @callee(tensor<2x8xf32>) -> tensor<2x8xf32>

// CHECK-LABEL: func.func @whole(
// CHECK-NOT:     linalg.copy
// CHECK:         call @callee(%arg0)
// CHECK-NOT:     linalg.copy
// CHECK:         call @callee(%
func.func @whole(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %a = call @callee(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : tensor<2x8xf32> to tensor<2x8xf32>
  %b = call @callee(%s) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %a, %b : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

func.func private @callee(tensor<2x8xf32>) -> tensor<2x8xf32>

// kiln-program-fuzz seed 1875: a dynamic_update_slice of a slice of an
// intermediate is an insert_slice whose destination is the slice;
// bufferization writes it into the slice's view in place, so the call's
// operand is that view. So is an elementwise kernel written into a slice.
// CHECK-LABEL: func.func @updated_slice(
// CHECK:         %[[S:.*]] = tensor.extract_slice
// CHECK:         %[[U:.*]] = tensor.insert_slice %{{.*}} into %[[S]]
// CHECK:         %[[C:.*]] = linalg.copy ins(%[[U]] : tensor<2x8xf32>)
// CHECK:         call @callee(%[[C]])
// CHECK:         %[[K:.*]] = linalg.generic
// CHECK:         %[[D:.*]] = linalg.copy ins(%[[K]] : tensor<2x8xf32>)
// CHECK:         call @callee(%[[D]])
func.func @updated_slice(%x: tensor<2x16xf32>, %u: tensor<1x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = tensor.extract_slice %x[0, 8] [2, 8] [1, 1] : tensor<2x16xf32> to tensor<2x8xf32>
  %w = tensor.insert_slice %u into %s[1, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<2x8xf32>
  %a = call @callee(%w) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%s : tensor<2x8xf32>) {
  ^bb0(%o: f32):
    %t = arith.addf %o, %o : f32
    linalg.yield %t : f32
  } -> tensor<2x8xf32>
  %b = call @callee(%k) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %a, %b : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

func.func private @callee(tensor<2x8xf32>) -> tensor<2x8xf32>

// Written in place into a whole tensor: nothing to copy.
// CHECK-LABEL: func.func @updated_whole(
// CHECK-NOT:     linalg.copy
// CHECK:         call @callee(
func.func @updated_whole(%x: tensor<2x8xf32>, %u: tensor<1x8xf32>) -> tensor<2x8xf32> {
  %w = tensor.insert_slice %u into %x[1, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<2x8xf32>
  %a = call @callee(%w) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %a : tensor<2x8xf32>
}

// -----

func.func private @callee(tensor<2xf32>) -> tensor<2xf32>

// A slice passed through a branch (kiln-program-fuzz seed 2632: a
// kiln.cond yielding a dynamic_slice in one branch, read by a call) or
// yielded by a loop's body: the result's buffer may be that view.
// CHECK-LABEL: func.func @through_a_branch(
// CHECK:         %[[R:.*]] = scf.if
// CHECK:         %[[C:.*]] = linalg.copy ins(%[[R]] : tensor<2xf32>)
// CHECK:         call @callee(%[[C]])
// CHECK-LABEL: func.func @yielded_by_a_loop(
// CHECK:         %[[L:.*]] = scf.for
// CHECK:         %[[D:.*]] = linalg.copy ins(%[[L]] : tensor<2xf32>)
// CHECK:         call @callee(%[[D]])
func.func @through_a_branch(%x: tensor<8xf32>, %i: index, %p: i1) -> tensor<2xf32> {
  %s = tensor.extract_slice %x[%i] [2] [1] : tensor<8xf32> to tensor<2xf32>
  %r = scf.if %p -> tensor<2xf32> {
    scf.yield %s : tensor<2xf32>
  } else {
    %e = tensor.empty() : tensor<2xf32>
    scf.yield %e : tensor<2xf32>
  }
  %a = call @callee(%r) : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}
func.func @yielded_by_a_loop(%x: tensor<8xf32>, %y: tensor<2xf32>, %n: index) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %y) -> tensor<2xf32> {
    %s = tensor.extract_slice %x[%k] [2] [1] : tensor<8xf32> to tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  }
  %a = call @callee(%l) : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

// -----

func.func private @callee(tensor<2xf32>) -> tensor<2xf32>

// A branch between two whole tensors: nothing to copy.
// CHECK-LABEL: func.func @branch_of_wholes(
// CHECK-NOT:     linalg.copy
// CHECK:         call @callee(
func.func @branch_of_wholes(%x: tensor<2xf32>, %y: tensor<2xf32>, %p: i1) -> tensor<2xf32> {
  %r = scf.if %p -> tensor<2xf32> {
    scf.yield %x : tensor<2xf32>
  } else {
    scf.yield %y : tensor<2xf32>
  }
  %a = call @callee(%r) : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

// -----

// A slice as large as its source is a view when its source is one: a
// dynamic row of a strided slice (seed 2096 of the random-program
// campaign) is copied.
func.func private @callee(tensor<1x2xf64>) -> tensor<1x2xf64>

// CHECK-LABEL: func.func @whole_slice_of_a_strided_slice(
// CHECK:         %[[STRIDED:.+]] = tensor.extract_slice %arg0[0, 0] [1, 2] [3, 1]
// CHECK:         %[[ROW:.+]] = tensor.extract_slice %[[STRIDED]][%arg1, 0] [1, 2] [1, 1]
// CHECK:         %[[COPY:.+]] = linalg.copy ins(%[[ROW]] : tensor<1x2xf64>)
// CHECK:         call @callee(%[[COPY]])
func.func @whole_slice_of_a_strided_slice(%x: tensor<31x2xf64>, %i: index) -> tensor<1x2xf64> {
  %s = tensor.extract_slice %x[0, 0] [1, 2] [3, 1] : tensor<31x2xf64> to tensor<1x2xf64>
  %r = tensor.extract_slice %s[%i, 0] [1, 2] [1, 1] : tensor<1x2xf64> to tensor<1x2xf64>
  %a = call @callee(%r) : (tensor<1x2xf64>) -> tensor<1x2xf64>
  return %a : tensor<1x2xf64>
}

// -----

// A select between a strided slice and another tensor (a kiln.select with
// a scalar predicate; seed 5291 of the random-program campaign) may give
// the call the slice's view: copied. A select of two whole tensors is not.
func.func private @callee(tensor<1x5x4x16xf64>) -> tensor<1x5x4x16xf64>

// CHECK-LABEL: func.func @select_of_a_slice(
// CHECK:         %[[SLICE:.+]] = tensor.extract_slice %arg0[0, 1, 0, 0] [1, 5, 4, 16] [4, 1, 4, 1]
// CHECK:         %[[PICK:.+]] = arith.select %arg2, %[[SLICE]], %arg1
// CHECK:         %[[COPY:.+]] = linalg.copy ins(%[[PICK]] : tensor<1x5x4x16xf64>)
// CHECK:         call @callee(%[[COPY]])
// CHECK:         %[[WHOLE:.+]] = arith.select %arg2, %arg1, %arg1
// CHECK-NOT:     linalg.copy
// CHECK:         call @callee(%[[WHOLE]])
func.func @select_of_a_slice(%x: tensor<1x8x16x16xf64>, %y: tensor<1x5x4x16xf64>, %p: i1) -> (tensor<1x5x4x16xf64>, tensor<1x5x4x16xf64>) {
  %s = tensor.extract_slice %x[0, 1, 0, 0] [1, 5, 4, 16] [4, 1, 4, 1] : tensor<1x8x16x16xf64> to tensor<1x5x4x16xf64>
  %r = arith.select %p, %s, %y : tensor<1x5x4x16xf64>
  %a = call @callee(%r) : (tensor<1x5x4x16xf64>) -> tensor<1x5x4x16xf64>
  %w = arith.select %p, %y, %y : tensor<1x5x4x16xf64>
  %b = call @callee(%w) : (tensor<1x5x4x16xf64>) -> tensor<1x5x4x16xf64>
  return %a, %b : tensor<1x5x4x16xf64>, tensor<1x5x4x16xf64>
}

// -----

// Loop inits: a while loop's strided slice, a counted loop's slice at a
// dynamic offset and a while loop's pick between two tensors on a scalar
// predicate are copied with loop-inits only; an init that is a whole
// tensor is not.
// CHECK-LABEL: func.func @loop_inits(
// CHECK-NOT:     linalg.copy
// CHECK:         return
// LOOPS-LABEL: func.func @loop_inits(
// LOOPS-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[Y:[^:]*]]: tensor<4x4xf32>, %[[I:[^:]*]]: index, %[[P:[^:]*]]: i1
// LOOPS:         %[[S:.*]] = tensor.extract_slice %[[X]][0, 1] [4, 4] [1, 2]
// LOOPS:         %[[SC:.*]] = linalg.copy ins(%[[S]] : tensor<4x4xf32>)
// LOOPS-NEXT:    %[[W:.*]]:2 = scf.while (%{{.*}} = %[[SC]], %{{.*}} = %[[Y]])
// LOOPS:         %[[D:.*]] = tensor.extract_slice %[[X]][0, %[[I]]] [4, 4] [1, 1]
// LOOPS:         %[[DC:.*]] = linalg.copy ins(%[[D]] : tensor<4x4xf32>)
// LOOPS-NEXT:    scf.for {{.*}} iter_args(%{{.*}} = %[[DC]])
// LOOPS:         %[[PICK:.*]] = arith.select %[[P]], %[[Y]], %[[W]]#1 : tensor<4x4xf32>
// LOOPS:         %[[PC:.*]] = linalg.copy ins(%[[PICK]] : tensor<4x4xf32>)
// LOOPS-NEXT:    scf.while (%{{.*}} = %[[PC]])
// LOOPS-NOT:     linalg.copy
// LOOPS:         return
func.func @loop_inits(%x: tensor<4x8xf32>, %y: tensor<4x4xf32>, %i: index, %p: i1, %n: index) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %s = tensor.extract_slice %x[0, 1] [4, 4] [1, 2] : tensor<4x8xf32> to tensor<4x4xf32>
  %w:2 = scf.while (%a = %s, %b = %y) : (tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    scf.condition(%p) %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
  } do {
  ^bb0(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>):
    %c = arith.addf %a, %b : tensor<4x4xf32>
    scf.yield %c, %b : tensor<4x4xf32>, tensor<4x4xf32>
  }
  %d = tensor.extract_slice %x[0, %i] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = scf.for %k = %c0 to %n step %c1 iter_args(%a = %d) -> (tensor<4x4xf32>) {
    %c = arith.addf %a, %a : tensor<4x4xf32>
    scf.yield %c : tensor<4x4xf32>
  }
  %pick = arith.select %p, %y, %w#1 : tensor<4x4xf32>
  %v = scf.while (%a = %pick) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
    scf.condition(%p) %a : tensor<4x4xf32>
  } do {
  ^bb0(%a: tensor<4x4xf32>):
    %c = arith.addf %a, %a : tensor<4x4xf32>
    scf.yield %c : tensor<4x4xf32>
  }
  return %w#0, %f, %v : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
