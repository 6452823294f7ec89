//===- Inline.cpp - Inlining IR into the trace being recorded -------------===//
//
// inlineIntoTrace checks that the function can be cloned where the trace is
// (same context, one block, no symbol references, arguments of the right
// types), maps its arguments to the caller's tensors (capturing them into
// the regions being traced) and clones its ops at the builder's position.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"

#include "kiln/Tracer/Inline.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {

mlir::MLIRContext *activeTraceContext(const char *what, SourceLoc loc) {
  return detail::TraceState::requireActive(loc, what).getContext();
}

Tensors inlineIntoTrace(mlir::func::FuncOp function, const Tensors &args,
                        SourceLoc loc) {
  using detail::fail;
  detail::TraceState &state =
      detail::TraceState::requireActive(loc, "kiln::inlineIntoTrace");
  if (!function || function.isDeclaration())
    fail(loc, "kiln::inlineIntoTrace: no function body to inline");
  std::string name =
      "kiln::inlineIntoTrace: function '" + function.getName().str() + "' ";
  if (function->getContext() != state.getContext())
    fail(loc, name + "belongs to another MLIRContext than the trace being "
                     "recorded; build it in kiln::activeTraceContext()");
  if (!function.getBody().hasOneBlock())
    fail(loc, name + "has more than one block");
  if (std::optional<mlir::SymbolTable::UseRange> uses =
          mlir::SymbolTable::getSymbolUses(&function.getBody());
      !uses || !uses->empty())
    fail(loc, name + "refers to other symbols, which do not exist in the "
                     "trace");
  mlir::Block &body = function.getBody().front();
  if (body.empty() || !llvm::isa<mlir::func::ReturnOp>(body.back()))
    fail(loc, name + "does not end in func.return");
  // Results become Tensors, so each must be a static tensor of a DType.
  for (mlir::Type type : function.getResultTypes()) {
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        tensor != detail::tensorType(state.getContext(), tensor.getShape(),
                                     detail::dtypeOf(tensor.getElementType())))
      fail(loc, name + "returns " + detail::typeString(type) +
                    ", which is not a tensor the tracer can hold");
  }
  if (args.size() != body.getNumArguments())
    fail(loc, name + "takes " + std::to_string(body.getNumArguments()) +
                  " arguments, got " + std::to_string(args.size()));

  // Map the arguments first: this checks that each belongs to the active
  // trace and captures it into the region being traced.
  mlir::IRMapping mapping;
  for (auto [arg, tensor] : llvm::zip_equal(body.getArguments(), args)) {
    mlir::Value operand = state.use(tensor, loc);
    if (operand.getType() != arg.getType())
      fail(loc, name + "takes " + detail::typeString(arg.getType()) +
                    " as argument #" + std::to_string(arg.getArgNumber()) +
                    ", got " + detail::typeString(operand.getType()));
    mapping.map(arg, operand);
  }

  mlir::OpBuilder &builder = state.getBuilder();
  for (mlir::Operation &op : body.without_terminator())
    builder.clone(op, mapping);

  Tensors results;
  for (mlir::Value value : body.getTerminator()->getOperands())
    results.push_back(state.wrap(mapping.lookupOrDefault(value)));
  return results;
}

} // namespace kiln
