//===- Broadcasting.cpp - numpy broadcasting made explicit ----------------===//
//
// kiln's elementwise ops need operands of identical type, so the tracer
// applies numpy's rules and inserts kiln.broadcast_in_dim where a shape
// differs: shapes are aligned at their trailing dimensions, and each pair of
// dimensions must be equal or one of them 1 (missing leading dimensions
// count as 1).
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include <algorithm>

namespace kiln {
namespace detail {

Shape broadcastShapes(llvm::ArrayRef<Shape> shapes, const char *what,
                      SourceLoc loc) {
  size_t rank = 0;
  for (const Shape &shape : shapes)
    rank = std::max(rank, shape.size());
  Shape result(rank, 1);
  for (size_t s = 0; s < shapes.size(); ++s) {
    const Shape &shape = shapes[s];
    size_t offset = rank - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t dim = shape[i];
      int64_t &out = result[offset + i];
      if (dim == out || dim == 1)
        continue;
      if (out == 1) {
        out = dim;
        continue;
      }
      // Name every shape involved: the user sees which operands clash.
      std::string shapesText;
      for (size_t k = 0; k < shapes.size(); ++k)
        shapesText += (k ? (k + 1 == shapes.size() ? " and " : ", ") : "") +
                      shapeString(shapes[k]);
      int64_t fromEnd = static_cast<int64_t>(shape.size() - i);
      fail(loc, std::string(what) + ": cannot broadcast shapes " + shapesText +
                    ": dimension -" + std::to_string(fromEnd) + " has size " +
                    std::to_string(dim) + " in one operand and " +
                    std::to_string(out) +
                    " in another (numpy rules: sizes must be equal or 1)");
    }
  }
  return result;
}

mlir::Value broadcastValue(TraceState &state, mlir::Value value,
                           llvm::ArrayRef<int64_t> shape, SourceLoc loc) {
  mlir::RankedTensorType type = typeOf(value);
  if (type.getShape() == shape)
    return value;
  int64_t offset = static_cast<int64_t>(shape.size()) - type.getRank();
  llvm::SmallVector<int64_t> dims;
  for (int64_t i = 0; i < type.getRank(); ++i)
    dims.push_back(offset + i);
  auto resultType = mlir::RankedTensorType::get(shape, type.getElementType());
  return state
      .create<mlir::kiln::BroadcastInDimOp>(loc, resultType, value,
                                            llvm::ArrayRef<int64_t>(dims))
      .getResult();
}

Shape shapeOf(const Operand &operand) {
  return operand.isTensor() ? operand.tensor().shape() : Shape();
}

mlir::Value materialize(TraceState &state, const Operand &operand, DType dtype,
                        llvm::ArrayRef<int64_t> shape, SourceLoc loc) {
  if (!operand.isTensor())
    return splat(state, operand.scalar(), dtype, shape, loc);
  mlir::Value value = state.use(operand.tensor(), loc);
  // Cast before broadcasting: the cast then runs on the smaller tensor.
  value = castValue(state, value, dtype, loc);
  return broadcastValue(state, value, shape, loc);
}

} // namespace detail

Tensor broadcast_to(const Tensor &x, const Shape &shape, SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  for (int64_t dim : shape)
    if (dim < 0)
      detail::fail(loc, "broadcast_to: target shape " + shapeString(shape) +
                            " has a negative dimension");
  bool ok = x.rank() <= static_cast<int64_t>(shape.size());
  for (int64_t i = 0; ok && i < x.rank(); ++i) {
    int64_t from = x.shape()[i];
    int64_t to = shape[shape.size() - x.rank() + i];
    ok = from == to || from == 1;
  }
  if (!ok)
    detail::fail(loc, "broadcast_to: cannot broadcast " +
                          shapeString(x.shape()) + " to " + shapeString(shape) +
                          " (numpy rules: trailing dimensions must be equal "
                          "or 1, and the rank cannot shrink)");
  mlir::Value value = state.use(x, loc);
  return state.wrap(detail::broadcastValue(state, value, shape, loc));
}

} // namespace kiln
