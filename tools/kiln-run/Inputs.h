//===- Inputs.h - Turning command-line arguments into tensors ---*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_RUN_INPUTS_H
#define KILN_TOOLS_KILN_RUN_INPUTS_H

#include "kiln/runtime.h"

#include <string>

namespace kiln {
namespace run {

/// This rank's part of an input split between ranks (--shard-input): the
/// file holds the whole tensor, and rank `rank` keeps the `rank`-th of
/// `size` equal contiguous blocks along `dimension`.
struct InputShard {
  size_t dimension = 0;
  int64_t rank = 0;
  int64_t size = 1;
};

/// Creates the tensor for input \p index of \p function from \p argument: a
/// literal for a rank-0 input, otherwise a .npy file, of which only this
/// rank's block is kept when \p shard is given. The result matches the
/// input's signature exactly; any mismatch is an error naming the input and
/// the argument.
bool makeInput(const kiln_function_t *function, size_t index,
               const std::string &argument, kiln_tensor_t **out,
               std::string &error, const InputShard *shard = nullptr);

} // namespace run
} // namespace kiln

#endif // KILN_TOOLS_KILN_RUN_INPUTS_H
