//===- DType.cpp - Element types in the C API ------------------------------===//
//
// kiln_dtype_t is numerically identical to kiln::format::DType, so values
// read from a module can be handed out without translation.
//
//===----------------------------------------------------------------------===//

#include "kiln/ModuleFormat.h"
#include "kiln/runtime.h"

using kiln::format::DType;

static_assert(KILN_DTYPE_F32 == static_cast<int>(DType::F32), "");
static_assert(KILN_DTYPE_F64 == static_cast<int>(DType::F64), "");
static_assert(KILN_DTYPE_I1 == static_cast<int>(DType::I1), "");
static_assert(KILN_DTYPE_I32 == static_cast<int>(DType::I32), "");
static_assert(KILN_DTYPE_I64 == static_cast<int>(DType::I64), "");
static_assert(KILN_DTYPE_F16 == static_cast<int>(DType::F16), "");
static_assert(KILN_DTYPE_BF16 == static_cast<int>(DType::BF16), "");
static_assert(KILN_DTYPE_BF16 + 1 == kiln::format::kNumDTypes, "");

namespace {

/// Maps an arbitrary caller-supplied value onto DType, sending everything
/// out of range to a value isValidDType rejects.
DType toFormat(kiln_dtype_t dtype) {
  unsigned value = static_cast<unsigned>(dtype);
  return static_cast<DType>(value < kiln::format::kNumDTypes
                                ? value
                                : kiln::format::kNumDTypes);
}

} // namespace

extern "C" {

size_t kiln_dtype_size(kiln_dtype_t dtype) {
  return kiln::format::dtypeSize(toFormat(dtype));
}

const char *kiln_dtype_name(kiln_dtype_t dtype) {
  return kiln::format::dtypeName(toFormat(dtype));
}

} // extern "C"
