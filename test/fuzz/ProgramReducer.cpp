//===- ProgramReducer.cpp - Delta debugging of kiln programs --------------===//
//
// Each candidate is the current program with one simplification applied:
//  - drop a result of @main;
//  - inline one region of a kiln.cond, kiln.for or kiln.while in place of
//    the op (its block arguments taken from the op's operands, a leading
//    loop index as 0): the branch that ran, or one loop iteration;
//  - replace a result of an op by one of the op's operands of the same
//    type (an elementwise op or a loop skipped);
//  - replace a result by a new argument of @main (at the top level; the
//    regions are isolated from above), or by a constant of ones;
//  - drop every argument of @main that nothing uses at once (tried first:
//    each replacement by an argument leaves one behind, and one try per
//    argument would spend the budget on them), or one of them.
// Ops left without uses are erased after every change. A candidate that
// does not verify is skipped without running the check. After a kept
// candidate the search starts again from the end of the program, so that
// the cheap, big steps (results that drop whole subgraphs) come first.
//
//===----------------------------------------------------------------------===//

#include "ProgramReducer.h"

#include "kiln/Compiler/Driver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/raw_ostream.h"

using namespace kiln;
using namespace kiln::test;

namespace {

enum class Step { DropResult, InlineRegion, Bypass, ToArgument, ToOnes,
                  DropArgument, DropUnusedArguments };

struct Candidate {
  Step step;
  unsigned index; ///< the result, argument or op (in walk order)
  unsigned a = 0; ///< the region, or the op's result
  unsigned b = 0; ///< the operand (Bypass)
};

/// The ops of @main that define values, in pre-order.
std::vector<mlir::Operation *> opsOf(mlir::func::FuncOp func) {
  std::vector<mlir::Operation *> ops;
  func.walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *op) {
    if (op != func && op->getNumResults() > 0)
      ops.push_back(op);
  });
  return ops;
}

unsigned countOps(mlir::func::FuncOp func) {
  unsigned n = 0;
  func.walk([&](mlir::Operation *op) {
    if (op != func && !op->hasTrait<mlir::OpTrait::IsTerminator>())
      ++n;
  });
  return n;
}

/// Erases ops without uses and without effects until none is left.
void eraseDeadOps(mlir::func::FuncOp func) {
  bool erased = true;
  while (erased) {
    erased = false;
    func.walk<mlir::WalkOrder::PostOrder>([&](mlir::Operation *op) {
      if (op != func && mlir::isOpTriviallyDead(op)) {
        op->erase();
        erased = true;
      }
    });
  }
}

mlir::Value onesLike(mlir::OpBuilder &builder, mlir::Location loc,
                     mlir::Type type) {
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor)
    return nullptr;
  mlir::Type element = tensor.getElementType();
  mlir::Attribute one;
  if (auto f = mlir::dyn_cast<mlir::FloatType>(element))
    one = builder.getFloatAttr(f, 1.0);
  else if (auto i = mlir::dyn_cast<mlir::IntegerType>(element))
    one = builder.getIntegerAttr(i, 1);
  else
    return nullptr;
  mlir::OperationState state(loc, "kiln.constant");
  state.addAttribute("value", mlir::DenseElementsAttr::get(tensor, one));
  state.addTypes(type);
  return builder.create(state)->getResult(0);
}

/// Inlines region `r` of `op` in its place. False if the region's block
/// arguments or yielded values do not line up with the op's.
bool inlineRegion(mlir::Operation *op, unsigned r) {
  mlir::Region &region = op->getRegion(r);
  if (!region.hasOneBlock())
    return false;
  mlir::Block &block = region.front();
  mlir::Operation *terminator = block.getTerminator();
  if (terminator->getNumOperands() != op->getNumResults() ||
      terminator->getOperandTypes() != op->getResultTypes())
    return false;
  // Block arguments line up with the op's trailing operands (a cond's
  // predicate and a loop's index have no partner).
  mlir::OpBuilder builder(op);
  std::vector<mlir::Value> values;
  unsigned args = block.getNumArguments(), operands = op->getNumOperands();
  for (unsigned i = 0; i < args; ++i) {
    mlir::BlockArgument arg = block.getArgument(i);
    if (args - i <= operands) {
      mlir::Value operand = op->getOperand(operands - (args - i));
      if (operand.getType() != arg.getType())
        return false;
      values.push_back(operand);
    } else {
      auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(arg.getType());
      if (!tensor || !mlir::isa<mlir::IntegerType>(tensor.getElementType()))
        return false;
      mlir::OperationState state(op->getLoc(), "kiln.constant");
      state.addAttribute("value", mlir::DenseElementsAttr::get(
                                      tensor, builder.getIntegerAttr(
                                                  tensor.getElementType(), 0)));
      state.addTypes(tensor);
      values.push_back(builder.create(state)->getResult(0));
    }
  }
  for (unsigned i = 0; i < args; ++i)
    block.getArgument(i).replaceAllUsesWith(values[i]);
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    op->getResult(i).replaceAllUsesWith(terminator->getOperand(i));
  terminator->erase();
  op->getBlock()->getOperations().splice(op->getIterator(),
                                         block.getOperations());
  op->erase();
  return true;
}

/// Applies `c` to the module; false if it does not apply.
bool apply(mlir::ModuleOp module, const Candidate &c) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>("main");
  auto ret = mlir::cast<mlir::func::ReturnOp>(
      func.getBody().back().getTerminator());
  switch (c.step) {
  case Step::DropResult: {
    if (c.index >= ret.getNumOperands() || ret.getNumOperands() == 1)
      return false;
    ret->eraseOperand(c.index);
    func.eraseResult(c.index);
    return true;
  }
  case Step::DropArgument: {
    if (c.index >= func.getNumArguments() ||
        !func.getArgument(c.index).use_empty())
      return false;
    func.eraseArgument(c.index);
    return true;
  }
  case Step::DropUnusedArguments: {
    llvm::BitVector unused(func.getNumArguments());
    for (mlir::BlockArgument arg : func.getArguments())
      if (arg.use_empty())
        unused.set(arg.getArgNumber());
    if (unused.count() < 2)
      return false;
    func.eraseArguments(unused);
    return true;
  }
  default:
    break;
  }
  std::vector<mlir::Operation *> ops = opsOf(func);
  if (c.index >= ops.size())
    return false;
  mlir::Operation *op = ops[c.index];
  switch (c.step) {
  case Step::InlineRegion:
    return c.a < op->getNumRegions() && inlineRegion(op, c.a);
  case Step::Bypass: {
    if (c.a >= op->getNumResults() || c.b >= op->getNumOperands() ||
        op->getOperand(c.b).getType() != op->getResult(c.a).getType())
      return false;
    op->getResult(c.a).replaceAllUsesWith(op->getOperand(c.b));
    return true;
  }
  case Step::ToArgument: {
    if (c.a >= op->getNumResults() || op->getParentOp() != func)
      return false;
    mlir::Value result = op->getResult(c.a);
    unsigned n = func.getNumArguments();
    func.insertArgument(n, result.getType(), {}, op->getLoc());
    result.replaceAllUsesWith(func.getArgument(n));
    return true;
  }
  case Step::ToOnes: {
    if (c.a >= op->getNumResults() || op->getName().getStringRef() ==
                                          "kiln.constant")
      return false;
    mlir::OpBuilder builder(op);
    mlir::Value ones =
        onesLike(builder, op->getLoc(), op->getResult(c.a).getType());
    if (!ones)
      return false;
    op->getResult(c.a).replaceAllUsesWith(ones);
    return true;
  }
  default:
    return false;
  }
}

std::string print(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// The candidates for the program, cheapest and biggest first.
std::vector<Candidate> candidatesOf(mlir::func::FuncOp func) {
  std::vector<Candidate> list;
  list.push_back({Step::DropUnusedArguments, 0});
  unsigned results = func.getNumResults();
  for (unsigned r = results; r-- > 0;)
    list.push_back({Step::DropResult, r});
  std::vector<mlir::Operation *> ops = opsOf(func);
  for (unsigned k = ops.size(); k-- > 0;) {
    mlir::Operation *op = ops[k];
    for (unsigned r = 0; r < op->getNumRegions(); ++r)
      list.push_back({Step::InlineRegion, k, r});
    for (unsigned r = 0; r < op->getNumResults(); ++r) {
      for (unsigned o = 0; o < op->getNumOperands(); ++o)
        if (op->getOperand(o).getType() == op->getResult(r).getType())
          list.push_back({Step::Bypass, k, r, o});
      list.push_back({Step::ToArgument, k, r});
      list.push_back({Step::ToOnes, k, r});
    }
  }
  for (unsigned a = func.getNumArguments(); a-- > 0;)
    if (func.getArgument(a).use_empty())
      list.push_back({Step::DropArgument, a});
  return list;
}

} // namespace

std::string kiln::test::reduceProgram(
    const std::string &text,
    const std::function<bool(const std::string &)> &stillFails,
    unsigned maxTries, ReduceStats &stats) {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Candidates that do not verify are expected; their diagnostics are not
  // news.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });

  auto parse = [&](const std::string &source) {
    return mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  };
  std::string current = text;
  {
    mlir::OwningOpRef<mlir::ModuleOp> module = parse(current);
    if (!module || !module->lookupSymbol<mlir::func::FuncOp>("main"))
      return text;
    stats.opsBefore = stats.opsAfter =
        countOps(module->lookupSymbol<mlir::func::FuncOp>("main"));
    current = print(*module);
  }

  bool progress = true;
  while (progress && stats.tries < maxTries) {
    progress = false;
    mlir::OwningOpRef<mlir::ModuleOp> base = parse(current);
    std::vector<Candidate> list =
        candidatesOf(base->lookupSymbol<mlir::func::FuncOp>("main"));
    for (const Candidate &c : list) {
      if (stats.tries >= maxTries)
        break;
      mlir::OwningOpRef<mlir::ModuleOp> module = parse(current);
      if (!apply(*module, c))
        continue;
      auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
      eraseDeadOps(func);
      if (mlir::failed(mlir::verify(*module)))
        continue;
      std::string next = print(*module);
      if (next == current)
        continue;
      ++stats.tries;
      if (!stillFails(next))
        continue;
      ++stats.kept;
      current = std::move(next);
      stats.opsAfter = countOps(func);
      progress = true;
      break;
    }
  }
  return current;
}
