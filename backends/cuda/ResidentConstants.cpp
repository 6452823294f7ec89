//===- ResidentConstants.cpp - Constants kept on the device ---------------===//
//
// A constant a kernel reads (a model's weights, a table) is host memory,
// read-only, in the module; kiln-cuda-globals-to-buffers gives each use a
// buffer filled with a copy of it, which becomes a `gpu.memcpy` from the
// global. Left as it is, every call copies every constant from pageable
// host memory: for ResNet-50's 100 MB of weights, milliseconds of PCIe
// traffic per inference, and a copy no CUDA graph can hold. This pass runs
// before kiln-cuda-plan-arena and hands such constants to the runtime
// (kiln/CudaLibraryAbi.h), which uploads each to the device at its first
// use and keeps it there while the module is loaded:
//   - where the buffer is only read after the copy, on the device (loads
//     in kernels, device copies from it, addresses passed to parameters of
//     library calls marked `llvm.readonly`, as kiln-cuda-library-matmul and
//     kiln-cuda-library-conv mark their inputs) and freed, the buffer goes:
//     the function asks kiln_cuda_resident_constant for the constant's
//     device address at its start and reads it there in place. No copy per
//     call, and neither the arena nor the pool holds a second copy;
//   - where the buffer is written too, or is an argument (a result the
//     function returns), but is still device memory, the copy becomes
//     kiln_cuda_copy_constant, a copy on the device from the uploaded one;
//   - a copy into memory the host code touches stays as it is.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "DeviceWork.h"
#include "HostBuffers.h"

#include "common/BufferAccess.h"
#include "common/BufferAddress.h"
#include "common/LibraryCalls.h"

#include "kiln/CudaLibraryAbi.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDARESIDENTCONSTANTS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// The constant global `copy` copies from, if it copies a whole constant
/// (or a contiguous part of one) of at least one element into a contiguous
/// buffer.
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
        type.getMemorySpace() || !type.getElementType().isIntOrFloat() ||
        type.getNumElements() == 0)
      return nullptr;
  }
  return global;
}

/// Whether `op` runs after `copy`: it is, or is nested in, an op after
/// `copy` in `copy`'s block.
bool runsAfter(Operation *op, gpu::MemcpyOp copy) {
  Operation *ancestor = copy->getBlock()->findAncestorOpInBlock(*op);
  return ancestor && ancestor != copy && copy->isBeforeInBlock(ancestor);
}

/// Whether every use of the address `address` (an integer computed from a
/// buffer's pointer, or a pointer made of it) passes it to a parameter of
/// a call that the callee marks `llvm.readonly`, after `copy`.
bool addressOnlyRead(Value address, gpu::MemcpyOp copy, SymbolTable &symbols) {
  SmallVector<Value> worklist{address};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (auto call = dyn_cast<func::CallOp>(user)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!callee || !runsAfter(call, copy) ||
            !callee.getArgAttr(use.getOperandNumber(),
                               LLVM::LLVMDialect::getReadonlyAttrName()))
          return false;
        continue;
      }
      // Arithmetic on the address (the offset of a view) and casts.
      if (user->getNumRegions() != 0 || !isMemoryEffectFree(user))
        return false;
      worklist.append(user->result_begin(), user->result_end());
    }
  }
  return true;
}

/// Whether `alloc`, which `copy` fills from a constant, is only read after
/// the copy and only on the device: by loads in kernels, device copies
/// from it and library calls that only read it (addressOnlyRead), through
/// views and metadata, besides being freed (`frees`).
bool onlyReadOnDevice(memref::AllocOp alloc, gpu::MemcpyOp copy,
                      SymbolTable &symbols,
                      SmallVectorImpl<Operation *> &frees) {
  if (copy.getDst() != alloc.getMemref() ||
      alloc->getBlock() != copy->getBlock())
    return false;
  SmallVector<Value> worklist{alloc.getMemref()};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (user == copy.getOperation() && current == copy.getDst())
        continue;
      if (isa<memref::DeallocOp>(user)) {
        frees.push_back(user);
        continue;
      }
      if (!runsAfter(user, copy))
        return false;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != current)
          return false;
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        worklist.push_back(metadata.getBaseBuffer());
        continue;
      }
      if (isa<memref::DimOp>(user))
        continue;
      if (user->getParentOfType<gpu::LaunchOp>()) {
        if (!isa<memref::LoadOp>(user))
          return false;
        continue;
      }
      if (auto device = dyn_cast<gpu::MemcpyOp>(user)) {
        if (device.getDst() == current)
          return false;
        continue;
      }
      if (auto address =
              dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        if (!addressOnlyRead(address.getResult(), copy, symbols))
          return false;
        continue;
      }
      return false;
    }
  }
  return true;
}

/// The memref of static `type` that `pointer` (an !llvm.ptr) points to.
Value memrefAt(OpBuilder &builder, Location loc,
               const LLVMTypeConverter &typeConverter, MemRefType type,
               Value pointer) {
  Value descriptor = MemRefDescriptor::fromStaticShape(
      builder, loc, typeConverter, type, pointer);
  return builder.create<UnrealizedConversionCastOp>(loc, type, descriptor)
      .getResult(0);
}

/// What becomes of one copy of a constant.
struct ConstantCopy {
  gpu::MemcpyOp copy;
  /// The buffer it fills, which goes: read in place (null: copied on the
  /// device instead).
  memref::AllocOp inPlace;
  SmallVector<Operation *> frees;
};

struct KilnCudaResidentConstantsPass
    : kiln::impl::KilnCudaResidentConstantsBase<KilnCudaResidentConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Decided before anything changes (HostTouchedBuffers sees the module
    // as it is).
    SmallVector<ConstantCopy> plan;
    {
      kiln::HostTouchedBuffers touched(module);
      module.walk([&](gpu::MemcpyOp copy) {
        if (copy->getParentOfType<gpu::LaunchOp>() ||
            !copiedConstant(copy, symbols))
          return;
        ConstantCopy entry{copy, nullptr, {}};
        Value destination = kiln::rootThroughMetadata(copy.getDst());
        auto alloc = destination.getDefiningOp<memref::AllocOp>();
        if (alloc && copy.getSrc().getDefiningOp<memref::GetGlobalOp>() &&
            alloc.getType().getLayout().isIdentity() &&
            !alloc.getType().getMemorySpace() &&
            onlyReadOnDevice(alloc, copy, symbols, entry.frees)) {
          entry.inPlace = alloc;
          plan.push_back(std::move(entry));
          return;
        }
        // A copy on the device, into a device buffer: an argument, or an
        // allocation the host code does not touch.
        auto argument = dyn_cast<BlockArgument>(destination);
        if ((argument && argument.getOwner()->isEntryBlock() &&
             isa<func::FuncOp>(argument.getOwner()->getParentOp())) ||
            (alloc && !touched.isHostTouched(alloc.getMemref())))
          plan.push_back({copy, nullptr, {}});
      });
    }
    if (plan.empty())
      return;

    MLIRContext *context = &getContext();
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type i64 = IntegerType::get(context, 64);
    LLVMTypeConverter typeConverter(context);
    func::FuncOp copyConstant, residentConstant;
    // The device address of each constant, asked for once per function.
    llvm::DenseMap<std::pair<Operation *, Operation *>, Value> resident;
    for (ConstantCopy &entry : plan) {
      gpu::MemcpyOp copy = entry.copy;
      Location loc = copy.getLoc();
      auto type = cast<MemRefType>(copy.getSrc().getType());
      int64_t elementBytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      auto addressOf = [&](OpBuilder &builder, Value buffer) -> Value {
        kiln::BufferAddress address =
            kiln::bufferAddressOf(builder, loc, buffer, elementBytes);
        return builder.create<LLVM::IntToPtrOp>(loc, pointer, address.address);
      };
      auto sizeOf = [&](OpBuilder &builder) -> Value {
        return builder.create<arith::ConstantIntOp>(
            loc, type.getNumElements() * elementBytes, 64);
      };

      if (memref::AllocOp alloc = entry.inPlace) {
        auto function = copy->getParentOfType<func::FuncOp>();
        auto global = copy.getSrc().getDefiningOp<memref::GetGlobalOp>();
        Value &address = resident[{function, symbols.lookup(global.getName())}];
        if (!address) {
          if (!residentConstant &&
              !(residentConstant = kiln::declareLibraryFunction(
                    module, KILN_CUDA_RESIDENT_CONSTANT_FUNCTION,
                    FunctionType::get(context, {pointer, i64}, {pointer}))))
            return signalPassFailure();
          auto builder = OpBuilder::atBlockBegin(&function.getBody().front());
          Value host = addressOf(builder, builder.clone(*global)->getResult(0));
          address = builder
                        .create<func::CallOp>(loc, residentConstant,
                                              ValueRange{host, sizeOf(builder)})
                        .getResult(0);
        }
        OpBuilder builder(context);
        builder.setInsertionPointAfterValue(address);
        Value buffer = memrefAt(builder, alloc.getLoc(), typeConverter,
                                alloc.getType(), address);
        for (Operation *free : entry.frees)
          free->erase();
        // What waited on the copy waits on what the copy waited on.
        builder.setInsertionPoint(copy);
        copy.getAsyncToken().replaceAllUsesWith(
            copy.getAsyncDependencies().size() == 1
                ? copy.getAsyncDependencies().front()
                : kiln::streamToken(builder, loc));
        copy.erase();
        if (global->use_empty())
          global.erase();
        alloc.replaceAllUsesWith(buffer);
        alloc.erase();
        continue;
      }

      if (!copyConstant &&
          !(copyConstant = kiln::declareLibraryFunction(
                module, KILN_CUDA_COPY_CONSTANT_FUNCTION,
                FunctionType::get(context, {pointer, pointer, i64}, {}))))
        return signalPassFailure();
      OpBuilder builder(copy);
      Value target = addressOf(builder, copy.getDst());
      Value source = addressOf(builder, copy.getSrc());
      builder.create<func::CallOp>(loc, copyConstant,
                                   ValueRange{target, source, sizeOf(builder)});
      // The call is ordered on the module's stream like the copy was; a
      // fresh token stands for the stream.
      copy.getAsyncToken().replaceAllUsesWith(kiln::streamToken(builder, loc));
      copy.erase();
    }
  }
};
} // namespace
