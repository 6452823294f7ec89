//===- Outputs.h - Saving function outputs ----------------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_RUN_OUTPUTS_H
#define KILN_TOOLS_KILN_RUN_OUTPUTS_H

#include "kiln/runtime.h"

#include <string>
#include <vector>

namespace kiln {
namespace run {

/// The name shown for output \p index: its signature name, or out<index>.
std::string outputDisplayName(const kiln_function_t *function, size_t index);

/// File names (without ".npy") for all outputs of \p function. A signature
/// name is used only if it is a plain, unique file name; names come from the
/// module, and must not be able to place files outside the output directory.
std::vector<std::string> outputFileStems(const kiln_function_t *function);

/// Saves \p tensor to \p path as .npy; bf16 is widened to f32.
bool saveTensor(const std::string &path, kiln_tensor_t *tensor,
                std::string &error);

/// Creates \p directory unless it exists already.
bool ensureDirectory(const std::string &directory, std::string &error);

} // namespace run
} // namespace kiln

#endif // KILN_TOOLS_KILN_RUN_OUTPUTS_H
