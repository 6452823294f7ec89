//===- Derivation.cpp - What every derived function starts from -----------===//
//
// buildGradient, buildValueAndGradient, buildJvp and buildVmap check a
// request the same way and start from the same clone of the function, with
// its calls inlined so that the rules see every op.
//
//===----------------------------------------------------------------------===//

#include "common/Derivation.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::kiln;

DictionaryAttr kiln::derivedNameAttrs(MLIRContext *context,
                                          DictionaryAttr attrs,
                                          StringRef prefix) {
  auto name = attrs ? attrs.getAs<StringAttr>(kNameAttr) : StringAttr();
  if (!name)
    return DictionaryAttr::get(context);
  NamedAttribute named(StringAttr::get(context, kNameAttr),
                       StringAttr::get(context, prefix + name.getValue()));
  return DictionaryAttr::get(context, {named});
}

LogicalResult kiln::checkDerivable(func::FuncOp f, StringRef name,
                                   StringRef verb) {
  if (f.isExternal())
    return f.emitError() << "cannot " << verb << " @" << f.getName()
                         << ": it has no body";
  if (!f.getBody().hasOneBlock())
    return f.emitError() << "cannot " << verb << " @" << f.getName()
                         << ": its body has more than one block";
  Operation *symbolTable = SymbolTable::getNearestSymbolTable(f);
  if (!symbolTable)
    return f.emitError() << "cannot " << verb << " @" << f.getName()
                         << ": it is not in a module";
  if (SymbolTable::lookupSymbolIn(symbolTable, name))
    return f.emitError() << "cannot derive @" << name << " from @"
                         << f.getName() << ": the name is taken";
  return success();
}

/// The most nested calls inlineCalls follows; deeper nesting is taken for
/// recursion.
static constexpr unsigned kMaxInlinedDepth = 16;

/// Replaces every func.call in `g` (in its regions too) of a function with
/// a body by a copy of that body, until none is left, so that the VJP rules
/// see the callees' ops: the gradient through a call is the gradient
/// through its body, as in JAX, which traces through calls. Calls of
/// declarations stay (the activity analysis rejects one that a gradient
/// must pass). Calls still left after kMaxInlinedDepth rounds (recursion)
/// are an error at the call.
static LogicalResult inlineCalls(func::FuncOp g) {
  SymbolTable symbols(SymbolTable::getNearestSymbolTable(g));
  for (unsigned round = 0;; ++round) {
    SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
    g.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal() && callee.getBody().hasOneBlock())
        calls.push_back({call, callee});
    });
    if (calls.empty())
      return success();
    if (round == kMaxInlinedDepth)
      return calls.front().first.emitOpError()
             << "cannot be differentiated: calls nest more than "
             << kMaxInlinedDepth << " deep (recursion?)";
    for (auto [call, callee] : calls) {
      Block &body = callee.getBody().front();
      IRMapping map;
      map.map(body.getArguments(), call.getOperands());
      OpBuilder builder(call);
      for (Operation &op : body.without_terminator())
        builder.clone(op, map);
      for (auto [result, value] :
           llvm::zip_equal(call.getResults(),
                           body.getTerminator()->getOperands()))
        result.replaceAllUsesWith(map.lookupOrDefault(value));
      call.erase();
    }
  }
}

FailureOr<func::FuncOp> kiln::cloneForDerivation(func::FuncOp f,
                                                     StringRef name) {
  auto g = cast<func::FuncOp>(f->clone());
  g.setName(name);
  SymbolTable(SymbolTable::getNearestSymbolTable(f))
      .insert(g, ++f->getIterator());
  if (failed(inlineCalls(g))) {
    g.erase();
    return failure();
  }
  return g;
}
