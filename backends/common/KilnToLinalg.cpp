//===- KilnToLinalg.cpp - The kiln-to-linalg conversion pass --------------===//
//
// Applies the elementwise, structural and control-flow lowerings with the
// dialect conversion driver so that any kiln op left behind is an error
// that names the op, instead of a silently half-lowered function.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

void kiln::populateKilnToLinalgPatterns(RewritePatternSet &patterns) {
  populateElementwiseLowerings(patterns);
  populateStructuralLowerings(patterns);
  populateControlFlowLowerings(patterns);
}

namespace {
struct ConvertKilnToLinalgPass
    : kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect, func::FuncDialect>();
    target.addIllegalDialect<KilnDialect>();
    RewritePatternSet patterns(context);
    populateKilnToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
