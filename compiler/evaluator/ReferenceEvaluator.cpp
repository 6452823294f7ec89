//===- ReferenceEvaluator.cpp - Interpreter for kiln IR -------------------===//
//
// Walks a kiln function op by op, keeping one HostTensor per SSA value. Each
// op is dispatched to its kernel (EvaluateOps.h: a scalar function mapped
// over the elements, or one of the per-op kernels of EvaluateElementwise,
// EvaluateShapes, EvaluateReductions, EvaluateWindows and
// EvaluateAttention) that computes its results from its operands; region
// ops (cond, while, for, fused) and func.call recurse into blocks.
// The numerics are spelled out in ReferenceEvaluator.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/ReferenceEvaluator.h"

#include "EvaluateAttention.h"
#include "EvaluateOps.h"
#include "SimulatedRanks.h"

#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/IR/Threefry.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

using namespace mlir;
using namespace mlir::kiln;
using ::kiln::ElementKind;
using ::kiln::EvaluatorOptions;
using ::kiln::HostTensor;
using ::kiln::roundToFloat;
using ::kiln::getElementTypeInfo;
using ::kiln::wrapToInt;
using namespace ::kiln::evaluator;


//===----------------------------------------------------------------------===//

// Evaluator
//===----------------------------------------------------------------------===//

namespace {
/// Holds what outlives a single block: the options, the call depth, and
/// which callees have been verified.
class Evaluator {
public:
  /// An evaluator for rank `rank` of the run whose collectives meet in
  /// `ranks`.
  Evaluator(const EvaluatorOptions &options, ::kiln::SimulatedRanks &ranks,
            unsigned rank)
      : options(options), ranks(ranks), rank(rank) {}

  /// Skips verification of the functions it calls: evaluateSpmd verifies
  /// them once, before the ranks' threads start, because verification
  /// reports through the MLIRContext's diagnostic handlers, which one
  /// thread at a time may install.
  void assumeVerified() { verified = true; }

  /// Checks `inputs` against the signature of `func` and runs its body.
  llvm::Expected<Results> callFunction(func::FuncOp func,
                                       ArrayRef<HostTensor> inputs);

private:
  /// Runs the ops of `block` with its arguments bound to `args` and returns
  /// the operands of its terminator (kiln.yield or func.return). Regions of
  /// kiln ops are isolated from above, so the block's arguments and its own
  /// ops are the only values it can see.
  llvm::Expected<Results> runBlock(Block &block, Results args);

  llvm::Expected<Results> evaluateOp(Operation *op,
                                     ArrayRef<const HostTensor *> operands);
  /// evaluateOp for an op that mlir::kiln::widensHalfPrecision: on the
  /// operands widened to f32, its float results rounded to the op's types.
  llvm::Expected<Results> evaluateWidened(Operation *op,
                                          ArrayRef<const HostTensor *> operands);
  /// The op's semantics in its operands' types.
  llvm::Expected<Results> evaluateInTypes(Operation *op,
                                          ArrayRef<const HostTensor *> operands);

  llvm::Expected<Results> evaluateCondOp(CondOp op,
                                         ArrayRef<const HostTensor *> operands);
  llvm::Expected<Results>
  evaluateWhileOp(WhileOp op, ArrayRef<const HostTensor *> operands);
  llvm::Expected<Results> evaluateForOp(ForOp op,
                                        ArrayRef<const HostTensor *> operands);
  llvm::Expected<Results>
  evaluateFusedOp(FusedOp op, ArrayRef<const HostTensor *> operands);
  llvm::Expected<Results> evaluateCallOp(func::CallOp op,
                                         ArrayRef<const HostTensor *> operands);
  /// A collective or start op: this rank's part of the exchange.
  llvm::Expected<Results> exchange(Operation *op, const HostTensor &operand);

  llvm::Error verifyOnce(func::FuncOp func);
  static llvm::Error checkInputs(func::FuncOp func,
                                 ArrayRef<HostTensor> inputs);

  const EvaluatorOptions &options;
  ::kiln::SimulatedRanks &ranks;
  unsigned rank;
  bool verified = false;
  unsigned callDepth = 0;
  llvm::DenseSet<Operation *> verifiedFunctions;
};
} // namespace

static Results copyAll(ArrayRef<const HostTensor *> tensors) {
  Results copies;
  for (const HostTensor *tensor : tensors)
    copies.push_back(*tensor);
  return copies;
}

/// Runs the verifier on `func`, its diagnostics collected into the error.
static llvm::Error verifyFunction(func::FuncOp func) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(func.getContext(), [&](Diagnostic &diag) {
    diagnostics +=
        "\n  " + describeLocation(diag.getLocation()) + ": " + diag.str();
    return success();
  });
  if (failed(verify(func)))
    return makeError("the IR fails verification in " + describeOp(func) +
                     diagnostics);
  return llvm::Error::success();
}

llvm::Error Evaluator::verifyOnce(func::FuncOp func) {
  if (verified || verifiedFunctions.contains(func))
    return llvm::Error::success();
  if (llvm::Error error = verifyFunction(func))
    return error;
  verifiedFunctions.insert(func);
  return llvm::Error::success();
}

llvm::Error Evaluator::checkInputs(func::FuncOp func,
                                   ArrayRef<HostTensor> inputs) {
  TypeRange argumentTypes = func.getArgumentTypes();
  if (inputs.size() != argumentTypes.size())
    return opError(func, "expected " + Twine(argumentTypes.size()) +
                             " inputs but got " + Twine(inputs.size()));
  for (auto [index, input, type] : llvm::enumerate(inputs, argumentTypes)) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || !tensorType.hasStaticShape() ||
        !::kiln::classifyElementType(tensorType.getElementType()))
      return opError(func, "argument #" + Twine(index) + " has type " +
                               typeString(type) +
                               ", which the evaluator cannot represent");
    if (input.elementType != tensorType.getElementType() ||
        ArrayRef(input.shape) != tensorType.getShape())
      return opError(func, "input #" + Twine(index) + " is " +
                               describeInput(input) + " but the argument is " +
                               typeString(type));
    size_t stored = input.isFloat() ? input.f.size() : input.i.size();
    if (static_cast<int64_t>(stored) != tensorType.getNumElements())
      return opError(func, "input #" + Twine(index) + " stores " +
                               Twine(stored) + " elements but its shape has " +
                               Twine(tensorType.getNumElements()));
  }
  return llvm::Error::success();
}

llvm::Expected<Results> Evaluator::callFunction(func::FuncOp func,
                                                ArrayRef<HostTensor> inputs) {
  if (func.isExternal())
    return opError(func, "cannot evaluate a function without a body");
  if (callDepth >= options.maxCallDepth)
    return opError(func, "call depth exceeds the limit of " +
                             Twine(options.maxCallDepth));
  if (llvm::Error error = verifyOnce(func))
    return std::move(error);
  if (llvm::Error error = checkInputs(func, inputs))
    return std::move(error);
  if (!func.getBody().hasOneBlock())
    return opError(func, "only single-block function bodies are supported");
  ++callDepth;
  llvm::Expected<Results> results =
      runBlock(func.getBody().front(), Results(inputs.begin(), inputs.end()));
  --callDepth;
  return results;
}

llvm::Expected<Results> Evaluator::runBlock(Block &block, Results args) {
  if (block.getNumArguments() != args.size())
    return makeError("internal error: a block with " +
                     Twine(block.getNumArguments()) + " arguments received " +
                     Twine(args.size()) + " values");
  llvm::DenseMap<Value, HostTensor> values;
  for (auto [argument, tensor] : llvm::zip(block.getArguments(), args))
    values[argument] = std::move(tensor);

  SmallVector<const HostTensor *> operands;
  for (Operation &op : block) {
    operands.clear();
    for (Value operand : op.getOperands()) {
      auto it = values.find(operand);
      if (it == values.end())
        return opError(&op, "operand defined outside the enclosing block");
      operands.push_back(&it->second);
    }
    if (isa<YieldOp, func::ReturnOp>(op))
      return copyAll(operands);

    llvm::Expected<Results> results = evaluateOp(&op, operands);
    if (!results)
      return results.takeError();
    if (results->size() != op.getNumResults())
      return opError(&op, "internal error: produced " +
                              Twine(results->size()) + " values for " +
                              Twine(op.getNumResults()) + " results");
    for (auto [result, tensor] : llvm::zip(op.getResults(), *results))
      values[result] = std::move(tensor);
  }
  return makeError("block does not end in kiln.yield or func.return");
}

static llvm::Expected<Results> single(HostTensor tensor) {
  Results results;
  results.push_back(std::move(tensor));
  return results;
}

static llvm::Expected<Results> single(llvm::Expected<HostTensor> tensor) {
  if (!tensor)
    return tensor.takeError();
  return single(std::move(*tensor));
}

llvm::Expected<Results>
Evaluator::evaluateOp(Operation *op, ArrayRef<const HostTensor *> operands) {
  if (widensHalfPrecision(op))
    return evaluateWidened(op, operands);
  return evaluateInTypes(op, operands);
}

llvm::Expected<Results>
Evaluator::evaluateWidened(Operation *op,
                           ArrayRef<const HostTensor *> operands) {
  Type f32 = Float32Type::get(op->getContext());
  std::vector<HostTensor> widened;
  widened.reserve(operands.size());
  for (const HostTensor *operand : operands) {
    widened.push_back(*operand);
    // f16 and bf16 values are f32 values as they are.
    if (operand->elementType.isF16() || operand->elementType.isBF16())
      widened.back().elementType = f32;
  }
  SmallVector<const HostTensor *> pointers;
  for (const HostTensor &tensor : widened)
    pointers.push_back(&tensor);
  llvm::Expected<Results> results = evaluateInTypes(op, pointers);
  if (!results)
    return results.takeError();
  for (auto [tensor, type] : llvm::zip(*results, op->getResultTypes())) {
    Type element = getElementTypeOrSelf(type);
    if (!tensor.isFloat() || !isa<FloatType>(element))
      continue;
    HostTensor narrowed(element, tensor.shape);
    ElementKind kind = narrowed.kind();
    for (auto [to, from] : llvm::zip(narrowed.f, tensor.f))
      to = roundToFloat(kind, from);
    tensor = std::move(narrowed);
  }
  return results;
}

llvm::Expected<Results>
Evaluator::evaluateInTypes(Operation *op,
                           ArrayRef<const HostTensor *> operands) {
  auto arg = [&](unsigned index) -> const HostTensor & {
    return *operands[index];
  };
  using Result = llvm::Expected<Results>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      // Constants.
      .Case([&](ConstantOp op) { return single(evaluateConstant(op)); })
      .Case([&](IotaOp op) { return single(evaluateIota(op)); })
      // Elementwise binary.
      .Case([&](AddOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return a + b; },
            wrappingAdd));
      })
      .Case([&](SubOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return a - b; },
            wrappingSub));
      })
      .Case([&](MulOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return a * b; },
            wrappingMul));
      })
      .Case([&](DivOp op) { return single(evaluateDiv(op, arg(0), arg(1))); })
      .Case([&](MaxOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(arg(0), arg(1), floatMax,
                                [kind](int64_t a, int64_t b) {
                                  return intMax(kind, a, b);
                                }));
      })
      .Case([&](MinOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(arg(0), arg(1), floatMin,
                                [kind](int64_t a, int64_t b) {
                                  return intMin(kind, a, b);
                                }));
      })
      .Case([&](PowOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return std::pow(a, b); },
            [](int64_t a, int64_t) { return a; }));
      })
      // Elementwise unary.
      .Case([&](NegOp) {
        return single(mapUnary(
            arg(0), [](double x) { return -x; },
            [](int64_t x) { return wrappingSub(0, x); }));
      })
      .Case([&](AbsOp) {
        bool isUnsigned = isUnsignedKind(arg(0).kind());
        return single(mapUnary(
            arg(0), [](double x) { return std::fabs(x); },
            [isUnsigned](int64_t x) {
              return !isUnsigned && x < 0 ? wrappingSub(0, x) : x;
            }));
      })
      .Case([&](ReluOp) {
        bool isUnsigned = isUnsignedKind(arg(0).kind());
        return single(mapUnary(
            arg(0), [](double x) { return floatMax(x, 0.0); },
            [isUnsigned](int64_t x) {
              return isUnsigned ? x : std::max<int64_t>(x, 0);
            }));
      })
      .Case([&](ExpOp) {
        return single(mapFloat(arg(0), [](double x) { return std::exp(x); }));
      })
      .Case([&](LogOp) {
        return single(mapFloat(arg(0), [](double x) { return std::log(x); }));
      })
      .Case([&](SqrtOp) {
        return single(mapFloat(arg(0), [](double x) { return std::sqrt(x); }));
      })
      .Case([&](RsqrtOp) {
        return single(
            mapFloat(arg(0), [](double x) { return 1.0 / std::sqrt(x); }));
      })
      .Case([&](TanhOp) {
        return single(mapFloat(arg(0), [](double x) { return std::tanh(x); }));
      })
      .Case([&](SigmoidOp) {
        return single(mapFloat(
            arg(0), [](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
      })
      .Case([&](SinOp) {
        return single(mapFloat(arg(0), [](double x) { return std::sin(x); }));
      })
      .Case([&](CosOp) {
        return single(mapFloat(arg(0), [](double x) { return std::cos(x); }));
      })
      .Case([&](ErfOp) {
        return single(mapFloat(arg(0), [](double x) { return std::erf(x); }));
      })
      .Case([&](FloorOp) {
        return single(mapFloat(arg(0), [](double x) { return std::floor(x); }));
      })
      .Case([&](CeilOp) {
        return single(mapFloat(arg(0), [](double x) { return std::ceil(x); }));
      })
      .Case([&](RoundOp) {
        return single(mapFloat(arg(0), [](double x) { return roundHalfToEven(x); }));
      })
      .Case([&](TanOp) {
        return single(mapFloat(arg(0), [](double x) { return std::tan(x); }));
      })
      .Case([&](AsinOp) {
        return single(mapFloat(arg(0), [](double x) { return std::asin(x); }));
      })
      .Case([&](AcosOp) {
        return single(mapFloat(arg(0), [](double x) { return std::acos(x); }));
      })
      .Case([&](AtanOp) {
        return single(mapFloat(arg(0), [](double x) { return std::atan(x); }));
      })
      .Case([&](SinhOp) {
        return single(mapFloat(arg(0), [](double x) { return std::sinh(x); }));
      })
      .Case([&](CoshOp) {
        return single(mapFloat(arg(0), [](double x) { return std::cosh(x); }));
      })
      .Case([&](AsinhOp) {
        return single(mapFloat(arg(0), [](double x) { return std::asinh(x); }));
      })
      .Case([&](AcoshOp) {
        return single(mapFloat(arg(0), [](double x) { return std::acosh(x); }));
      })
      .Case([&](AtanhOp) {
        return single(mapFloat(arg(0), [](double x) { return std::atanh(x); }));
      })
      .Case([&](SignOp) {
        bool isUnsigned = isUnsignedKind(arg(0).kind());
        return single(
            mapUnary(arg(0), floatSign, [isUnsigned](int64_t x) -> int64_t {
              if (isUnsigned)
                return x != 0;
              return x > 0 ? 1 : x < 0 ? -1 : 0;
            }));
      })
      .Case([&](RemOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(
            arg(0), arg(1), [](double a, double b) { return std::fmod(a, b); },
            [kind](int64_t a, int64_t b) { return intRem(kind, a, b); }));
      })
      // Bitwise (i1 and the integers; wrapToInt keeps i1 to 0 or 1 and
      // unsigned values zero-extended).
      .Case([&](NotOp) {
        return single(mapUnary(
            arg(0), [](double x) { return x; },
            [&](int64_t x) { return arg(0).kind() == ElementKind::I1 ? !x : ~x; }));
      })
      .Case([&](AndOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [](int64_t a, int64_t b) { return a & b; }));
      })
      .Case([&](OrOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [](int64_t a, int64_t b) { return a | b; }));
      })
      .Case([&](XorOp) {
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [](int64_t a, int64_t b) { return a ^ b; }));
      })
      .Case([&](ShiftLeftOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [kind](int64_t a, int64_t b) { return shiftLeft(kind, a, b); }));
      })
      .Case([&](ShiftRightOp) {
        ElementKind kind = arg(0).kind();
        return single(mapBinary(
            arg(0), arg(1), [](double a, double) { return a; },
            [kind](int64_t a, int64_t b) { return shiftRight(kind, a, b); }));
      })
      .Case([&](RngBitsOp op) {
        return single(evaluateRngBits(op, arg(0), arg(1), arg(2), arg(3)));
      })
      // Comparison, selection, conversion.
      .Case([&](CompareOp op) {
        return single(evaluateCompare(op, arg(0), arg(1)));
      })
      .Case([&](SelectOp) {
        return single(evaluateSelect(arg(0), arg(1), arg(2)));
      })
      .Case([&](CastOp op) { return single(evaluateCast(op, arg(0))); })
      .Case([&](BitcastOp op) { return single(evaluateBitcast(op, arg(0))); })
      // Shape manipulation.
      .Case([&](BroadcastInDimOp op) {
        return single(evaluateBroadcastInDim(op, arg(0)));
      })
      .Case([&](ReshapeOp op) { return single(evaluateReshape(op, arg(0))); })
      .Case([&](TransposeOp op) {
        return single(evaluateTranspose(op, arg(0)));
      })
      .Case([&](SliceOp op) { return single(evaluateSlice(op, arg(0))); })
      .Case([&](ConcatOp op) { return single(evaluateConcat(op, operands)); })
      .Case([&](ReverseOp op) { return single(evaluateReverse(op, arg(0))); })
      .Case([&](PadOp op) { return single(evaluatePad(op, arg(0), arg(1))); })
      // Reductions, contractions, gathers.
      .Case([&](ReduceSumOp op) {
        return single(evaluateReduceSum(op, arg(0), op.getDims()));
      })
      .Case([&](ReduceMaxOp op) {
        return single(evaluateReduceMax(op, arg(0)));
      })
      .Case([&](ReduceMeanOp op) {
        return single(evaluateReduceMean(op, arg(0)));
      })
      .Case([&](ArgMaxOp op) {
        return single(evaluateArgReduce(op, arg(0)));
      })
      .Case([&](ArgMinOp op) {
        return single(evaluateArgReduce(op, arg(0)));
      })
      .Case([&](CumsumOp op) { return single(evaluateCumsum(op, arg(0))); })
      .Case([&](SortOp op) -> llvm::Expected<Results> {
        return evaluateSort(op, arg(0));
      })
      .Case([&](ReduceWindowOp op) {
        return single(evaluateReduceWindow(op, arg(0)));
      })
      .Case([&](ReduceWindowMaxGradOp op) {
        return single(evaluateReduceWindowMaxGrad(op, arg(0), arg(1)));
      })
      .Case([&](MatmulOp op) {
        return single(evaluateMatmul(op, arg(0), arg(1)));
      })
      .Case([&](ConvOp op) {
        return single(evaluateConv(op, arg(0), arg(1)));
      })
      .Case([&](GatherOp op) {
        return single(evaluateGather(op, arg(0), arg(1)));
      })
      .Case([&](ScatterAddOp) {
        return single(evaluateScatterAdd(arg(0), arg(1), arg(2)));
      })
      .Case([&](AttentionOp op) -> Result {
        return evaluateAttention(op, arg(0), arg(1), arg(2),
                                 op.getMask() ? &arg(3) : nullptr);
      })
      .Case([&](AttentionGradOp op) -> Result {
        return evaluateAttentionGrad(op, arg(0), arg(1), arg(2), arg(3),
                                     arg(4), arg(5),
                                     op.getMask() ? &arg(6) : nullptr);
      })
      .Case([&](DynamicSliceOp op) {
        return single(evaluateDynamicSlice(op, arg(0), arg(1)));
      })
      .Case([&](DynamicUpdateSliceOp) {
        return single(evaluateDynamicUpdateSlice(arg(0), arg(1), arg(2)));
      })
      // Stacks.
      .Case([&](StackEmptyOp op) {
        SmallVector<int64_t> shape(op.getType().getShape());
        shape[0] = 0;
        return single(HostTensor(op.getType().getElementType(), shape));
      })
      .Case([&](StackReserveOp) {
        return single(evaluateStackReserve(arg(0), arg(1)));
      })
      .Case([&](StackPushOp op) {
        return single(evaluateStackPush(op, arg(0), arg(1), arg(2)));
      })
      .Case([&](StackReadOp op) {
        return single(evaluateStackRead(op, arg(0), arg(1)));
      })
      // Control flow and calls.
      .Case([&](CondOp op) { return evaluateCondOp(op, operands); })
      .Case([&](WhileOp op) { return evaluateWhileOp(op, operands); })
      .Case([&](ForOp op) { return evaluateForOp(op, operands); })
      .Case([&](FusedOp op) { return evaluateFusedOp(op, operands); })
      .Case([&](func::CallOp op) { return evaluateCallOp(op, operands); })
      // Collectives.
      .Case<AllReduceOp, AllGatherOp, ReduceScatterOp, CollectiveBroadcastOp,
            AllToAllOp, CollectivePermuteOp, AllReduceStartOp,
            AllGatherStartOp, ReduceScatterStartOp>(
          [&](Operation *op) { return exchange(op, arg(0)); })
      // The start op computed the value; the wait hands it on.
      .Case([&](CollectiveWaitOp) { return single(arg(0)); })
      .Case([&](RankOp op) {
        return single(HostTensor::fromInts(op.getType().getElementType(), {},
                                           {static_cast<int64_t>(rank)}));
      })
      .Default([&](Operation *op) -> Result {
        return opError(op, "unsupported op");
      });
}

/// Reads a rank-0 i1 predicate.
static bool isTrue(const HostTensor &predicate) { return predicate.i[0] != 0; }

llvm::Expected<Results>
Evaluator::evaluateCondOp(CondOp op, ArrayRef<const HostTensor *> operands) {
  bool taken = isTrue(*operands[0]);
  Region &region = taken ? op.getThenRegion() : op.getElseRegion();
  llvm::Expected<Results> results =
      runBlock(region.front(), copyAll(operands.drop_front()));
  if (!results)
    return addContext(results.takeError(), op,
                      taken ? "in the then region of" : "in the else region of");
  return results;
}

llvm::Expected<Results>
Evaluator::evaluateWhileOp(WhileOp op, ArrayRef<const HostTensor *> operands) {
  Results carried = copyAll(operands);
  for (uint64_t iteration = 0;; ++iteration) {
    llvm::Expected<Results> condition =
        runBlock(op.getCondRegion().front(), carried);
    if (!condition)
      return addContext(condition.takeError(), op,
                        "in iteration " + Twine(iteration) +
                            " of the cond region of");
    if (!isTrue(condition->front()))
      return carried;
    if (iteration >= options.maxLoopIterations)
      return opError(op, "loop did not finish within the limit of " +
                             Twine(options.maxLoopIterations) + " iterations");
    llvm::Expected<Results> next =
        runBlock(op.getBodyRegion().front(), std::move(carried));
    if (!next)
      return addContext(next.takeError(), op,
                        "in iteration " + Twine(iteration) +
                            " of the body region of");
    carried = std::move(*next);
  }
}

llvm::Expected<Results>
Evaluator::evaluateForOp(ForOp op, ArrayRef<const HostTensor *> operands) {
  uint64_t tripCount = op.getTripCount();
  if (tripCount > options.maxLoopIterations)
    return opError(op, "trip count " + Twine(tripCount) +
                           " exceeds the limit of " +
                           Twine(options.maxLoopIterations) + " iterations");
  Type indexType = IntegerType::get(op.getContext(), 64);
  Results carried = copyAll(operands);
  for (uint64_t iteration = 0; iteration < tripCount; ++iteration) {
    Results args;
    args.push_back(HostTensor::fromInts(indexType, {},
                                        {static_cast<int64_t>(iteration)}));
    std::move(carried.begin(), carried.end(), std::back_inserter(args));
    llvm::Expected<Results> next =
        runBlock(op.getBodyRegion().front(), std::move(args));
    if (!next)
      return addContext(next.takeError(), op,
                        "in iteration " + Twine(iteration) + " of the body of");
    carried = std::move(*next);
  }
  return carried;
}

/// A fused region computes what its ops compute one by one; running it as
/// a block lets the end-to-end tests check that fusion changed nothing.
llvm::Expected<Results>
Evaluator::evaluateFusedOp(FusedOp op, ArrayRef<const HostTensor *> operands) {
  llvm::Expected<Results> results =
      runBlock(op.getBody().front(), copyAll(operands));
  if (!results)
    return addContext(results.takeError(), op, "in the body of");
  return results;
}

llvm::Expected<Results>
Evaluator::evaluateCallOp(func::CallOp op,
                          ArrayRef<const HostTensor *> operands) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  if (!callee)
    return opError(op, "callee @" + op.getCallee() + " is not a func.func");
  llvm::Expected<Results> results = callFunction(callee, copyAll(operands));
  if (!results)
    return addContext(results.takeError(), op, "called from");
  return results;
}

llvm::Expected<Results> Evaluator::exchange(Operation *op,
                                            const HostTensor &operand) {
  llvm::Expected<HostTensor> result = ranks.exchange(rank, op, operand);
  if (!result)
    return opError(op, "on rank " + Twine(rank) + ": " +
                           llvm::toString(result.takeError()));
  return single(std::move(*result));
}

/// Verifies `func` and every function it calls, directly or not.
static llvm::Error verifyCallGraph(func::FuncOp func) {
  SmallVector<func::FuncOp> pending = {func};
  llvm::DenseSet<Operation *> seen = {func};
  while (!pending.empty()) {
    func::FuncOp next = pending.pop_back_val();
    if (llvm::Error error = verifyFunction(next))
      return error;
    next.walk([&](func::CallOp call) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (callee && seen.insert(callee).second)
        pending.push_back(callee);
    });
  }
  return llvm::Error::success();
}

namespace kiln {
llvm::Expected<std::vector<HostTensor>>
evaluate(func::FuncOp func, ArrayRef<HostTensor> inputs,
         const EvaluatorOptions &options) {
  if (!func)
    return makeError("evaluate() needs a function");
  SimulatedRanks alone(1);
  return Evaluator(options, alone, 0).callFunction(func, inputs);
}

llvm::Expected<std::vector<std::vector<HostTensor>>>
evaluateSpmd(func::FuncOp func, ArrayRef<std::vector<HostTensor>> perRankInputs,
             const EvaluatorOptions &options) {
  if (!func)
    return makeError("evaluateSpmd() needs a function");
  if (perRankInputs.empty())
    return makeError("evaluateSpmd() needs the inputs of at least one rank");
  if (llvm::Error error = verifyCallGraph(func))
    return std::move(error);

  unsigned numRanks = perRankInputs.size();
  SimulatedRanks ranks(numRanks);
  std::vector<std::vector<HostTensor>> results(numRanks);
  std::vector<std::string> errors(numRanks);
  std::vector<std::thread> threads;
  for (unsigned rank = 0; rank < numRanks; ++rank)
    threads.emplace_back([&, rank] {
      Evaluator evaluator(options, ranks, rank);
      evaluator.assumeVerified();
      llvm::Expected<Results> own =
          evaluator.callFunction(func, perRankInputs[rank]);
      if (own)
        results[rank] = std::move(*own);
      else
        errors[rank] = llvm::toString(own.takeError());
      ranks.stop(rank, errors[rank]);
    });
  for (std::thread &thread : threads)
    thread.join();

  // A rank that failed on its own is the cause and comes first; the others'
  // errors only say that they waited for it.
  std::string causes, waits;
  for (unsigned rank = 0; rank < numRanks; ++rank) {
    if (errors[rank].empty())
      continue;
    bool waited = errors[rank].find("without reaching its collective") !=
                  std::string::npos;
    std::string &list = waited ? waits : causes;
    list += (list.empty() ? "" : "\n") + ("rank " + Twine(rank) + ": ").str() +
            errors[rank];
  }
  std::string report =
      causes + (causes.empty() || waits.empty() ? "" : "\n") + waits;
  if (!report.empty())
    return makeError(report);
  return results;
}
} // namespace kiln
