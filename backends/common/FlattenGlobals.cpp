//===- FlattenGlobals.cpp - Constants as flat byte arrays -----------------===//
//
// MLIR translates a multi-dimensional global's initializer into nested LLVM
// arrays, one uniqued LLVM constant per innermost row: ResNet-50's 1x1
// convolution weights alone make millions of them, and translating,
// optimizing and freeing them took most of its compile time. And LLVM's
// object writer emits a float array element by element, converting each
// to an APFloat, while it copies a byte array (a "string") whole: BERT's
// 400 MB of weights spent most of their compile time there.
//
// So every global holding a non-splat constant of whole-byte elements
// becomes a one-dimensional i8 global of the same bytes (a dense
// attribute's raw data is row-major), aligned to 64 bytes, and each reader
// gets it back typed and shaped through memref.view. Splats (a repeated
// value, cheap either way) and i1 constants (bit-packed in the attribute)
// become one-dimensional globals of their own element type, read through
// memref.expand_shape.
//
// On the CPU the large constants never reach LLVM (kiln-cpu-pool-constants
// moves them to the module's constant pool), so min-pooled-bytes leaves
// them alone: flattening one would copy its bytes for nothing, and a
// transformer's are hundreds of megabytes.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNFLATTENGLOBALS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The alignment of a global turned into bytes: a cache line, so that the
/// generated code's vector loads of it are aligned as they were.
static constexpr int64_t kByteGlobalAlignment = 64;

namespace {
struct KilnFlattenGlobalsPass
    : kiln::impl::KilnFlattenGlobalsBase<KilnFlattenGlobalsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The new type of each global that changes, by name.
    llvm::DenseMap<StringAttr, MemRefType> changed;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      MemRefType type = global.getType();
      auto value =
          dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr());
      if (!value || type.getRank() < 1 || !type.hasStaticShape() ||
          !type.getLayout().isIdentity())
        continue;
      Type element = type.getElementType();
      unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth()
                                             : 0;
      bool bytes = !value.isSplat() && bits >= 8 && bits % 8 == 0;
      if (!bytes && type.getRank() < 2)
        continue;
      if (bytes && global.getConstant() && minPooledBytes > 0 &&
          type.getNumElements() * (bits / 8) >= minPooledBytes)
        continue;
      MemRefType flatType;
      if (bytes) {
        Type i8 = IntegerType::get(&getContext(), 8);
        flatType = MemRefType::get({type.getNumElements() * (bits / 8)}, i8,
                                   nullptr, type.getMemorySpace());
        global.setInitialValueAttr(DenseElementsAttr::getFromRawBuffer(
            RankedTensorType::get(flatType.getShape(), i8),
            value.getRawData()));
        uint64_t alignment = global.getAlignment().value_or(1);
        global.setAlignmentAttr(OpBuilder(global).getI64IntegerAttr(
            std::max<int64_t>(alignment, kByteGlobalAlignment)));
      } else {
        flatType = MemRefType::get({type.getNumElements()}, element, nullptr,
                                   type.getMemorySpace());
        global.setInitialValueAttr(value.reshape(
            RankedTensorType::get(flatType.getShape(), element)));
      }
      global.setType(flatType);
      changed[global.getSymNameAttr()] = flatType;
    }
    if (changed.empty())
      return;
    module.walk([&](memref::GetGlobalOp get) {
      auto it = changed.find(get.getNameAttr().getAttr());
      if (it == changed.end())
        return;
      OpBuilder builder(get);
      Location loc = get.getLoc();
      MemRefType type = get.getType();
      MemRefType flatType = it->second;
      Value flat = builder.create<memref::GetGlobalOp>(loc, flatType,
                                                       get.getNameAttr());
      Value typed;
      if (flatType.getElementType() != type.getElementType()) {
        Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
        typed = builder.create<memref::ViewOp>(loc, type, flat, zero,
                                               ValueRange{});
      } else {
        ReassociationIndices all =
            llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
        typed = builder.create<memref::ExpandShapeOp>(
            loc, type, flat, ArrayRef<ReassociationIndices>{all});
      }
      get.replaceAllUsesWith(typed);
      get.erase();
    });
  }
};
} // namespace
