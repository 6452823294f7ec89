//===- EvaluateShapes.cpp - The evaluator's shape ops ---------------------===//
//
// Broadcasts, reshapes, transposes, slices, reversals, concatenation and
// padding: each a strided view of its operand (EvaluatorViews.h) or a copy
// of several.
//
//===----------------------------------------------------------------------===//

#include "EvaluateOps.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace evaluator {

HostTensor evaluateBroadcastInDim(BroadcastInDimOp op,
                                  const HostTensor &operand) {
  ArrayRef<int64_t> shape = resultShape(op);
  std::vector<int64_t> operandStrides = ::kiln::computeStrides(operand.shape);
  // Result dimensions with no operand dimension, and size-1 operand
  // dimensions, repeat the same elements: stride 0.
  SmallVector<int64_t> strides(shape.size(), 0);
  for (auto [operandDim, resultDim] : llvm::enumerate(op.getDims()))
    if (operand.shape[operandDim] != 1)
      strides[resultDim] = operandStrides[operandDim];
  return copyStrided(operand, shape, 0, strides);
}

HostTensor evaluateReshape(ReshapeOp op, const HostTensor &operand) {
  HostTensor result = operand;
  ArrayRef<int64_t> shape = resultShape(op);
  result.shape.assign(shape.begin(), shape.end());
  return result;
}

HostTensor evaluateTranspose(TransposeOp op, const HostTensor &operand) {
  std::vector<int64_t> operandStrides = ::kiln::computeStrides(operand.shape);
  SmallVector<int64_t> strides;
  for (int64_t source : op.getPermutation())
    strides.push_back(operandStrides[source]);
  return copyStrided(operand, resultShape(op), 0, strides);
}

HostTensor evaluateSlice(SliceOp op, const HostTensor &operand) {
  std::vector<int64_t> operandStrides = ::kiln::computeStrides(operand.shape);
  int64_t offset = 0;
  SmallVector<int64_t> strides;
  for (auto [start, step, stride] :
       llvm::zip(op.getStart(), op.getStride(), operandStrides)) {
    offset += start * stride;
    strides.push_back(step * stride);
  }
  return copyStrided(operand, resultShape(op), offset, strides);
}

HostTensor evaluateReverse(ReverseOp op, const HostTensor &operand) {
  std::vector<int64_t> strides = ::kiln::computeStrides(operand.shape);
  int64_t offset = 0;
  for (int64_t dim : op.getDims()) {
    if (operand.shape[dim] == 0)
      return HostTensor(operand.elementType, operand.shape);
    offset += (operand.shape[dim] - 1) * strides[dim];
    strides[dim] = -strides[dim];
  }
  return copyStrided(operand, operand.shape, offset, strides);
}

HostTensor evaluateConcat(ConcatOp op, ArrayRef<const HostTensor *> inputs) {
  HostTensor result(resultElementType(op), resultShape(op));
  int64_t dim = op.getDimension();
  // Viewed as [outer, dim * inner], each input contributes one contiguous
  // run per outer index.
  int64_t outer =
      ::kiln::computeNumElements(ArrayRef(result.shape).take_front(dim));
  int64_t inner =
      ::kiln::computeNumElements(ArrayRef(result.shape).drop_front(dim + 1));
  int64_t written = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor *input : inputs) {
      int64_t run = input->shape[dim] * inner;
      withStorage(*input, result, [&](const auto &from, auto &to) {
        std::copy_n(from.begin() + o * run, run, to.begin() + written);
      });
      written += run;
    }
  }
  return result;
}

HostTensor evaluatePad(PadOp op, const HostTensor &operand,
                       const HostTensor &value) {
  HostTensor result(operand.elementType, resultShape(op));
  std::vector<int64_t> resultStrides = ::kiln::computeStrides(result.shape);
  int64_t offset = 0;
  SmallVector<int64_t> strides;
  for (auto [low, interior, stride] :
       llvm::zip(op.getLow(), op.getInterior(), resultStrides)) {
    offset += low * stride;
    strides.push_back((interior + 1) * stride);
  }
  if (operand.isFloat())
    std::fill(result.f.begin(), result.f.end(), value.f[0]);
  else
    std::fill(result.i.begin(), result.i.end(), value.i[0]);
  withStorage(operand, result, [&](const auto &from, auto &to) {
    StridedCursor cursor(operand.shape, strides, offset);
    for (const auto &element : from) {
      to[cursor.offset()] = element;
      cursor.advance();
    }
  });
  return result;
}

//===----------------------------------------------------------------------===//

} // namespace evaluator
} // namespace kiln
