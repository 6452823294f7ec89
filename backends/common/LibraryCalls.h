//===- LibraryCalls.h - calls into support libraries ------------*- C++ -*-===//
//
// The passes that replace ops or calls of outlined functions by calls of a
// library (on the CPU ConvToDnnl.cpp, AttentionCalls.cpp, MatmulToDnnl.cpp;
// on CUDA LibraryMatmul.cpp) share the same steps: find the calls of the
// functions marked for them, declare the library's entry, and hand it
// constant i64 globals (descriptors, cache slots) by address.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_LIBRARYCALLS_H
#define KILN_BACKENDS_COMMON_LIBRARYCALLS_H

#include "common/BufferAccess.h"
#include "common/BufferAddress.h"
#include "common/OutlinedOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln {

/// The private declaration of the library function `name` of type `type`,
/// made at the start of `module` if it has none; null, with an error on
/// the existing one, if that has another type.
inline func::FuncOp declareLibraryFunction(ModuleOp module, StringRef name,
                                           FunctionType type) {
  if (auto function = module.lookupSymbol<func::FuncOp>(name)) {
    if (function.getFunctionType() == type)
      return function;
    function.emitError() << "'" << name
                         << "' is declared with an unexpected type";
    return nullptr;
  }
  OpBuilder builder(module.getBodyRegion());
  auto function = builder.create<func::FuncOp>(module.getLoc(), name, type);
  function.setPrivate();
  return function;
}

/// Marks the pointer parameters `indices` of the library function
/// `function` `llvm.readonly`: the library only reads the memory they
/// point to (kiln-cuda-resident-constants then lets it read a constant in
/// place).
inline void markReadOnlyParameters(func::FuncOp function,
                                   ArrayRef<unsigned> indices) {
  for (unsigned index : indices)
    function.setArgAttr(index, LLVM::LLVMDialect::getReadonlyAttrName(),
                        UnitAttr::get(function.getContext()));
}

/// A private i64 global named after `name` (made unique in `symbols`)
/// holding `values`, at the builder's insertion point.
inline memref::GlobalOp createI64Global(OpBuilder &builder, Location loc,
                                        SymbolTable &symbols, StringRef name,
                                        ArrayRef<int64_t> values,
                                        bool constant, IntegerAttr alignment) {
  Type i64 = builder.getI64Type();
  auto type = MemRefType::get({static_cast<int64_t>(values.size())}, i64);
  auto global = builder.create<memref::GlobalOp>(
      loc, name, builder.getStringAttr("private"), type,
      DenseElementsAttr::get(RankedTensorType::get(type.getShape(), i64),
                             values),
      constant, alignment);
  symbols.insert(global);
  return global;
}

/// The address of `global`'s first element as an !llvm.ptr, computed at
/// the builder's insertion point.
inline Value globalPointer(OpBuilder &builder, Location loc,
                           memref::GlobalOp global) {
  Value memref = builder.create<memref::GetGlobalOp>(loc, global.getType(),
                                                     global.getSymName());
  Value index =
      builder.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Value address =
      builder.create<arith::IndexCastOp>(loc, builder.getI64Type(), index);
  return builder.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(builder.getContext()), address);
}

/// The values of the constant global whose address globalPointer made
/// `pointer` from (a library call's descriptor), or none where `pointer`
/// is not such an address.
inline std::optional<SmallVector<int64_t>> constantAtPointer(Value pointer) {
  auto address = pointer.getDefiningOp<LLVM::IntToPtrOp>();
  auto index =
      address ? address.getArg().getDefiningOp<arith::IndexCastOp>() : nullptr;
  auto aligned =
      index ? index.getIn()
                  .getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>()
            : nullptr;
  auto get = aligned ? aligned.getSource().getDefiningOp<memref::GetGlobalOp>()
                     : nullptr;
  auto global = get ? SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
                          get, get.getNameAttr())
                    : nullptr;
  auto values = global && global.getConstant()
                    ? dyn_cast_or_null<DenseIntElementsAttr>(
                          global.getConstantInitValue())
                    : nullptr;
  if (!values)
    return std::nullopt;
  SmallVector<int64_t> result;
  for (const APInt &value : values.getValues<APInt>())
    result.push_back(value.getSExtValue());
  return result;
}

/// A fresh dense buffer (identity layout, 64-byte aligned) standing in
/// for `operand` around `op`: filled by a copy before `op` where `op` reads
/// it, copied back into `operand` after `op` where `op` writes it
/// (`written`), and freed after `op`. For a library that takes dense
/// buffers only, or a view whose address the host would read memory for
/// (the copy's kernel reads that instead).
inline Value denseCopyAround(Operation *op, Value operand, bool written) {
  auto type = cast<MemRefType>(operand.getType());
  Location loc = op->getLoc();
  OpBuilder before(op);
  Value copy = before.create<memref::AllocOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType()),
      before.getI64IntegerAttr(64));
  OpBuilder after(op->getNextNode());
  if (written)
    after.create<linalg::CopyOp>(loc, copy, operand);
  else
    before.create<linalg::CopyOp>(loc, operand, copy);
  after.create<memref::DeallocOp>(loc, copy);
  return copy;
}

/// `operand` as a library that reads dense buffers takes it around `op`:
/// itself where it is dense in row-major order and its address needs no
/// read of memory, otherwise a dense copy (denseCopyAround).
inline Value denseForLibrary(Operation *op, Value operand, bool written) {
  auto type = cast<MemRefType>(operand.getType());
  if (memref::isStaticShapeAndContiguousRowMajor(type) &&
      !addressReadsMemory(operand))
    return operand;
  return denseCopyAround(op, operand, written);
}

/// The device address of `buffer`'s first element as an !llvm.ptr, for a
/// library call, computed at the builder's insertion point.
inline Value libraryPointer(OpBuilder &builder, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  BufferAddress view =
      bufferAddressOf(builder, loc, buffer, type.getElementTypeBitWidth() / 8);
  return builder.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(builder.getContext()), view.address);
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_LIBRARYCALLS_H
