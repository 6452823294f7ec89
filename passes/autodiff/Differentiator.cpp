//===- Differentiator.cpp - Reverse sweep over kiln blocks ----------------===//
//
// The reverse sweep over one block:
//
//  1. Seed: the adjoints of the terminator's operands (the cotangents of the
//     function results, or of a region's yielded values) are accumulated
//     into the adjoint map. Operands that are not varied take no adjoint.
//  2. Sweep: the block's ops are visited last to first. An op none of whose
//     results has an adjoint contributes nothing and is skipped, so only
//     the computations between the differentiated arguments and the
//     results are differentiated. Otherwise the op's result adjoints are
//     taken out of the map and its rule emits the operands' gradients,
//     which are accumulated with kiln.add where a value has several uses.
//  3. Collect: the adjoints of the block's arguments are what the caller
//     (the gradient builder or a control-flow rule) gets back.
//
//===----------------------------------------------------------------------===//

#include "Differentiator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

bool autodiff::isDifferentiableType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         isa<FloatType>(tensor.getElementType());
}

Value autodiff::buildZeros(OpBuilder &builder, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  if (isStackType(tensor))
    return builder.create<StackEmptyOp>(loc, tensor);
  Type element = tensor.getElementType();
  Attribute zero;
  if (isa<FloatType>(element))
    zero = builder.getFloatAttr(element, 0.0);
  else
    zero = builder.getIntegerAttr(element, 0);
  return builder.create<ConstantOp>(loc, DenseElementsAttr::get(tensor, zero));
}

Value autodiff::buildSplat(OpBuilder &builder, Location loc, Type type,
                           double value) {
  auto tensor = cast<RankedTensorType>(type);
  Type element = tensor.getElementType();
  // An integer splat holds the value, not a float's bits.
  Attribute attr = isa<FloatType>(element)
                       ? Attribute(builder.getFloatAttr(element, value))
                       : Attribute(builder.getIntegerAttr(
                             element, static_cast<int64_t>(value)));
  return builder.create<ConstantOp>(loc, DenseElementsAttr::get(tensor, attr));
}

//===----------------------------------------------------------------------===//
// AdjointMap, VjpContext
//===----------------------------------------------------------------------===//

void AdjointMap::accumulate(OpBuilder &builder, Location loc, Value value,
                            Value gradient) {
  assert(value.getType() == gradient.getType() &&
         "a gradient has the type of its value");
  Value &slot = adjoints[value];
  slot = slot ? builder.create<AddOp>(loc, slot, gradient).getResult()
              : gradient;
}

Value AdjointMap::take(Value value) {
  auto it = adjoints.find(value);
  if (it == adjoints.end())
    return Value();
  Value adjoint = it->second;
  adjoints.erase(it);
  return adjoint;
}

Activity &VjpContext::getActivity() { return differentiator.getActivity(); }

Value VjpContext::getResultAdjointOrZero(unsigned index) {
  if (Value adjoint = resultAdjoints[index])
    return adjoint;
  return buildZeros(builder, getLoc(), op->getResult(index).getType());
}

bool VjpContext::needsGradient(unsigned index) const {
  return differentiator.getActivity().isVaried(op->getOperand(index));
}

void VjpContext::addGradient(unsigned index, Value gradient) {
  if (!gradient || !needsGradient(index))
    return;
  adjoints.accumulate(builder, getLoc(), op->getOperand(index), gradient);
}

//===----------------------------------------------------------------------===//
// Differentiator
//===----------------------------------------------------------------------===//

LogicalResult
Differentiator::differentiateBlock(Block &block, OpBuilder &builder,
                                   ArrayRef<Value> seeds,
                                   SmallVectorImpl<Value> &argAdjoints) {
  AdjointMap adjoints;

  // 1. Seed.
  Operation *terminator = block.getTerminator();
  assert(seeds.size() == terminator->getNumOperands() &&
         "one seed per terminator operand");
  for (auto [operand, seed] : llvm::zip(terminator->getOperands(), seeds))
    if (seed && activity.isVaried(operand))
      adjoints.accumulate(builder, terminator->getLoc(), operand, seed);

  // 2. Sweep. The list is taken up front because control-flow rules replace
  // their forward op by one with more results.
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultAdjoints;
    bool any = false;
    for (Value result : op->getResults()) {
      resultAdjoints.push_back(adjoints.take(result));
      any |= static_cast<bool>(resultAdjoints.back());
    }
    if (!any)
      continue;
    // Activity analysis has rejected varied ops without a rule, and only
    // varied values receive adjoints.
    const VjpRule *rule = lookupVjpRule(op);
    assert(rule && rule->differentiable && "adjoint reached an op without a rule");
    VjpContext context(*this, op, builder, adjoints, std::move(resultAdjoints));
    if (failed(rule->apply(op, context)))
      return failure();
  }

  // 3. Collect.
  argAdjoints.clear();
  for (BlockArgument arg : block.getArguments())
    argAdjoints.push_back(adjoints.lookup(arg));
  return success();
}
