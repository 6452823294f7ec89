//===- Constants.cpp - Constants from host data, scalars and iota ---------===//
//
// Host data becomes a kiln.constant holding a DenseElementsAttr. Scalars are
// splats; a splat attribute stores one element whatever the shape, so a
// scalar operand costs nothing in the IR before it is broadcast.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <limits>

namespace kiln {
namespace detail {

int64_t checkedNumElements(const Shape &shape, const char *what,
                           SourceLoc loc) {
  int64_t n = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      fail(loc, std::string(what) + ": shape " + shapeString(shape) +
                    " has a negative dimension");
    if (dim != 0 && n > std::numeric_limits<int64_t>::max() / dim)
      fail(loc, std::string(what) + ": shape " + shapeString(shape) +
                    " has more than 2^63 elements");
    n *= dim;
  }
  return n;
}

/// `scalar` as an attribute of `dtype`, converted like kiln.cast would and
/// range-checked for integers (a wrapped literal is almost surely a bug).
static mlir::TypedAttr scalarAttr(TraceState &state, const Scalar &scalar,
                                  DType dtype, SourceLoc loc) {
  mlir::Type elementType = elementTypeOf(state.getContext(), dtype);
  if (isFloat(dtype))
    return mlir::FloatAttr::get(elementType, scalar.asDouble());

  int64_t value = scalar.asInt();
  if (scalar.isFloat()) {
    double d = scalar.asDouble();
    if (dtype == DType::I1) {
      value = d != 0;
    } else {
      if (std::isnan(d) || d >= 9223372036854775808.0 ||
          d < -9223372036854775808.0)
        fail(loc, "the scalar " + scalar.str() + " cannot be converted to " +
                      dtypeName(dtype));
      value = static_cast<int64_t>(d);
    }
  }
  if (dtype == DType::I1) {
    value = value != 0;
  } else if (dtype == DType::I32 &&
             (value < std::numeric_limits<int32_t>::min() ||
              value > std::numeric_limits<int32_t>::max())) {
    fail(loc, "the scalar " + scalar.str() +
                  " does not fit in i32; use an i64 tensor (kiln::cast(x, "
                  "kiln::DType::I64)) or a constant of the right dtype");
  } else if (dtype == DType::UI32 &&
             (value < std::numeric_limits<int32_t>::min() ||
              value > std::numeric_limits<uint32_t>::max())) {
    // Negative values down to -2^31 wrap around, as JAX's do (x - 1).
    fail(loc, "the scalar " + scalar.str() +
                  " does not fit in ui32 (-2147483648 ... 4294967295, "
                  "negative values wrapping around); use an i64 tensor "
                  "(kiln::cast(x, kiln::DType::I64))");
  }
  unsigned width = getElementTypeInfo(toElementType(dtype)).bitWidth;
  if (dtype == DType::UI32)
    value = static_cast<uint32_t>(value);
  return mlir::IntegerAttr::get(
      elementType, llvm::APInt(width, static_cast<uint64_t>(value),
                               /*isSigned=*/dtype != DType::I1 &&
                                   dtype != DType::UI32));
}

mlir::Value splat(TraceState &state, const Scalar &scalar, DType dtype,
                  llvm::ArrayRef<int64_t> shape, SourceLoc loc) {
  mlir::RankedTensorType type = tensorType(state.getContext(), shape, dtype);
  mlir::TypedAttr element = scalarAttr(state, scalar, dtype, loc);
  auto attr = mlir::DenseElementsAttr::get(type, mlir::Attribute(element));
  return state
      .create<mlir::kiln::ConstantOp>(loc, type,
                                      llvm::cast<mlir::ElementsAttr>(attr))
      .getResult();
}

/// A constant of `dtype` and `shape` holding `values` (one per element).
template <typename T>
static Tensor denseConstant(llvm::ArrayRef<T> values, const Shape &shape,
                            DType dtype, SourceLoc loc) {
  TraceState &state = TraceState::requireActive(loc, "kiln::constant");
  int64_t n = checkedNumElements(shape, "kiln::constant", loc);
  if (static_cast<int64_t>(values.size()) != n)
    fail(loc, "kiln::constant: " + std::to_string(values.size()) +
                  " values given for shape " + shapeString(shape) + " (" +
                  std::to_string(n) + " elements)");
  mlir::RankedTensorType type = tensorType(state.getContext(), shape, dtype);
  auto attr = mlir::DenseElementsAttr::get(type, values);
  return state.wrap(state
                        .create<mlir::kiln::ConstantOp>(
                            loc, type, llvm::cast<mlir::ElementsAttr>(attr))
                        .getResult());
}

} // namespace detail

using detail::denseConstant;

Tensor constant(const std::vector<float> &values, const Shape &shape,
                SourceLoc loc) {
  return denseConstant(llvm::ArrayRef<float>(values), shape, DType::F32, loc);
}
Tensor constant(const std::vector<double> &values, const Shape &shape,
                SourceLoc loc) {
  return denseConstant(llvm::ArrayRef<double>(values), shape, DType::F64, loc);
}
Tensor constant(const std::vector<int32_t> &values, const Shape &shape,
                SourceLoc loc) {
  return denseConstant(llvm::ArrayRef<int32_t>(values), shape, DType::I32,
                       loc);
}
Tensor constant(const std::vector<int64_t> &values, const Shape &shape,
                SourceLoc loc) {
  return denseConstant(llvm::ArrayRef<int64_t>(values), shape, DType::I64,
                       loc);
}
Tensor constant(const std::vector<uint32_t> &values, const Shape &shape,
                SourceLoc loc) {
  return denseConstant(llvm::ArrayRef<uint32_t>(values), shape, DType::UI32,
                       loc);
}
Tensor constant(const std::vector<bool> &values, const Shape &shape,
                SourceLoc loc) {
  // std::vector<bool> is packed; DenseElementsAttr wants one bool per byte.
  llvm::SmallVector<bool> bytes(values.begin(), values.end());
  return denseConstant(llvm::ArrayRef<bool>(bytes), shape, DType::I1, loc);
}

Tensor constant(const std::vector<float> &values, SourceLoc loc) {
  return constant(values, Shape{static_cast<int64_t>(values.size())}, loc);
}
Tensor constant(const std::vector<double> &values, SourceLoc loc) {
  return constant(values, Shape{static_cast<int64_t>(values.size())}, loc);
}
Tensor constant(const std::vector<int32_t> &values, SourceLoc loc) {
  return constant(values, Shape{static_cast<int64_t>(values.size())}, loc);
}
Tensor constant(const std::vector<int64_t> &values, SourceLoc loc) {
  return constant(values, Shape{static_cast<int64_t>(values.size())}, loc);
}
Tensor constant(const std::vector<uint32_t> &values, SourceLoc loc) {
  return constant(values, Shape{static_cast<int64_t>(values.size())}, loc);
}
Tensor constant(const std::vector<bool> &values, SourceLoc loc) {
  return constant(values, Shape{static_cast<int64_t>(values.size())}, loc);
}

Tensor constant(Scalar value, DType dtype, SourceLoc loc) {
  return full(Shape(), value, dtype, loc);
}

Tensor constant(Scalar value, SourceLoc loc) {
  return full(Shape(), value, value.getCppDType(), loc);
}

Tensor full(const Shape &shape, Scalar value, DType dtype, SourceLoc loc) {
  detail::TraceState &state =
      detail::TraceState::requireActive(loc, "kiln::full");
  detail::checkedNumElements(shape, "kiln::full", loc);
  return state.wrap(detail::splat(state, value, dtype, shape, loc));
}

Tensor zeros(const Shape &shape, DType dtype, SourceLoc loc) {
  return full(shape, 0, dtype, loc);
}

Tensor ones(const Shape &shape, DType dtype, SourceLoc loc) {
  return full(shape, 1, dtype, loc);
}

Tensor iota(const Shape &shape, int64_t axis, DType dtype, SourceLoc loc) {
  detail::TraceState &state =
      detail::TraceState::requireActive(loc, "kiln::iota");
  detail::checkedNumElements(shape, "kiln::iota", loc);
  if (shape.empty())
    detail::fail(loc, "kiln::iota needs a shape of rank >= 1");
  if (dtype == DType::I1)
    detail::fail(loc, "kiln::iota cannot produce i1 (bool) indices; use an "
                      "integer or float dtype");
  int64_t dim = detail::normalizeAxis(axis, static_cast<int64_t>(shape.size()),
                                      "kiln::iota", loc);
  mlir::RankedTensorType type =
      detail::tensorType(state.getContext(), shape, dtype);
  return state.wrap(state
                        .create<mlir::kiln::IotaOp>(loc, type,
                                                    static_cast<uint64_t>(dim))
                        .getResult());
}

} // namespace kiln
