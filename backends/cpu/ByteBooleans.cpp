//===- ByteBooleans.cpp - i1 buffers read and written as bytes ------------===//
//
// A buffer of i1 (a kiln tensor of booleans: a comparison's result kept
// for the gradient of a relu or a max, a mask) holds one byte per element,
// 0 or 1, in memory; after the lowering each access is an `llvm.load` or
// `llvm.store` of i1. LLVM's loop vectorizer does not widen loads and
// stores of a type whose size in bits differs from its size in memory: a
// loop that writes or reads an i1 buffer stays scalar, element by element,
// and so does all the arithmetic in it (on the MLP training step's
// 256x1024 relu masks, half a millisecond per step). Reading and writing
// the same bytes as i8 lets it vectorize them:
//
//   1. every scalar `llvm.load` of i1 becomes a load of i8 from the same
//      address, compared with zero (`icmp ne`: a byte other than 0 reads as
//      true, as C's bool and numpy's do);
//   2. every scalar `llvm.store` of an i1 value stores it zero-extended to
//      i8 (the 0 or 1 byte that LLVM itself stores for an i1).
//
// Alignment, volatility and non-temporality carry over (the LLVM dialect
// has no atomic access of i1). Loads and stores of vectors of i1
// (bit-packed in LLVM) are not buffer accesses the kiln lowering makes and
// are left alone.
//
//===----------------------------------------------------------------------===//

#include "LlvmAccesses.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUBYTEBOOLEANS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

static bool isBoolean(Type type) { return type.isInteger(1); }

namespace {
/// Step 1: load i8, compare with zero.
struct LoadBooleanAsByte : OpRewritePattern<LLVM::LoadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::LoadOp load,
                                PatternRewriter &rewriter) const override {
    if (!isBoolean(load.getType()))
      return failure();
    Location loc = load.getLoc();
    Type i8 = rewriter.getI8Type();
    auto byte = rewriter.create<LLVM::LoadOp>(
        loc, i8, load.getAddr(), load.getAlignment().value_or(0),
        load.getVolatile_(), load.getNontemporal());
    Value zero = rewriter.create<LLVM::ConstantOp>(loc, i8, 0);
    rewriter.replaceOpWithNewOp<LLVM::ICmpOp>(load, LLVM::ICmpPredicate::ne,
                                              byte, zero);
    return success();
  }
};

/// Step 2: zero-extend, store i8.
struct StoreBooleanAsByte : OpRewritePattern<LLVM::StoreOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::StoreOp store,
                                PatternRewriter &rewriter) const override {
    if (!isBoolean(store.getValue().getType()))
      return failure();
    Value byte = rewriter.create<LLVM::ZExtOp>(
        store.getLoc(), rewriter.getI8Type(), store.getValue());
    rewriter.replaceOpWithNewOp<LLVM::StoreOp>(
        store, byte, store.getAddr(), store.getAlignment().value_or(0),
        store.getVolatile_(), store.getNontemporal());
    return success();
  }
};

struct KilnCpuByteBooleansPass
    : mlir::kiln::impl::KilnCpuByteBooleansBase<KilnCpuByteBooleansPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LoadBooleanAsByte, StoreBooleanAsByte>(&getContext());
    if (failed(mlir::kiln::rewriteAccesses(getOperation(), isBoolean,
                                           std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
