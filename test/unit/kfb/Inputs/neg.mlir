// One function of one op with a named argument: the smallest model, which
// the malformed-file tests corrupt field by field.
func.func @f(%x: tensor<4xf32> {kiln.name = "x"}) -> tensor<4xf32> {
  %y = kiln.neg %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
