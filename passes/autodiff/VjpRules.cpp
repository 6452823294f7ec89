//===- VjpRules.cpp - The vector-Jacobian product of every kiln op --------===//
//
// One rule per op, and the table that maps op types to rules. A rule reads
// the adjoints of its op's results (`g` below; `y` is the forward result),
// and emits kiln ops computing the gradient of each operand that needs one.
// The forward values it refers to are the op's own operands and results,
// so the rule does not care whether it runs in the function body or inside
// a control-flow region (the control-flow rules turn such references into
// region inputs afterwards).
//
// Conventions where the derivative is not unique:
//  - max/min and reduce_max split the gradient evenly between tied
//    operands (elements): each of k tied maxima gets g / k. NaN inputs get
//    no gradient from max/min, and make reduce_max's gradient NaN.
//  - abs and relu have derivative 0 at 0.
//  - pow(a, b): d/da = b a^(b-1), taken as 0 where b == 0 (so that 0 * inf
//    never appears at a == 0); d/db = a^b log(a), taken as 0 where a == 0
//    and NaN where a < 0 (log of a negative number).
//  - dynamic_slice / dynamic_update_slice: the gradient goes to the rows the
//    forward op read or wrote, after the same clamping of the index.
//  - cast: float-to-float casts pass the gradient through (cast back to the
//    operand's type); casts to or from integers and i1 carry no gradient.
//  - constant, iota and compare carry no gradient by definition; the table
//    says so explicitly, so that they are never mistaken for unsupported
//    ops. floor, ceil, round and sign are piecewise constant: derivative 0
//    (also taken at their jumps), so they too carry no gradient. argmax
//    and argmin have integer results, and the bitwise ops integer
//    operands; they are listed the same way.
//  - rem(x, y) on floats: d/dx = 1, d/dy = -trunc(x / y) (also at the
//    jumps of trunc).
//  - the collectives' rules are in CollectiveRules.cpp (the start forms
//    differentiate as their synchronous ops); kiln.rank is an integer and
//    carries no gradient.
//  - the stack ops (stack_empty/push/read) have no rule: only derived
//    gradients of kiln.while contain them, and second derivatives through
//    a while are not supported.
//  - reduce_window with kind = max routes each window's gradient to the
//    first of its tied maxima (kiln.reduce_window_max_grad), unlike
//    reduce_max, which splits it; that op has no rule itself, so second
//    derivatives of max pooling are reported as unsupported.
//
// gather's gradient is kiln.scatter_add of the cotangent rows into a zero
// table: O(indices * row_size) additions besides the table's zeros (which
// kiln-sparse-updates removes where an SGD step adds the gradient into
// its table), and scatter_add's gradient is a gather of the cotangent.
//
//===----------------------------------------------------------------------===//

#include "Differentiator.h"
#include "RuleBuilder.h"
#include "Rules.h"

#include "kiln/Passes/Autodiff.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;


//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

static LogicalResult vjpAdd(AddOp op, VjpContext &context) {
  Value g = context.getResultAdjoint(0);
  context.addGradient(0, g);
  context.addGradient(1, g);
  return success();
}

static LogicalResult vjpSub(SubOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  context.addGradient(0, g);
  if (context.needsGradient(1))
    context.addGradient(1, r.neg(g));
  return success();
}

static LogicalResult vjpMul(MulOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  if (context.needsGradient(0))
    context.addGradient(0, r.mul(g, op.getRhs()));
  if (context.needsGradient(1))
    context.addGradient(1, r.mul(g, op.getLhs()));
  return success();
}

/// d(a/b) = g/b, -g*(a/b)/b: the second form reuses the quotient.
static LogicalResult vjpDiv(DivOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  if (context.needsGradient(0))
    context.addGradient(0, r.div(g, op.getRhs()));
  if (context.needsGradient(1))
    context.addGradient(1,
                        r.neg(r.div(r.mul(g, op.getResult()), op.getRhs())));
  return success();
}

/// The share of the gradient that goes to the operand that `wins` (1 where
/// it wins, 1/2 where both tie, 0 where it loses or a NaN is involved).
static Value winnerShare(RuleBuilder &r, Value wins, Value ties, Value g) {
  Value zero = r.zeros(g.getType());
  Value half = r.mul(g, r.splatLike(g, 0.5));
  return r.select(wins, g, r.select(ties, half, zero));
}

/// max and min: the gradient goes to the operand that was chosen.
template <typename OpTy>
static LogicalResult vjpMaxMin(OpTy op, VjpContext &context) {
  constexpr bool isMax = std::is_same_v<OpTy, MaxOp>;
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  Value lhs = op.getLhs(), rhs = op.getRhs();
  CompareDirection wins = isMax ? CompareDirection::gt : CompareDirection::lt;
  Value ties = r.cmp(CompareDirection::eq, lhs, rhs);
  if (context.needsGradient(0))
    context.addGradient(0, winnerShare(r, r.cmp(wins, lhs, rhs), ties, g));
  if (context.needsGradient(1))
    context.addGradient(1, winnerShare(r, r.cmp(wins, rhs, lhs), ties, g));
  return success();
}

/// y = a^b: dy/da = b * a^(b-1) (0 where b == 0, so that 0 * inf never
/// appears at a == 0), dy/db = y * log(a) (0 where a == 0).
static LogicalResult vjpPow(PowOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  Value a = op.getLhs(), b = op.getRhs();
  if (context.needsGradient(0)) {
    Value one = r.splatLike(b, 1.0);
    Value slope = r.mul(b, r.b.create<PowOp>(r.loc, a, r.sub(b, one)));
    Value bIsZero = r.cmp(CompareDirection::eq, b, r.zeros(b.getType()));
    slope = r.select(bIsZero, r.zeros(b.getType()), slope);
    context.addGradient(0, r.mul(g, slope));
  }
  if (context.needsGradient(1)) {
    Value aIsZero = r.cmp(CompareDirection::eq, a, r.zeros(a.getType()));
    Value safeA = r.select(aIsZero, r.splatLike(a, 1.0), a);
    Value logA = r.b.create<LogOp>(r.loc, safeA);
    context.addGradient(1, r.mul(g, r.mul(op.getResult(), logA)));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

static LogicalResult vjpNeg(NegOp op, VjpContext &context) {
  RuleBuilder r(context);
  context.addGradient(0, r.neg(context.getResultAdjoint(0)));
  return success();
}

/// sign(x) * g, with sign(0) = 0.
static LogicalResult vjpAbs(AbsOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0), x = op.getOperand();
  Value zero = r.zeros(x.getType());
  Value positive = r.cmp(CompareDirection::gt, x, zero);
  Value negative = r.cmp(CompareDirection::lt, x, zero);
  context.addGradient(
      0, r.select(positive, g, r.select(negative, r.neg(g), zero)));
  return success();
}

static LogicalResult vjpRelu(ReluOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0), x = op.getOperand();
  Value zero = r.zeros(x.getType());
  context.addGradient(0, r.select(r.cmp(CompareDirection::gt, x, zero), g, zero));
  return success();
}

static LogicalResult vjpExp(ExpOp op, VjpContext &context) {
  RuleBuilder r(context);
  context.addGradient(0, r.mul(context.getResultAdjoint(0), op.getResult()));
  return success();
}

static LogicalResult vjpLog(LogOp op, VjpContext &context) {
  RuleBuilder r(context);
  context.addGradient(0, r.div(context.getResultAdjoint(0), op.getOperand()));
  return success();
}

/// d sqrt(x) = 1 / (2 sqrt(x)).
static LogicalResult vjpSqrt(SqrtOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value y = op.getResult();
  context.addGradient(0, r.div(context.getResultAdjoint(0), r.add(y, y)));
  return success();
}

/// d x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3.
static LogicalResult vjpRsqrt(RsqrtOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value y = op.getResult();
  Value cube = r.mul(r.mul(y, y), y);
  Value slope = r.mul(cube, r.splatLike(y, -0.5));
  context.addGradient(0, r.mul(context.getResultAdjoint(0), slope));
  return success();
}

/// d tanh(x) = 1 - tanh(x)^2.
static LogicalResult vjpTanh(TanhOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value y = op.getResult();
  Value slope = r.sub(r.splatLike(y, 1.0), r.mul(y, y));
  context.addGradient(0, r.mul(context.getResultAdjoint(0), slope));
  return success();
}

/// d sigmoid(x) = sigmoid(x) (1 - sigmoid(x)).
static LogicalResult vjpSigmoid(SigmoidOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value y = op.getResult();
  Value slope = r.mul(y, r.sub(r.splatLike(y, 1.0), y));
  context.addGradient(0, r.mul(context.getResultAdjoint(0), slope));
  return success();
}

static LogicalResult vjpSin(SinOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value cos = r.b.create<CosOp>(r.loc, op.getOperand());
  context.addGradient(0, r.mul(context.getResultAdjoint(0), cos));
  return success();
}

static LogicalResult vjpCos(CosOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value sin = r.b.create<SinOp>(r.loc, op.getOperand());
  context.addGradient(0, r.neg(r.mul(context.getResultAdjoint(0), sin)));
  return success();
}

/// d erf(x) = 2/sqrt(pi) exp(-x^2).
static LogicalResult vjpErf(ErfOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value x = op.getOperand();
  Value gauss = r.b.create<ExpOp>(r.loc, r.neg(r.mul(x, x)));
  Value slope = r.mul(gauss, r.splatLike(x, 1.1283791670955126));
  context.addGradient(0, r.mul(context.getResultAdjoint(0), slope));
  return success();
}

/// d tan(x) = 1 + tan(x)^2.
static LogicalResult vjpTan(TanOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value y = op.getResult();
  Value slope = r.add(r.splatLike(y, 1.0), r.mul(y, y));
  context.addGradient(0, r.mul(context.getResultAdjoint(0), slope));
  return success();
}

/// 1 - x^2 as (1 - x)(1 + x), which keeps its accuracy near |x| = 1.
static Value oneMinusSquare(RuleBuilder &r, Value x) {
  Value one = r.splatLike(x, 1.0);
  return r.mul(r.sub(one, x), r.add(one, x));
}

/// d asin(x) = 1 / sqrt(1 - x^2); acos is its negation.
static LogicalResult vjpAsin(AsinOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value root = r.b.create<SqrtOp>(r.loc, oneMinusSquare(r, op.getOperand()));
  context.addGradient(0, r.div(context.getResultAdjoint(0), root));
  return success();
}

static LogicalResult vjpAcos(AcosOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value root = r.b.create<SqrtOp>(r.loc, oneMinusSquare(r, op.getOperand()));
  context.addGradient(0, r.neg(r.div(context.getResultAdjoint(0), root)));
  return success();
}

/// d atan(x) = 1 / (1 + x^2).
static LogicalResult vjpAtan(AtanOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value x = op.getOperand();
  Value denominator = r.add(r.splatLike(x, 1.0), r.mul(x, x));
  context.addGradient(0, r.div(context.getResultAdjoint(0), denominator));
  return success();
}

static LogicalResult vjpSinh(SinhOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value cosh = r.b.create<CoshOp>(r.loc, op.getOperand());
  context.addGradient(0, r.mul(context.getResultAdjoint(0), cosh));
  return success();
}

static LogicalResult vjpCosh(CoshOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value sinh = r.b.create<SinhOp>(r.loc, op.getOperand());
  context.addGradient(0, r.mul(context.getResultAdjoint(0), sinh));
  return success();
}

/// d asinh(x) = 1 / sqrt(x^2 + 1).
static LogicalResult vjpAsinh(AsinhOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value x = op.getOperand();
  Value root =
      r.b.create<SqrtOp>(r.loc, r.add(r.mul(x, x), r.splatLike(x, 1.0)));
  context.addGradient(0, r.div(context.getResultAdjoint(0), root));
  return success();
}

/// d acosh(x) = 1 / sqrt(x^2 - 1), with x^2 - 1 as (x - 1)(x + 1).
static LogicalResult vjpAcosh(AcoshOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value x = op.getOperand();
  Value one = r.splatLike(x, 1.0);
  Value root =
      r.b.create<SqrtOp>(r.loc, r.mul(r.sub(x, one), r.add(x, one)));
  context.addGradient(0, r.div(context.getResultAdjoint(0), root));
  return success();
}

/// d atanh(x) = 1 / (1 - x^2).
static LogicalResult vjpAtanh(AtanhOp op, VjpContext &context) {
  RuleBuilder r(context);
  context.addGradient(
      0, r.div(context.getResultAdjoint(0), oneMinusSquare(r, op.getOperand())));
  return success();
}

/// Float rem(x, y) = x - trunc(x / y) * y: d/dx = 1, d/dy = -trunc(x / y),
/// with trunc(q) as q < 0 ? ceil(q) : floor(q). Integer rem has no varied
/// operands (integers carry no gradient), so only floats get here.
static LogicalResult vjpRem(RemOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  if (context.needsGradient(0))
    context.addGradient(0, g);
  if (context.needsGradient(1)) {
    Value q = r.div(op.getLhs(), op.getRhs());
    Value negative = r.cmp(CompareDirection::lt, q, r.zeros(q.getType()));
    Value truncated = r.select(negative, r.b.create<CeilOp>(r.loc, q),
                               r.b.create<FloorOp>(r.loc, q));
    context.addGradient(1, r.neg(r.mul(g, truncated)));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Selection and conversion
//===----------------------------------------------------------------------===//

/// The predicate is i1 and takes no gradient; each value gets g where it
/// was selected and 0 elsewhere (works for rank-0 predicates too).
static LogicalResult vjpSelect(SelectOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  Value pred = op.getPred();
  if (context.needsGradient(1))
    context.addGradient(1, r.select(pred, g, r.zeros(g.getType())));
  if (context.needsGradient(2))
    context.addGradient(2, r.select(pred, r.zeros(g.getType()), g));
  return success();
}

/// Float-to-float casts pass the gradient back in the operand's precision.
/// A cast from an integer or i1 has no varied operand, and a cast to one
/// has no varied result, so neither ever reaches the float case.
static LogicalResult vjpCast(CastOp op, VjpContext &context) {
  if (!isDifferentiableType(op.getOperand().getType()) ||
      !isDifferentiableType(op.getType()))
    return success();
  RuleBuilder r(context);
  context.addGradient(
      0, r.cast(op.getOperand().getType(), context.getResultAdjoint(0)));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

/// Sums g over the result dimensions the operand was repeated along (the
/// new ones and those where a size-1 operand dimension was stretched), then
/// reshapes to restore the operand's size-1 dimensions.
static LogicalResult vjpBroadcastInDim(BroadcastInDimOp op,
                                       VjpContext &context) {
  RuleBuilder r(context);
  RankedTensorType operandType = op.getOperand().getType();
  RankedTensorType resultType = op.getType();
  ArrayRef<int64_t> dims = op.getDims();
  SmallVector<bool> summed(resultType.getRank(), true);
  for (auto [i, dim] : llvm::enumerate(dims))
    summed[dim] = operandType.getDimSize(i) == 1 && resultType.getDimSize(dim) != 1;
  SmallVector<int64_t> sumDims;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    if (summed[d])
      sumDims.push_back(d);
  Value sum = r.reduceSum(context.getResultAdjoint(0), sumDims);
  context.addGradient(0, r.reshape(operandType, sum));
  return success();
}

static LogicalResult vjpReshape(ReshapeOp op, VjpContext &context) {
  RuleBuilder r(context);
  context.addGradient(
      0, r.reshape(op.getOperand().getType(), context.getResultAdjoint(0)));
  return success();
}

/// Transposes back with the inverse permutation.
static LogicalResult vjpTranspose(TransposeOp op, VjpContext &context) {
  RuleBuilder r(context);
  ArrayRef<int64_t> permutation = op.getPermutation();
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    inverse[p] = i;
  context.addGradient(0, r.transpose(context.getResultAdjoint(0), inverse));
  return success();
}

/// Places g where the slice read, zeros elsewhere. Dimension by dimension:
/// a stride k > 1 is undone by pairing each element with k-1 zeros
/// (reshape to [.., n, 1, ..], concat zeros to [.., n, k, ..], reshape to
/// [.., n*k, ..] and drop the trailing k-1), then zeros are concatenated
/// before `start` and after the last element read.
static LogicalResult vjpSlice(SliceOp op, VjpContext &context) {
  RuleBuilder r(context);
  RankedTensorType operandType = op.getOperand().getType();
  Value g = context.getResultAdjoint(0);
  if (tensorType(g).getNumElements() == 0) {
    context.addGradient(0, r.zeros(operandType));
    return success();
  }
  ArrayRef<int64_t> start = op.getStart(), stride = op.getStride();
  Value current = g;
  for (int64_t d = 0; d < operandType.getRank(); ++d) {
    RankedTensorType type = tensorType(current);
    int64_t n = type.getDimSize(d), k = stride[d];
    if (k > 1 && n > 1) {
      SmallVector<int64_t> split(type.getShape());
      split.insert(split.begin() + d + 1, 1);
      Value column = r.reshape(withShape(type, split), current);
      split[d + 1] = k - 1;
      Value spread = r.concat({column, r.zeros(withShape(type, split))}, d + 1);
      SmallVector<int64_t> merged(type.getShape());
      merged[d] = n * k;
      Value flat = r.reshape(withShape(type, merged), spread);
      SmallVector<int64_t> lo(type.getRank(), 0), hi(merged),
          ones(type.getRank(), 1);
      hi[d] = (n - 1) * k + 1;
      current = r.slice(flat, lo, hi, ones);
      type = tensorType(current);
    }
    int64_t covered = type.getDimSize(d);
    int64_t before = start[d];
    int64_t after = operandType.getDimSize(d) - before - covered;
    SmallVector<Value> pieces;
    SmallVector<int64_t> padShape(type.getShape());
    if (before > 0) {
      padShape[d] = before;
      pieces.push_back(r.zeros(withShape(type, padShape)));
    }
    pieces.push_back(current);
    if (after > 0) {
      padShape[d] = after;
      pieces.push_back(r.zeros(withShape(type, padShape)));
    }
    current = r.concat(pieces, d);
  }
  context.addGradient(0, current);
  return success();
}

/// Each input gets the slice of g it was copied to.
static LogicalResult vjpConcat(ConcatOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  RankedTensorType type = op.getType();
  int64_t dim = op.getDimension();
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    int64_t size = tensorType(input).getDimSize(dim);
    if (context.needsGradient(i)) {
      SmallVector<int64_t> lo(type.getRank(), 0), hi(type.getShape()),
          ones(type.getRank(), 1);
      lo[dim] = offset;
      hi[dim] = offset + size;
      context.addGradient(i, r.slice(g, lo, hi, ones));
    }
    offset += size;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, contractions, gathers, dynamic slices
//===----------------------------------------------------------------------===//

static LogicalResult vjpReduceSum(ReduceSumOp op, VjpContext &context) {
  RuleBuilder r(context);
  auto operandType = cast<RankedTensorType>(op.getOperand().getType());
  context.addGradient(0, unreduce(r, context.getResultAdjoint(0), operandType,
                                  op.getDims()));
  return success();
}

static LogicalResult vjpReduceMean(ReduceMeanOp op, VjpContext &context) {
  RuleBuilder r(context);
  auto operandType = cast<RankedTensorType>(op.getOperand().getType());
  int64_t count = 1;
  for (int64_t dim : op.getDims())
    count *= operandType.getDimSize(dim);
  if (count == 0) {
    context.addGradient(0, r.zeros(operandType));
    return success();
  }
  Value g = context.getResultAdjoint(0);
  Value share = r.div(g, r.splatLike(g, static_cast<double>(count)));
  context.addGradient(0, unreduce(r, share, operandType, op.getDims()));
  return success();
}

/// The gradient goes to the elements equal to the maximum, split evenly
/// between ties: mask = (x == broadcast(y)), g_x = mask * broadcast(g /
/// sum(mask)).
static LogicalResult vjpReduceMax(ReduceMaxOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value x = op.getOperand();
  auto operandType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> dims = op.getDims();
  Value g = context.getResultAdjoint(0);
  Value maxima = unreduce(r, op.getResult(), operandType, dims);
  Value mask = r.cast(operandType, r.cmp(CompareDirection::eq, x, maxima));
  Value count = r.reduceSum(mask, dims);
  Value share = unreduce(r, r.div(g, count), operandType, dims);
  context.addGradient(0, r.mul(mask, share));
  return success();
}

/// The cotangent summed the other way: result[k] collects x[j] for the j
/// on one side of k (strictly with `exclusive`), so x[j] collects the
/// cotangents of the k on the other side, with the same strictness.
static LogicalResult vjpCumsum(CumsumOp op, VjpContext &context) {
  RuleBuilder r(context);
  context.addGradient(0, r.b.create<CumsumOp>(
                             r.loc, context.getResultAdjoint(0),
                             static_cast<int64_t>(op.getDim()),
                             op.getExclusive(), !op.getReverse()));
  return success();
}

/// C = A B: dA = dC B^T, dB = A^T dC (batched: transpose the last two dims).
/// A product of half-precision operands widened to f32 (result_element_type)
/// has an f32 cotangent; it is rounded to the operands' type, so the
/// gradient products are half-precision ones too (accumulating in f32), as
/// mixed-precision training computes them.
static LogicalResult vjpMatmul(MatmulOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  RankedTensorType operandType = op.getLhs().getType();
  if (op.getResultElementType())
    g = r.cast(RankedTensorType::get(op.getType().getShape(),
                                     operandType.getElementType()),
               g);
  SmallVector<int64_t> swap =
      op.getType().getRank() == 2 ? SmallVector<int64_t>{1, 0}
                                  : SmallVector<int64_t>{0, 2, 1};
  if (context.needsGradient(0))
    context.addGradient(0, r.matmul(g, r.transpose(op.getRhs(), swap)));
  if (context.needsGradient(1))
    context.addGradient(1, r.matmul(r.transpose(op.getLhs(), swap), g));
  return success();
}

/// The gradients of y = conv(x, w) (see kiln.conv; P is the padded,
/// input-dilated size of a spatial dim, W = (K - 1) * rhs_dilation + 1 the
/// dilated kernel, G^ = (E - 1) * stride + 1 the stride-dilated cotangent).
///
/// Input: each x^[p] received g[e] * w[k] for e * stride + k * rhs_dilation
/// = p, so dx^ is g dilated by the stride (lhs_dilation = stride), padded
/// by W - 1 below, convolved with the kernel reversed in space and its
/// channel dims swapped within each group ([G, Og, Cg] -> [G, Cg, Og]),
/// with rhs_dilation as before; dx is every lhs_dilation-th element of dx^
/// from padding_low on. Where padding_low <= W - 1 and the high side
/// allows it, that selection is the convolution's own stride and padding;
/// otherwise the full dx^ is computed and sliced.
///
/// Weight: dw[o, c, k] = sum over n, e of g[n, o, e] * x^[n, c, e * stride
/// + k * rhs_dilation]: a convolution of x (channels as batch, batch as
/// channels; lhs_dilation and padding kept) with g (batch as channels) as
/// the kernel, with strides = rhs_dilation and rhs_dilation = strides,
/// groups kept.
/// It may produce more than K offsets (the high padding is trimmed only to
/// zero); the first K are the gradient.
/// kiln.attention: kiln.attention_grad, which recomputes the scores from
/// the saved lse instead of keeping the softmax (FlashAttention-2's
/// backward). The mask and lse get no gradient.
static LogicalResult vjpAttention(AttentionOp op, VjpContext &context) {
  if (op.getMask() && context.needsGradient(3))
    return op.emitOpError(
        "cannot differentiate with respect to the mask: its gradient is the "
        "score matrix the fused attention never forms (write the attention "
        "as softmax(q k^T * scale + mask) v to differentiate the mask)");
  if (context.getResultAdjoint(1))
    return op.emitOpError("cannot differentiate through its lse result");
  if (!context.getResultAdjoint(0))
    return success();
  auto grad = context.getBuilder().create<AttentionGradOp>(
      context.getLoc(), op.getQuery(), op.getKey(), op.getValue(),
      op.getResult(), op.getLse(), context.getResultAdjoint(0), op.getMask(),
      op.getScaleAttr(), op.getCausalAttr());
  for (unsigned i = 0; i < 3; ++i)
    if (context.needsGradient(i))
      context.addGradient(i, grad->getResult(i));
  return success();
}

static LogicalResult vjpConv(ConvOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value x = op.getInput(), w = op.getWeight();
  Value g = context.getResultAdjoint(0);
  RankedTensorType xType = op.getInput().getType();
  RankedTensorType wType = op.getWeight().getType();
  RankedTensorType yType = op.getType();
  int64_t rank = xType.getRank(), spatial = rank - 2;
  int64_t groups = op.getGroups();
  int64_t batch = xType.getDimSize(0), channels = xType.getDimSize(1);
  int64_t outChannels = wType.getDimSize(0);
  int64_t groupChannels = channels / groups,
          groupOutChannels = outChannels / groups;
  ArrayRef<int64_t> strides = op.getStrides(), low = op.getPaddingLow(),
                    high = op.getPaddingHigh(),
                    lhsDilation = op.getLhsDilation(),
                    rhsDilation = op.getRhsDilation();
  // Nothing reaches the output, or the output is empty: zero gradients.
  if (xType.getNumElements() == 0 || wType.getNumElements() == 0 ||
      yType.getNumElements() == 0) {
    if (context.needsGradient(0))
      context.addGradient(0, r.zeros(xType));
    if (context.needsGradient(1))
      context.addGradient(1, r.zeros(wType));
    return success();
  }
  auto shapeWith = [](ArrayRef<int64_t> front, ArrayRef<int64_t> rest) {
    SmallVector<int64_t> shape(front);
    llvm::append_range(shape, rest);
    return shape;
  };
  /// [0, 1, 2] permuted to `front`, then the spatial dims in order.
  auto permutation = [&](ArrayRef<int64_t> front) {
    SmallVector<int64_t> perm(front);
    for (int64_t d = 0; d < spatial; ++d)
      perm.push_back(static_cast<int64_t>(front.size()) + d);
    return perm;
  };
  ArrayRef<int64_t> inSizes = xType.getShape().drop_front(2);
  ArrayRef<int64_t> kernelSizes = wType.getShape().drop_front(2);
  ArrayRef<int64_t> outSizes = yType.getShape().drop_front(2);
  SmallVector<int64_t> spatialDims;
  for (int64_t d = 2; d < rank; ++d)
    spatialDims.push_back(d);

  if (context.needsGradient(0)) {
    // [O, Cg, K] -> [G, Og, Cg, K] -> [G, Cg, Og, K] -> [C, Og, K], reversed.
    Value kernel = r.reshape(
        withShape(wType, shapeWith({groups, groupOutChannels, groupChannels},
                                   kernelSizes)),
        w);
    kernel = r.transpose(kernel, permutation({0, 2, 1}));
    kernel = r.reshape(
        withShape(wType, shapeWith({channels, groupOutChannels}, kernelSizes)),
        kernel);
    kernel = r.reverse(kernel, spatialDims);
    SmallVector<int64_t> convStrides, convLow, convHigh, sliceStart,
        sliceLimit, sliceStride;
    bool sliced = false;
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t window = (kernelSizes[d] - 1) * rhsDilation[d] + 1;
      int64_t spread = (outSizes[d] - 1) * strides[d] + 1;
      int64_t padded =
          (inSizes[d] - 1) * lhsDilation[d] + 1 + low[d] + high[d];
      int64_t directLow = window - 1 - low[d];
      int64_t directHigh =
          (inSizes[d] - 1) * lhsDilation[d] + window - spread - directLow;
      if (directLow >= 0 && directHigh >= 0) {
        convStrides.push_back(lhsDilation[d]);
        convLow.push_back(directLow);
        convHigh.push_back(directHigh);
        sliceStart.push_back(0);
        sliceLimit.push_back(inSizes[d]);
        sliceStride.push_back(1);
      } else {
        sliced = true;
        convStrides.push_back(1);
        convLow.push_back(window - 1);
        convHigh.push_back(padded - spread);
        sliceStart.push_back(low[d]);
        sliceLimit.push_back(low[d] + (inSizes[d] - 1) * lhsDilation[d] + 1);
        sliceStride.push_back(lhsDilation[d]);
      }
    }
    Value dx = r.conv(g, kernel, convStrides, convLow, convHigh, strides,
                      rhsDilation, groups);
    if (sliced) {
      SmallVector<int64_t> start{0, 0}, limit{batch, channels},
          stride{1, 1};
      llvm::append_range(start, sliceStart);
      llvm::append_range(limit, sliceLimit);
      llvm::append_range(stride, sliceStride);
      dx = r.slice(dx, start, limit, stride);
    }
    context.addGradient(0, dx);
  }

  if (context.needsGradient(1)) {
    // x: [N, C, D] -> [N, G, Cg, D] -> [Cg, G, N, D] -> [Cg, G * N, D].
    Value input = r.reshape(
        withShape(xType, shapeWith({batch, groups, groupChannels}, inSizes)),
        x);
    input = r.transpose(input, permutation({2, 1, 0}));
    input = r.reshape(
        withShape(xType, shapeWith({groupChannels, groups * batch}, inSizes)),
        input);
    // g: [N, O, E] -> [N, G, Og, E] -> [G, Og, N, E] -> [O, N, E].
    Value kernel = r.reshape(
        withShape(yType,
                  shapeWith({batch, groups, groupOutChannels}, outSizes)),
        g);
    kernel = r.transpose(kernel, permutation({1, 2, 0}));
    kernel = r.reshape(
        withShape(yType, shapeWith({outChannels, batch}, outSizes)), kernel);
    SmallVector<int64_t> convHigh;
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t spread = (outSizes[d] - 1) * strides[d] + 1;
      int64_t needed = (kernelSizes[d] - 1) * rhsDilation[d] + spread;
      int64_t have = (inSizes[d] - 1) * lhsDilation[d] + 1 + low[d];
      convHigh.push_back(std::max<int64_t>(0, needed - have));
    }
    Value dw = r.conv(input, kernel, rhsDilation, low, convHigh, lhsDilation,
                      strides, groups);
    // [Cg, O, K'] with K' >= K: keep the first K offsets, then [O, Cg, K].
    RankedTensorType dwType = cast<RankedTensorType>(dw.getType());
    if (dwType.getShape().drop_front(2) != kernelSizes) {
      SmallVector<int64_t> start(rank, 0), limit{groupChannels, outChannels},
          stride(rank, 1);
      llvm::append_range(limit, kernelSizes);
      dw = r.slice(dw, start, limit, stride);
    }
    context.addGradient(1, r.transpose(dw, permutation({1, 0})));
  }
  return success();
}

/// Reversing is its own inverse.
static LogicalResult vjpReverse(ReverseOp op, VjpContext &context) {
  RuleBuilder r(context);
  context.addGradient(0,
                      r.reverse(context.getResultAdjoint(0), op.getDims()));
  return success();
}

/// The cotangent's rows scatter-added into a zero table at the (clamped)
/// indices: work and memory traffic of the rows read, not of the table.
static LogicalResult vjpGather(GatherOp op, VjpContext &context) {
  if (!context.needsGradient(0))
    return success();
  RuleBuilder r(context);
  RankedTensorType tableType = op.getTable().getType();
  context.addGradient(0, r.b.create<ScatterAddOp>(
                             r.loc, r.zeros(tableType), op.getIndices(),
                             context.getResultAdjoint(0)));
  return success();
}

/// The values' cotangent goes back to where each value came from: the
/// element at coordinates c gets g at c with the sorted dim's coordinate
/// replaced by the index, one kiln.scatter_add of every element at its
/// flat source position (the indices are a permutation per slice, so no
/// position receives two). The indices carry no gradient.
static LogicalResult vjpSort(SortOp op, VjpContext &context) {
  Value g = context.getResultAdjoint(0);
  if (!g || !context.needsGradient(0))
    return success();
  RuleBuilder r(context);
  RankedTensorType type = op.getOperand().getType();
  int64_t count = type.getNumElements();
  auto flatIndexType = RankedTensorType::get({count}, r.b.getI64Type());
  Value source = sortedSourcePositions(r, op);
  auto flatType = RankedTensorType::get({count}, type.getElementType());
  Value scattered = r.b.create<ScatterAddOp>(
      r.loc, r.zeros(flatType), r.reshape(flatIndexType, source),
      r.reshape(flatType, g));
  context.addGradient(0, r.reshape(type, scattered));
  return success();
}

/// The table's rows pass g through; each update row gets the row of g it
/// was added into.
static LogicalResult vjpScatterAdd(ScatterAddOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  if (context.needsGradient(0))
    context.addGradient(0, g);
  if (context.needsGradient(2))
    context.addGradient(2,
                        r.b.create<GatherOp>(r.loc, g, op.getIndices()));
  return success();
}

/// The rows read get g; the others nothing.
static LogicalResult vjpDynamicSlice(DynamicSliceOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value zeros = r.zeros(op.getOperand().getType());
  context.addGradient(0, r.b.create<DynamicUpdateSliceOp>(
                             r.loc, zeros, context.getResultAdjoint(0),
                             op.getIndex()));
  return success();
}

/// The operand gets g except in the overwritten rows; the update gets g's
/// overwritten rows. Both use the forward op's clamped start.
static LogicalResult vjpDynamicUpdateSlice(DynamicUpdateSliceOp op,
                                           VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  RankedTensorType update = op.getUpdate().getType();
  if (context.needsGradient(0))
    context.addGradient(0, r.b.create<DynamicUpdateSliceOp>(
                               r.loc, g, r.zeros(update), op.getIndex()));
  if (context.needsGradient(1))
    context.addGradient(1, r.b.create<DynamicSliceOp>(r.loc, g, op.getIndex(),
                                                      update.getDimSize(0)));
  return success();
}

//===----------------------------------------------------------------------===//
// Padding and windowed reductions
//===----------------------------------------------------------------------===//

/// The operand gets the strided slice of g it was copied to. The padding
/// value gets the sum of g over the padded positions, read through a mask
/// that is the op itself applied to zeros with a padding value of one (so
/// the sum never subtracts the operand's part from the total).
static LogicalResult vjpPad(PadOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  RankedTensorType operandType = op.getOperand().getType();
  int64_t rank = operandType.getRank();
  if (context.needsGradient(0)) {
    SmallVector<int64_t> limit, stride;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = operandType.getDimSize(d), step = op.getInterior()[d] + 1;
      limit.push_back(op.getLow()[d] + (size > 0 ? (size - 1) * step + 1 : 0));
      stride.push_back(step);
    }
    context.addGradient(0, rank == 0 ? g
                                     : r.slice(g, op.getLow(), limit, stride));
  }
  if (context.needsGradient(1)) {
    Value one = r.splatLike(op.getPaddingValue(), 1.0);
    Value mask = r.b.create<PadOp>(r.loc, r.zeros(operandType), one,
                                   op.getLow(), op.getHigh(), op.getInterior());
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < rank; ++d)
      all.push_back(d);
    context.addGradient(1, r.reduceSum(r.mul(g, mask), all));
  }
  return success();
}

/// max: kiln.reduce_window_max_grad routes each window's g to the element
/// it selected. sum: dx[i] is the sum of g over the placements o with
/// o * s - lo + w * d = i for some window offset w. Spreading g out by the
/// strides (kiln.pad with interior s - 1) makes that
/// sum over v of spread[i - E + v * d], E = (W - 1) * d - lo: a
/// reduce_window sum with the same window and dilation, stride 1, padded
/// by E below and so that it has the operand's size above (a negative
/// padding is a slice of the spread cotangent).
static LogicalResult vjpReduceWindow(ReduceWindowOp op, VjpContext &context) {
  RuleBuilder r(context);
  Value g = context.getResultAdjoint(0);
  RankedTensorType operandType = op.getOperand().getType();
  ArrayRef<int64_t> window = op.getWindow(), strides = op.getStrides(),
                    dilations = op.getDilations();
  if (op.getKind() == ReduceWindowKind::Max) {
    context.addGradient(
        0, r.b.create<ReduceWindowMaxGradOp>(
               r.loc, op.getOperand(), g, window, strides, op.getPaddingLow(),
               op.getPaddingHigh(), dilations));
    return success();
  }
  int64_t rank = operandType.getRank();
  if (operandType.getNumElements() == 0 || op.getType().getNumElements() == 0) {
    context.addGradient(0, r.zeros(operandType));
    return success();
  }
  SmallVector<int64_t> interior, zeros(rank, 0), ones(rank, 1);
  SmallVector<int64_t> start, limit, low, high;
  bool needsSlice = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t placements = op.getType().getDimSize(d);
    int64_t spread = (placements - 1) * strides[d] + 1;
    int64_t span = (window[d] - 1) * dilations[d] + 1;
    int64_t below = (window[d] - 1) * dilations[d] - op.getPaddingLow()[d];
    int64_t above = operandType.getDimSize(d) - 1 + span - spread - below;
    int64_t cutBelow = std::max<int64_t>(-below, 0);
    int64_t cutAbove = std::max<int64_t>(-above, 0);
    // Every window lies in the padding: nothing reaches the operand.
    if (cutBelow + cutAbove > spread) {
      context.addGradient(0, r.zeros(operandType));
      return success();
    }
    needsSlice |= cutBelow + cutAbove > 0;
    interior.push_back(strides[d] - 1);
    start.push_back(cutBelow);
    limit.push_back(spread - cutAbove);
    low.push_back(std::max<int64_t>(below, 0));
    high.push_back(std::max<int64_t>(above, 0));
  }
  Value spread = g;
  if (llvm::any_of(interior, [](int64_t i) { return i > 0; }))
    spread = r.b.create<PadOp>(r.loc, g, r.zeros(RankedTensorType::get(
                                             {}, operandType.getElementType())),
                               zeros, zeros, interior);
  if (needsSlice)
    spread = r.slice(spread, start, limit, ones);
  context.addGradient(
      0, r.b.create<ReduceWindowOp>(r.loc, spread, ReduceWindowKind::Sum,
                                    window, ones, low, high, dilations));
  return success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

namespace {
/// Adapts a rule written against the op class to the table's signature.
template <typename OpTy, LogicalResult (*Fn)(OpTy, VjpContext &)>
LogicalResult applyTyped(Operation *op, VjpContext &context) {
  return Fn(cast<OpTy>(op), context);
}

class RuleTable {
public:
  RuleTable() {
    // Ops without a derivative, by definition.
    noGradient<ConstantOp>();
    noGradient<IotaOp>();
    noGradient<CompareOp>();
    // Piecewise constant: the derivative is 0 wherever it exists, so their
    // results are not varied and contribute nothing.
    noGradient<FloorOp>();
    noGradient<CeilOp>();
    noGradient<RoundOp>();
    noGradient<SignOp>();
    // Integer results (indices).
    noGradient<ArgMaxOp>();
    noGradient<ArgMinOp>();
    // Integer and i1 operands only, so never varied; listed so that they
    // are known.
    noGradient<NotOp>();
    noGradient<BitcastOp>();
    noGradient<AndOp>();
    noGradient<OrOp>();
    noGradient<XorOp>();
    noGradient<ShiftLeftOp>();
    noGradient<ShiftRightOp>();
    noGradient<RngBitsOp>();
    // Elementwise.
    rule<AddOp, vjpAdd>();
    rule<SubOp, vjpSub>();
    rule<MulOp, vjpMul>();
    rule<DivOp, vjpDiv>();
    rule<MaxOp, vjpMaxMin<MaxOp>>();
    rule<MinOp, vjpMaxMin<MinOp>>();
    rule<PowOp, vjpPow>();
    rule<NegOp, vjpNeg>();
    rule<AbsOp, vjpAbs>();
    rule<ReluOp, vjpRelu>();
    rule<ExpOp, vjpExp>();
    rule<LogOp, vjpLog>();
    rule<SqrtOp, vjpSqrt>();
    rule<RsqrtOp, vjpRsqrt>();
    rule<TanhOp, vjpTanh>();
    rule<SigmoidOp, vjpSigmoid>();
    rule<SinOp, vjpSin>();
    rule<CosOp, vjpCos>();
    rule<ErfOp, vjpErf>();
    rule<TanOp, vjpTan>();
    rule<AsinOp, vjpAsin>();
    rule<AcosOp, vjpAcos>();
    rule<AtanOp, vjpAtan>();
    rule<SinhOp, vjpSinh>();
    rule<CoshOp, vjpCosh>();
    rule<AsinhOp, vjpAsinh>();
    rule<AcoshOp, vjpAcosh>();
    rule<AtanhOp, vjpAtanh>();
    rule<RemOp, vjpRem>();
    rule<SelectOp, vjpSelect>();
    rule<CastOp, vjpCast>();
    rule<SortOp, vjpSort>();
    // Shapes.
    rule<BroadcastInDimOp, vjpBroadcastInDim>();
    rule<ReshapeOp, vjpReshape>();
    rule<TransposeOp, vjpTranspose>();
    rule<SliceOp, vjpSlice>();
    rule<ConcatOp, vjpConcat>();
    rule<ReverseOp, vjpReverse>();
    rule<PadOp, vjpPad>();
    // Reductions, contractions, gathers.
    rule<ReduceSumOp, vjpReduceSum>();
    rule<ReduceMeanOp, vjpReduceMean>();
    rule<ReduceMaxOp, vjpReduceMax>();
    rule<CumsumOp, vjpCumsum>();
    rule<ReduceWindowOp, vjpReduceWindow>();
    rule<MatmulOp, vjpMatmul>();
    rule<ConvOp, vjpConv>();
    rule<AttentionOp, vjpAttention>();
    rule<GatherOp, vjpGather>();
    rule<ScatterAddOp, vjpScatterAdd>();
    rule<DynamicSliceOp, vjpDynamicSlice>();
    rule<DynamicUpdateSliceOp, vjpDynamicUpdateSlice>();
    // Control flow (ControlFlowRules.cpp).
    rule<CondOp, differentiateCond>();
    rule<ForOp, differentiateFor>();
    rule<WhileOp, differentiateWhile>();
    // Collectives (CollectiveRules.cpp).
    rule<AllReduceOp, differentiateAllReduce<AllReduceOp>>();
    rule<AllGatherOp, differentiateAllGather<AllGatherOp>>();
    rule<ReduceScatterOp, differentiateReduceScatter<ReduceScatterOp>>();
    rule<CollectiveBroadcastOp, differentiateCollectiveBroadcast>();
    rule<AllToAllOp, differentiateAllToAll>();
    rule<CollectivePermuteOp, differentiateCollectivePermute>();
    rule<AllReduceStartOp, differentiateAllReduce<AllReduceStartOp>>();
    rule<AllGatherStartOp, differentiateAllGather<AllGatherStartOp>>();
    rule<ReduceScatterStartOp,
         differentiateReduceScatter<ReduceScatterStartOp>>();
    rule<CollectiveWaitOp, differentiateCollectiveWait>();
    noGradient<RankOp>();
  }

  const VjpRule *lookup(TypeID id) const {
    auto it = rules.find(id);
    return it == rules.end() ? nullptr : &it->second;
  }

private:
  template <typename OpTy, LogicalResult (*Fn)(OpTy, VjpContext &)>
  void rule() {
    rules[TypeID::get<OpTy>()] = VjpRule{true, &applyTyped<OpTy, Fn>};
  }
  template <typename OpTy>
  void noGradient() {
    rules[TypeID::get<OpTy>()] = VjpRule{false, nullptr};
  }

  llvm::DenseMap<TypeID, VjpRule> rules;
};
} // namespace

const VjpRule *autodiff::lookupVjpRule(TypeID typeID) {
  static const RuleTable table;
  return table.lookup(typeID);
}

const VjpRule *autodiff::lookupVjpRule(Operation *op) {
  if (!op->getName().isRegistered())
    return nullptr;
  return lookupVjpRule(op->getName().getTypeID());
}

bool mlir::kiln::hasVjpRule(OperationName name) {
  return name.isRegistered() && lookupVjpRule(name.getTypeID()) != nullptr;
}
