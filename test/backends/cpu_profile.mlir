// kiln-cpu-profile brackets each region of the program's functions (marked
// kiln.profiled) with timing calls and names it after the kiln ops in its
// locations: a oneDNN call, the loop over a batch of them, a fused loop
// nest, a loop over tiles, the loop of a kiln.for, whose body is
// instrumented in turn, a batched bf16 product of oneDNN's matmul
// primitive, the chunks of kiln's packed product, and the kernels in the
// sections of a kiln.concurrent loop.
// Allocations are not regions; functions the lowering added (not marked)
// are left alone. The names go into an
// exported table; the marks call through the runtime's slots.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-profile --verify-diagnostics | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func private @dnnl_sgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32
  func.func private @kiln_dnnl_matmul(!llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64)

  // CHECK-LABEL: func.func @step
  func.func @step(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %p: !llvm.ptr) attributes {kiln.profiled} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %c4 = arith.constant 4 : index
    %c78 = arith.constant 78 : i32
    %m = arith.constant 2 : i64
    %n = arith.constant 3 : i64
    %k = arith.constant 4 : i64
    %one = arith.constant 1.0 : f32
    // CHECK: memref.alloc
    // CHECK-NEXT: %[[R0:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: call @kiln_profile_begin(%[[R0]])
    // CHECK-NEXT: call @dnnl_sgemm
    // CHECK-NEXT: %[[E0:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: call @kiln_profile_end(%[[E0]])
    %t = memref.alloc() : memref<4x8xf32>
    %s = func.call @dnnl_sgemm(%c78, %c78, %m, %n, %k, %one, %p, %k, %p, %n, %one, %p, %n) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32 loc("matmul"("model.mlir":3:8))
    // CHECK: call @kiln_profile_begin(%{{.*}})
    // CHECK-NEXT: linalg.generic
    // CHECK: call @kiln_profile_end(%{{.*}})
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : memref<4x8xf32>, memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %sum = arith.addf %x, %y : f32 loc("add"("model.mlir":4:8))
      %zero = arith.constant 0.0 : f32
      %r = arith.maximumf %sum, %zero : f32 loc("relu"("model.mlir":5:8))
      linalg.yield %r : f32
    } loc("relu"("model.mlir":5:8))
    // The loop over a batch of products is one region.
    // CHECK: call @kiln_profile_begin(%{{.*}})
    // CHECK-NEXT: scf.for
    // CHECK-NOT: kiln_profile
    // CHECK: call @dnnl_sgemm
    // CHECK-NOT: kiln_profile
    // CHECK: }
    // CHECK-NEXT: arith.constant
    // CHECK-NEXT: call @kiln_profile_end(%{{.*}})
    scf.for %i = %c0 to %c5 step %c1 {
      %u = func.call @dnnl_sgemm(%c78, %c78, %m, %n, %k, %one, %p, %k, %p, %n, %one, %p, %n) : (i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> i32
    } loc("matmul"("model.mlir":6:8))
    // A kiln.for: a region, and so is each loop nest in its body.
    // CHECK: call @kiln_profile_begin(%{{.*}})
    // CHECK-NEXT: scf.for
    // CHECK-NEXT: arith.constant
    // CHECK-NEXT: func.call @kiln_profile_begin(%{{.*}})
    // CHECK-NEXT: scf.parallel
    // CHECK: }
    // CHECK-NEXT: arith.constant
    // CHECK-NEXT: func.call @kiln_profile_end(%{{.*}})
    // CHECK-NEXT: }
    // CHECK-NEXT: arith.constant
    // CHECK-NEXT: call @kiln_profile_end(%{{.*}})
    scf.for %i = %c0 to %c5 step %c1 {
      scf.parallel (%row) = (%c0) to (%c4) step (%c1) {
        %v = memref.load %a[%row, %c0] : memref<4x8xf32>
        %w = math.tanh %v : f32 loc("tanh"("model.mlir":8:10))
        memref.store %w, %t[%row, %c0] : memref<4x8xf32>
        scf.reduce
      } loc("tanh"("model.mlir":8:10))
    } loc("for"("model.mlir":7:3))
    // The matmul primitive: its sizes, bf16 (flag 8) and its batch.
    // CHECK: call @kiln_profile_begin(%{{.*}})
    // CHECK-NEXT: call @kiln_dnnl_matmul
    // CHECK-NEXT: arith.constant
    // CHECK-NEXT: call @kiln_profile_end(%{{.*}})
    %bf16flags = arith.constant 12 : i64
    %three = arith.constant 3 : i64
    func.call @kiln_dnnl_matmul(%p, %bf16flags, %three, %m, %n, %k, %p, %k, %k, %p, %n, %n, %p, %n, %n) : (!llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64) -> () loc("matmul"("model.mlir":9:8))
    // An int8 product of uint8 A (flags 64 and 128).
    // CHECK: call @kiln_profile_begin(%{{.*}})
    // CHECK-NEXT: call @kiln_dnnl_matmul
    // CHECK-NEXT: arith.constant
    // CHECK-NEXT: call @kiln_profile_end(%{{.*}})
    %int8flags = arith.constant 208 : i64
    %one64 = arith.constant 1 : i64
    func.call @kiln_dnnl_matmul(%p, %int8flags, %one64, %m, %n, %k, %p, %k, %k, %p, %n, %n, %p, %n, %n) : (!llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64) -> () loc("matmul"("model.mlir":13:8))
    // The epilogue of a product oneDNN computes carries the product's
    // location too, but is named after its own ops.
    // CHECK: call @kiln_profile_begin(%{{.*}})
    // CHECK-NEXT: linalg.generic
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %sum = arith.addf %x, %o : f32 loc("add"("model.mlir":12:8))
      linalg.yield %sum : f32
    } loc(fused["matmul"("model.mlir":11:8), "add"("model.mlir":12:8)])
    // An op on rank-0 buffers is no loop nest.
    // CHECK: memref.alloc() : memref<f32>
    // CHECK-NEXT: linalg.fill
    // CHECK-NEXT: memref.dealloc
    // CHECK-NEXT: return
    %z = memref.alloc() : memref<f32>
    linalg.fill ins(%one : f32) outs(%z : memref<f32>) loc("add"("model.mlir":10:8))
    memref.dealloc %t : memref<4x8xf32>
    return
  }

  // CHECK-LABEL: func.func private @helper
  // CHECK-NOT: kiln_profile
  // CHECK: return
  // CHECK: llvm.mlir.global external constant @kiln_profile_region_count(8 : i32)
  // CHECK: llvm.mlir.global external constant @kiln_profile_region_names("dnnl_sgemm 2x3x4 @ model.mlir:3\00fused: add+relu 4x8 @ model.mlir:4\00dnnl_sgemm 2x3x4 (batch 5) @ model.mlir:6\00for @ model.mlir:7\00tanh 4x8 @ model.mlir:8\00dnnl_matmul 2x3x4 bf16 (batch 3) @ model.mlir:9\00dnnl_matmul 2x3x4 u8s8 @ model.mlir:13\00add 4x8 @ model.mlir:12\00")
  // CHECK: llvm.mlir.global external @kiln_profile_region_base(0 : i32)
  // CHECK: llvm.mlir.global external @kiln_profile_fn_begin() {{.*}} : !llvm.ptr
  // CHECK: llvm.mlir.zero
  // CHECK: func.func private @kiln_profile_begin(%[[ID:.*]]: i32)
  // CHECK: %[[BASE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
  // CHECK: %[[REGION:.*]] = arith.addi %[[BASE]], %[[ID]]
  // CHECK: %[[MARK:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
  // CHECK: %[[BOUND:.*]] = llvm.icmp "ne" %[[MARK]]
  // CHECK: scf.if %[[BOUND]]
  // CHECK-NEXT: llvm.call %[[MARK]](%[[REGION]]) : !llvm.ptr, (i32) -> ()
  // CHECK: llvm.mlir.global external @kiln_profile_fn_end()
  // CHECK: func.func private @kiln_profile_end(
  func.func private @helper(%a: memref<4x8xf32>) {
    %cst = arith.constant 0.0 : f32
    linalg.fill ins(%cst : f32) outs(%a : memref<4x8xf32>)
    return
  }
}

// -----

// A kiln.while and a kiln.cond are regions holding regions; a conditional
// without loop nests is none. Unnamed, they keep their op's name.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @loop
// CHECK: call @kiln_profile_begin
// CHECK-NEXT: scf.while
// CHECK: func.call @kiln_profile_begin
// CHECK-NEXT: linalg.generic
// CHECK: func.call @kiln_profile_end
// CHECK-NOT: kiln_profile
// CHECK: scf.condition
// CHECK: func.call @kiln_profile_begin
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.constant
// CHECK-NEXT: func.call @kiln_profile_begin
// CHECK-NEXT: linalg.copy
// CHECK: kiln_profile_region_names("while @ loop.mlir:2\00exp 16 @ loop.mlir:3\00cond @ loop.mlir:5\00copy 16 @ loop.mlir:6\00")
func.func @loop(%a: memref<16xf32>, %flag: i1) attributes {kiln.profiled} {
  scf.while (%go = %flag) : (i1) -> () {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : memref<16xf32>) outs(%a : memref<16xf32>) {
    ^bb0(%x: f32, %o: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
    } loc("exp"("loop.mlir":3:5))
    %last = scf.if %go -> (i1) {
      %no = arith.constant false
      scf.yield %no : i1
    } else {
      scf.yield %go : i1
    }
    scf.condition(%last)
  } do {
    scf.if %flag {
      linalg.copy ins(%a : memref<16xf32>) outs(%a : memref<16xf32>) loc("loop.mlir":6:7)
    } loc("cond"("loop.mlir":5:5))
    scf.yield %flag : i1
  } loc("while"("loop.mlir":2:3))
  return
}

// -----

// A oneDNN convolution is named from its descriptor (kiln-cpu-conv-to-dnnl):
// rank 2, 1 group, N 1, C 3, O 8, flags bias and relu, then two entries
// (one per spatial dim) each of input, kernel and output sizes, strides,
// paddings and dilations, as kiln-cpu-outline-dnnl-convs writes them.
// CHECK-LABEL: func.func @conv
// CHECK: call @kiln_profile_begin
// CHECK-NEXT: call @kiln_dnnl_conv_f32
// CHECK: kiln_profile_region_names("dnnl_conv 1x3x16x16 -> 1x8x14x14 k3x3 +bias +relu @ net.mlir:2\00")
memref.global "private" constant @kiln_dnnl_conv_descriptor : memref<20xi64> = dense<[2, 1, 1, 3, 8, 5, 16, 16, 3, 3, 14, 14, 1, 1, 0, 0, 0, 0, 1, 1]>
func.func private @kiln_dnnl_conv_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @conv(%p: !llvm.ptr) attributes {kiln.profiled} {
  %g = memref.get_global @kiln_dnnl_conv_descriptor : memref<20xi64>
  %i = memref.extract_aligned_pointer_as_index %g : memref<20xi64> -> index
  %j = arith.index_cast %i : index to i64
  %d = llvm.inttoptr %j : i64 to !llvm.ptr
  func.call @kiln_dnnl_conv_f32(%p, %d, %p, %p, %p, %p, %p) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> () loc("conv"("net.mlir":2:8))
  return
}

// -----

// A clip (flag 8192) ends the descriptor with its two bounds (0 and 6 as
// f32 bits) and is named too: flags 8193, bias and clip.
// CHECK-LABEL: func.func @conv_clip
// CHECK: kiln_profile_region_names("dnnl_conv 1x3x16x16 -> 1x8x14x14 k3x3 +bias +clip @ net.mlir:2\00")
memref.global "private" constant @kiln_dnnl_conv_descriptor : memref<22xi64> = dense<[2, 1, 1, 3, 8, 8193, 16, 16, 3, 3, 14, 14, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1086324736]>
func.func private @kiln_dnnl_conv_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @conv_clip(%p: !llvm.ptr) attributes {kiln.profiled} {
  %g = memref.get_global @kiln_dnnl_conv_descriptor : memref<22xi64>
  %i = memref.extract_aligned_pointer_as_index %g : memref<22xi64> -> index
  %j = arith.index_cast %i : index to i64
  %d = llvm.inttoptr %j : i64 to !llvm.ptr
  func.call @kiln_dnnl_conv_f32(%p, %d, %p, %p, %p, %p, %p) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> () loc("conv"("net.mlir":2:8))
  return
}

// -----

// A bf16 oneDNN convolution (flag 32) is a library region too, named so.
// CHECK-LABEL: func.func @conv_bf16
// CHECK: call @kiln_profile_begin
// CHECK-NEXT: call @kiln_dnnl_conv_bf16
// CHECK: kiln_profile_region_names("dnnl_conv 1x3x16x16 -> 1x8x14x14 k3x3 bf16 @ net.mlir:2\00")
memref.global "private" constant @kiln_dnnl_conv_descriptor : memref<20xi64> = dense<[2, 1, 1, 3, 8, 32, 16, 16, 3, 3, 14, 14, 1, 1, 0, 0, 0, 0, 1, 1]>
func.func private @kiln_dnnl_conv_bf16(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @conv_bf16(%p: !llvm.ptr) attributes {kiln.profiled} {
  %g = memref.get_global @kiln_dnnl_conv_descriptor : memref<20xi64>
  %i = memref.extract_aligned_pointer_as_index %g : memref<20xi64> -> index
  %j = arith.index_cast %i : index to i64
  %d = llvm.inttoptr %j : i64 to !llvm.ptr
  func.call @kiln_dnnl_conv_bf16(%p, %d, %p, %p, %p, %p, %p) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> () loc("conv"("net.mlir":2:8))
  return
}

// -----

// The loop over the attention kernels' calls (kiln-cpu-attention-calls) is
// one library region, named from the kernels' descriptor: batch 8, Nq 512,
// Nk 512, D 64, causal.
// CHECK-LABEL: func.func @attention
// CHECK: call @kiln_profile_begin
// CHECK-NEXT: scf.parallel
// CHECK: kiln_profile_region_names("attention 8x512x512x64 causal @ net.mlir:3\00")
memref.global "private" constant @kiln_attention_descriptor : memref<10xi64> = dense<[8, 512, 512, 64, 64, 1, 4593671619917905920, 64, 1, 8]>
func.func private @kiln_attention_f32_forward(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64)
func.func @attention(%p: !llvm.ptr) attributes {kiln.profiled} {
  %g = memref.get_global @kiln_attention_descriptor : memref<10xi64>
  %i = memref.extract_aligned_pointer_as_index %g : memref<10xi64> -> index
  %j = arith.index_cast %i : index to i64
  %d = llvm.inttoptr %j : i64 to !llvm.ptr
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%b, %t) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %b64 = arith.index_cast %b : index to i64
    %t64 = arith.index_cast %t : index to i64
    func.call @kiln_attention_f32_forward(%d, %p, %p, %p, %p, %p, %p, %b64, %t64) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64) -> ()
    scf.reduce
  } loc("attention"("net.mlir":3:8))
  return
}

// -----

// The loop over the chunks of columns of one packed product
// (kiln-cpu-matmul-to-dnnl's kiln_packed_matmul_f32 calls) is one library
// region, named after the whole product: 8 rows, 256 columns (the N in
// min(32, 256 - column)), K 512, in 8 chunks.
// CHECK-LABEL: func.func @packed_chunks
// CHECK: call @kiln_profile_begin
// CHECK-NEXT: scf.parallel
// CHECK: kiln_profile_region_names("kiln_packed_matmul 8x256x512 (8 chunks) @ net.mlir:5\00")
func.func private @kiln_packed_matmul_f32(i64, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr)
func.func @packed_chunks(%p: !llvm.ptr) attributes {kiln.profiled} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %flags = arith.constant 0 : i64
  %m = arith.constant 8 : i64
  %n = arith.constant 256 : i64
  %k = arith.constant 512 : i64
  %chunk = arith.constant 32 : i64
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %i64 = arith.index_cast %i : index to i64
    %column = arith.muli %i64, %chunk : i64
    %rest = arith.subi %n, %column : i64
    %width = arith.minsi %chunk, %rest : i64
    func.call @kiln_packed_matmul_f32(%flags, %m, %width, %k, %p, %k, %p, %p, %n, %p) : (i64, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> ()
    scf.reduce
  } loc("matmul"("net.mlir":5:8))
  return
}

// -----

// Kernels side by side (kiln-cpu-concurrent-branches): the loop over the
// sections is no region of its own; the kernels in each section are, each
// timed on the thread that runs its section.
// CHECK-LABEL: func.func @sections
// CHECK-NOT:     kiln_profile_begin
// CHECK:         scf.parallel
// CHECK:           case 0 {
// CHECK-NEXT:        %[[R0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:        call @kiln_profile_begin(%[[R0]])
// CHECK-NEXT:        linalg.fill {{.*}} outs(%arg0
// CHECK-NEXT:        %[[E0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:        call @kiln_profile_end(%[[E0]])
// CHECK:           case 1 {
// CHECK-NEXT:        %[[R1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:        call @kiln_profile_begin(%[[R1]])
// CHECK-NEXT:        linalg.fill {{.*}} outs(%arg1
// CHECK:         } {kiln.concurrent = 2 : i64}
// CHECK-NEXT:    return
func.func @sections(%a: memref<64x64xf32>, %b: memref<64x64xf32>) attributes {kiln.profiled} {
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    scf.index_switch %i
    case 0 {
      linalg.fill ins(%one : f32) outs(%a : memref<64x64xf32>)
      scf.yield
    }
    case 1 {
      linalg.fill ins(%one : f32) outs(%b : memref<64x64xf32>)
      scf.yield
    }
    default {
    }
    scf.reduce
  } {kiln.concurrent = 2 : i64}
  return
}

// -----

// expected-error @below {{the module is instrumented for profiling already}}
module {
  func.func private @kiln_profile_begin(%r: i32)
}
