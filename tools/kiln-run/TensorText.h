//===- TensorText.h - Printing tensors and their types ----------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_RUN_TENSORTEXT_H
#define KILN_TOOLS_KILN_RUN_TENSORTEXT_H

#include "kiln/runtime.h"

#include <string>

namespace kiln {
namespace run {

/// "[2,3]"; "[]" for rank 0.
std::string formatShape(size_t rank, const int64_t *shape);

/// "f32[2,3]".
std::string formatType(kiln_dtype_t dtype, size_t rank, const int64_t *shape);

/// "name: f32[2,3]", or just the type for an unnamed tensor.
std::string formatSignature(const kiln_tensor_signature_t &signature);

/// The values of \p tensor nested in brackets as numpy prints them, on one
/// line, e.g. "[[1, 2], [3, 4]]"; a bare value for rank 0.
std::string formatValues(kiln_tensor_t *tensor);

} // namespace run
} // namespace kiln

#endif // KILN_TOOLS_KILN_RUN_TENSORTEXT_H
