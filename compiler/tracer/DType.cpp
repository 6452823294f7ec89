//===- DType.cpp - Element types, specs and their MLIR types --------------===//

#include "TraceState.h"

#include "kiln/IR/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

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
TensorSpec f16(Shape shape, std::string name) {
  return makeSpec(DType::F16, std::move(shape), std::move(name));
}
TensorSpec bf16(Shape shape, std::string name) {
  return makeSpec(DType::BF16, std::move(shape), std::move(name));
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
TensorSpec ui32(Shape shape, std::string name) {
  return makeSpec(DType::UI32, std::move(shape), std::move(name));
}

namespace detail {

mlir::Type elementTypeOf(mlir::MLIRContext *context, DType dtype) {
  return getMlirElementType(toElementType(dtype), context);
}

DType dtypeOf(mlir::Type elementType) {
  if (std::optional<ElementType> type = classifyElementType(elementType))
    if (std::optional<DType> dtype = tracedDType(*type))
      return *dtype;
  // The tracer only creates types it offers; f32 is the fallback.
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
