//===- DType.h - Element types and input specifications ---------*- C++ -*-===//
//
// The element types a traced program can use and the description of one
// input (TensorSpec). Kept free of MLIR types so that model code can declare
// its signature without touching MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_DTYPE_H
#define KILN_TRACER_DTYPE_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Element types of traced tensors: the ones the CPU backend compiles.
enum class DType { F32, F64, I1, I32, I64 };

/// A static shape; an empty shape is a rank-0 (scalar) tensor.
using Shape = std::vector<int64_t>;

/// "f32", "f64", "i1", "i32" or "i64".
const char *dtypeName(DType dtype);

/// True for F32 and F64.
bool isFloat(DType dtype);
/// True for I32 and I64 (not I1, which is the bool type).
bool isInteger(DType dtype);

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
TensorSpec i1(Shape shape, std::string name = "");
TensorSpec i32(Shape shape, std::string name = "");
TensorSpec i64(Shape shape, std::string name = "");

/// `[3,4]`, as used in error messages.
std::string shapeString(const Shape &shape);

} // namespace kiln

#endif // KILN_TRACER_DTYPE_H
