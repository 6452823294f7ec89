//===- FlattenGlobals.cpp - Constants as flat arrays ----------------------===//
//
// MLIR translates a multi-dimensional global's initializer into nested LLVM
// arrays, one uniqued LLVM constant per innermost row: ResNet-50's 1x1
// convolution weights alone make millions of them, and translating,
// optimizing and freeing them took most of its compile time. A
// one-dimensional global translates into one raw data array instead. The
// bytes are the same (a dense attribute is stored in row-major order), so
// each reader gets the flat global reshaped back with memref.expand_shape,
// which expand-strided-metadata later folds into the descriptor.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

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

namespace {
struct KilnFlattenGlobalsPass
    : kiln::impl::KilnFlattenGlobalsBase<KilnFlattenGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The flat type of each global that changes, by name.
    llvm::DenseMap<StringAttr, MemRefType> flattened;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      MemRefType type = global.getType();
      auto value =
          dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr());
      if (!value || type.getRank() < 2 || !type.hasStaticShape() ||
          !type.getLayout().isIdentity())
        continue;
      auto flatType = MemRefType::get({type.getNumElements()},
                                      type.getElementType(), nullptr,
                                      type.getMemorySpace());
      global.setType(flatType);
      global.setInitialValueAttr(value.reshape(RankedTensorType::get(
          flatType.getShape(), flatType.getElementType())));
      flattened[global.getSymNameAttr()] = flatType;
    }
    if (flattened.empty())
      return;
    module.walk([&](memref::GetGlobalOp get) {
      auto it = flattened.find(get.getNameAttr().getAttr());
      if (it == flattened.end())
        return;
      OpBuilder builder(get);
      MemRefType type = get.getType();
      auto flat = builder.create<memref::GetGlobalOp>(get.getLoc(), it->second,
                                                      get.getNameAttr());
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      auto shaped = builder.create<memref::ExpandShapeOp>(
          get.getLoc(), type, flat, ArrayRef<ReassociationIndices>{all});
      get.replaceAllUsesWith(shaped.getResult());
      get.erase();
    });
  }
};
} // namespace
