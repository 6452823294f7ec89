//===- BFloat16AsI16.cpp - bf16 buffers read and written as i16 -----------===//
//
// After kiln-cpu-expand-bf16 the code converts between bf16 and f32 with
// integer ops, but its loads and stores still move bf16 values: a copy of
// a bf16 buffer (a broadcast, a transpose, a slice of an autocast model's
// activations) loads and stores `bfloat`. x86 below AVX512-BF16 has no
// bf16 registers: LLVM widens every bf16 value it holds to f32 and narrows
// it back before a store by calling `__truncsfbf2`, which the C runtime the
// shared objects are linked against (GCC 12's libgcc) does not provide: a
// module with such a copy failed to load on those CPUs ("undefined symbol:
// __truncsfbf2"), and on the others paid a conversion per element for a
// copy of bits. Moving the same 16 bits as i16 needs neither:
//
//   1. every `llvm.load` of bf16 (or of a vector of bf16) becomes a load of
//      i16 (a vector of i16) from the same address, bit-cast to bf16;
//   2. every `llvm.store` of a bf16 value stores it bit-cast to i16.
//
// LLVM folds the bit casts between a load and a store (a copy becomes an
// i16 copy) and those into kiln-cpu-expand-bf16's own casts to i16.
// Alignment, volatility and non-temporality carry over.
//
//===----------------------------------------------------------------------===//

#include "LlvmAccesses.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUBFLOAT16ASI16
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// `type` with i16 for bf16 (a scalar or the elements of a vector), or
/// null where it holds no bf16.
static Type asI16(Type type) {
  Type i16 = IntegerType::get(type.getContext(), 16);
  if (type.isBF16())
    return i16;
  if (auto vector = dyn_cast<VectorType>(type))
    if (vector.getElementType().isBF16())
      return vector.clone(i16);
  return nullptr;
}

namespace {
/// Step 1: load i16, bit-cast to bf16.
struct LoadBFloat16AsI16 : OpRewritePattern<LLVM::LoadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::LoadOp load,
                                PatternRewriter &rewriter) const override {
    Type bits = asI16(load.getType());
    if (!bits)
      return failure();
    auto word = rewriter.create<LLVM::LoadOp>(
        load.getLoc(), bits, load.getAddr(), load.getAlignment().value_or(0),
        load.getVolatile_(), load.getNontemporal());
    rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(load, load.getType(), word);
    return success();
  }
};

/// Step 2: bit-cast to i16, store.
struct StoreBFloat16AsI16 : OpRewritePattern<LLVM::StoreOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LLVM::StoreOp store,
                                PatternRewriter &rewriter) const override {
    Type bits = asI16(store.getValue().getType());
    if (!bits)
      return failure();
    Value word = rewriter.create<LLVM::BitcastOp>(store.getLoc(), bits,
                                                  store.getValue());
    rewriter.replaceOpWithNewOp<LLVM::StoreOp>(
        store, word, store.getAddr(), store.getAlignment().value_or(0),
        store.getVolatile_(), store.getNontemporal());
    return success();
  }
};

struct KilnCpuBFloat16AsI16Pass
    : mlir::kiln::impl::KilnCpuBFloat16AsI16Base<KilnCpuBFloat16AsI16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LoadBFloat16AsI16, StoreBFloat16AsI16>(&getContext());
    auto isBFloat16 = [](Type type) { return asI16(type) != nullptr; };
    if (failed(mlir::kiln::rewriteAccesses(getOperation(), isBFloat16,
                                           std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
