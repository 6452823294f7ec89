//===- PoolConstants.cpp - Large constants out of the code object ---------===//
//
// A transformer's weights are hundreds of megabytes of constant globals.
// Kept in the code, every byte is copied into an LLVM constant, written by
// the object writer, copied again by the linker into the shared object and
// once more by the runtime's loader: BERT-base spent 9 of its 15 s of
// compile time there. So the large constants leave the code: each gets an
// offset in a pool that the .kmod carries next to the code, and the code
// reads the pool's base from a slot the runtime fills (kiln/ConstantsAbi.h).
//
// The pass only decides and rewrites the uses; the pooled globals keep their
// initializers, marked with their offsets, so that the decision is in the IR
// for lit to check. extractConstantPool, called by the driver before
// translation, copies their bytes out and erases them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Passes.h"

#include "RuntimeSlots.h"

#include "kiln/ConstantsAbi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUPOOLCONSTANTS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The bytes of a constant global that can be pooled, or null: a non-splat
/// dense initializer of whole-byte integers or floats whose raw data is
/// exactly the global's storage.
static DenseElementsAttr poolableValue(LLVM::GlobalOp global,
                                       const DataLayout &layout) {
  if (!global.getConstant())
    return nullptr;
  auto value = dyn_cast_or_null<DenseElementsAttr>(global.getValueOrNull());
  if (!value || value.isSplat())
    return nullptr;
  Type element = value.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return nullptr;
  uint64_t bytes =
      value.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
  if (value.getRawData().size() != bytes ||
      layout.getTypeSize(global.getGlobalType()) != bytes)
    return nullptr;
  return value;
}

namespace {
struct KilnCpuPoolConstantsPass
    : kiln::impl::KilnCpuPoolConstantsBase<KilnCpuPoolConstantsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module.lookupSymbol(KILN_CONSTANTS_SLOT) ||
        module.lookupSymbol(KILN_CONSTANTS_SIZE)) {
      module.emitError("the module has its constant pool already");
      return signalPassFailure();
    }
    // Every address taken of a global, in one walk; a global whose address
    // a global's initializer takes stays in the code.
    llvm::DenseMap<StringAttr, SmallVector<LLVM::AddressOfOp>> uses;
    llvm::DenseSet<StringAttr> pinned;
    module.walk([&](LLVM::AddressOfOp address) {
      StringAttr name = address.getGlobalNameAttr().getAttr();
      if (address->getParentOfType<LLVM::LLVMFuncOp>())
        uses[name].push_back(address);
      else
        pinned.insert(name);
    });

    DataLayout layout(module);
    MLIRContext *context = &getContext();
    Builder builder(context);
    SmallVector<std::pair<LLVM::GlobalOp, DenseElementsAttr>> candidates;
    for (auto global : module.getOps<LLVM::GlobalOp>()) {
      DenseElementsAttr value = poolableValue(global, layout);
      if (value && value.getRawData().size() >= uint64_t(minBytes) &&
          !pinned.contains(global.getSymNameAttr()))
        candidates.push_back({global, value});
    }
    // In the order of their names, not of the ops: the lowering does not
    // always create a module's globals in the same order, and the pool's
    // bytes should not depend on it.
    llvm::sort(candidates, [](auto a, auto b) {
      return a.first.getSymName() < b.first.getSymName();
    });
    uint64_t size = 0;
    SmallVector<std::pair<LLVM::GlobalOp, uint64_t>> pooled;
    for (auto [global, value] : candidates) {
      uint64_t alignment = std::max<uint64_t>(
          global.getAlignment().value_or(1), KILN_CONSTANTS_ALIGNMENT);
      if (!llvm::isPowerOf2_64(alignment) ||
          alignment > KILN_CONSTANTS_ALIGNMENT)
        continue;
      uint64_t offset = llvm::alignTo(size, alignment);
      size = offset + value.getRawData().size();
      global->setAttr(kiln::kPoolOffsetAttrName,
                      builder.getI64IntegerAttr(offset));
      pooled.push_back({global, offset});
    }
    if (pooled.empty())
      return;

    LLVM::GlobalOp slot = defineExports(module, size);
    Type ptr = LLVM::LLVMPointerType::get(context);
    Type i8 = IntegerType::get(context, 8);
    for (auto [global, offset] : pooled) {
      for (LLVM::AddressOfOp address : uses.lookup(global.getSymNameAttr())) {
        OpBuilder b(address);
        Location loc = address.getLoc();
        // The runtime stores the base before any function runs and never
        // changes it, so the load is invariant: LLVM may hoist and merge it.
        Value base = b.create<LLVM::LoadOp>(
            loc, ptr, b.create<LLVM::AddressOfOp>(loc, slot),
            /*alignment=*/8, /*isVolatile=*/false, /*isNonTemporal=*/false,
            /*isInvariant=*/true);
        // The offset is an i64 operand: a GEP's constant indices hold only
        // 29 bits, and a transformer's pool is larger than 256 MiB.
        Value at = base;
        if (offset != 0) {
          Value bytes = b.create<LLVM::ConstantOp>(
              loc, b.getI64Type(), b.getI64IntegerAttr(offset));
          at = b.create<LLVM::GEPOp>(loc, ptr, i8, base, ValueRange{bytes},
                                     /*inbounds=*/true);
        }
        address.replaceAllUsesWith(at);
        address.erase();
      }
    }
  }

  /// Defines the exported slot (a writable pointer, null until the runtime
  /// fills it) and the exported size constant, and returns the slot.
  static LLVM::GlobalOp defineExports(ModuleOp module, uint64_t size) {
    LLVM::GlobalOp slot = kiln::defineRuntimeSlot(module, KILN_CONSTANTS_SLOT);
    OpBuilder b(slot->getContext());
    b.setInsertionPointAfter(slot);
    b.create<LLVM::GlobalOp>(module.getLoc(), b.getI64Type(),
                             /*isConstant=*/true, LLVM::Linkage::External,
                             KILN_CONSTANTS_SIZE, b.getI64IntegerAttr(size),
                             /*alignment=*/8);
    return slot;
  }
};
} // namespace

void kiln::ConstantPool::write(uint8_t *pool) const {
  for (auto [offset, bytes] : pieces)
    std::memcpy(pool + offset, bytes.data(), bytes.size());
}

bool kiln::extractConstantPool(ModuleOp module, ConstantPool &pool,
                               std::string &error) {
  pool = ConstantPool();
  auto sizeGlobal = module.lookupSymbol<LLVM::GlobalOp>(KILN_CONSTANTS_SIZE);
  if (!sizeGlobal)
    return true;
  auto sizeValue = dyn_cast_or_null<IntegerAttr>(sizeGlobal.getValueOrNull());
  if (!sizeValue) {
    error = "the constant pool's size (" KILN_CONSTANTS_SIZE
            ") is not an integer";
    return false;
  }
  uint64_t size = sizeValue.getValue().getZExtValue();
  llvm::DenseSet<StringAttr> used;
  module.walk([&](LLVM::AddressOfOp address) {
    used.insert(address.getGlobalNameAttr().getAttr());
  });
  ConstantPool taken;
  taken.size = size;
  SmallVector<LLVM::GlobalOp> pooled;
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    auto offset = global->getAttrOfType<IntegerAttr>(kPoolOffsetAttrName);
    if (!offset)
      continue;
    auto value = dyn_cast_or_null<DenseElementsAttr>(global.getValueOrNull());
    uint64_t at = offset.getValue().getZExtValue();
    if (!value || value.getRawData().size() > size ||
        at > size - value.getRawData().size()) {
      error = "pooled constant @" + global.getSymName().str() +
              " does not fit in the constant pool of " + std::to_string(size) +
              " bytes";
      return false;
    }
    if (used.contains(global.getSymNameAttr())) {
      error = "pooled constant @" + global.getSymName().str() +
              " is still used by the code";
      return false;
    }
    taken.pieces.push_back({at, value.getRawData()});
    pooled.push_back(global);
  }
  for (LLVM::GlobalOp global : pooled)
    global.erase();
  pool = std::move(taken);
  return true;
}
