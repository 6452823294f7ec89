//===- ModelFile.h - Reading and writing .kfb model files -------*- C++ -*-===//
//
// A .kfb file is a kiln program - a builtin module of func.func functions
// with kiln ops in their bodies - serialized as a FlatBuffer
// (ir/schema/kfb.fbs). It carries the static graph only: no lowering state
// and no source locations. Writing and reading back gives a module that
// prints exactly like the original.
//
// The reader never trusts the file: it checks the identifier and the format
// version, runs the FlatBuffers verifier, checks every operation, value
// reference, type, attribute and constant against the format's rules before
// it builds any IR, and finally runs the MLIR verifier. Every error names the
// function, the operation (by index, with the path through nested regions)
// and the problem. This header exposes no FlatBuffers types.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_MODELFILE_H
#define KILN_IR_MODELFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace kiln {

/// The format version this library writes. Readers accept any minor version
/// of their major version, because minor versions only add fields an older
/// reader may ignore, and refuse every other major version.
constexpr uint16_t kModelFileVersionMajor = 1;
constexpr uint16_t kModelFileVersionMinor = 1;

/// The four bytes at offset 4 of every .kfb file (the FlatBuffers file
/// identifier), by which tools tell a .kfb file from MLIR text.
constexpr llvm::StringLiteral kModelFileIdentifier = "KFBM";

/// The alignment of every constant's bytes within a file, so that a reader
/// that maps the file could use them in place.
constexpr size_t kModelFileBufferAlignment = 64;

/// Returns true if \p bytes carry the .kfb file identifier. This looks at the
/// identifier only; readModelFile decides whether the file is valid.
bool isModelFile(llvm::ArrayRef<uint8_t> bytes);

/// Serializes \p module into \p bytes. The module must hold only func.func
/// functions, whose bodies hold only kiln ops, func.return and func.call, on
/// statically shaped tensors of kiln's element types (ElementTypes.def), with
/// attributes of the kinds the format stores (integers, floats, strings,
/// units, i64 arrays, dense elements, function types, flat symbol
/// references, arrays and dictionaries of these). Anything else fails, with
/// \p error naming the offending operation. The result is deterministic.
bool writeModelFile(mlir::ModuleOp module, std::vector<uint8_t> &bytes,
                    std::string &error);

/// Parses the .kfb file in \p bytes into a new module in \p context, loading
/// the kiln and func dialects into it. On failure returns null, leaves no IR
/// behind, and describes the first problem in \p error. \p fileName, if not
/// empty, is recorded in the locations of the module's operations. The bytes
/// need no particular alignment.
mlir::OwningOpRef<mlir::ModuleOp> readModelFile(llvm::ArrayRef<uint8_t> bytes,
                                                mlir::MLIRContext *context,
                                                std::string &error,
                                                llvm::StringRef fileName = "");

} // namespace kiln

#endif // KILN_IR_MODELFILE_H
