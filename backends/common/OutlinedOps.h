//===- OutlinedOps.h - Ops set aside as calls until buffers exist -*- C++ -*-===//
//
// A backend that computes an op by a kernel of its own (a support library
// call on the CPU, a hand-built GPU kernel on CUDA) takes the op aside
// while it is still a kiln op - its description (shapes, attributes) is
// whole there - and puts the kernel in once bufferization has given it
// buffers: the op moves into a private function marked with an attribute,
// a call takes its place, and a later pass replaces the calls of marked
// functions (AttentionCalls.cpp, ConvToDnnl.cpp, cuda/FlashAttention.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_OUTLINEDOPS_H
#define KILN_BACKENDS_COMMON_OUTLINEDOPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {

/// The calls in `module` of functions that carry the attribute `mark`,
/// with their callees.
inline SmallVector<std::pair<func::CallOp, func::FuncOp>>
callsOfMarkedFunctions(ModuleOp module, StringRef mark) {
  SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
  module.walk([&](func::CallOp call) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (callee && callee->hasAttr(mark))
      calls.emplace_back(call, callee);
  });
  return calls;
}

/// Replaces `op` (tensor operands and results) by a call of a new private
/// function `name` (made unique in `symbols`) that a later pass replaces by
/// a kernel reading every operand: its arguments are marked read-only for
/// bufferization (its body reads none of them, and a caller could
/// otherwise reuse an operand's buffer before the call), and its body only
/// allocates the results, so that bufferization gives each call its result
/// buffers. (The op itself in the body would be compiled, as whatever it
/// decomposes to, only to be erased.) Returns the function.
/// The call passes `operands` (by default the op's own).
inline func::FuncOp outlineWithPlaceholderBody(Operation *op, ValueRange operands,
                                               StringRef name,
                                               SymbolTable &symbols) {
  Location loc = op->getLoc();
  ModuleOp module = op->getParentOfType<ModuleOp>();
  OpBuilder builder(op->getContext());
  builder.setInsertionPointToEnd(module.getBody());
  auto function = builder.create<func::FuncOp>(
      loc, name,
      builder.getFunctionType(TypeRange(operands), op->getResultTypes()));
  function.setPrivate();
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    function.setArgAttr(i, "bufferization.access",
                        builder.getStringAttr("read"));
  symbols.insert(function); // makes the name unique
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToStart(body);
  SmallVector<Value> results;
  for (Type type : op->getResultTypes()) {
    auto tensor = cast<RankedTensorType>(type);
    results.push_back(builder.create<tensor::EmptyOp>(
        loc, tensor.getShape(), tensor.getElementType()));
  }
  builder.create<func::ReturnOp>(loc, results);
  builder.setInsertionPoint(op);
  auto call = builder.create<func::CallOp>(loc, function, operands);
  op->replaceAllUsesWith(call);
  op->erase();
  return function;
}

inline func::FuncOp outlineWithPlaceholderBody(Operation *op, StringRef name,
                                               SymbolTable &symbols) {
  return outlineWithPlaceholderBody(op, op->getOperands(), name, symbols);
}

/// Whether `function` is a placeholder of outlineWithPlaceholderBody: its
/// body says nothing of what the kernel that replaces its calls will do.
/// Such a kernel reads the arguments marked read-only and writes the
/// others (the results, out-params once bufferized).
inline bool isOutlinedPlaceholder(func::FuncOp function) {
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    if (function.getArgAttr(i, "bufferization.access"))
      return true;
  return false;
}

/// Whether argument `index` of a placeholder is only read.
inline bool isReadOnlyPlaceholderArgument(func::FuncOp function,
                                          unsigned index) {
  auto access =
      function.getArgAttrOfType<StringAttr>(index, "bufferization.access");
  return access && access.getValue() == "read";
}

/// Erases the outlined functions in `callees` that nothing in `module`
/// calls any more, once their calls have been replaced. The module's
/// symbol uses are gathered in one walk: asking per callee walks the whole
/// module once for each (ResNet-50: 53 outlined convolutions, 6% of its
/// compile time).
inline void eraseUncalled(ModuleOp module,
                          const SetVector<Operation *> &callees) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(module.getOperation());
  if (!uses) {
    for (Operation *callee : callees)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        callee->erase();
    return;
  }
  llvm::DenseSet<StringAttr> used;
  for (const SymbolTable::SymbolUse &use : *uses)
    used.insert(use.getSymbolRef().getRootReference());
  for (Operation *callee : callees)
    if (!used.contains(SymbolTable::getSymbolName(callee)))
      callee->erase();
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_OUTLINEDOPS_H
