//===- Dequantized.h - ONNX's QDQ operands recognized in kiln IR -*- C++
//-*-===//
//
// A model in ONNX's QDQ form (DequantizeLinear before a Conv, MatMul or
// Gemm) reaches kiln IR as f32 ops on dequantized values: an 8-bit tensor
// cast to f32, minus its zero point, times its scale, and constant weights
// that the importer folded to f32. kiln-cpu-outline-dnnl-convs and
// kiln-cpu-quantized-matmuls recognize both forms to run the products on
// the 8-bit integers themselves (oneDNN's int8 kernels).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_DEQUANTIZED_H
#define KILN_BACKENDS_CPU_DEQUANTIZED_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace mlir::kiln {

/// The value of every element of `value` where it is a splat f32 constant
/// (the canonical form of a scalar broadcast to a shape).
std::optional<float> splatF32(Value value);

/// Whether `value` is a value of the 8-bit integer type `type`.
bool isValueOf(float value, IntegerType type);

/// An f32 value that is (cast(source) - zeroPoint) * scale, source 8-bit
/// integers (ONNX's DequantizeLinear per tensor).
struct Dequantized {
  Value source;
  int32_t zeroPoint = 0;
  float scale = 0;
};

/// `value` as a Dequantized: `kiln.mul` of `kiln.cast(x)` (or of
/// `kiln.sub` of it and a splat zero point, a value of x's type) by a
/// splat normal positive scale, x ui8 or i8.
std::optional<Dequantized> dequantized(Value value);

/// A scale s such that every value v of `values` is an int8 q times s in
/// f32 arithmetic, exactly (|q| <= 127), writing the qs to `q`; nullopt
/// where there is none (1 for all zeros).
std::optional<float> exactInt8Scale(llvm::ArrayRef<float> values, int8_t *q);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_DEQUANTIZED_H
