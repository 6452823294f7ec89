//===- ResidentConstants.cpp - Constants copied once to the device --------===//
//
// A constant a kernel reads (a model's weights, a table) is host memory,
// read-only, in the module; kiln-cuda-globals-to-buffers gives each use a
// device buffer filled with a copy of it, which becomes a `gpu.memcpy`
// from the global. Left as it is, every call copies every constant from
// pageable host memory: for ResNet-50's 100 MB of weights, milliseconds of
// PCIe traffic per inference, and a copy no CUDA graph can hold. This pass
// turns each such copy into a call of the runtime's
// kiln_cuda_copy_constant (kiln/CudaLibraryAbi.h), which uploads the
// constant to the device at its first use and copies it on the device on
// every call after that.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "DeviceWork.h"

#include "common/BufferAccess.h"
#include "common/BufferAddress.h"
#include "common/LibraryCalls.h"

#include "kiln/CudaLibraryAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDARESIDENTCONSTANTS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// The constant global `copy` copies from, if it copies a whole constant
/// (or a contiguous part of one) into a contiguous device buffer.
memref::GlobalOp copiedConstant(gpu::MemcpyOp copy, SymbolTable &symbols) {
  if (!copy.getAsyncToken())
    return nullptr;
  auto source = kiln::rootThroughMetadata(copy.getSrc())
                    .getDefiningOp<memref::GetGlobalOp>();
  if (!source)
    return nullptr;
  auto global = symbols.lookup<memref::GlobalOp>(source.getName());
  if (!global || !global.getConstant())
    return nullptr;
  for (Value buffer : {copy.getSrc(), copy.getDst()}) {
    auto type = cast<MemRefType>(buffer.getType());
    if (!memref::isStaticShapeAndContiguousRowMajor(type) ||
        type.getMemorySpace() || !type.getElementType().isIntOrFloat())
      return nullptr;
  }
  // The destination must be device memory (a device allocation, or an
  // argument, which the runtime passes in device memory): a host buffer
  // written from a constant is host work.
  Value destination = kiln::rootThroughMetadata(copy.getDst());
  if (auto alloc = destination.getDefiningOp<gpu::AllocOp>())
    return alloc.getHostShared() ? nullptr : global;
  auto argument = dyn_cast<BlockArgument>(destination);
  bool functionArgument = argument && argument.getOwner()->isEntryBlock() &&
                          isa<func::FuncOp>(argument.getOwner()->getParentOp());
  return functionArgument ? global : nullptr;
}

struct KilnCudaResidentConstantsPass
    : kiln::impl::KilnCudaResidentConstantsBase<KilnCudaResidentConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<gpu::MemcpyOp> copies;
    module.walk([&](gpu::MemcpyOp copy) {
      if (!copy->getParentOfType<gpu::LaunchOp>() &&
          copiedConstant(copy, symbols))
        copies.push_back(copy);
    });
    if (copies.empty())
      return;
    MLIRContext *context = &getContext();
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type i64 = IntegerType::get(context, 64);
    func::FuncOp copyConstant = kiln::declareLibraryFunction(
        module, KILN_CUDA_COPY_CONSTANT_FUNCTION,
        FunctionType::get(context, {pointer, pointer, i64}, {}));
    if (!copyConstant)
      return signalPassFailure();
    for (gpu::MemcpyOp copy : copies) {
      OpBuilder builder(copy);
      Location loc = copy.getLoc();
      auto type = cast<MemRefType>(copy.getSrc().getType());
      int64_t elementBytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      auto addressOf = [&](Value buffer) -> Value {
        kiln::BufferAddress address =
            kiln::bufferAddressOf(builder, loc, buffer, elementBytes);
        return builder.create<LLVM::IntToPtrOp>(loc, pointer, address.address);
      };
      Value destination = addressOf(copy.getDst());
      Value source = addressOf(copy.getSrc());
      Value bytes = builder.create<arith::ConstantIntOp>(
          loc, type.getNumElements() * elementBytes, 64);
      builder.create<func::CallOp>(loc, copyConstant,
                                   ValueRange{destination, source, bytes});
      // The call is ordered on the module's stream like the copy was; a
      // fresh token stands for the stream.
      copy.getAsyncToken().replaceAllUsesWith(kiln::streamToken(builder, loc));
      copy.erase();
    }
  }
};
} // namespace
