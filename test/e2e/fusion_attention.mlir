// Scaled dot-product attention: kiln.attention and kiln.attention_grad in
// f32 run the CPU FlashAttention kernels (key tiles with an online
// softmax; the backward recomputes the scores from the saved lse), with
// query counts that leave a partial tile (70 rows, tiles of 64), Nq != Nk
// both ways, a mask broadcast over heads and queries, and causal masking.
// The compositions at the end are what kiln-fuse-attention recognizes:
// compiled with fusion they run the kernel, with --no-fusion the ops as
// written, and both must match the reference evaluator. f64 attentions run
// the composition (kiln-decompose-attention).
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-opt %s --kiln-fuse-attention | FileCheck %s --check-prefix=FUSED
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: heads(arg0: f32[2,2,70,16], arg1: f32[2,2,45,16], arg2: f32[2,2,45,8]) -> (out0: f32[2,2,70,8], out1: f32[2,2,70])
func.func @heads(%q: tensor<2x2x70x16xf32>, %k: tensor<2x2x45x16xf32>, %v: tensor<2x2x45x8xf32>) -> (tensor<2x2x70x8xf32>, tensor<2x2x70xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {scale = 0.25 : f64} : tensor<2x2x70x16xf32>, tensor<2x2x45x16xf32>, tensor<2x2x45x8xf32>
  return %o, %lse : tensor<2x2x70x8xf32>, tensor<2x2x70xf32>
}

// Head dim 64 (kiln-cuda-flash-attention's register-tiled kernel),
// causal, with query and key counts that leave partial tiles and blocks,
// and a masked variant of the scores per query and key.
// CHECK: heads_64_causal(arg0: f32[1,2,75,64], arg1: f32[1,2,150,64], arg2: f32[1,2,150,64], arg3: f32[1,1,75,150]) -> (out0: f32[1,2,75,64], out1: f32[1,2,75], out2: f32[1,2,75,64])
func.func @heads_64_causal(%q: tensor<1x2x75x64xf32>, %k: tensor<1x2x150x64xf32>, %v: tensor<1x2x150x64xf32>, %m: tensor<1x1x75x150xf32>) -> (tensor<1x2x75x64xf32>, tensor<1x2x75xf32>, tensor<1x2x75x64xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.125 : f64} : tensor<1x2x75x64xf32>, tensor<1x2x150x64xf32>, tensor<1x2x150x64xf32>
  %om, %lsem = kiln.attention %q, %k, %v mask %m {scale = 0.125 : f64} : tensor<1x2x75x64xf32>, tensor<1x2x150x64xf32>, tensor<1x2x150x64xf32>, tensor<1x1x75x150xf32>
  return %o, %lse, %om : tensor<1x2x75x64xf32>, tensor<1x2x75xf32>, tensor<1x2x75x64xf32>
}

// Query dims 32 and value dims 64 (the register-tiled CUDA kernel: blocks
// of 64 query rows, key tiles of 64): 130 queries leave a partial third
// block and 70 keys a partial second tile; causal with more queries than
// keys (the rows from 70 on see every key), with a key mask broadcast over
// the batch and the queries, and the same attention unmasked.
// CHECK: tiled_wide_values(arg0: f32[3,130,32], arg1: f32[3,70,32], arg2: f32[3,70,64], arg3: f32[1,1,70]) -> (out0: f32[3,130,64], out1: f32[3,130], out2: f32[3,130,64], out3: f32[3,130])
func.func @tiled_wide_values(%q: tensor<3x130x32xf32>, %k: tensor<3x70x32xf32>, %v: tensor<3x70x64xf32>, %m: tensor<1x1x70xf32>) -> (tensor<3x130x64xf32>, tensor<3x130xf32>, tensor<3x130x64xf32>, tensor<3x130xf32>) {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.17 : f64} : tensor<3x130x32xf32>, tensor<3x70x32xf32>, tensor<3x70x64xf32>, tensor<1x1x70xf32>
  %o2, %lse2 = kiln.attention %q, %k, %v {scale = 0.17 : f64} : tensor<3x130x32xf32>, tensor<3x70x32xf32>, tensor<3x70x64xf32>
  return %o, %lse, %o2, %lse2 : tensor<3x130x64xf32>, tensor<3x130xf32>, tensor<3x130x64xf32>, tensor<3x130xf32>
}

// Gradients with head dims 64 (the register-tiled CUDA gradient: dq over
// blocks of 64 query rows, dk and dv over blocks of 64 keys): 70 queries
// and 100 keys leave partial blocks and tiles both ways; causal with a
// mask per query and key, and plain.
// CHECK: gradients_64(arg0: f32[2,70,64], arg1: f32[2,100,64], arg2: f32[2,100,64], arg3: f32[2,70,64], arg4: f32[1,70,100]) -> (out0: f32[2,70,64], out1: f32[2,100,64], out2: f32[2,100,64], out3: f32[2,70,64], out4: f32[2,100,64], out5: f32[2,100,64])
func.func @gradients_64(%q: tensor<2x70x64xf32>, %k: tensor<2x100x64xf32>, %v: tensor<2x100x64xf32>, %do: tensor<2x70x64xf32>, %m: tensor<1x70x100xf32>) -> (tensor<2x70x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<2x70x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>) attributes {kiln.e2e_atol = 1.0e-5 : f64} {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.125 : f64} : tensor<2x70x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<1x70x100xf32>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do mask %m {causal, scale = 0.125 : f64} : tensor<2x70x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<2x70x64xf32>, tensor<2x70xf32>, tensor<1x70x100xf32>
  %o2, %lse2 = kiln.attention %q, %k, %v {scale = 0.125 : f64} : tensor<2x70x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>
  %dq2, %dk2, %dv2 = kiln.attention_grad %q, %k, %v, %o2, %lse2, %do {scale = 0.125 : f64} : tensor<2x70x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<2x70x64xf32>, tensor<2x70xf32>
  return %dq, %dk, %dv, %dq2, %dk2, %dv2 : tensor<2x70x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<2x70x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>
}

// Causal with more keys than queries, and an additive key mask.
// CHECK: causal_masked(arg0: f32[2,3,33,24], arg1: f32[2,3,80,24], arg2: f32[2,3,80,5], arg3: f32[2,1,1,80]) -> (out0: f32[2,3,33,5], out1: f32[2,3,33])
func.func @causal_masked(%q: tensor<2x3x33x24xf32>, %k: tensor<2x3x80x24xf32>, %v: tensor<2x3x80x5xf32>, %m: tensor<2x1x1x80xf32>) -> (tensor<2x3x33x5xf32>, tensor<2x3x33xf32>) {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.2 : f64} : tensor<2x3x33x24xf32>, tensor<2x3x80x24xf32>, tensor<2x3x80x5xf32>, tensor<2x1x1x80xf32>
  return %o, %lse : tensor<2x3x33x5xf32>, tensor<2x3x33xf32>
}

// Causal with more queries than keys, one head without leading dims.
// CHECK: causal_tall(arg0: f32[130,8], arg1: f32[20,8], arg2: f32[20,8]) -> (out0: f32[130,8])
func.func @causal_tall(%q: tensor<130x8xf32>, %k: tensor<20x8xf32>, %v: tensor<20x8xf32>) -> tensor<130x8xf32> {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.5 : f64} : tensor<130x8xf32>, tensor<20x8xf32>, tensor<20x8xf32>
  return %o : tensor<130x8xf32>
}

// The backward from the forward's own result and lse, for a cotangent.
// CHECK: gradients(arg0: f32[3,70,16], arg1: f32[3,50,16], arg2: f32[3,50,12], arg3: f32[3,70,12]) -> (out0: f32[3,70,16], out1: f32[3,50,16], out2: f32[3,50,12])
func.func @gradients(%q: tensor<3x70x16xf32>, %k: tensor<3x50x16xf32>, %v: tensor<3x50x12xf32>, %do: tensor<3x70x12xf32>) -> (tensor<3x70x16xf32>, tensor<3x50x16xf32>, tensor<3x50x12xf32>) attributes {kiln.e2e_atol = 1.0e-5 : f64} {
  %o, %lse = kiln.attention %q, %k, %v {scale = 0.25 : f64} : tensor<3x70x16xf32>, tensor<3x50x16xf32>, tensor<3x50x12xf32>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {scale = 0.25 : f64} : tensor<3x70x16xf32>, tensor<3x50x16xf32>, tensor<3x50x12xf32>, tensor<3x70x12xf32>, tensor<3x70xf32>
  return %dq, %dk, %dv : tensor<3x70x16xf32>, tensor<3x50x16xf32>, tensor<3x50x12xf32>
}

// The causal, masked backward.
// CHECK: gradients_causal_masked(arg0: f32[2,40,8], arg1: f32[2,40,8], arg2: f32[2,40,8], arg3: f32[2,40,8], arg4: f32[1,40,40]) -> (out0: f32[2,40,8], out1: f32[2,40,8], out2: f32[2,40,8])
func.func @gradients_causal_masked(%q: tensor<2x40x8xf32>, %k: tensor<2x40x8xf32>, %v: tensor<2x40x8xf32>, %do: tensor<2x40x8xf32>, %m: tensor<1x40x40xf32>) -> (tensor<2x40x8xf32>, tensor<2x40x8xf32>, tensor<2x40x8xf32>) attributes {kiln.e2e_atol = 1.0e-5 : f64} {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.35 : f64} : tensor<2x40x8xf32>, tensor<2x40x8xf32>, tensor<2x40x8xf32>, tensor<1x40x40xf32>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do mask %m {causal, scale = 0.35 : f64} : tensor<2x40x8xf32>, tensor<2x40x8xf32>, tensor<2x40x8xf32>, tensor<2x40x8xf32>, tensor<2x40xf32>, tensor<1x40x40xf32>
  return %dq, %dk, %dv : tensor<2x40x8xf32>, tensor<2x40x8xf32>, tensor<2x40x8xf32>
}

// q, k and v computed in the function (heads split off by transposes) and
// dead after the attention: bufferization must not hand their buffers to
// one another before the kernel reads them.
// CHECK: heads_computed(arg0: f32[64,64], arg1: f32[64,64], arg2: f32[64,64]) -> (out0: f32[8,32,16])
func.func @heads_computed(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<8x32x16xf32> {
  %a4 = kiln.reshape %a : (tensor<64x64xf32>) -> tensor<2x32x4x16xf32>
  %at = kiln.transpose %a4, permutation = [0, 2, 1, 3] : tensor<2x32x4x16xf32>
  %q = kiln.reshape %at : (tensor<2x4x32x16xf32>) -> tensor<8x32x16xf32>
  %b4 = kiln.reshape %b : (tensor<64x64xf32>) -> tensor<2x32x4x16xf32>
  %bt = kiln.transpose %b4, permutation = [0, 2, 1, 3] : tensor<2x32x4x16xf32>
  %k = kiln.reshape %bt : (tensor<2x4x32x16xf32>) -> tensor<8x32x16xf32>
  %c4 = kiln.reshape %c : (tensor<64x64xf32>) -> tensor<2x32x4x16xf32>
  %ct = kiln.transpose %c4, permutation = [0, 2, 1, 3] : tensor<2x32x4x16xf32>
  %v = kiln.reshape %ct : (tensor<2x4x32x16xf32>) -> tensor<8x32x16xf32>
  %o, %lse = kiln.attention %q, %k, %v {scale = 0.25 : f64} : tensor<8x32x16xf32>, tensor<8x32x16xf32>, tensor<8x32x16xf32>
  return %o : tensor<8x32x16xf32>
}

// f64: the composition.
// CHECK: heads_f64(arg0: f64[2,9,4], arg1: f64[2,7,4], arg2: f64[2,7,3]) -> (out0: f64[2,9,3], out1: f64[2,9])
func.func @heads_f64(%q: tensor<2x9x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>) -> (tensor<2x9x3xf64>, tensor<2x9xf64>) {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.5 : f64} : tensor<2x9x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>
  return %o, %lse : tensor<2x9x3xf64>, tensor<2x9xf64>
}

// Written out: softmax(q k^T / sqrt(d) + mask) v over 4 heads, the mask
// broadcast over heads.
// FUSED-LABEL: func.func @composition(
// FUSED:         kiln.attention %arg0, %arg1, %arg2 mask
// FUSED-NOT:     kiln.exp
// CHECK: composition(arg0: f32[4,96,32], arg1: f32[4,72,32], arg2: f32[4,72,16], arg3: f32[96,72]) -> (out0: f32[4,96,16])
func.func @composition(%q: tensor<4x96x32xf32>, %k: tensor<4x72x32xf32>, %v: tensor<4x72x16xf32>, %mask: tensor<96x72xf32>) -> tensor<4x96x16xf32> {
  %kt = kiln.transpose %k, permutation = [0, 2, 1] : tensor<4x72x32xf32>
  %qk = kiln.matmul %q, %kt : tensor<4x96x32xf32>, tensor<4x32x72xf32>
  %c = kiln.constant dense<5.6568542494923806> : tensor<4x96x72xf32>
  %s = kiln.div %qk, %c : tensor<4x96x72xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [1, 2] : (tensor<96x72xf32>) -> tensor<4x96x72xf32>
  %x = kiln.add %s, %mb : tensor<4x96x72xf32>
  %m = kiln.reduce_max %x, dims = [2] : tensor<4x96x72xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<4x96xf32>) -> tensor<4x96x72xf32>
  %sh = kiln.sub %x, %bm : tensor<4x96x72xf32>
  %e = kiln.exp %sh : tensor<4x96x72xf32>
  %z = kiln.reduce_sum %e, dims = [2] : tensor<4x96x72xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1] : (tensor<4x96xf32>) -> tensor<4x96x72xf32>
  %p = kiln.div %e, %bz : tensor<4x96x72xf32>
  %o = kiln.matmul %p, %v : tensor<4x96x72xf32>, tensor<4x72x16xf32>
  return %o : tensor<4x96x16xf32>
}

// A constant causal mask: recognized as causal (key tiles above the
// diagonal skipped), the same values as the mask added.
// FUSED-LABEL: func.func @composition_causal(
// FUSED:         kiln.attention %arg0, %arg1, %arg2 {causal, scale = 1.000000e+00 : f64}
// CHECK: composition_causal(arg0: f32[6,4], arg1: f32[6,4], arg2: f32[6,3]) -> (out0: f32[6,3])
func.func @composition_causal(%q: tensor<6x4xf32>, %k: tensor<6x4xf32>, %v: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<6x4xf32>
  %qk = kiln.matmul %q, %kt : tensor<6x4xf32>, tensor<4x6xf32>
  %mask = kiln.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<6x6xf32>
  %x = kiln.add %qk, %mask : tensor<6x6xf32>
  %m = kiln.reduce_max %x, dims = [1] : tensor<6x6xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0] : (tensor<6xf32>) -> tensor<6x6xf32>
  %sh = kiln.sub %x, %bm : tensor<6x6xf32>
  %e = kiln.exp %sh : tensor<6x6xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<6x6xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0] : (tensor<6xf32>) -> tensor<6x6xf32>
  %p = kiln.div %e, %bz : tensor<6x6xf32>
  %o = kiln.matmul %p, %v : tensor<6x6xf32>, tensor<6x3xf32>
  return %o : tensor<6x3xf32>
}

// As PyTorch's exporter writes attention over heads (BERT exported with
// dynamo=True): q, k and v [B, N, H, D] split into heads by transposes, k
// straight to [B, H, D, Nk], the scale split between q and k^T, products
// of rank 3 between reshapes, a key mask `where(keep, 0, -FLT_MAX)` (keys
// kept at random in batch entry 0, none in entry 1, whose rows are then
// the softmax of equal scores: the mean of v), and where(isnan(p), 0, p)
// after the softmax.
// FUSED-LABEL: func.func @exported_heads(
// FUSED:         kiln.attention
// FUSED-NOT:     kiln.exp
// CHECK: exported_heads(arg0: f32[2,70,3,16], arg1: f32[2,45,3,16], arg2: f32[2,45,3,8], arg3: i1[2,1,1,45]) -> (out0: f32[2,3,70,8])
func.func @exported_heads(%q: tensor<2x70x3x16xf32>, %k: tensor<2x45x3x16xf32>, %v: tensor<2x45x3x8xf32>, %keep: tensor<2x1x1x45xi1>) -> tensor<2x3x70x8xf32> {
  %qh = kiln.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x70x3x16xf32>
  %vh = kiln.transpose %v, permutation = [0, 2, 1, 3] : tensor<2x45x3x8xf32>
  %kt = kiln.transpose %k, permutation = [0, 2, 3, 1] : tensor<2x45x3x16xf32>
  %cq = kiln.constant dense<0.5> : tensor<2x3x70x16xf32>
  %ck = kiln.constant dense<0.5> : tensor<2x3x16x45xf32>
  %qs = kiln.mul %qh, %cq : tensor<2x3x70x16xf32>
  %ks = kiln.mul %kt, %ck : tensor<2x3x16x45xf32>
  %q3 = kiln.reshape %qs : (tensor<2x3x70x16xf32>) -> tensor<6x70x16xf32>
  %k3 = kiln.reshape %ks : (tensor<2x3x16x45xf32>) -> tensor<6x16x45xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x70x16xf32>, tensor<6x16x45xf32>
  %s = kiln.reshape %qk : (tensor<6x70x45xf32>) -> tensor<2x3x70x45xf32>
  %zero = kiln.constant dense<0.0> : tensor<2x1x1x45xf32>
  %low = kiln.constant dense<-3.40282347E+38> : tensor<2x1x1x45xf32>
  %entry0 = kiln.constant dense<[[[[true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]]], [[[false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]]]> : tensor<2x1x1x45xi1>
  %kept = kiln.and %keep, %entry0 : tensor<2x1x1x45xi1>
  %mask = kiln.select %kept, %zero, %low : tensor<2x1x1x45xi1>, tensor<2x1x1x45xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (tensor<2x1x1x45xf32>) -> tensor<2x3x70x45xf32>
  %x = kiln.add %s, %mb : tensor<2x3x70x45xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x70x45xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x70x45xf32>
  %e = kiln.exp %sh : tensor<2x3x70x45xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x70x45xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %p = kiln.div %e, %bz : tensor<2x3x70x45xf32>
  %nan = kiln.compare ne, %p, %p : tensor<2x3x70x45xf32>
  %fill = kiln.constant dense<0.0> : tensor<2x3x70x45xf32>
  %g = kiln.select %nan, %fill, %p : tensor<2x3x70x45xi1>, tensor<2x3x70x45xf32>
  %p3 = kiln.reshape %g : (tensor<2x3x70x45xf32>) -> tensor<6x70x45xf32>
  %v3 = kiln.reshape %vh : (tensor<2x3x45x8xf32>) -> tensor<6x45x8xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x70x45xf32>, tensor<6x45x8xf32>
  %o = kiln.reshape %o3 : (tensor<6x70x8xf32>) -> tensor<2x3x70x8xf32>
  return %o : tensor<2x3x70x8xf32>
}

// The same with the TorchScript exporter's mask, `where(keep, 0, -inf)`:
// batch entry 1's rows, masked out entirely, are NaN in kiln.attention and
// zeros after the guard; the fused program zeroes them after the op.
// FUSED-LABEL: func.func @exported_infinite_mask(
// FUSED:         kiln.attention
// FUSED:         kiln.select
// FUSED-NOT:     kiln.exp
// CHECK: exported_infinite_mask(arg0: f32[2,70,3,16], arg1: f32[2,45,3,16], arg2: f32[2,45,3,8], arg3: i1[2,1,1,45]) -> (out0: f32[2,3,70,8])
func.func @exported_infinite_mask(%q: tensor<2x70x3x16xf32>, %k: tensor<2x45x3x16xf32>, %v: tensor<2x45x3x8xf32>, %keep: tensor<2x1x1x45xi1>) -> tensor<2x3x70x8xf32> {
  %qh = kiln.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x70x3x16xf32>
  %vh = kiln.transpose %v, permutation = [0, 2, 1, 3] : tensor<2x45x3x8xf32>
  %kt = kiln.transpose %k, permutation = [0, 2, 3, 1] : tensor<2x45x3x16xf32>
  %cq = kiln.constant dense<0.5> : tensor<2x3x70x16xf32>
  %ck = kiln.constant dense<0.5> : tensor<2x3x16x45xf32>
  %qs = kiln.mul %qh, %cq : tensor<2x3x70x16xf32>
  %ks = kiln.mul %kt, %ck : tensor<2x3x16x45xf32>
  %q3 = kiln.reshape %qs : (tensor<2x3x70x16xf32>) -> tensor<6x70x16xf32>
  %k3 = kiln.reshape %ks : (tensor<2x3x16x45xf32>) -> tensor<6x16x45xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x70x16xf32>, tensor<6x16x45xf32>
  %s = kiln.reshape %qk : (tensor<6x70x45xf32>) -> tensor<2x3x70x45xf32>
  %zero = kiln.constant dense<0.0> : tensor<2x1x1x45xf32>
  %low = kiln.constant dense<0xFF800000> : tensor<2x1x1x45xf32>
  %entry0 = kiln.constant dense<[[[[true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]]], [[[false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]]]> : tensor<2x1x1x45xi1>
  %kept = kiln.and %keep, %entry0 : tensor<2x1x1x45xi1>
  %mask = kiln.select %kept, %zero, %low : tensor<2x1x1x45xi1>, tensor<2x1x1x45xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (tensor<2x1x1x45xf32>) -> tensor<2x3x70x45xf32>
  %x = kiln.add %s, %mb : tensor<2x3x70x45xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x70x45xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x70x45xf32>
  %e = kiln.exp %sh : tensor<2x3x70x45xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x70x45xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %p = kiln.div %e, %bz : tensor<2x3x70x45xf32>
  %nan = kiln.compare ne, %p, %p : tensor<2x3x70x45xf32>
  %fill = kiln.constant dense<0.0> : tensor<2x3x70x45xf32>
  %g = kiln.select %nan, %fill, %p : tensor<2x3x70x45xi1>, tensor<2x3x70x45xf32>
  %p3 = kiln.reshape %g : (tensor<2x3x70x45xf32>) -> tensor<6x70x45xf32>
  %v3 = kiln.reshape %vh : (tensor<2x3x45x8xf32>) -> tensor<6x45x8xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x70x45xf32>, tensor<6x45x8xf32>
  %o = kiln.reshape %o3 : (tensor<6x70x8xf32>) -> tensor<2x3x70x8xf32>
  return %o : tensor<2x3x70x8xf32>
}

// GPT-2's eager attention as exported: the scale after the product of rank
// 3, a mask of rank 4 broadcast over batch and heads.
// FUSED-LABEL: func.func @exported_scaled_after(
// FUSED:         kiln.attention %arg0, %arg1, %arg2 mask
// FUSED-NOT:     kiln.exp
// CHECK: exported_scaled_after(arg0: f32[2,3,70,16], arg1: f32[2,3,45,16], arg2: f32[2,3,45,8], arg3: f32[1,1,70,45]) -> (out0: f32[2,3,70,8])
func.func @exported_scaled_after(%q: tensor<2x3x70x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>, %mask: tensor<1x1x70x45xf32>) -> tensor<2x3x70x8xf32> {
  %kt = kiln.transpose %k, permutation = [0, 1, 3, 2] : tensor<2x3x45x16xf32>
  %q3 = kiln.reshape %q : (tensor<2x3x70x16xf32>) -> tensor<6x70x16xf32>
  %k3 = kiln.reshape %kt : (tensor<2x3x16x45xf32>) -> tensor<6x16x45xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x70x16xf32>, tensor<6x16x45xf32>
  %c = kiln.constant dense<0.25> : tensor<6x70x45xf32>
  %qkc = kiln.mul %qk, %c : tensor<6x70x45xf32>
  %s = kiln.reshape %qkc : (tensor<6x70x45xf32>) -> tensor<2x3x70x45xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (tensor<1x1x70x45xf32>) -> tensor<2x3x70x45xf32>
  %x = kiln.add %s, %mb : tensor<2x3x70x45xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x70x45xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x70x45xf32>
  %e = kiln.exp %sh : tensor<2x3x70x45xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x70x45xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %p = kiln.div %e, %bz : tensor<2x3x70x45xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x70x45xf32>) -> tensor<6x70x45xf32>
  %v3 = kiln.reshape %v : (tensor<2x3x45x8xf32>) -> tensor<6x45x8xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x70x45xf32>, tensor<6x45x8xf32>
  %o = kiln.reshape %o3 : (tensor<6x70x8xf32>) -> tensor<2x3x70x8xf32>
  return %o : tensor<2x3x70x8xf32>
}

// kiln's tracer's `softmax(q @ k^T * c) @ v` at rank 4: the scale after
// the split into heads, no mask.
// FUSED-LABEL: func.func @traced_scaled_after_split(
// FUSED:         kiln.attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64}
// FUSED-NOT:     kiln.exp
// CHECK: traced_scaled_after_split(arg0: f32[2,3,70,16], arg1: f32[2,3,45,16], arg2: f32[2,3,45,8]) -> (out0: f32[2,3,70,8])
func.func @traced_scaled_after_split(%q: tensor<2x3x70x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x70x8xf32> {
  %c = kiln.constant dense<1.250000e-01> : tensor<2x3x70x45xf32>
  %kt = kiln.transpose %k, permutation = [0, 1, 3, 2] : tensor<2x3x45x16xf32>
  %q3 = kiln.reshape %q : (tensor<2x3x70x16xf32>) -> tensor<6x70x16xf32>
  %kt3 = kiln.reshape %kt : (tensor<2x3x16x45xf32>) -> tensor<6x16x45xf32>
  %qk = kiln.matmul %q3, %kt3 : tensor<6x70x16xf32>, tensor<6x16x45xf32>
  %s = kiln.reshape %qk : (tensor<6x70x45xf32>) -> tensor<2x3x70x45xf32>
  %x = kiln.mul %s, %c : tensor<2x3x70x45xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x70x45xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x70x45xf32>
  %e = kiln.exp %sh : tensor<2x3x70x45xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x70x45xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %p = kiln.div %e, %bz : tensor<2x3x70x45xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x70x45xf32>) -> tensor<6x70x45xf32>
  %v3 = kiln.reshape %v : (tensor<2x3x45x8xf32>) -> tensor<6x45x8xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x70x45xf32>, tensor<6x45x8xf32>
  %o = kiln.reshape %o3 : (tensor<6x70x8xf32>) -> tensor<2x3x70x8xf32>
  return %o : tensor<2x3x70x8xf32>
}

// torch.nn.MultiheadAttention as exported: q, k and v [N, B * H, D], k^T
// their transpose straight to [B * H, D, Nk], the mask added at rank 3
// before the split into [B, H, Nq, Nk].
// FUSED-LABEL: func.func @multihead_mask_before_split(
// FUSED:         kiln.attention %{{.*}}, %{{.*}}, %{{.*}} mask
// FUSED-NOT:     kiln.exp
// CHECK: multihead_mask_before_split(arg0: f32[70,6,16], arg1: f32[45,6,16], arg2: f32[45,6,8], arg3: f32[6,70,45]) -> (out0: f32[2,3,70,8])
func.func @multihead_mask_before_split(%q: tensor<70x6x16xf32>, %k: tensor<45x6x16xf32>, %v: tensor<45x6x8xf32>, %mask: tensor<6x70x45xf32>) -> tensor<2x3x70x8xf32> {
  %qh = kiln.transpose %q, permutation = [1, 0, 2] : tensor<70x6x16xf32>
  %vh = kiln.transpose %v, permutation = [1, 0, 2] : tensor<45x6x8xf32>
  %kt = kiln.transpose %k, permutation = [1, 2, 0] : tensor<45x6x16xf32>
  %c = kiln.constant dense<0.5> : tensor<6x70x16xf32>
  %ck = kiln.constant dense<0.5> : tensor<6x16x45xf32>
  %qs = kiln.mul %qh, %c : tensor<6x70x16xf32>
  %ks = kiln.mul %kt, %ck : tensor<6x16x45xf32>
  %qk = kiln.matmul %qs, %ks : tensor<6x70x16xf32>, tensor<6x16x45xf32>
  %sm = kiln.add %qk, %mask : tensor<6x70x45xf32>
  %x = kiln.reshape %sm : (tensor<6x70x45xf32>) -> tensor<2x3x70x45xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x70x45xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x70x45xf32>
  %e = kiln.exp %sh : tensor<2x3x70x45xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x70x45xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x70xf32>) -> tensor<2x3x70x45xf32>
  %p = kiln.div %e, %bz : tensor<2x3x70x45xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x70x45xf32>) -> tensor<6x70x45xf32>
  %o3 = kiln.matmul %p3, %vh : tensor<6x70x45xf32>, tensor<6x45x8xf32>
  %o = kiln.reshape %o3 : (tensor<6x70x8xf32>) -> tensor<2x3x70x8xf32>
  return %o : tensor<2x3x70x8xf32>
}

// f16 and bf16 attention run the f32 kernels on widened operands, their
// results rounded once, as the ops define it: causal with a mask in f16,
// and the bf16 gradient. The kernels add the gradient's f32 terms in
// another order than the reference, and where they cancel (small entries
// of dq) the two f32 sums can round to bf16 values two steps apart. On
// CUDA both forwards run the tensor-core kernel (@tensor_cores), whose
// rounded weights move a result by up to 2^-11 of the largest |v| in f16,
// 2^-9 in bf16 (values within 2 here), and the bf16 gradient follows its
// result.
// CHECK: half_precision(arg0: f16[2,70,16], arg1: f16[2,45,16], arg2: f16[2,45,8], arg3: f16[1,70,45], arg4: bf16[2,70,16], arg5: bf16[2,45,16], arg6: bf16[2,45,8], arg7: bf16[2,70,8]) -> (out0: f16[2,70,8], out1: f32[2,70], out2: bf16[2,70,16], out3: bf16[2,45,16], out4: bf16[2,45,8])
func.func @half_precision(%q: tensor<2x70x16xf16>, %k: tensor<2x45x16xf16>, %v: tensor<2x45x8xf16>, %m: tensor<1x70x45xf16>, %bq: tensor<2x70x16xbf16>, %bk: tensor<2x45x16xbf16>, %bv: tensor<2x45x8xbf16>, %bdo: tensor<2x70x8xbf16>) -> (tensor<2x70x8xf16>, tensor<2x70xf32>, tensor<2x70x16xbf16>, tensor<2x45x16xbf16>, tensor<2x45x8xbf16>) attributes {kiln.e2e_half_rtol = 1.6e-2 : f64, kiln.e2e_atol = 4.0e-3 : f64} {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.25 : f64} : tensor<2x70x16xf16>, tensor<2x45x16xf16>, tensor<2x45x8xf16>, tensor<1x70x45xf16>
  %bo, %blse = kiln.attention %bq, %bk, %bv {scale = 0.25 : f64} : tensor<2x70x16xbf16>, tensor<2x45x16xbf16>, tensor<2x45x8xbf16>
  %dq, %dk, %dv = kiln.attention_grad %bq, %bk, %bv, %bo, %blse, %bdo {scale = 0.25 : f64} : tensor<2x70x16xbf16>, tensor<2x45x16xbf16>, tensor<2x45x8xbf16>, tensor<2x70x8xbf16>, tensor<2x70xf32>
  return %o, %lse, %dq, %dk, %dv : tensor<2x70x8xf16>, tensor<2x70xf32>, tensor<2x70x16xbf16>, tensor<2x45x16xbf16>, tensor<2x45x8xbf16>
}

// Half-precision forwards whose head dims fit run CUDA's tensor-core kernel
// (the CPU's f32 kernel on widened operands): bf16 with head dims of 64
// (its swizzled tiles), causal with a mask broadcast over the queries,
// 130 queries over 150 keys (partial blocks and key tiles); f16 with
// D = 32 and Dv = 24 (tiles without the swizzle), 20 queries over 200
// keys. The kernel rounds the softmax weights p to the operands' type
// before their product with the values, as FlashAttention does: a result
// moves by up to one rounding of the largest |v| (2^-9 x 2 in bf16) from
// the one computed in f32 and rounded once.
// CHECK: tensor_cores(arg0: bf16[2,130,64], arg1: bf16[2,150,64], arg2: bf16[2,150,64], arg3: bf16[2,1,150], arg4: f16[3,20,32], arg5: f16[3,200,32], arg6: f16[3,200,24]) -> (out0: bf16[2,130,64], out1: f32[2,130], out2: f16[3,20,24], out3: f32[3,20])
func.func @tensor_cores(%q: tensor<2x130x64xbf16>, %k: tensor<2x150x64xbf16>, %v: tensor<2x150x64xbf16>, %m: tensor<2x1x150xbf16>, %hq: tensor<3x20x32xf16>, %hk: tensor<3x200x32xf16>, %hv: tensor<3x200x24xf16>) -> (tensor<2x130x64xbf16>, tensor<2x130xf32>, tensor<3x20x24xf16>, tensor<3x20xf32>) attributes {kiln.e2e_half_rtol = 1.6e-2 : f64, kiln.e2e_atol = 4.0e-3 : f64} {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.125 : f64} : tensor<2x130x64xbf16>, tensor<2x150x64xbf16>, tensor<2x150x64xbf16>, tensor<2x1x150xbf16>
  %ho, %hlse = kiln.attention %hq, %hk, %hv {scale = 0.1767766952966369 : f64} : tensor<3x20x32xf16>, tensor<3x200x32xf16>, tensor<3x200x24xf16>
  return %o, %lse, %ho, %hlse : tensor<2x130x64xbf16>, tensor<2x130xf32>, tensor<3x20x24xf16>, tensor<3x20xf32>
}

// Head dims over 64 take key tiles of 32 in the tensor-core kernel (its
// registers): bf16 with head dims of 128, causal, 40 queries over 75 keys;
// f16 with D = 96 and Dv = 40 (rows of 48 and 16 words, the other
// swizzle), 33 queries over 50 keys.
// CHECK: tensor_cores_wide(arg0: bf16[1,40,128], arg1: bf16[1,75,128], arg2: bf16[1,75,128], arg3: f16[33,96], arg4: f16[50,96], arg5: f16[50,40]) -> (out0: bf16[1,40,128], out1: f32[1,40], out2: f16[33,40], out3: f32[33])
func.func @tensor_cores_wide(%q: tensor<1x40x128xbf16>, %k: tensor<1x75x128xbf16>, %v: tensor<1x75x128xbf16>, %hq: tensor<33x96xf16>, %hk: tensor<50x96xf16>, %hv: tensor<50x40xf16>) -> (tensor<1x40x128xbf16>, tensor<1x40xf32>, tensor<33x40xf16>, tensor<33xf32>) attributes {kiln.e2e_half_rtol = 1.6e-2 : f64, kiln.e2e_atol = 4.0e-3 : f64} {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.08838834764831845 : f64} : tensor<1x40x128xbf16>, tensor<1x75x128xbf16>, tensor<1x75x128xbf16>
  %ho, %hlse = kiln.attention %hq, %hk, %hv {scale = 0.10206207261596575 : f64} : tensor<33x96xf16>, tensor<50x96xf16>, tensor<50x40xf16>
  return %o, %lse, %ho, %hlse : tensor<1x40x128xbf16>, tensor<1x40xf32>, tensor<33x40xf16>, tensor<33xf32>
}

// Head dims that are multiples of 8 but not of the products' 16 run the
// tensor-core kernel too, its last product's upper 8 dims zeros: bf16
// with head dims of 40 (Stable Diffusion's), 130 queries over 77 keys (a
// text encoder's tokens), a mask broadcast over the queries; f16 with
// D = 24 and Dv = 56, causal, 20 queries over 90 keys.
// CHECK: tensor_cores_padded(arg0: bf16[2,130,40], arg1: bf16[2,77,40], arg2: bf16[2,77,40], arg3: bf16[2,1,77], arg4: f16[3,20,24], arg5: f16[3,90,24], arg6: f16[3,90,56]) -> (out0: bf16[2,130,40], out1: f32[2,130], out2: f16[3,20,56], out3: f32[3,20])
func.func @tensor_cores_padded(%q: tensor<2x130x40xbf16>, %k: tensor<2x77x40xbf16>, %v: tensor<2x77x40xbf16>, %m: tensor<2x1x77xbf16>, %hq: tensor<3x20x24xf16>, %hk: tensor<3x90x24xf16>, %hv: tensor<3x90x56xf16>) -> (tensor<2x130x40xbf16>, tensor<2x130xf32>, tensor<3x20x56xf16>, tensor<3x20xf32>) attributes {kiln.e2e_half_rtol = 1.6e-2 : f64, kiln.e2e_atol = 4.0e-3 : f64} {
  %o, %lse = kiln.attention %q, %k, %v mask %m {scale = 0.15811388300841897 : f64} : tensor<2x130x40xbf16>, tensor<2x77x40xbf16>, tensor<2x77x40xbf16>, tensor<2x1x77xbf16>
  %ho, %hlse = kiln.attention %hq, %hk, %hv {causal, scale = 0.2041241452319315 : f64} : tensor<3x20x24xf16>, tensor<3x90x24xf16>, tensor<3x90x56xf16>
  return %o, %lse, %ho, %hlse : tensor<2x130x40xbf16>, tensor<2x130xf32>, tensor<3x20x56xf16>, tensor<3x20xf32>
}

// Their gradients on the tensor-core kernels, padded likewise (s's
// products over 48 dims, dp's over 48 and 64): bf16 at D = Dv = 40, 130
// queries over 77 keys with the mask; f16 at D = 24 and Dv = 56, causal,
// 20 queries over 90 keys.
// CHECK: tensor_cores_padded_grad(arg0: bf16[2,130,40], arg1: bf16[2,77,40], arg2: bf16[2,77,40], arg3: bf16[2,1,77], arg4: bf16[2,130,40], arg5: f16[3,20,24], arg6: f16[3,90,24], arg7: f16[3,90,56], arg8: f16[3,20,56]) -> (out0: bf16[2,130,40], out1: bf16[2,77,40], out2: bf16[2,77,40], out3: f16[3,20,24], out4: f16[3,90,24], out5: f16[3,90,56])
func.func @tensor_cores_padded_grad(%q: tensor<2x130x40xbf16>, %k: tensor<2x77x40xbf16>, %v: tensor<2x77x40xbf16>, %m: tensor<2x1x77xbf16>, %do: tensor<2x130x40xbf16>, %hq: tensor<3x20x24xf16>, %hk: tensor<3x90x24xf16>, %hv: tensor<3x90x56xf16>, %hdo: tensor<3x20x56xf16>) -> (tensor<2x130x40xbf16>, tensor<2x77x40xbf16>, tensor<2x77x40xbf16>, tensor<3x20x24xf16>, tensor<3x90x24xf16>, tensor<3x90x56xf16>) attributes {kiln.e2e_half_rtol = 1.6e-2 : f64, kiln.e2e_atol = 1.2e-2 : f64} {
  %o, %lse = kiln.attention %q, %k, %v mask %m {scale = 0.15811388300841897 : f64} : tensor<2x130x40xbf16>, tensor<2x77x40xbf16>, tensor<2x77x40xbf16>, tensor<2x1x77xbf16>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do mask %m {scale = 0.15811388300841897 : f64} : tensor<2x130x40xbf16>, tensor<2x77x40xbf16>, tensor<2x77x40xbf16>, tensor<2x130x40xbf16>, tensor<2x130xf32>, tensor<2x1x77xbf16>
  %ho, %hlse = kiln.attention %hq, %hk, %hv {causal, scale = 0.2041241452319315 : f64} : tensor<3x20x24xf16>, tensor<3x90x24xf16>, tensor<3x90x56xf16>
  %hdq, %hdk, %hdv = kiln.attention_grad %hq, %hk, %hv, %ho, %hlse, %hdo {causal, scale = 0.2041241452319315 : f64} : tensor<3x20x24xf16>, tensor<3x90x24xf16>, tensor<3x90x56xf16>, tensor<3x20x56xf16>, tensor<3x20xf32>
  return %dq, %dk, %dv, %hdq, %hdk, %hdv : tensor<2x130x40xbf16>, tensor<2x77x40xbf16>, tensor<2x77x40xbf16>, tensor<3x20x24xf16>, tensor<3x90x24xf16>, tensor<3x90x56xf16>
}

// Half-precision gradients whose head dims are multiples of 16 run CUDA's
// tensor-core gradient (the CPU's f32 kernels on widened operands): bf16
// with head dims of 64, causal with a mask broadcast over the queries, 130
// queries over 150 keys (partial blocks and tiles of both sides); f16 with
// D = 32 and Dv = 16 (tiles without the swizzle), 20 queries over 70 keys;
// bf16 with head dims of 128 (tiles of 16, the own rows read per tile), 40
// queries over 75 keys, causal. The first two take one kernel over key
// rows that adds dq with atomics (f32 sums in any order), the third two
// kernels, as all three do with --cuda-deterministic (which the harness
// also builds for attention programs). The kernels round p and ds to the
// operands' type before their products, as FlashAttention does: a
// gradient moves by about one rounding of the terms it sums (within
// 1.2e-2 here, where gradients reach about 6), which where they cancel
// (the rows of ds sum to 0) is more than one rounding of the result. The
// kernels agree with that algorithm computed in float64 to within two
// bf16 roundings of the results.
// CHECK: tensor_cores_grad(arg0: bf16[2,130,64], arg1: bf16[2,150,64], arg2: bf16[2,150,64], arg3: bf16[2,1,150], arg4: bf16[2,130,64], arg5: f16[3,20,32], arg6: f16[3,70,32], arg7: f16[3,70,16], arg8: f16[3,20,16], arg9: bf16[1,40,128], arg10: bf16[1,75,128], arg11: bf16[1,75,128], arg12: bf16[1,40,128]) -> (out0: bf16[2,130,64], out1: bf16[2,150,64], out2: bf16[2,150,64], out3: f16[3,20,32], out4: f16[3,70,32], out5: f16[3,70,16], out6: bf16[1,40,128], out7: bf16[1,75,128], out8: bf16[1,75,128])
func.func @tensor_cores_grad(%q: tensor<2x130x64xbf16>, %k: tensor<2x150x64xbf16>, %v: tensor<2x150x64xbf16>, %m: tensor<2x1x150xbf16>, %do: tensor<2x130x64xbf16>, %hq: tensor<3x20x32xf16>, %hk: tensor<3x70x32xf16>, %hv: tensor<3x70x16xf16>, %hdo: tensor<3x20x16xf16>, %wq: tensor<1x40x128xbf16>, %wk: tensor<1x75x128xbf16>, %wv: tensor<1x75x128xbf16>, %wdo: tensor<1x40x128xbf16>) -> (tensor<2x130x64xbf16>, tensor<2x150x64xbf16>, tensor<2x150x64xbf16>, tensor<3x20x32xf16>, tensor<3x70x32xf16>, tensor<3x70x16xf16>, tensor<1x40x128xbf16>, tensor<1x75x128xbf16>, tensor<1x75x128xbf16>) attributes {kiln.e2e_half_rtol = 1.6e-2 : f64, kiln.e2e_atol = 1.2e-2 : f64} {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.125 : f64} : tensor<2x130x64xbf16>, tensor<2x150x64xbf16>, tensor<2x150x64xbf16>, tensor<2x1x150xbf16>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do mask %m {causal, scale = 0.125 : f64} : tensor<2x130x64xbf16>, tensor<2x150x64xbf16>, tensor<2x150x64xbf16>, tensor<2x130x64xbf16>, tensor<2x130xf32>, tensor<2x1x150xbf16>
  %ho, %hlse = kiln.attention %hq, %hk, %hv {scale = 0.1767766952966369 : f64} : tensor<3x20x32xf16>, tensor<3x70x32xf16>, tensor<3x70x16xf16>
  %hdq, %hdk, %hdv = kiln.attention_grad %hq, %hk, %hv, %ho, %hlse, %hdo {scale = 0.1767766952966369 : f64} : tensor<3x20x32xf16>, tensor<3x70x32xf16>, tensor<3x70x16xf16>, tensor<3x20x16xf16>, tensor<3x20xf32>
  %wo, %wlse = kiln.attention %wq, %wk, %wv {causal, scale = 0.08838834764831845 : f64} : tensor<1x40x128xbf16>, tensor<1x75x128xbf16>, tensor<1x75x128xbf16>
  %wdq, %wdk, %wdv = kiln.attention_grad %wq, %wk, %wv, %wo, %wlse, %wdo {causal, scale = 0.08838834764831845 : f64} : tensor<1x40x128xbf16>, tensor<1x75x128xbf16>, tensor<1x75x128xbf16>, tensor<1x40x128xbf16>, tensor<1x40xf32>
  return %dq, %dk, %dv, %hdq, %hdk, %hdv, %wdq, %wdk, %wdv : tensor<2x130x64xbf16>, tensor<2x150x64xbf16>, tensor<2x150x64xbf16>, tensor<3x20x32xf16>, tensor<3x70x32xf16>, tensor<3x70x16xf16>, tensor<1x40x128xbf16>, tensor<1x75x128xbf16>, tensor<1x75x128xbf16>
}

// An f32 attention and its gradient in a kiln.while's body, three trips of
// a small step of v against its gradient.
// On CUDA from sm_80 on each is a tuned call site (kiln-cuda-flash-
// attention's tune-f32: its f32 and 3xTF32 kernels, and the gradient's
// two kernels) and the loop stays a host loop around them, so that the
// runtime times the variants at the first trip; on cuda-on-cpu every
// variant runs at every trip, the f32 kernels last.
// CHECK: attention_in_loop(arg0: f32[1,2,70,64], arg1: f32[1,2,90,64], arg2: f32[1,2,90,64]) -> (out0: f32[1,2,70,64], out1: f32[1,2,90,64], out2: i32[])
func.func @attention_in_loop(%q: tensor<1x2x70x64xf32>, %k: tensor<1x2x90x64xf32>, %v: tensor<1x2x90x64xf32>) -> (tensor<1x2x70x64xf32>, tensor<1x2x90x64xf32>, tensor<i32>) {
  %zero = kiln.constant dense<0> : tensor<i32>
  %r:4 = kiln.while (%q, %k, %v, %zero) : (tensor<1x2x70x64xf32>, tensor<1x2x90x64xf32>, tensor<1x2x90x64xf32>, tensor<i32>) cond {
  ^bb0(%x: tensor<1x2x70x64xf32>, %y: tensor<1x2x90x64xf32>, %w: tensor<1x2x90x64xf32>, %it: tensor<i32>):
    %cap = kiln.constant dense<3> : tensor<i32>
    %more = kiln.compare lt, %it, %cap : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%x: tensor<1x2x70x64xf32>, %y: tensor<1x2x90x64xf32>, %w: tensor<1x2x90x64xf32>, %it: tensor<i32>):
    %o, %lse = kiln.attention %x, %y, %w {causal, scale = 0.125 : f64} : tensor<1x2x70x64xf32>, tensor<1x2x90x64xf32>, tensor<1x2x90x64xf32>
    %dq, %dk, %dv = kiln.attention_grad %x, %y, %w, %o, %lse, %x {causal, scale = 0.125 : f64} : tensor<1x2x70x64xf32>, tensor<1x2x90x64xf32>, tensor<1x2x90x64xf32>, tensor<1x2x70x64xf32>, tensor<1x2x70xf32>
    %step = kiln.constant dense<0.03125> : tensor<1x2x90x64xf32>
    %scaled = kiln.mul %dv, %step : tensor<1x2x90x64xf32>
    %w1 = kiln.sub %w, %scaled : tensor<1x2x90x64xf32>
    %one = kiln.constant dense<1> : tensor<i32>
    %it1 = kiln.add %it, %one : tensor<i32>
    kiln.yield %o, %y, %w1, %it1 : tensor<1x2x70x64xf32>, tensor<1x2x90x64xf32>, tensor<1x2x90x64xf32>, tensor<i32>
  }
  return %r#0, %r#2, %r#3 : tensor<1x2x70x64xf32>, tensor<1x2x90x64xf32>, tensor<i32>
}
