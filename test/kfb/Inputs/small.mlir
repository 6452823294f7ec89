// A valid model for the malformed-file tests to damage. Its constant's bytes
// (1.0, 2.0, 3.0, 4.0 as f32) occur once in the .kfb file, which lets the
// generator find the constant's buffer.
func.func @f(%x: tensor<4xf32> {kiln.name = "x"}) -> tensor<4xf32> {
  %c = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = kiln.add %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}
