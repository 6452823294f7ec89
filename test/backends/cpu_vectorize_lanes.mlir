// kiln-cpu-vectorize-lanes tiles a linalg.generic whose innermost loop is
// parallel and short (4 to 16) by one along its other loops and vectorizes
// the tile: vector loads of the lanes, a broadcast for an operand without
// them, the body on vectors, a vector store.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kiln-cpu-vectorize-lanes))' \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kiln-cpu-vectorize-lanes{parallel=false}))' \
// RUN:   | FileCheck %s --check-prefix=SERIAL

// A squeeze-excite scaling on oneDNN's blocked layout [N, C/8, H, W, 8]:
// the activation and the [N, C/8, 8] scale are read as vectors, a value
// of [N, C/8, H, W] broadcast; the exp stays a math op on vectors.
// CHECK-LABEL: func.func @scale(
// CHECK-SAME:    %[[X:[^:]*]]: memref<1x4x14x14x8xf32>, %[[S:[^:]*]]: memref<1x4x8xf32>, %[[P:[^:]*]]: memref<1x4x14x14xf32>, %[[O:[^:]*]]: memref<1x4x14x14x8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         scf.parallel (%[[N:.*]], %[[C:.*]], %[[H:.*]], %[[W:.*]]) = ({{.*}}) to (%c1, %c4, %c14, %c14)
// CHECK:           %[[XV:.*]] = vector.load %{{.*}}[%c0] : memref<8xf32, {{.*}}>, vector<8xf32>
// CHECK:           %[[SV:.*]] = vector.load %{{.*}}[%c0] : memref<8xf32, {{.*}}>, vector<8xf32>
// CHECK:           %[[PS:.*]] = memref.load %{{.*}}[] : memref<f32, strided<[], offset: ?>>
// CHECK:           %[[M:.*]] = arith.mulf %[[XV]], %[[SV]] : vector<8xf32>
// CHECK:           %[[PV:.*]] = vector.broadcast %[[PS]] : f32 to vector<8xf32>
// CHECK:           %[[A:.*]] = arith.addf %[[M]], %[[PV]] : vector<8xf32>
// CHECK:           %[[E:.*]] = math.exp %[[A]] : vector<8xf32>
// CHECK:           vector.store %[[E]], %{{.*}}[%c0] : memref<8xf32, {{.*}}>, vector<8xf32>
// SERIAL-LABEL: func.func @scale(
// SERIAL-NOT:     scf.parallel
// SERIAL-COUNT-4: scf.for
// SERIAL:         vector.store
#x5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#s5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
#p5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @scale(%x: memref<1x4x14x14x8xf32>, %s: memref<1x4x8xf32>, %p: memref<1x4x14x14xf32>, %o: memref<1x4x14x14x8xf32>) {
  linalg.generic {indexing_maps = [#x5, #s5, #p5, #x5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %s, %p : memref<1x4x14x14x8xf32>, memref<1x4x8xf32>, memref<1x4x14x14xf32>) outs(%o : memref<1x4x14x14x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %n = arith.addf %m, %c : f32
    %e = math.exp %n : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A broadcast the fusion left as zeros in the map ([N, C/8, 1, 1, 8]
// read at every position) reads its lanes as one vector too.
// CHECK-LABEL: func.func @unit_dims(
// CHECK:         scf.parallel
// CHECK-COUNT-2:   vector.load
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:           vector.store
#x5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#z5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, 0, d4)>
func.func @unit_dims(%x: memref<1x4x14x14x8xf32>, %s: memref<1x4x1x1x8xf32>, %o: memref<1x4x14x14x8xf32>) {
  linalg.generic {indexing_maps = [#x5, #z5, #x5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : memref<1x4x14x14x8xf32>, memref<1x4x1x1x8xf32>) outs(%o : memref<1x4x14x14x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A global pool over the spatial dims of a blocked activation: the
// parallel dims in an scf.parallel, the reduced ones in scf.for loops,
// the lanes of the sum read, added to and written back as one vector.
// CHECK-LABEL: func.func @pool(
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = ({{.*}}) to (%c1, %c4)
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               %[[XV:.*]] = vector.load %{{.*}} : memref<8xf32, {{.*}}>, vector<8xf32>
// CHECK:               %[[OV:.*]] = vector.load %{{.*}} : memref<8xf32, {{.*}}>, vector<8xf32>
// CHECK:               %[[S:.*]] = arith.addf %[[XV]], %[[OV]] : vector<8xf32>
// CHECK:               vector.store %[[S]]
#x5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#r5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
func.func @pool(%x: memref<1x4x14x14x8xf32>, %o: memref<1x4x8xf32>) {
  linalg.generic {indexing_maps = [#x5, #r5], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x : memref<1x4x14x14x8xf32>) outs(%o : memref<1x4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.addf %out, %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// What stays: an innermost loop of 32 (LLVM vectorizes it) and of 3, one
// that an operand reads across its rows (a transpose), one that is a
// reduction (a sum over the lanes), buffers of i1 (bytes, not the bits of
// an i1 vector) and of bf16 (loaded as integers one by one), and an f64
// erf (a libm call, which upstream would unroll into vector ops after the
// vector dialect is lowered: kiln.random.normal in f64 failed so), and a
// logistic function (its division would become a reciprocal estimate on
// vectors: a GRU's gates of 5 lanes keep the exact division).
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     vector.
// CHECK-COUNT-8: linalg.generic
// CHECK-NOT:     vector.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @stays(%a: memref<100x32xf32>, %b: memref<100x32xf32>, %c: memref<100x3xf32>, %d: memref<8x100xf32>, %e: memref<100x8xf32>, %f: memref<100x8xf32>, %g: memref<100xf32>, %h: memref<100x8xi1>, %k: memref<100x8xbf16>, %l: memref<100x8xf64>, %s: memref<100x5xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s : memref<100x5xf32>) outs(%s : memref<100x5xf32>) {
  ^bb0(%x: f32, %y: f32):
    %one = arith.constant 1.0 : f32
    %minus = arith.negf %x : f32
    %power = math.exp %minus : f32
    %sum = arith.addf %one, %power : f32
    %gate = arith.divf %one, %sum : f32
    linalg.yield %gate : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%l : memref<100x8xf64>) outs(%l : memref<100x8xf64>) {
  ^bb0(%x: f64, %y: f64):
    %n = math.erf %x : f64
    linalg.yield %n : f64
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%h : memref<100x8xi1>) outs(%h : memref<100x8xi1>) {
  ^bb0(%x: i1, %y: i1):
    %true = arith.constant true
    %n = arith.xori %x, %true : i1
    linalg.yield %n : i1
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%k : memref<100x8xbf16>) outs(%k : memref<100x8xbf16>) {
  ^bb0(%x: bf16, %y: bf16):
    %n = arith.negf %x : bf16
    linalg.yield %n : bf16
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : memref<100x32xf32>) outs(%b : memref<100x32xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%c : memref<100x3xf32>) outs(%c : memref<100x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#tr2, #id2], iterator_types = ["parallel", "parallel"]} ins(%d : memref<8x100xf32>) outs(%e : memref<100x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%f : memref<100x8xf32>) outs(%g : memref<100xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.addf %x, %y : f32
    linalg.yield %n : f32
  }
  return
}
