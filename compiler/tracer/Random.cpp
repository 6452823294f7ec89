//===- Random.cpp - jax.random's functions as tracer ops ------------------===//
//
// Every draw is kiln.rng_bits of a key and counters, composed with public
// tracer ops the way JAX composes its lax ops, so that the streams are
// JAX's (kiln/Tracer/Random.h). Counters are flat element indices, built as
// a sum of iotas times strides rather than a reshaped 1-D iota, so that
// fusion and the SPMD partitioner see elementwise ops of the result's shape.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "RandomDraws.h"

#include "kiln/Tracer/Collectives.h"
#include "kiln/Tracer/Random.h"

#include <cmath>
#include <functional>
#include <limits>

namespace kiln {
namespace random {

using detail::fail;
using mlir::kiln::RngWord;
using namespace draws;

namespace draws {

void checkKey(const Tensor &key, const char *what, SourceLoc loc) {
  if (key.dtype() != DType::UI32 || key.shape() != Shape{2})
    fail(loc, std::string(what) +
                  " needs a key: a ui32[2] tensor from kiln::random::key, "
                  "split or fold_in; got " +
                  dtypeName(key.dtype()) + shapeString(key.shape()));
}

void checkFloat(DType dtype, const char *what, SourceLoc loc) {
  if (!isFloat(dtype))
    fail(loc, std::string(what) +
                  " draws floats (f16, bf16, f32 or f64), got dtype " +
                  dtypeName(dtype));
}

} // namespace draws

namespace {

/// Each element's flat index in `shape`, as two ui32 words (high, low).
std::pair<Tensor, Tensor> counters(const Shape &shape, int64_t count,
                                   SourceLoc loc) {
  if (shape.empty())
    return {zeros({}, DType::UI32, loc), zeros({}, DType::UI32, loc)};
  // Below 2^32 elements the high word is 0 and the low one fits ui32.
  bool wide = count > (int64_t{1} << 32);
  DType dtype = wide ? DType::I64 : DType::UI32;
  std::optional<Tensor> index;
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    Tensor term = iota(shape, d, dtype, loc);
    if (stride != 1)
      term = mul(term, stride, loc);
    index = index ? add(*index, term, loc) : term;
    stride *= std::max<int64_t>(shape[d], 1);
  }
  if (!wide)
    return {zeros(shape, DType::UI32, loc), *index};
  return {cast(shift_right_logical(*index, 32, loc), DType::UI32, loc),
          cast(*index, DType::UI32, loc)};
}

} // namespace

namespace draws {

/// One word of Threefry-2x32 at each element: the key's words and the
/// counter's, all of one shape.
Tensor threefryWords(const Tensor &k0, const Tensor &k1,
                     const std::pair<Tensor, Tensor> &counter, RngWord word,
                     SourceLoc loc) {
  detail::TraceState &state = detail::TraceState::of(k0, loc);
  return state.wrap(state
                        .create<mlir::kiln::RngBitsOp>(
                            loc, word, state.use(k0, loc), state.use(k1, loc),
                            state.use(counter.first, loc),
                            state.use(counter.second, loc))
                        .getResult());
}

} // namespace draws

namespace {

/// One word of Threefry-2x32 of `key` at each counter.
Tensor threefry(const Tensor &key, const std::pair<Tensor, Tensor> &counter,
                RngWord word, SourceLoc loc) {
  const Shape &shape = counter.second.shape();
  auto keyWord = [&](int64_t i) {
    return broadcast_to(reshape(slice(key, {i}, {i + 1}, {}, loc), {}, loc),
                        shape, loc);
  };
  return threefryWords(keyWord(0), keyWord(1), counter, word, loc);
}

/// The keys at the counters: both words of each, stacked along a new last
/// dimension (split's and fold_in's keys).
Tensor keysAt(const Tensor &key, const std::pair<Tensor, Tensor> &counter,
              SourceLoc loc) {
  Shape shape = counter.second.shape();
  shape.push_back(1);
  Tensor first = reshape(threefry(key, counter, RngWord::First, loc), shape,
                         loc);
  Tensor second = reshape(threefry(key, counter, RngWord::Second, loc), shape,
                          loc);
  return concat({first, second}, static_cast<int64_t>(shape.size()) - 1, loc);
}


/// An integer scalar operand as a rank-0 ui32 tensor, keeping its low 32
/// bits (numpy's conversion to uint32).
Tensor asWord(const Operand &value, const char *what, SourceLoc loc) {
  if (!value.isTensor()) {
    if (value.scalar().getKind() != Scalar::Kind::Int)
      fail(loc, std::string(what) + " needs an integer, got " +
                    value.scalar().str());
    return constant(std::vector<uint32_t>{static_cast<uint32_t>(
                        value.scalar().asInt())},
                    Shape{}, loc);
  }
  const Tensor &tensor = value.tensor();
  if (!isInteger(tensor.dtype()) || tensor.rank() != 0)
    fail(loc, std::string(what) + " needs an integer scalar, got " +
                  dtypeName(tensor.dtype()) + shapeString(tensor.shape()));
  return tensor.dtype() == DType::I32
             ? bitcast_convert_type(tensor, DType::UI32, loc)
             : cast(tensor, DType::UI32, loc);
}

} // namespace

namespace draws {

Tensor keyRow(const Tensor &keys, int64_t i, SourceLoc loc) {
  return reshape(slice(keys, {i, 0}, {i + 1, 2}, {}, loc), {2}, loc);
}

Tensor bound(const Operand &value, DType dtype, SourceLoc loc) {
  if (!value.isTensor())
    return constant(value.scalar(), dtype, loc);
  return cast(value.tensor(), dtype, loc);
}

Tensor scaleUnit(const Tensor &floats, const Tensor &low, const Tensor &high,
                 SourceLoc loc) {
  return maximum(low, add(mul(floats, sub(high, low, loc), loc), low, loc),
                 loc);
}

} // namespace draws

namespace {

/// The 64 bits of a Threefry block, as JAX joins them: the first word
/// above the second, as i64 bits.
Tensor wordPair(const std::function<Tensor(RngWord)> &draw, SourceLoc loc) {
  Tensor high = cast(draw(RngWord::First), DType::I64, loc);
  Tensor low = cast(draw(RngWord::Second), DType::I64, loc);
  return bitwise_or(shift_left(high, 32, loc), low, loc);
}

} // namespace

namespace draws {

/// Floats in [0, 1) of `dtype` from random mantissa bits, as JAX's uniform
/// makes them: `draw` gives a Threefry word at every element (the xor of
/// both for 32 bits and fewer, both for 64).
Tensor unitFloats(const std::function<Tensor(RngWord)> &draw, DType dtype,
                  SourceLoc loc) {
  if (dtype == DType::F16 || dtype == DType::BF16) {
    // JAX draws 16 bits for f16 and 8 for bf16 (whose 7-bit mantissa is
    // below 8 bits), the low ones of the xor word, and keeps the top
    // mantissa-many: m / 2^mantissa is that float in [1, 2) minus 1, and
    // exact in f32 and in the half type.
    int mantissa = dtype == DType::F16 ? 10 : 7;
    int drawn = dtype == DType::F16 ? 16 : 8;
    Tensor m = shift_right_logical(
        bitwise_and(draw(RngWord::Xor), (int64_t{1} << drawn) - 1, loc),
        drawn - mantissa, loc);
    return cast(mul(cast(m, DType::F32, loc), std::ldexp(1.0, -mantissa), loc),
                dtype, loc);
  }
  // A float in [1, 2) from random mantissa bits, minus 1.
  if (dtype == DType::F32) {
    Tensor mantissa = shift_right_logical(draw(RngWord::Xor), 9, loc);
    return sub(bitcast_convert_type(
                   bitwise_or(mantissa, int64_t{0x3F800000}, loc), DType::F32,
                   loc),
               1.0, loc);
  }
  Tensor word = wordPair(draw, loc);
  return sub(bitcast_convert_type(
                 bitwise_or(shift_right_logical(word, 12, loc),
                            int64_t{0x3FF0000000000000}, loc),
                 DType::F64, loc),
             1.0, loc);
}

/// JAX's normal from floats in [0, 1): those floats moved into
/// (-1, 1) (from the value next to -1 toward 0), then sqrt(2) erf_inv.
Tensor normalFromUnit(const Tensor &floats, SourceLoc loc) {
  DType dtype = floats.dtype();
  int mantissa = dtype == DType::F16    ? 10
                 : dtype == DType::BF16 ? 7
                 : dtype == DType::F32  ? 23
                                        : 52;
  double lowest = -(1.0 - std::ldexp(1.0, -(mantissa + 1)));
  Tensor u = scaleUnit(floats, full({}, Scalar(lowest), dtype, loc),
                       full({}, Scalar(1.0), dtype, loc), loc);
  return mul(erf_inv(u, loc), std::sqrt(2.0), loc);
}

} // namespace draws

namespace {

/// The Threefry words of `key` at each element of `shape` (of `count`
/// elements), for unitFloats and wordPair.
std::function<Tensor(RngWord)> drawsAt(const Tensor &key, const Shape &shape,
                                       int64_t count, SourceLoc loc) {
  auto counter = counters(shape, count, loc);
  return [key, counter, loc](RngWord word) {
    return threefry(key, counter, word, loc);
  };
}

/// JAX's 64 random bits per element (its partitionable Threefry).
Tensor bits64(const Tensor &key, const Shape &shape, int64_t count,
              SourceLoc loc) {
  return wordPair(drawsAt(key, shape, count, loc), loc);
}

/// a < b for i64 bits read as unsigned: both moved by 2^63.
Tensor unsignedLess(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return less(bitwise_xor(a, std::numeric_limits<int64_t>::min(), loc),
              bitwise_xor(b, std::numeric_limits<int64_t>::min(), loc),
              loc);
}

/// x mod s for i64 bits read as unsigned (s > 0 unsigned), from signed
/// ops: a divisor of 2^63 or more is subtracted at most once; a smaller
/// one divides x / 2 (nonnegative) and the halving's lost bit and factor
/// 2 are put back, which stays below 2 s.
Tensor unsignedRem(const Tensor &x, const Tensor &s, SourceLoc loc) {
  Tensor large = where(unsignedLess(x, s, loc), x, sub(x, s, loc), loc);
  Tensor half = rem(shift_right_logical(x, 1, loc), s, loc);
  Tensor twice = add(mul(half, 2, loc), bitwise_and(x, 1, loc), loc);
  Tensor small =
      where(unsignedLess(twice, s, loc), twice, sub(twice, s, loc), loc);
  return where(less(s, 0, loc), large, small, loc);
}

} // namespace

Tensor key(int64_t seed, SourceLoc loc) {
  bool narrow = seed >= std::numeric_limits<int32_t>::min() &&
                seed <= std::numeric_limits<int32_t>::max();
  uint64_t bits = static_cast<uint64_t>(seed);
  return constant(std::vector<uint32_t>{narrow ? 0u
                                               : static_cast<uint32_t>(bits >> 32),
                                        static_cast<uint32_t>(bits)},
                  Shape{2}, loc);
}

Tensor key(const Tensor &seed, SourceLoc loc) {
  detail::TraceState::of(seed, loc);
  if (!isInteger(seed.dtype()) || seed.rank() != 0)
    fail(loc, "kiln::random::key needs an integer scalar seed, got " +
                  std::string(dtypeName(seed.dtype())) +
                  shapeString(seed.shape()));
  Tensor high = seed.dtype() == DType::I64
                    ? cast(shift_right_logical(seed, 32, loc), DType::UI32, loc)
                    : zeros({}, DType::UI32, loc);
  Tensor low = asWord(seed, "kiln::random::key", loc);
  return concat({reshape(high, {1}, loc), reshape(low, {1}, loc)}, 0, loc);
}

Tensor split(const Tensor &key, int64_t num, SourceLoc loc) {
  checkKey(key, "kiln::random::split", loc);
  if (num < 0)
    fail(loc, "kiln::random::split: cannot make " + std::to_string(num) +
                  " keys");
  return keysAt(key, counters({num}, num, loc), loc);
}

Tensor fold_in(const Tensor &key, const Operand &data, SourceLoc loc) {
  checkKey(key, "kiln::random::fold_in", loc);
  Tensor word = asWord(data, "kiln::random::fold_in", loc);
  return keysAt(key, {zeros({}, DType::UI32, loc), word}, loc);
}

Tensor per_rank(const Tensor &key, SourceLoc loc) {
  checkKey(key, "kiln::random::per_rank", loc);
  return fold_in(key, rank_index(loc), loc);
}

Tensor bits(const Tensor &key, const Shape &shape, SourceLoc loc) {
  checkKey(key, "kiln::random::bits", loc);
  int64_t count = detail::checkedNumElements(shape, "kiln::random::bits", loc);
  return threefry(key, counters(shape, count, loc), RngWord::Xor, loc);
}

Tensor uniform(const Tensor &key, const Shape &shape, DType dtype,
               const Operand &minval, const Operand &maxval, SourceLoc loc) {
  const char *what = "kiln::random::uniform";
  checkKey(key, what, loc);
  checkFloat(dtype, what, loc);
  int64_t count = detail::checkedNumElements(shape, what, loc);
  Shape boundShape = detail::broadcastShapes(
      {detail::shapeOf(minval), detail::shapeOf(maxval)}, what, loc);
  if (boundShape.size() > shape.size() ||
      detail::broadcastShapes({boundShape, shape}, what, loc) != shape)
    fail(loc, std::string(what) + ": minval and maxval of shapes " +
                  shapeString(detail::shapeOf(minval)) + " and " +
                  shapeString(detail::shapeOf(maxval)) +
                  " do not broadcast to the shape " + shapeString(shape));
  Tensor floats = unitFloats(drawsAt(key, shape, count, loc), dtype, loc);
  return scaleUnit(floats, bound(minval, dtype, loc), bound(maxval, dtype, loc),
                   loc);
}

Tensor normal(const Tensor &key, const Shape &shape, DType dtype,
              SourceLoc loc) {
  checkKey(key, "kiln::random::normal", loc);
  checkFloat(dtype, "kiln::random::normal", loc);
  int64_t count = detail::checkedNumElements(shape, "kiln::random::normal", loc);
  return normalFromUnit(unitFloats(drawsAt(key, shape, count, loc), dtype, loc),
                        loc);
}

/// The float next to each element of `x` (f32 or f64) toward +inf
/// (`up`) or -inf, as lax.nextafter: one step of the bit pattern read as a
/// signed integer, away from zero for positive values when going up; a
/// zero goes to the smallest subnormal of that sign.
static Tensor nextToward(const Tensor &x, bool up, SourceLoc loc) {
  DType bitsType = x.dtype() == DType::F64 ? DType::I64 : DType::I32;
  Tensor bitsOf = bitcast_convert_type(x, bitsType, loc);
  Tensor positive = greater(bitsOf, 0, loc);
  // Going up, a positive value's pattern grows and a negative one's
  // magnitude shrinks (its pattern, sign bit set, decreases); going down
  // the other way round.
  Tensor step = up ? where(positive, 1, -1, loc) : where(positive, -1, 1, loc);
  Tensor moved = bitcast_convert_type(add(bitsOf, step, loc), x.dtype(), loc);
  double tiny = x.dtype() == DType::F64
                    ? std::numeric_limits<double>::denorm_min()
                    : double(std::numeric_limits<float>::denorm_min());
  return where(equal(x, 0.0, loc), up ? tiny : -tiny, moved, loc);
}

/// 2^k for integer k (i32) in [-252, 254], exact in f32 (a subnormal
/// below 2^-126): the product of two powers whose exponents are normal.
static Tensor powerOfTwo(const Tensor &k, SourceLoc loc) {
  auto normalPower = [&](const Tensor &e) {
    return bitcast_convert_type(shift_left(add(e, 127, loc), 23, loc),
                                DType::F32, loc);
  };
  Tensor half = shift_right_arithmetic(k, 1, loc);
  return mul(normalPower(half), normalPower(sub(k, half, loc)), loc);
}

/// nextToward for f16 and bf16, computed on f32 (where every half value is
/// exact) from the spacing of the half type: 2^(max(e, emin) - mantissa)
/// above a value of exponent e, half that below a power of two above the
/// smallest normal; infinities step to the largest finite value, and a
/// zero to the smallest subnormal of the direction's sign.
static Tensor nextTowardHalf(const Tensor &x, bool up, SourceLoc loc) {
  int mantissa = x.dtype() == DType::F16 ? 10 : 7;
  int minExponent = x.dtype() == DType::F16 ? -14 : -126;
  double largest = x.dtype() == DType::F16 ? 65504.0 : 3.3895313892515355e38;
  Tensor wide = cast(x, DType::F32, loc);
  Tensor magnitude = abs(wide, loc);
  Tensor bitsOf = bitcast_convert_type(magnitude, DType::I32, loc);
  Tensor exponent = sub(shift_right_logical(bitsOf, 23, loc), 127, loc);
  Tensor clamped = maximum(exponent, minExponent, loc);
  Tensor above = powerOfTwo(sub(clamped, mantissa, loc), loc);
  Tensor atPower = logical_and(
      equal(bitwise_and(bitsOf, (1 << 23) - 1, loc), 0, loc),
      greater(exponent, minExponent, loc), loc);
  Tensor below = where(atPower, mul(above, 0.5, loc), above, loc);
  Tensor away = add(magnitude, above, loc);
  Tensor toward = sub(magnitude, below, loc);
  Tensor positive = greater(wide, 0.0, loc);
  Tensor moved =
      up ? where(positive, away, neg(toward, loc), loc)
         : where(positive, toward, neg(away, loc), loc);
  double tiny = std::ldexp(1.0, minExponent - mantissa);
  moved = where(equal(wide, 0.0, loc), up ? tiny : -tiny, moved, loc);
  // An infinity moves to the largest finite value of its sign, unless it
  // is already where the direction leads.
  Tensor infinite = equal(magnitude, std::numeric_limits<double>::infinity(),
                          loc);
  Tensor finiteEnd = where(positive, largest, -largest, loc);
  Tensor stays = up ? positive : logical_not(positive, loc);
  moved = where(infinite, where(stays, wide, finiteEnd, loc), moved, loc);
  return cast(moved, x.dtype(), loc);
}

Tensor truncated_normal(const Tensor &key, const Operand &lower,
                        const Operand &upper, std::optional<Shape> shape,
                        DType dtype, SourceLoc loc) {
  const char *what = "kiln::random::truncated_normal";
  checkKey(key, what, loc);
  checkFloat(dtype, what, loc);
  Shape boundShape = detail::broadcastShapes(
      {detail::shapeOf(lower), detail::shapeOf(upper)}, what, loc);
  Shape drawn = shape ? *shape : boundShape;
  // The bounds as tensors of the dtype, so that erf and the clamp see
  // them rounded as JAX converts them.
  auto bound = [&](const Operand &value) {
    return value.isTensor()
               ? cast(value.tensor(), dtype, loc)
               : full({}, Scalar(value.scalar().asDouble()), dtype, loc);
  };
  Tensor low = bound(lower), high = bound(upper);
  double sqrt2 = std::sqrt(2.0);
  Tensor a = erf(div(low, sqrt2, loc), loc);
  Tensor b = erf(div(high, sqrt2, loc), loc);
  Tensor u = uniform(key, drawn, dtype, a, b, loc);
  Tensor out = mul(erf_inv(u, loc), sqrt2, loc);
  // Rounding, or u landing on a, must not reach the bounds themselves.
  bool half = dtype == DType::F16 || dtype == DType::BF16;
  auto next = [&](const Tensor &x, bool up) {
    return half ? nextTowardHalf(x, up, loc) : nextToward(x, up, loc);
  };
  return minimum(maximum(out, next(low, true), loc), next(high, false), loc);
}

Tensor randint(const Tensor &key, const Shape &shape, const Operand &minval,
               const Operand &maxval, DType dtype, SourceLoc loc) {
  const char *what = "kiln::random::randint";
  checkKey(key, what, loc);
  int64_t count = detail::checkedNumElements(shape, what, loc);
  if (dtype != DType::I32 && dtype != DType::I64)
    fail(loc, std::string(what) + " draws i32 or i64, got dtype " +
                  dtypeName(dtype) + "; cast the result");
  for (const Operand *bound : {&minval, &maxval})
    if (bound->isTensor() ? !isInteger(bound->tensor().dtype())
                          : bound->scalar().getKind() != Scalar::Kind::Int)
      fail(loc, std::string(what) + " needs integer bounds");
  auto wide = [&](const Operand &value) {
    return value.isTensor() ? cast(value.tensor(), DType::I64, loc)
                            : full({}, value.scalar(), DType::I64, loc);
  };
  Tensor keys = split(key, 2, loc);

  if (dtype == DType::I64) {
    // JAX's algorithm on 64-bit words: (a 2^64 + b) mod span, with the
    // products and sums wrapping as uint64 does and the remainders
    // unsigned. Bounds of i64 are never out of its range.
    Tensor low = wide(minval), high = wide(maxval);
    Tensor higherBits = bits64(keyRow(keys, 0, loc), shape, count, loc);
    Tensor lowerBits = bits64(keyRow(keys, 1, loc), shape, count, loc);
    Tensor span = where(less_equal(high, low, loc), 1, sub(high, low, loc),
                        loc);
    Tensor multiplier = unsignedRem(
        broadcast_to(full({}, Scalar(int64_t{1} << 32), DType::I64, loc),
                     span.shape(), loc),
        span, loc);
    multiplier = unsignedRem(mul(multiplier, multiplier, loc), span, loc);
    Tensor offset = unsignedRem(
        add(mul(unsignedRem(higherBits, span, loc), multiplier, loc),
            unsignedRem(lowerBits, span, loc), loc),
        span, loc);
    return add(low, offset, loc);
  }

  // The bounds in i64 clipped to i32 (JAX's _convert_and_clip_integer);
  // a maxval above the i32 range makes the span one larger.
  auto clip = [&](const Tensor &value) {
    return cast(minimum(maximum(value, int64_t{INT32_MIN}, loc),
                        int64_t{INT32_MAX}, loc),
                DType::I32, loc);
  };
  Tensor maxWide = wide(maxval);
  Tensor outOfRange = greater(maxWide, int64_t{INT32_MAX}, loc);
  Tensor low = clip(wide(minval)), high = clip(maxWide);

  Tensor higherBits = bits(keyRow(keys, 0, loc), shape, loc);
  Tensor lowerBits = bits(keyRow(keys, 1, loc), shape, loc);

  Tensor span = bitcast_convert_type(sub(high, low, loc), DType::UI32, loc);
  span = where(less_equal(high, low, loc), 1, span, loc);
  span = where(logical_and(outOfRange, greater(high, low, loc), loc),
               add(span, 1, loc), span, loc);
  // (a * 2^32 + b) mod span without 64 bits: 2^32 mod span is
  // (2^16 mod span)^2 mod span.
  Tensor multiplier = rem(constant(std::vector<uint32_t>{1u << 16}, Shape{}, loc),
                          span, loc);
  multiplier = rem(mul(multiplier, multiplier, loc), span, loc);
  Tensor offset = rem(add(mul(rem(higherBits, span, loc), multiplier, loc),
                          rem(lowerBits, span, loc), loc),
                      span, loc);
  return add(low, bitcast_convert_type(offset, DType::I32, loc), loc);
}

Tensor bernoulli(const Tensor &key, const Operand &p,
                 std::optional<Shape> shape, SourceLoc loc) {
  checkKey(key, "kiln::random::bernoulli", loc);
  DType dtype = p.isTensor() ? p.tensor().dtype() : DType::F32;
  checkFloat(dtype, "kiln::random::bernoulli's p", loc);
  Shape drawn = shape ? *shape : detail::shapeOf(p);
  return less(uniform(key, drawn, dtype, 0.0, 1.0, loc), p, loc);
}

Tensor gumbel(const Tensor &key, const Shape &shape, DType dtype,
              SourceLoc loc) {
  checkKey(key, "kiln::random::gumbel", loc);
  checkFloat(dtype, "kiln::random::gumbel", loc);
  // The smallest normal value of the dtype.
  double tiny = dtype == DType::F16    ? std::ldexp(1.0, -14)
                : dtype == DType::F64 ? std::numeric_limits<double>::min()
                                      : std::ldexp(1.0, -126);
  Tensor u = uniform(key, shape, dtype, tiny, 1.0, loc);
  return neg(log(neg(log(u, loc), loc), loc), loc);
}

Tensor categorical(const Tensor &key, const Tensor &logits, int64_t axis,
                   std::optional<Shape> shape, SourceLoc loc) {
  const char *what = "kiln::random::categorical";
  checkKey(key, what, loc);
  checkFloat(logits.dtype(), what, loc);
  int64_t rank = logits.rank();
  axis = detail::normalizeAxis(axis, rank, what, loc);
  Shape batch = logits.shape();
  batch.erase(batch.begin() + axis);
  Shape drawn = shape ? *shape : batch;
  if (drawn.size() < batch.size() ||
      !std::equal(batch.begin(), batch.end(),
                  drawn.end() - static_cast<std::ptrdiff_t>(batch.size())))
    fail(loc, std::string(what) + ": shape " + shapeString(drawn) +
                  " must end with the logits' shape without the axis, " +
                  shapeString(batch));
  // Noise of the drawn shape with the logits' axis put back where it was
  // (counted from the end), the logits broadcast over the extra leading
  // dimensions, and the argmax along that axis.
  int64_t prefix = static_cast<int64_t>(drawn.size() - batch.size());
  Shape noiseShape = drawn;
  int64_t noiseAxis = prefix + axis;
  noiseShape.insert(noiseShape.begin() + noiseAxis, logits.shape()[axis]);
  Tensor noise = gumbel(key, noiseShape, logits.dtype(), loc);
  return cast(argmax(add(noise, logits, loc), noiseAxis, false, loc),
              DType::I32, loc);
}

namespace {

/// x shuffled along axis 0 (1-D): JAX's rounds of sorting by random keys,
/// enough of them that 32-bit keys of all elements differ with high
/// probability.
Tensor shuffle(Tensor key, Tensor x, SourceLoc loc) {
  int64_t size = x.shape()[0];
  int rounds = static_cast<int>(std::ceil(
      3.0 * std::log(static_cast<double>(std::max<int64_t>(1, size))) /
      std::log(static_cast<double>(std::numeric_limits<uint32_t>::max()))));
  for (int round = 0; round < rounds; ++round) {
    Tensor keys = split(key, 2, loc);
    key = keyRow(keys, 0, loc);
    Tensor subkey = keyRow(keys, 1, loc);
    x = gather(x, argsort(bits(subkey, x.shape(), loc), 0, false, loc), loc);
  }
  return x;
}

} // namespace

Tensor permutation(const Tensor &key, int64_t n, SourceLoc loc) {
  checkKey(key, "kiln::random::permutation", loc);
  if (n < 0)
    fail(loc, "kiln::random::permutation of a negative size " +
                  std::to_string(n));
  return shuffle(key, iota({n}, 0, DType::I32, loc), loc);
}

Tensor permutation(const Tensor &key, const Tensor &x, int64_t axis,
                   SourceLoc loc) {
  const char *what = "kiln::random::permutation";
  checkKey(key, what, loc);
  if (x.rank() == 0)
    fail(loc, std::string(what) + " needs an array of rank >= 1 (or an "
                                  "integer n for a permutation of 0 ... n-1)");
  axis = detail::normalizeAxis(axis, x.rank(), what, loc);
  if (x.rank() == 1)
    return shuffle(key, x, loc);
  Tensor order = shuffle(key, iota({x.shape()[axis]}, 0, DType::I32, loc), loc);
  // gather picks rows: bring the axis to the front and back.
  std::vector<int64_t> perm(x.rank());
  for (int64_t d = 0; d < x.rank(); ++d)
    perm[d] = d == 0 ? axis : d <= axis ? d - 1 : d;
  std::vector<int64_t> back(x.rank());
  for (int64_t d = 0; d < x.rank(); ++d)
    back[perm[d]] = d;
  return transpose(gather(transpose(x, perm, loc), order, loc), back, loc);
}

} // namespace random
} // namespace kiln
