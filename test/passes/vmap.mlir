// The kiln-vmap pass: the batched form of a few small programs. Each RUN
// line batches one function; the derived function follows it in the
// module.
//
// RUN: kiln-opt %s --kiln-vmap="function=dense in-axes=0,-1 size=5" | FileCheck %s --check-prefix=ROWS
// RUN: kiln-opt %s --kiln-vmap="function=dense in-axes=-1,0 size=5" | FileCheck %s --check-prefix=COLUMNS
// RUN: kiln-opt %s --kiln-vmap="function=dense size=5" | FileCheck %s --check-prefix=BOTH
// RUN: kiln-opt %s --kiln-vmap="function=dense in-axes=1,-1 out-axes=2 size=5 name=axes" | FileCheck %s --check-prefix=AXES
// RUN: kiln-opt %s --kiln-vmap="function=rows in-axes=-1,0 size=5" | FileCheck %s --check-prefix=GATHER
// RUN: kiln-opt %s --kiln-vmap="function=branch in-axes=0,0,-1 size=4" | FileCheck %s --check-prefix=SELECT
// RUN: kiln-opt %s --kiln-vmap="function=branch in-axes=-1,0,-1 size=4" | FileCheck %s --check-prefix=COND
// RUN: kiln-opt %s --kiln-vmap="function=halve size=3" | FileCheck %s --check-prefix=WHILE
// RUN: kiln-opt %s --kiln-vmap="function=pushes in-axes=0,-1 size=4" | FileCheck %s --check-prefix=STACK
// RUN: kiln-opt %s --kiln-vmap="function=exchanges size=4" | FileCheck %s --check-prefix=COLLECTIVES
// The derived functions compile like any other.
// RUN: kiln-opt %s --kiln-vmap="function=dense in-axes=0,-1 size=5" \
// RUN:   --kiln-vmap="function=branch size=4" --kiln-vmap="function=halve size=3" \
// RUN:   --kiln-vmap="function=pushes in-axes=0,-1 size=4" \
// RUN:   | kiln-compile - -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST

// A batched input against shared weights: one product with 5x the rows.
// ROWS-LABEL: func.func @dense_vmap(
// ROWS-SAME:      %[[X:.*]]: tensor<5x2x3xf32>, %[[W:.*]]: tensor<3x4xf32>) -> tensor<5x2x4xf32>
// ROWS-NEXT:    %[[R:.*]] = kiln.reshape %[[X]] : (tensor<5x2x3xf32>) -> tensor<10x3xf32>
// ROWS-NEXT:    %[[P:.*]] = kiln.matmul %[[R]], %[[W]] : tensor<10x3xf32>, tensor<3x4xf32>
// ROWS-NEXT:    %[[Y:.*]] = kiln.reshape %[[P]] : (tensor<10x4xf32>) -> tensor<5x2x4xf32>
// ROWS-NEXT:    return %[[Y]]

// Shared inputs against batched weights: one product with 5x the columns.
// COLUMNS-LABEL: func.func @dense_vmap(
// COLUMNS-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<5x3x4xf32>)
// COLUMNS:         kiln.transpose %[[W]], permutation = [1, 0, 2]
// COLUMNS:         kiln.matmul %[[X]], %{{.*}} : tensor<2x3xf32>, tensor<3x20xf32>

// Both batched: a batched product.
// BOTH-LABEL: func.func @dense_vmap(
// BOTH-NEXT:    %[[P:.*]] = kiln.matmul %{{.*}}, %{{.*}} : tensor<5x2x3xf32>, tensor<5x3x4xf32>
// BOTH-NEXT:    return %[[P]]

// The batch arrives at dim 1 and leaves at dim 2.
// AXES-LABEL: func.func @axes(
// AXES-SAME:      %[[X:.*]]: tensor<2x5x3xf32>, %{{.*}}: tensor<3x4xf32>) -> tensor<2x4x5xf32>
// AXES-NEXT:    kiln.transpose %[[X]], permutation = [1, 0, 2] : tensor<2x5x3xf32>
// AXES:         %[[Y:.*]] = kiln.transpose %{{.*}}, permutation = [1, 2, 0] : tensor<5x2x4xf32>
// AXES-NEXT:    return %[[Y]]
func.func @dense(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = kiln.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
  return %0 : tensor<2x4xf32>
}

// A per-lane row index: the clamped rows read with one gather.
// GATHER-LABEL: func.func @rows_vmap(
// GATHER-SAME:      %[[T:.*]]: tensor<6x4xf32>, %[[I:.*]]: tensor<5xi64>) -> tensor<5x2x4xf32>
// GATHER:         %[[LO:.*]] = kiln.max %[[I]], %{{.*}} : tensor<5xi64>
// GATHER:         %[[S:.*]] = kiln.min %[[LO]], %{{.*}} : tensor<5xi64>
// GATHER:         %[[READ:.*]] = kiln.add %{{.*}}, %{{.*}} : tensor<5x2xi64>
// GATHER-NEXT:    kiln.gather %[[T]], %[[READ]] : tensor<6x4xf32>, tensor<5x2xi64>
func.func @rows(%t: tensor<6x4xf32>, %i: tensor<i64>) -> tensor<2x4xf32> {
  %0 = kiln.dynamic_slice %t[%i], size = 2 : tensor<6x4xf32>
  return %0 : tensor<2x4xf32>
}

// A batched predicate: both branches run, and each lane selects.
// SELECT-LABEL: func.func @branch_vmap(
// SELECT-SAME:      %[[P:.*]]: tensor<4xi1>, %[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3xf32>)
// SELECT-NOT:     kiln.cond
// SELECT:         %[[E:.*]] = kiln.exp %[[X]] : tensor<4x3xf32>
// SELECT:         %[[M:.*]] = kiln.broadcast_in_dim %[[P]], dims = [0] : (tensor<4xi1>) -> tensor<4x3xi1>
// SELECT-NEXT:    kiln.select %[[M]], %[[E]], %{{.*}} : tensor<4x3xi1>, tensor<4x3xf32>
// A shared predicate: one cond, its branches batched.
// COND-LABEL: func.func @branch_vmap(
// COND-SAME:      %[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3xf32>)
// COND:         kiln.cond %[[P]], (%[[X]], %[[W]]) : tensor<i1>, (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// COND:           kiln.exp %{{.*}} : tensor<4x3xf32>
// COND:         } else {
// COND:           kiln.broadcast_in_dim %{{.*}}, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
func.func @branch(%p: tensor<i1>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %r = kiln.cond %p, (%x, %w) : tensor<i1>, (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %e = kiln.exp %a : tensor<3xf32>
    kiln.yield %e : tensor<3xf32>
  } else {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    kiln.yield %b : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// A per-lane trip count: the loop goes on while any lane does, and a lane
// whose predicate fails keeps its value; the body recomputes each lane's
// predicate, not the any-lane reduction.
// WHILE-LABEL: func.func @halve_vmap(
// WHILE-SAME:      %[[X:.*]]: tensor<3xf32>)
// WHILE:         kiln.while(%[[X]]) : (tensor<3xf32>) cond {
// WHILE:           %[[LANES:.*]] = kiln.compare gt, %{{.*}}, %{{.*}} : tensor<3xf32>
// WHILE:           %[[ANY:.*]] = kiln.reduce_max %{{.*}}, dims = [0] : tensor<3xi32>
// WHILE:           %[[GO:.*]] = kiln.compare ne, %[[ANY]], %{{.*}} : tensor<i32>
// WHILE-NEXT:      kiln.yield %[[GO]] : tensor<i1>
// WHILE:         } do {
// WHILE-NEXT:    ^bb0(%[[V:.*]]: tensor<3xf32>):
// WHILE:           %[[ON:.*]] = kiln.compare gt, %[[V]], %{{.*}} : tensor<3xf32>
// WHILE-NOT:       kiln.reduce_max
// WHILE:           %[[N:.*]] = kiln.mul %[[V]], %{{.*}} : tensor<3xf32>
// WHILE-NEXT:      %[[KEPT:.*]] = kiln.select %[[ON]], %[[N]], %[[V]] : tensor<3xi1>, tensor<3xf32>
// WHILE-NEXT:      kiln.yield %[[KEPT]] : tensor<3xf32>
func.func @halve(%x: tensor<f32>) -> tensor<f32> {
  %r = kiln.while (%x) : (tensor<f32>) cond {
  ^bb0(%v: tensor<f32>):
    %one = kiln.constant dense<1.0> : tensor<f32>
    %p = kiln.compare gt, %v, %one : tensor<f32>
    kiln.yield %p : tensor<i1>
  } do {
  ^bb0(%v: tensor<f32>):
    %h = kiln.constant dense<0.5> : tensor<f32>
    %n = kiln.mul %v, %h : tensor<f32>
    kiln.yield %n : tensor<f32>
  }
  return %r : tensor<f32>
}

// A loop that pushes one row per trip and reads them back, as a derived
// while gradient does, with a trip count the same in every lane: the
// batch sits behind the stack's rows, the counter and the capacity stay
// unbatched, and the stack starts empty batched.
// STACK-LABEL: func.func @pushes_vmap(
// STACK-SAME:      %[[X:.*]]: tensor<4x3xf32>, %[[N:.*]]: tensor<i64>) -> tensor<4x3xf32>
// STACK:         %[[S:.*]] = kiln.stack_empty : tensor<?x4x3xf32>
// STACK:         kiln.while(%[[X]], %{{.*}}, %[[N]], %[[S]]) : (tensor<4x3xf32>, tensor<i64>, tensor<i64>, tensor<?x4x3xf32>) cond {
// STACK:           kiln.stack_reserve %{{.*}}, %{{.*}} : tensor<?x4x3xf32>
// STACK:           kiln.stack_push %{{.*}}[%{{.*}}], %{{.*}} : tensor<?x4x3xf32>, tensor<4x3xf32>
// STACK:         kiln.stack_read %{{.*}}[%{{.*}}] : tensor<?x4x3xf32> -> tensor<4x3xf32>
func.func @pushes(%x: tensor<3xf32>, %n: tensor<i64>) -> tensor<3xf32> {
  %s0 = kiln.stack_empty : tensor<?x3xf32>
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:4 = kiln.while (%x, %zero, %n, %s0) : (tensor<3xf32>, tensor<i64>, tensor<i64>, tensor<?x3xf32>) cond {
  ^bb0(%h: tensor<3xf32>, %k: tensor<i64>, %m: tensor<i64>, %s: tensor<?x3xf32>):
    %c = kiln.compare lt, %k, %m : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<3xf32>, %k: tensor<i64>, %m: tensor<i64>, %s: tensor<?x3xf32>):
    %one = kiln.constant dense<1> : tensor<i64>
    %k1 = kiln.add %k, %one : tensor<i64>
    %g = kiln.stack_reserve %s, %k1 : tensor<?x3xf32>
    %p = kiln.stack_push %g[%k], %h : tensor<?x3xf32>, tensor<3xf32>
    %t = kiln.tanh %h : tensor<3xf32>
    kiln.yield %t, %k1, %m, %p : tensor<3xf32>, tensor<i64>, tensor<i64>, tensor<?x3xf32>
  }
  %first = kiln.stack_read %r#3[%zero] : tensor<?x3xf32> -> tensor<3xf32>
  %y = kiln.add %first, %r#0 : tensor<3xf32>
  return %y : tensor<3xf32>
}

// Collectives exchange every lane at once; a dim they split or join moves
// up past the batch.
// COLLECTIVES-LABEL: func.func @exchanges_vmap(
// COLLECTIVES-SAME:      %[[X:.*]]: tensor<4x2x6xf32>)
// COLLECTIVES:         kiln.all_reduce %[[X]], kind = sum, groups = {{\[\[}}0, 1]] : tensor<4x2x6xf32>
// COLLECTIVES:         kiln.all_gather %[[X]], dim = 2, groups = {{\[\[}}0, 1]] : (tensor<4x2x6xf32>) -> tensor<4x2x12xf32>
// COLLECTIVES:         kiln.reduce_scatter %[[X]], kind = max, dim = 1, groups = {{\[\[}}0, 1]] : (tensor<4x2x6xf32>) -> tensor<4x1x6xf32>
// COLLECTIVES:         kiln.all_to_all %[[X]], split_dim = 2, concat_dim = 1, groups = {{\[\[}}0, 1]] : (tensor<4x2x6xf32>) -> tensor<4x4x3xf32>
// COLLECTIVES:         %[[P:.*]] = kiln.all_gather_start %[[X]], dim = 1, groups = {{\[\[}}0, 1]] : (tensor<4x2x6xf32>) -> tensor<4x4x6xf32>
// COLLECTIVES:         kiln.collective_wait %[[P]], %[[X]] : tensor<4x4x6xf32>, tensor<4x2x6xf32>
func.func @exchanges(%x: tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<2x12xf32>, tensor<1x6xf32>, tensor<4x3xf32>, tensor<4x6xf32>) {
  %a = kiln.all_reduce %x, kind = sum, groups = [[0, 1]] : tensor<2x6xf32>
  %g = kiln.all_gather %x, dim = 1, groups = [[0, 1]] : (tensor<2x6xf32>) -> tensor<2x12xf32>
  %r = kiln.reduce_scatter %x, kind = max, dim = 0, groups = [[0, 1]] : (tensor<2x6xf32>) -> tensor<1x6xf32>
  %t = kiln.all_to_all %x, split_dim = 1, concat_dim = 0, groups = [[0, 1]] : (tensor<2x6xf32>) -> tensor<4x3xf32>
  %p = kiln.all_gather_start %x, dim = 0, groups = [[0, 1]] : (tensor<2x6xf32>) -> tensor<4x6xf32>
  %w = kiln.collective_wait %p, %x : tensor<4x6xf32>, tensor<2x6xf32>
  return %a, %g, %r, %t, %w : tensor<2x6xf32>, tensor<2x12xf32>, tensor<1x6xf32>, tensor<4x3xf32>, tensor<4x6xf32>
}

// LIST: dense_vmap(arg0: f32[5,2,3], arg1: f32[3,4]) -> (out0: f32[5,2,4])
// LIST: branch_vmap(arg0: i1[4], arg1: f32[4,3], arg2: f32[4,3]) -> (out0: f32[4,3])
// LIST: halve_vmap(arg0: f32[3]) -> (out0: f32[3])
// LIST: pushes_vmap(arg0: f32[4,3], arg1: i64[]) -> (out0: f32[4,3])
