//===- JvpRules.cpp - The Jacobian-vector product of every kiln op --------===//
//
// One rule per op, and the table that maps op types to rules. A rule reads
// the tangents of its op's operands (`t` below; null where zero) and emits,
// right after the op, kiln ops computing the tangents of its results. Most
// ops fall into one of four kinds, each with one rule:
//
//  - Linear ops (add, sub, neg, select, float casts, the shape ops,
//    reduce_sum/mean, cumsum, gather, scatter_add, the dynamic slices,
//    sum pooling, the sum and mean collectives, all_gather, all_to_all,
//    broadcast, permute): the tangent is the op itself applied to the
//    tangents, with zeros for float operands without one and integer
//    operands (indices, predicates) as they are.
//  - Bilinear ops (mul, matmul, conv): op(ta, b) + op(a, tb).
//  - Elementwise ops with a nonlinear derivative (div, max, min, pow, rem
//    and the unary functions): the Jacobian with respect to each operand is
//    diagonal, so J t equals J^T t, which is what the op's VJP rule
//    computes when handed t as the result's cotangent. Those rules are
//    reused, so each derivative formula and its conventions at kinks and
//    ties (VjpRules.cpp) exist once and the two modes cannot disagree.
//  - Ops that carry no derivative by definition (constants, comparisons,
//    integer ops, floor/ceil/round/sign), listed as such.
//
// The rest have rules of their own below: reduce_max, sort, max pooling,
// attention, max pooling's gradient (linear in its cotangent), the max/min
// collectives, the asynchronous collectives, and the control-flow ops
// (ControlFlowJvpRules.cpp). Where the derivative is not unique they follow
// the VJP rules' conventions (ties split evenly for reduce_max and the
// max/min collectives, the first maximum of a pooling window).
//
//===----------------------------------------------------------------------===//

#include "RuleBuilder.h"
#include "Tangents.h"

#include "kiln/Passes/Autodiff.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

//===----------------------------------------------------------------------===//
// The four kinds
//===----------------------------------------------------------------------===//

/// The op cloned after itself with `operands` in place of its own.
static Operation *cloneWith(JvpContext &context, ValueRange operands) {
  Operation *clone = context.getBuilder().clone(*context.getOp());
  clone->setOperands(operands);
  return clone;
}

/// Linear in every float operand.
static LogicalResult jvpLinear(Operation *op, JvpContext &context) {
  if (llvm::none_of(op->getResultTypes(), isDifferentiableType))
    return success();
  SmallVector<Value> operands;
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    operands.push_back(isDifferentiableType(operand.getType())
                           ? context.getTangentOrZero(index)
                           : operand);
  Operation *clone = cloneWith(context, operands);
  for (auto [index, result] : llvm::enumerate(clone->getResults()))
    if (isDifferentiableType(result.getType()))
      context.setTangent(index, result);
  return success();
}

/// Linear in operands 0 and 1 jointly: op(ta, b) + op(a, tb), with a term
/// only for an operand that has a tangent.
static LogicalResult jvpBilinear(Operation *op, JvpContext &context) {
  RuleBuilder r(context);
  Value sum;
  for (unsigned index : {0u, 1u}) {
    Value tangent = context.getTangent(index);
    if (!tangent)
      continue;
    SmallVector<Value> operands(op->getOperands());
    operands[index] = tangent;
    Value term = cloneWith(context, operands)->getResult(0);
    sum = sum ? r.add(sum, term) : term;
  }
  context.setTangent(0, sum);
  return success();
}

/// The VJP rule of elementwise `op` applied to `tangent` as the cotangent of
/// its result, restricted to operand `index`: D_index * tangent, where
/// D_index is the diagonal Jacobian of the result with respect to that
/// operand. When the op reads the same value through several operands, the
/// rule sums their parts, which is the whole tangent.
static Value diagonalTerm(Operation *op, unsigned index, Value tangent,
                          OpBuilder &builder) {
  const VjpRule *rule = lookupVjpRule(op);
  Value operand = op->getOperand(index);
  Activity only;
  only.mark(operand);
  Differentiator differentiator(only);
  AdjointMap adjoints;
  VjpContext vjp(differentiator, op, builder, adjoints, {tangent});
  if (failed(rule->apply(op, vjp)))
    return Value();
  return adjoints.take(operand);
}

/// Elementwise with a diagonal Jacobian per operand.
static LogicalResult jvpDiagonal(Operation *op, JvpContext &context) {
  RuleBuilder r(context);
  Value sum;
  SmallVector<Value> done;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    Value tangent = context.getTangent(index);
    if (!tangent || llvm::is_contained(done, operand))
      continue;
    done.push_back(operand);
    Value term = diagonalTerm(op, index, tangent, r.b);
    if (!term)
      return failure();
    sum = sum ? r.add(sum, term) : term;
  }
  context.setTangent(0, sum);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and sorting
//===----------------------------------------------------------------------===//

/// The tangent of the maxima, split evenly between ties as the VJP does:
/// sum(mask * t) / sum(mask) with mask = (x == broadcast(y)).
static LogicalResult jvpReduceMax(ReduceMaxOp op, JvpContext &context) {
  RuleBuilder r(context);
  Value x = op.getOperand();
  auto operandType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> dims = op.getDims();
  Value maxima = unreduce(r, op.getResult(), operandType, dims);
  Value mask = r.cast(operandType, r.cmp(CompareDirection::eq, x, maxima));
  context.setTangent(0, r.div(r.reduceSum(r.mul(mask, context.getTangent(0)),
                                          dims),
                              r.reduceSum(mask, dims)));
  return success();
}

/// Each sorted value carries the tangent of the element it came from: a
/// gather of the flattened tangent at the sources' flat positions.
static LogicalResult jvpSort(SortOp op, JvpContext &context) {
  RuleBuilder r(context);
  RankedTensorType type = op.getOperand().getType();
  int64_t count = type.getNumElements();
  Value source = sortedSourcePositions(r, op);
  auto flatType = RankedTensorType::get({count}, type.getElementType());
  context.setTangent(0, r.b.create<GatherOp>(
                            r.loc, r.reshape(flatType, context.getTangent(0)),
                            source));
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// sum pooling is linear. max pooling: each window's tangent is the
/// tangent of the element kiln.reduce_window_max_grad selects (the first
/// NaN, else the first in-bounds element no other exceeds). The windows
/// are visited one offset at a time: offset w of every placement is a
/// strided slice of the padded operand, and a running selection keeps the
/// value and tangent chosen so far.
static LogicalResult jvpReduceWindow(ReduceWindowOp op, JvpContext &context) {
  if (op.getKind() == ReduceWindowKind::Sum)
    return jvpLinear(op, context);
  RuleBuilder r(context);
  Value x = op.getOperand();
  RankedTensorType type = op.getOperand().getType();
  RankedTensorType resultType = op.getType();
  if (resultType.getNumElements() == 0) {
    context.setTangent(0, r.zeros(resultType));
    return success();
  }
  int64_t rank = type.getRank();
  ArrayRef<int64_t> window = op.getWindow(), strides = op.getStrides(),
                    dilations = op.getDilations(), low = op.getPaddingLow(),
                    high = op.getPaddingHigh();
  SmallVector<int64_t> none(rank, 0);
  auto scalar = RankedTensorType::get({}, type.getElementType());
  bool padded = llvm::any_of(low, [](int64_t p) { return p > 0; }) ||
                llvm::any_of(high, [](int64_t p) { return p > 0; });
  Value paddedX = x, paddedT = context.getTangent(0), inBounds;
  if (padded) {
    paddedX = r.b.create<PadOp>(
        r.loc, x,
        r.b.create<ConstantOp>(
            r.loc, DenseElementsAttr::get(
                       scalar, r.b.getFloatAttr(type.getElementType(),
                                                -INFINITY))),
        low, high, none);
    paddedT = r.b.create<PadOp>(r.loc, paddedT, r.zeros(scalar), low, high,
                                none);
    inBounds = r.b.create<PadOp>(r.loc, r.splatLike(x, 1.0), r.zeros(scalar),
                                 low, high, none);
  }
  // Offsets w in row-major order.
  SmallVector<int64_t> offset(rank, 0);
  Value best, chosen, found;
  while (true) {
    SmallVector<int64_t> start, limit;
    for (int64_t d = 0; d < rank; ++d) {
      start.push_back(offset[d] * dilations[d]);
      limit.push_back(start[d] + (resultType.getDimSize(d) - 1) * strides[d] +
                      1);
    }
    Value value = r.slice(paddedX, start, limit, strides);
    Value tangent = r.slice(paddedT, start, limit, strides);
    Value valid;
    if (padded)
      valid = r.cmp(CompareDirection::gt, r.slice(inBounds, start, limit,
                                                  strides),
                    r.zeros(resultType));
    if (!best) {
      best = value;
      chosen = tangent;
      found = valid;
    } else {
      // Taken over the selection so far: a greater value, or the first NaN.
      Value isNan = r.cmp(CompareDirection::ne, value, value);
      Value bestIsNumber = r.cmp(CompareDirection::eq, best, best);
      Value take = r.b.create<OrOp>(
          r.loc, r.cmp(CompareDirection::gt, value, best),
          r.b.create<AndOp>(r.loc, isNan, bestIsNumber));
      if (padded) {
        // The first in-bounds element is taken whatever the padding held.
        Value first = r.b.create<NotOp>(r.loc, found);
        take = r.b.create<AndOp>(r.loc, valid,
                                 r.b.create<OrOp>(r.loc, take, first));
        found = r.b.create<OrOp>(r.loc, found, valid);
      }
      best = r.select(take, value, best);
      chosen = r.select(take, tangent, chosen);
    }
    int64_t d = rank - 1;
    while (d >= 0 && ++offset[d] == window[d])
      offset[d--] = 0;
    if (d < 0)
      break;
  }
  // A window entirely in the padding selects nothing.
  if (padded)
    chosen = r.select(found, chosen, r.zeros(resultType));
  context.setTangent(0, chosen);
  return success();
}

/// Linear in the cotangent; the operand only says where each window's
/// maximum is, which is piecewise constant in it.
static LogicalResult jvpReduceWindowMaxGrad(ReduceWindowMaxGradOp op,
                                            JvpContext &context) {
  Value tangent = context.getTangent(1);
  if (!tangent)
    return success();
  context.setTangent(
      0, cloneWith(context, {op.getOperand(), tangent})->getResult(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// With S = scale q k^T + mask (and the causal mask), P = softmax(S) =
/// exp(S - lse) and o = P v:
///   dS   = scale (dq k^T + q dk^T) + dmask
///   dlse = rowsum(P * dS)
///   do   = (P * (dS - dlse)) v + P dv
/// formed in lse's precision (f32 for half-precision operands) over the
/// leading dims flattened into one batch dim. Unlike the fused forward op
/// this forms the [Nq, Nk] score matrix.
static LogicalResult jvpAttention(AttentionOp op, JvpContext &context) {
  RuleBuilder r(context);
  RankedTensorType qType = op.getQuery().getType();
  RankedTensorType kType = op.getKey().getType();
  RankedTensorType vType = op.getValue().getType();
  auto lseType = cast<RankedTensorType>(op.getLse().getType());
  Type element = lseType.getElementType();
  int64_t rank = qType.getRank();
  int64_t nq = qType.getDimSize(rank - 2), nk = kType.getDimSize(rank - 2);
  int64_t d = qType.getDimSize(rank - 1), dv = vType.getDimSize(rank - 1);
  int64_t batch = 1;
  for (int64_t i = 0; i < rank - 2; ++i)
    batch *= qType.getDimSize(i);
  auto typeOf = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, element);
  };
  // `value` in `element`.
  auto widen = [&](Value value) {
    auto type = tensorType(value);
    return type.getElementType() == element
               ? value
               : r.cast(typeOf(type.getShape()), value);
  };
  // An operand (or its tangent) as [batch, rows, cols] in `element`.
  auto flat = [&](Value value, int64_t rows, int64_t cols) {
    return r.reshape(typeOf({batch, rows, cols}), widen(value));
  };
  // A mask (or its tangent) broadcast to the scores' shape.
  auto spreadMask = [&](Value value) {
    SmallVector<int64_t> all, full(qType.getShape().drop_back(2));
    for (int64_t i = 0; i < rank; ++i)
      all.push_back(i);
    full.push_back(nq);
    full.push_back(nk);
    return r.reshape(typeOf({batch, nq, nk}),
                     r.broadcast(typeOf(full), widen(value), all));
  };
  auto swap = [&](Value value) { return r.transpose(value, {0, 2, 1}); };
  Value q = flat(op.getQuery(), nq, d), k = flat(op.getKey(), nk, d);
  Value v = flat(op.getValue(), nk, dv);
  RankedTensorType scoreType = typeOf({batch, nq, nk});
  Value scale = buildSplat(r.b, r.loc, scoreType,
                           op.getScale().convertToDouble());

  // S and P.
  Value scores = r.mul(r.matmul(q, swap(k)), scale);
  if (Value mask = op.getMask())
    scores = r.add(scores, spreadMask(mask));
  if (op.getCausal()) {
    auto indexType = RankedTensorType::get({batch, nq, nk}, r.b.getI64Type());
    Value row = r.b.create<IotaOp>(r.loc, indexType, 1);
    Value col = r.b.create<IotaOp>(r.loc, indexType, 2);
    Value minusInf = r.b.create<ConstantOp>(
        r.loc, DenseElementsAttr::get(scoreType,
                                      r.b.getFloatAttr(element, -INFINITY)));
    scores = r.select(r.cmp(CompareDirection::gt, col, row), minusInf, scores);
  }
  Value lse = r.reshape(typeOf({batch, nq}), op.getLse());
  Value p = r.b.create<ExpOp>(
      r.loc, r.sub(scores, r.broadcast(scoreType, lse, {0, 1})));

  // dS.
  Value dScores;
  auto addTo = [&](Value &sum, Value term) {
    sum = sum ? r.add(sum, term) : term;
  };
  if (Value t = context.getTangent(0))
    addTo(dScores, r.mul(r.matmul(flat(t, nq, d), swap(k)), scale));
  if (Value t = context.getTangent(1))
    addTo(dScores, r.mul(r.matmul(q, swap(flat(t, nk, d))), scale));
  if (op.getMask())
    if (Value t = context.getTangent(3))
      addTo(dScores, spreadMask(t));

  // do and dlse.
  Value dOut;
  Value dLse;
  if (dScores) {
    // Masked-out scores have P = 0; their dS must not turn that into NaN.
    Value live = r.cmp(CompareDirection::gt, p, r.zeros(scoreType));
    dScores = r.select(live, dScores, r.zeros(scoreType));
    dLse = r.reduceSum(r.mul(p, dScores), {2});
    Value dP = r.mul(p, r.sub(dScores, r.broadcast(scoreType, dLse, {0, 1})));
    addTo(dOut, r.matmul(dP, v));
  }
  if (Value t = context.getTangent(2))
    addTo(dOut, r.matmul(p, flat(t, nk, dv)));
  if (dOut) {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Value shaped = r.reshape(typeOf(resultType.getShape()), dOut);
    context.setTangent(0, shaped.getType() == resultType
                              ? shaped
                              : r.cast(resultType, shaped));
  }
  if (dLse)
    context.setTangent(1, r.reshape(lseType, dLse));
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// max/min: the tangent of the extreme, averaged over the ranks that hold
/// it (ties split evenly, as the VJP does). `combine` is the sum
/// collective the op's shape needs (all_reduce or reduce_scatter), and
/// `everywhere` the reduced value as each rank's operand is laid out.
static Value extremeTangent(RuleBuilder &r, Value x, Value t,
                            Value everywhere,
                            function_ref<Value(Value)> combine) {
  Value holds = r.cast(x.getType(), r.cmp(CompareDirection::eq, x,
                                          everywhere));
  return r.div(combine(r.mul(holds, t)), combine(holds));
}

/// all_reduce (and all_reduce_start, whose tangent is exchanged
/// synchronously when it is not linear).
template <typename OpTy>
static LogicalResult jvpAllReduce(OpTy op, JvpContext &context) {
  if (op.getKind() == CollectiveReduction::Sum ||
      op.getKind() == CollectiveReduction::Mean)
    return jvpLinear(op, context);
  RuleBuilder r(context);
  Groups groups = groupsOf(op);
  Value y = op.getResult();
  if constexpr (std::is_same_v<OpTy, AllReduceStartOp>)
    y = allReduce(r.b, r.loc, op.getOperand(), op.getKind(), groups);
  auto combine = [&](Value value) -> Value {
    return allReduce(r.b, r.loc, value, CollectiveReduction::Sum, groups);
  };
  context.setTangent(0, extremeTangent(r, op.getOperand(),
                                       context.getTangent(0), y, combine));
  return success();
}

template <typename OpTy>
static LogicalResult jvpReduceScatter(OpTy op, JvpContext &context) {
  if (op.getKind() == CollectiveReduction::Sum ||
      op.getKind() == CollectiveReduction::Mean)
    return jvpLinear(op, context);
  RuleBuilder r(context);
  Groups groups = groupsOf(op);
  Value y = op.getResult();
  if constexpr (std::is_same_v<OpTy, ReduceScatterStartOp>)
    y = r.b.create<ReduceScatterOp>(r.loc, op.getOperand(), op.getKindAttr(),
                                    op.getDimensionAttr(), groups.ranks,
                                    groups.size);
  Value everywhere = r.b.create<AllGatherOp>(r.loc, y, op.getDimensionAttr(),
                                             groups.ranks, groups.size);
  auto combine = [&](Value value) -> Value {
    return r.b.create<ReduceScatterOp>(
        r.loc, value,
        CollectiveReductionAttr::get(r.b.getContext(),
                                     CollectiveReduction::Sum),
        op.getDimensionAttr(), groups.ranks, groups.size);
  };
  context.setTangent(0, extremeTangent(r, op.getOperand(),
                                       context.getTangent(0), everywhere,
                                       combine));
  return success();
}

/// The tangent of a pending exchange is either another pending exchange
/// (a linear start op's rule started one), completed by a wait of its own,
/// or a value computed synchronously, passed through.
static LogicalResult jvpCollectiveWait(CollectiveWaitOp op,
                                       JvpContext &context) {
  Value pending = context.getTangent(0);
  if (!pending)
    return success();
  Operation *start = pending.getDefiningOp();
  if (!isa_and_nonnull<AllReduceStartOp, AllGatherStartOp,
                       ReduceScatterStartOp>(start)) {
    context.setTangent(0, pending);
    return success();
  }
  context.setTangent(0, context.getBuilder().create<CollectiveWaitOp>(
                            context.getLoc(), pending,
                            start->getOperand(0)));
  return success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

namespace {
template <typename OpTy, LogicalResult (*Fn)(OpTy, JvpContext &)>
LogicalResult applyTyped(Operation *op, JvpContext &context) {
  return Fn(cast<OpTy>(op), context);
}

class RuleTable {
public:
  RuleTable() {
    // Ops without a derivative, by definition (as in the VJP table).
    noDerivative<ConstantOp, IotaOp, CompareOp, FloorOp, CeilOp, RoundOp,
                 SignOp, ArgMaxOp, ArgMinOp, NotOp, BitcastOp, AndOp, OrOp,
                 XorOp, ShiftLeftOp, ShiftRightOp, RngBitsOp, RankOp>();
    linear<AddOp, SubOp, NegOp, SelectOp, CastOp, BroadcastInDimOp,
           ReshapeOp, TransposeOp, SliceOp, ConcatOp, ReverseOp, PadOp,
           ReduceSumOp, ReduceMeanOp, CumsumOp, GatherOp, ScatterAddOp,
           DynamicSliceOp, DynamicUpdateSliceOp, AllGatherOp,
           CollectiveBroadcastOp, AllToAllOp, CollectivePermuteOp,
           AllGatherStartOp>();
    bilinear<MulOp, MatmulOp, ConvOp>();
    diagonal<DivOp, MaxOp, MinOp, PowOp, RemOp, AbsOp, ReluOp, ExpOp, LogOp,
             SqrtOp, RsqrtOp, TanhOp, SigmoidOp, SinOp, CosOp, ErfOp, TanOp,
             AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp,
             AtanhOp>();
    rule<ReduceMaxOp, jvpReduceMax>();
    rule<SortOp, jvpSort>();
    rule<ReduceWindowOp, jvpReduceWindow>();
    rule<ReduceWindowMaxGradOp, jvpReduceWindowMaxGrad>();
    rule<AttentionOp, jvpAttention>();
    rule<AllReduceOp, jvpAllReduce<AllReduceOp>>();
    rule<AllReduceStartOp, jvpAllReduce<AllReduceStartOp>>();
    rule<ReduceScatterOp, jvpReduceScatter<ReduceScatterOp>>();
    rule<ReduceScatterStartOp, jvpReduceScatter<ReduceScatterStartOp>>();
    rule<CollectiveWaitOp, jvpCollectiveWait>();
    rule<CondOp, tangentsOfCond>();
    rule<ForOp, tangentsOfFor>();
    rule<WhileOp, tangentsOfWhile>();
  }

  const JvpRule *lookup(TypeID id) const {
    auto it = rules.find(id);
    return it == rules.end() ? nullptr : &it->second;
  }

private:
  template <typename OpTy, LogicalResult (*Fn)(OpTy, JvpContext &)>
  void rule() {
    rules[TypeID::get<OpTy>()] = JvpRule{true, &applyTyped<OpTy, Fn>};
  }
  template <typename... OpTys>
  void noDerivative() {
    (rules.insert({TypeID::get<OpTys>(), JvpRule{false, nullptr}}), ...);
  }
  template <typename... OpTys>
  void linear() {
    (rules.insert({TypeID::get<OpTys>(), JvpRule{true, &jvpLinear}}), ...);
  }
  template <typename... OpTys>
  void bilinear() {
    (rules.insert({TypeID::get<OpTys>(), JvpRule{true, &jvpBilinear}}), ...);
  }
  template <typename... OpTys>
  void diagonal() {
    (rules.insert({TypeID::get<OpTys>(), JvpRule{true, &jvpDiagonal}}), ...);
  }

  llvm::DenseMap<TypeID, JvpRule> rules;
};
} // namespace

static const JvpRule *lookupByName(OperationName name) {
  static const RuleTable table;
  return name.isRegistered() ? table.lookup(name.getTypeID()) : nullptr;
}

const JvpRule *autodiff::lookupJvpRule(Operation *op) {
  return lookupByName(op->getName());
}

bool mlir::kiln::hasJvpRule(OperationName name) {
  return lookupByName(name) != nullptr;
}
