//===- Differentiator.h - Reverse sweep over kiln blocks --------*- C++ -*-===//
//
// The pieces shared by the gradient builder, the VJP rules and the
// control-flow rules:
//
//  * Activity: which values carry a derivative ("varied" values: float
//    tensors that depend on a differentiated argument).
//  * VjpRule and lookupVjpRule: the rules table (VjpRules.cpp).
//  * VjpContext: what a rule sees of the reverse sweep: the adjoints of its
//    op's results, which operands need a gradient, and where to put the
//    gradients it computes.
//  * Differentiator: the reverse sweep over one block, which control-flow
//    rules call recursively on their regions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_AUTODIFF_DIFFERENTIATOR_H
#define KILN_PASSES_AUTODIFF_DIFFERENTIATOR_H

#include "kiln/IR/KilnOps.h"
#include "kiln/Passes/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
namespace kiln {
namespace autodiff {

/// Whether values of `type` can carry a derivative: statically shaped
/// tensors of floats (stacks never do).
bool isDifferentiableType(Type type);

/// A tensor of `type` (any kiln element type) filled with zeros; an empty
/// stack if `type` is a stack type.
Value buildZeros(OpBuilder &builder, Location loc, Type type);


/// Splits the kiln.for and kiln.while loops of `block`, at any depth, into
/// segments of `every` iterations whose enclosing loop stores only their
/// carried values and recomputes them in its backward pass. Does nothing
/// when `every` is 0.
void splitLoopsForCheckpointing(Block &block, unsigned every);

/// Checks a request to differentiate `f` into a new function `name`
/// (common/Derivation.h's checks) with respect to the arguments `wrt`,
/// which must be distinct float tensor arguments; sets `arguments` to
/// them, or to every float argument when `wrt` is empty.
LogicalResult checkDerivationRequest(func::FuncOp f, ArrayRef<unsigned> wrt,
                                     StringRef name,
                                     SmallVectorImpl<unsigned> &arguments);

/// A tensor of `type` filled with `value` (truncated for integer types).
Value buildSplat(OpBuilder &builder, Location loc, Type type, double value);

//===----------------------------------------------------------------------===//
// Activity
//===----------------------------------------------------------------------===//

/// The varied values of a function: float tensors that depend, through ops
/// with a derivative, on one of the arguments being differentiated. Only
/// varied values get adjoints, so no backward code is emitted for
/// computations that do not depend on the differentiated arguments (weights
/// held fixed, index arithmetic, masks).
class Activity {
public:
  /// Which rules table says whether an op has a derivative: the VJP rules
  /// (reverse mode, buildGradient) or the JVP rules (forward mode,
  /// buildJvp).
  enum class Mode { Reverse, Forward };

  explicit Activity(Mode mode = Mode::Reverse) : mode(mode) {}

  /// Marks `seeds` varied and propagates forward through `block`, including
  /// the regions of its control-flow ops. Fails, with a diagnostic at the
  /// op, if an op on a varied path has no rule in the mode's table.
  LogicalResult propagate(Block &block, ArrayRef<Value> seeds);

  bool isVaried(Value value) const { return varied.contains(value); }

  /// Marks `value` if its type is differentiable; returns whether that
  /// added a mark.
  bool mark(Value value);

  /// Moves the marks of `from`'s results to the first results of `to`, for
  /// a control-flow op that a rule rebuilt with extra results.
  void transferResults(Operation *from, Operation *to);

private:
  /// Propagates through `block`, whose arguments are already marked.
  LogicalResult propagateBlock(Block &block);
  LogicalResult propagateOp(Operation *op);
  LogicalResult propagateCond(CondOp op);
  LogicalResult propagateFor(ForOp op);
  LogicalResult propagateWhile(WhileOp op);
  /// The fixed point of propagateFor/propagateWhile: propagates through
  /// `body`, whose carried value k is argument k + `firstCarried`, until
  /// the marks of the carried arguments stop changing.
  LogicalResult propagateLoopBody(Block &body, unsigned firstCarried);

  /// Whether the mode's table knows `op` (null when it does not) and gives
  /// it a derivative.
  std::optional<bool> hasDerivative(Operation *op) const;

  Mode mode;
  llvm::DenseSet<Value> varied;
};

//===----------------------------------------------------------------------===//
// VJP rules
//===----------------------------------------------------------------------===//

class VjpContext;

/// An entry of the rules table.
struct VjpRule {
  /// False for ops that by definition carry no gradient (constants, iota,
  /// comparisons): their results are never varied, so `apply` is unused.
  bool differentiable;
  /// Emits the gradients of the op's operands given its result adjoints.
  LogicalResult (*apply)(Operation *op, VjpContext &context);
};

/// The rule for `op`'s kind, or null if the table has none.
const VjpRule *lookupVjpRule(Operation *op);

/// The rule for ops of type `typeID`, or null.
const VjpRule *lookupVjpRule(TypeID typeID);

//===----------------------------------------------------------------------===//
// Reverse sweep
//===----------------------------------------------------------------------===//

class Differentiator;

/// Adjoints of the values of one block, accumulated with kiln.add as the
/// reverse sweep reaches each use (fan-out).
class AdjointMap {
public:
  Value lookup(Value value) const { return adjoints.lookup(value); }

  /// Adds `gradient` into the adjoint of `value`.
  void accumulate(OpBuilder &builder, Location loc, Value value,
                  Value gradient);

  /// Removes and returns the adjoint of `value` (null if none).
  Value take(Value value);

private:
  llvm::DenseMap<Value, Value> adjoints;
};

/// What a VJP rule sees while the reverse sweep is at its op. Backward ops
/// go at the builder's insertion point, located at the forward op.
class VjpContext {
public:
  VjpContext(Differentiator &differentiator, Operation *op,
             OpBuilder &builder, AdjointMap &adjoints,
             SmallVector<Value> resultAdjoints)
      : differentiator(differentiator), op(op), builder(builder),
        adjoints(adjoints), resultAdjoints(std::move(resultAdjoints)) {}

  Operation *getOp() const { return op; }
  Location getLoc() const { return op->getLoc(); }
  OpBuilder &getBuilder() { return builder; }
  Differentiator &getDifferentiator() { return differentiator; }
  Activity &getActivity();

  /// The adjoint of result `index`, or null when no gradient reached it.
  Value getResultAdjoint(unsigned index) const {
    return resultAdjoints[index];
  }

  /// getResultAdjoint, with zeros standing in for a missing adjoint.
  Value getResultAdjointOrZero(unsigned index);

  /// Whether operand `index` is varied, i.e. wants a gradient.
  bool needsGradient(unsigned index) const;

  /// Accumulates `gradient` into operand `index`'s adjoint. Gradients for
  /// operands that are not varied are dropped.
  void addGradient(unsigned index, Value gradient);

private:
  Differentiator &differentiator;
  Operation *op;
  OpBuilder &builder;
  AdjointMap &adjoints;
  SmallVector<Value> resultAdjoints;
};

/// Emits backward code for blocks of kiln IR whose varied values are given
/// by an Activity.
class Differentiator {
public:
  explicit Differentiator(Activity &activity) : activity(activity) {}

  Activity &getActivity() { return activity; }

  /// Emits, at `builder`'s insertion point, the backward code of `block`'s
  /// ops, given the adjoints of its terminator's operands (`seeds`, one per
  /// operand, null for none). Sets `argAdjoints` to one adjoint per block
  /// argument, null where no gradient flowed. The forward ops are visited
  /// in reverse order and each op whose results received an adjoint is
  /// handed to its rule.
  LogicalResult differentiateBlock(Block &block, OpBuilder &builder,
                                   ArrayRef<Value> seeds,
                                   SmallVectorImpl<Value> &argAdjoints);

private:
  Activity &activity;
};

} // namespace autodiff
} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_AUTODIFF_DIFFERENTIATOR_H
