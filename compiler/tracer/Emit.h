//===- Emit.h - Value-level helpers shared by the tracer ops ----*- C++ -*-===//
//
// Private to the tracer. The public functions take Tensors and Operands,
// validate them with messages in the user's terms, and then work on
// mlir::Values that are already usable in the current block; these helpers
// are that second half. Each is implemented in the file of its concept:
// Promotion.cpp, Broadcasting.cpp, Constants.cpp, Elementwise.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_EMIT_H
#define KILN_TRACER_EMIT_H

#include "TraceState.h"

#include "kiln/IR/KilnOps.h"
#include "kiln/Tracer/Ops.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace kiln {
namespace detail {

//===----------------------------------------------------------------------===//
// Promotion (Promotion.cpp)
//===----------------------------------------------------------------------===//

/// The common dtype of two tensor dtypes in the lattice
/// bool < i32 < i64 < f32 < f64.
DType promoteTypes(DType a, DType b);

/// The dtype the operands of an elementwise op are converted to: tensors
/// promote by promoteTypes; C++ scalars are weak and adopt it, except that a
/// float scalar makes a non-float result f32 and an integer scalar makes a
/// bool result i32. Scalars alone give f32, i32 or i1 by their kind.
DType promoteOperands(llvm::ArrayRef<const Operand *> operands);

/// The dtype float-only ops compute in: `dtype` if it is a float, else f32.
DType floatDType(DType dtype);

/// `value` converted to `dtype` with kiln.cast (no op if it already is).
mlir::Value castValue(TraceState &state, mlir::Value value, DType dtype,
                      SourceLoc loc);

//===----------------------------------------------------------------------===//
// Broadcasting (Broadcasting.cpp)
//===----------------------------------------------------------------------===//

/// The numpy broadcast of `shapes`; throws naming the shapes and the
/// dimension when they are incompatible. `what` names the operation.
Shape broadcastShapes(llvm::ArrayRef<Shape> shapes, const char *what,
                      SourceLoc loc);

/// `value` broadcast to `shape` with kiln.broadcast_in_dim (no op if it
/// already has it). The shapes must be broadcast-compatible.
mlir::Value broadcastValue(TraceState &state, mlir::Value value,
                           llvm::ArrayRef<int64_t> shape, SourceLoc loc);

/// The operand as a value of `dtype` and `shape`: a tensor is cast and
/// broadcast, a scalar becomes a splat constant.
mlir::Value materialize(TraceState &state, const Operand &operand, DType dtype,
                        llvm::ArrayRef<int64_t> shape, SourceLoc loc);

/// The shape of an operand (rank 0 for a scalar).
Shape shapeOf(const Operand &operand);

//===----------------------------------------------------------------------===//
// Constants (Constants.cpp)
//===----------------------------------------------------------------------===//

/// Element count of `shape`; a negative dimension or a count beyond int64
/// is an error naming `what`.
int64_t checkedNumElements(const Shape &shape, const char *what,
                           SourceLoc loc);

/// A splat kiln.constant of `scalar` converted to `dtype` (see constant()).
mlir::Value splat(TraceState &state, const Scalar &scalar, DType dtype,
                  llvm::ArrayRef<int64_t> shape, SourceLoc loc);

//===----------------------------------------------------------------------===//
// Shapes (Shapes.cpp)
//===----------------------------------------------------------------------===//

/// `axis` in [-rank, rank) made non-negative; throws otherwise.
int64_t normalizeAxis(int64_t axis, int64_t rank, const char *what,
                      SourceLoc loc);

/// kiln.reshape of `value` to `shape` (same element count; no op if equal).
mlir::Value reshapeValue(TraceState &state, mlir::Value value,
                         llvm::ArrayRef<int64_t> shape, SourceLoc loc);

//===----------------------------------------------------------------------===//
// Elementwise (Elementwise.cpp)
//===----------------------------------------------------------------------===//

enum class BinaryKind { Add, Sub, Mul, Div, Rem, Max, Min, Pow };

/// A kiln binary op on two values of identical type.
mlir::Value binaryValue(TraceState &state, BinaryKind kind, mlir::Value lhs,
                        mlir::Value rhs, SourceLoc loc);

/// kiln.compare of two values of identical type.
mlir::Value compareValue(TraceState &state,
                         mlir::kiln::CompareDirection direction,
                         mlir::Value lhs, mlir::Value rhs, SourceLoc loc);

/// kiln.select; `pred` is i1 with the values' shape or rank 0.
mlir::Value selectValue(TraceState &state, mlir::Value pred,
                        mlir::Value onTrue, mlir::Value onFalse,
                        SourceLoc loc);

} // namespace detail
} // namespace kiln

#endif // KILN_TRACER_EMIT_H
