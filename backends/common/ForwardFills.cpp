//===- ForwardFills.cpp - copies of filled buffers become fills -----------===//
//
// One-shot bufferization gives each op that writes a fresh zero-initialized
// tensor (a matmul's accumulator, a reduction's init) its own copy of one
// shared zero-filled buffer: `linalg.fill` once, then a `linalg.copy` of the
// whole buffer before every such op. A copy reads and writes the buffer
// where a fill only writes it, and a product that a library computes could
// skip the initialization entirely (beta 0, see MatmulToDnnl.cpp and
// LibraryMatmul.cpp) if it saw a fill right before it.
//
// The pass runs on memrefs, after bufferization and before memory planning.
// For every `linalg.copy` whose source is a whole buffer (not a view), it
// walks back through the block to the last op that may write the source;
// if that op is a `linalg.fill` of the whole source, and the source is
// therefore known to hold the fill value everywhere, the copy becomes a
// `linalg.fill` of its destination with that value. A copy of a constant
// global with a splat initializer (a zero tensor constant copied into a
// loop's accumulator) becomes a fill too.
//
//===----------------------------------------------------------------------===//

#include "common/BufferAccess.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNFORWARDFILLS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// The value of every element of `global`, if it is a constant with a
/// splat initializer (bufferization makes one for each zero tensor
/// constant, e.g. a gradient accumulator's start).
static TypedAttr splatValueOf(memref::GetGlobalOp getGlobal) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      getGlobal, getGlobal.getNameAttr());
  if (!global || !global.getConstant())
    return nullptr;
  auto initial =
      dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr());
  if (!initial || !initial.isSplat())
    return nullptr;
  return initial.getSplatValue<TypedAttr>();
}

/// The value `source` holds everywhere just before `op`: a splat constant
/// global, or a buffer whose last writer before `op` in the block fills it
/// whole. Creates the constant for a global before `op`.
static Value fillValueBefore(Operation *op, Value source,
                             RewriterBase &rewriter) {
  if (auto getGlobal = source.getDefiningOp<memref::GetGlobalOp>()) {
    TypedAttr value = splatValueOf(getGlobal);
    if (!value)
      return nullptr;
    rewriter.setInsertionPoint(op);
    return rewriter.create<arith::ConstantOp>(op->getLoc(), value);
  }
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev);
        fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInitOperand(0)->get() == source)
      return fill.getDpsInputOperand(0)->get();
    if (mayWrite(prev, source))
      return nullptr;
  }
  return nullptr;
}

namespace {
struct KilnForwardFillsPass
    : kiln::impl::KilnForwardFillsBase<KilnForwardFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::CopyOp> copies;
    getOperation().walk([&](linalg::CopyOp copy) {
      if (copy.hasPureBufferSemantics())
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::CopyOp copy : copies) {
      Value source = copy.getDpsInputOperand(0)->get();
      if (rootOf(source) != source)
        continue;
      Value value = fillValueBefore(copy, source, rewriter);
      if (!value)
        continue;
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::FillOp>(
          copy, value, copy.getDpsInitOperand(0)->get());
    }
  }
};
} // namespace
