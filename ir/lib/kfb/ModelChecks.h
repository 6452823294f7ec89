//===- ModelChecks.h - Checking a .kfb model before building IR -*- C++ -*-===//
//
// The semantic checks of the reader. They run on a file the FlatBuffers
// verifier has accepted and establish everything IR construction relies on:
// every op is a storable registered op with the operand, result and region
// counts its traits require and inherent attributes of the kinds its ODS
// definition requires; every operand refers to a value that is defined and
// visible at the use; every type is a static tensor of a known dtype; every
// attribute is well formed, and every constant's buffer exists and has the
// size its type needs. Nothing in the file may be referenced twice, so the
// work is linear in the file's size.
//
// The result is the model decoded into MLIR types and attributes (which are
// context-owned values, not IR), from which the builder creates operations
// without any further checks.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_KFB_MODELCHECKS_H
#define KILN_LIB_KFB_MODELCHECKS_H

#include "kfb_generated.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace modelfile {

struct CheckedOperation;

struct CheckedBlock {
  llvm::SmallVector<mlir::Type> argumentTypes;
  std::vector<CheckedOperation> operations;
};

struct CheckedRegion {
  std::vector<CheckedBlock> blocks;
};

struct CheckedOperation {
  CheckedOperation(mlir::OperationName name, mlir::Location loc)
      : name(name), loc(loc) {}

  mlir::OperationName name;
  mlir::Location loc;
  /// Value numbers (see kfb.fbs), each visible at this operation.
  llvm::SmallVector<uint32_t, 4> operands;
  llvm::SmallVector<mlir::Type, 1> resultTypes;
  /// Inherent and discardable attributes together.
  mlir::DictionaryAttr attributes;
  std::vector<CheckedRegion> regions;
};

struct CheckedFunction {
  explicit CheckedFunction(mlir::Location loc) : loc(loc) {}

  mlir::Location loc;
  std::string name;
  /// Null if the function states no visibility.
  mlir::StringAttr visibility;
  mlir::FunctionType type;
  /// One (possibly empty) dictionary per input and per output.
  llvm::SmallVector<mlir::DictionaryAttr> argumentAttributes;
  llvm::SmallVector<mlir::DictionaryAttr> resultAttributes;
  mlir::DictionaryAttr attributes;
  /// Absent for a declaration.
  std::optional<CheckedRegion> body;
  /// How many values the body defines.
  uint32_t numValues = 0;
};

struct CheckedModel {
  explicit CheckedModel(mlir::Location loc) : loc(loc) {}

  mlir::Location loc;
  /// Null if the module has no name.
  mlir::StringAttr name;
  mlir::DictionaryAttr attributes;
  std::vector<CheckedFunction> functions;
  /// The position of every function and operation location in a walk of
  /// the model in file order, so that when several ops fail the MLIR
  /// verifier (which may run in parallel) the first in the file is reported.
  llvm::DenseMap<const void *, unsigned> locationOrder;
};

/// Checks \p model, a file the FlatBuffers verifier accepted that starts at
/// \p base, and decodes it into \p context (whose kiln and func dialects
/// must be loaded). Returns nullopt with \p error naming the place and the
/// problem for the first violation found.
std::optional<CheckedModel> checkModel(const kfb::Model &model,
                                       const uint8_t *base,
                                       mlir::MLIRContext *context,
                                       llvm::StringRef fileName,
                                       std::string &error);

} // namespace modelfile
} // namespace kiln

#endif // KILN_LIB_KFB_MODELCHECKS_H
