// The PTX assembles with the CUDA toolkit's ptxas for sm_80 and sm_90.
// REQUIRES: cuda-backend, ptxas
// RUN: kiln-compile %s --target=cuda --emit=ptx -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o %t.sm90.ptx
// RUN: %ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin

func.func @mixed(%x: tensor<4x64xf64>, %i: tensor<4x64xi32>) -> (tensor<4xf64>, tensor<4x64xi32>) {
  %e = kiln.exp %x : tensor<4x64xf64>
  %s = kiln.reduce_max %e, dims = [1] : tensor<4x64xf64>
  %a = kiln.abs %i : tensor<4x64xi32>
  return %s, %a : tensor<4xf64>, tensor<4x64xi32>
}
