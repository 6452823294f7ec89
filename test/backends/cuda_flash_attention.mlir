// kiln-cuda-flash-attention replaces each call of a function marked
// kiln.cuda_attention by a FlashAttention-style gpu.launch on the call's
// buffers (and of one marked kiln.cuda_attention_grad by two): a few
// threads (lanes) per query row, each holding its share of
// the row's head dims in registers, key and value tiles staged in
// workgroup memory, an online softmax per row, no scores buffer; or,
// for f16 and bf16, the kernels on tensor cores.
// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention="rows-per-block=4 keys-per-tile=3" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention | FileCheck %s --check-prefix=DEFAULT
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention=gradient-atomics=false | FileCheck %s --check-prefix=SPLIT
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention=f32-tensor-cores=true | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention="f32-tensor-cores=true shared-bytes=232448" \
// RUN:   | FileCheck %s --check-prefix=ATOMICS
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention="tune-f32=true shared-bytes=232448" \
// RUN:   | FileCheck %s --check-prefix=TUNE
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-flash-attention="tune-f32=true f32-tensor-cores=true" \
// RUN:   | FileCheck %s --check-prefix=FORCED
// FORCED-NOT: kiln_cuda_tune
// RUN: not kiln-opt %s --split-input-file --kiln-cuda-flash-attention=rows-per-block=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: kiln-cuda-flash-attention: rows-per-block must be in 1..1024 and keys-per-tile at least 1

// Batch 2 x 3 heads (6 entries), head dims 16 and 8: two lanes per row,
// lane g owning dims g, g + 2, ... Four rows per block would be 8
// threads; a shuffle takes a whole warp, so a block is 16 rows of 2 lanes
// (ceil(40 / 16) = 3 per entry, grid x = 18). 7 keys in tiles of 3; a
// mask broadcast over the batch and the keys, and a causal flag. Causal,
// the longest blocks (the last rows) start first across all six entries,
// whose keys and values fit in L2 together: block b takes entry b mod 6
// and row block 2 - b / 6. The leading indices come from the entry (head
// fastest); rows past the end read the last row (39).
// CHECK-LABEL: func.func @causal_masked(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<2x3x40x16xf32>, %[[K:[^:]*]]: memref<2x3x7x16xf32>, %[[V:[^:]*]]: memref<2x3x7x8xf32>, %[[M:[^:]*]]: memref<1x3x40x1xf32>, %[[O:[^:]*]]: memref<2x3x40x8xf32>, %[[L:[^:]*]]: memref<2x3x40xf32>)
// CHECK-NOT:     call
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c18{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}})
// CHECK-SAME:    workgroup(%[[KT:.*]] : memref<3x16xf32, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<3x8xf32, #gpu.address_space<workgroup>>, %[[ST:.*]] : memref<16x3xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT:     private
// Block x is (group, rank, entry in the group), split with 32-bit
// divisions (Delinearize.h).
// CHECK:           %[[BX32:.*]] = arith.index_castui %[[BX]] : index to i32
// CHECK:           %[[INGROUP32:.*]] = arith.remui %[[BX32]], %c6_i32
// CHECK:           %[[INGROUP:.*]] = arith.index_castui %[[INGROUP32]] : i32 to index
// CHECK:           %[[REST:.*]] = arith.divui %[[BX32]], %c6_i32
// CHECK:           %[[RANK32:.*]] = arith.remui %[[REST]], %c3_i32{{[_0-9]*}}
// CHECK:           %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
// CHECK:           %[[GROUP32:.*]] = arith.divui %[[REST]], %c3_i32{{[_0-9]*}}
// CHECK:           %[[GROUP:.*]] = arith.index_castui %[[GROUP32]] : i32 to index
// CHECK:           %[[FIRSTENTRY:.*]] = arith.muli %[[GROUP]], %c6
// CHECK:           %[[BY:.*]] = arith.addi %[[FIRSTENTRY]], %[[INGROUP]]
// CHECK:           %[[BLOCK:.*]] = arith.subi %c2{{[_0-9]*}}, %[[RANK]]
// CHECK:           %[[LANE:.*]] = arith.remui %[[TX]], %c2
// CHECK:           %[[LOCAL:.*]] = arith.divui %[[TX]], %c2
// CHECK:           %[[START:.*]] = arith.muli %[[BLOCK]], %c16
// CHECK:           %[[ROW:.*]] = arith.addi %[[START]], %[[LOCAL]]
// CHECK:           %[[VALID:.*]] = arith.cmpi slt, %[[ROW]], %c40
// CHECK:           %[[READ:.*]] = arith.minsi %[[ROW]], %c39
// CHECK:           %[[BY32:.*]] = arith.index_castui %[[BY]] : index to i32
// CHECK:           %[[HEAD32:.*]] = arith.remui %[[BY32]], %c3_i32{{[_0-9]*}}
// CHECK:           %[[HEAD:.*]] = arith.index_castui %[[HEAD32]] : i32 to index
// CHECK:           %[[ENTRY32:.*]] = arith.divui %[[BY32]], %c3_i32{{[_0-9]*}}
// CHECK:           %[[ENTRY:.*]] = arith.index_castui %[[ENTRY32]] : i32 to index
// CHECK:           %[[D0:.*]] = arith.addi %c0{{[_0-9]*}}, %[[LANE]]
// CHECK:           %[[D1:.*]] = arith.addi %c2{{[_0-9]*}}, %[[LANE]]
// CHECK:           %[[Q0:.*]] = memref.load %[[Q]][%[[ENTRY]], %[[HEAD]], %[[READ]], %[[D0]]]
// CHECK:           %[[SQ0:.*]] = arith.mulf %[[Q0]], %{{.*}} : f32
// CHECK:           %[[Q1:.*]] = memref.load %[[Q]][%[[ENTRY]], %[[HEAD]], %[[READ]], %[[D1]]]
// CHECK:           %[[SQ1:.*]] = arith.mulf %[[Q1]], %{{.*}} : f32
// The causal block's tiles: up to its last row's diagonal.
// CHECK:           %[[END:.*]] = arith.addi %[[START]], %c16
// CHECK:           %[[ROWS:.*]] = arith.minsi %[[END]], %c40
// CHECK:           %[[SEEN:.*]] = arith.minsi %[[ROWS]], %c7
// CHECK:           %[[UP:.*]] = arith.addi %[[SEEN]], %c2
// CHECK:           %[[TILES:.*]] = arith.divui %[[UP]], %c3
// Carried: the maximum, the sum and the lane's four accumulators.
// CHECK:           %[[LOOP:.*]]:6 = scf.for %[[T:.*]] = %c0 to %[[TILES]] step %c1{{.*}} iter_args(%[[MAX:.*]] = %cst, %[[SUM:.*]] = %cst_{{[0-9]+}}, %{{.*}} = %cst_{{[0-9]+}}, %{{.*}} = %cst_{{[0-9]+}}, %{{.*}} = %cst_{{[0-9]+}}, %{{.*}} = %cst_{{[0-9]+}}) -> (f32, f32, f32, f32, f32, f32) {
// CHECK:             scf.for %{{.*}} = %[[TX]] to %c48 step %c32
// CHECK:               memref.load %[[K]][%[[ENTRY]], %[[HEAD]], %{{.*}}, %{{.*}}]
// CHECK:               memref.store %{{.*}}, %[[KT]]
// CHECK:             scf.for %{{.*}} = %[[TX]] to %c24 step %c32
// CHECK:               memref.load %[[V]][%[[ENTRY]], %[[HEAD]], %{{.*}}, %{{.*}}]
// CHECK:               memref.store %{{.*}}, %[[VT]]
// CHECK:             gpu.barrier
// CHECK:             %[[TMAX:.*]] = scf.for %[[J:.*]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{.*}} iter_args(%[[TM:.*]] = %cst) -> (f32) {
// CHECK:               %[[KEY:.*]] = arith.addi %{{.*}}, %[[J]]
// CHECK:               %[[K0:.*]] = memref.load %[[KT]][%[[J]], %[[D0]]]
// CHECK:               %[[P0:.*]] = math.fma %[[SQ0]], %[[K0]], %cst
// CHECK:               memref.load %[[KT]][%[[J]], %[[D1]]]
// CHECK:               math.fma %[[SQ1]], %{{.*}}, %[[P0]]
// CHECK:               %[[OTHER:.*]], %{{.*}} = gpu.shuffle  xor %[[PART:[0-9]+]], %c1_i32, %c32_i32 : f32
// CHECK:               %[[DOT:.*]] = arith.addf %[[PART]], %[[OTHER]]
// CHECK-NOT:           gpu.shuffle
// CHECK:               %[[IN:.*]] = arith.cmpi slt, %[[KEY]], %c7
// CHECK:               %[[MROW:.*]] = arith.minsi %[[ROW]], %c39
// CHECK:               %[[MV:.*]] = memref.load %[[M]][%c0{{[_0-9]*}}, %[[HEAD]], %[[MROW]], %c0{{[_0-9]*}}]
// CHECK:               %[[MASKED:.*]] = arith.addf %[[DOT]], %[[MV]]
// CHECK:               %[[BELOW:.*]] = arith.cmpi sle, %[[KEY]], %[[ROW]]
// CHECK:               %[[OK:.*]] = arith.andi %[[IN]], %[[BELOW]]
// CHECK:               %[[SCORE:.*]] = arith.select %[[OK]], %[[MASKED]], %cst
// CHECK:               %[[TURN:.*]] = arith.remui %[[J]], %c2
// CHECK:               %[[MINE:.*]] = arith.cmpi eq, %[[LANE]], %[[TURN]]
// CHECK:               scf.if %[[MINE]] {
// CHECK:                 memref.store %[[SCORE]], %[[ST]][%[[LOCAL]], %[[J]]]
// CHECK:               arith.maximumf %[[TM]], %[[SCORE]]
// CHECK:             gpu.barrier
// CHECK:             %[[NEW:.*]] = arith.maximumf %[[MAX]], %[[TMAX]] : f32
// CHECK:             %[[NONE:.*]] = arith.cmpf oeq, %[[NEW]], %cst
// CHECK:             %[[DIFF:.*]] = arith.subf %[[MAX]], %[[NEW]]
// CHECK:             %[[EXP:.*]] = math.exp %[[DIFF]]
// CHECK:             %[[CORR:.*]] = arith.select %[[NONE]], %{{.*}}, %[[EXP]]
// CHECK:             %[[SCALED:.*]] = arith.mulf %[[SUM]], %[[CORR]]
// CHECK:             scf.for %[[J2:.*]] = {{.*}} iter_args(%[[S2:.*]] = %[[SCALED]], {{.*}}) -> (f32, f32, f32, f32, f32)
// CHECK:               %[[SC:.*]] = memref.load %[[ST]][%[[LOCAL]], %[[J2]]]
// CHECK:               math.exp
// CHECK:               %[[W:.*]] = arith.select %[[NONE]]
// CHECK:               arith.addf %[[S2]], %[[W]]
// CHECK:               memref.load %[[VT]][%[[J2]], %[[E0:[0-9]+]]]
// CHECK:               math.fma %[[W]]
// CHECK:             gpu.barrier
// Rows past the end write nothing; lane 0 writes the log-sum-exp.
// CHECK:           scf.if %[[VALID]] {
// CHECK:             %[[EMPTY:.*]] = arith.cmpf oeq, %[[LOOP]]#0, %cst
// CHECK:             arith.divf %[[LOOP]]#2, %[[LOOP]]#1
// CHECK:             arith.select %[[EMPTY]], %cst_{{[0-9]+}}
// CHECK:             memref.store %{{.*}}, %[[O]][%[[ENTRY]], %[[HEAD]], %[[ROW]], %[[E0]]]
// CHECK:             %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:             scf.if %[[FIRST]] {
// CHECK:               math.log %[[LOOP]]#1
// CHECK:               memref.store %{{.*}}, %[[L]][%[[ENTRY]], %[[HEAD]], %[[ROW]]]
// CHECK:           gpu.terminator
// CHECK-NOT:   func.func private @kiln_cuda_attention
// The defaults: 32 rows per block of 2 lanes (grid x = 2 x 6 entries), 64
// keys per tile (64 x (16 + 8 + 32) floats fit in 44 KiB).
// DEFAULT-LABEL: func.func @causal_masked(
// DEFAULT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c12{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c64{{[_0-9]*}},
// DEFAULT-SAME:    workgroup(%{{.*}} : memref<64x16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x8xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x64xf32, #gpu.address_space<workgroup>>)
func.func @causal_masked(%q: memref<2x3x40x16xf32>, %k: memref<2x3x7x16xf32>, %v: memref<2x3x7x8xf32>, %m: memref<1x3x40x1xf32>, %o: memref<2x3x40x8xf32>, %l: memref<2x3x40xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %m, %o, %l) : (memref<2x3x40x16xf32>, memref<2x3x7x16xf32>, memref<2x3x7x8xf32>, memref<1x3x40x1xf32>, memref<2x3x40x8xf32>, memref<2x3x40xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<2x3x40x16xf32>, %k: memref<2x3x7x16xf32>, %v: memref<2x3x7x8xf32>, %m: memref<1x3x40x1xf32>, %o: memref<2x3x40x8xf32>, %l: memref<2x3x40xf32>) attributes {kiln.cuda_attention = {causal = true, scale = 5.000000e-01 : f64}} {
  return
}

// -----

// Query dims 32 and value dims 64 take the register-tiled kernel whatever
// the options: 16 x 16 threads, 64 query rows per block (ceil(70 / 64) =
// 2 per entry of the batch of 2, grid x = 4), key tiles of 64 (ceil(100 / 64)
// = 2, or up to the block's diagonal when causal), workgroup buffers of
// four-float vectors: the scaled query rows (64 x 32 / 4), the keys
// transposed then the weights (64 x 64 / 4), the values (64 x 64 / 4).
// The query rows are staged once, scaled, four dims per vector (64 x 8
// of them); each tile stages kt[d][c] = keys 4c..4c+3 at dim d (32 x 16)
// and the values (64 x 16), sums the 4 x 4 scores over 8 steps of four
// dims, masks them (a key past the 100th or, causal, past the row), folds
// them into the rows' maxima and sums over the row's 16 threads (shuffles
// xor 8, 4, 2, 1), stores the weights over kt and adds p v over 16 steps of
// four keys; four barriers a tile.
// CHECK-LABEL: func.func @tiled(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<2x70x32xf32>, %[[K:[^:]*]]: memref<2x100x32xf32>, %[[V:[^:]*]]: memref<2x100x64xf32>, %[[M:[^:]*]]: memref<1x70x100xf32>, %[[O:[^:]*]]: memref<2x70x64xf32>, %[[L:[^:]*]]: memref<2x70xf32>)
// CHECK-NOT:     call
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}})
// CHECK-SAME:    workgroup(%[[QT:.*]] : memref<64x8xvector<4xf32>, #gpu.address_space<workgroup>>, %[[ST:.*]] : memref<64x16xvector<4xf32>, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<64x16xvector<4xf32>, #gpu.address_space<workgroup>>)
// A causal grid starts with the last row block of both entries (70 rows:
// blocks 1, then 0): block b takes entry b mod 2 and row block 1 - b / 2.
// One leading dim: the entry is its index.
// CHECK:           %[[BX32:.*]] = arith.index_castui %[[BX]] : index to i32
// CHECK:           %[[INGROUP32:.*]] = arith.remui %[[BX32]], %c2_i32
// CHECK:           %[[INGROUP:.*]] = arith.index_castui %[[INGROUP32]] : i32 to index
// CHECK:           %[[REST:.*]] = arith.divui %[[BX32]], %c2_i32
// CHECK:           %[[RANK32:.*]] = arith.remui %[[REST]], %c2_i32{{[_0-9]*}}
// CHECK:           %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
// CHECK:           %[[ENTRY:.*]] = arith.addi %{{.*}}, %[[INGROUP]]
// CHECK:           %[[BLOCK:.*]] = arith.subi %c1{{[_0-9]*}}, %[[RANK]]
// CHECK:           %[[TX:.*]] = arith.remui %[[T]], %c16
// CHECK:           %[[TY:.*]] = arith.divui %[[T]], %c16
// CHECK:           %[[START:.*]] = arith.muli %[[BLOCK]], %c64
// CHECK:           %[[R0:.*]] = arith.addi %[[TY]], %c0
// CHECK:           %[[ROW0:.*]] = arith.addi %[[START]], %[[R0]]
// CHECK:           %[[FIRST:.*]] = arith.muli %[[TX]], %c4
// CHECK:           scf.for %{{.*}} = %[[T]] to %c512 step %c256
// CHECK:             memref.load %[[Q]][%[[ENTRY]], %{{.*}}, %{{.*}}]
// CHECK:             arith.mulf
// CHECK:             llvm.insertelement
// CHECK:             memref.store %{{.*}}, %[[QT]]
// The causal block's tiles: up to its last row's diagonal.
// CHECK:           %[[END:.*]] = arith.addi %[[START]], %c64
// CHECK:           %[[ROWS:.*]] = arith.minsi %[[END]], %c70
// CHECK:           %[[SEEN:.*]] = arith.minsi %[[ROWS]], %c100
// CHECK:           %[[UP:.*]] = arith.addi %[[SEEN]], %c63
// CHECK:           %[[TILES:.*]] = arith.divui %[[UP]], %c64
// Carried: four maxima, four sums, 16 accumulators.
// CHECK:           %[[LOOP:.*]]:24 = scf.for %{{.*}} = %c0 to %[[TILES]] step %c1
// kt[d][c] at column c xor (d mod 16), consecutive threads on
// consecutive dims d.
// CHECK:             scf.for %[[E:.*]] = %[[T]] to %c512{{[_0-9]*}} step %c256
// CHECK:               %[[D:.*]] = arith.remui %[[E]], %c32
// CHECK:               %[[C:.*]] = arith.divui %[[E]], %c32
// CHECK:               memref.load %[[K]][%[[ENTRY]], %{{.*}}, %[[D]]]
// CHECK:               %[[LOW:.*]] = arith.andi %[[D]], %c15
// CHECK:               %[[COL:.*]] = arith.xori %[[C]], %[[LOW]]
// CHECK:               memref.store %{{.*}}, %[[ST]][%[[D]], %[[COL]]]
// CHECK:             scf.for %{{.*}} = %[[T]] to %c1024 step %c256
// CHECK:               memref.load %[[V]][%[[ENTRY]], %{{.*}}, %{{.*}}]
// CHECK:               memref.store %{{.*}}, %[[VT]]
// CHECK:             gpu.barrier
// CHECK:             %[[S:.*]]:16 = scf.for %[[D4:.*]] = %c0{{[_0-9]*}} to %c8{{[_0-9]*}} step
// CHECK:               %[[QV:.*]] = memref.load %[[QT]][%{{.*}}, %[[D4]]]
// CHECK:               %[[D4X4:.*]] = arith.muli %[[D4]], %c4
// CHECK:               %[[DIM:.*]] = arith.addi %[[D4X4]], %c0
// CHECK:               %[[DLOW:.*]] = arith.andi %[[DIM]], %c15
// CHECK:               %[[KCOL:.*]] = arith.xori %[[TX]], %[[DLOW]]
// CHECK:               %[[KV:.*]] = memref.load %[[ST]][%[[DIM]], %[[KCOL]]]
// CHECK:               %[[K0:.*]] = llvm.extractelement %[[KV]]
// CHECK:               %[[Q0:.*]] = llvm.extractelement %[[QV]]
// CHECK:               math.fma %[[Q0]], %[[K0]]
// CHECK:             gpu.barrier
// CHECK:             %[[C0:.*]] = arith.addi %[[FIRST]], %c0
// CHECK:             %[[KEY:.*]] = arith.addi %{{.*}}, %[[C0]]
// CHECK:             %[[IN:.*]] = arith.cmpi slt, %[[KEY]], %c100
// CHECK:             memref.load %[[M]][%c0{{[_0-9]*}}, %{{.*}}, %{{.*}}]
// CHECK:             %[[BELOW:.*]] = arith.cmpi sle, %[[KEY]], %[[ROW0]]
// CHECK:             arith.andi %[[IN]], %[[BELOW]]
// CHECK:             gpu.shuffle  xor %{{.*}}, %c8_i32{{[_0-9]*}}, %c32_i32
// CHECK:             arith.maximumf
// CHECK:             gpu.shuffle  xor %{{.*}}, %c4_i32{{[_0-9]*}}, %c32_i32
// CHECK:             gpu.shuffle  xor %{{.*}}, %c2_i32{{[_0-9]*}}, %c32_i32
// CHECK:             gpu.shuffle  xor %{{.*}}, %c1_i32{{[_0-9]*}}, %c32_i32
// CHECK:             math.exp
// CHECK:             gpu.shuffle  xor %{{.*}}, %c8_i32{{[_0-9]*}}, %c32_i32
// CHECK:             arith.addf
// CHECK:             memref.store %{{.*}}, %[[ST]][%[[R0]], %[[TX]]]
// CHECK:             gpu.barrier
// CHECK:             scf.for %[[C4:.*]] = %c0{{[_0-9]*}} to %c16{{[_0-9]*}} step
// CHECK:               %[[PV:.*]] = memref.load %[[ST]][%{{.*}}, %[[C4]]]
// CHECK:               %[[VV:.*]] = memref.load %[[VT]][%{{.*}}, %[[TX]]]
// CHECK:               %[[V0:.*]] = llvm.extractelement %[[VV]]
// CHECK:               %[[P0:.*]] = llvm.extractelement %[[PV]]
// CHECK:               math.fma %[[P0]], %[[V0]]
// CHECK:             gpu.barrier
// Rows past the end write nothing; the row's first thread writes the
// log-sum-exp.
// CHECK:           %[[VALID:.*]] = arith.cmpi slt, %[[ROW0]], %c70
// CHECK:           scf.if %[[VALID]] {
// CHECK:             arith.divf %[[LOOP]]#8, %[[LOOP]]#4
// CHECK:             memref.store %{{.*}}, %[[O]][%[[ENTRY]], %[[ROW0]], %{{.*}}]
// CHECK:             %[[LEAD:.*]] = arith.cmpi eq, %[[TX]], %c0
// CHECK:             scf.if %[[LEAD]] {
// CHECK:               math.log %[[LOOP]]#4
// CHECK:               memref.store %{{.*}}, %[[L]][%[[ENTRY]], %[[ROW0]]]
// CHECK:           gpu.terminator
// CHECK-NOT:   func.func private @kiln_cuda_attention
// DEFAULT-LABEL: func.func @tiled(
// DEFAULT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c256{{[_0-9]*}},
// With tune-f32, an f32 call the tensor-core kernels take is a tuned call
// site (TunedSites.h): the runtime's rounds, and in each the variant it
// names: 0 the f32 kernels (here the register-tiled forward, no
// products on tensor cores), 1 the 3xTF32 ones; the variants' names for
// the runtime's log in a constant ("f32,3xtf32").
// TUNE:         memref.global "private" constant @[[NAMES:kiln_tuned_site_names[_0-9]*]] : memref<11xi8> = dense<[102, 51, 50, 44, 51, 120, 116, 102, 51, 50, 0]>
// TUNE-LABEL: func.func @tiled(
// TUNE-DAG:       %[[SITE:.*]] = arith.constant 0 : i64
// TUNE-DAG:       %[[TWO:.*]] = arith.constant 2 : i64
// TUNE:           %[[GLOBAL:.*]] = memref.get_global @[[NAMES]]
// TUNE:           %[[ROUNDS:.*]] = call @kiln_cuda_tune_rounds(%[[SITE]], %[[TWO]], %{{.*}}) : (i64, i64, !llvm.ptr) -> i64
// TUNE:           %[[UPPER:.*]] = arith.index_cast %[[ROUNDS]] : i64 to index
// TUNE:           scf.for %[[ROUND:.*]] = %{{.*}} to %[[UPPER]] step %{{.*}} {
// TUNE:             %[[ROUND64:.*]] = arith.index_cast %[[ROUND]] : index to i64
// TUNE:             %[[VARIANT:.*]] = func.call @kiln_cuda_tune_begin(%[[SITE]], %[[ROUND64]]) : (i64, i64) -> i64
// TUNE:             %[[FIRST:.*]] = arith.cmpi eq, %[[VARIANT]], %c0_i64{{[_0-9]*}} : i64
// TUNE:             scf.if %[[FIRST]] {
// TUNE:               gpu.launch
// TUNE-NOT:           llvm.nvvm.mma
// TUNE:             } else {
// TUNE:               gpu.launch
// TUNE:               llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TUNE:             } {kiln.cuda_tuned_variant = 0 : i64}
// TUNE-NEXT:        func.call @kiln_cuda_tune_end(%[[SITE]], %[[ROUND64]]) : (i64, i64) -> ()
// TUNE-NEXT:      } {kiln.cuda_tuned_site = 0 : i64}
// TUNE-NEXT:      return
func.func @tiled(%q: memref<2x70x32xf32>, %k: memref<2x100x32xf32>, %v: memref<2x100x64xf32>, %m: memref<1x70x100xf32>, %o: memref<2x70x64xf32>, %l: memref<2x70xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %m, %o, %l) : (memref<2x70x32xf32>, memref<2x100x32xf32>, memref<2x100x64xf32>, memref<1x70x100xf32>, memref<2x70x64xf32>, memref<2x70xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<2x70x32xf32>, %k: memref<2x100x32xf32>, %v: memref<2x100x64xf32>, %m: memref<1x70x100xf32>, %o: memref<2x70x64xf32>, %l: memref<2x70xf32>) attributes {kiln.cuda_attention = {causal = true, scale = 2.500000e-01 : f64}} {
  return
}

// -----

// The grid: x numbers every block of every batch entry (y and z hold at
// most 65535 blocks, fewer than 70000 entries). Not causal, the blocks go
// entry by entry (block b: entry b / 2, row block b mod 2), so that those
// running together read one entry's keys from L2. Causal, with 6 entries
// of 8192 keys and values of 64 dims (4 MiB each), the groups that fit in
// 16 MiB of L2 are 3 entries (the largest divisor of 6 up to 4): block b
// takes entry 3 (b / 6) + b mod 3 and row block 1 - (b mod 6) / 3.
// CHECK-LABEL: func.func @grid(
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c140000{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}})
// CHECK:           %[[BX32:.*]] = arith.index_castui %[[BX]] : index to i32
// CHECK:           %[[BLOCK32:.*]] = arith.remui %[[BX32]], %c2_i32
// CHECK:           %[[BLOCK:.*]] = arith.index_castui %[[BLOCK32]] : i32 to index
// CHECK:           %[[ENTRY32:.*]] = arith.divui %[[BX32]], %c2_i32
// CHECK:           %[[ENTRY:.*]] = arith.index_castui %[[ENTRY32]] : i32 to index
// CHECK:           arith.muli %[[BLOCK]], %c64
// CHECK:           memref.load %{{.*}}[%[[ENTRY]],
// CHECK:         gpu.launch blocks(%[[BX2:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c12{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}})
// CHECK:           %[[BX2_32:.*]] = arith.index_castui %[[BX2]] : index to i32
// CHECK:           %[[INGROUP32:.*]] = arith.remui %[[BX2_32]], %c3_i32
// CHECK:           %[[INGROUP:.*]] = arith.index_castui %[[INGROUP32]] : i32 to index
// CHECK:           %[[REST:.*]] = arith.divui %[[BX2_32]], %c3_i32
// CHECK:           %[[RANK32:.*]] = arith.remui %[[REST]], %c2_i32
// CHECK:           %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
// CHECK:           %[[GROUP32:.*]] = arith.divui %[[REST]], %c2_i32
// CHECK:           %[[GROUP:.*]] = arith.index_castui %[[GROUP32]] : i32 to index
// CHECK:           %[[FIRST:.*]] = arith.muli %[[GROUP]], %c3
// CHECK:           %[[ENTRY2:.*]] = arith.addi %[[FIRST]], %[[INGROUP]]
// CHECK:           %[[BLOCK2:.*]] = arith.subi %c1{{[_0-9]*}}, %[[RANK]]
// CHECK:           arith.muli %[[BLOCK2]], %c64
// CHECK:           memref.load %{{.*}}[%[[ENTRY2]],
func.func @grid(%q: memref<70000x128x64xf32>, %k: memref<70000x8x64xf32>, %v: memref<70000x8x64xf32>, %o: memref<70000x128x64xf32>, %l: memref<70000x128xf32>,
                %q2: memref<6x128x64xf32>, %k2: memref<6x8192x64xf32>, %v2: memref<6x8192x64xf32>, %o2: memref<6x128x64xf32>, %l2: memref<6x128xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<70000x128x64xf32>, memref<70000x8x64xf32>, memref<70000x8x64xf32>, memref<70000x128x64xf32>, memref<70000x128xf32>) -> ()
  call @kiln_cuda_attention_0(%q2, %k2, %v2, %o2, %l2) : (memref<6x128x64xf32>, memref<6x8192x64xf32>, memref<6x8192x64xf32>, memref<6x128x64xf32>, memref<6x128xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<70000x128x64xf32>, %k: memref<70000x8x64xf32>, %v: memref<70000x8x64xf32>, %o: memref<70000x128x64xf32>, %l: memref<70000x128xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.250000e-01 : f64}} {
  return
}
func.func private @kiln_cuda_attention_0(%q: memref<6x128x64xf32>, %k: memref<6x8192x64xf32>, %v: memref<6x8192x64xf32>, %o: memref<6x128x64xf32>, %l: memref<6x128xf32>) attributes {kiln.cuda_attention = {causal = true, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// Rank 2, no mask, not causal: a fixed number of tiles (ceil(7 / 3)), no
// leading indices; head dims 8 and 4 take one lane per row (no shuffle),
// and the block keeps its 4 rows. Head dims of 2048 take 32 lanes of 64
// dims each; a key tile, a value tile and the scores of 3 keys would
// exceed 44 KiB: the tile shrinks to 11264 / (2048 + 2048 + 4) = 2 keys.
// CHECK-LABEL: func.func @plain(
// CHECK:         gpu.launch
// CHECK-SAME:    threads(%{{.*}}) in (%{{.*}} = %c4{{[_0-9]*}},
// CHECK-SAME:    workgroup(%{{.*}} : memref<3x8xf32, {{.*}}>, %{{.*}} : memref<3x4xf32, {{.*}}>, %{{.*}} : memref<4x3xf32, {{.*}}>)
// CHECK-NOT:       arith.remui %{{.*}}, %c3
// CHECK:           scf.for %{{.*}} = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK-NOT:         arith.cmpi sle
// CHECK-NOT:         gpu.shuffle
// CHECK:         gpu.launch
// CHECK-SAME:    threads(%{{.*}}) in (%{{.*}} = %c128{{[_0-9]*}},
// CHECK-SAME:    workgroup(%{{.*}} : memref<2x2048xf32, {{.*}}>, %{{.*}} : memref<2x2048xf32, {{.*}}>, %{{.*}} : memref<4x2xf32, {{.*}}>)
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK-NOT:       gpu.shuffle
func.func @plain(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<5x4xf32>, %l: memref<5xf32>,
                 %q2: memref<5x2048xf32>, %k2: memref<7x2048xf32>, %v2: memref<7x2048xf32>, %o2: memref<5x2048xf32>, %l2: memref<5xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x8xf32>, memref<7x8xf32>, memref<7x4xf32>, memref<5x4xf32>, memref<5xf32>) -> ()
  call @kiln_cuda_attention_0(%q2, %k2, %v2, %o2, %l2) : (memref<5x2048xf32>, memref<7x2048xf32>, memref<7x2048xf32>, memref<5x2048xf32>, memref<5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %o: memref<5x4xf32>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}
func.func private @kiln_cuda_attention_0(%q: memref<5x2048xf32>, %k: memref<7x2048xf32>, %v: memref<7x2048xf32>, %o: memref<5x2048xf32>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

// Head dims 3000 and 100 share at most 4 lanes (100 = 4 x 25): 750 dims a
// lane, more than the kernel holds in registers; the outlining pass leaves
// such an attention to its composition, so a call of one is an error.
func.func @too_wide(%q: memref<5x3000xf32>, %k: memref<7x3000xf32>, %v: memref<7x100xf32>, %o: memref<5x100xf32>, %l: memref<5xf32>) {
  // expected-error @+1 {{head dims 3000 and 100 leave a thread more than 64 of them; kiln-cuda-outline-attention leaves such attentions to their composition}}
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x3000xf32>, memref<7x3000xf32>, memref<7x100xf32>, memref<5x100xf32>, memref<5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x3000xf32>, %k: memref<7x3000xf32>, %v: memref<7x100xf32>, %o: memref<5x100xf32>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

// The gradient (kiln.cuda_attention_grad: q, k, v, dO, lse, rowsum(dO * O),
// the mask, then dq, dk, dv): two launches on the same geometry. The first
// owns query rows (ceil(40 / 16) blocks per entry, the last first across
// the 6 entries) and walks the key tiles up to the block's diagonal,
// accumulating ds k into dq; the second owns key rows (ceil(7 / 16) blocks
// per entry, the first first), starts at the query tile of its first key, and
// stages query, dO, lse and row-sum tiles, accumulating ds q into dk and
// p dO into dv. Each pair takes two lane sums (the score and dO . v), p is
// exp(s - lse) where seen and 0 elsewhere, and dq and dk leave scaled.
// CHECK-LABEL: func.func @grad(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<2x3x40x16xf32>, %[[K:[^:]*]]: memref<2x3x7x16xf32>, %[[V:[^:]*]]: memref<2x3x7x8xf32>, %[[DO:[^:]*]]: memref<2x3x40x8xf32>, %[[L:[^:]*]]: memref<2x3x40xf32>, %[[D:[^:]*]]: memref<2x3x40xf32>, %[[M:[^:]*]]: memref<1x3x40x1xf32>, %[[DQ:[^:]*]]: memref<2x3x40x16xf32>, %[[DK:[^:]*]]: memref<2x3x7x16xf32>, %[[DV:[^:]*]]: memref<2x3x7x8xf32>)
// CHECK-NOT:     call
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c18{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32{{[_0-9]*}},
// CHECK-SAME:    workgroup(%[[KT:.*]] : memref<3x16xf32, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<3x8xf32, #gpu.address_space<workgroup>>)
// CHECK:           %[[BX32:.*]] = arith.index_castui %[[BX]] : index to i32
// CHECK:           %[[REST:.*]] = arith.divui %[[BX32]], %c6_i32
// CHECK:           %[[RANK32:.*]] = arith.remui %[[REST]], %c3_i32
// CHECK:           %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
// CHECK:           %[[BLOCK:.*]] = arith.subi %c2{{[_0-9]*}}, %[[RANK]]
// CHECK:           %[[START:.*]] = arith.muli %[[BLOCK]], %c16
// CHECK:           %[[ROW:.*]] = arith.addi %[[START]]
// CHECK:           %[[READ:.*]] = arith.minsi %[[ROW]], %c39
// CHECK:           memref.load %[[DO]][%{{.*}}, %{{.*}}, %[[READ]], %{{.*}}]
// CHECK:           %[[LSE:.*]] = memref.load %[[L]][%{{.*}}, %{{.*}}, %[[READ]]]
// CHECK:           %[[DELTA:.*]] = memref.load %[[D]][%{{.*}}, %{{.*}}, %[[READ]]]
// CHECK:           %[[LAST:.*]] = arith.addi %[[START]], %c16
// CHECK:           arith.minsi %[[LAST]], %c40
// CHECK:           %[[TILES:.*]] = arith.divui %{{.*}}, %c3
// CHECK:           %[[DQS:.*]]:8 = scf.for %{{.*}} = %c0{{[_0-9]*}} to %[[TILES]]
// CHECK:             memref.store %{{.*}}, %[[KT]]
// CHECK:             memref.store %{{.*}}, %[[VT]]
// CHECK:             gpu.barrier
// CHECK:             scf.for %[[J:.*]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[ACC:[^ ]*]] = {{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:               %[[K0:.*]] = memref.load %[[KT]][%[[J]], %{{.*}}]
// CHECK:               gpu.shuffle  xor
// CHECK:               arith.cmpi sle, %{{.*}}, %[[ROW]]
// CHECK:               gpu.shuffle  xor
// CHECK:               %[[S:.*]] = arith.subf %{{.*}}, %[[LSE]]
// CHECK:               %[[E:.*]] = math.exp %[[S]]
// CHECK:               %[[P:.*]] = arith.select %{{.*}}, %[[E]], %cst
// CHECK:               %[[DIFF:.*]] = arith.subf %{{.*}}, %[[DELTA]]
// CHECK:               %[[DS:.*]] = arith.mulf %[[P]], %[[DIFF]]
// CHECK:               math.fma %[[DS]], %[[K0]], %[[ACC]]
// CHECK:             gpu.barrier
// CHECK:           scf.if
// CHECK:             %[[SCALED:.*]] = arith.mulf %[[DQS]]#0, %cst
// CHECK:             memref.store %[[SCALED]], %[[DQ]][%{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}]
// CHECK:           gpu.terminator
// CHECK:         gpu.launch blocks(%[[BX2:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c6{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads(%{{.*}}) in (%{{.*}} = %c32{{[_0-9]*}},
// CHECK-SAME:    workgroup(%[[QT:.*]] : memref<3x16xf32, #gpu.address_space<workgroup>>, %[[GT:.*]] : memref<3x8xf32, #gpu.address_space<workgroup>>, %[[LT:.*]] : memref<3xf32, #gpu.address_space<workgroup>>, %[[DT:.*]] : memref<3xf32, #gpu.address_space<workgroup>>)
// CHECK:           %[[BX2_32:.*]] = arith.index_castui %[[BX2]] : index to i32
// CHECK:           %[[REST2:.*]] = arith.divui %[[BX2_32]], %c6_i32
// CHECK:           %[[RANK2_32:.*]] = arith.remui %[[REST2]], %c1_i32
// CHECK:           %[[RANK2:.*]] = arith.index_castui %[[RANK2_32]] : i32 to index
// CHECK:           %[[KSTART:.*]] = arith.muli %[[RANK2]], %c16
// CHECK:           %[[KEY:.*]] = arith.addi %[[KSTART]]
// CHECK:           %[[KREAD:.*]] = arith.minsi %[[KEY]], %c6
// CHECK:           memref.load %[[K]][%{{.*}}, %{{.*}}, %[[KREAD]], %{{.*}}]
// CHECK:           memref.load %[[V]][%{{.*}}, %{{.*}}, %[[KREAD]], %{{.*}}]
// CHECK:           %[[FIRST:.*]] = arith.divui %[[KSTART]], %c3
// CHECK:           %[[SUMS:.*]]:12 = scf.for %{{.*}} = %[[FIRST]] to %c14
// CHECK:             memref.store %{{.*}}, %[[QT]]
// CHECK:             memref.store %{{.*}}, %[[GT]]
// CHECK:             memref.store %{{.*}}, %[[LT]]
// CHECK:             memref.store %{{.*}}, %[[DT]]
// CHECK:             gpu.barrier
// CHECK:             scf.for %[[I:.*]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}}
// CHECK:               gpu.shuffle  xor
// CHECK:               memref.load %[[M]][%c0{{[_0-9]*}}, %{{.*}}, %{{.*}}, %c0{{[_0-9]*}}]
// CHECK:               arith.cmpi sle, %[[KEY]], %{{.*}}
// CHECK:               gpu.shuffle  xor
// CHECK:               memref.load %[[LT]][%[[I]]]
// CHECK:               memref.load %[[DT]][%[[I]]]
// CHECK:               math.exp
// CHECK:             gpu.barrier
// CHECK:           scf.if
// CHECK:             arith.mulf %[[SUMS]]#0, %cst
// CHECK:             memref.store %{{.*}}, %[[DK]][%{{.*}}, %{{.*}}, %[[KEY]], %{{.*}}]
// CHECK:             memref.store %[[SUMS]]#8, %[[DV]][%{{.*}}, %{{.*}}, %[[KEY]], %{{.*}}]
// CHECK:           gpu.terminator
// CHECK-NOT:   func.func private @kiln_cuda_attention_grad
func.func @grad(%q: memref<2x3x40x16xf32>, %k: memref<2x3x7x16xf32>, %v: memref<2x3x7x8xf32>, %do: memref<2x3x40x8xf32>, %l: memref<2x3x40xf32>, %dl: memref<2x3x40xf32>, %m: memref<1x3x40x1xf32>, %dq: memref<2x3x40x16xf32>, %dk: memref<2x3x7x16xf32>, %dv: memref<2x3x7x8xf32>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %dl, %m, %dq, %dk, %dv) : (memref<2x3x40x16xf32>, memref<2x3x7x16xf32>, memref<2x3x7x8xf32>, memref<2x3x40x8xf32>, memref<2x3x40xf32>, memref<2x3x40xf32>, memref<1x3x40x1xf32>, memref<2x3x40x16xf32>, memref<2x3x7x16xf32>, memref<2x3x7x8xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<2x3x40x16xf32>, %k: memref<2x3x7x16xf32>, %v: memref<2x3x7x8xf32>, %do: memref<2x3x40x8xf32>, %l: memref<2x3x40xf32>, %dl: memref<2x3x40xf32>, %m: memref<1x3x40x1xf32>, %dq: memref<2x3x40x16xf32>, %dk: memref<2x3x7x16xf32>, %dv: memref<2x3x7x8xf32>) attributes {kiln.cuda_attention_grad = {causal = true, scale = 5.000000e-01 : f64}} {
  return
}

// -----

// The gradient with head dims 64, by default one register-tiled kernel
// of 16 x 16 threads and three buffers of 64 x 16 vectors after a launch
// that zeroes dq (2 blocks of 64 query rows per entry, grid x = 4, 16
// elements a thread). The kernel's blocks own 64 keys (2 per entry, the
// first, longest, first across both entries: block b takes entry b mod 2
// and key block b / 2), staged once and scaled, and walk the query tiles
// from the one holding the block's first key (2 tiles in all), starting
// at the key block's index modulo the tiles it walks; ten barriers a tile,
// the last two around dq's share, which goes into dq by atomics. The
// kernel asks for two blocks per SM (at most 128 registers a thread); the
// zeroing launch asks for nothing.
// CHECK-LABEL: func.func @tiled_grad(
// CHECK-SAME:    %[[Q:[^:]*]]: memref<2x70x64xf32>, %[[K:[^:]*]]: memref<2x100x64xf32>, %[[V:[^:]*]]: memref<2x100x64xf32>, %[[DO:[^:]*]]: memref<2x70x64xf32>, %[[L:[^:]*]]: memref<2x70xf32>, %[[DL:[^:]*]]: memref<2x70xf32>, %[[M:[^:]*]]: memref<1x70x100xf32>, %[[DQ:[^:]*]]: memref<2x70x64xf32>, %[[DK:[^:]*]]: memref<2x100x64xf32>, %[[DV:[^:]*]]: memref<2x100x64xf32>)
// CHECK-NOT:     call
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c256{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) {
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c4096 step %c256
// CHECK:             memref.store %{{.*}}, %[[DQ]]
// CHECK:           gpu.terminator
// CHECK-NEXT:    }{{$}}
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c256{{[_0-9]*}},
// CHECK-SAME:    workgroup(%{{.*}} : memref<64x16xvector<4xf32>, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x16xvector<4xf32>, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x16xvector<4xf32>, #gpu.address_space<workgroup>>)
// CHECK:           %[[BX32:.*]] = arith.index_castui %[[BX]] : index to i32
// CHECK:           %[[INGROUP:.*]] = arith.remui %[[BX32]], %c2_i32
// CHECK:           %[[REST:.*]] = arith.divui %[[BX32]], %c2_i32
// CHECK:           %[[KEYBLOCK32:.*]] = arith.remui %[[REST]], %c2_i32{{[_0-9]*}}
// CHECK:           %[[KEYBLOCK:.*]] = arith.index_castui %[[KEYBLOCK32]] : i32 to index
// CHECK-NOT:       arith.subi
// CHECK:           memref.load %[[K]]
// CHECK:           arith.mulf
// CHECK:           %[[FIRST:.*]] = arith.divui %{{.*}}, %c64
// CHECK:           %[[STEPS:.*]] = arith.subi %c2{{[_0-9]*}}, %[[FIRST]]
// CHECK:           %[[WALKED:.*]] = arith.maxsi %[[STEPS]], %c1
// CHECK:           %[[ROTATION:.*]] = arith.remui %[[KEYBLOCK]], %[[WALKED]]
// CHECK:           scf.for %[[STEP:.*]] = %c0{{[_0-9]*}} to %[[STEPS]] step
// CHECK:             %[[SHIFTED:.*]] = arith.addi %[[STEP]], %[[ROTATION]]
// CHECK:             %[[TILE:.*]] = arith.remui %[[SHIFTED]], %[[STEPS]]
// CHECK:             arith.addi %[[FIRST]], %[[TILE]]
// CHECK-COUNT-10:    gpu.barrier
// CHECK-NOT:         gpu.barrier
// CHECK:             memref.atomic_rmw addf %{{.*}}, %[[DQ]]
// CHECK-NOT:         gpu.barrier
// CHECK-NOT:         %[[DQ]]
// CHECK:           memref.store %{{.*}}, %[[DK]]
// CHECK:           memref.store %{{.*}}, %[[DV]]
// CHECK:           gpu.terminator
// CHECK-NEXT:    } {kiln.min_blocks_per_sm = 2 : i64}
// CHECK-NOT:     gpu.launch
// CHECK-NOT:   func.func private @kiln_cuda_attention_grad

// With gradient-atomics=false, two kernels. dq: blocks of 64 query rows
// (2 per entry, the last rows first across entries as causal), the rows
// staged once and scaled, lse and rowsum(dO * O) read per row, key tiles
// up to the block's diagonal; six barriers a tile. dk and dv: blocks of 64
// keys (2 per entry), the keys staged once and scaled, query tiles from the one
// holding the block's first key (2 tiles in all), in order; eight
// barriers a tile. No atomics. Both ask for two blocks per SM.
// SPLIT-LABEL: func.func @tiled_grad(
// SPLIT-SAME:    %[[Q:[^:]*]]: memref<2x70x64xf32>, %[[K:[^:]*]]: memref<2x100x64xf32>, %[[V:[^:]*]]: memref<2x100x64xf32>, %[[DO:[^:]*]]: memref<2x70x64xf32>, %[[L:[^:]*]]: memref<2x70xf32>, %[[DL:[^:]*]]: memref<2x70xf32>, %[[M:[^:]*]]: memref<1x70x100xf32>, %[[DQ:[^:]*]]: memref<2x70x64xf32>, %[[DK:[^:]*]]: memref<2x100x64xf32>, %[[DV:[^:]*]]: memref<2x100x64xf32>)
// SPLIT-NOT:     call
// SPLIT:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c256{{[_0-9]*}},
// SPLIT-SAME:    workgroup(%{{.*}} : memref<64x16xvector<4xf32>, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x16xvector<4xf32>, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x16xvector<4xf32>, #gpu.address_space<workgroup>>)
// SPLIT:           %[[BX32:.*]] = arith.index_castui %[[BX]] : index to i32
// SPLIT:           %[[REST:.*]] = arith.divui %[[BX32]], %c2_i32
// SPLIT:           %[[RANK32:.*]] = arith.remui %[[REST]], %c2_i32{{[_0-9]*}}
// SPLIT:           %[[RANK:.*]] = arith.index_castui %[[RANK32]] : i32 to index
// SPLIT:           arith.subi %c1{{[_0-9]*}}, %[[RANK]]
// SPLIT:           memref.load %[[Q]]
// SPLIT:           arith.mulf
// SPLIT:           memref.load %[[L]]
// SPLIT:           memref.load %[[DL]]
// SPLIT:           scf.for
// SPLIT-COUNT-6:     gpu.barrier
// SPLIT-NOT:         gpu.barrier
// SPLIT:           memref.store %{{.*}}, %[[DQ]]
// SPLIT:           gpu.terminator
// SPLIT-NEXT:    } {kiln.min_blocks_per_sm = 2 : i64}
// SPLIT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c256{{[_0-9]*}},
// SPLIT:           memref.load %[[K]]
// SPLIT:           arith.mulf
// SPLIT:           %[[FIRST:.*]] = arith.divui %{{.*}}, %c64
// SPLIT:           %[[STEPS:.*]] = arith.subi %c2{{[_0-9]*}}, %[[FIRST]]
// SPLIT:           scf.for %[[STEP:.*]] = %c0{{[_0-9]*}} to %[[STEPS]] step
// SPLIT-NEXT:        arith.addi %[[FIRST]], %[[STEP]]
// SPLIT-COUNT-8:     gpu.barrier
// SPLIT-NOT:         gpu.barrier
// SPLIT:           memref.store %{{.*}}, %[[DK]]
// SPLIT:           memref.store %{{.*}}, %[[DV]]
// SPLIT:           gpu.terminator
// SPLIT-NEXT:    } {kiln.min_blocks_per_sm = 2 : i64}
// SPLIT-NOT:     atomic_rmw
// SPLIT-NOT:   func.func private @kiln_cuda_attention_grad
// Tuned, the gradient has a variant for each kernel that adds dq with
// atomics: its two kernels, without atomics. Here the register-tiled f32
// gradient and the 3xTF32 one (whose split keys fit twice in sm_90's
// shared memory): "f32,f32-two-kernels,3xtf32,3xtf32-two-kernels".
// TUNE:         memref.global "private" constant @[[NAMES4:kiln_tuned_site_names[_0-9]*]] : memref<46xi8>
// TUNE-LABEL: func.func @tiled_grad(
// TUNE:           call @kiln_cuda_tune_rounds(%{{.*}}, %c4_i64, %{{.*}})
// TUNE:           scf.for
// TUNE:             %[[VARIANT:.*]] = func.call @kiln_cuda_tune_begin
// TUNE:             scf.if %{{.*}} {
// TUNE-NOT:           llvm.nvvm.mma
// TUNE:               memref.atomic_rmw addf
// TUNE-NOT:           llvm.nvvm.mma
// TUNE:             } else {
// TUNE:               %[[SECOND:.*]] = arith.cmpi eq, %[[VARIANT]], %c1_i64{{[_0-9]*}} : i64
// TUNE:               scf.if %[[SECOND]] {
// TUNE-NOT:             memref.atomic_rmw
// TUNE-NOT:             llvm.nvvm.mma
// TUNE:               } else {
// TUNE:                 %[[THIRD:.*]] = arith.cmpi eq, %[[VARIANT]], %c2_i64{{[_0-9]*}} : i64
// TUNE:                 scf.if %[[THIRD]] {
// TUNE:                   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TUNE:                   memref.atomic_rmw addf
// TUNE:                 } else {
// TUNE-NOT:               memref.atomic_rmw
// TUNE:                   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TUNE-NOT:               memref.atomic_rmw
// TUNE:                 } {kiln.cuda_tuned_variant = 2 : i64}
// TUNE-NEXT:          } {kiln.cuda_tuned_variant = 1 : i64}
// TUNE-NEXT:        } {kiln.cuda_tuned_variant = 0 : i64}
// TUNE-NEXT:        func.call @kiln_cuda_tune_end
// TUNE-NEXT:      } {kiln.cuda_tuned_site = 0 : i64}
func.func @tiled_grad(%q: memref<2x70x64xf32>, %k: memref<2x100x64xf32>, %v: memref<2x100x64xf32>, %do: memref<2x70x64xf32>, %l: memref<2x70xf32>, %dl: memref<2x70xf32>, %m: memref<1x70x100xf32>, %dq: memref<2x70x64xf32>, %dk: memref<2x100x64xf32>, %dv: memref<2x100x64xf32>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %dl, %m, %dq, %dk, %dv) : (memref<2x70x64xf32>, memref<2x100x64xf32>, memref<2x100x64xf32>, memref<2x70x64xf32>, memref<2x70xf32>, memref<2x70xf32>, memref<1x70x100xf32>, memref<2x70x64xf32>, memref<2x100x64xf32>, memref<2x100x64xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<2x70x64xf32>, %k: memref<2x100x64xf32>, %v: memref<2x100x64xf32>, %do: memref<2x70x64xf32>, %l: memref<2x70xf32>, %dl: memref<2x70xf32>, %m: memref<1x70x100xf32>, %dq: memref<2x70x64xf32>, %dk: memref<2x100x64xf32>, %dv: memref<2x100x64xf32>) attributes {kiln.cuda_attention_grad = {causal = true, scale = 1.250000e-01 : f64}} {
  return
}

// -----

func.func @grad_bad_operands(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %do: memref<5x4xf32>, %l: memref<5xf32>, %dq: memref<5x8xf32>, %dk: memref<7x8xf32>, %dv: memref<7x4xf32>) {
  // expected-error @+1 {{expected a call on static f32, f16 or bf16 buffers: query, key, value, the result's cotangent, lse, rowsum(cotangent * result), the mask if any, then the query, key and value gradient buffers}}
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %dq, %dk, %dv) : (memref<5x8xf32>, memref<7x8xf32>, memref<7x4xf32>, memref<5x4xf32>, memref<5xf32>, memref<5x8xf32>, memref<7x8xf32>, memref<7x4xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %do: memref<5x4xf32>, %l: memref<5xf32>, %dq: memref<5x8xf32>, %dk: memref<7x8xf32>, %dv: memref<7x4xf32>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.000000e+00 : f64}} {
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
  // expected-error @+1 {{expected a call on static f32, f16 or bf16 buffers: query, key, value, the mask if any, then the result and log-sum-exp buffers}}
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

// -----

// bf16 on tensor cores (whatever the options): blocks of four warps (128
// threads) owning 64 query rows, ceil(70 / 64) = 2 per batch entry; the
// key tile as pairs of head dims and the value tile transposed as pairs of
// keys, 64 x 32 words each. Per tile of 64 keys: the staging, a barrier,
// the scores in 8 x 4 products (64 keys in eights, 64 head dims in
// sixteens), the bf16 mask widened and added, each row's maximum over its
// four lanes (two shuffles for each of a lane's two rows), the weights
// rounded to bf16, then 4 x 8 products for p v (64 keys in sixteens, 64
// value dims in eights), and a barrier. The loop carries two maxima, two
// sums and 32 accumulators; the results are rounded to bf16. A thread
// stages 8 halves of a key row at a time (4 words) and 8 of each of two
// value rows (8 words): where the buffer starts at a 16-byte boundary as
// one load of 16 bytes that says so, elsewhere as a vector.load. The
// launch asks for three blocks per SM.
// CHECK-LABEL: func.func @tensor_cores(
// CHECK-SAME:    %{{.*}}: memref<2x70x64xbf16>, %[[K:[a-z0-9]+]]: memref<2x45x64xbf16>, %[[V:[a-z0-9]+]]: memref<2x45x64xbf16>
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c128{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) workgroup(%[[KT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>)
// CHECK:         %{{.*}}:36 = scf.for
// CHECK:           %[[KP:.*]] = memref.extract_aligned_pointer_as_index %[[K]]
// CHECK:           %[[KM:.*]] = arith.remui %[[KP]], %c16
// CHECK:           %[[KA:.*]] = arith.cmpi eq, %[[KM]], %c0
// CHECK-NEXT:      scf.if %[[KA]] {
// CHECK-NOT:         vector.load
// CHECK:             memref.extract_aligned_pointer_as_index %[[K]]
// CHECK:             llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK-NEXT:        llvm.addrspacecast %{{.*}} : !llvm.ptr to !llvm.ptr<1>
// CHECK-NEXT:        llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK:             vector.bitcast %{{.*}} : vector<8xbf16> to vector<4xi32>
// CHECK-COUNT-4:     memref.store %{{.*}}, %[[KT]]
// CHECK:           } else {
// CHECK-NOT:         llvm.load
// CHECK:             vector.load %[[K]][{{.*}}] : memref<2x45x64xbf16>, vector<8xbf16>
// CHECK-COUNT-4:     memref.store %{{.*}}, %[[KT]]
// CHECK:           }
// CHECK:           %[[VP:.*]] = memref.extract_aligned_pointer_as_index %[[V]]
// CHECK:           %[[VM:.*]] = arith.remui %[[VP]], %c16
// CHECK:           %[[VA:.*]] = arith.cmpi eq, %[[VM]], %c0
// CHECK-NEXT:      scf.if %[[VA]] {
// CHECK-COUNT-2:     llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK:             vector.shuffle %{{.*}}, %{{.*}} [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15] : vector<8xbf16>, vector<8xbf16>
// CHECK:             vector.bitcast %{{.*}} : vector<16xbf16> to vector<8xi32>
// CHECK-COUNT-8:     memref.store %{{.*}}, %[[VT]]
// CHECK:           } else {
// CHECK-NOT:         llvm.load
// CHECK-COUNT-2:     vector.load %[[V]]
// CHECK-COUNT-8:     memref.store %{{.*}}, %[[VT]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.barrier
// CHECK-COUNT-32:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT:       llvm.call_intrinsic
// CHECK-COUNT-4:   gpu.shuffle  xor
// CHECK-NOT:       gpu.shuffle
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK-COUNT-32:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           gpu.barrier
// CHECK-NEXT:      scf.yield
// CHECK:         memref.store %{{.*}}, %{{.*}} : memref<2x70x64xbf16>
// CHECK:         memref.store %{{.*}}, %{{.*}} : memref<2x70xf32>
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         gpu.terminator
// CHECK-NEXT:    } {kiln.min_blocks_per_sm = 3 : i64}
func.func @tensor_cores(%q: memref<2x70x64xbf16>, %k: memref<2x45x64xbf16>, %v: memref<2x45x64xbf16>, %m: memref<1x70x45xbf16>, %o: memref<2x70x64xbf16>, %l: memref<2x70xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %m, %o, %l) : (memref<2x70x64xbf16>, memref<2x45x64xbf16>, memref<2x45x64xbf16>, memref<1x70x45xbf16>, memref<2x70x64xbf16>, memref<2x70xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<2x70x64xbf16>, %k: memref<2x45x64xbf16>, %v: memref<2x45x64xbf16>, %m: memref<1x70x45xbf16>, %o: memref<2x70x64xbf16>, %l: memref<2x70xf32>) attributes {kiln.cuda_attention = {causal = true, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// A head dim of 40 (a multiple of 8, not of the products' 16) on tensor
// cores: the products run over 48 dims, the key tile 64 x 24 words, of
// which a thread's chunks past the 40 columns (column >= 40) read the
// row's last chunk in bounds (min with 32) and store zeros; the query's
// A operands past them are zeros too. Two groups of 64 rows (no mask,
// dims up to 64): per tile 2 x 8 x 3 products for the scores (64 keys in
// eights, 48 dims in sixteens) and 2 x 4 x 5 for p v (64 keys in
// sixteens, 40 value dims in eights).
// DEFAULT-LABEL: func.func @padded_head_dims(
// DEFAULT:         gpu.launch {{.*}} workgroup(%[[KT:.*]] : memref<64x24xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<40x32xi32, #gpu.address_space<workgroup>>)
// DEFAULT:         scf.for %{{.*}} = %{{.*}} to %c384
// DEFAULT:           %[[COLUMN:.*]] = arith.muli %{{.*}}, %c2{{[_0-9]*}} : index
// DEFAULT:           %[[INSIDE:.*]] = arith.cmpi slt, %[[COLUMN]], %c40{{[_0-9]*}} : index
// DEFAULT:           arith.minsi %[[COLUMN]], %c32{{[_0-9]*}} : index
// DEFAULT:           arith.select %[[INSIDE]], %{{.*}}, %cst{{[_0-9]*}} : vector<8xbf16>
// DEFAULT:           memref.store %{{.*}}, %[[KT]]
// DEFAULT:         gpu.barrier
// DEFAULT-COUNT-48: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// DEFAULT-NOT:      llvm.call_intrinsic
// DEFAULT:          arith.truncf %{{.*}} : f32 to bf16
// DEFAULT-COUNT-40: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// DEFAULT-NOT:      llvm.call_intrinsic
// DEFAULT:          gpu.barrier
func.func @padded_head_dims(%q: memref<2x70x40xbf16>, %k: memref<2x45x40xbf16>, %v: memref<2x45x40xbf16>, %o: memref<2x70x40xbf16>, %l: memref<2x70xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<2x70x40xbf16>, memref<2x45x40xbf16>, memref<2x45x40xbf16>, memref<2x70x40xbf16>, memref<2x70xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<2x70x40xbf16>, %k: memref<2x45x40xbf16>, %v: memref<2x45x40xbf16>, %o: memref<2x70x40xbf16>, %l: memref<2x70xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// The gradient at D = 40 and Dv = 24 on tensor cores: s's products run
// over 48 dims and dp's over 32, the rows staged as pairs of dims (the
// key kernel's queries and dO, the query kernel's keys and values) in
// tiles of 24 and 16 words whose chunks past 40 and 24 columns are
// zeros; the tiles transposed as pairs of rows keep 40 and 24 rows. With
// atomics one key kernel (its keys transposed and ds of their own), else
// the key kernel and the query kernel.
// DEFAULT-LABEL: func.func @padded_gradient(
// DEFAULT:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<64x24xi32, {{.*}}>, %{{.*}} : memref<64x16xi32, {{.*}}>, %{{.*}} : memref<40x32xi32, {{.*}}>, %{{.*}} : memref<24x32xi32, {{.*}}>, %{{.*}} : memref<64xf32, {{.*}}>, %{{.*}} : memref<64xf32, {{.*}}>, %{{.*}} : memref<40x32xi32, {{.*}}>, %{{.*}} : memref<64x32xi32, {{.*}}>)
// DEFAULT:           arith.cmpi slt, %{{.*}}, %c40{{[_0-9]*}} : index
// DEFAULT:           arith.cmpi slt, %{{.*}}, %c24{{[_0-9]*}} : index
// SPLIT-LABEL: func.func @padded_gradient(
// SPLIT:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<64x24xi32, {{.*}}>, %{{.*}} : memref<64x16xi32, {{.*}}>, %{{.*}} : memref<40x32xi32, {{.*}}>, %{{.*}} : memref<24x32xi32, {{.*}}>, %{{.*}} : memref<64xf32, {{.*}}>, %{{.*}} : memref<64xf32, {{.*}}>)
// SPLIT:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<64x24xi32, {{.*}}>, %{{.*}} : memref<64x16xi32, {{.*}}>, %{{.*}} : memref<40x32xi32, {{.*}}>)
// SPLIT:           arith.cmpi slt, %{{.*}}, %c40{{[_0-9]*}} : index
// SPLIT:           arith.cmpi slt, %{{.*}}, %c24{{[_0-9]*}} : index
func.func @padded_gradient(%q: memref<2x70x40xbf16>, %k: memref<2x45x40xbf16>, %v: memref<2x45x24xbf16>, %do: memref<2x70x24xbf16>, %l: memref<2x70xf32>, %d: memref<2x70xf32>, %dq: memref<2x70x40xbf16>, %dk: memref<2x45x40xbf16>, %dv: memref<2x45x24xbf16>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<2x70x40xbf16>, memref<2x45x40xbf16>, memref<2x45x24xbf16>, memref<2x70x24xbf16>, memref<2x70xf32>, memref<2x70xf32>, memref<2x70x40xbf16>, memref<2x45x40xbf16>, memref<2x45x24xbf16>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<2x70x40xbf16>, %k: memref<2x45x40xbf16>, %v: memref<2x45x24xbf16>, %do: memref<2x70x24xbf16>, %l: memref<2x70xf32>, %d: memref<2x70xf32>, %dq: memref<2x70x40xbf16>, %dk: memref<2x45x40xbf16>, %dv: memref<2x45x24xbf16>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// f16: the words go to the products as vector<2xf16>; head dims 16 and 8
// make one product per eight keys for the scores and one per sixteen keys
// for p v. Without a mask and with head dims up to 64 each warp owns two
// groups of 16 rows (blocks of 128 rows: one block for 5 queries), and
// each key or value fragment read from the tile feeds both groups'
// products: 2 x 8 for the scores, 2 x 4 for p v. The launch asks for no
// number of blocks per SM.
// CHECK-LABEL: func.func @tensor_cores_f16(
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c128{{[_0-9]*}}, {{.*}} workgroup(%{{.*}} : memref<64x8xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<8x32xi32, #gpu.address_space<workgroup>>)
// CHECK:           gpu.barrier
// CHECK:           memref.extract_aligned_pointer_as_index %[[KT:.*]] : memref<64x8xi32, #gpu.address_space<workgroup>>
// CHECK:           %[[W0:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK:           memref.extract_aligned_pointer_as_index %[[KT]] : memref<64x8xi32, #gpu.address_space<workgroup>>
// CHECK:           llvm.getelementptr %{{.*}}[4] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i32
// CHECK-NEXT:      %[[W1:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK:           llvm.bitcast %[[W0]] : i32 to vector<2xf16>
// CHECK-NEXT:      llvm.bitcast %[[W1]] : i32 to vector<2xf16>
// CHECK-NEXT:      llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK-NOT:       llvm.load
// CHECK:           llvm.bitcast %[[W0]] : i32 to vector<2xf16>
// CHECK-NEXT:      llvm.bitcast %[[W1]] : i32 to vector<2xf16>
// CHECK-NEXT:      llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK-COUNT-14:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           gpu.barrier
// CHECK:         gpu.terminator
// CHECK-NEXT:    }{{$}}

func.func @tensor_cores_f16(%q: memref<5x16xf16>, %k: memref<7x16xf16>, %v: memref<7x8xf16>, %o: memref<5x8xf16>, %l: memref<5xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x16xf16>, memref<7x16xf16>, memref<7x8xf16>, memref<5x8xf16>, memref<5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x16xf16>, %k: memref<7x16xf16>, %v: memref<7x8xf16>, %o: memref<5x8xf16>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 2.500000e-01 : f64}} {
  return
}


// -----

// f32 with f32-tensor-cores: the tensor-core kernel on 3xTF32 products.
// One group of 16 rows per warp (blocks of 64 rows: 2 per batch entry);
// tiles of 32 keys staged split: the keys (32 keys x 64 dims) and the
// values transposed (32 value dims x 32 keys), each word's big TF32 part
// in one tile and its small part in another, a thread staging 4 floats
// of a row at a time (one 16-byte load where aligned) and splitting each
// once. A split rounds the value to TF32 (add half of the 13 dropped
// bits, mask them off) and the rest too, its 13 low bits left for the
// tensor cores to ignore; a value whose big part is infinite is its small
// part alone (big 0, the rest the value itself). The query rows' words are split
// once, before the loop. Per tile: 4 x 8 products for the scores (32 keys
// in eights, 64 head dims in eights), three each (big x small, small x
// big, big x big) on the staged words as read; the f32 mask added; each
// row's maximum over its four lanes; the weights split, not rounded to a
// half type; 4 x 4 triple products for p v (32 keys, 32 value dims in
// eights). The loop carries two maxima, two sums and 16 accumulators; the
// results are stored as f32. The launch asks for no number of blocks per
// SM: at three (168 registers a thread) the mask's reads would spill.
// Without the option the same call is the f32 lanes' kernel.
// TF32-LABEL: func.func @tensor_cores_f32(
// TF32-SAME:    %{{.*}}: memref<2x70x64xf32>, %[[K:[a-z0-9]+]]: memref<2x45x64xf32>, %[[V:[a-z0-9]+]]: memref<2x45x32xf32>
// TF32:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{.*}} = %c128{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}, %{{.*}} = %c1{{[_0-9]*}}) workgroup(%[[KT:.*]] : memref<32x64xi32, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<32x32xi32, #gpu.address_space<workgroup>>, %[[KS:.*]] : memref<32x64xi32, #gpu.address_space<workgroup>>, %[[VS:.*]] : memref<32x32xi32, #gpu.address_space<workgroup>>)
// TF32:         %[[Q:.*]] = memref.load %{{.*}} : memref<2x70x64xf32>
// TF32:         %[[QB:.*]] = arith.bitcast %[[Q]] : f32 to i32
// TF32-NEXT:    %[[QR:.*]] = arith.addi %[[QB]], %c4096_i32
// TF32-NEXT:    %[[QBIG:.*]] = arith.andi %[[QR]], %c-8192_i32
// TF32-NEXT:    %[[INF:.*]] = arith.constant 0x7F800000 : f32
// TF32-NEXT:    %[[QBIGF:.*]] = arith.bitcast %[[QBIG]] : i32 to f32
// TF32-NEXT:    %[[QABS:.*]] = math.absf %[[QBIGF]]
// TF32-NEXT:    %[[QINF:.*]] = arith.cmpf oeq, %[[QABS]], %[[INF]]
// TF32-NEXT:    %c0_i32 = arith.constant 0 : i32
// TF32-NEXT:    %[[QBIG2:.*]] = arith.select %[[QINF]], %c0_i32, %[[QBIG]] : i32
// TF32-NEXT:    %[[QBIGF2:.*]] = arith.bitcast %[[QBIG2]] : i32 to f32
// TF32-NEXT:    %[[QREST:.*]] = arith.subf %[[Q]], %[[QBIGF2]]
// TF32:         %[[QRESTB:.*]] = arith.bitcast %[[QREST]] : f32 to i32
// TF32-NEXT:    arith.addi %[[QRESTB]], %c4096_i32
// TF32:         %{{.*}}:20 = scf.for
// TF32:           scf.if
// TF32:             llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// TF32:             vector.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// TF32:             math.absf
// TF32:             %[[BIG:.*]] = arith.select
// TF32:             arith.subf
// TF32:             %[[SMALL:.*]] = arith.addi
// TF32-NEXT:        memref.store %[[BIG]], %[[KT]]
// TF32-NEXT:        memref.store %[[SMALL]], %[[KS]]
// TF32-COUNT-3:     memref.store %{{.*}}, %[[KS]]
// TF32:           } else {
// TF32:             vector.load %[[K]][{{.*}}] : memref<2x45x64xf32>, vector<4xf32>
// TF32-COUNT-4:     memref.store %{{.*}}, %[[KS]]
// TF32:           }
// TF32:           scf.if
// TF32:             llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// TF32-COUNT-4:     memref.store %{{.*}}, %[[VS]]
// TF32:           } else {
// TF32:             vector.load %[[V]]
// TF32-COUNT-4:     memref.store %{{.*}}, %[[VS]]
// TF32-NEXT:        }
// TF32-NEXT:      }
// TF32-NEXT:      gpu.barrier
// TF32-NOT:       math.absf
// TF32-COUNT-96:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:           memref.load %{{.*}} : memref<1x70x45xf32>
// TF32-COUNT-4:   gpu.shuffle  xor
// TF32-NOT:       arith.truncf
// TF32-NOT:       math.absf
// TF32-COUNT-48:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:           gpu.barrier
// TF32-NEXT:      scf.yield
// TF32:         memref.store %{{.*}}, %{{.*}} : memref<2x70x32xf32>
// TF32:         memref.store %{{.*}}, %{{.*}} : memref<2x70xf32>
// TF32-NOT:     llvm.call_intrinsic
// TF32:         gpu.terminator
// TF32-NEXT:    }{{$}}
// DEFAULT-LABEL: func.func @tensor_cores_f32(
// DEFAULT-NOT:   llvm.call_intrinsic
// DEFAULT:       gpu.terminator
func.func @tensor_cores_f32(%q: memref<2x70x64xf32>, %k: memref<2x45x64xf32>, %v: memref<2x45x32xf32>, %m: memref<1x70x45xf32>, %o: memref<2x70x32xf32>, %l: memref<2x70xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %m, %o, %l) : (memref<2x70x64xf32>, memref<2x45x64xf32>, memref<2x45x32xf32>, memref<1x70x45xf32>, memref<2x70x32xf32>, memref<2x70xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<2x70x64xf32>, %k: memref<2x45x64xf32>, %v: memref<2x45x32xf32>, %m: memref<1x70x45xf32>, %o: memref<2x70x32xf32>, %l: memref<2x70xf32>) attributes {kiln.cuda_attention = {causal = true, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// An f32 forward of head dims over 64 takes tiles of 32 keys (32 x 128
// and 64 x 32 words), and over 96 reads its query rows again per tile,
// after the staging's barrier (kept, they would spill at D = 128): 16 x 4
// triple products for the scores, 4 x 8 for p v. Its gradient takes the
// tensor-core kernels with tiles of 16 rows of the other side (the key
// kernel's four staged tiles 8 + 4 + 8 + 4 KiB, the query kernel's three
// 8 + 4 + 8), no atomics.
// TF32-LABEL: func.func @f32_wide(
// TF32:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<32x128xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>)
// TF32-NOT:     memref.load %{{.*}} : memref<5x128xf32>
// TF32:         scf.for
// TF32:           gpu.barrier
// TF32:           memref.load %{{.*}} : memref<5x128xf32>
// TF32-COUNT-192: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:           gpu.shuffle
// TF32-COUNT-96:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:         gpu.terminator
// TF32-LABEL: func.func @f32_wide_grad(
// TF32:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<16x128xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x16xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x16xi32, #gpu.address_space<workgroup>>
// TF32:           llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       memref.atomic_rmw
// TF32:         gpu.terminator
// TF32:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<16x128xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x16xi32, #gpu.address_space<workgroup>>)
// TF32:           llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       memref.atomic_rmw
// TF32:         gpu.terminator
// TF32-NOT:     gpu.launch
// TF32:         return
func.func @f32_wide(%q: memref<5x128xf32>, %k: memref<7x128xf32>, %v: memref<7x64xf32>, %o: memref<5x64xf32>, %l: memref<5xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x128xf32>, memref<7x128xf32>, memref<7x64xf32>, memref<5x64xf32>, memref<5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x128xf32>, %k: memref<7x128xf32>, %v: memref<7x64xf32>, %o: memref<5x64xf32>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.250000e-01 : f64}} {
  return
}
func.func @f32_wide_grad(%q: memref<5x128xf32>, %k: memref<7x128xf32>, %v: memref<7x64xf32>, %do: memref<5x64xf32>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x128xf32>, %dk: memref<7x128xf32>, %dv: memref<7x64xf32>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<5x128xf32>, memref<7x128xf32>, memref<7x64xf32>, memref<5x64xf32>, memref<5xf32>, memref<5xf32>, memref<5x128xf32>, memref<7x128xf32>, memref<7x64xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<5x128xf32>, %k: memref<7x128xf32>, %v: memref<7x64xf32>, %do: memref<5x64xf32>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x128xf32>, %dk: memref<7x128xf32>, %dv: memref<7x64xf32>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// f32 head dims that are multiples of 8 but not of 16 (D = 40, Dv = 24)
// take the tensor-core kernels too: f32's products have a k of 8, so
// they stop at D and Dv. The tiles staged for s's and dp's products are
// as wide as the half-precision kernels' (mmaHeadDim: 48 and 32 words, so
// that their rows stay swizzled), zeros past the source's columns (a
// clamped read in bounds, then a select). The forward: 5 x 4 triple
// products for the scores (40 dims in eights, 32 keys), 4 x 3 for p v.
// The gradient's key kernel (default shared-bytes: two kernels, no tile
// staged split): s^T 5 x 4, dp^T 3 x 4, dv 4 x 3 and dk 4 x 5 triple
// products per tile; its query kernel s 5 x 4, dp 3 x 4 and dq 4 x 5,
// the keys and values staged split into 2 x 32 rows of 48 and 32 words.
// Without the option both are the f32 lanes' kernels.
// TF32-LABEL: func.func @f32_padded(
// TF32:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<32x48xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<24x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x48xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<24x32xi32, #gpu.address_space<workgroup>>)
// TF32:         scf.for
// TF32:           %[[INSIDE:.*]] = arith.cmpi slt, %{{.*}}, %c40
// TF32-NEXT:      arith.constant 36 : index
// TF32-NEXT:      arith.minsi
// TF32:           %[[READ:.*]] = arith.select %{{.*}} : vector<4xf32>
// TF32-NEXT:      arith.constant dense<0.000000e+00> : vector<4xf32>
// TF32-NEXT:      arith.select %[[INSIDE]], %[[READ]], %{{.*}} : vector<4xf32>
// TF32:           gpu.barrier
// TF32-COUNT-60:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:           gpu.shuffle
// TF32-COUNT-36:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:         gpu.terminator
// TF32-LABEL: func.func @f32_padded_grad(
// TF32:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<32x48xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<40x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<24x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// TF32:           gpu.barrier
// TF32-COUNT-96:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:           arith.subf
// TF32-COUNT-96:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32-NOT:       memref.atomic_rmw
// TF32:         gpu.terminator
// TF32:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<64x48xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<80x32xi32, #gpu.address_space<workgroup>>)
// TF32:           gpu.barrier
// TF32-COUNT-96:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:           arith.subf
// TF32-COUNT-60:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:       llvm.call_intrinsic
// TF32:         gpu.terminator
// TF32-NOT:     gpu.launch
// TF32:         return
// DEFAULT-LABEL: func.func @f32_padded(
// DEFAULT-NOT:   llvm.call_intrinsic
// DEFAULT:       return
// DEFAULT-LABEL: func.func @f32_padded_grad(
// DEFAULT-NOT:   llvm.call_intrinsic
// DEFAULT:       return
func.func @f32_padded(%q: memref<2x70x40xf32>, %k: memref<2x45x40xf32>, %v: memref<2x45x24xf32>, %o: memref<2x70x24xf32>, %l: memref<2x70xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<2x70x40xf32>, memref<2x45x40xf32>, memref<2x45x24xf32>, memref<2x70x24xf32>, memref<2x70xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<2x70x40xf32>, %k: memref<2x45x40xf32>, %v: memref<2x45x24xf32>, %o: memref<2x70x24xf32>, %l: memref<2x70xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.250000e-01 : f64}} {
  return
}
func.func @f32_padded_grad(%q: memref<2x70x40xf32>, %k: memref<2x45x40xf32>, %v: memref<2x45x24xf32>, %do: memref<2x70x24xf32>, %l: memref<2x70xf32>, %d: memref<2x70xf32>, %dq: memref<2x70x40xf32>, %dk: memref<2x45x40xf32>, %dv: memref<2x45x24xf32>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<2x70x40xf32>, memref<2x45x40xf32>, memref<2x45x24xf32>, memref<2x70x24xf32>, memref<2x70xf32>, memref<2x70xf32>, memref<2x70x40xf32>, memref<2x45x40xf32>, memref<2x45x24xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<2x70x40xf32>, %k: memref<2x45x40xf32>, %v: memref<2x45x24xf32>, %do: memref<2x70x24xf32>, %l: memref<2x70xf32>, %d: memref<2x70xf32>, %dq: memref<2x70x40xf32>, %dk: memref<2x45x40xf32>, %dv: memref<2x45x24xf32>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// The f32 gradient under f32-tensor-cores with the default shared-bytes
// (48 KiB, which holds no tile staged split): the tensor-core gradient's
// two kernels on 3xTF32 products (no atomics, whatever gradient-atomics
// says),
// tiles of 32 rows of the other side in f32 words. The key kernel stages
// the query and dO tiles (32 x 64 words each), both transposed (64 x 32,
// the queries of each 8 in the order of the weights' fragments) and their
// lse and rowsum, and per tile computes s^T and dp^T (8 x 4 triple
// products each: 64 dims in eights, 32 queries in eights), then dv += p^T
// dO and dk += ds^T Q (4 x 8 each), its own keys and values read and split
// per tile. The query kernel stages keys and values (32 x 64) and the keys
// transposed, split into TF32 words, each buffer both parts of its tile
// (the small ones a view 2048 words on), and computes s, dp and dq += ds K.
// TF32-LABEL: func.func @f32_grad(
// TF32:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<32x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// TF32:           scf.for
// TF32:             gpu.barrier
// TF32-COUNT-384:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:         llvm.call_intrinsic
// TF32:             gpu.barrier
// TF32-NEXT:        scf.yield
// TF32:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<64x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x32xi32, #gpu.address_space<workgroup>>)
// TF32:           memref.subview %{{.*}}[32, 0] [32, 64] [1, 1] {{.*}} to memref<32x64xi32, strided<[64, 1], offset: 2048>, #gpu.address_space<workgroup>>
// TF32:           scf.for
// TF32:             gpu.barrier
// TF32-COUNT-288:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32-NOT:         llvm.call_intrinsic
// TF32:             gpu.barrier
// TF32-NEXT:        scf.yield
// TF32-NOT:     memref.atomic_rmw
// TF32:         return
// With sm_90's shared memory (shared-bytes, 227 KiB) the f32 gradient is
// one kernel that adds dq with atomics into dq itself, zeroed before and
// scaled in place after. Its split tiles are buffers of twice their rows
// (the small parts' view 2048 words on), its keys staged transposed and
// split (128 x 64), ds in the query tile's buffer. Per tile: s^T and dp^T
// (192 triple products), a barrier before ds is stored over the queries,
// dk and dv (192), a barrier, then dq's share of 32 queries x 64 dims
// over 64 keys, 48 products and their atomics twice (the warps' slabs of
// 16 queries, 32 dims each in two steps).
// ATOMICS-LABEL: func.func @f32_grad(
// ATOMICS:         gpu.launch
// ATOMICS:           memref.store %{{.*}}, %arg6[%{{.*}}, %{{.*}}] : memref<5x64xf32>
// ATOMICS:         gpu.launch {{.*}} workgroup(%[[Q:.*]] : memref<64x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x64xi32, #gpu.address_space<workgroup>>)
// ATOMICS:           memref.subview %[[Q]][32, 0] [32, 64] [1, 1] {{.*}} to memref<32x64xi32, strided<[64, 1], offset: 2048>, #gpu.address_space<workgroup>>
// ATOMICS:           scf.for
// ATOMICS:             gpu.barrier
// ATOMICS-COUNT-192:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// ATOMICS-NOT:         llvm.call_intrinsic
// ATOMICS:             gpu.barrier
// ATOMICS:             llvm.store
// ATOMICS-COUNT-192:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// ATOMICS-NOT:         llvm.call_intrinsic
// ATOMICS:             gpu.barrier
// ATOMICS-COUNT-48:    llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// ATOMICS-NOT:         llvm.call_intrinsic
// ATOMICS:             memref.atomic_rmw addf %{{.*}}, %arg6
// ATOMICS-COUNT-48:    llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// ATOMICS-NOT:         llvm.call_intrinsic
// ATOMICS:             memref.atomic_rmw addf %{{.*}}, %arg6
// ATOMICS:             gpu.barrier
// ATOMICS-NEXT:        scf.yield
// ATOMICS:         gpu.launch
// ATOMICS:           %[[SUM:.*]] = memref.load %arg6
// ATOMICS:           %[[SCALED:.*]] = arith.mulf %[[SUM]]
// ATOMICS:           memref.store %[[SCALED]], %arg6
// ATOMICS-NOT:     gpu.launch
// ATOMICS:         return
func.func @f32_grad(%q: memref<5x64xf32>, %k: memref<7x64xf32>, %v: memref<7x64xf32>, %do: memref<5x64xf32>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x64xf32>, %dk: memref<7x64xf32>, %dv: memref<7x64xf32>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<5x64xf32>, memref<7x64xf32>, memref<7x64xf32>, memref<5x64xf32>, memref<5xf32>, memref<5xf32>, memref<5x64xf32>, memref<7x64xf32>, memref<7x64xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<5x64xf32>, %k: memref<7x64xf32>, %v: memref<7x64xf32>, %do: memref<5x64xf32>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x64xf32>, %dk: memref<7x64xf32>, %dv: memref<7x64xf32>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// At D = 32 ds takes a buffer of its own (64 x 64: its 32 queries' big
// and small parts over the block's 64 keys), after the keys', which the
// next tile writes again only after its first barrier: no barrier before
// ds's store or after dq's share. Per tile 192 triple products for s^T,
// dp^T, dk and dv, 48 for dq's share.
// ATOMICS-LABEL: func.func @f32_grad_32(
// ATOMICS:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x64xi32, #gpu.address_space<workgroup>>)
// ATOMICS:           scf.for
// ATOMICS-COUNT-96:    llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// ATOMICS-NOT:         gpu.barrier
// ATOMICS-COUNT-96:    llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// ATOMICS:             gpu.barrier
// ATOMICS-COUNT-48:    llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// ATOMICS-NOT:         llvm.call_intrinsic
// ATOMICS:             memref.atomic_rmw addf %{{.*}}, %arg6
// ATOMICS-NOT:         gpu.barrier
// ATOMICS:             scf.yield
func.func @f32_grad_32(%q: memref<5x32xf32>, %k: memref<7x32xf32>, %v: memref<7x32xf32>, %do: memref<5x32xf32>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x32xf32>, %dk: memref<7x32xf32>, %dv: memref<7x32xf32>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<5x32xf32>, memref<7x32xf32>, memref<7x32xf32>, memref<5x32xf32>, memref<5xf32>, memref<5xf32>, memref<5x32xf32>, memref<7x32xf32>, memref<7x32xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<5x32xf32>, %k: memref<7x32xf32>, %v: memref<7x32xf32>, %do: memref<5x32xf32>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x32xf32>, %dk: memref<7x32xf32>, %dv: memref<7x32xf32>) attributes {kiln.cuda_attention_grad = {causal = true, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// Head dims over 96 take tiles of 64 keys, as those up to 64 do: rows of
// 64 words for the keys, of 32 for the values transposed; 8 x 8 products
// for the scores (64 keys in eights, 128 dims in sixteens) and 4 x 16 for
// p v. They ask for no number of blocks per SM.
// CHECK-LABEL: func.func @tensor_cores_wide(
// CHECK:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<64x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x32xi32, #gpu.address_space<workgroup>>)
// CHECK:           gpu.barrier
// CHECK-COUNT-64:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           gpu.shuffle
// CHECK-COUNT-64:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           gpu.barrier
// CHECK:         gpu.terminator
// CHECK-NEXT:    }{{$}}
func.func @tensor_cores_wide(%q: memref<40x128xbf16>, %k: memref<75x128xbf16>, %v: memref<75x128xbf16>, %o: memref<40x128xbf16>, %l: memref<40xf32>) {
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<40x128xbf16>, memref<75x128xbf16>, memref<75x128xbf16>, memref<40x128xbf16>, memref<40xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<40x128xbf16>, %k: memref<75x128xbf16>, %v: memref<75x128xbf16>, %o: memref<40x128xbf16>, %l: memref<40xf32>) attributes {kiln.cuda_attention = {causal = true, scale = 8.838834764831845e-02 : f64}} {
  return
}

// -----

func.func @tensor_cores_head_dims(%q: memref<5x8xbf16>, %k: memref<7x8xbf16>, %v: memref<7x4xbf16>, %o: memref<5x4xbf16>, %l: memref<5xf32>) {
  // expected-error @+1 {{the tensor-core kernel takes a head dim and a value dim that are multiples of 8 up to 128, not 8 and 4}}
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x8xbf16>, memref<7x8xbf16>, memref<7x4xbf16>, memref<5x4xbf16>, memref<5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x8xbf16>, %k: memref<7x8xbf16>, %v: memref<7x4xbf16>, %o: memref<5x4xbf16>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

func.func @tensor_cores_mixed(%q: memref<5x16xbf16>, %k: memref<7x16xf16>, %v: memref<7x8xbf16>, %o: memref<5x8xbf16>, %l: memref<5xf32>) {
  // expected-error @+1 {{expected query, key, value and result buffers of one element type and an f32 log-sum-exp buffer}}
  call @kiln_cuda_attention(%q, %k, %v, %o, %l) : (memref<5x16xbf16>, memref<7x16xf16>, memref<7x8xbf16>, memref<5x8xbf16>, memref<5xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention(%q: memref<5x16xbf16>, %k: memref<7x16xf16>, %v: memref<7x8xbf16>, %o: memref<5x8xbf16>, %l: memref<5xf32>) attributes {kiln.cuda_attention = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

func.func @tensor_cores_grad_dims(%q: memref<5x16xbf16>, %k: memref<7x16xbf16>, %v: memref<7x4xbf16>, %do: memref<5x4xbf16>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x16xbf16>, %dk: memref<7x16xbf16>, %dv: memref<7x4xbf16>) {
  // expected-error @+1 {{the tensor-core gradient takes head and value dims that are multiples of 8 up to 128, not 16 and 4}}
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<5x16xbf16>, memref<7x16xbf16>, memref<7x4xbf16>, memref<5x4xbf16>, memref<5xf32>, memref<5xf32>, memref<5x16xbf16>, memref<7x16xbf16>, memref<7x4xbf16>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<5x16xbf16>, %k: memref<7x16xbf16>, %v: memref<7x4xbf16>, %do: memref<5x4xbf16>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x16xbf16>, %dk: memref<7x16xbf16>, %dv: memref<7x4xbf16>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

func.func @tensor_cores_grad_types(%q: memref<5x16xbf16>, %k: memref<7x16xbf16>, %v: memref<7x16xbf16>, %do: memref<5x16xf16>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x16xbf16>, %dk: memref<7x16xbf16>, %dv: memref<7x16xbf16>) {
  // expected-error @+1 {{expected query, key, value, cotangent and gradient buffers of one element type and f32 log-sum-exp and rowsum buffers}}
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<5x16xbf16>, memref<7x16xbf16>, memref<7x16xbf16>, memref<5x16xf16>, memref<5xf32>, memref<5xf32>, memref<5x16xbf16>, memref<7x16xbf16>, memref<7x16xbf16>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<5x16xbf16>, %k: memref<7x16xbf16>, %v: memref<7x16xbf16>, %do: memref<5x16xf16>, %l: memref<5xf32>, %d: memref<5xf32>, %dq: memref<5x16xbf16>, %dk: memref<7x16xbf16>, %dv: memref<7x16xbf16>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

func.func @f32_grad_half_mask(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %do: memref<5x4xf32>, %l: memref<5xf32>, %d: memref<5xf32>, %m: memref<5x7xbf16>, %dq: memref<5x8xf32>, %dk: memref<7x8xf32>, %dv: memref<7x4xf32>) {
  // expected-error @+1 {{operand 6 is 'memref<5x7xbf16>', where the f32 kernels take f32 buffers throughout}}
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %m, %dq, %dk, %dv) : (memref<5x8xf32>, memref<7x8xf32>, memref<7x4xf32>, memref<5x4xf32>, memref<5xf32>, memref<5xf32>, memref<5x7xbf16>, memref<5x8xf32>, memref<7x8xf32>, memref<7x4xf32>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<5x8xf32>, %k: memref<7x8xf32>, %v: memref<7x4xf32>, %do: memref<5x4xf32>, %l: memref<5xf32>, %d: memref<5xf32>, %m: memref<5x7xbf16>, %dq: memref<5x8xf32>, %dk: memref<7x8xf32>, %dv: memref<7x4xf32>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.000000e+00 : f64}} {
  return
}

// -----

// The bf16 gradient on tensor cores, by default one kernel over key rows
// that adds dq with atomics (FlashAttention-2's backward): dq is summed
// in an f32 buffer, zeroed by a launch first and scaled and rounded by
// one last, then freed. The key kernel: blocks of four warps owning 64
// key rows (one per batch entry of 45 keys), the warps' keys and values
// read once as A operands, and the block's keys staged once transposed
// as pairs of rows (64 dims x 32 words). Per tile of 64 queries the
// queries and dO are staged as pairs of dims and transposed as pairs of
// rows (64 x 32 words each) with their lse and rowsum; a barrier, s^T and
// dp^T in 2 x 8 x 4 products (64 queries in eights, 64 dims in sixteens),
// the bf16 mask widened, the weights and ds rounded to bf16; a barrier
// (every warp has read the query tile), ds transposed into the query
// tile's buffer (one shuffle per eight queries swaps the halves of lanes
// g and g + 1); 2 x 4 x 8 products for dk += ds^T q and dv += p^T dO (64
// queries in sixteens, 64 dims in eights), and a barrier. Then dq's
// share: each warp takes 16 of the tile's queries, two fragments of 8
// dims at a time over the block's 64 keys (4 x 2 products), and adds
// them with atomics; a last barrier before the next tile is staged into
// ds's buffer. The loop carries 64 accumulators.
// CHECK-LABEL: func.func @tensor_cores_grad(
// CHECK:         %[[SUM:.*]] = memref.alloc() : memref<2x70x64xf32>
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c36{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{.*}} = %c256{{[_0-9]*}}
// CHECK:           memref.store %{{.*}}, %[[SUM]]
// CHECK:         gpu.terminator
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{.*}} = %c128{{[_0-9]*}}, {{.*}} workgroup(%[[QT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>, %[[GT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>, %[[QTT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>, %[[GTT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %[[KT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>)
// CHECK:           memref.load %{{.*}} : memref<2x45x64xbf16>
// CHECK:           memref.store %{{.*}}, %[[KT]]
// CHECK:         %{{.*}}:64 = scf.for
// CHECK:           memref.store %{{.*}}, %[[QT]]
// CHECK:           memref.store %{{.*}}, %[[GT]]
// CHECK:           memref.store %{{.*}}, %[[QTT]]
// CHECK:           memref.store %{{.*}}, %[[GTT]]
// CHECK:           gpu.barrier
// CHECK-COUNT-64:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:           math.exp
// CHECK:           gpu.barrier
// CHECK-COUNT-8:   gpu.shuffle  xor %{{.*}}, %c4_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : i32
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.store %{{.*}}, %[[QT]]
// CHECK-COUNT-64:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           gpu.barrier
// CHECK-NOT:       gpu.barrier
// CHECK:           memref.extract_aligned_pointer_as_index %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>
// CHECK:           llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.atomic_rmw addf %{{.*}}, %[[SUM]]
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.atomic_rmw addf %{{.*}}, %[[SUM]]
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.atomic_rmw addf %{{.*}}, %[[SUM]]
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.atomic_rmw addf %{{.*}}, %[[SUM]]
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           gpu.barrier
// CHECK-NEXT:      scf.yield
// CHECK:         memref.store %{{.*}}, %{{.*}} : memref<2x45x64xbf16>
// CHECK:         memref.store %{{.*}}, %{{.*}} : memref<2x45x64xbf16>
// CHECK:         gpu.terminator
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c36{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{.*}} = %c256{{[_0-9]*}}
// CHECK:           %[[X:.*]] = memref.load %[[SUM]]
// CHECK:           %[[SCALED:.*]] = arith.mulf %[[X]], %cst{{[_0-9]*}} : f32
// CHECK:           %[[ROUNDED:.*]] = arith.truncf %[[SCALED]] : f32 to bf16
// CHECK:           memref.store %[[ROUNDED]], %{{.*}} : memref<2x70x64xbf16>
// CHECK:         gpu.terminator
// CHECK:         memref.dealloc %[[SUM]]
// CHECK-NOT:   func.func private @kiln_cuda_attention_grad
// With gradient-atomics=false, two launches and nothing atomic. dk and
// dv as above without the keys transposed, ds or dq's share; dq: blocks
// owning 64 query rows, per tile of 64 keys the keys as pairs of dims and
// transposed and the values as pairs of dims, s and dp in 2 x 8 x 4
// products, dq += ds k in 4 x 8; 32 accumulators. No shuffles: each
// lane's rows' lse and rowsum are read, not reduced.
// SPLIT-LABEL: func.func @tensor_cores_grad(
// SPLIT-NOT:     memref.alloc
// SPLIT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{[_0-9]*}}, {{.*}} workgroup(%{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>)
// SPLIT:         %{{.*}}:64 = scf.for
// SPLIT-NOT:       gpu.shuffle
// SPLIT-COUNT-128: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// SPLIT-NOT:       gpu.shuffle
// SPLIT-NOT:       llvm.call_intrinsic
// SPLIT:           gpu.barrier
// SPLIT-NEXT:      scf.yield
// SPLIT:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{[_0-9]*}}, {{.*}} workgroup(%[[KT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>, %[[KTT:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>)
// SPLIT:         %{{.*}}:32 = scf.for
// SPLIT:           gpu.barrier
// SPLIT-COUNT-64:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// SPLIT-NOT:       llvm.call_intrinsic
// SPLIT:           arith.truncf %{{.*}} : f32 to bf16
// SPLIT-COUNT-32:  llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// SPLIT-NOT:       llvm.call_intrinsic
// SPLIT:           gpu.barrier
// SPLIT-NEXT:      scf.yield
// SPLIT:         memref.store %{{.*}}, %{{.*}} : memref<2x70x64xbf16>
// SPLIT-NOT:     gpu.shuffle
// SPLIT-NOT:     memref.atomic_rmw
// SPLIT:         gpu.terminator
// SPLIT-NEXT:    }
// SPLIT-NEXT:    return
func.func @tensor_cores_grad(%q: memref<2x70x64xbf16>, %k: memref<2x45x64xbf16>, %v: memref<2x45x64xbf16>, %do: memref<2x70x64xbf16>, %l: memref<2x70xf32>, %d: memref<2x70xf32>, %m: memref<1x70x45xbf16>, %dq: memref<2x70x64xbf16>, %dk: memref<2x45x64xbf16>, %dv: memref<2x45x64xbf16>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %m, %dq, %dk, %dv) : (memref<2x70x64xbf16>, memref<2x45x64xbf16>, memref<2x45x64xbf16>, memref<2x70x64xbf16>, memref<2x70xf32>, memref<2x70xf32>, memref<1x70x45xbf16>, memref<2x70x64xbf16>, memref<2x45x64xbf16>, memref<2x45x64xbf16>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<2x70x64xbf16>, %k: memref<2x45x64xbf16>, %v: memref<2x45x64xbf16>, %do: memref<2x70x64xbf16>, %l: memref<2x70xf32>, %d: memref<2x70xf32>, %m: memref<1x70x45xbf16>, %dq: memref<2x70x64xbf16>, %dk: memref<2x45x64xbf16>, %dv: memref<2x45x64xbf16>) attributes {kiln.cuda_attention_grad = {causal = true, scale = 1.250000e-01 : f64}} {
  return
}

// -----

// Head dims over 96: the key kernel takes tiles of 16 queries (16 x 64
// words for the rows as pairs of dims, 128 x 8 transposed), and the
// warps' own rows are read again per tile, after the barrier, not kept in
// registers. It adds dq with atomics too: the block's keys transposed
// (128 x 32 words) and ds (16 x 32) have buffers of their own, and the
// four warps share the tile's one slab of 16 queries, 32 dims each, two
// fragments at a time (4 x 2 products, then their atomics), where with
// gradient-atomics=false a second kernel over query rows takes tiles of
// 32 keys (32 x 64 words, 128 x 16 transposed).
// CHECK-LABEL: func.func @tensor_cores_grad_wide(
// CHECK:         memref.alloc() : memref<30x128xf32>
// CHECK:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<16x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x8xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x8xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x32xi32, #gpu.address_space<workgroup>>)
// CHECK-NOT:       memref.load %{{.*}} : memref<40x128xf16>
// CHECK:         scf.for
// CHECK:           gpu.barrier
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.load %{{.*}} : memref<40x128xf16>
// CHECK:           llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK:           gpu.barrier
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.atomic_rmw addf
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.atomic_rmw addf
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           scf.yield
// CHECK-NOT:     memref<32x64xi32, #gpu.address_space<workgroup>>
// CHECK:         return
// SPLIT-LABEL: func.func @tensor_cores_grad_wide(
// SPLIT-NOT:     memref.atomic_rmw
// SPLIT:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<16x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x8xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x8xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>)
// SPLIT:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<32x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x16xi32, #gpu.address_space<workgroup>>)
func.func @tensor_cores_grad_wide(%q: memref<30x128xf16>, %k: memref<40x128xf16>, %v: memref<40x128xf16>, %do: memref<30x128xf16>, %l: memref<30xf32>, %d: memref<30xf32>, %dq: memref<30x128xf16>, %dk: memref<40x128xf16>, %dv: memref<40x128xf16>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<30x128xf16>, memref<40x128xf16>, memref<40x128xf16>, memref<30x128xf16>, memref<30xf32>, memref<30xf32>, memref<30x128xf16>, memref<40x128xf16>, memref<40x128xf16>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<30x128xf16>, %k: memref<40x128xf16>, %v: memref<40x128xf16>, %do: memref<30x128xf16>, %l: memref<30xf32>, %d: memref<30xf32>, %dq: memref<30x128xf16>, %dk: memref<40x128xf16>, %dv: memref<40x128xf16>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 8.838834764831845e-02 : f64}} {
  return
}

// -----

// Head dims 32 (f16): ds has a buffer of its own (64 queries x 32 words),
// beside the block's keys transposed (32 dims x 32 words), so a tile takes
// the two barriers of the kernel without atomics: the next tile writes ds
// only after its first. Each warp adds dq's share of 16 queries, two
// fragments of 8 dims at a time (4 x 2 products each).
// CHECK-LABEL: func.func @tensor_cores_grad_narrow(
// CHECK:         %[[SUM:.*]] = memref.alloc() : memref<3x20x32xf32>
// CHECK:         gpu.launch {{.*}} workgroup(%{{.*}} : memref<64x16xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x16xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %[[KT:.*]] : memref<32x32xi32, #gpu.address_space<workgroup>>, %[[DS:.*]] : memref<64x32xi32, #gpu.address_space<workgroup>>)
// CHECK:           memref.store %{{.*}}, %[[KT]]
// CHECK:         %{{.*}}:32 = scf.for
// CHECK:           gpu.barrier
// CHECK-NOT:       gpu.barrier
// CHECK:           gpu.shuffle  xor
// CHECK-NOT:       gpu.barrier
// CHECK:           memref.store %{{.*}}, %[[DS]]
// CHECK-NOT:       gpu.barrier
// CHECK:           llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK:           gpu.barrier
// CHECK-NOT:       gpu.barrier
// CHECK:           memref.extract_aligned_pointer_as_index %{{.*}} : memref<64x32xi32, #gpu.address_space<workgroup>>
// CHECK:           llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.atomic_rmw addf %{{.*}}, %[[SUM]]
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           memref.atomic_rmw addf %{{.*}}, %[[SUM]]
// CHECK-NOT:       gpu.barrier
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           scf.yield
// CHECK:         memref.dealloc %[[SUM]]
func.func @tensor_cores_grad_narrow(%q: memref<3x20x32xf16>, %k: memref<3x30x32xf16>, %v: memref<3x30x32xf16>, %do: memref<3x20x32xf16>, %l: memref<3x20xf32>, %d: memref<3x20xf32>, %dq: memref<3x20x32xf16>, %dk: memref<3x30x32xf16>, %dv: memref<3x30x32xf16>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<3x20x32xf16>, memref<3x30x32xf16>, memref<3x30x32xf16>, memref<3x20x32xf16>, memref<3x20xf32>, memref<3x20xf32>, memref<3x20x32xf16>, memref<3x30x32xf16>, memref<3x30x32xf16>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<3x20x32xf16>, %k: memref<3x30x32xf16>, %v: memref<3x30x32xf16>, %do: memref<3x20x32xf16>, %l: memref<3x20xf32>, %d: memref<3x20xf32>, %dq: memref<3x20x32xf16>, %dk: memref<3x30x32xf16>, %dv: memref<3x30x32xf16>) attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.767766952966369e-01 : f64}} {
  return
}

// -----

// The causal tensor-core gradient's key kernel groups the batch entries
// whose rows fit a share of L2 together (16 MiB): with atomics an entry's
// blocks read 6144 queries of dO and the query rows (2 bytes a dim), lse
// and rowsum, and add into dq's f32 sums (4 bytes a dim), 3.05 MiB in
// all, so 3 of the 6 entries go together (block b: entry 3 (b / 3) + b
// mod 3); counted at 2 bytes a dim of dq, 2.3 MiB, all 6 would.
// CHECK-LABEL: func.func @tensor_cores_grad_groups(
// CHECK:         gpu.launch blocks
// CHECK:         gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c6{{[_0-9]*}},
// CHECK:           %[[BX32:.*]] = arith.index_castui %[[BX]] : index to i32
// CHECK:           %[[INGROUP32:.*]] = arith.remui %[[BX32]], %c3_i32
// CHECK:           %[[INGROUP:.*]] = arith.index_castui %[[INGROUP32]] : i32 to index
// CHECK:           arith.divui %[[BX32]], %c3_i32
// CHECK:           %[[FIRST:.*]] = arith.muli %{{.*}}, %c3
// CHECK:           arith.addi %[[FIRST]], %[[INGROUP]]
func.func @tensor_cores_grad_groups(%q: memref<6x6144x64xbf16>, %k: memref<6x64x64xbf16>, %v: memref<6x64x64xbf16>, %do: memref<6x6144x64xbf16>, %l: memref<6x6144xf32>, %d: memref<6x6144xf32>, %dq: memref<6x6144x64xbf16>, %dk: memref<6x64x64xbf16>, %dv: memref<6x64x64xbf16>) {
  call @kiln_cuda_attention_grad(%q, %k, %v, %do, %l, %d, %dq, %dk, %dv) : (memref<6x6144x64xbf16>, memref<6x64x64xbf16>, memref<6x64x64xbf16>, memref<6x6144x64xbf16>, memref<6x6144xf32>, memref<6x6144xf32>, memref<6x6144x64xbf16>, memref<6x64x64xbf16>, memref<6x64x64xbf16>) -> ()
  return
}
func.func private @kiln_cuda_attention_grad(%q: memref<6x6144x64xbf16>, %k: memref<6x64x64xbf16>, %v: memref<6x64x64xbf16>, %do: memref<6x6144x64xbf16>, %l: memref<6x6144xf32>, %d: memref<6x6144xf32>, %dq: memref<6x6144x64xbf16>, %dk: memref<6x64x64xbf16>, %dv: memref<6x64x64xbf16>) attributes {kiln.cuda_attention_grad = {causal = true, scale = 1.250000e-01 : f64}} {
  return
}
