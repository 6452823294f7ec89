//===- OpArity.h - Storable ops and their arity -----------------*- C++ -*-===//
//
// The format stores operations generically, by name, so the reader needs to
// know which names it may accept and how many operands, results and regions
// each takes before it creates anything. Both come from the registered ops
// themselves - their dialect and the structural traits ODS attaches
// (ZeroOperands, NOperands<2>, AtLeastNOperands<1>, VariadicResults, ...) -
// so that the format follows the kiln dialect without a table to keep in
// sync.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_KFB_OPARITY_H
#define KILN_LIB_KFB_OPARITY_H

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kiln {
namespace modelfile {

/// How many operands, results or regions an op takes: exactly `minimum`, or
/// at least `minimum` if `variadic`.
struct Arity {
  unsigned minimum = 0;
  bool variadic = false;

  bool accepts(size_t count) const {
    return variadic ? count >= minimum : count == minimum;
  }
  /// "2 operands", "at least 1 operand", "no regions", ...
  std::string describe(llvm::StringRef noun) const;
};

struct OpArity {
  Arity operands;
  Arity results;
  Arity regions;
};

/// Returns true if the format may store \p name as an operation inside a
/// function: any registered kiln op, func.return and func.call. (func.func is
/// stored as a Function, and nothing else is storable.)
bool isStorableOp(mlir::OperationName name);

/// Returns the registered op called \p name if it is storable.
std::optional<mlir::RegisteredOperationName>
lookupStorableOp(llvm::StringRef name, mlir::MLIRContext *context);

/// Reads the arity of \p name off its structural traits. Returns nullopt for
/// an op whose traits do not pin down its operand, result and region counts,
/// or that has successors (which the format cannot express).
std::optional<OpArity> getOpArity(mlir::RegisteredOperationName name);

} // namespace modelfile
} // namespace kiln

#endif // KILN_LIB_KFB_OPARITY_H
