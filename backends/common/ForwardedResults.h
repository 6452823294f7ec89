//===- ForwardedResults.h - a library call writing the output directly -*- C++ -*-===//
//
// After results became out-params, a value a function returns is written
// to a fresh allocation, then copied into the out-param and freed. Where a
// library call (oneDNN's or cuDNN's convolution, the attention kernels)
// writes that allocation, it can write the out-param directly: the passes
// that make those calls (cpu/ConvToDnnl.cpp, cpu/AttentionCalls.cpp,
// cuda/LibraryConv.cpp) ask here which buffer each of the call's result
// operands should be.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_FORWARDEDRESULTS_H
#define KILN_BACKENDS_COMMON_FORWARDEDRESULTS_H

#include "common/BufferAccess.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::kiln {

/// The buffers `call` should write for its operands at `results` (its
/// result buffers, the others being inputs), in that order. A result
/// operand whose buffer is an allocation that the ops right after the call
/// copy (linalg.copy, one each, before anything but deallocations of
/// other buffers) into a buffer
/// defined before the call, with no other use than the call, the copy and
/// deallocations, neither it nor that target an input of the call, is
/// replaced by the target; `dead` receives the copy, deallocations and
/// allocation that then go. Other result operands stay.
inline SmallVector<Value> forwardedResults(func::CallOp call,
                                           ArrayRef<unsigned> results,
                                           SmallVectorImpl<Operation *> &dead) {
  SmallVector<Value> buffers;
  for (unsigned index : results)
    buffers.push_back(call.getOperand(index));
  llvm::SmallPtrSet<Value, 4> targets;
  for (Operation *next = call->getNextNode(); next;
       next = next->getNextNode()) {
    // The call's inputs may be freed right after it
    // (kiln-free-after-last-use), before the copies.
    if (auto free = dyn_cast<memref::DeallocOp>(next))
      if (!llvm::is_contained(buffers, free.getMemref()) &&
          !targets.contains(free.getMemref()))
        continue;
    auto copy = dyn_cast<linalg::CopyOp>(next);
    if (!copy)
      break;
    Value source = copy.getDpsInputOperand(0)->get();
    auto position = llvm::find(buffers, source);
    if (position == buffers.end())
      break;
    auto alloc = source.getDefiningOp<memref::AllocOp>();
    Value target = copy.getDpsInitOperand(0)->get();
    if (!alloc || target.getType() != source.getType() ||
        !definedBefore(target, call) || targets.contains(target))
      break;
    SmallVector<Operation *> deallocs;
    bool otherUse = false;
    for (Operation *user : source.getUsers()) {
      if (isa<memref::DeallocOp>(user))
        deallocs.push_back(user);
      else if (user != call && user != copy)
        otherUse = true;
    }
    // Neither the target nor the allocation may be an input too: a call
    // that adds into its result in place reads it (the convolution's
    // addend of kiln-cpu-conv-addend-in-place).
    bool aliasesInput = false;
    for (auto [i, operand] : llvm::enumerate(call.getOperands()))
      if (!llvm::is_contained(results, i) &&
          (mayAlias(rootOf(operand), rootOf(target)) ||
           mayAlias(rootOf(operand), source)))
        aliasesInput = true;
    if (otherUse || aliasesInput)
      break;
    *position = target;
    targets.insert(target);
    dead.push_back(copy);
    llvm::append_range(dead, deallocs);
    dead.push_back(alloc);
  }
  return buffers;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_FORWARDEDRESULTS_H
