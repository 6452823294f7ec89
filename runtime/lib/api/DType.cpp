//===- DType.cpp - Element types in the C API -----------------------------===//
//
// kiln_dtype_t is expanded from kiln/ElementTypes.def like kiln::ElementType,
// so values read from a module can be handed out without translation. The
// checks below keep the two expansions equal.
//
//===----------------------------------------------------------------------===//

#include "kiln/ElementType.h"
#include "kiln/runtime.h"

using kiln::ElementType;

#define KILN_DTYPE(NAME, CODE, ...)                                            \
  static_assert(KILN_DTYPE_##NAME == static_cast<int>(ElementType::NAME) &&    \
                    KILN_DTYPE_##NAME == (CODE),                               \
                "kiln_dtype_t differs from ElementTypes.def");
#include "kiln/ElementTypes.def"

/// The row of a caller-supplied value, or nullptr. The range check comes
/// before any cast: a cast to ElementType would truncate to 8 bits.
static const kiln::ElementTypeInfo *findRow(kiln_dtype_t dtype) {
  unsigned code = static_cast<unsigned>(dtype);
  return code < kiln::kNumElementTypes ? &kiln::kElementTypes[code] : nullptr;
}

extern "C" {

size_t kiln_dtype_size(kiln_dtype_t dtype) {
  const kiln::ElementTypeInfo *row = findRow(dtype);
  return row ? row->byteSize : 0;
}

const char *kiln_dtype_name(kiln_dtype_t dtype) {
  const kiln::ElementTypeInfo *row = findRow(dtype);
  return row ? row->name : "invalid";
}

} // extern "C"
