//===- DType.cpp - Element types, specs and their MLIR types --------------===//

#include "TraceState.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I1:
    return "i1";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "invalid";
}

bool isFloat(DType dtype) { return dtype == DType::F32 || dtype == DType::F64; }

bool isInteger(DType dtype) {
  return dtype == DType::I32 || dtype == DType::I64;
}

std::string shapeString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string TensorSpec::str() const {
  std::string s = name.empty() ? "" : name + ": ";
  return s + dtypeName(dtype) + shapeString(shape);
}

static TensorSpec makeSpec(DType dtype, Shape shape, std::string name) {
  TensorSpec spec;
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  spec.name = std::move(name);
  return spec;
}

TensorSpec f32(Shape shape, std::string name) {
  return makeSpec(DType::F32, std::move(shape), std::move(name));
}
TensorSpec f64(Shape shape, std::string name) {
  return makeSpec(DType::F64, std::move(shape), std::move(name));
}
TensorSpec i1(Shape shape, std::string name) {
  return makeSpec(DType::I1, std::move(shape), std::move(name));
}
TensorSpec i32(Shape shape, std::string name) {
  return makeSpec(DType::I32, std::move(shape), std::move(name));
}
TensorSpec i64(Shape shape, std::string name) {
  return makeSpec(DType::I64, std::move(shape), std::move(name));
}

namespace detail {

mlir::Type elementTypeOf(mlir::MLIRContext *context, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return mlir::Float32Type::get(context);
  case DType::F64:
    return mlir::Float64Type::get(context);
  case DType::I1:
    return mlir::IntegerType::get(context, 1);
  case DType::I32:
    return mlir::IntegerType::get(context, 32);
  case DType::I64:
    return mlir::IntegerType::get(context, 64);
  }
  return {};
}

DType dtypeOf(mlir::Type elementType) {
  if (elementType.isF64())
    return DType::F64;
  if (elementType.isInteger(1))
    return DType::I1;
  if (elementType.isInteger(32))
    return DType::I32;
  if (elementType.isInteger(64))
    return DType::I64;
  // The tracer only creates the five DTypes; f32 is the remaining one.
  return DType::F32;
}

mlir::RankedTensorType tensorType(mlir::MLIRContext *context,
                                  llvm::ArrayRef<int64_t> shape, DType dtype) {
  return mlir::RankedTensorType::get(shape, elementTypeOf(context, dtype));
}

mlir::RankedTensorType typeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType());
}

std::string typeString(mlir::Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

} // namespace detail
} // namespace kiln
