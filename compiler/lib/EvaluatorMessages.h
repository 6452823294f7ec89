//===- EvaluatorMessages.h - How evaluator errors name places --*- C++ -*-===//
//
// Shared by the reference evaluator and its simulated ranks, so that both
// name a source location the same way in their messages.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_LIB_EVALUATORMESSAGES_H
#define KILN_COMPILER_LIB_EVALUATORMESSAGES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {
namespace evaluator {

/// `file:line:col` for file locations, MLIR's printed form otherwise.
inline std::string describeLocation(mlir::Location loc) {
  if (auto fileLoc = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return (fileLoc.getFilename().getValue() + ":" +
            llvm::Twine(fileLoc.getLine()) + ":" +
            llvm::Twine(fileLoc.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << loc;
  return text;
}

} // namespace evaluator
} // namespace kiln

#endif // KILN_COMPILER_LIB_EVALUATORMESSAGES_H
