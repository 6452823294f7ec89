//===- DType.h - Element types and input specifications ---------*- C++ -*-===//
//
// The element types a traced program can use and the description of one
// input (TensorSpec). Kept free of MLIR types so that model code can declare
// its signature without touching MLIR. DType is expanded from
// kiln/ElementTypes.def: its values are the element type codes, so it
// converts to kiln::ElementType and the C API's kiln_dtype_t by a cast.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_DTYPE_H
#define KILN_TRACER_DTYPE_H

#include "kiln/ElementType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Element types of traced tensors: the rows of kiln/ElementTypes.def that
/// the tracer offers (TRACED is 1), valued by their codes.
enum class DType : uint8_t {
#define KILN_DTYPE_IF_TRACED_1(NAME, CODE) NAME = CODE,
#define KILN_DTYPE_IF_TRACED_0(NAME, CODE)
#define KILN_DTYPE(NAME, CODE, SPELLING, BYTES, BITS, CLASS, NPY, NPY_AS,      \
                   MLIR, COMPILED, TRACED, ONNX)                                     \
  KILN_DTYPE_IF_TRACED_##TRACED(NAME, CODE)
#include "kiln/ElementTypes.def"
#undef KILN_DTYPE_IF_TRACED_1
#undef KILN_DTYPE_IF_TRACED_0
};

/// The element type \p dtype stands for.
constexpr ElementType toElementType(DType dtype) {
  return static_cast<ElementType>(dtype);
}

/// The DType of \p type, or std::nullopt if the tracer does not offer it.
constexpr std::optional<DType> tracedDType(ElementType type) {
  const ElementTypeInfo *info = findElementType(type);
  if (!info || !info->traced)
    return std::nullopt;
  return static_cast<DType>(type);
}

/// A static shape; an empty shape is a rank-0 (scalar) tensor.
using Shape = std::vector<int64_t>;

/// "f32", "f64", "f16", "bf16", "i1", "i32", "i64" or "ui32".
inline const char *dtypeName(DType dtype) {
  return elementTypeName(toElementType(dtype));
}

/// True for F16, BF16, F32 and F64.
inline bool isFloat(DType dtype) {
  return isFloatElementType(toElementType(dtype));
}
/// True for I32, I64 and UI32 (not I1, which is the bool type).
inline bool isInteger(DType dtype) {
  return isIntegerElementType(toElementType(dtype));
}

/// One input or output of a traced function.
struct TensorSpec {
  DType dtype = DType::F32;
  Shape shape;
  /// Becomes the `kiln.name` attribute; empty means the default argN/outN.
  std::string name;

  /// E.g. `x: f32[3,4]`.
  std::string str() const;

  friend bool operator==(const TensorSpec &a, const TensorSpec &b) {
    return a.dtype == b.dtype && a.shape == b.shape && a.name == b.name;
  }
  friend bool operator!=(const TensorSpec &a, const TensorSpec &b) {
    return !(a == b);
  }
};

/// Shorthands for input specs: `kiln::f32({3, 4}, "x")`.
TensorSpec f32(Shape shape, std::string name = "");
TensorSpec f64(Shape shape, std::string name = "");
TensorSpec f16(Shape shape, std::string name = "");
TensorSpec bf16(Shape shape, std::string name = "");
TensorSpec i1(Shape shape, std::string name = "");
TensorSpec i32(Shape shape, std::string name = "");
TensorSpec i64(Shape shape, std::string name = "");
TensorSpec ui32(Shape shape, std::string name = "");

/// `[3,4]`, as used in error messages.
std::string shapeString(const Shape &shape);

} // namespace kiln

#endif // KILN_TRACER_DTYPE_H
