// kiln-cpu-byte-lookups: a lookup of uint8 bytes in a 256-entry byte table
// (kiln-byte-tables' form, bufferized and collapsed to one dim) becomes
// blocks of 64 bytes, each two vpermi2b and a select by the high bit; the
// bytes after the last whole block keep the loop, on subviews.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-byte-lookups | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// 150 bytes: two blocks, and 22 bytes left to the original loop.
// CHECK-LABEL: func.func @lookup(
// CHECK-SAME:      %[[T:.+]]: memref<256xi8>, %[[X:.+]]: memref<150xi8>, %[[Y:.+]]: memref<150xi8>)
// CHECK-DAG:     %[[T0:.+]] = vector.load %[[T]][%{{.+}}] : memref<256xi8>, vector<64xi8>
// CHECK-DAG:     %[[T1:.+]] = vector.load %[[T]][%{{.+}}] : memref<256xi8>, vector<64xi8>
// CHECK-DAG:     %[[T2:.+]] = vector.load %[[T]][%{{.+}}] : memref<256xi8>, vector<64xi8>
// CHECK-DAG:     %[[T3:.+]] = vector.load %[[T]][%{{.+}}] : memref<256xi8>, vector<64xi8>
// CHECK-DAG:     %[[TWO:.+]] = arith.constant 2 : index
// CHECK:         scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%[[TWO]])
// CHECK:           %[[AT:.+]] = arith.muli %[[B]], %{{.+}} : index
// CHECK:           %[[V:.+]] = vector.load %[[X]][%[[AT]]] : memref<150xi8>, vector<64xi8>
// CHECK:           %[[LO:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"(%[[T0]], %[[V]], %[[T1]])
// CHECK:           %[[HI:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"(%[[T2]], %[[V]], %[[T3]])
// CHECK:           %[[NEG:.+]] = arith.cmpi slt, %[[V]], %{{.+}} : vector<64xi8>
// CHECK:           %[[R:.+]] = arith.select %[[NEG]], %[[HI]], %[[LO]] : vector<64xi1>, vector<64xi8>
// CHECK:           vector.store %[[R]], %[[Y]][%[[AT]]] : memref<150xi8>, vector<64xi8>
// CHECK:         %[[XT:.+]] = memref.subview %[[X]][128] [22] [1] : memref<150xi8> to memref<22xi8, strided<[1], offset: 128>>
// CHECK:         %[[YT:.+]] = memref.subview %[[Y]][128] [22] [1] : memref<150xi8> to memref<22xi8, strided<[1], offset: 128>>
// CHECK:         linalg.generic {{.*}} ins(%[[XT]] : {{.+}}) outs(%[[YT]] : {{.+}})
// CHECK:           memref.load %[[T]]
func.func @lookup(%t: memref<256xi8>, %x: memref<150xi8>, %y: memref<150xi8>) {
  %c0 = arith.constant 0 : index
  %c255 = arith.constant 255 : index
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<150xi8>) outs(%y : memref<150xi8>) {
  ^bb0(%in: i8, %out: i8):
    %w = arith.extui %in : i8 to i32
    %i = arith.index_cast %w : i32 to index
    %lo = arith.maxsi %i, %c0 : index
    %hi = arith.minsi %lo, %c255 : index
    %v = memref.load %t[%hi] : memref<256xi8>
    linalg.yield %v : i8
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Whole blocks only (and no clamp): no loop is left.
// CHECK-LABEL: func.func @whole_blocks(
// CHECK:         scf.parallel
// CHECK:           llvm.call_intrinsic
// CHECK-NOT:     linalg.generic
func.func @whole_blocks(%t: memref<256xi8>, %x: memref<128xi8>, %y: memref<128xi8>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<128xi8>) outs(%y : memref<128xi8>) {
  ^bb0(%in: i8, %out: i8):
    %w = arith.extui %in : i8 to i32
    %i = arith.index_cast %w : i32 to index
    %v = memref.load %t[%i] : memref<256xi8>
    linalg.yield %v : i8
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// What stays: a sign-extended byte (an int8 source: its entries are not
// in the bytes' unsigned order), a table of 128 entries, fewer bytes than
// a block, a body that does more than look up, and a clamp to [0, 127],
// which moves the bytes above 127.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT:     llvm.call_intrinsic
func.func @stays(%t: memref<256xi8>, %s: memref<128xi8>, %x: memref<150xi8>, %y: memref<150xi8>, %a: memref<40xi8>, %b: memref<40xi8>) {
  %c0 = arith.constant 0 : index
  %c127 = arith.constant 127 : index
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<150xi8>) outs(%y : memref<150xi8>) {
  ^bb0(%in: i8, %out: i8):
    %w = arith.extsi %in : i8 to i32
    %i = arith.index_cast %w : i32 to index
    %v = memref.load %t[%i] : memref<256xi8>
    linalg.yield %v : i8
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<150xi8>) outs(%y : memref<150xi8>) {
  ^bb0(%in: i8, %out: i8):
    %w = arith.extui %in : i8 to i32
    %i = arith.index_cast %w : i32 to index
    %v = memref.load %s[%i] : memref<128xi8>
    linalg.yield %v : i8
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<40xi8>) outs(%b : memref<40xi8>) {
  ^bb0(%in: i8, %out: i8):
    %w = arith.extui %in : i8 to i32
    %i = arith.index_cast %w : i32 to index
    %v = memref.load %t[%i] : memref<256xi8>
    linalg.yield %v : i8
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<150xi8>) outs(%y : memref<150xi8>) {
  ^bb0(%in: i8, %out: i8):
    %w = arith.extui %in : i8 to i32
    %i = arith.index_cast %w : i32 to index
    %v = memref.load %t[%i] : memref<256xi8>
    %d = arith.addi %v, %in : i8
    linalg.yield %d : i8
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<150xi8>) outs(%y : memref<150xi8>) {
  ^bb0(%in: i8, %out: i8):
    %w = arith.extui %in : i8 to i32
    %i = arith.index_cast %w : i32 to index
    %lo = arith.maxsi %i, %c0 : index
    %hi = arith.minsi %lo, %c127 : index
    %v = memref.load %t[%hi] : memref<256xi8>
    linalg.yield %v : i8
  }
  return
}
