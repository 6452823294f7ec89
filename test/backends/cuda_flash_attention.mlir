// kiln-cuda-flash-attention replaces each call of a function marked
// kiln.cuda_attention by a FlashAttention-style gpu.launch on the call's
// buffers: one query row per thread, key and value tiles staged in
// workgroup memory, an online softmax per row, no scores buffer.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention="rows-per-block=4 keys-per-tile=3" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention | FileCheck %s --check-prefix=DEFAULT
// RUN: not kiln-opt %s --split-input-file --kiln-cuda-flash-attention=rows-per-block=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: kiln-cuda-flash-attention: rows-per-block must be in 1..1024 and keys-per-tile at least 1

// Batch 2 x 3 heads (grid y = 6), 5 query rows in blocks of 4 (grid x =
// 2), 7 keys in tiles of 3; a mask broadcast over the batch and the keys
// and a causal flag. The leading indices come from grid y (head fastest);
// the query row is scaled once into private memory.
// CHECK-LABEL: func.func @causal_masked(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<2x3x5x8xf32>, %[[K:[^:]*]]: memref<2x3x7x8xf32>, %[[V:[^:]*]]: memref<2x3x7x4xf32>, %[[M:[^:]*]]: memref<1x3x5x1xf32>, %[[O:[^:]*]]: memref<2x3x5x4xf32>, %[[L:[^:]*]]: memref<2x3x5xf32>)
// CHECK-NOT:     call
// CHECK:         gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in (%{{.*}} = %c2{{[_0-9]*}}, %{{.*}} = %c6{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}})
// CHECK-SAME:    workgroup(%[[KT:.*]] : memref<3x8xf32, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<3x4xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:    private(%[[QR:.*]] : memref<8xf32, #gpu.address_space<private>>, %[[ACC:.*]] : memref<4xf32, #gpu.address_space<private>>, %[[S:.*]] : memref<3xf32, #gpu.address_space<private>>)
// CHECK:           %[[START:.*]] = arith.muli %[[BX]], %c4
// CHECK:           %[[ROW:.*]] = arith.addi %[[START]], %[[TX]]
// CHECK:           %[[VALID:.*]] = arith.cmpi slt, %[[ROW]], %c5
// CHECK:           %[[HEAD:.*]] = arith.remui %[[BY]], %c3
// CHECK:           %[[REST:.*]] = arith.divui %[[BY]], %c3
// CHECK:           %[[ENTRY:.*]] = arith.remui %[[REST]], %c2
// CHECK:           scf.if %[[VALID]] {
// CHECK:             memref.load %[[Q]][%[[ENTRY]], %[[HEAD]], %[[ROW]], %{{.*}}]
// CHECK:             arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:             memref.store %{{.*}}, %[[QR]]
// Causal: the block's rows see keys below min(start + 4, 5, 7): that many
// tiles of 3, rounded up.
// CHECK:           %[[END:.*]] = arith.addi %[[START]], %c4
// CHECK:           %[[ROWS:.*]] = arith.minsi %[[END]], %c5
// CHECK:           %[[SEEN:.*]] = arith.minsi %[[ROWS]], %c7
// CHECK:           %[[UP:.*]] = arith.addi %[[SEEN]], %c2
// CHECK:           %[[TILES:.*]] = arith.divui %[[UP]], %c3
// CHECK:           %[[LOOP:.*]]:2 = scf.for %[[T:.*]] = %c0 to %[[TILES]] step %c1{{.*}} iter_args(%[[MAX:.*]] = %cst, %[[SUM:.*]] = %cst_{{[0-9]+}}) -> (f32, f32) {
// CHECK:             scf.for %{{.*}} = %[[TX]] to %c24 step %c4
// CHECK:               memref.load %[[K]][%[[ENTRY]], %[[HEAD]], %{{.*}}, %{{.*}}]
// CHECK:               memref.store %{{.*}}, %[[KT]]
// CHECK:             scf.for %{{.*}} = %[[TX]] to %c12 step %c4
// CHECK:               memref.load %[[V]][%[[ENTRY]], %[[HEAD]], %{{.*}}, %{{.*}}]
// CHECK:               memref.store %{{.*}}, %[[VT]]
// CHECK:             gpu.barrier
// CHECK:             scf.if %[[VALID]] -> (f32, f32) {
// CHECK:               arith.cmpi sle, %{{.*}}, %[[ROW]]
// CHECK:               math.fma
// The mask is read at (0, head, row, 0): it broadcasts over the batch and
// the keys.
// CHECK:               memref.load %[[M]][%c0{{[_0-9]*}}, %[[HEAD]], %[[ROW]], %c0{{[_0-9]*}}]
// CHECK:               memref.store %{{.*}}, %[[S]]
// CHECK:               arith.maximumf
// CHECK:               %[[NEW:.*]] = arith.maximumf %[[MAX]], %{{.*}} : f32
// CHECK:               %[[NONE:.*]] = arith.cmpf oeq, %[[NEW]], %cst
// CHECK:               %[[DIFF:.*]] = arith.subf %[[MAX]], %[[NEW]]
// CHECK:               %[[EXP:.*]] = math.exp %[[DIFF]]
// CHECK:               %[[CORR:.*]] = arith.select %[[NONE]], %{{.*}}, %[[EXP]]
// CHECK:               arith.mulf %{{.*}}, %[[CORR]]
// CHECK:               memref.store %{{.*}}, %[[ACC]]
// CHECK:               %[[SCALED:.*]] = arith.mulf %[[SUM]], %[[CORR]]
// CHECK:               scf.for {{.*}} iter_args(%{{.*}} = %[[SCALED]])
// CHECK:                 math.exp
// CHECK:                 memref.load %[[VT]]
// CHECK:                 math.fma
// CHECK:             gpu.barrier
// out = acc / l, lse = m + log(l); NaN where no finite score was seen.
// CHECK:           scf.if %[[VALID]] {
// CHECK:             %[[EMPTY:.*]] = arith.cmpf oeq, %[[LOOP]]#0, %cst
// CHECK:             arith.divf %{{.*}}, %[[LOOP]]#1
// CHECK:             arith.select %[[EMPTY]], %cst_{{[0-9]+}}
// CHECK:             memref.store %{{.*}}, %[[O]][%[[ENTRY]], %[[HEAD]], %[[ROW]], %{{.*}}]
// CHECK:             math.log %[[LOOP]]#1
// CHECK:             memref.store %{{.*}}, %[[L]][%[[ENTRY]], %[[HEAD]], %[[ROW]]]
// CHECK:           gpu.terminator
// CHECK-NOT:   func.func private @kiln_cuda_attention
// The defaults: 64 rows per block (one block), 32 keys per tile.
// DEFAULT-LABEL: func.func @causal_masked(
// DEFAULT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c6{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c64{{[_0-9]*}},
// DEFAULT-SAME:    workgroup(%{{.*}} : memref<32x8xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x4xf32, #gpu.address_space<workgroup>>)
func.func @causal_masked(%q: memref<2x3x5x8xf32>, %k: memref<2x3x7x8xf32>, %v: memref<2x3x7x4xf32>, %m: memref<1x3x5x1xf32>, %o: memref<2x3x5x4xf32>, %l: memref<2x3x5xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %m, %o, %l) : (memref<2x3x5x8xf32>, memref<2x3x7x8xf32>, memref<2x3x7x4xf32>, memref<1x3x5x1xf32>, memref<2x3x5x4xf32>, memref<2x3x5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<2x3x5x8xf32>, %k: memref<2x3x7x8xf32>, %v: memref<2x3x7x4xf32>, %m: memref<1x3x5x1xf32>, %o: memref<2x3x5x4xf32>, %l: memref<2x3x5xf32>) attributes {kiln.cuda_attention = {causal = true, scale = 5.000000e-01 : f64}} {
  return
}

// -----

// Rank 2, no mask, not causal: a fixed number of tiles (ceil(7 / 3)), no
// leading indices. With head dim 3000 and value dim 100, one key tile and
// one value tile of 3 rows would exceed 32 KiB: the tile shrinks to
// 8192 / 3100 = 2 keys.
// CHECK-LABEL: func.func @plain(
// CHECK:         gpu.launch
// CHECK-SAME:    workgroup(%{{.*}} : memref<3x8xf32, {{.*}}>, %{{.*}} : memref<3x4xf32, {{.*}}>)
// CHECK-NOT:       arith.remui %{{.*}}, %c
// CHECK:           scf.for %{{.*}} = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK-NOT:         arith.cmpi sle
// CHECK:         gpu.launch
// CHECK-SAME:    workgroup(%{{.*}} : memref<2x3000xf32, {{.*}}>, %{{.*}} : memref<2x100xf32, {{.*}}>)
func.func @plain(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<5x4xf32>, %l: memref<5xf32>,
                 %q2: memref<5x3000xf32>, %k2: memref<7x3000xf32>, %v2: memref<7x100xf32>, %o2: memref<5x100xf32>, %l2: memref<5xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x8xf32>, memref<7x8xf32>, memref<7x4xf32>, memref<5x4xf32>, memref<5xf32>) -> ()
  call @kiln_cuda_attention_0(%q2, %k2, %v2, %o2, %l2) : (memref<5x3000xf32>, memref<7x3000xf32>, memref<7x100xf32>, memref<5x100xf32>, memref<5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<5x4xf32>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}
func.func private @kiln_cuda_attention_0(%q: memref<5x3000xf32>, %k: memref<7x3000xf32>, %v: memref<7x100xf32>, %o: memref<5x100xf32>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

// No query rows: nothing to launch.
// CHECK-LABEL: func.func @empty(
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @empty(%q: memref<0x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<0x4xf32>, %l: memref<0xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<0x8xf32>, memref<7x8xf32>, memref<7x4xf32>, memref<0x4xf32>, memref<0xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<0x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<0x4xf32>, %l: memref<0xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

func.func @bad_attribute(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<5x4xf32>, %l: memref<5xf32>) {
  // expected-error @+1 {{'kiln.cuda_attention' must be {scale = f64, causal = bool}}}
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x8xf32>, memref<7x8xf32>, memref<7x4xf32>, memref<5x4xf32>, memref<5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<5x4xf32>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {scale = 1.000000e+00 : f64}} {
  return
}

// -----

func.func @bad_operands(%q: memref<5x8xf64>, %k: memref<7x8xf64>, %v: memref<7x4xf64>, %o: memref<5x4xf64>, %l: memref<5xf64>) {
  // expected-error @+1 {{expected a call on static f32 buffers: query, key, value, the mask if any, then the result and log-sum-exp buffers}}
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x8xf64>, memref<7x8xf64>, memref<7x4xf64>, memref<5x4xf64>, memref<5xf64>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x8xf64>, %k: memref<7x8xf64>, %v: memref<7x4xf64>, %o: memref<5x4xf64>, %l: memref<5xf64>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

func.func @bad_ranks(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<5x4xf32>, %l: memref<5x1xf32>) {
  // expected-error @+1 {{the attention's buffers disagree in rank}}
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x8xf32>, memref<7x8xf32>, memref<7x4xf32>, memref<5x4xf32>, memref<5x1xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<5x4xf32>, %l: memref<5x1xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

