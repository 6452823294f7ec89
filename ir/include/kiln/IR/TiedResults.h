//===- TiedResults.h - Donated arguments written by a result ----*- C++ -*-===//
//
// A public function may donate an argument's buffer to one of its results
// (JAX's donate_argnums, XLA's input/output aliases): the argument carries
// `kiln.tied_result = K`, result K has the argument's type, and the
// compiled code writes result K into the argument's buffer instead of a new
// one, so that a training step updates its parameters where they are
// instead of copying them into new arrays. The caller gives the buffer up:
// after the call it holds result K, and the runtime returns it as that
// output. Only the CPU backend honours the tie; elsewhere result K is a new
// buffer as usual.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_TIEDRESULTS_H
#define KILN_IR_TIEDRESULTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::kiln {

/// The argument attribute (an integer, the result's index) that ties a
/// donated argument to the result written into its buffer.
constexpr llvm::StringLiteral kTiedResultAttrName = "kiln.tied_result";

/// The same tie seen from the result's side, once the backend has written
/// the result into the argument (kiln-fresh-results): a result or out-param
/// attribute holding the argument's index.
constexpr llvm::StringLiteral kTiedArgumentAttrName = "kiln.tied_argument";

/// The result tied to argument `index` of `func`, if any.
std::optional<unsigned> tiedResult(func::FuncOp func, unsigned index);

/// Ties each argument of `func` in `donated` to the first result of the
/// same type that no earlier argument took. Returns the donated arguments
/// no result matched (they stay untied, so the call leaves them alone).
SmallVector<unsigned> tieDonatedArguments(func::FuncOp func,
                                          ArrayRef<unsigned> donated);

/// Checks `value`, the kiln.tied_result of argument `argIndex` of `op`: a
/// public function with a result of that index and of the argument's type
/// that no other argument is tied to.
LogicalResult verifyTiedResult(Operation *op, unsigned argIndex,
                               Attribute value);

} // namespace mlir::kiln

#endif // KILN_IR_TIEDRESULTS_H
