//===- HostTensor.h - Dense tensors in host memory --------------*- C++ -*-===//
//
// HostTensor is the value type of the reference evaluator: a dense row-major
// tensor whose elements live in a std::vector. Float elements are kept as
// doubles that always hold a value representable in the element type, so
// arithmetic can be done in double and rounded once per operation, which is
// how the evaluator reproduces the results of native f16/bf16/f32 code.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_HOSTTENSOR_H
#define KILN_COMPILER_HOSTTENSOR_H

#include "kiln/IR/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// The element types a kiln tensor can have (kiln/ElementTypes.def).
/// Switching over this is cheaper and easier to read than repeated isa<>
/// checks on mlir::Type in inner loops; kiln::classifyElementType
/// (kiln/IR/ElementTypes.h) gives the kind of an mlir::Type.
using ElementKind = ElementType;

/// True for the float kinds (f16, bf16, f32 and f64).
inline bool isFloatKind(ElementKind kind) { return isFloatElementType(kind); }

/// Size of one element in the native byte layout (see HostTensor::toBytes).
inline int64_t elementByteSize(ElementKind kind) {
  return static_cast<int64_t>(elementTypeSize(kind));
}

/// Rounds `value` to the nearest value of the float type `kind` (ties to
/// even), overflowing to infinity and keeping NaN, infinities and the sign of
/// zero. f64 values are returned unchanged.
double roundToFloat(ElementKind kind, double value);

/// Wraps `value` to the integer type `kind` in two's complement. i1 holds a
/// truth value, so any nonzero value becomes 1. Unsigned types below 64 bits
/// are zero-extended, so their values are nonnegative and compare, divide
/// and convert correctly as int64_t; ui64 keeps its bit pattern, and the
/// evaluator reads it as uint64_t where the sign matters.
int64_t wrapToInt(ElementKind kind, int64_t value);

/// A dense row-major tensor in host memory.
///
/// Exactly one of `f` and `i` holds the elements: `f` for float element
/// types, `i` for integer ones. Every stored value is already rounded or
/// wrapped to the element type (see roundToFloat and wrapToInt); code that
/// writes the vectors directly must keep that invariant.
class HostTensor {
public:
  mlir::Type elementType;
  std::vector<int64_t> shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  HostTensor() = default;

  /// A zero-filled tensor. `elementType` must be one classifyElementType
  /// accepts and every dimension of `shape` must be >= 0.
  HostTensor(mlir::Type elementType, llvm::ArrayRef<int64_t> shape);

  /// A float tensor holding `values` (row-major), each rounded to
  /// `elementType`. `values` must have one entry per element.
  static HostTensor fromFloats(mlir::Type elementType,
                               llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<double> values);

  /// An integer tensor holding `values` (row-major), each wrapped to
  /// `elementType`. `values` must have one entry per element.
  static HostTensor fromInts(mlir::Type elementType,
                             llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<int64_t> values);

  /// Reads a tensor from the native byte layout that compiled code uses:
  /// f32 as float, f64 as double, f16 and bf16 as their 16-bit patterns,
  /// i1 as one byte (nonzero reads as 1), the other integers as their C
  /// types (int8_t ... int64_t, uint8_t ... uint64_t).
  /// `data` need not be aligned.
  static HostTensor fromBytes(mlir::Type elementType,
                              llvm::ArrayRef<int64_t> shape, const void *data);

  /// Writes the elements in the layout fromBytes reads; `data` must have
  /// room for byteSize() bytes and need not be aligned.
  void toBytes(void *data) const;

  int64_t numElements() const;
  int64_t byteSize() const;
  ElementKind kind() const;
  bool isFloat() const;

  /// The builtin tensor type this value inhabits.
  mlir::RankedTensorType getType() const;

  /// Element `index` (row-major) as a double, whatever the element type.
  double getAsDouble(int64_t index) const;

  /// A readable rendering such as `tensor<2xf32> [1, 2.5]`, for error
  /// messages and test failure output.
  std::string toString() const;
};

/// Row-major strides of `shape`: the distance in elements between
/// neighbours along each dimension.
std::vector<int64_t> computeStrides(llvm::ArrayRef<int64_t> shape);

/// Number of elements of a tensor of `shape`.
int64_t computeNumElements(llvm::ArrayRef<int64_t> shape);

} // namespace kiln

#endif // KILN_COMPILER_HOSTTENSOR_H
