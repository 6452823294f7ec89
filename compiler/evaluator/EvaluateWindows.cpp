//===- EvaluateWindows.cpp - The evaluator's windowed reductions ----------===//
//
// kiln.reduce_window (pooling) and the gradient of its max form.
//
//===----------------------------------------------------------------------===//

#include "EvaluateOps.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace evaluator {

namespace {
/// The window attributes shared by kiln.reduce_window and
/// kiln.reduce_window_max_grad, and the walk over one window placement.
struct WindowLayout {
  ArrayRef<int64_t> operandShape, window, strides, paddingLow, dilations;
  std::vector<int64_t> operandStrides;
  int64_t windowVolume;

  template <typename OpTy>
  WindowLayout(OpTy op, ArrayRef<int64_t> operandShape)
      : operandShape(operandShape), window(op.getWindow()),
        strides(op.getStrides()), paddingLow(op.getPaddingLow()),
        dilations(op.getDilations()),
        operandStrides(::kiln::computeStrides(operandShape)),
        windowVolume(::kiln::computeNumElements(window)) {}

  /// Calls `fn(offset)` for each window element of placement `placement`
  /// in row-major window order, with the operand element's storage offset,
  /// or -1 where the element lies in the padding.
  template <typename Fn>
  void forEachElement(ArrayRef<int64_t> placement, Fn fn) const {
    size_t rank = window.size();
    SmallVector<int64_t, 4> w(rank, 0);
    for (int64_t n = 0; n < windowVolume; ++n) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank && offset >= 0; ++d) {
        int64_t position =
            placement[d] * strides[d] - paddingLow[d] + w[d] * dilations[d];
        if (position < 0 || position >= operandShape[d])
          offset = -1;
        else
          offset += position * operandStrides[d];
      }
      fn(offset);
      for (size_t d = rank; d-- > 0;) {
        if (++w[d] < window[d])
          break;
        w[d] = 0;
      }
    }
  }
};

/// Row-major multi-indices over `shape`.
class IndexCounter {
public:
  explicit IndexCounter(ArrayRef<int64_t> shape)
      : shape(shape), index(shape.size(), 0) {}
  ArrayRef<int64_t> get() const { return index; }
  void advance() {
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        return;
      index[d] = 0;
    }
  }

private:
  SmallVector<int64_t, 4> shape;
  SmallVector<int64_t, 4> index;
};
} // namespace

HostTensor evaluateReduceWindow(ReduceWindowOp op, const HostTensor &operand) {
  HostTensor result(operand.elementType, resultShape(op));
  WindowLayout layout(op, operand.shape);
  ElementKind kind = operand.kind();
  bool isMax = op.getKind() == ReduceWindowKind::Max;
  IndexCounter placement(result.shape);
  for (int64_t n = 0, e = result.numElements(); n < e; ++n) {
    if (operand.isFloat()) {
      double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
      layout.forEachElement(placement.get(), [&](int64_t offset) {
        if (offset < 0)
          return;
        double x = operand.f[offset];
        acc = isMax ? floatMax(acc, x) : roundToFloat(kind, acc + x);
      });
      result.f[n] = acc;
    } else {
      int64_t acc = isMax ? intLowest(kind) : 0;
      layout.forEachElement(placement.get(), [&](int64_t offset) {
        if (offset < 0)
          return;
        int64_t x = operand.i[offset];
        acc =
            isMax ? intMax(kind, acc, x) : wrapToInt(kind, wrappingAdd(acc, x));
      });
      result.i[n] = acc;
    }
    placement.advance();
  }
  return result;
}

HostTensor evaluateReduceWindowMaxGrad(ReduceWindowMaxGradOp op,
                                       const HostTensor &operand,
                                       const HostTensor &cotangent) {
  HostTensor result(operand.elementType, operand.shape);
  WindowLayout layout(op, operand.shape);
  ElementKind kind = operand.kind();
  IndexCounter placement(cotangent.shape);
  for (int64_t n = 0, e = cotangent.numElements(); n < e; ++n) {
    int64_t selected = -1;
    layout.forEachElement(placement.get(), [&](int64_t offset) {
      if (offset < 0)
        return;
      if (selected < 0) {
        selected = offset;
        return;
      }
      if (operand.isFloat()) {
        double x = operand.f[offset], best = operand.f[selected];
        if (x > best || (std::isnan(x) && !std::isnan(best)))
          selected = offset;
      } else if (operand.i[offset] > operand.i[selected]) {
        selected = offset;
      }
    });
    if (selected >= 0) {
      if (operand.isFloat())
        result.f[selected] =
            roundToFloat(kind, result.f[selected] + cotangent.f[n]);
      else
        result.i[selected] =
            wrapToInt(kind, wrappingAdd(result.i[selected], cotangent.i[n]));
    }
    placement.advance();
  }
  return result;
}

//===----------------------------------------------------------------------===//

} // namespace evaluator
} // namespace kiln
