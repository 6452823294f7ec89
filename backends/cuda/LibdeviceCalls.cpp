//===- LibdeviceCalls.cpp - libdevice calls for uncovered math ops --------===//
//
// convert-gpu-to-nvvm leaves math.asin, acos, sinh, cosh, asinh, acosh and
// atanh alone in LLVM 19, and neither MathToLLVM nor NVPTX handles them.
// libdevice has every one (__nv_asinf / __nv_asin, ...), with the accuracy
// CUDA's math library documents, so each becomes an llvm.call of it; the
// declarations go into the gpu.module, and gpu-module-to-binary links
// libdevice as it does for the functions convert-gpu-to-nvvm calls.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDALIBDEVICECALLS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// The libdevice name of `op`'s function without the f32 suffix, or an
/// empty string for ops that convert-gpu-to-nvvm handles itself.
StringRef libdeviceBaseName(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case([](math::AsinOp) { return "__nv_asin"; })
      .Case([](math::AcosOp) { return "__nv_acos"; })
      .Case([](math::SinhOp) { return "__nv_sinh"; })
      .Case([](math::CoshOp) { return "__nv_cosh"; })
      .Case([](math::AsinhOp) { return "__nv_asinh"; })
      .Case([](math::AcoshOp) { return "__nv_acosh"; })
      .Case([](math::AtanhOp) { return "__nv_atanh"; })
      .Default([](Operation *) { return ""; });
}

struct KilnCudaLibdeviceCallsPass
    : kiln::impl::KilnCudaLibdeviceCallsBase<KilnCudaLibdeviceCallsPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (!libdeviceBaseName(op).empty())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      Type type = op->getResult(0).getType();
      if (!type.isF32() && !type.isF64()) {
        op->emitOpError("has no libdevice function for ") << type;
        return signalPassFailure();
      }
      std::string name = libdeviceBaseName(op).str();
      if (type.isF32())
        name += "f";
      auto callee = symbols.lookup<LLVM::LLVMFuncOp>(name);
      if (!callee) {
        OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
        callee = builder.create<LLVM::LLVMFuncOp>(
            module.getLoc(), name, LLVM::LLVMFunctionType::get(type, {type}));
        symbols.insert(callee);
      }
      OpBuilder builder(op);
      auto call = builder.create<LLVM::CallOp>(op->getLoc(), callee,
                                               op->getOperands());
      op->replaceAllUsesWith(call.getResults());
      op->erase();
    }
  }
};

} // namespace
