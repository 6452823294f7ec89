//===- HostBuffers.cpp - Buffers only the host code touches ---------------===//

#include "HostBuffers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

static bool isHostOnly(Value buffer,
                       llvm::SmallPtrSetImpl<void *> &visiting) {
  if (!isa<MemRefType>(buffer.getType()))
    return false;
  // A function argument already being checked (recursion) is assumed
  // host-only; its other uses decide.
  if (!visiting.insert(buffer.getAsOpaquePointer()).second)
    return true;
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (user->getParentOfType<gpu::LaunchOp>())
        return false;
      if (isa<memref::CastOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (isa<memref::LoadOp, memref::StoreOp, memref::DimOp,
              memref::DeallocOp, memref::ExtractAlignedPointerAsIndexOp>(
              user))
        continue;
      if (auto call = dyn_cast<func::CallOp>(user)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (!callee || callee.isDeclaration() || callee.isPublic())
          return false;
        Value argument =
            callee.getArgument(use.getOperandNumber());
        if (!isHostOnly(argument, visiting))
          return false;
        continue;
      }
      return false;
    }
  }
  return true;
}

bool kiln::isHostOnlyBuffer(Value buffer) {
  llvm::SmallPtrSet<void *, 8> visiting;
  return isHostOnly(buffer, visiting);
}
