//===- HostBuffers.cpp - Buffers only the host code touches ---------------===//

#include "HostBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

/// Whether `address`, a buffer's address as an index
/// (memref.extract_aligned_pointer_as_index), stays a number on the host:
/// the deallocation's bookkeeping compares and records base addresses. An
/// address made a pointer again (llvm.inttoptr: the runtime's library
/// calls take their buffers so), passed to a function or read by a kernel
/// hands the buffer's elements to code that reads or writes them.
static bool addressStaysOnHost(Value address) {
  SmallVector<Value> worklist{address};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (Operation *user : current.getUsers()) {
      if (isa<LLVM::IntToPtrOp, func::CallOp, func::ReturnOp>(user) ||
          user->getParentOfType<gpu::LaunchOp>())
        return false;
      if (seen.insert(user).second)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return true;
}

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
              memref::DeallocOp>(user))
        continue;
      if (auto address = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user);
          address && addressStaysOnHost(address.getAlignedPointer()))
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

Value kiln::HostTouchedBuffers::find(Value value) {
  auto it = parent.find(value);
  if (it == parent.end())
    return value;
  Value root = find(it->second);
  it->second = root;
  return root;
}

void kiln::HostTouchedBuffers::join(Value a, Value b) {
  if (!isa<MemRefType>(a.getType()) || !isa<MemRefType>(b.getType()))
    return;
  a = find(a);
  b = find(b);
  if (a != b)
    parent[a] = b;
}

/// Whether `op` uses its buffer operands without reading or writing their
/// elements on the host: metadata and pointers, frees, stream-ordered
/// copies, and the ops whose buffers the analysis follows instead.
static bool leavesElementsToTheDevice(Operation *op) {
  return isa<memref::DimOp, memref::ExtractAlignedPointerAsIndexOp,
             memref::ExtractStridedMetadataOp, memref::DeallocOp,
             gpu::DeallocOp, gpu::MemcpyOp, gpu::MemsetOp, func::ReturnOp,
             func::CallOp, scf::YieldOp, scf::ConditionOp, scf::ForOp,
             scf::WhileOp, arith::SelectOp, ViewLikeOpInterface>(op);
}

kiln::HostTouchedBuffers::HostTouchedBuffers(Operation *module) {
  SmallVector<Value> hostUses;
  module->walk([&](Operation *op) {
    // Kernels touch elements on the device.
    if (op->getParentOfType<gpu::LaunchOp>())
      return;
    if (auto view = dyn_cast<ViewLikeOpInterface>(op))
      for (Value result : op->getResults())
        join(view.getViewSource(), result);
    // Choosing between buffers on the host chooses a pointer.
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      join(select.getTrueValue(), select.getResult());
      join(select.getFalseValue(), select.getResult());
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      for (auto [init, carried, result] :
           llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                     loop.getResults())) {
        join(init, carried);
        join(init, result);
      }
    if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      for (auto [init, carried] :
           llvm::zip(loop.getInits(), loop.getBeforeArguments()))
        join(init, carried);
      for (auto [result, carried] :
           llvm::zip(loop.getResults(), loop.getAfterArguments()))
        join(result, carried);
    }
    if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
      auto loop = cast<scf::WhileOp>(condition->getParentOp());
      for (auto [passed, result] :
           llvm::zip(condition.getArgs(), loop.getResults()))
        join(passed, result);
    }
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      Operation *owner = yield->getParentOp();
      // A while loop's body yields the next iteration's carried values;
      // every other region yields its op's results.
      if (auto loop = dyn_cast<scf::WhileOp>(owner)) {
        for (auto [next, carried] :
             llvm::zip(yield.getOperands(), loop.getBeforeArguments()))
          join(next, carried);
      } else {
        for (auto [value, result] :
             llvm::zip(yield.getOperands(), owner->getResults()))
          join(value, result);
      }
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      // A declaration is a runtime function (a library product, a
      // collective), which takes device buffers.
      if (callee && !callee.isDeclaration()) {
        for (auto [operand, argument] :
             llvm::zip(call.getOperands(), callee.getArguments()))
          join(operand, argument);
        callee.walk([&](func::ReturnOp ret) {
          for (auto [returned, result] :
               llvm::zip(ret.getOperands(), call.getResults()))
            join(returned, result);
        });
      }
    }
    if (leavesElementsToTheDevice(op))
      return;
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()))
        hostUses.push_back(operand);
  });
  for (Value value : hostUses)
    touched.insert(find(value));
}

bool kiln::HostTouchedBuffers::isHostTouched(Value buffer) {
  return touched.contains(find(buffer));
}
