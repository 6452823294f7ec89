// RUN: kiln-opt %s --kiln-autocast="dtype=f64" -verify-diagnostics

// expected-error @+1 {{kiln-autocast: unknown dtype 'f64' (expected bf16 or f16)}}
module {
  func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
    return %x : tensor<2x2xf32>
  }
}
