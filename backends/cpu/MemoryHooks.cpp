//===- MemoryHooks.cpp - Buffers allocated through the runtime's slots ----===//
//
// finalize-memref-to-llvm with use-generic-functions lowers every
// memref.alloc to a call of @_mlir_memref_to_llvm_alloc(i64) and every
// memref.dealloc to @_mlir_memref_to_llvm_free(ptr), and only declares
// them. This pass defines both in the module, with internal linkage: each
// loads its exported slot (kiln/MemoryAbi.h), calls the runtime's function
// there, and calls malloc or free while the slot is empty. The runtime's
// functions count the bytes the program's buffers hold, which is how a
// training step's peak memory is measured rather than estimated.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "RuntimeSlots.h"

#include "kiln/MemoryAbi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUMEMORYHOOKS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

static constexpr const char *kGenericAlloc = "_mlir_memref_to_llvm_alloc";
static constexpr const char *kGenericFree = "_mlir_memref_to_llvm_free";

namespace {
struct KilnCpuMemoryHooksPass
    : kiln::impl::KilnCpuMemoryHooksBase<KilnCpuMemoryHooksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module.lookupSymbol(KILN_MEMORY_SLOT_ALLOC) ||
        module.lookupSymbol(KILN_MEMORY_SLOT_FREE)) {
      module.emitError("the module has its memory slots already");
      return signalPassFailure();
    }
    auto alloc = module.lookupSymbol<LLVM::LLVMFuncOp>(kGenericAlloc);
    auto free = module.lookupSymbol<LLVM::LLVMFuncOp>(kGenericFree);
    // The slots are exported even by a module that allocates nothing, so
    // that the runtime finds every CPU module alike.
    LLVM::GlobalOp allocSlot =
        kiln::defineRuntimeSlot(module, KILN_MEMORY_SLOT_ALLOC);
    LLVM::GlobalOp freeSlot =
        kiln::defineRuntimeSlot(module, KILN_MEMORY_SLOT_FREE);
    if (alloc && alloc.isExternal())
      defineThroughSlot(alloc, allocSlot, "malloc");
    if (free && free.isExternal())
      defineThroughSlot(free, freeSlot, "free");
  }

  /// Gives `function` a body that calls the function in `slot`, or
  /// `fallback` (libc's function of the same signature) while it is null.
  static void defineThroughSlot(LLVM::LLVMFuncOp function, LLVM::GlobalOp slot,
                                StringRef fallback) {
    ModuleOp module = function->getParentOfType<ModuleOp>();
    MLIRContext *context = module.getContext();
    Location loc = function.getLoc();
    LLVM::LLVMFunctionType type = function.getFunctionType();
    OpBuilder b(context);
    b.setInsertionPoint(function);
    auto libc = module.lookupSymbol<LLVM::LLVMFuncOp>(fallback);
    if (!libc)
      libc = b.create<LLVM::LLVMFuncOp>(loc, fallback, type);
    function.setLinkage(LLVM::Linkage::Internal);

    Block *entry = function.addEntryBlock(b);
    Block *hook = b.createBlock(&function.getBody());
    Block *plain = b.createBlock(&function.getBody());
    Type ptr = LLVM::LLVMPointerType::get(context);
    bool returnsValue = !isa<LLVM::LLVMVoidType>(type.getReturnType());
    auto finish = [&](ValueRange results) {
      if (returnsValue)
        b.create<LLVM::ReturnOp>(loc, results.front());
      else
        b.create<LLVM::ReturnOp>(loc, ValueRange());
    };

    b.setInsertionPointToStart(entry);
    Value target = b.create<LLVM::LoadOp>(
        loc, ptr, b.create<LLVM::AddressOfOp>(loc, slot));
    Value bound = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne, target,
                                         b.create<LLVM::ZeroOp>(loc, ptr));
    b.create<LLVM::CondBrOp>(loc, bound, hook, plain);

    SmallVector<Value> arguments(entry->getArguments());
    b.setInsertionPointToStart(hook);
    SmallVector<Value> indirect{target};
    indirect.append(arguments);
    finish(b.create<LLVM::CallOp>(loc, type, indirect)->getResults());

    b.setInsertionPointToStart(plain);
    finish(b.create<LLVM::CallOp>(loc, libc, arguments)->getResults());
  }
};
} // namespace
