//===- EvaluatorMessages.h - How evaluator errors name places --*- C++ -*-===//
//
// Shared by the reference evaluator and its simulated ranks, so that both
// name a source location the same way in their messages.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_EVALUATOR_EVALUATORMESSAGES_H
#define KILN_COMPILER_EVALUATOR_EVALUATORMESSAGES_H

#include "kiln/Compiler/HostTensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Error.h"
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

using llvm::Twine;
using mlir::Operation;
using mlir::StringAttr;
using mlir::SymbolTable;
using mlir::Type;

/// The op's name, its symbol if it has one, and where it is.
inline std::string describeOp(Operation *op) {
  std::string text = op->getName().getStringRef().str();
  if (auto symbol =
          op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
    text += " @" + symbol.getValue().str();
  return text + " at " + describeLocation(op->getLoc());
}

inline llvm::Error makeError(const Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

/// The error for a failure at `op`: "<reason> in <op> at <location>".
inline llvm::Error opError(Operation *op, const Twine &reason) {
  return makeError(reason + " in " + describeOp(op));
}

/// Appends a line saying which enclosing region op the failure happened in,
/// so an error deep inside nested loops can be traced to its iteration.
inline llvm::Error addContext(llvm::Error error, Operation *op,
                              const Twine &where) {
  std::string message = llvm::toString(std::move(error));
  return makeError(message + "\n  " + where + " " + describeOp(op));
}

inline std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// A description of an input that may be malformed (no or an unsupported
/// element type), for the error that rejects it.
inline std::string describeInput(const HostTensor &input) {
  if (!input.elementType) {
    std::string text = "a tensor of shape [";
    for (auto [index, dim] : llvm::enumerate(input.shape))
      text += (index ? "," : "") + std::to_string(dim);
    return text + "] without an element type";
  }
  return typeString(input.getType());
}

} // namespace evaluator
} // namespace kiln

#endif // KILN_COMPILER_EVALUATOR_EVALUATORMESSAGES_H
