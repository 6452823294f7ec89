//===- ElementTypes.cpp - .kfb element types and MLIR types ---------------===//

#include "ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

namespace kiln {
namespace modelfile {

std::optional<kfb::DType> toDType(mlir::Type type) {
  if (type.isF32())
    return kfb::DType::F32;
  if (type.isF64())
    return kfb::DType::F64;
  if (type.isF16())
    return kfb::DType::F16;
  if (type.isBF16())
    return kfb::DType::BF16;
  if (type.isSignlessInteger(1))
    return kfb::DType::I1;
  if (type.isSignlessInteger(32))
    return kfb::DType::I32;
  if (type.isSignlessInteger(64))
    return kfb::DType::I64;
  return std::nullopt;
}

mlir::Type toMlirType(kfb::DType dtype, mlir::MLIRContext *context) {
  switch (dtype) {
  case kfb::DType::F32:
    return mlir::Float32Type::get(context);
  case kfb::DType::F64:
    return mlir::Float64Type::get(context);
  case kfb::DType::I1:
    return mlir::IntegerType::get(context, 1);
  case kfb::DType::I32:
    return mlir::IntegerType::get(context, 32);
  case kfb::DType::I64:
    return mlir::IntegerType::get(context, 64);
  case kfb::DType::F16:
    return mlir::Float16Type::get(context);
  case kfb::DType::BF16:
    return mlir::BFloat16Type::get(context);
  }
  return mlir::Type();
}

size_t storageSize(kfb::DType dtype) {
  switch (dtype) {
  case kfb::DType::I1:
    return 1;
  case kfb::DType::F16:
  case kfb::DType::BF16:
    return 2;
  case kfb::DType::F32:
  case kfb::DType::I32:
    return 4;
  case kfb::DType::F64:
  case kfb::DType::I64:
    return 8;
  }
  return 0;
}

bool isFloat(kfb::DType dtype) {
  return dtype == kfb::DType::F16 || dtype == kfb::DType::BF16 ||
         dtype == kfb::DType::F32 || dtype == kfb::DType::F64;
}

std::string dtypeName(kfb::DType dtype) {
  switch (dtype) {
  case kfb::DType::F32:
    return "f32";
  case kfb::DType::F64:
    return "f64";
  case kfb::DType::I1:
    return "i1";
  case kfb::DType::I32:
    return "i32";
  case kfb::DType::I64:
    return "i64";
  case kfb::DType::F16:
    return "f16";
  case kfb::DType::BF16:
    return "bf16";
  }
  return "<invalid " + std::to_string(static_cast<unsigned>(dtype)) + ">";
}

} // namespace modelfile
} // namespace kiln
