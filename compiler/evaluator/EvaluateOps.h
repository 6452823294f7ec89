//===- EvaluateOps.h - The evaluator's per-op kernels -----------*- C++ -*-===//
//
// What the interpreter (ReferenceEvaluator.cpp) computes each op's results
// with: the elementwise templates over a scalar function, and one kernel per
// op that is more than that, defined in EvaluateElementwise.cpp,
// EvaluateShapes.cpp, EvaluateReductions.cpp and EvaluateWindows.cpp
// (attention in EvaluateAttention.cpp). Each takes the op (for its
// attributes and result type) and its operands' values.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_EVALUATOR_EVALUATEOPS_H
#define KILN_COMPILER_EVALUATOR_EVALUATEOPS_H

#include "EvaluatorMessages.h"
#include "EvaluatorNumerics.h"
#include "EvaluatorViews.h"

#include "kiln/IR/KilnOps.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace kiln {
namespace evaluator {

using mlir::kiln::ArgMaxOp;
using mlir::kiln::ArgMinOp;
using mlir::kiln::BitcastOp;
using mlir::kiln::BroadcastInDimOp;
using mlir::kiln::CastOp;
using mlir::kiln::CompareOp;
using mlir::kiln::ConcatOp;
using mlir::kiln::ConstantOp;
using mlir::kiln::ConvOp;
using mlir::kiln::CumsumOp;
using mlir::kiln::DivOp;
using mlir::kiln::DynamicSliceOp;
using mlir::kiln::GatherOp;
using mlir::kiln::IotaOp;
using mlir::kiln::MatmulOp;
using mlir::kiln::PadOp;
using mlir::kiln::ReduceMaxOp;
using mlir::kiln::ReduceMeanOp;
using mlir::kiln::ReduceWindowMaxGradOp;
using mlir::kiln::ReduceWindowOp;
using mlir::kiln::ReshapeOp;
using mlir::kiln::ReverseOp;
using mlir::kiln::RngBitsOp;
using mlir::kiln::SliceOp;
using mlir::kiln::SortOp;
using mlir::kiln::StackPushOp;
using mlir::kiln::StackReadOp;
using mlir::kiln::TransposeOp;
using Results = std::vector<HostTensor>;

/// Applies `floatFn` (computed in double, then rounded) or `intFn` (computed
/// wrapping, then narrowed) to each element.
template <typename FloatFn, typename IntFn>
inline HostTensor mapUnary(const HostTensor &x, FloatFn floatFn, IntFn intFn) {
  HostTensor result(x.elementType, x.shape);
  ElementKind kind = x.kind();
  if (x.isFloat()) {
    for (size_t n = 0; n < x.f.size(); ++n)
      result.f[n] = roundToFloat(kind, floatFn(x.f[n]));
  } else {
    for (size_t n = 0; n < x.i.size(); ++n)
      result.i[n] = wrapToInt(kind, intFn(x.i[n]));
  }
  return result;
}

/// mapUnary for ops the verifier restricts to float tensors.
template <typename FloatFn>
inline HostTensor mapFloat(const HostTensor &x, FloatFn floatFn) {
  return mapUnary(x, floatFn, [](int64_t value) { return value; });
}

/// The binary analogue of mapUnary, for operands of identical type.
template <typename FloatFn, typename IntFn>
inline HostTensor mapBinary(const HostTensor &lhs, const HostTensor &rhs,
                            FloatFn floatFn, IntFn intFn) {
  HostTensor result(lhs.elementType, lhs.shape);
  ElementKind kind = lhs.kind();
  if (lhs.isFloat()) {
    for (size_t n = 0; n < lhs.f.size(); ++n)
      result.f[n] = roundToFloat(kind, floatFn(lhs.f[n], rhs.f[n]));
  } else {
    for (size_t n = 0; n < lhs.i.size(); ++n)
      result.i[n] = wrapToInt(kind, intFn(lhs.i[n], rhs.i[n]));
  }
  return result;
}

llvm::Expected<HostTensor> evaluateConstant(ConstantOp op);

HostTensor evaluateIota(IotaOp op);

llvm::Expected<HostTensor> evaluateDiv(DivOp op, const HostTensor &lhs,
                                       const HostTensor &rhs);

/// kiln.rng_bits: Threefry-2x32 of each element's counter under its key
/// (ui32 values are stored zero-extended).
HostTensor evaluateRngBits(RngBitsOp op, const HostTensor &key0,
                           const HostTensor &key1, const HostTensor &counterHi,
                           const HostTensor &counterLo);

HostTensor evaluateCompare(CompareOp op, const HostTensor &lhs,
                           const HostTensor &rhs);

HostTensor evaluateSelect(const HostTensor &pred, const HostTensor &onTrue,
                          const HostTensor &onFalse);

/// Each element's bits (low bits of an integer's storage, the IEEE
/// encoding of a float) read as the result's element type.
HostTensor evaluateBitcast(BitcastOp op, const HostTensor &operand);

HostTensor evaluateCast(CastOp op, const HostTensor &operand);

HostTensor evaluateBroadcastInDim(BroadcastInDimOp op,
                                  const HostTensor &operand);

HostTensor evaluateReshape(ReshapeOp op, const HostTensor &operand);

HostTensor evaluateTranspose(TransposeOp op, const HostTensor &operand);

HostTensor evaluateSlice(SliceOp op, const HostTensor &operand);

/// A strided copy walking the reversed dims backwards from their last
/// element.
HostTensor evaluateReverse(ReverseOp op, const HostTensor &operand);

HostTensor evaluateConcat(ConcatOp op, ArrayRef<const HostTensor *> inputs);

/// Every result element starts as the padding value; the operand's
/// elements are then copied to low + i * (interior + 1).
HostTensor evaluatePad(PadOp op, const HostTensor &operand,
                       const HostTensor &value);

HostTensor evaluateReduceSum(Operation *op, const HostTensor &operand,
                             ArrayRef<int64_t> dims);

HostTensor evaluateReduceMax(ReduceMaxOp op, const HostTensor &operand);

HostTensor evaluateReduceMean(ReduceMeanOp op, const HostTensor &operand);

/// argmax/argmin along one dimension: each result element scans its slice
/// from index 0 and keeps the index of the best element so far.
template <typename Op>
HostTensor evaluateArgReduce(Op op, const HostTensor &operand);

/// Each slice along `dim` stably sorted (std::stable_sort), NaN above
/// everything, unsigned integers by their order keys.
Results evaluateSort(SortOp op, const HostTensor &operand);

/// Running sums along `dim`, in the order the op defines (from the first
/// element, or from the last with `reverse`), rounded or wrapped after
/// every addition as sequential code in the element type does.
HostTensor evaluateCumsum(CumsumOp op, const HostTensor &operand);

/// Each output element accumulates k = 0..K-1 in order, rounding the
/// product and then the sum, as a scalar multiply-add loop in the element
/// type does. bf16 operands accumulate in f32 (their products are exact
/// there) and the sum is rounded once to the result's element type; f16
/// operands arrive widened to f32 (evaluateWidened) and get the same.
HostTensor evaluateMatmul(MatmulOp op, const HostTensor &lhs,
                          const HostTensor &rhs);

/// Each output element accumulates over c < C / groups and the kernel
/// offsets in row-major order, rounding the product and then the sum as
/// matmul does. Elements of the dilated, padded input that are holes or
/// padding are zeros; their terms are skipped (they add nothing to a
/// finite sum).
HostTensor evaluateConv(ConvOp op, const HostTensor &input,
                        const HostTensor &weight);

HostTensor evaluateGather(GatherOp op, const HostTensor &table,
                          const HostTensor &indices);

/// The table with each update row added into its clamped row, one index
/// after the other in row-major order, as KilnOps.td defines the order.
HostTensor evaluateScatterAdd(const HostTensor &table,
                              const HostTensor &indices,
                              const HostTensor &updates);

HostTensor evaluateDynamicSlice(DynamicSliceOp op, const HostTensor &operand,
                                const HostTensor &index);

HostTensor evaluateDynamicUpdateSlice(const HostTensor &operand,
                                      const HostTensor &update,
                                      const HostTensor &index);

/// A stack is a tensor whose leading dimension is its capacity, as in
/// compiled code; rows reserved but never pushed read as zeros here.
HostTensor evaluateStackReserve(const HostTensor &stack,
                                const HostTensor &rows);

llvm::Expected<HostTensor> evaluateStackPush(StackPushOp op,
                                             const HostTensor &stack,
                                             const HostTensor &index,
                                             const HostTensor &value);

llvm::Expected<HostTensor> evaluateStackRead(StackReadOp op,
                                             const HostTensor &stack,
                                             const HostTensor &index);

/// Each result element folds its window, starting from the identity; a
/// padded position contributes the identity.
HostTensor evaluateReduceWindow(ReduceWindowOp op, const HostTensor &operand);

/// Visits the placements in row-major order; each adds its cotangent to
/// the element it selects (see the op's description).
HostTensor evaluateReduceWindowMaxGrad(ReduceWindowMaxGradOp op,
                                       const HostTensor &operand,
                                       const HostTensor &cotangent);

} // namespace evaluator
} // namespace kiln

#endif // KILN_COMPILER_EVALUATOR_EVALUATEOPS_H
