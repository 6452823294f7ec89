//===- DType.cpp - Element type properties ---------------------------------===//
//
// Names and sizes of the element types a module can describe.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"

namespace kiln {
namespace format {

bool isValidDType(DType dtype) {
  return static_cast<unsigned>(dtype) < kNumDTypes;
}

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
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "invalid";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::I1:
    return 1;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  return 0;
}

} // namespace format
} // namespace kiln
