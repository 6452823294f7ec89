//===- Derivation.h - What every derived function starts from ---*- C++ -*-===//
//
// The request checks and the starting clone shared by the derived
// functions: reverse mode (autodiff/Gradient.cpp), forward mode
// (autodiff/JvpFunction.cpp) and batching (batching/VmapFunction.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_COMMON_DERIVATION_H
#define KILN_PASSES_COMMON_DERIVATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace kiln {

/// The argument and result attribute that names a value in a signature.
inline constexpr llvm::StringLiteral kNameAttr = "kiln.name";

/// `<prefix><name>` as the name attribute if `attrs` names the value (a
/// derived argument or result named after its primal one), else an empty
/// dictionary.
DictionaryAttr derivedNameAttrs(MLIRContext *context, DictionaryAttr attrs,
                                StringRef prefix);

/// Checks that a new function `name` can be derived from `f`: f has a
/// single-block body and lives in a module where `name` is free. Errors
/// are diagnostics at f, "cannot <verb> @f: ...".
LogicalResult checkDerivable(func::FuncOp f, StringRef name, StringRef verb);

/// A clone of `f` named `name`, inserted right after it, whose func.calls
/// of functions with a body are replaced by the callees' bodies (nested
/// calls too), so that the derivative rules see every op. Calls of
/// declarations stay. Fails, with nothing inserted, on calls nested too
/// deep (recursion).
FailureOr<func::FuncOp> cloneForDerivation(func::FuncOp f, StringRef name);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_COMMON_DERIVATION_H
