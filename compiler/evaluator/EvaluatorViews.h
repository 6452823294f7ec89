//===- EvaluatorViews.h - Strided views for the evaluator -------*- C++ -*-===//
//
// Broadcasts, transposes and slices are strided views of their operand: a
// cursor walks a view's elements in row-major order and copyStrided
// materializes one. Shared by the evaluator's kernels.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_EVALUATOR_EVALUATORVIEWS_H
#define KILN_COMPILER_EVALUATOR_EVALUATORVIEWS_H

#include "kiln/Compiler/HostTensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kiln {
namespace evaluator {

using llvm::ArrayRef;
using llvm::SmallVector;
using mlir::cast;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Type;

/// Visits the elements of a strided view in row-major order of `shape` and
/// tracks each one's offset into the underlying storage. Broadcasting
/// (stride 0), transposition (permuted strides) and slicing (scaled strides
/// plus a start offset) are all such views.
class StridedCursor {
public:
  StridedCursor(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides,
                int64_t offset)
      : shape(shape), strides(strides), index(shape.size(), 0),
        currentOffset(offset) {}

  int64_t offset() const { return currentOffset; }

  /// Moves to the next element, like an odometer with the last dimension
  /// turning fastest.
  void advance() {
    for (size_t d = shape.size(); d-- > 0;) {
      currentOffset += strides[d];
      if (++index[d] < shape[d])
        return;
      currentOffset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }

private:
  SmallVector<int64_t, 4> shape;
  SmallVector<int64_t, 4> strides;
  SmallVector<int64_t, 4> index;
  int64_t currentOffset;
};

/// Calls `fn(from, to)` with the element storage of `source` and the
/// matching storage of `result`, so data movement is written once for
/// float and integer tensors alike.
template <typename Fn>
inline void withStorage(const HostTensor &source, HostTensor &result, Fn fn) {
  if (source.isFloat())
    fn(source.f, result.f);
  else
    fn(source.i, result.i);
}

/// A tensor of `shape` whose elements are read from `source` through the
/// strided view (`offset`, `strides`).
inline HostTensor copyStrided(const HostTensor &source, ArrayRef<int64_t> shape,
                              int64_t offset, ArrayRef<int64_t> strides) {
  HostTensor result(source.elementType, shape);
  withStorage(source, result, [&](const auto &from, auto &to) {
    StridedCursor cursor(shape, strides, offset);
    for (auto &element : to) {
      element = from[cursor.offset()];
      cursor.advance();
    }
  });
  return result;
}

inline ArrayRef<int64_t> resultShape(Operation *op, unsigned index = 0) {
  return cast<RankedTensorType>(op->getResult(index).getType()).getShape();
}

inline Type resultElementType(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
}

//===----------------------------------------------------------------------===//

} // namespace evaluator
} // namespace kiln

#endif // KILN_COMPILER_EVALUATOR_EVALUATORVIEWS_H
