//===- Lowerings.h - kiln to linalg lowering pieces -------------*- C++ -*-===//
//
// The kiln-to-linalg lowering is split by kind of op: elementwise math,
// structural ops (shapes, reductions, contractions, gathers) and control
// flow. Each file contributes its patterns through one of these functions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_LOWERINGS_H
#define KILN_BACKENDS_COMMON_LOWERINGS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace kiln {

void populateElementwiseLowerings(RewritePatternSet &patterns);
void populateStructuralLowerings(RewritePatternSet &patterns);
void populateControlFlowLowerings(RewritePatternSet &patterns);
/// kiln.argmax/argmin: a parallel generic scanning each slice
/// (ArgReduceLowering.cpp).
void populateArgReduceLowerings(RewritePatternSet &patterns);
/// kiln.cumsum: an scf.for of in-place slice updates (CumsumLowering.cpp).
void populateCumsumLowerings(RewritePatternSet &patterns);
/// kiln.scatter_add: an scf.for over the indices adding one row at a time
/// in place; with `hostIndices` the loop reads the indices' buffer itself,
/// otherwise each index is clamped into a rank-0 tensor first (a device
/// kernel's result) (ScatterAddLowering.cpp).
void populateScatterAddLowerings(RewritePatternSet &patterns,
                                 bool hostIndices);
/// kiln.conv: a padded copy of the input and one linalg.generic (see
/// ConvLowering.cpp).
void populateConvLowerings(RewritePatternSet &patterns);
/// kiln.stack_empty/push/read: tensor ops on the stack's tensor<?x...>
/// (see StackLowering.cpp).
void populateStackLowerings(RewritePatternSet &patterns);
/// kiln.pad, kiln.reduce_window and kiln.reduce_window_max_grad: parallel
/// linalg.generics that walk each window with scf.for; with `rowLoops`,
/// reduce_window walks its last result dim in inner loops (see
/// WindowLowering.cpp).
void populateWindowLowerings(RewritePatternSet &patterns, bool rowLoops);
/// kiln.fused: the region's ops are inlined into the parent block, their
/// locations tagged with the region (see FusedLowering.cpp).
void populateFusedLowerings(RewritePatternSet &patterns);

/// Builds a `linalg.generic` producing a new tensor of `resultType`: all
/// iterators parallel over the result's dims, input `i` read through
/// `inputMaps[i]`, and `body` computing the element from the inputs'
/// elements (it may use linalg.index).
Value buildParallelGeneric(
    OpBuilder &builder, Location loc, RankedTensorType resultType,
    ValueRange inputs, ArrayRef<AffineMap> inputMaps,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// buildParallelGeneric over inputs of the result's shape (identity maps).
Value buildElementwise(
    OpBuilder &builder, Location loc, RankedTensorType resultType,
    ValueRange inputs,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// A scalar constant of `type` (float or integer) with value `value`.
Value scalarConstant(OpBuilder &builder, Location loc, Type type, double value);

/// kiln.cast of one scalar, between any two element types.
/// The sign of ui8 ... ui64 picks the unsigned conversions: zero extension,
/// uitofp, and saturation at [0, 2^w - 1]; a conversion between two integers
/// of one width is a reinterpretation (arith.bitcast, an identity once the
/// sign is erased).
Value castScalar(OpBuilder &b, Location loc, Value value, Type to);

/// The smallest value of the integer type `type`: 0 for ui8 ... ui64, the
/// most negative value for the signless (signed) integers.
APInt lowestIntValue(IntegerType type);

/// arith.maxui or arith.maxsi of two integers, by the sign of their type.
/// The lowering keeps kiln's unsigned types (ui8 ... ui64) on scalars until
/// ConvertKilnToLinalg erases the sign at its end, so the sign is read here.
Value createIntMax(OpBuilder &builder, Location loc, Value lhs, Value rhs);

/// The predicate that orders integers of `type` like `signedPredicate` (slt,
/// sle, sgt, sge) does signed ones: the unsigned one for ui8 ... ui64.
arith::CmpIPredicate orderPredicate(Type type,
                                    arith::CmpIPredicate signedPredicate);

/// Replaces the unsigned integer types (ui8 ... ui64) in `root` and every
/// op nested in it (result and block argument types, function types,
/// attributes and constants) by the signless integers of their width. Run
/// once the kiln ops that read the sign are lowered.
void eraseIntegerSignedness(Operation *root);

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_COMMON_LOWERINGS_H
