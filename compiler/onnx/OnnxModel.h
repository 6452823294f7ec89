//===- OnnxModel.h - Reading, checking and shape-inferring a model -*- C++ -*-===//
//
// Everything that calls into ONNX's library proper (checker, shape
// inference, operator schemas). That library reports errors by throwing,
// so OnnxModel.cpp is the one translation unit of the importer built with
// exceptions; these functions catch everything and return messages.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_ONNXMODEL_H
#define KILN_COMPILER_ONNX_ONNXMODEL_H

#include "kiln/Onnx/Import.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace kiln {
namespace onnx_import {

/// Parses `bytes` into `model`, reads external data (from `modelDir`),
/// replaces input shapes by `options.inputShapes`, checks that every input
/// dim has a value, runs ONNX's checker and strict shape inference (with
/// data propagation). On failure returns false with `error` set.
bool loadModel(llvm::StringRef bytes, llvm::StringRef modelDir,
               const OnnxImportOptions &options, onnx::ModelProto &model,
               std::string &error);

/// `domain` as ONNX's schema registry names it: the default domain, which
/// models spell "" or "ai.onnx", is "".
inline std::string schemaDomain(const std::string &domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

/// Whether the importer has a translation for `opType` (default domain).
/// Defined with the OpTable (Importer.cpp).
bool isImportedOperator(const std::string &opType);

/// The version in which the operator `opType` of `domain` last changed at
/// or before opset `opsetVersion` (the schema whose semantics apply), or 0
/// where ONNX knows no such operator.
int schemaSinceVersion(const std::string &opType, const std::string &domain,
                       int opsetVersion);

/// Whether `attr` of `node` holds the value its schema (in the node's
/// domain, at that domain's opset `opsetVersion`) gives when the attribute
/// is left out, so that leaving it unread changes nothing.
bool holdsSchemaDefault(const onnx::NodeProto &node,
                        const onnx::AttributeProto &attr, int opsetVersion);

} // namespace onnx_import
} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXMODEL_H
