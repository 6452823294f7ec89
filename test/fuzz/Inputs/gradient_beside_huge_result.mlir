// Seed 4162 of the generator, reduced: one result is a sum of unsigned
// values cast to float (the inputs' negative integers read as ui64, about
// 1.8e19), the other returns a float argument. Central differences of the
// contraction sum(dy * y), taken as one f64 sum, lost the argument's small
// change next to the huge result and read 0 where kiln-grad (rightly) gave
// dy; they are now taken result element by result element
// (DifferentialCheck.cpp, contractionChange). fuzz.gradient_beside_a_huge_result.
func.func @main(%arg0: tensor<4x31xf32>, %arg1: tensor<32x4x31xui64>) -> (tensor<32x1x31xf32>, tensor<4x31xf32>) {
  %0 = kiln.cast %arg1 : tensor<32x4x31xui64> to tensor<32x4x31xf32>
  %2 = kiln.reduce_sum %0, dims = [1] : tensor<32x4x31xf32>
  %3 = kiln.reshape %2 : (tensor<32x31xf32>) -> tensor<32x1x31xf32>
  return %3, %arg0 : tensor<32x1x31xf32>, tensor<4x31xf32>
}
