// The loss of two GPT-2-style blocks (pre-norm: layer norm, causal
// attention with 2 heads and biased q/k/v projections, output projection,
// residual; layer norm, 8 -> 32 -> 8 MLP with GELU, residual) and the mean
// squared distance to a target, on 2 sequences of 4 tokens of width 8:
// bench/gpt2.py's loss_fn as the kiln Python package traces it
// (layers=2, d_model=8, heads=2, seq=4, batch=2), printed by
// kiln.jit(loss).lower(params, x, target).as_text(). Arguments: 16
// parameters per block in gpt2.BLOCK's order, then x and target.
func.func @loss(%arg0: tensor<8xf32> {kiln.name = "arg0"}, %arg1: tensor<8xf32> {kiln.name = "arg1"}, %arg2: tensor<8x8xf32> {kiln.name = "arg2"}, %arg3: tensor<8xf32> {kiln.name = "arg3"}, %arg4: tensor<8x8xf32> {kiln.name = "arg4"}, %arg5: tensor<8xf32> {kiln.name = "arg5"}, %arg6: tensor<8x8xf32> {kiln.name = "arg6"}, %arg7: tensor<8xf32> {kiln.name = "arg7"}, %arg8: tensor<8x8xf32> {kiln.name = "arg8"}, %arg9: tensor<8xf32> {kiln.name = "arg9"}, %arg10: tensor<8xf32> {kiln.name = "arg10"}, %arg11: tensor<8xf32> {kiln.name = "arg11"}, %arg12: tensor<8x32xf32> {kiln.name = "arg12"}, %arg13: tensor<32xf32> {kiln.name = "arg13"}, %arg14: tensor<32x8xf32> {kiln.name = "arg14"}, %arg15: tensor<8xf32> {kiln.name = "arg15"}, %arg16: tensor<8xf32> {kiln.name = "arg16"}, %arg17: tensor<8xf32> {kiln.name = "arg17"}, %arg18: tensor<8x8xf32> {kiln.name = "arg18"}, %arg19: tensor<8xf32> {kiln.name = "arg19"}, %arg20: tensor<8x8xf32> {kiln.name = "arg20"}, %arg21: tensor<8xf32> {kiln.name = "arg21"}, %arg22: tensor<8x8xf32> {kiln.name = "arg22"}, %arg23: tensor<8xf32> {kiln.name = "arg23"}, %arg24: tensor<8x8xf32> {kiln.name = "arg24"}, %arg25: tensor<8xf32> {kiln.name = "arg25"}, %arg26: tensor<8xf32> {kiln.name = "arg26"}, %arg27: tensor<8xf32> {kiln.name = "arg27"}, %arg28: tensor<8x32xf32> {kiln.name = "arg28"}, %arg29: tensor<32xf32> {kiln.name = "arg29"}, %arg30: tensor<32x8xf32> {kiln.name = "arg30"}, %arg31: tensor<8xf32> {kiln.name = "arg31"}, %arg32: tensor<2x4x8xf32> {kiln.name = "arg32"}, %arg33: tensor<2x4x8xf32> {kiln.name = "arg33"}) -> (tensor<f32> {kiln.name = "out0"}) {
  %0 = kiln.reshape %arg32 : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %1 = kiln.reduce_mean %0, dims = [1] : tensor<8x8xf32>
  %2 = kiln.reshape %1 : (tensor<8xf32>) -> tensor<8x1xf32>
  %3 = kiln.broadcast_in_dim %2, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x8xf32>
  %4 = kiln.sub %0, %3 : tensor<8x8xf32>
  %5 = kiln.mul %4, %4 : tensor<8x8xf32>
  %6 = kiln.reduce_mean %5, dims = [1] : tensor<8x8xf32>
  %7 = kiln.reshape %6 : (tensor<8xf32>) -> tensor<8x1xf32>
  %8 = kiln.constant dense<9.99999974E-6> : tensor<8x1xf32>
  %9 = kiln.add %7, %8 : tensor<8x1xf32>
  %10 = kiln.rsqrt %9 : tensor<8x1xf32>
  %11 = kiln.broadcast_in_dim %10, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x8xf32>
  %12 = kiln.mul %4, %11 : tensor<8x8xf32>
  %13 = kiln.broadcast_in_dim %arg0, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %14 = kiln.mul %12, %13 : tensor<8x8xf32>
  %15 = kiln.broadcast_in_dim %arg1, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %16 = kiln.add %14, %15 : tensor<8x8xf32>
  %17 = kiln.matmul %16, %arg2 : tensor<8x8xf32>, tensor<8x8xf32>
  %18 = kiln.broadcast_in_dim %arg3, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %19 = kiln.add %17, %18 : tensor<8x8xf32>
  %20 = kiln.reshape %19 : (tensor<8x8xf32>) -> tensor<2x4x2x4xf32>
  %21 = kiln.transpose %20, permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32>
  %22 = kiln.matmul %16, %arg4 : tensor<8x8xf32>, tensor<8x8xf32>
  %23 = kiln.broadcast_in_dim %arg5, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %24 = kiln.add %22, %23 : tensor<8x8xf32>
  %25 = kiln.reshape %24 : (tensor<8x8xf32>) -> tensor<2x4x2x4xf32>
  %26 = kiln.transpose %25, permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32>
  %27 = kiln.matmul %16, %arg6 : tensor<8x8xf32>, tensor<8x8xf32>
  %28 = kiln.broadcast_in_dim %arg7, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %29 = kiln.add %27, %28 : tensor<8x8xf32>
  %30 = kiln.reshape %29 : (tensor<8x8xf32>) -> tensor<2x4x2x4xf32>
  %31 = kiln.transpose %30, permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32>
  %result, %lse = kiln.attention %21, %26, %31 {causal, scale = 5.000000e-01 : f64} : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
  %32 = kiln.transpose %result, permutation = [0, 2, 1, 3] : tensor<2x2x4x4xf32>
  %33 = kiln.reshape %32 : (tensor<2x4x2x4xf32>) -> tensor<8x8xf32>
  %34 = kiln.matmul %33, %arg8 : tensor<8x8xf32>, tensor<8x8xf32>
  %35 = kiln.add %0, %34 : tensor<8x8xf32>
  %36 = kiln.broadcast_in_dim %arg9, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %37 = kiln.add %35, %36 : tensor<8x8xf32>
  %38 = kiln.reduce_mean %37, dims = [1] : tensor<8x8xf32>
  %39 = kiln.reshape %38 : (tensor<8xf32>) -> tensor<8x1xf32>
  %40 = kiln.broadcast_in_dim %39, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x8xf32>
  %41 = kiln.sub %37, %40 : tensor<8x8xf32>
  %42 = kiln.mul %41, %41 : tensor<8x8xf32>
  %43 = kiln.reduce_mean %42, dims = [1] : tensor<8x8xf32>
  %44 = kiln.reshape %43 : (tensor<8xf32>) -> tensor<8x1xf32>
  %45 = kiln.constant dense<9.99999974E-6> : tensor<8x1xf32>
  %46 = kiln.add %44, %45 : tensor<8x1xf32>
  %47 = kiln.rsqrt %46 : tensor<8x1xf32>
  %48 = kiln.broadcast_in_dim %47, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x8xf32>
  %49 = kiln.mul %41, %48 : tensor<8x8xf32>
  %50 = kiln.broadcast_in_dim %arg10, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %51 = kiln.mul %49, %50 : tensor<8x8xf32>
  %52 = kiln.broadcast_in_dim %arg11, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %53 = kiln.add %51, %52 : tensor<8x8xf32>
  %54 = kiln.matmul %53, %arg12 : tensor<8x8xf32>, tensor<8x32xf32>
  %55 = kiln.broadcast_in_dim %arg13, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %56 = kiln.add %54, %55 : tensor<8x32xf32>
  %57 = kiln.constant dense<4.471500e-02> : tensor<8x32xf32>
  %58 = kiln.mul %57, %56 : tensor<8x32xf32>
  %59 = kiln.mul %58, %56 : tensor<8x32xf32>
  %60 = kiln.mul %59, %56 : tensor<8x32xf32>
  %61 = kiln.add %56, %60 : tensor<8x32xf32>
  %62 = kiln.constant dense<0.797884583> : tensor<8x32xf32>
  %63 = kiln.mul %62, %61 : tensor<8x32xf32>
  %64 = kiln.constant dense<5.000000e-01> : tensor<8x32xf32>
  %65 = kiln.mul %64, %56 : tensor<8x32xf32>
  %66 = kiln.tanh %63 : tensor<8x32xf32>
  %67 = kiln.constant dense<1.000000e+00> : tensor<8x32xf32>
  %68 = kiln.add %67, %66 : tensor<8x32xf32>
  %69 = kiln.mul %65, %68 : tensor<8x32xf32>
  %70 = kiln.matmul %69, %arg14 : tensor<8x32xf32>, tensor<32x8xf32>
  %71 = kiln.add %37, %70 : tensor<8x8xf32>
  %72 = kiln.broadcast_in_dim %arg15, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %73 = kiln.add %71, %72 : tensor<8x8xf32>
  %74 = kiln.reduce_mean %73, dims = [1] : tensor<8x8xf32>
  %75 = kiln.reshape %74 : (tensor<8xf32>) -> tensor<8x1xf32>
  %76 = kiln.broadcast_in_dim %75, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x8xf32>
  %77 = kiln.sub %73, %76 : tensor<8x8xf32>
  %78 = kiln.mul %77, %77 : tensor<8x8xf32>
  %79 = kiln.reduce_mean %78, dims = [1] : tensor<8x8xf32>
  %80 = kiln.reshape %79 : (tensor<8xf32>) -> tensor<8x1xf32>
  %81 = kiln.constant dense<9.99999974E-6> : tensor<8x1xf32>
  %82 = kiln.add %80, %81 : tensor<8x1xf32>
  %83 = kiln.rsqrt %82 : tensor<8x1xf32>
  %84 = kiln.broadcast_in_dim %83, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x8xf32>
  %85 = kiln.mul %77, %84 : tensor<8x8xf32>
  %86 = kiln.broadcast_in_dim %arg16, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %87 = kiln.mul %85, %86 : tensor<8x8xf32>
  %88 = kiln.broadcast_in_dim %arg17, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %89 = kiln.add %87, %88 : tensor<8x8xf32>
  %90 = kiln.matmul %89, %arg18 : tensor<8x8xf32>, tensor<8x8xf32>
  %91 = kiln.broadcast_in_dim %arg19, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %92 = kiln.add %90, %91 : tensor<8x8xf32>
  %93 = kiln.reshape %92 : (tensor<8x8xf32>) -> tensor<2x4x2x4xf32>
  %94 = kiln.transpose %93, permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32>
  %95 = kiln.matmul %89, %arg20 : tensor<8x8xf32>, tensor<8x8xf32>
  %96 = kiln.broadcast_in_dim %arg21, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %97 = kiln.add %95, %96 : tensor<8x8xf32>
  %98 = kiln.reshape %97 : (tensor<8x8xf32>) -> tensor<2x4x2x4xf32>
  %99 = kiln.transpose %98, permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32>
  %100 = kiln.matmul %89, %arg22 : tensor<8x8xf32>, tensor<8x8xf32>
  %101 = kiln.broadcast_in_dim %arg23, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %102 = kiln.add %100, %101 : tensor<8x8xf32>
  %103 = kiln.reshape %102 : (tensor<8x8xf32>) -> tensor<2x4x2x4xf32>
  %104 = kiln.transpose %103, permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32>
  %result_0, %lse_1 = kiln.attention %94, %99, %104 {causal, scale = 5.000000e-01 : f64} : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
  %105 = kiln.transpose %result_0, permutation = [0, 2, 1, 3] : tensor<2x2x4x4xf32>
  %106 = kiln.reshape %105 : (tensor<2x4x2x4xf32>) -> tensor<8x8xf32>
  %107 = kiln.matmul %106, %arg24 : tensor<8x8xf32>, tensor<8x8xf32>
  %108 = kiln.add %73, %107 : tensor<8x8xf32>
  %109 = kiln.broadcast_in_dim %arg25, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %110 = kiln.add %108, %109 : tensor<8x8xf32>
  %111 = kiln.reduce_mean %110, dims = [1] : tensor<8x8xf32>
  %112 = kiln.reshape %111 : (tensor<8xf32>) -> tensor<8x1xf32>
  %113 = kiln.broadcast_in_dim %112, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x8xf32>
  %114 = kiln.sub %110, %113 : tensor<8x8xf32>
  %115 = kiln.mul %114, %114 : tensor<8x8xf32>
  %116 = kiln.reduce_mean %115, dims = [1] : tensor<8x8xf32>
  %117 = kiln.reshape %116 : (tensor<8xf32>) -> tensor<8x1xf32>
  %118 = kiln.constant dense<9.99999974E-6> : tensor<8x1xf32>
  %119 = kiln.add %117, %118 : tensor<8x1xf32>
  %120 = kiln.rsqrt %119 : tensor<8x1xf32>
  %121 = kiln.broadcast_in_dim %120, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x8xf32>
  %122 = kiln.mul %114, %121 : tensor<8x8xf32>
  %123 = kiln.broadcast_in_dim %arg26, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %124 = kiln.mul %122, %123 : tensor<8x8xf32>
  %125 = kiln.broadcast_in_dim %arg27, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %126 = kiln.add %124, %125 : tensor<8x8xf32>
  %127 = kiln.matmul %126, %arg28 : tensor<8x8xf32>, tensor<8x32xf32>
  %128 = kiln.broadcast_in_dim %arg29, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %129 = kiln.add %127, %128 : tensor<8x32xf32>
  %130 = kiln.constant dense<4.471500e-02> : tensor<8x32xf32>
  %131 = kiln.mul %130, %129 : tensor<8x32xf32>
  %132 = kiln.mul %131, %129 : tensor<8x32xf32>
  %133 = kiln.mul %132, %129 : tensor<8x32xf32>
  %134 = kiln.add %129, %133 : tensor<8x32xf32>
  %135 = kiln.constant dense<0.797884583> : tensor<8x32xf32>
  %136 = kiln.mul %135, %134 : tensor<8x32xf32>
  %137 = kiln.constant dense<5.000000e-01> : tensor<8x32xf32>
  %138 = kiln.mul %137, %129 : tensor<8x32xf32>
  %139 = kiln.tanh %136 : tensor<8x32xf32>
  %140 = kiln.constant dense<1.000000e+00> : tensor<8x32xf32>
  %141 = kiln.add %140, %139 : tensor<8x32xf32>
  %142 = kiln.mul %138, %141 : tensor<8x32xf32>
  %143 = kiln.matmul %142, %arg30 : tensor<8x32xf32>, tensor<32x8xf32>
  %144 = kiln.add %110, %143 : tensor<8x8xf32>
  %145 = kiln.broadcast_in_dim %arg31, dims = [1] : (tensor<8xf32>) -> tensor<8x8xf32>
  %146 = kiln.add %144, %145 : tensor<8x8xf32>
  %147 = kiln.reshape %arg33 : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %148 = kiln.sub %146, %147 : tensor<8x8xf32>
  %149 = kiln.mul %148, %148 : tensor<8x8xf32>
  %150 = kiln.reduce_mean %149, dims = [0, 1] : tensor<8x8xf32>
  return %150 : tensor<f32>
}
