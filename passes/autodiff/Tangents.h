//===- Tangents.h - Forward sweep over kiln blocks --------------*- C++ -*-===//
//
// The pieces of forward mode (buildJvp) shared by the derived function, the
// JVP rules and the control-flow rules:
//
//  * JvpRule and lookupJvpRule: the rules table (JvpRules.cpp).
//  * JvpContext: what a rule sees of the forward sweep: the tangents of its
//    op's operands, and where to put the tangents of its results.
//  * TangentSweep: the forward sweep over one block, which control-flow
//    rules call recursively on their regions.
//
// Which values carry a tangent is the Activity of Differentiator.h, run in
// forward mode: the float tensors that depend on a differentiated argument.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_AUTODIFF_TANGENTS_H
#define KILN_PASSES_AUTODIFF_TANGENTS_H

#include "Differentiator.h"

namespace mlir {
namespace kiln {
namespace autodiff {

class JvpContext;

/// An entry of the forward-mode rules table.
struct JvpRule {
  /// False for ops that by definition carry no derivative (constants,
  /// comparisons): their results never carry a tangent.
  bool differentiable;
  /// Emits the tangents of the op's results given its operands' tangents.
  LogicalResult (*apply)(Operation *op, JvpContext &context);
};

/// The rule for `op`'s kind, or null if the table has none.
const JvpRule *lookupJvpRule(Operation *op);

/// Tangents of the values of one block (and, for control-flow rules, of the
/// blocks nested in it). A value without an entry has a zero tangent.
using TangentMap = llvm::DenseMap<Value, Value>;

class TangentSweep;

/// What a JVP rule sees while the forward sweep is at its op. Tangent ops
/// go at the builder's insertion point, right after the op, located at it.
class JvpContext {
public:
  JvpContext(TangentSweep &sweep, Operation *op, OpBuilder &builder,
             TangentMap &tangents)
      : sweep(sweep), op(op), builder(builder), tangents(tangents) {}

  Operation *getOp() const { return op; }
  Location getLoc() const { return op->getLoc(); }
  OpBuilder &getBuilder() { return builder; }
  TangentSweep &getSweep() { return sweep; }
  TangentMap &getTangents() { return tangents; }

  /// The tangent of operand `index`, or null where it is zero (the operand
  /// does not depend on a differentiated argument, or is not a float).
  Value getTangent(unsigned index) const {
    return tangents.lookup(op->getOperand(index));
  }

  /// getTangent, with zeros standing in for a missing tangent.
  Value getTangentOrZero(unsigned index);

  /// Records `tangent` as the tangent of result `index`.
  void setTangent(unsigned index, Value tangent) {
    if (tangent)
      tangents[op->getResult(index)] = tangent;
  }

private:
  TangentSweep &sweep;
  Operation *op;
  OpBuilder &builder;
  TangentMap &tangents;
};

/// Emits forward-mode (tangent) code into blocks of kiln IR whose varied
/// values are given by an Activity computed in forward mode.
class TangentSweep {
public:
  explicit TangentSweep(Activity &activity) : activity(activity) {}

  Activity &getActivity() { return activity; }

  /// Emits, after each op of `block` that sees a non-zero tangent, the ops
  /// computing the tangents of its results, and records them in
  /// `tangents`, which holds on entry the tangents of the block's
  /// arguments. Ops are visited in order; control-flow rules replace their
  /// op by one carrying the tangents too.
  LogicalResult sweepBlock(Block &block, TangentMap &tangents);

private:
  Activity &activity;
};

/// kiln.cond: the branches compute their tangents and yield them as extra
/// results (ControlFlowJvpRules.cpp).
LogicalResult tangentsOfCond(CondOp op, JvpContext &context);
/// kiln.for and kiln.while: the loop carries the tangents of its varied
/// carried values alongside them (ControlFlowJvpRules.cpp).
LogicalResult tangentsOfFor(ForOp op, JvpContext &context);
LogicalResult tangentsOfWhile(WhileOp op, JvpContext &context);

} // namespace autodiff
} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_AUTODIFF_TANGENTS_H
