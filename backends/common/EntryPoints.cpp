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
#define GEN_PASS_DEF_KILNENTRYPOINTS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct KilnEntryPointsPass
    : kiln::impl::KilnEntryPointsBase<KilnEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LLVMTypeConverter typeConverter(&getContext());
    // Rename every defined function out of the C namespace (a function
    // named `tanh` must not meet libm's) and make it internal; remember the
    // public ones, which get exported wrappers under their own names.
    auto internal =
        LLVM::LinkageAttr::get(&getContext(), LLVM::Linkage::Internal);
    SmallVector<std::pair<func::FuncOp, std::string>> entries;
    SmallVector<func::FuncOp> defined;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration())
        defined.push_back(func);
    for (func::FuncOp func : defined) {
      std::string name = func.getName().str();
      auto renamed = StringAttr::get(&getContext(), "kiln_impl_" + name);
      if (failed(SymbolTable::replaceAllSymbolUses(func, renamed, module))) {
        func.emitOpError("cannot be renamed");
        return signalPassFailure();
      }
      SymbolTable::setSymbolName(func, renamed);
      if (func.isPublic())
        entries.emplace_back(func, name);
      func->setAttr("llvm.linkage", internal);
    }
    for (auto &[func, name] : entries)
      if (failed(addEntryPoint(func, name, typeConverter)))
        return signalPassFailure();
  }

  LogicalResult addEntryPoint(func::FuncOp func, StringRef name,
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
        loc, (kEntryPrefix + name).str(), builder.getFunctionType({ptrType}, {}));
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
