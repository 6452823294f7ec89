//===- Import.h - ONNX models to kiln IR ------------------------*- C++ -*-===//
//
// The ONNX front end: reads a model with ONNX's own protobuf classes, runs
// ONNX's checker and shape inference on it, and turns its main graph into
// one func.func of kiln ops. Control flow (If, Loop, Scan) becomes
// kiln.cond, kiln.while and kiln.for; initializers become constants. kiln
// is statically shaped, so every symbolic input dimension needs a value
// (OnnxImportOptions::inputShapes).
//
// Errors never throw and never abort: a bad file, a graph the checker
// rejects, an unsupported op or attribute each return a null module and a
// message that says what is wrong and where (the node's name, its op and
// opset).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ONNX_IMPORT_H
#define KILN_ONNX_IMPORT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

struct OnnxImportOptions {
  /// Full shapes for graph inputs, by input name. They replace the shape in
  /// the model, so they give values to symbolic dims (`batch`, `seq`) and
  /// must agree with every fixed dim.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Graph inputs fixed to values, by name: each a serialized ONNX
  /// TensorProto (the format of ONNX's input_N.pb test data). A bound input
  /// becomes a constant and leaves the function's arguments, so the inputs
  /// that decide shapes (a Reshape's shape, a Loop's trip count) can be
  /// given at compile time: the model is specialized to those values.
  std::map<std::string, std::string> boundInputs;
  /// Graph inputs fixed to values as `--bind-input` gives them, by name:
  /// numbers separated by commas, of the input's declared element type, in
  /// the input's declared shape (one number for a rank-0 input); or the path
  /// of a .npy file (a name ending in .npy), whose type and shape must agree
  /// with the declaration. Bound like `boundInputs`.
  std::map<std::string, std::string> boundInputValues;
  /// The name of the function that holds the main graph. Empty: the graph's
  /// name, made a valid identifier, or `main` when it has none.
  std::string functionName;
};

/// Parses an `--input-shape` value, `NAME=1x3x224x224` (`NAME=` for a
/// rank-0 input). The name may itself contain '='; the shape follows the
/// last one.
bool parseOnnxInputShape(llvm::StringRef spec, std::string &name,
                         std::vector<int64_t> &shape, std::string &error);

/// Parses a `--bind-input` value, `NAME=VALUE` (e.g. `shape=1,3,224,224`)
/// or `NAME=FILE.npy`, at its first '='. The value is checked against the
/// input when the model is read (OnnxImportOptions::boundInputValues).
bool parseOnnxBoundInput(llvm::StringRef spec, std::string &name,
                         std::string &value, std::string &error);

/// Fills `options` from the values of the tools' `--input-shape` and
/// `--bind-input` options; false with `error` set for a malformed one.
bool parseOnnxImportOptions(const std::vector<std::string> &inputShapeSpecs,
                            const std::vector<std::string> &bindInputSpecs,
                            OnnxImportOptions &options, std::string &error);

/// Imports the model in file `path`. External-data tensors are read from
/// files in the model's folder; a location that leaves it is rejected.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext &context,
               const OnnxImportOptions &options, std::string &error);

/// Imports a serialized ModelProto. `modelDir` is the folder external data
/// is read from; with an empty `modelDir` a model with external data is an
/// error. `sourceName` names the model in locations and messages.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxBytes(llvm::StringRef bytes, llvm::StringRef modelDir,
                llvm::StringRef sourceName, mlir::MLIRContext &context,
                const OnnxImportOptions &options, std::string &error);

/// Reads a serialized ONNX TensorProto (such as the input_N.pb and
/// output_N.pb files of ONNX's test data) as a literal; `name` receives the
/// tensor's name. Returns null with `error` set for bytes that are not a
/// tensor or a tensor of a type kiln does not have.
mlir::DenseElementsAttr readOnnxTensor(llvm::StringRef bytes,
                                       mlir::MLIRContext &context,
                                       std::string &name, std::string &error);

} // namespace kiln

#endif // KILN_ONNX_IMPORT_H
