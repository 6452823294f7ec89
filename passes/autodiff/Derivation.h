//===- Derivation.h - What every derived function starts from ---*- C++ -*-===//
//
// The request checks and the starting clone shared by reverse mode
// (Gradient.cpp) and forward mode (JvpFunction.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_AUTODIFF_DERIVATION_H
#define KILN_PASSES_AUTODIFF_DERIVATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace kiln {
namespace autodiff {

/// The argument and result attribute that names a value in a signature.
inline constexpr llvm::StringLiteral kNameAttr = "kiln.name";

/// `<prefix><name>` as the name attribute if `attrs` names the value (a
/// derived argument or result named after its primal one), else an empty
/// dictionary.
DictionaryAttr derivedNameAttrs(MLIRContext *context, DictionaryAttr attrs,
                                StringRef prefix);

/// Checks that `f` can be differentiated into a new function `name`: f has
/// a single-block body and lives in a module where `name` is free, and
/// every `wrt` index names a distinct float tensor argument. Sets
/// `arguments` to the differentiated argument indices: `wrt`, or every
/// float argument when `wrt` is empty. Errors are diagnostics at f.
LogicalResult checkDerivationRequest(func::FuncOp f, ArrayRef<unsigned> wrt,
                                     StringRef name,
                                     SmallVectorImpl<unsigned> &arguments);

/// A clone of `f` named `name`, inserted right after it, whose func.calls
/// of functions with a body are replaced by the callees' bodies (nested
/// calls too), so that the derivative rules see every op. Calls of
/// declarations stay. Fails, with nothing inserted, on calls nested too
/// deep (recursion).
FailureOr<func::FuncOp> cloneForDerivation(func::FuncOp f, StringRef name);

} // namespace autodiff
} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_AUTODIFF_DERIVATION_H
