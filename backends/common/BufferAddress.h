//===- BufferAddress.h - a memref's address for a library call --*- C++ -*-===//
//
// The passes that replace linalg ops or calls by library calls (oneDNN on
// the CPU: MatmulToDnnl.cpp, ConvToDnnl.cpp; cuBLASLt through the runtime
// on CUDA: LibraryMatmul.cpp) pass plain pointers: the address of a
// memref's first element, computed from its strided metadata.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_BUFFERADDRESS_H
#define KILN_BACKENDS_COMMON_BUFFERADDRESS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::kiln {

/// The address of a memref's first element (i64) and its strides (index).
struct BufferAddress {
  Value address;
  SmallVector<Value> strides;
};

/// The `memref.view` a memref is derived from through view-like ops, if
/// any (the arenas of kiln-cpu-plan-memory). Its byte shift must be added
/// explicitly: `expand-strided-metadata` folds the metadata of view-like ops
/// into that of their source and drops the shift of a `memref.view`, while
/// the offset it leaves is relative to the view.
inline memref::ViewOp arenaViewOf(Value memref) {
  Operation *def = memref.getDefiningOp();
  while (auto viewLike = dyn_cast_or_null<ViewLikeOpInterface>(def)) {
    if (auto view = dyn_cast<memref::ViewOp>(def))
      return view;
    def = viewLike.getViewSource().getDefiningOp();
  }
  return nullptr;
}

/// The address and strides of `memref`, whose elements are `elementBytes`
/// bytes wide, computed before the op at the builder's insertion point.
inline BufferAddress bufferAddressOf(OpBuilder &builder, Location loc,
                                     Value memref, int64_t elementBytes) {
  auto metadata = builder.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Value base;
  if (memref::ViewOp view = arenaViewOf(memref)) {
    // The arena's pointer plus the byte shift, then the offset from the
    // view (see arenaViewOf).
    base = builder.create<memref::ExtractAlignedPointerAsIndexOp>(
        loc, view.getSource());
    base = builder.create<arith::AddIOp>(loc, base, view.getByteShift());
  } else {
    base = builder.create<memref::ExtractAlignedPointerAsIndexOp>(
        loc, metadata.getBaseBuffer());
  }
  Value width = builder.create<arith::ConstantIndexOp>(loc, elementBytes);
  Value offset =
      builder.create<arith::MulIOp>(loc, metadata.getOffset(), width);
  Value address = builder.create<arith::AddIOp>(loc, base, offset);
  BufferAddress result;
  result.address = builder.create<arith::IndexCastOp>(
      loc, builder.getI64Type(), address);
  result.strides.assign(metadata.getStrides().begin(),
                        metadata.getStrides().end());
  return result;
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_BUFFERADDRESS_H
