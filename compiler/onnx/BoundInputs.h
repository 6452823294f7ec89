//===- BoundInputs.h - Graph inputs given values on the command line -*- C++ -*-===//
//
// Turns the values of `--bind-input` (OnnxImportOptions::boundInputValues)
// into the serialized tensors that OnnxImportOptions::boundInputs holds,
// once the graph's inputs, and so their declared types, are known.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_BOUNDINPUTS_H
#define KILN_COMPILER_ONNX_BOUNDINPUTS_H

#include "kiln/Onnx/Import.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <string>

namespace kiln {
namespace onnx_import {

/// Adds to `tensors` (input name to serialized TensorProto) one tensor for
/// each entry of `values` (input name to a literal or a .npy path), typed
/// and shaped after the input of `graph` it names. On failure returns false
/// with `error` naming the input and what is wrong.
bool resolveBoundValues(const onnx::GraphProto &graph,
                        const std::map<std::string, std::string> &values,
                        std::map<std::string, std::string> &tensors,
                        std::string &error);

} // namespace onnx_import
} // namespace kiln

#endif // KILN_COMPILER_ONNX_BOUNDINPUTS_H
