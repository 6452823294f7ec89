//===- ExpandBFloat16.cpp - bf16 conversions as integer ops ---------------===//
//
// Applies upstream's bf16 expansion patterns (see the pass description in
// Passes.td): extf from bf16 becomes a shift into the high half of an f32,
// truncf to bf16 a round-to-nearest-even on the f32 bits.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUEXPANDBFLOAT16
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnCpuExpandBFloat16Pass
    : mlir::kiln::impl::KilnCpuExpandBFloat16Base<KilnCpuExpandBFloat16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
