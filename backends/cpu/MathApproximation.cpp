//===- MathApproximation.cpp - Vectorizable f32 transcendentals -----------===//
//
// A call to libm's tanhf or expf inside a loop keeps LLVM's loop vectorizer
// from vectorizing that loop, and the scalar call dominates the loop's time
// (a GELU spends almost all of it in tanhf). Upstream's polynomial
// approximations rewrite the f32 math ops (tanh, exp, expm1, log, log1p,
// log2, erf, atan, atan2, asin, acos, cbrt) into plain arith (fma, bit
// casts, selects), which the loop vectorizer turns into AVX-512 code like
// any other arithmetic. f64 ops are left to libm, and so are sin and cos:
// upstream's versions reduce large arguments poorly, and they are rarely
// what an ML loop spends its time in.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUMATHAPPROXIMATION
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnCpuMathApproximationPass
    : kiln::impl::KilnCpuMathApproximationBase<KilnCpuMathApproximationPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) &&
          !isa<math::SinOp, math::CosOp>(op))
        ops.push_back(op);
    });
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    // Only the ops collected above, and what their rewrites create (log1p
    // becomes log, expm1 exp, ...).
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    (void)applyOpPatternsAndFold(ops, std::move(patterns), config);
  }
};
} // namespace
