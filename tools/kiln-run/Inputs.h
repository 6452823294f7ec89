//===- Inputs.h - Turning command-line arguments into tensors ---*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_RUN_INPUTS_H
#define KILN_TOOLS_KILN_RUN_INPUTS_H

#include "kiln/runtime.h"

#include <string>

namespace kiln {
namespace run {

/// Creates the tensor for input \p index of \p function from \p argument: a
/// literal for a rank-0 input, otherwise a .npy file. The result matches the
/// input's signature exactly; any mismatch is an error naming the input and
/// the argument.
bool makeInput(const kiln_function_t *function, size_t index,
               const std::string &argument, kiln_tensor_t **out,
               std::string &error);

} // namespace run
} // namespace kiln

#endif // KILN_TOOLS_KILN_RUN_INPUTS_H
