//===- ReadOnlyArguments.cpp - A call leaves its caller's buffers alone ---===//
//
// Marks the tensor arguments of every public function
// `bufferization.writable = false` before one-shot bufferization, which
// otherwise writes an updated value into its argument's buffer in place
// (tensor.insert_slice into an argument, an scf.for that carries one).
// Those buffers belong to the caller, except a donated argument's
// (kiln.tied_result, kiln/IR/TiedResults.h), which the call may update.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"
#include "kiln/IR/TiedResults.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNREADONLYARGUMENTS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnReadOnlyArgumentsPass
    : kiln::impl::KilnReadOnlyArgumentsBase<KilnReadOnlyArgumentsPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isDeclaration() || !func.isPublic())
        continue;
      for (BlockArgument arg : func.getArguments())
        if (isa<TensorType>(arg.getType()) &&
            !kiln::tiedResult(func, arg.getArgNumber()))
          func.setArgAttr(arg.getArgNumber(),
                          bufferization::BufferizationDialect::kWritableAttrName,
                          builder.getBoolAttr(false));
    }
  }
};
} // namespace
