//===- KilnToLinalg.cpp - The kiln-to-linalg conversion pass --------------===//
//
// Applies the elementwise, structural, window, control-flow, stack and
// fused-region lowerings with the dialect conversion driver so that any kiln
// op left behind is an error that names the op, instead of a silently
// half-lowered function.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/ElementTypes.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

void mlir::kiln::populateKilnToLinalgPatterns(RewritePatternSet &patterns,
                                              bool rowLoops) {
  populateElementwiseLowerings(patterns);
  populateStructuralLowerings(patterns);
  populateArgReduceLowerings(patterns);
  populateCumsumLowerings(patterns);
  populateConvLowerings(patterns);
  populateControlFlowLowerings(patterns);
  populateStackLowerings(patterns);
  populateWindowLowerings(patterns, rowLoops);
  populateFusedLowerings(patterns);
}

namespace {
struct ConvertKilnToLinalgPass
    : mlir::kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  using ConvertKilnToLinalgBase::ConvertKilnToLinalgBase;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Reject element types the backends do not compile (f16, bf16) up
    // front with a message that says so, rather than a generic "failed to
    // legalize".
    WalkResult uncompiled = getOperation().walk([](Operation *op) {
      if (!isa<KilnDialect>(op->getDialect()))
        return WalkResult::advance();
      SmallVector<Type> types(op->getOperandTypes());
      llvm::append_range(types, op->getResultTypes());
      for (Type type : types) {
        Type element = getElementTypeOrSelf(type);
        if (!::kiln::isCompiledElementType(element)) {
          op->emitOpError("uses ")
              << element << ", which the CPU backend does not support yet "
              << "(supported: " << ::kiln::compiledElementTypeNames() << ")";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (uncompiled.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect, func::FuncDialect>();
    target.addIllegalDialect<KilnDialect>();
    // A kiln.fused region becomes a kiln.fused_kernel whose body keeps its
    // kiln.yield (FusedLowering.cpp).
    target.addLegalOp<FusedKernelOp>();
    target.addDynamicallyLegalOp<YieldOp>([](YieldOp yield) {
      return isa<FusedKernelOp>(yield->getParentOp());
    });
    RewritePatternSet patterns(context);
    populateKilnToLinalgPatterns(patterns, rowLoops);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
