//===- RuntimeSlots.h - Pointers the runtime fills at load ------*- C++ -*-===//
//
// Compiled CPU code reaches the runtime through exported pointer slots: the
// allocator's functions (kiln-cpu-memory-hooks, kiln/MemoryAbi.h) and the
// constant pool's base (kiln-cpu-pool-constants, kiln/ConstantsAbi.h). The
// runtime finds each by name in the loaded code and stores into it before
// any function runs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_RUNTIMESLOTS_H
#define KILN_BACKENDS_CPU_RUNTIMESLOTS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::kiln {

/// Defines, at the end of `module`, the exported slot `name`: a writable
/// pointer, null until the runtime fills it.
inline LLVM::GlobalOp defineRuntimeSlot(ModuleOp module, StringRef name) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(module.getContext());
  auto slot = b.create<LLVM::GlobalOp>(loc, ptr, /*isConstant=*/false,
                                       LLVM::Linkage::External, name,
                                       Attribute(), /*alignment=*/8);
  b.setInsertionPointToStart(b.createBlock(&slot.getInitializerRegion()));
  b.create<LLVM::ReturnOp>(loc, b.create<LLVM::ZeroOp>(loc, ptr).getResult());
  return slot;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_RUNTIMESLOTS_H
