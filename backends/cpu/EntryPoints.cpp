//===- EntryPoints.cpp - The native calling convention wrappers -----------===//
//
// For each public function `f(memref..., memref...)` (inputs then outputs,
// after bufferization moved results to out-params) this adds
//
//   func.func @kiln_entry_f(%args: !llvm.ptr)
//
// that loads the i-th data pointer from `args`, wraps it in a memref
// descriptor of the statically known shape and calls `f`. The runtime then
// calls every function the same way, whatever its signature.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUENTRYPOINTS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct KilnCpuEntryPointsPass
    : kiln::impl::KilnCpuEntryPointsBase<KilnCpuEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LLVMTypeConverter typeConverter(&getContext());
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isDeclaration() &&
          !func.getName().starts_with(kEntryPrefix))
        functions.push_back(func);
    for (func::FuncOp func : functions)
      if (failed(addEntryPoint(func, typeConverter)))
        return signalPassFailure();
  }

  LogicalResult addEntryPoint(func::FuncOp func,
                              const LLVMTypeConverter &typeConverter) {
    if (func.getNumResults() != 0)
      return func.emitOpError("still returns values after bufferization; "
                              "expected all results as out-params");
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto memref = dyn_cast<MemRefType>(type);
      if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity())
        return func.emitOpError("argument #")
               << i << " has type " << type
               << "; the native entry point needs static identity-layout "
                  "memrefs";
    }
    Location loc = func.getLoc();
    OpBuilder builder(func.getContext());
    builder.setInsertionPointAfter(func);
    auto ptrType = LLVM::LLVMPointerType::get(func.getContext());
    auto entry = builder.create<func::FuncOp>(
        loc, (kEntryPrefix + func.getName()).str(),
        builder.getFunctionType({ptrType}, {}));
    Block *body = entry.addEntryBlock();
    builder.setInsertionPointToStart(body);
    Value args = body->getArgument(0);
    SmallVector<Value> operands;
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto memrefType = cast<MemRefType>(type);
      Value slot = builder.create<LLVM::GEPOp>(
          loc, ptrType, ptrType, args,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      Value data = builder.create<LLVM::LoadOp>(loc, ptrType, slot);
      Value descriptor = MemRefDescriptor::fromStaticShape(
          builder, loc, typeConverter, memrefType, data);
      operands.push_back(
          builder
              .create<UnrealizedConversionCastOp>(loc, memrefType, descriptor)
              .getResult(0));
    }
    builder.create<func::CallOp>(loc, func, operands);
    builder.create<func::ReturnOp>(loc);
    return success();
  }
};
} // namespace
