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
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
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
  // The CPU's choice of row loops is also the choice of host memory.
  populateScatterAddLowerings(patterns, /*hostIndices=*/rowLoops);
  populateConvLowerings(patterns);
  populateControlFlowLowerings(patterns);
  populateStackLowerings(patterns);
  populateWindowLowerings(patterns, rowLoops);
  populateFusedLowerings(patterns);
}

void mlir::kiln::eraseIntegerSignedness(Operation *root) {
  AttrTypeReplacer replacer;
  replacer.addReplacement([](IntegerType type) -> std::optional<Type> {
    if (!type.isUnsigned())
      return std::nullopt;
    return IntegerType::get(type.getContext(), type.getWidth());
  });
  // Dense literals keep their bits and get the signless type (their type is
  // no replaceable sub-element); a blob of a dense resource is the same.
  replacer.addReplacement(
      [](DenseIntOrFPElementsAttr attr) -> std::optional<Attribute> {
        auto integer = dyn_cast<IntegerType>(attr.getElementType());
        if (!integer || !integer.isUnsigned())
          return std::nullopt;
        return attr.bitcast(
            IntegerType::get(attr.getContext(), integer.getWidth()));
      });
  replacer.addReplacement(
      [](DenseResourceElementsAttr attr) -> std::optional<Attribute> {
        auto integer = dyn_cast<IntegerType>(attr.getElementType());
        if (!integer || !integer.isUnsigned())
          return std::nullopt;
        return DenseResourceElementsAttr::get(
            attr.getType().clone(
                IntegerType::get(attr.getContext(), integer.getWidth())),
            attr.getRawHandle());
      });
  // Function types live in an attribute of the function op, and IntegerAttr
  // values carry their type; replacing in attributes as well as result and
  // block argument types covers them all.
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
}

/// Rewrites every op that mlir::kiln::widensHalfPrecision as that
/// definition reads: its f16/bf16 operands cast to f32, the op on f32, its
/// f16/bf16 results cast back. The lowerings below then see f32 only in
/// them (a product of f16 operands becomes an f32 product: oneDNN's sgemm
/// computes it with the same exact products and f32 sums).
static void widenHalfPrecisionOps(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (widensHalfPrecision(op))
      ops.push_back(op);
  });
  OpBuilder builder(root->getContext());
  Type f32 = builder.getF32Type();
  auto widen = [&](Type type) -> Type {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !(tensor.getElementType().isF16() ||
                     tensor.getElementType().isBF16()))
      return type;
    return tensor.clone(f32);
  };
  for (Operation *op : ops) {
    builder.setInsertionPoint(op);
    Location loc = op->getLoc();
    OperationState state(loc, op->getName());
    for (Value operand : op->getOperands()) {
      Type wide = widen(operand.getType());
      state.addOperands(wide == operand.getType()
                            ? operand
                            : builder.create<CastOp>(loc, wide, operand)
                                  .getResult());
    }
    for (Type type : op->getResultTypes())
      state.addTypes(widen(type));
    // A widened product's f32 result is what result_element_type asks for.
    for (NamedAttribute attribute : op->getAttrs())
      if (attribute.getName() != "result_element_type")
        state.addAttribute(attribute.getName(), attribute.getValue());
    Operation *wide = builder.create(state);
    SmallVector<Value> results;
    for (auto [result, widened] :
         llvm::zip(op->getResults(), wide->getResults()))
      results.push_back(result.getType() == widened.getType()
                            ? Value(widened)
                            : builder.create<CastOp>(loc, result.getType(),
                                                     widened)
                                  .getResult());
    op->replaceAllUsesWith(results);
    op->erase();
  }
}

namespace {
struct ConvertKilnToLinalgPass
    : mlir::kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  using ConvertKilnToLinalgBase::ConvertKilnToLinalgBase;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Reject element types the backends do not compile up front with a
    // message that says so, rather than a generic "failed to legalize".
    bool collectives = this->collectives;
    WalkResult uncompiled = getOperation().walk([&](Operation *op) {
      if (!isa<KilnDialect>(op->getDialect()))
        return WalkResult::advance();
      if (isCollective(op)) {
        if (collectives)
          return WalkResult::advance();
        op->emitOpError("communicates between ranks: kiln-to-linalg leaves "
                        "collectives to bufferization only with its "
                        "'collectives' option, which the backends' "
                        "pipelines set");
        return WalkResult::interrupt();
      }
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
    widenHalfPrecisionOps(getOperation());
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect, func::FuncDialect>();
    target.addIllegalDialect<KilnDialect>();
    // The flat collectives bufferize into calls of the communicator
    // (CollectiveCalls.cpp).
    if (collectives)
      target.addLegalOp<AllReduceStartOp, AllGatherStartOp,
                        ReduceScatterStartOp, CollectiveWaitOp,
                        CollectiveBroadcastOp, AllToAllOp,
                        CollectivePermuteOp>();
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
      return signalPassFailure();
    // The patterns read the sign of ui8 ... ui64 from the kiln ops' types
    // and picked the unsigned arith ops; linalg, tensor and arith below this
    // point want signless integers.
    eraseIntegerSignedness(getOperation());
  }
};
} // namespace
