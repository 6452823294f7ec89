//===- Emit.h - Building kiln ops with ONNX's conventions -------*- C++ -*-===//
//
// ONNX ops broadcast like numpy, take negative axes, and multiply batched
// matrices of any rank; kiln ops are explicit about all of that. These
// helpers build the explicit kiln ops. They assume valid arguments: the
// translations check ranks and shapes first and report errors on the node.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_EMIT_H
#define KILN_COMPILER_ONNX_EMIT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace kiln {
namespace onnx_import {

inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}
inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return typeOf(v).getShape();
}
inline int64_t rankOf(mlir::Value v) { return typeOf(v).getRank(); }
inline mlir::Type elementTypeOf(mlir::Value v) {
  return typeOf(v).getElementType();
}
inline bool isFloat(mlir::Value v) {
  return mlir::isa<mlir::FloatType>(elementTypeOf(v));
}
inline bool isBool(mlir::Value v) { return elementTypeOf(v).isInteger(1); }
int64_t numElementsOf(llvm::ArrayRef<int64_t> shape);

/// numpy's broadcast of two shapes, or nullopt where they do not broadcast.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// An axis in [-rank, rank) made non-negative, or nullopt when outside.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// A rank-0 or splat constant of `type`'s shape and element type.
mlir::Value splat(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type, double value);
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::Type elementType, double value);
/// A constant of the given shape holding `values` (row-major).
mlir::Value constantInts(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Type elementType, llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<int64_t> values);
mlir::Value constantFloats(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type elementType,
                           llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<double> values);

mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    llvm::ArrayRef<int64_t> shape);
/// Broadcasts `v` to `shape` by numpy's rules (trailing dims aligned).
mlir::Value broadcastTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        llvm::ArrayRef<int64_t> shape);
mlir::Value cast(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                 mlir::Type elementType);
mlir::Value transpose(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      llvm::ArrayRef<int64_t> permutation);
mlir::Value slice(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                  llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> limit,
                  llvm::ArrayRef<int64_t> stride);
/// Elements [start, limit) of dim `axis`.
mlir::Value sliceAxis(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      int64_t axis, int64_t start, int64_t limit);
mlir::Value concat(mlir::OpBuilder &b, mlir::Location loc,
                   llvm::ArrayRef<mlir::Value> values, int64_t axis);

/// Elementwise binary kiln op OpTy after broadcasting both operands to
/// their common shape (which the caller has checked exists).
template <typename OpTy>
mlir::Value binary(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs,
                   mlir::Value rhs) {
  llvm::SmallVector<int64_t> shape =
      *broadcastShapes(shapeOf(lhs), shapeOf(rhs));
  lhs = broadcastTo(b, loc, lhs, shape);
  rhs = broadcastTo(b, loc, rhs, shape);
  return b.create<OpTy>(loc, lhs, rhs);
}
template <typename OpTy>
mlir::Value unary(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v) {
  return b.create<OpTy>(loc, v);
}
/// kiln.compare after broadcasting.
mlir::Value compare(mlir::OpBuilder &b, mlir::Location loc, unsigned direction,
                    mlir::Value lhs, mlir::Value rhs);
/// kiln.select after broadcasting all three.
mlir::Value select(mlir::OpBuilder &b, mlir::Location loc, mlir::Value pred,
                   mlir::Value onTrue, mlir::Value onFalse);

/// numpy.matmul: 1-d operands are promoted and the added dim removed,
/// batch dims broadcast. The caller has checked that the shapes agree.
/// `resultElementType`, where given, is kiln.matmul's result_element_type.
mlir::Value matmul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs,
                   mlir::Value rhs, mlir::Type resultElementType = {});
/// The shape numpy.matmul gives, or nullopt where the operands disagree.
std::optional<llvm::SmallVector<int64_t>>
matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// `indices` as i64 (floats truncated toward zero), with negative entries
/// counted from the end of a dim of `dim` elements (i + dim where i < 0).
mlir::Value wrapIndices(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value indices, int64_t dim);

/// The flat index into a tensor of shape `dataShape` of each element of
/// `idx` (i64, in range), read as the coordinate along `axis`, the
/// element's own coordinates giving the others: the addressing of
/// GatherElements and ScatterElements.
mlir::Value elementLinearIndex(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value idx,
                               llvm::ArrayRef<int64_t> dataShape,
                               int64_t axis);

/// The permutation that moves dim `axis` of a rank-`rank` tensor to the
/// front, the other dims keeping their order (undone with MLIR's
/// invertPermutationVector).
llvm::SmallVector<int64_t> axisFirst(int64_t rank, int64_t axis);

/// The type as MLIR prints it, for error messages.
std::string typeString(mlir::Type type);

/// `data` gathered along `axis` at the i64 `indices` (in range; kiln.gather
/// clamps): the result has data's dims before the axis, the indices' dims,
/// then data's dims after the axis.
mlir::Value gatherAxis(mlir::OpBuilder &b, mlir::Location loc, mlir::Value data,
                       mlir::Value indices, int64_t axis);
/// gatherAxis at constant indices (a 1-d list).
mlir::Value gatherAxisConstant(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value data, llvm::ArrayRef<int64_t> indices,
                               int64_t axis);

/// Sum, max or mean over `axes`, keeping them as size-1 dims when
/// `keepDims`.
enum class Reduction { Sum, Max, Min, Mean };
mlir::Value reduce(mlir::OpBuilder &b, mlir::Location loc, Reduction kind,
                   mlir::Value v, llvm::ArrayRef<int64_t> axes, bool keepDims);

} // namespace onnx_import
} // namespace kiln

#endif // KILN_COMPILER_ONNX_EMIT_H
