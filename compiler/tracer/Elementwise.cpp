//===- Elementwise.cpp - Arithmetic, math, comparisons, logic, select -----===//
//
// Every binary function follows the same three steps: pick the dtype
// (Promotion.cpp), pick the shape (Broadcasting.cpp), then convert both
// operands to that type and emit one kiln op. The operators are thin
// wrappers that take the source position from their left operand.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

namespace kiln {
namespace detail {

using mlir::kiln::CompareDirection;

mlir::Value binaryValue(TraceState &state, BinaryKind kind, mlir::Value lhs,
                        mlir::Value rhs, SourceLoc loc) {
  mlir::Type type = lhs.getType();
  switch (kind) {
  case BinaryKind::Add:
    return state.create<mlir::kiln::AddOp>(loc, type, lhs, rhs).getResult();
  case BinaryKind::Sub:
    return state.create<mlir::kiln::SubOp>(loc, type, lhs, rhs).getResult();
  case BinaryKind::Mul:
    return state.create<mlir::kiln::MulOp>(loc, type, lhs, rhs).getResult();
  case BinaryKind::Div:
    return state.create<mlir::kiln::DivOp>(loc, type, lhs, rhs).getResult();
  case BinaryKind::Rem:
    return state.create<mlir::kiln::RemOp>(loc, type, lhs, rhs).getResult();
  case BinaryKind::Max:
    return state.create<mlir::kiln::MaxOp>(loc, type, lhs, rhs).getResult();
  case BinaryKind::Min:
    return state.create<mlir::kiln::MinOp>(loc, type, lhs, rhs).getResult();
  case BinaryKind::Pow:
    return state.create<mlir::kiln::PowOp>(loc, type, lhs, rhs).getResult();
  }
  fail(loc, "internal error: unknown binary op");
}

mlir::Value compareValue(TraceState &state, CompareDirection direction,
                         mlir::Value lhs, mlir::Value rhs, SourceLoc loc) {
  mlir::RankedTensorType type = typeOf(lhs);
  mlir::RankedTensorType resultType =
      tensorType(state.getContext(), type.getShape(), DType::I1);
  return state
      .create<mlir::kiln::CompareOp>(loc, resultType, direction, lhs, rhs)
      .getResult();
}

mlir::Value selectValue(TraceState &state, mlir::Value pred,
                        mlir::Value onTrue, mlir::Value onFalse,
                        SourceLoc loc) {
  return state
      .create<mlir::kiln::SelectOp>(loc, onTrue.getType(), pred, onTrue,
                                    onFalse)
      .getResult();
}

/// The dtype and shape two operands are converted to, and their values.
struct Prepared {
  TraceState *state;
  mlir::Value lhs, rhs;
};

/// Promotes and broadcasts `lhs` and `rhs`. `dtypeFor` may adjust the
/// promoted dtype (e.g. to a float) or reject it.
template <typename DTypeFn>
static Prepared prepareBinary(const Operand &lhs, const Operand &rhs,
                              const char *what, SourceLoc loc,
                              DTypeFn dtypeFor) {
  TraceState &state = TraceState::of({&lhs, &rhs}, loc, what);
  DType dtype = dtypeFor(promoteOperands({&lhs, &rhs}));
  Shape shape = broadcastShapes({shapeOf(lhs), shapeOf(rhs)}, what, loc);
  Prepared prepared;
  prepared.state = &state;
  prepared.lhs = materialize(state, lhs, dtype, shape, loc);
  prepared.rhs = materialize(state, rhs, dtype, shape, loc);
  return prepared;
}

/// Rejects bool: kiln has no arithmetic on i1.
static void requireNumeric(DType dtype, const char *what, SourceLoc loc) {
  if (dtype == DType::I1)
    fail(loc, std::string(what) +
                  " is not defined for bool (i1) tensors; cast to a numeric "
                  "dtype first, e.g. kiln::cast(x, kiln::DType::I32)");
}

static Tensor arithmetic(BinaryKind kind, const char *what, const Operand &lhs,
                         const Operand &rhs, SourceLoc loc) {
  Prepared p = prepareBinary(lhs, rhs, what, loc, [&](DType dtype) {
    if (kind == BinaryKind::Pow)
      return floatDType(dtype);
    requireNumeric(dtype, what, loc);
    return dtype;
  });
  return p.state->wrap(binaryValue(*p.state, kind, p.lhs, p.rhs, loc));
}

static Tensor comparison(CompareDirection direction, const char *what,
                         const Operand &lhs, const Operand &rhs,
                         SourceLoc loc) {
  Prepared p =
      prepareBinary(lhs, rhs, what, loc, [](DType dtype) { return dtype; });
  return p.state->wrap(compareValue(*p.state, direction, p.lhs, p.rhs, loc));
}

/// Rejects non-bool operands of a logical op.
static void requireBool(const Operand &operand, const char *what,
                        SourceLoc loc) {
  bool ok = operand.isTensor()
                ? operand.tensor().dtype() == DType::I1
                : operand.scalar().getKind() == Scalar::Kind::Bool;
  if (!ok)
    fail(loc, std::string(what) +
                  " needs bool (i1) operands; compare first, e.g. x > 0");
}

static Tensor logical(bool isAnd, const char *what, const Operand &lhs,
                      const Operand &rhs, SourceLoc loc) {
  requireBool(lhs, what, loc);
  requireBool(rhs, what, loc);
  Prepared p =
      prepareBinary(lhs, rhs, what, loc, [](DType) { return DType::I1; });
  llvm::ArrayRef<int64_t> shape = typeOf(p.lhs).getShape();
  // a && b == a ? b : false;  a || b == a ? true : b.
  mlir::Value result =
      isAnd ? selectValue(*p.state, p.lhs, p.rhs,
                          splat(*p.state, false, DType::I1, shape, loc), loc)
            : selectValue(*p.state, p.lhs,
                          splat(*p.state, true, DType::I1, shape, loc), p.rhs,
                          loc);
  return p.state->wrap(result);
}

/// Rejects floats: bitwise ops and shifts take bool (where `allowBool`) or
/// integers.
static void requireBits(DType dtype, bool allowBool, const char *what,
                        SourceLoc loc) {
  if (isInteger(dtype) || (allowBool && dtype == DType::I1))
    return;
  fail(loc, std::string(what) + " needs " +
                (allowBool ? "bool or integer" : "integer") +
                " operands, got " + dtypeName(dtype));
}

template <typename OpTy>
static Tensor bitwise(const char *what, const Operand &lhs, const Operand &rhs,
                      SourceLoc loc) {
  Prepared p = prepareBinary(lhs, rhs, what, loc, [&](DType dtype) {
    requireBits(dtype, /*allowBool=*/true, what, loc);
    return dtype;
  });
  return p.state->wrap(
      p.state->create<OpTy>(loc, p.lhs.getType(), p.lhs, p.rhs).getResult());
}

/// x << n, or x >> n filling with the sign bit (`arithmetic`) or zeros.
/// kiln.shift_right fills as the type's sign says, so a logical shift of a
/// signed type masks the filled bits off and an arithmetic shift of ui32
/// goes through i32.
static Tensor shift(bool left, bool arithmetic, const char *what,
                    const Operand &x, const Operand &amount, SourceLoc loc) {
  Prepared p = prepareBinary(x, amount, what, loc, [&](DType dtype) {
    requireBits(dtype, /*allowBool=*/false, what, loc);
    return dtype;
  });
  TraceState &state = *p.state;
  mlir::Type type = p.lhs.getType();
  if (left)
    return state.wrap(
        state.create<mlir::kiln::ShiftLeftOp>(loc, type, p.lhs, p.rhs)
            .getResult());
  DType dtype = dtypeOf(typeOf(p.lhs).getElementType());
  bool isUnsigned = dtype == DType::UI32;
  if (arithmetic && isUnsigned) {
    auto signedType = tensorType(state.getContext(), typeOf(p.lhs).getShape(),
                                 DType::I32);
    auto asSigned = [&](mlir::Value v) {
      return state.create<mlir::kiln::BitcastOp>(loc, signedType, v)
          .getResult();
    };
    mlir::Value shifted = state.create<mlir::kiln::ShiftRightOp>(
        loc, signedType, asSigned(p.lhs), asSigned(p.rhs));
    return state.wrap(
        state.create<mlir::kiln::BitcastOp>(loc, type, shifted).getResult());
  }
  Tensor shifted = state.wrap(
      state.create<mlir::kiln::ShiftRightOp>(loc, type, p.lhs, p.rhs)
          .getResult());
  if (arithmetic || isUnsigned)
    return shifted;
  // Logical on a signed type: keep the low width - n bits; amounts outside
  // [0, width] shift every bit out.
  int64_t width = getElementTypeInfo(toElementType(dtype)).bitWidth;
  Tensor n = state.wrap(p.rhs);
  Tensor keep = bitwise_not(shift_left(constant(Scalar(-1), dtype, loc),
                                       sub(width, n, loc), loc),
                            loc);
  return where(logical_or(less(n, 0, loc), greater(n, width, loc), loc), 0,
               bitwise_and(shifted, keep, loc), loc);
}

/// Unary ops defined on all numeric dtypes.
template <typename OpTy>
static Tensor unaryNumeric(const Tensor &x, const char *what, SourceLoc loc) {
  TraceState &state = TraceState::of(x, loc);
  requireNumeric(x.dtype(), what, loc);
  mlir::Value value = state.use(x, loc);
  return state.wrap(
      state.create<OpTy>(loc, value.getType(), value).getResult());
}

/// Unary ops defined on floats; other dtypes are promoted to f32.
template <typename OpTy>
static Tensor unaryFloat(const Tensor &x, SourceLoc loc) {
  TraceState &state = TraceState::of(x, loc);
  mlir::Value value =
      castValue(state, state.use(x, loc), floatDType(x.dtype()), loc);
  return state.wrap(
      state.create<OpTy>(loc, value.getType(), value).getResult());
}

} // namespace detail

using detail::BinaryKind;
using mlir::kiln::CompareDirection;

Tensor add(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::arithmetic(BinaryKind::Add, "kiln::add", lhs, rhs, loc);
}
Tensor sub(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::arithmetic(BinaryKind::Sub, "kiln::sub", lhs, rhs, loc);
}
Tensor mul(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::arithmetic(BinaryKind::Mul, "kiln::mul", lhs, rhs, loc);
}
Tensor div(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::arithmetic(BinaryKind::Div, "kiln::div", lhs, rhs, loc);
}
Tensor rem(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::arithmetic(BinaryKind::Rem, "kiln::rem", lhs, rhs, loc);
}
Tensor maximum(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::arithmetic(BinaryKind::Max, "kiln::maximum", lhs, rhs, loc);
}
Tensor minimum(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::arithmetic(BinaryKind::Min, "kiln::minimum", lhs, rhs, loc);
}
Tensor pow(const Operand &base, const Operand &exponent, SourceLoc loc) {
  return detail::arithmetic(BinaryKind::Pow, "kiln::pow", base, exponent, loc);
}

Tensor operator+(const Operand &lhs, const Operand &rhs) {
  return add(lhs, rhs, lhs.location());
}
Tensor operator-(const Operand &lhs, const Operand &rhs) {
  return sub(lhs, rhs, lhs.location());
}
Tensor operator*(const Operand &lhs, const Operand &rhs) {
  return mul(lhs, rhs, lhs.location());
}
Tensor operator/(const Operand &lhs, const Operand &rhs) {
  return div(lhs, rhs, lhs.location());
}
Tensor operator-(const Operand &operand) {
  if (operand.isTensor())
    return neg(operand.tensor(), operand.location());
  return neg(constant(operand.scalar(), operand.location()),
             operand.location());
}

Tensor neg(const Tensor &x, SourceLoc loc) {
  return detail::unaryNumeric<mlir::kiln::NegOp>(x, "kiln::neg", loc);
}
Tensor abs(const Tensor &x, SourceLoc loc) {
  return detail::unaryNumeric<mlir::kiln::AbsOp>(x, "kiln::abs", loc);
}
Tensor relu(const Tensor &x, SourceLoc loc) {
  return detail::unaryNumeric<mlir::kiln::ReluOp>(x, "kiln::relu", loc);
}
Tensor exp(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::ExpOp>(x, loc);
}
Tensor log(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::LogOp>(x, loc);
}
Tensor sqrt(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::SqrtOp>(x, loc);
}
Tensor rsqrt(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::RsqrtOp>(x, loc);
}
Tensor tanh(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::TanhOp>(x, loc);
}
Tensor sigmoid(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::SigmoidOp>(x, loc);
}
Tensor sin(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::SinOp>(x, loc);
}
Tensor cos(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::CosOp>(x, loc);
}

Tensor erf(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::ErfOp>(x, loc);
}
Tensor floor(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::FloorOp>(x, loc);
}
Tensor ceil(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::CeilOp>(x, loc);
}
Tensor round(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::RoundOp>(x, loc);
}
Tensor tan(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::TanOp>(x, loc);
}
Tensor asin(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::AsinOp>(x, loc);
}
Tensor acos(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::AcosOp>(x, loc);
}
Tensor atan(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::AtanOp>(x, loc);
}
Tensor sinh(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::SinhOp>(x, loc);
}
Tensor cosh(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::CoshOp>(x, loc);
}
Tensor asinh(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::AsinhOp>(x, loc);
}
Tensor acosh(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::AcoshOp>(x, loc);
}
Tensor atanh(const Tensor &x, SourceLoc loc) {
  return detail::unaryFloat<mlir::kiln::AtanhOp>(x, loc);
}
Tensor sign(const Tensor &x, SourceLoc loc) {
  return detail::unaryNumeric<mlir::kiln::SignOp>(x, "kiln::sign", loc);
}

Tensor cast(const Tensor &x, DType dtype, SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  return state.wrap(detail::castValue(state, state.use(x, loc), dtype, loc));
}

Tensor bitcast_convert_type(const Tensor &x, DType dtype, SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  unsigned from = getElementTypeInfo(toElementType(x.dtype())).bitWidth;
  unsigned to = getElementTypeInfo(toElementType(dtype)).bitWidth;
  if (x.dtype() == DType::I1 || dtype == DType::I1 || from != to)
    detail::fail(loc, std::string("kiln::bitcast_convert_type needs two "
                                  "dtypes of one bit width other than bool, "
                                  "got ") +
                          dtypeName(x.dtype()) + " to " + dtypeName(dtype));
  // state.use brings a tensor of an enclosing trace into this one.
  mlir::Value value = state.use(x, loc);
  if (x.dtype() == dtype)
    return state.wrap(value);
  return state.wrap(state
                        .create<mlir::kiln::BitcastOp>(
                            loc,
                            detail::tensorType(state.getContext(), x.shape(),
                                               dtype),
                            value)
                        .getResult());
}

Tensor equal(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::comparison(CompareDirection::eq, "kiln::equal", lhs, rhs,
                            loc);
}
Tensor not_equal(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::comparison(CompareDirection::ne, "kiln::not_equal", lhs, rhs,
                            loc);
}
Tensor less(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::comparison(CompareDirection::lt, "kiln::less", lhs, rhs, loc);
}
Tensor less_equal(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::comparison(CompareDirection::le, "kiln::less_equal", lhs, rhs,
                            loc);
}
Tensor greater(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::comparison(CompareDirection::gt, "kiln::greater", lhs, rhs,
                            loc);
}
Tensor greater_equal(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::comparison(CompareDirection::ge, "kiln::greater_equal", lhs,
                            rhs, loc);
}

Tensor operator==(const Operand &lhs, const Operand &rhs) {
  return equal(lhs, rhs, lhs.location());
}
Tensor operator!=(const Operand &lhs, const Operand &rhs) {
  return not_equal(lhs, rhs, lhs.location());
}
Tensor operator<(const Operand &lhs, const Operand &rhs) {
  return less(lhs, rhs, lhs.location());
}
Tensor operator<=(const Operand &lhs, const Operand &rhs) {
  return less_equal(lhs, rhs, lhs.location());
}
Tensor operator>(const Operand &lhs, const Operand &rhs) {
  return greater(lhs, rhs, lhs.location());
}
Tensor operator>=(const Operand &lhs, const Operand &rhs) {
  return greater_equal(lhs, rhs, lhs.location());
}

Tensor logical_and(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::logical(/*isAnd=*/true, "kiln::logical_and", lhs, rhs, loc);
}
Tensor logical_or(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::logical(/*isAnd=*/false, "kiln::logical_or", lhs, rhs, loc);
}
Tensor logical_not(const Tensor &x, SourceLoc loc) {
  detail::requireBool(Operand(x, loc), "kiln::logical_not", loc);
  return equal(x, false, loc);
}

Tensor bitwise_and(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::bitwise<mlir::kiln::AndOp>("kiln::bitwise_and", lhs, rhs,
                                            loc);
}
Tensor bitwise_or(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::bitwise<mlir::kiln::OrOp>("kiln::bitwise_or", lhs, rhs, loc);
}
Tensor bitwise_xor(const Operand &lhs, const Operand &rhs, SourceLoc loc) {
  return detail::bitwise<mlir::kiln::XorOp>("kiln::bitwise_xor", lhs, rhs,
                                            loc);
}
Tensor bitwise_not(const Tensor &x, SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(x, loc);
  detail::requireBits(x.dtype(), /*allowBool=*/true, "kiln::bitwise_not", loc);
  mlir::Value value = state.use(x, loc);
  return state.wrap(
      state.create<mlir::kiln::NotOp>(loc, value.getType(), value)
          .getResult());
}
Tensor shift_left(const Operand &x, const Operand &amount, SourceLoc loc) {
  return detail::shift(/*left=*/true, /*arithmetic=*/false, "kiln::shift_left",
                       x, amount, loc);
}
Tensor shift_right_logical(const Operand &x, const Operand &amount,
                           SourceLoc loc) {
  return detail::shift(/*left=*/false, /*arithmetic=*/false,
                       "kiln::shift_right_logical", x, amount, loc);
}
Tensor shift_right_arithmetic(const Operand &x, const Operand &amount,
                              SourceLoc loc) {
  return detail::shift(/*left=*/false, /*arithmetic=*/true,
                       "kiln::shift_right_arithmetic", x, amount, loc);
}

Tensor operator&(const Operand &lhs, const Operand &rhs) {
  return bitwise_and(lhs, rhs, lhs.location());
}
Tensor operator|(const Operand &lhs, const Operand &rhs) {
  return bitwise_or(lhs, rhs, lhs.location());
}
Tensor operator^(const Operand &lhs, const Operand &rhs) {
  return bitwise_xor(lhs, rhs, lhs.location());
}
Tensor operator~(const Operand &operand) {
  if (operand.isTensor())
    return bitwise_not(operand.tensor(), operand.location());
  return bitwise_not(constant(operand.scalar(), operand.location()),
                     operand.location());
}

Tensor where(const Tensor &pred, const Operand &onTrue, const Operand &onFalse,
             SourceLoc loc) {
  Operand predOperand(pred, loc);
  detail::TraceState &state = detail::TraceState::of(
      {&predOperand, &onTrue, &onFalse}, loc, "kiln::where");
  if (pred.dtype() != DType::I1)
    detail::fail(loc, std::string("kiln::where needs a bool (i1) predicate, "
                                  "got ") +
                          dtypeName(pred.dtype()) +
                          "; compare it first, e.g. kiln::where(x > 0, a, b)");
  DType dtype = detail::promoteOperands({&onTrue, &onFalse});
  Shape shape = detail::broadcastShapes(
      {pred.shape(), detail::shapeOf(onTrue), detail::shapeOf(onFalse)},
      "kiln::where", loc);
  mlir::Value p = state.use(pred, loc);
  // kiln.select takes a rank-0 predicate as is: it picks whole tensors.
  if (pred.rank() != 0)
    p = detail::broadcastValue(state, p, shape, loc);
  mlir::Value a = detail::materialize(state, onTrue, dtype, shape, loc);
  mlir::Value b = detail::materialize(state, onFalse, dtype, shape, loc);
  return state.wrap(detail::selectValue(state, p, a, b, loc));
}

} // namespace kiln
