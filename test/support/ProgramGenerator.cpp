//===- ProgramGenerator.cpp - Tests: random kiln programs from a seed -----===//
//
// Builds @main op by op from a pool of values:
//  1. choose the argument shapes (ranks 0 to 4, sizes 1, odd, prime and
//     multiples of 16; sometimes one of more than 65536 elements) and
//     dtypes;
//  2. repeatedly pick an op kind, pick operands from the pool (making a
//     partner of the right type by cast, reshape, slice or broadcast where
//     the pool has none), and add the op if its result stays within the
//     error budget below; nested kiln.cond and kiln.for regions are built
//     the same way from their own pools (they are isolated from above);
//  3. return a few of the values.
//
// Every float value carries a bound on its magnitude and an estimate of how
// far compiled code may legitimately be from the evaluator: absErr + relErr
// * |x|. Add, sub, mul, div and sqrt are correctly rounded on both sides, so
// values made only of them (and of exact ops: neg, abs, max, select, shape
// ops, casts) are bit-identical ("exact"). Transcendentals, and sums whose
// order compiled code may change, add error; an op whose result could leave
// a quarter of the e2e tolerance is not added. Comparisons, floor and
// float-to-integer casts only see exact values, so no decision flips on an
// ulp. f32 sums and matmuls only see small integers, which sum exactly in
// any order.
//
//===----------------------------------------------------------------------===//

#include "ProgramGenerator.h"

#include <algorithm>
#include <cctype>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

using namespace kiln::test;

namespace {

enum class DType {
  F32, F64, I32, I64, I1, I8, I16, UI8, UI16, UI32, UI64, F16, BF16
};

bool isFloat(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 ||
         d == DType::BF16;
}
bool isHalf(DType d) { return d == DType::F16 || d == DType::BF16; }
/// The integer types but i1.
bool isInt(DType d) { return !isFloat(d) && d != DType::I1; }
bool isUnsigned(DType d) {
  return d == DType::UI8 || d == DType::UI16 || d == DType::UI32 ||
         d == DType::UI64;
}
/// What kiln.gather and the dynamic slices take as indices.
bool isIndexType(DType d) { return d == DType::I32 || d == DType::I64; }
unsigned bitWidth(DType d) {
  switch (d) {
  case DType::I8:
  case DType::UI8:
    return 8;
  case DType::I16:
  case DType::UI16:
  case DType::F16:
  case DType::BF16:
    return 16;
  case DType::I32:
  case DType::UI32:
  case DType::F32:
    return 32;
  case DType::I1:
    return 1;
  default:
    return 64;
  }
}

const char *dtypeName(DType d) {
  switch (d) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::I1:
    return "i1";
  case DType::I8:
    return "i8";
  case DType::I16:
    return "i16";
  case DType::UI8:
    return "ui8";
  case DType::UI16:
    return "ui16";
  case DType::UI32:
    return "ui32";
  case DType::UI64:
    return "ui64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

/// The unit roundoff of a float type.
double unitRoundoff(DType d) {
  switch (d) {
  case DType::F32:
    return std::ldexp(1.0, -24);
  case DType::F16:
    return std::ldexp(1.0, -11);
  case DType::BF16:
    return std::ldexp(1.0, -8);
  default:
    return std::ldexp(1.0, -53);
  }
}
/// test/support/TensorCompare.h's kCpuTolerance.
/// f16 and bf16 compare like f64, which at their precision means bit for
/// bit: only correctly rounded ops (add, sub, mul, div, sqrt, casts of
/// exact values), which f32 arithmetic rounded once more gives exactly,
/// keep a half value usable.
double atolOf(DType d) { return d == DType::F32 ? 1e-6 : 1e-12; }
double rtolOf(DType d) { return d == DType::F32 ? 1e-5 : 1e-12; }
/// The largest magnitude an integer of the type can have.
double intRange(DType d) {
  return std::ldexp(1.0, bitWidth(d) - (isUnsigned(d) ? 0 : 1));
}

/// The literal of integer `value` in type `d`: wrapped to [0, 2^w) for an
/// unsigned type, as a cast would.
std::string intLiteral(DType d, int64_t value) {
  if (!isUnsigned(d) || value >= 0)
    return std::to_string(value);
  uint64_t bits = static_cast<uint64_t>(value);
  if (bitWidth(d) < 64)
    bits &= (uint64_t(1) << bitWidth(d)) - 1;
  return std::to_string(bits);
}
/// Below this, integer-valued floats of the type sum exactly in any order.
double exactIntLimit(DType d) {
  switch (d) {
  case DType::F32:
    return std::ldexp(1.0, 22);
  case DType::F16:
    return std::ldexp(1.0, 9);
  case DType::BF16:
    return std::ldexp(1.0, 6);
  default:
    return std::ldexp(1.0, 50);
  }
}
/// No float value may exceed this magnitude (f16's largest is 65504).
double magCap(DType d) { return d == DType::F16 ? 3e4 : 1e9; }
/// Positive values of the type stay positive (and normal) above this.
double minPositive(DType d) { return d == DType::F16 ? 1e-4 : 1e-30; }
/// Ordinary values stay below this many elements, large ones below the
/// second.
constexpr int64_t kSmallElements = 4096;
constexpr int64_t kLargeElements = 1 << 18;

using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string typeStr(const Shape &shape, DType d) {
  std::string s = "tensor<";
  for (int64_t dim : shape)
    s += std::to_string(dim) + "x";
  return s + dtypeName(d) + ">";
}

std::string arrayStr(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

/// A value of the program and what is known about it.
struct Val {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  /// |x| <= mag (for integers: a bound before wrap-around; intRange means
  /// any value).
  double mag = 0;
  /// Compiled code may be off by absErr + relErr * |x| (floats only).
  double absErr = 0, relErr = 0;
  /// x >= low > 0 everywhere when positive.
  bool positive = false;
  double low = 0;
  /// Exact, and a whole number (floats).
  bool intValued = false;
  /// A kiln.constant, which is never worth returning.
  bool literal = false;

  bool exact() const { return absErr == 0 && relErr == 0; }
  /// Of rank >= 1 and not i1: what reductions, pads and scans take.
  bool numericArray() const { return !shape.empty() && dtype != DType::I1; }
  /// What reductions, scans, pooling and matmuls take: the backends only
  /// move f16 and bf16 and compute with them elementwise.
  bool reducible() const { return numericArray() && !isHalf(dtype); }
  std::string type() const { return typeStr(shape, dtype); }
};

/// Ops and values of one block: @main's body or a region's.
struct Scope {
  std::vector<Val> pool;
  std::string text;
  std::string indent;
  bool topLevel = false;
  /// Loop bodies only use ops with exact results, so that no error can grow
  /// from iteration to iteration.
  bool exactOnly = false;
  unsigned depth = 0;
};

class Generator {
public:
  Generator(uint64_t seed, const GeneratorOptions &options)
      : rng(seed), options(options), seed(seed) {}
  std::string run();

private:
  std::mt19937_64 rng;
  GeneratorOptions options;
  uint64_t seed;
  std::vector<Scope> scopes;
  std::vector<Val> args;
  /// The text of the private functions callOp made.
  std::vector<std::string> functions;
  std::vector<Shape> baseShapes;
  unsigned nextId = 0;
  int64_t elementCap = kSmallElements;

  // --- randomness -------------------------------------------------------
  uint64_t below(uint64_t n) {
    return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng);
  }
  int64_t range(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(unsigned percent) { return below(100) < percent; }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[below(v.size())];
  }
  int64_t randomDim() {
    static const std::vector<int64_t> dims = {1,  1,  2,  3,  4,  5,  7,
                                              8,  13, 16, 17, 31, 32, 48};
    return pick(dims);
  }
  Shape randomShape(unsigned rank);
  Shape largeShape();

  // --- emission -----------------------------------------------------------
  Scope &scope() { return scopes.back(); }
  std::string freshName() { return "%v" + std::to_string(nextId++); }
  void emit(const std::string &line) {
    scope().text += scope().indent + line + "\n";
  }
  /// Whether compiled code can be trusted to match `v` within the e2e
  /// tolerance, and `v` is small enough to keep working with.
  bool usable(const Val &v) const;
  Val add(Val v) {
    scope().pool.push_back(v);
    return v;
  }
  /// Names `v` and emits `rhs` (the text after `=`) for it.
  Val define(Val v, const std::string &rhs) {
    v.name = freshName();
    emit(v.name + " = " + rhs);
    return add(v);
  }

  // --- values -------------------------------------------------------------
  std::vector<const Val *> candidates(const std::function<bool(const Val &)> &f);
  const Val *pickValue(const std::function<bool(const Val &)> &f);
  Val newArgument(const Shape &shape, DType d);
  Val constant(const Shape &shape, DType d, double value);
  Val literal(const Shape &shape, DType d);
  /// A value of the given type from nothing: an argument at the top level,
  /// an iota or a constant inside a region.
  Val freshValue(const Shape &shape, DType d);
  /// A value of the given type made from `v` (cast, reshape, slice, or
  /// its maximum broadcast), if that can be done without losing exactness.
  std::optional<Val> coerce(Val v, const Shape &shape, DType d);
  std::optional<Val> castTo(Val v, DType d);
  /// `v` or, when no usable value of its type is at hand, a fresh one.
  Val partnerFor(const Val &v);
  /// |v| + c, c in {0.5, 1}: bounded away from zero.
  std::optional<Val> makePositive(Val v);
  /// floor(2v) for an exact float: small whole numbers.
  std::optional<Val> quantize(Val v);
  /// The sum of `k` elements of `v` as `r` (shaped `shape`), quantizing `v`
  /// first where its sum would not be exact enough; false if it cannot be.
  bool sumOf(Val &v, int64_t k, const Shape &shape, Val &r);
  /// Sums of `k` products of elements of `a` and `b` (matmul, conv) as `r`,
  /// quantizing the operands where the sums would not be exact enough.
  bool productSums(Val &a, Val &b, int64_t k, Val &r);
  Val reduceAll(Val v);

  // --- ops ----------------------------------------------------------------
  bool step();
  bool unaryFloat();
  bool binaryFloat();
  bool intOp();
  bool logicOp();
  bool compareSelect();
  bool castOp();
  bool broadcastOp();
  bool transposeOp();
  bool reshapeOp();
  bool sliceOp();
  bool concatOp();
  bool reverseOp();
  bool padOp();
  bool reduceOp();
  bool argReduceOp();
  bool cumsumOp();
  bool matmulOp();
  bool convOp();
  bool reduceWindowOp();
  bool iotaOp();
  Val rowIndices();
  bool gatherOp();
  bool scatterAddOp();
  bool dynamicSliceOp();
  bool dynamicUpdateSliceOp();
  /// 1 to 3 values of the pool: the inputs of a cond or a call.
  std::vector<Val> pickInputs();
  /// Opens the scope of a cond branch or a callee, indented by `indent`,
  /// whose parameters (returned) are fresh copies of `inputs`.
  std::vector<Val> openBody(const std::vector<Val> &inputs,
                            const std::string &indent);
  bool condOp();
  /// A call of a new private function of 1 to 3 ops over 1 to 3 values.
  bool callOp();
  /// kiln.for, or with `asWhile` the same loop as a kiln.while counting
  /// its own iterations.
  bool loopOp(bool asWhile);
  /// A rank-0 i64 from the pool's integers (any value: the ops clamp it).
  Val rowIndex();
  std::optional<Val> predicate();
  void fillBlock(unsigned ops);
};

Shape Generator::randomShape(unsigned rank) {
  Shape shape;
  for (unsigned i = 0; i < rank; ++i)
    shape.push_back(randomDim());
  while (numElements(shape) > 2048) {
    auto it = std::max_element(shape.begin(), shape.end());
    *it = std::max<int64_t>(1, *it / 3);
  }
  return shape;
}

/// A shape of 65537 to ~150000 elements, rank 1 to 4, whose last dim is
/// often not a multiple of the vector width.
Shape Generator::largeShape() {
  static const std::vector<int64_t> inner = {1, 3, 16, 17, 64, 97, 131, 256};
  unsigned rank = range(1, 4);
  Shape shape;
  for (unsigned i = 1; i < rank; ++i)
    shape.push_back(pick(inner));
  int64_t rest = numElements(shape);
  int64_t lead = (65536 + rest) / rest + range(0, 1000 / rest + 1);
  shape.insert(shape.begin(), lead);
  return shape;
}

bool Generator::usable(const Val &v) const {
  if (!isFloat(v.dtype))
    return true;
  if (!(v.mag <= magCap(v.dtype)) || !std::isfinite(v.absErr) ||
      !std::isfinite(v.relErr))
    return false;
  if (scopes.back().exactOnly && !v.exact())
    return false;
  double low = v.positive ? v.low : 0.0;
  return v.absErr <= 0.25 * (atolOf(v.dtype) + rtolOf(v.dtype) * low) &&
         v.relErr <= 0.25 * rtolOf(v.dtype);
}

std::vector<const Val *>
Generator::candidates(const std::function<bool(const Val &)> &f) {
  std::vector<const Val *> out;
  for (const Val &v : scope().pool)
    if (f(v))
      out.push_back(&v);
  return out;
}

/// Prefers recent values half of the time, so that chains grow deep.
const Val *Generator::pickValue(const std::function<bool(const Val &)> &f) {
  std::vector<const Val *> c = candidates(f);
  if (c.empty())
    return nullptr;
  if (c.size() > 3 && chance(50))
    return c[c.size() - 1 - below(3)];
  return pick(c);
}

Val Generator::newArgument(const Shape &shape, DType d) {
  Val v;
  v.name = "%arg" + std::to_string(args.size());
  v.dtype = d;
  v.shape = shape;
  // randomE2EInput: floats in [-2, 2], integers in [-8, 8] wrapped (an
  // unsigned input may be one of its type's eight largest values).
  v.mag = isFloat(d)          ? 2.0
          : d == DType::I1    ? 1.0
          : isUnsigned(d)     ? intRange(d)
                              : 8.0;
  v.intValued = !isFloat(d);
  args.push_back(v);
  // Arguments are visible in @main's body only.
  scopes.front().pool.push_back(v);
  return v;
}

std::string floatLiteral(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", value);
  return buf;
}

Val Generator::constant(const Shape &shape, DType d, double value) {
  Val v;
  v.dtype = d;
  v.shape = shape;
  v.mag = std::fabs(value);
  v.positive = value > 0;
  v.low = value > 0 ? value : 0;
  v.intValued = value == std::floor(value);
  v.literal = true;
  std::string literal;
  if (isFloat(d))
    literal = floatLiteral(value);
  else if (d == DType::I1)
    literal = value != 0 ? "true" : "false";
  else
    literal = intLiteral(d, static_cast<int64_t>(value));
  if (isUnsigned(d) && value < 0) {
    v.mag = intRange(d);
    v.positive = false;
    v.low = 0;
  }
  return define(v, "kiln.constant dense<" + literal + "> : " + v.type());
}

/// A non-splat literal of small values (quarters, or integers in [-8, 8]).
Val Generator::literal(const Shape &shape, DType d) {
  Val v;
  v.dtype = d;
  v.shape = shape;
  v.literal = true;
  v.intValued = true;
  std::vector<std::string> elements;
  for (int64_t i = 0, n = numElements(shape); i < n; ++i) {
    int64_t k = range(-8, 8);
    if (d == DType::I1)
      elements.push_back(k > 0 ? "true" : "false");
    else if (isFloat(d)) {
      double x = chance(50) ? k / 4.0 : k;
      v.intValued &= x == std::floor(x);
      v.mag = std::max(v.mag, std::fabs(x));
      elements.push_back(floatLiteral(x));
    } else {
      v.mag = std::max(v.mag, k < 0 && isUnsigned(d) ? intRange(d)
                                                     : std::fabs(double(k)));
      elements.push_back(intLiteral(d, k));
    }
  }
  if (d == DType::I1)
    v.mag = 1;
  // Nested brackets, innermost dimension last.
  std::function<std::string(size_t, size_t &)> nest = [&](size_t dim,
                                                           size_t &at) {
    if (dim == shape.size())
      return elements[at++];
    std::string s = "[";
    for (int64_t i = 0; i < shape[dim]; ++i)
      s += (i ? ", " : "") + nest(dim + 1, at);
    return s + "]";
  };
  size_t at = 0;
  if (elements.empty())
    return define(v, "kiln.constant dense<> : " + v.type());
  return define(v, "kiln.constant dense<" + nest(0, at) + "> : " + v.type());
}

Val Generator::freshValue(const Shape &shape, DType d) {
  if (numElements(shape) <= 24 && chance(15))
    return literal(shape, d);
  if (scope().topLevel)
    return newArgument(shape, d);
  if (!shape.empty() && d != DType::I1 && !isHalf(d) && chance(60)) {
    Val v;
    v.dtype = d;
    v.shape = shape;
    int64_t dim = below(shape.size());
    v.mag = shape[dim];
    v.intValued = true;
    return define(v, "kiln.iota dim = " + std::to_string(dim) + " : " +
                         v.type());
  }
  static const std::vector<double> values = {0.5, -1.25, 2.0, 0.75, 1.0};
  double value = d == DType::I1 ? 1.0 : pick(values);
  if (!isFloat(d))
    value = std::round(value);
  return constant(shape, d, value);
}

std::optional<Val> Generator::castTo(Val v, DType d) {
  if (v.dtype == d)
    return v;
  Val r = v;
  r.dtype = d;
  r.positive = false;
  r.low = 0;
  if (isFloat(v.dtype) && !isFloat(d) && !v.exact())
    return std::nullopt; // the cast would round an inexact value
  if (d == DType::I1) {
    r.mag = 1;
    r.intValued = true;
  } else if (v.dtype == DType::I1) {
    r.mag = 1;
    r.intValued = true;
    r.absErr = r.relErr = 0;
  } else if (isFloat(v.dtype) && isFloat(d)) {
    if (d == DType::F64 && !v.exact())
      return std::nullopt; // f32 rounding is far beyond f64's tolerance
    if (v.mag > magCap(d))
      return std::nullopt; // beyond f16's range
    if (d != DType::F64 && !v.exact())
      r.relErr += unitRoundoff(d);
    r.intValued = v.intValued && v.mag < exactIntLimit(d);
    r.positive = v.positive && v.low >= minPositive(d);
    r.low = r.positive ? v.low : 0;
  } else if (isFloat(v.dtype)) {
    r.mag = std::min(std::floor(v.mag), intRange(d));
    r.intValued = true;
  } else if (isFloat(d)) {
    r.mag = std::min(v.mag, intRange(v.dtype));
    r.intValued = r.mag < exactIntLimit(d);
  } else if (isUnsigned(d) && !isUnsigned(v.dtype)) {
    r.mag = intRange(d); // negative values wrap to large ones
  } else {
    r.mag = std::min(v.mag, intRange(d));
  }
  if (!usable(r))
    return std::nullopt;
  return define(r, "kiln.cast " + v.name + " : " + v.type() + " to " +
                       r.type());
}

Val Generator::reduceAll(Val v) {
  if (v.shape.empty())
    return v;
  // Half precision is reduced in f32 (the backends do not reduce it): the
  // widening is exact, and so is narrowing the maximum, one of the values.
  if (isHalf(v.dtype)) {
    DType half = v.dtype;
    if (std::optional<Val> wide = castTo(v, DType::F32))
      if (std::optional<Val> back = castTo(reduceAll(*wide), half))
        return *back;
    // Not usable in f32 (never, for values usable in f16/bf16).
    return constant({}, half, 0);
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < v.shape.size(); ++i)
    dims.push_back(i);
  Val r = v;
  r.shape = {};
  // The maximum of no elements is -inf (or the most negative integer); their
  // sum, 0, is exact too.
  bool empty = numElements(v.shape) == 0;
  if (empty) {
    r.mag = 0;
    r.positive = false;
    r.low = 0;
    r.intValued = true;
  }
  const char *op = empty ? "reduce_sum" : "reduce_max";
  return define(r, std::string("kiln.") + op + " " + v.name + ", dims = " +
                       arrayStr(dims) + " : " + v.type());
}

std::optional<Val> Generator::coerce(Val v, const Shape &shape,
                                     DType d) {
  std::optional<Val> c = castTo(v, d);
  if (!c)
    return std::nullopt;
  if (c->shape == shape)
    return c;
  if (numElements(c->shape) == numElements(shape)) {
    Val r = *c;
    r.shape = shape;
    return define(r, "kiln.reshape " + c->name + " : (" + c->type() +
                         ") -> " + r.type());
  }
  if (c->shape.size() == shape.size()) {
    bool fits = true;
    for (size_t i = 0; i < shape.size(); ++i)
      fits &= c->shape[i] >= shape[i];
    if (fits) {
      std::vector<int64_t> start, limit, stride;
      for (size_t i = 0; i < shape.size(); ++i) {
        int64_t n = c->shape[i], t = shape[i];
        int64_t maxStride = t > 1 ? (n - 1) / (t - 1) : 1;
        int64_t s = range(1, std::min<int64_t>(maxStride, 3));
        int64_t span = (t - 1) * s + 1;
        int64_t b = range(0, n - span);
        start.push_back(b);
        limit.push_back(b + span);
        stride.push_back(s);
      }
      Val r = *c;
      r.shape = shape;
      return define(r, "kiln.slice " + c->name + ", start = " +
                           arrayStr(start) + ", limit = " + arrayStr(limit) +
                           ", stride = " + arrayStr(stride) + " : " +
                           c->type());
    }
  }
  if (d == DType::I1)
    return std::nullopt;
  Val s = reduceAll(*c);
  if (shape.empty())
    return s;
  Val r = s;
  r.shape = shape;
  return define(r, "kiln.broadcast_in_dim " + s.name + ", dims = [] : (" +
                       s.type() + ") -> " + r.type());
}

Val Generator::partnerFor(const Val &v) {
  if (chance(70)) {
    if (const Val *same = pickValue([&](const Val &c) {
          return c.dtype == v.dtype && c.shape == v.shape;
        }))
      return *same;
  }
  if (chance(60)) {
    if (const Val *other = pickValue([&](const Val &c) {
          return c.dtype != DType::I1 || v.dtype == DType::I1;
        }))
      if (std::optional<Val> c = coerce(*other, v.shape, v.dtype))
        return *c;
  }
  return freshValue(v.shape, v.dtype);
}

std::optional<Val> Generator::makePositive(Val v) {
  if (v.positive && v.low >= 0.25)
    return v;
  Val a = v;
  a.positive = false;
  a.intValued = v.intValued;
  a = define(a, "kiln.abs " + v.name + " : " + v.type());
  double c = chance(50) ? 1.0 : 0.5;
  Val k = constant(v.shape, v.dtype, c);
  Val r = a;
  r.mag = a.mag + c;
  r.positive = true;
  r.low = c;
  r.intValued = false;
  if (!a.exact())
    r.relErr = std::max(a.relErr, 0.0) + unitRoundoff(v.dtype);
  if (!usable(r))
    return std::nullopt;
  return define(r, "kiln.add " + a.name + ", " + k.name + " : " + v.type());
}

std::optional<Val> Generator::quantize(Val v) {
  if (!isFloat(v.dtype) || !v.exact())
    return std::nullopt;
  if (v.intValued)
    return v;
  Val two = constant(v.shape, v.dtype, 2.0);
  Val m = v;
  m.mag = 2 * v.mag;
  m.positive = false;
  m = define(m, "kiln.mul " + v.name + ", " + two.name + " : " + v.type());
  Val f = m;
  f.mag = std::floor(m.mag) + 1;
  f.intValued = true;
  return define(f, "kiln.floor " + m.name + " : " + v.type());
}

bool Generator::productSums(Val &a, Val &b, int64_t k, Val &r) {
  double u = unitRoundoff(a.dtype);
  bool exactSum = a.intValued && b.intValued &&
                  k * a.mag * b.mag < exactIntLimit(a.dtype);
  if (!exactSum && a.dtype != DType::F64) {
    std::optional<Val> qa = quantize(a), qb = quantize(b);
    if (!qa || !qb)
      return false;
    a = *qa;
    b = *qb;
  }
  r.dtype = a.dtype;
  r.literal = false;
  r.positive = false;
  r.low = 0;
  r.mag = k * a.mag * b.mag;
  r.intValued = a.intValued && b.intValued && r.mag < exactIntLimit(a.dtype);
  if (r.intValued || k == 1) {
    r.absErr = a.absErr * b.mag + b.absErr * a.mag;
    r.relErr = k == 1 && !r.intValued
                   ? a.relErr + b.relErr + (a.exact() && b.exact() ? 0 : u)
                   : 0;
  } else {
    r.absErr = k * (a.absErr * b.mag + b.absErr * a.mag +
                    (a.relErr + b.relErr) * a.mag * b.mag) +
               u * a.mag * b.mag * k * std::sqrt(double(k));
    r.relErr = 0;
  }
  return true;
}

// --- elementwise ------------------------------------------------------------

bool Generator::unaryFloat() {
  const Val *x = pickValue([](const Val &v) { return isFloat(v.dtype); });
  if (!x)
    return false;
  Val v = *x;
  double u = unitRoundoff(v.dtype);
  /// The absolute error of the operand, wherever it is.
  double inErr = v.absErr + v.relErr * v.mag;
  Val r = v;
  r.positive = false;
  r.low = 0;
  r.intValued = false;
  std::string op;
  switch (below(16)) {
  case 0:
    op = "neg";
    r.intValued = v.intValued;
    break;
  case 1:
    op = "abs";
    r.intValued = v.intValued;
    break;
  case 2:
    op = "relu";
    r.intValued = v.intValued;
    break;
  case 3:
  case 4:
    op = "tanh";
    r.mag = std::min(1.0, v.mag);
    r.absErr = inErr;
    r.relErr = 4 * u;
    break;
  case 5:
    op = "sigmoid";
    r.mag = 1;
    r.positive = v.mag < 30;
    r.low = 1 / (1 + std::exp(v.mag));
    r.absErr = 0.25 * inErr;
    r.relErr = 4 * u;
    break;
  case 6:
    op = chance(50) ? "sin" : "cos";
    r.mag = 1;
    r.absErr = inErr + 4 * u * std::max(1.0, v.mag);
    r.relErr = 4 * u;
    break;
  case 7:
    op = chance(50) ? "atan" : "erf";
    r.mag = op == "atan" ? std::min(v.mag, 1.6) : 1.0;
    r.absErr = 1.13 * inErr;
    r.relErr = 4 * u;
    break;
  case 8:
  case 9: {
    if (v.mag > 4)
      return false;
    op = "exp";
    r.mag = std::exp(v.mag);
    r.positive = true;
    r.low = std::exp(-v.mag);
    r.absErr = 0;
    r.relErr = 4 * u + inErr;
    break;
  }
  case 10:
  case 11: {
    std::optional<Val> p = makePositive(v);
    if (!p)
      return false;
    v = *p;
    if (chance(50)) {
      op = "log";
      r.mag = std::max(std::log(v.mag), -std::log(v.low));
      r.absErr = v.absErr / v.low + v.relErr + 2 * u;
      r.relErr = 4 * u;
    } else {
      op = chance(50) ? "sqrt" : "rsqrt";
      bool sqrtOp = op == "sqrt";
      r.mag = sqrtOp ? std::sqrt(v.mag) : 1 / std::sqrt(v.low);
      r.positive = true;
      r.low = sqrtOp ? std::sqrt(v.low) : 1 / std::sqrt(v.mag);
      r.absErr = 0;
      // sqrt is correctly rounded: exact from an exact operand.
      r.relErr = (v.exact() && sqrtOp) ? 0
                                       : (4 * u + v.absErr / (2 * v.low) +
                                          v.relErr / 2);
    }
    break;
  }
  case 12:
  case 13: {
    if (!v.exact())
      return false;
    static const char *ops[] = {"floor", "ceil", "round", "sign"};
    op = ops[below(4)];
    r.mag = op == std::string("sign") ? 1 : std::floor(v.mag) + 1;
    r.intValued = true;
    break;
  }
  default: {
    // Square a bounded value: exact ops only, for loop bodies.
    if (v.mag > 1e3)
      return false;
    r.mag = v.mag * v.mag;
    r.relErr = v.exact() ? 0 : 2 * v.relErr + u;
    r.absErr = 2 * v.absErr * v.mag;
    r.intValued = v.intValued && r.mag < exactIntLimit(v.dtype);
    r.positive = false;
    if (!usable(r))
      return false;
    define(r, "kiln.mul " + v.name + ", " + v.name + " : " + v.type());
    return true;
  }
  }
  if (!usable(r))
    return false;
  define(r, "kiln." + op + " " + v.name + " : " + v.type());
  return true;
}

bool Generator::binaryFloat() {
  const Val *x = pickValue([](const Val &v) { return isFloat(v.dtype); });
  if (!x)
    return false;
  Val a = *x;
  Val b = partnerFor(a);
  double u = unitRoundoff(a.dtype);
  bool exactIn = a.exact() && b.exact();
  Val r = a;
  r.positive = false;
  r.low = 0;
  r.intValued = false;
  std::string op;
  switch (below(7)) {
  case 0:
  case 1: {
    bool sum = chance(50);
    op = sum ? "add" : "sub";
    r.mag = a.mag + b.mag;
    if (sum && a.positive && b.positive) {
      r.positive = true;
      r.low = a.low + b.low;
      r.absErr = a.absErr + b.absErr;
      r.relErr = std::max(a.relErr, b.relErr) + (exactIn ? 0 : u);
    } else {
      r.absErr = a.absErr + b.absErr + a.relErr * a.mag + b.relErr * b.mag;
      r.relErr = exactIn ? 0 : u;
    }
    r.intValued = a.intValued && b.intValued &&
                  r.mag < exactIntLimit(a.dtype);
    break;
  }
  case 2:
    op = "mul";
    r.mag = a.mag * b.mag;
    r.relErr = a.relErr + b.relErr + (exactIn ? 0 : u);
    r.absErr = a.absErr * b.mag + b.absErr * a.mag;
    r.positive = a.positive && b.positive;
    r.low = r.positive ? a.low * b.low : 0;
    r.intValued = a.intValued && b.intValued &&
                  r.mag < exactIntLimit(a.dtype);
    break;
  case 3: {
    op = chance(50) ? "max" : "min";
    r.mag = std::max(a.mag, b.mag);
    r.absErr = std::max(a.absErr, b.absErr);
    r.relErr = std::max(a.relErr, b.relErr);
    r.intValued = a.intValued && b.intValued;
    if (op == "max" && (a.positive || b.positive)) {
      r.positive = true;
      r.low = std::max(a.positive ? a.low : 0, b.positive ? b.low : 0);
    } else if (op == "min" && a.positive && b.positive) {
      r.positive = true;
      r.low = std::min(a.low, b.low);
    }
    break;
  }
  case 4:
  case 5: {
    std::optional<Val> d = makePositive(b);
    if (!d)
      return false;
    b = *d;
    op = "div";
    r.mag = a.mag / b.low;
    r.relErr = a.relErr + b.relErr + (a.exact() && b.exact() ? 0 : u);
    r.absErr = a.absErr / b.low + b.absErr * a.mag / (b.low * b.low);
    r.positive = a.positive;
    r.low = a.positive ? a.low / b.mag : 0;
    break;
  }
  default: {
    // pow(|a| + 1, b) with a bounded exponent.
    if (b.mag > 2 || !a.exact() || !b.exact())
      return false;
    std::optional<Val> p = makePositive(a);
    if (!p || p->low < 1)
      return false;
    a = *p;
    op = "pow";
    r.mag = std::pow(a.mag, b.mag);
    r.positive = true;
    r.low = std::pow(a.mag, -b.mag);
    r.absErr = 0;
    r.relErr = 8 * u;
    break;
  }
  }
  if (!usable(r))
    return false;
  define(r, "kiln." + op + " " + a.name + ", " + b.name + " : " + a.type());
  return true;
}

bool Generator::intOp() {
  const Val *x = pickValue([](const Val &v) { return isInt(v.dtype); });
  if (!x)
    return false;
  Val a = *x;
  Val r = a;
  double full = intRange(a.dtype);
  auto clampMag = [&](double m) { return std::min(m, full); };
  if (chance(30)) {
    static const char *ops[] = {"neg", "abs", "relu", "sign"};
    std::string op = ops[below(4)];
    if (op == "sign")
      r.mag = 1;
    define(r, "kiln." + op + " " + a.name + " : " + a.type());
    return true;
  }
  Val b = partnerFor(a);
  std::string op;
  switch (below(6)) {
  case 0:
    op = chance(50) ? "add" : "sub";
    r.mag = clampMag(a.mag + b.mag);
    break;
  case 1:
    op = "mul";
    r.mag = clampMag(a.mag * b.mag);
    break;
  case 2:
    op = chance(50) ? "max" : "min";
    r.mag = std::max(a.mag, b.mag);
    break;
  case 3:
  case 4: {
    // Divide by |b| + 1, which is never 0 (|INT_MIN| + 1 is INT_MIN + 1)
    // nor -1; an unsigned b by b | 1, odd and so never 0.
    Val one = constant(b.shape, b.dtype, 1);
    if (isUnsigned(b.dtype)) {
      b = define(b, "kiln.or " + b.name + ", " + one.name + " : " +
                        b.type());
    } else {
      Val abs = b;
      abs = define(abs, "kiln.abs " + b.name + " : " + b.type());
      Val d = abs;
      d.mag = clampMag(b.mag + 1);
      d = define(d, "kiln.add " + abs.name + ", " + one.name + " : " +
                        b.type());
      b = d;
    }
    op = chance(60) ? "div" : "rem";
    break;
  }
  default:
    op = pick(std::vector<std::string>{"and", "or", "xor"});
    r.mag = full;
    break;
  }
  define(r, "kiln." + op + " " + a.name + ", " + b.name + " : " + a.type());
  return true;
}

bool Generator::logicOp() {
  const Val *x = pickValue([](const Val &v) { return v.dtype == DType::I1; });
  if (!x)
    return false;
  Val a = *x;
  if (chance(30)) {
    define(a, "kiln.not " + a.name + " : " + a.type());
    return true;
  }
  Val b = partnerFor(a);
  std::string op = pick(std::vector<std::string>{"and", "or", "xor"});
  define(a, "kiln." + op + " " + a.name + ", " + b.name + " : " + a.type());
  return true;
}

bool Generator::compareSelect() {
  const Val *x = pickValue([](const Val &v) {
    return v.dtype != DType::I1 && v.exact();
  });
  if (!x)
    return false;
  Val a = *x;
  Val b = partnerFor(a);
  if (!b.exact())
    return false;
  static const char *directions[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  Val p = a;
  p.dtype = DType::I1;
  p.mag = 1;
  p.positive = false;
  p.intValued = true;
  p = define(p, std::string("kiln.compare ") + directions[below(6)] + ", " +
                    a.name + ", " + b.name + " : " + a.type());
  if (chance(20))
    return true; // an i1 value for later logic ops and casts
  // Select between two values of one (any) type of this shape.
  const Val *t = pickValue([&](const Val &v) {
    return v.shape == p.shape && v.dtype != DType::I1;
  });
  Val onTrue = t ? *t : a;
  Val onFalse = partnerFor(onTrue);
  Val pred = p;
  if (chance(15)) {
    // A rank-0 predicate selects one operand whole.
    if (std::optional<Val> s = predicate())
      pred = *s;
  }
  Val r = onTrue;
  r.mag = std::max(onTrue.mag, onFalse.mag);
  r.absErr = std::max(onTrue.absErr, onFalse.absErr);
  r.relErr = std::max(onTrue.relErr, onFalse.relErr);
  r.positive = onTrue.positive && onFalse.positive;
  r.low = r.positive ? std::min(onTrue.low, onFalse.low) : 0;
  r.intValued = onTrue.intValued && onFalse.intValued;
  define(r, "kiln.select " + pred.name + ", " + onTrue.name + ", " +
                onFalse.name + " : " + pred.type() + ", " + r.type());
  return true;
}

bool Generator::castOp() {
  const Val *x = pickValue([](const Val &) { return true; });
  if (!x)
    return false;
  static const DType types[] = {DType::F32, DType::F64, DType::I32,
                                DType::I64, DType::I1,  DType::F32,
                                DType::F64, DType::I32, DType::I64,
                                DType::I1,  DType::I8,  DType::I16,
                                DType::UI8, DType::UI16, DType::UI32,
                                DType::UI64, DType::F16, DType::BF16};
  DType d = types[below(std::size(types))];
  if (d == x->dtype)
    return false;
  return castTo(*x, d).has_value();
}

// --- shapes -----------------------------------------------------------------

bool Generator::broadcastOp() {
  const Val *x = pickValue([](const Val &v) { return v.shape.size() < 4; });
  if (!x)
    return false;
  Val v = *x;
  unsigned rank = range(v.shape.size(), 4);
  if (rank == v.shape.size() &&
      std::none_of(v.shape.begin(), v.shape.end(),
                   [](int64_t d) { return d == 1; }))
    ++rank;
  if (rank > 4)
    return false;
  // Choose which result dims the operand's map to.
  std::vector<int64_t> positions(rank);
  for (unsigned i = 0; i < rank; ++i)
    positions[i] = i;
  std::shuffle(positions.begin(), positions.end(), rng);
  positions.resize(v.shape.size());
  std::sort(positions.begin(), positions.end());
  // -1: a new dim, of any size.
  Shape shape(rank, -1);
  for (size_t i = 0; i < positions.size(); ++i)
    shape[positions[i]] =
        v.shape[i] == 1 && chance(60) ? randomDim() : v.shape[i];
  for (int64_t &d : shape)
    if (d == -1)
      d = randomDim();
  if (numElements(shape) > std::max(elementCap, numElements(v.shape)))
    return false;
  Val r = v;
  r.shape = shape;
  define(r, "kiln.broadcast_in_dim " + v.name + ", dims = " +
                arrayStr(positions) + " : (" + v.type() + ") -> " + r.type());
  return true;
}

bool Generator::transposeOp() {
  const Val *x = pickValue([](const Val &v) { return v.shape.size() >= 2; });
  if (!x)
    return false;
  Val v = *x;
  std::vector<int64_t> perm(v.shape.size());
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  Val r = v;
  for (size_t i = 0; i < perm.size(); ++i)
    r.shape[i] = v.shape[perm[i]];
  define(r, "kiln.transpose " + v.name + ", permutation = " + arrayStr(perm) +
                " : " + v.type());
  return true;
}

bool Generator::reshapeOp() {
  const Val *x = pickValue([](const Val &) { return true; });
  if (!x)
    return false;
  Val v = *x;
  int64_t n = numElements(v.shape);
  std::vector<int64_t> factors;
  for (int64_t m = n, p = 2; m > 1;) {
    if (p * p > m) {
      factors.push_back(m);
      break;
    }
    if (m % p == 0) {
      factors.push_back(p);
      m /= p;
    } else {
      ++p;
    }
  }
  unsigned rank = n == 1 ? range(0, 3) : range(1, 4);
  Shape shape(rank, 1);
  std::shuffle(factors.begin(), factors.end(), rng);
  for (int64_t f : factors)
    shape[below(rank)] *= f;
  if (n == 0) {
    // No elements: one dim 0, the others anything.
    for (int64_t &d : shape)
      d = range(1, 5);
    shape[below(rank)] = 0;
  }
  Val r = v;
  r.shape = shape;
  define(r, "kiln.reshape " + v.name + " : (" + v.type() + ") -> " +
                r.type());
  return true;
}

bool Generator::sliceOp() {
  const Val *x = pickValue([](const Val &v) { return !v.shape.empty(); });
  if (!x)
    return false;
  Val v = *x;
  std::vector<int64_t> start, limit, stride;
  Shape shape;
  for (int64_t n : v.shape) {
    int64_t b = chance(50) || n == 0 ? 0 : range(0, n - 1);
    int64_t e = chance(50) || n == 0 ? n : range(b + 1, n);
    // Now and then an empty slice, a zero-size value for the ops after.
    if (chance(options.zeroSizePercent))
      e = b;
    int64_t s = chance(60) ? 1 : range(2, 4);
    start.push_back(b);
    limit.push_back(e);
    stride.push_back(s);
    shape.push_back((e - b + s - 1) / s);
  }
  Val r = v;
  r.shape = shape;
  define(r, "kiln.slice " + v.name + ", start = " + arrayStr(start) +
                ", limit = " + arrayStr(limit) + ", stride = " +
                arrayStr(stride) + " : " + v.type());
  return true;
}

bool Generator::concatOp() {
  const Val *x = pickValue([](const Val &v) { return !v.shape.empty(); });
  if (!x)
    return false;
  Val a = *x;
  int64_t dim = below(a.shape.size());
  std::vector<Val> inputs = {a};
  unsigned count = range(1, 2);
  for (unsigned i = 0; i < count; ++i) {
    // Any value that matches except along `dim`, else a slice of `a`.
    const Val *m = pickValue([&](const Val &v) {
      if (v.dtype != a.dtype || v.shape.size() != a.shape.size())
        return false;
      for (size_t d = 0; d < a.shape.size(); ++d)
        if ((int64_t)d != dim && v.shape[d] != a.shape[d])
          return false;
      return true;
    });
    if (m && chance(70)) {
      inputs.push_back(*m);
      continue;
    }
    Shape shape = a.shape;
    shape[dim] = a.shape[dim] == 0 ? range(0, 3) : range(1, a.shape[dim]);
    std::optional<Val> s = coerce(a, shape, a.dtype);
    if (!s)
      return false;
    inputs.push_back(*s);
  }
  Val r = a;
  r.shape[dim] = 0;
  std::string names, types;
  for (const Val &v : inputs) {
    r.shape[dim] += v.shape[dim];
    r.mag = std::max(r.mag, v.mag);
    r.absErr = std::max(r.absErr, v.absErr);
    r.relErr = std::max(r.relErr, v.relErr);
    r.positive &= v.positive;
    r.low = std::min(r.low, v.low);
    r.intValued &= v.intValued;
    names += (names.empty() ? "" : ", ") + v.name;
    types += (types.empty() ? "" : ", ") + v.type();
  }
  if (!r.positive)
    r.low = 0;
  if (numElements(r.shape) > std::max(elementCap, 2 * numElements(a.shape)))
    return false;
  define(r, "kiln.concat " + names + " dim = " + std::to_string(dim) + " : " +
                types);
  return true;
}

bool Generator::reverseOp() {
  const Val *x = pickValue([](const Val &v) { return !v.shape.empty(); });
  if (!x)
    return false;
  std::vector<int64_t> dims;
  for (size_t d = 0; d < x->shape.size(); ++d)
    if (chance(50))
      dims.push_back(d);
  std::shuffle(dims.begin(), dims.end(), rng);
  Val v = *x;
  define(v, "kiln.reverse " + v.name + ", dims = " + arrayStr(dims) + " : " +
                v.type());
  return true;
}

bool Generator::padOp() {
  const Val *x = pickValue([](const Val &v) { return v.numericArray(); });
  if (!x)
    return false;
  Val v = *x;
  double value = isFloat(v.dtype) ? pick(std::vector<double>{0, 0.5, -1})
                                  : pick(std::vector<double>{0, 3, -1});
  Val pv = constant({}, v.dtype, value);
  std::vector<int64_t> low, high, interior;
  Val r = v;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    low.push_back(range(0, 2));
    high.push_back(range(0, 2));
    interior.push_back(chance(30) ? range(1, 2) : 0);
    r.shape[d] = v.shape[d] + low[d] + high[d] +
                 std::max<int64_t>(v.shape[d] - 1, 0) * interior[d];
  }
  if (numElements(r.shape) > std::max(elementCap, numElements(v.shape)) * 2)
    return false;
  r.mag = std::max(v.mag, pv.mag);
  r.positive = v.positive && pv.positive;
  r.low = r.positive ? std::min(v.low, pv.low) : 0;
  r.intValued = v.intValued && pv.intValued;
  define(r, "kiln.pad " + v.name + ", " + pv.name + ", low = " +
                arrayStr(low) + ", high = " + arrayStr(high) +
                ", interior = " + arrayStr(interior) + " : " + v.type() +
                ", " + pv.type());
  return true;
}

// --- reductions and contractions --------------------------------------------

/// The error of a float sum of `k` terms like `v` whose order compiled code
/// may choose; false where it is too large to check (the caller then makes
/// the terms whole numbers first).
static bool sumError(const Val &v, int64_t k, Val &r) {
  if (k == 0) {
    // The sum of nothing: exactly 0, whatever v's sign.
    r.mag = 0;
    r.absErr = r.relErr = 0;
    r.positive = false;
    r.low = 0;
    r.intValued = true;
    return true;
  }
  double u = unitRoundoff(v.dtype);
  r.intValued = v.intValued && k * v.mag < exactIntLimit(v.dtype);
  r.mag = k * v.mag;
  if (k <= 1)
    return true;
  if (r.intValued) {
    r.absErr = r.relErr = 0;
    return true;
  }
  if (v.dtype != DType::F64)
    return false;
  if (v.positive) {
    r.absErr = k * v.absErr;
    r.relErr = v.relErr + u * k;
    r.low = k * v.low;
  } else {
    r.positive = false;
    r.low = 0;
    r.absErr = k * (v.absErr + v.relErr * v.mag) +
               u * v.mag * k * std::sqrt(double(k));
    r.relErr = 0;
  }
  return true;
}

bool Generator::sumOf(Val &v, int64_t k, const Shape &shape, Val &r) {
  if (sumError(v, k, r))
    return true;
  std::optional<Val> q = quantize(v);
  if (!q)
    return false;
  v = *q;
  r = v;
  r.shape = shape;
  return sumError(v, k, r);
}

bool Generator::reduceOp() {
  const Val *x = pickValue([](const Val &v) { return v.reducible(); });
  if (!x)
    return false;
  Val v = *x;
  std::vector<int64_t> dims;
  int64_t k = 1;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (chance(50)) {
      dims.push_back(d);
      k *= v.shape[d];
    }
  if (dims.empty()) {
    dims.push_back(below(v.shape.size()));
    k = v.shape[dims[0]];
  }
  Shape shape;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (std::find(dims.begin(), dims.end(), (int64_t)d) == dims.end())
      shape.push_back(v.shape[d]);
  std::shuffle(dims.begin(), dims.end(), rng);
  unsigned kind = below(3);
  // Over no elements only the sum is finite and exact (mean is NaN, max
  // -inf or the most negative integer).
  if ((kind == 2 && !isFloat(v.dtype)) || k == 0)
    kind = 0;
  Val r = v;
  r.shape = shape;
  if (kind == 1) {
    define(r, "kiln.reduce_max " + v.name + ", dims = " + arrayStr(dims) +
                  " : " + v.type());
    return true;
  }
  if (isFloat(v.dtype)) {
    if (!sumOf(v, k, shape, r))
      return false;
    if (kind == 2) {
      // The mean divides the sum by k, natively maybe as a product with
      // 1/k.
      r.mag = v.mag;
      r.absErr /= k;
      r.low = r.positive ? v.low : 0;
      if (k > 1)
        r.relErr += 2 * unitRoundoff(v.dtype);
      r.intValued = false;
    }
  } else {
    r.mag = std::min(k * v.mag, intRange(v.dtype));
  }
  if (!usable(r))
    return false;
  define(r, std::string(kind == 2 ? "kiln.reduce_mean " : "kiln.reduce_sum ") +
                v.name + ", dims = " + arrayStr(dims) + " : " + v.type());
  return true;
}

bool Generator::argReduceOp() {
  const Val *x = pickValue(
      [](const Val &v) { return v.reducible() && v.exact(); });
  if (!x)
    return false;
  Val v = *x;
  int64_t dim = below(v.shape.size());
  if (v.shape[dim] == 0)
    return false; // no index to return
  Val r;
  r.dtype = DType::I64;
  r.shape = v.shape;
  r.shape.erase(r.shape.begin() + dim);
  r.mag = v.shape[dim];
  r.intValued = true;
  define(r, std::string(chance(50) ? "kiln.argmax " : "kiln.argmin ") +
                v.name + ", dim = " + std::to_string(dim) +
                (chance(30) ? " select_last_index" : "") + " : " + v.type());
  return true;
}

bool Generator::cumsumOp() {
  const Val *x = pickValue([](const Val &v) { return v.reducible(); });
  if (!x)
    return false;
  Val v = *x;
  int64_t dim = below(v.shape.size());
  Val r = v;
  if (isFloat(v.dtype)) {
    if (!sumError(v, v.shape[dim], r)) {
      std::optional<Val> q = quantize(v);
      if (!q)
        return false;
      v = *q;
      r = v;
      if (!sumError(v, v.shape[dim], r))
        return false;
    }
    r.shape = v.shape;
    // An exclusive sum starts at 0.
    r.positive = false;
    r.low = 0;
  } else {
    r.mag = std::min(v.shape[dim] * v.mag, intRange(v.dtype));
  }
  if (!usable(r))
    return false;
  define(r, "kiln.cumsum " + v.name + ", dim = " + std::to_string(dim) +
                (chance(30) ? " exclusive" : "") +
                (chance(30) ? " reverse" : "") + " : " + r.type());
  return true;
}

bool Generator::matmulOp() {
  static const std::vector<int64_t> sizes = {1, 2, 3, 7, 16, 17, 31, 33, 64, 65};
  const Val *x = pickValue([](const Val &v) {
    return (v.shape.size() == 2 || v.shape.size() == 3) &&
           v.dtype != DType::I1 && !isHalf(v.dtype);
  });
  Val a;
  if (x && chance(70)) {
    a = *x;
  } else if (scope().topLevel) {
    DType d = chance(70) ? DType::F32 : pick(std::vector<DType>{
                                            DType::F64, DType::I32});
    Shape shape = {pick(sizes), pick(sizes)};
    if (chance(30))
      shape.insert(shape.begin(), range(1, 4));
    a = newArgument(shape, d);
  } else {
    return false;
  }
  size_t rank = a.shape.size();
  int64_t k = a.shape[rank - 1], n = pick(sizes);
  Shape rhsShape = a.shape;
  rhsShape[rank - 2] = k;
  rhsShape[rank - 1] = n;
  int64_t work = numElements(a.shape) * n;
  if (work > (1 << 21))
    return false;
  const Val *y = pickValue([&](const Val &v) {
    return v.dtype == a.dtype && v.shape == rhsShape;
  });
  Val b = y && chance(60) ? *y : freshValue(rhsShape, a.dtype);
  Val r = a;
  r.shape[rank - 1] = n;
  r.positive = false;
  r.low = 0;
  if (isFloat(a.dtype)) {
    if (!productSums(a, b, k, r))
      return false;
  } else {
    r.mag = std::min(k * a.mag * b.mag, intRange(a.dtype));
  }
  if (!usable(r))
    return false;
  define(r, "kiln.matmul " + a.name + ", " + b.name + " : " + a.type() +
                ", " + b.type());
  return true;
}

/// Convolutions of 1 to 3 spatial dims with random strides, paddings,
/// dilations of both kinds and groups, summing like a matmul of
/// C / groups * prod(K) terms.
bool Generator::convOp() {
  const Val *x = pickValue([](const Val &v) {
    // Compiled convolutions take f32 and f64.
    return v.shape.size() >= 3 && v.shape.size() <= 5 &&
           (v.dtype == DType::F32 || v.dtype == DType::F64) &&
           v.shape[1] >= 1;
  });
  Val a;
  if (x && chance(60)) {
    a = *x;
  } else if (scope().topLevel) {
    Shape shape = {range(1, 2), pick(std::vector<int64_t>{1, 2, 3, 4, 8})};
    unsigned spatial = range(1, 3);
    for (unsigned i = 0; i < spatial; ++i)
      shape.push_back(range(1, spatial == 3 ? 6 : 12));
    a = newArgument(shape, chance(70) ? DType::F32 : DType::F64);
  } else {
    return false;
  }
  size_t spatial = a.shape.size() - 2;
  int64_t channels = a.shape[1];
  std::vector<int64_t> divisors;
  for (int64_t g = 1; g <= channels; ++g)
    if (channels % g == 0)
      divisors.push_back(g);
  int64_t groups = chance(60) ? 1 : pick(divisors);
  int64_t outChannels = groups * range(1, 3);
  Shape weightShape = {outChannels, channels / groups};
  std::vector<int64_t> strides, low, high, lhsDilation, rhsDilation;
  Shape resultShape = {a.shape[0], outChannels};
  int64_t terms = channels / groups;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t k = pick(std::vector<int64_t>{1, 1, 2, 3, 5});
    int64_t s = chance(60) ? 1 : range(2, 3);
    int64_t pl = range(0, 2), ph = range(0, 2);
    int64_t ld = chance(80) ? 1 : 2, rd = chance(75) ? 1 : 2;
    int64_t n = a.shape[i + 2];
    int64_t padded = (n == 0 ? 0 : (n - 1) * ld + 1) + pl + ph;
    int64_t span = (k - 1) * rd + 1;
    // No placements without input (KilnOps.td), whatever the padding.
    int64_t e = n > 0 && padded >= span ? (padded - span) / s + 1 : 0;
    weightShape.push_back(k);
    strides.push_back(s);
    low.push_back(pl);
    high.push_back(ph);
    lhsDilation.push_back(ld);
    rhsDilation.push_back(rd);
    resultShape.push_back(e);
    terms *= k;
  }
  if (numElements(resultShape) * std::max<int64_t>(terms, 1) > (1 << 21) ||
      numElements(resultShape) > std::max(elementCap, numElements(a.shape)))
    return false;
  const Val *y = pickValue([&](const Val &v) {
    return v.dtype == a.dtype && v.shape == weightShape;
  });
  Val b = y && chance(50) ? *y : freshValue(weightShape, a.dtype);
  Val r = a;
  r.shape = resultShape;
  if (!productSums(a, b, std::max<int64_t>(terms, 1), r))
    return false;
  if (!usable(r))
    return false;
  define(r, "kiln.conv " + a.name + ", " + b.name + ", strides = " +
                arrayStr(strides) + ", padding_low = " + arrayStr(low) +
                ", padding_high = " + arrayStr(high) + ", lhs_dilation = " +
                arrayStr(lhsDilation) + ", rhs_dilation = " +
                arrayStr(rhsDilation) + ", groups = " +
                std::to_string(groups) + " : " + a.type() + ", " + b.type());
  return true;
}

/// Max and sum pooling over any dims. A float max pools without padding
/// (a window entirely in padding gives -inf); sums follow reduce_sum's
/// error model.
bool Generator::reduceWindowOp() {
  const Val *x = pickValue([](const Val &v) { return v.reducible(); });
  if (!x)
    return false;
  Val v = *x;
  bool max = chance(50);
  std::vector<int64_t> window, strides, low, high, dilations;
  Shape shape;
  int64_t k = 1;
  for (int64_t n : v.shape) {
    bool pooled = chance(60);
    int64_t w = pooled ? range(1, 3) : 1;
    int64_t d = pooled && chance(25) ? 2 : 1;
    int64_t s = pooled ? range(1, 2) : 1;
    int64_t pl = pooled && !(max && isFloat(v.dtype)) ? range(0, 1) : 0;
    int64_t ph = pooled && !(max && isFloat(v.dtype)) ? range(0, 1) : 0;
    int64_t span = (w - 1) * d + 1;
    int64_t padded = n + pl + ph;
    if (padded > 0 && span > padded) {
      // Too wide for this dim: no window there.
      w = 1;
      d = 1;
      span = 1;
    }
    window.push_back(w);
    dilations.push_back(d);
    strides.push_back(s);
    low.push_back(pl);
    high.push_back(ph);
    shape.push_back(padded == 0 ? 0 : (padded - span) / s + 1);
    k *= w;
  }
  Val r = v;
  r.shape = shape;
  if (max) {
    if (!isFloat(v.dtype) &&
        std::any_of(low.begin(), low.end(), [](int64_t p) { return p; }))
      r.mag = intRange(v.dtype); // the padding's smallest integer
    if (!isFloat(v.dtype) &&
        std::any_of(high.begin(), high.end(), [](int64_t p) { return p; }))
      r.mag = intRange(v.dtype);
    r.positive = false;
    r.low = 0;
  } else if (isFloat(v.dtype)) {
    if (!sumOf(v, k, shape, r))
      return false;
    // Windows partly in the padding sum fewer elements.
    r.positive = false;
    r.low = 0;
  } else {
    r.mag = std::min(k * v.mag, intRange(v.dtype));
  }
  if (!usable(r) || numElements(shape) > std::max(elementCap,
                                                  numElements(v.shape)))
    return false;
  define(r, std::string("kiln.reduce_window ") + v.name + ", kind = " +
                (max ? "max" : "sum") + ", window = " + arrayStr(window) +
                ", strides = " + arrayStr(strides) + ", padding_low = " +
                arrayStr(low) + ", padding_high = " + arrayStr(high) +
                ", dilations = " + arrayStr(dilations) + " : " + v.type());
  return true;
}

bool Generator::iotaOp() {
  const Val *x = pickValue([](const Val &v) { return !v.shape.empty(); });
  Shape shape = x ? x->shape : randomShape(range(1, 3));
  DType d = pick(std::vector<DType>{DType::F32, DType::F64, DType::I32,
                                    DType::I64});
  Val v;
  v.dtype = d;
  v.shape = shape;
  int64_t dim = below(shape.size());
  v.mag = shape[dim];
  v.intValued = true;
  define(v, "kiln.iota dim = " + std::to_string(dim) + " : " + v.type());
  return true;
}

// --- gathers and dynamic slices --------------------------------------------

Val Generator::rowIndex() {
  const Val *x = pickValue([](const Val &v) { return isInt(v.dtype); });
  if (x) {
    Val v = *x;
    if (std::optional<Val> wide = castTo(v, DType::I64))
      return reduceAll(*wide);
  }
  return freshValue({}, DType::I64);
}

/// Indices for a gather or a scatter: a small integer value of the
/// program (any values: they clamp), or a fresh vector of 1 to 8.
Val Generator::rowIndices() {
  const Val *y = pickValue([](const Val &v) {
    return isIndexType(v.dtype) && v.shape.size() <= 2 &&
           numElements(v.shape) <= 64;
  });
  return y ? *y
           : freshValue(Shape{range(1, 9)},
                        chance(50) ? DType::I32 : DType::I64);
}

bool Generator::gatherOp() {
  const Val *x = pickValue([](const Val &v) { return !v.shape.empty(); });
  if (!x)
    return false;
  Val table = *x;
  if (table.shape[0] == 0)
    return false; // a gather needs a row to clamp to
  Val indices = rowIndices();
  Val r = table;
  r.shape = indices.shape;
  r.shape.insert(r.shape.end(), table.shape.begin() + 1, table.shape.end());
  if (r.shape.size() > 4 ||
      numElements(r.shape) > std::max(elementCap, numElements(table.shape)))
    return false;
  define(r, "kiln.gather " + table.name + ", " + indices.name + " : " +
                table.type() + ", " + indices.type());
  return true;
}

/// `a` and `b` as one summand of a sum of both: the larger bounds and
/// errors, whole numbers and positive only if both are.
static Val summandOf(const Val &a, const Val &b) {
  Val c = a;
  c.mag = std::max(a.mag, b.mag);
  c.absErr = std::max(a.absErr, b.absErr);
  c.relErr = std::max(a.relErr, b.relErr);
  c.intValued = a.intValued && b.intValued;
  c.positive = a.positive && b.positive;
  c.low = c.positive ? std::min(a.low, b.low) : 0;
  return c;
}

bool Generator::scatterAddOp() {
  const Val *x = pickValue([](const Val &v) { return v.numericArray(); });
  if (!x)
    return false;
  Val table = *x;
  if (table.shape[0] == 0)
    return false; // a scatter needs a row to clamp to
  Val indices = rowIndices();
  Shape shape = indices.shape;
  shape.insert(shape.end(), table.shape.begin() + 1, table.shape.end());
  if (shape.size() > 4 ||
      numElements(shape) > std::max(elementCap, numElements(table.shape)))
    return false;
  const Val *z = pickValue([&](const Val &c) {
    return c.dtype != DType::I1 && c.dtype != DType::F16 &&
           c.dtype != DType::BF16;
  });
  std::optional<Val> updates =
      z ? coerce(*z, shape, table.dtype) : std::optional<Val>();
  if (!updates)
    updates = freshValue(shape, table.dtype);
  // A row of the result is its table row plus up to n updates, added in
  // the indices' order on both sides (kiln-sparse-updates may reorder the
  // additions of scaled updates): a sum of n + 1 terms.
  int64_t k = numElements(indices.shape) + 1;
  Val r = table;
  if (isFloat(table.dtype)) {
    r = summandOf(table, *updates);
    r.shape = table.shape;
    if (!sumError(summandOf(table, *updates), k, r)) {
      if (isHalf(table.dtype))
        return false;
      std::optional<Val> qt = quantize(table), qu = quantize(*updates);
      if (!qt || !qu)
        return false;
      table = *qt;
      updates = *qu;
      r = summandOf(table, *updates);
      r.shape = table.shape;
      if (!sumError(summandOf(table, *updates), k, r))
        return false;
    }
  } else {
    r.mag = std::min(k * std::max(table.mag, updates->mag),
                     intRange(table.dtype));
  }
  if (!usable(r))
    return false;
  define(r, "kiln.scatter_add " + table.name + ", " + indices.name + ", " +
                updates->name + " : " + table.type() + ", " + indices.type() +
                ", " + updates->type());
  return true;
}

bool Generator::dynamicSliceOp() {
  const Val *x = pickValue([](const Val &v) { return !v.shape.empty(); });
  if (!x)
    return false;
  Val v = *x;
  if (v.shape[0] == 0)
    return false;
  Val index = rowIndex();
  int64_t size = range(1, v.shape[0]);
  Val r = v;
  r.shape[0] = size;
  define(r, "kiln.dynamic_slice " + v.name + "[" + index.name +
                "], size = " + std::to_string(size) + " : " + v.type());
  return true;
}

bool Generator::dynamicUpdateSliceOp() {
  const Val *x = pickValue([](const Val &v) { return !v.shape.empty(); });
  if (!x)
    return false;
  Val v = *x;
  if (v.shape[0] == 0)
    return false;
  Shape shape = v.shape;
  shape[0] = range(1, v.shape[0]);
  const Val *y = pickValue([&](const Val &c) {
    return c.dtype != DType::I1 || v.dtype == DType::I1;
  });
  std::optional<Val> update =
      y ? coerce(*y, shape, v.dtype) : std::optional<Val>();
  if (!update)
    update = freshValue(shape, v.dtype);
  Val index = rowIndex();
  Val r = v;
  r.mag = std::max(v.mag, update->mag);
  r.absErr = std::max(v.absErr, update->absErr);
  r.relErr = std::max(v.relErr, update->relErr);
  r.positive = v.positive && update->positive;
  r.low = r.positive ? std::min(v.low, update->low) : 0;
  r.intValued = v.intValued && update->intValued;
  define(r, "kiln.dynamic_update_slice " + v.name + "[" + index.name +
                "], " + update->name + " : " + v.type() + ", " +
                update->type());
  return true;
}

// --- control flow -----------------------------------------------------------

/// A rank-0 i1 decided on exact values only.
std::optional<Val> Generator::predicate() {
  const Val *x = pickValue([](const Val &v) { return v.exact(); });
  if (!x)
    return std::nullopt;
  Val s = *x;
  if (s.dtype == DType::I1) {
    if (!s.shape.empty()) {
      std::optional<Val> c = coerce(s, {}, DType::I1);
      if (!c) {
        std::optional<Val> wide = castTo(s, DType::I32);
        if (!wide)
          return std::nullopt;
        s = reduceAll(*wide);
      } else {
        return c;
      }
    } else {
      return s;
    }
  }
  s = reduceAll(s);
  Val zero = constant({}, s.dtype, isFloat(s.dtype) ? 0.5 : 0);
  Val p = s;
  p.dtype = DType::I1;
  p.mag = 1;
  p.positive = false;
  return define(p, std::string("kiln.compare ") +
                       (chance(50) ? "gt" : "le") + ", " + s.name + ", " +
                       zero.name + " : " + s.type());
}

void Generator::fillBlock(unsigned ops) {
  for (unsigned i = 0, tries = 0; i < ops && tries < 10 * ops; ++tries)
    if (step())
      ++i;
}

/// Opens a region scope whose block arguments mirror `inputs`; returns the
/// block header line.
static std::string blockHeader(const std::vector<Val> &params) {
  std::string s = "^bb0(";
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? ", " : "") + params[i].name + ": " + params[i].type();
  return s + "):";
}

static std::string joinNames(const std::vector<Val> &values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + values[i].name;
  return s;
}

static std::string joinTypes(const std::vector<Val> &values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + values[i].type();
  return s;
}

/// `%name` or `%name:n`: the left-hand side of an op with n results.
static std::string resultsLhs(const std::string &name, size_t n) {
  return n > 1 ? name + ":" + std::to_string(n) : name;
}

/// Result i of an op with n results named by resultsLhs.
static std::string resultName(const std::string &name, size_t i, size_t n) {
  return n > 1 ? name + "#" + std::to_string(i) : name;
}

std::vector<Val> Generator::pickInputs() {
  std::vector<Val> inputs;
  unsigned count = range(1, 3);
  for (unsigned i = 0; i < count; ++i)
    if (const Val *v = pickValue([](const Val &) { return true; }))
      inputs.push_back(*v);
  return inputs;
}

std::vector<Val> Generator::openBody(const std::vector<Val> &inputs,
                                     const std::string &indent) {
  Scope inner;
  inner.indent = indent;
  inner.exactOnly = scope().exactOnly;
  inner.depth = scope().depth + 1;
  std::vector<Val> params;
  for (const Val &v : inputs) {
    Val p = v;
    p.name = freshName();
    params.push_back(p);
    inner.pool.push_back(p);
  }
  scopes.push_back(inner);
  return params;
}

bool Generator::condOp() {
  if (scope().depth >= 2)
    return false;
  std::optional<Val> pred = predicate();
  if (!pred)
    return false;
  std::vector<Val> inputs = pickInputs();
  if (inputs.empty())
    return false;
  std::vector<Val> resultTypes;
  unsigned results = range(1, std::min<unsigned>(2, inputs.size()));
  for (unsigned i = 0; i < results; ++i)
    resultTypes.push_back(pick(inputs));

  std::string outerIndent = scope().indent;
  std::vector<std::vector<Val>> yields;
  std::string branches[2];
  for (int branch = 0; branch < 2; ++branch) {
    std::vector<Val> params = openBody(inputs, outerIndent + "  ");
    fillBlock(range(0, 3));
    std::vector<Val> yielded;
    for (size_t i = 0; i < resultTypes.size(); ++i) {
      const Val &want = resultTypes[i];
      const Val *v = pickValue([&](const Val &c) {
        return c.dtype == want.dtype && c.shape == want.shape;
      });
      // A parameter of this type exists: the result types are inputs'.
      yielded.push_back(*v);
    }
    emit("kiln.yield " + joinNames(yielded) + " : " + joinTypes(yielded));
    branches[branch] =
        outerIndent + blockHeader(params) + "\n" + scope().text;
    scopes.pop_back();
    yields.push_back(yielded);
  }
  std::string name = freshName();
  std::string lhs = resultsLhs(name, resultTypes.size());
  emit(lhs + " = kiln.cond " + pred->name + ", (" + joinNames(inputs) +
       ") : tensor<i1>, (" + joinTypes(inputs) + ") -> (" +
       joinTypes(resultTypes) + ") {");
  scope().text += branches[0];
  emit("} else {");
  scope().text += branches[1];
  emit("}");
  for (size_t i = 0; i < resultTypes.size(); ++i) {
    const Val &t = yields[0][i], &e = yields[1][i];
    Val r = t;
    r.name = resultName(name, i, resultTypes.size());
    r.mag = std::max(t.mag, e.mag);
    r.absErr = std::max(t.absErr, e.absErr);
    r.relErr = std::max(t.relErr, e.relErr);
    r.positive = t.positive && e.positive;
    r.low = r.positive ? std::min(t.low, e.low) : 0;
    r.intValued = t.intValued && e.intValued;
    add(r);
  }
  return true;
}

bool Generator::callOp() {
  if (scope().depth >= 2)
    return false;
  std::vector<Val> inputs = pickInputs();
  if (inputs.empty())
    return false;
  std::vector<Val> params = openBody(inputs, "  ");
  fillBlock(range(1, 3));
  // The newest values (what the body computed), or a parameter.
  std::vector<Val> results;
  std::vector<Val> &pool = scope().pool;
  unsigned wanted = range(1, 2);
  for (auto it = pool.rbegin(); it != pool.rend() && results.size() < wanted;
       ++it)
    if (!it->literal)
      results.push_back(*it);
  if (results.empty())
    results.push_back(pool.back());
  std::string callee = "@f" + std::to_string(functions.size());
  std::string signature;
  for (size_t i = 0; i < params.size(); ++i)
    signature += (i ? ", " : "") + params[i].name + ": " + params[i].type();
  functions.push_back("func.func private " + callee + "(" + signature +
                      ") -> (" + joinTypes(results) + ") {\n" +
                      scope().text + "  return " + joinNames(results) +
                      " : " + joinTypes(results) + "\n}\n");
  scopes.pop_back();
  std::string name = freshName();
  std::string lhs = resultsLhs(name, results.size());
  emit(lhs + " = func.call " + callee + "(" + joinNames(inputs) + ") : (" +
       joinTypes(inputs) + ") -> (" + joinTypes(results) + ")");
  for (size_t i = 0; i < results.size(); ++i) {
    Val r = results[i];
    r.name = resultName(name, i, results.size());
    add(r);
  }
  return true;
}

bool Generator::loopOp(bool asWhile) {
  if (scope().depth >= 2)
    return false;
  // Carried floats must be exact: the body only uses exact ops.
  std::vector<Val> inits;
  unsigned count = range(1, 2);
  for (unsigned i = 0; i < count; ++i)
    if (const Val *v = pickValue([](const Val &c) {
          return c.dtype != DType::I1 && c.exact() &&
                 numElements(c.shape) <= kSmallElements;
        }))
      inits.push_back(*v);
  if (inits.empty())
    return false;
  int64_t trips = pick(std::vector<int64_t>{0, 1, 2, 3, 5, 8});
  // A while loop's trip count comes from the data 60 % of the time:
  // clamp(int(max(v)), 0, 8) for an exact value v, carried second and
  // compared with the counter in the condition.
  std::optional<Val> limit;
  if (asWhile && chance(60))
    if (const Val *v = pickValue([](const Val &c) {
          return c.dtype != DType::I1 && c.exact() &&
                 numElements(c.shape) <= kSmallElements;
        }))
      if (std::optional<Val> c = castTo(reduceAll(*v), DType::I64)) {
        Val lo = constant({}, DType::I64, 0), hi = constant({}, DType::I64, 8);
        Val t = *c;
        t = define(t, "kiln.max " + c->name + ", " + lo.name +
                          " : tensor<i64>");
        t = define(t, "kiln.min " + t.name + ", " + hi.name +
                          " : tensor<i64>");
        t.mag = 8;
        limit = t;
        trips = 8;
      }
  if (limit)
    inits.insert(inits.begin(), *limit);
  if (asWhile) {
    // The counter, carried first.
    inits.insert(inits.begin(), constant({}, DType::I64, 0));
  }
  // The counter and the limit are not results of the loop.
  size_t control = asWhile ? (limit ? 2 : 1) : 0;

  Scope inner;
  inner.indent = scope().indent + "  ";
  inner.exactOnly = true;
  inner.depth = scope().depth + 1;
  Val index;
  index.name = freshName();
  index.dtype = DType::I64;
  index.mag = std::max<int64_t>(trips, 1);
  index.intValued = true;
  std::vector<Val> params;
  if (!asWhile)
    params.push_back(index);
  inner.pool.push_back(index);
  std::vector<Val> carried;
  Val limitParam;
  for (const Val &v : inits) {
    if (asWhile && &v == &inits.front()) {
      params.push_back(index);
      continue;
    }
    if (limit && &v == &inits[1]) {
      limitParam = v;
      limitParam.name = freshName();
      params.push_back(limitParam);
      inner.pool.push_back(limitParam);
      continue;
    }
    Val p = v;
    p.name = freshName();
    // The update below keeps |x| <= max(|init|, 8).
    p.mag = isFloat(v.dtype) ? std::max(v.mag, 8.0) : intRange(v.dtype);
    p.positive = false;
    p.low = 0;
    p.intValued = false;
    params.push_back(p);
    carried.push_back(p);
    inner.pool.push_back(p);
  }
  std::string outerIndent = scope().indent;
  scopes.push_back(inner);
  fillBlock(range(1, 3));
  std::vector<Val> next;
  for (const Val &c : carried) {
    const Val *src = pickValue([&](const Val &v) {
      return v.dtype != DType::I1 && v.exact();
    });
    std::optional<Val> r = src ? coerce(*src, c.shape, c.dtype) : std::nullopt;
    if (!r || !r->exact())
      r = c;
    if (isFloat(c.dtype)) {
      // next = c / 2 + clamp(r, -4, 4): bounded, and exact.
      Val hi = constant(c.shape, c.dtype, 4), lo = constant(c.shape, c.dtype, -4);
      Val half = constant(c.shape, c.dtype, 0.5);
      Val t = *r;
      t = define(t, "kiln.min " + r->name + ", " + hi.name + " : " + c.type());
      t = define(t, "kiln.max " + t.name + ", " + lo.name + " : " + c.type());
      Val h = c;
      h = define(h, "kiln.mul " + c.name + ", " + half.name + " : " + c.type());
      Val n = c;
      n = define(n, "kiln.add " + h.name + ", " + t.name + " : " + c.type());
      next.push_back(n);
    } else {
      Val n = c;
      n = define(n, "kiln.add " + c.name + ", " + r->name + " : " + c.type());
      next.push_back(n);
    }
  }
  if (asWhile) {
    Val one = constant({}, DType::I64, 1);
    Val n = index;
    n = define(n, "kiln.add " + index.name + ", " + one.name +
                      " : tensor<i64>");
    if (limit)
      next.insert(next.begin(), limitParam);
    next.insert(next.begin(), n);
  }
  emit("kiln.yield " + joinNames(next) + " : " + joinTypes(next));
  std::string body = outerIndent + blockHeader(params) + "\n" + scope().text;
  scopes.pop_back();

  std::string condRegion;
  if (asWhile) {
    Scope cond;
    cond.indent = outerIndent + "  ";
    cond.depth = inner.depth;
    scopes.push_back(cond);
    std::vector<Val> condParams = params;
    for (Val &p : condParams)
      p.name = freshName();
    std::string bound = limit ? condParams[1].name
                              : constant({}, DType::I64, trips).name;
    Val p;
    p.dtype = DType::I1;
    p = define(p, "kiln.compare lt, " + condParams[0].name + ", " + bound +
                      " : tensor<i64>");
    emit("kiln.yield " + p.name + " : tensor<i1>");
    condRegion =
        outerIndent + blockHeader(condParams) + "\n" + scope().text;
    scopes.pop_back();
  }

  std::string name = freshName();
  std::string lhs = resultsLhs(name, inits.size());
  if (asWhile) {
    emit(lhs + " = kiln.while (" + joinNames(inits) + ") : (" +
         joinTypes(inits) + ") cond {");
    scope().text += condRegion;
    emit("} do {");
  } else {
    emit(lhs + " = kiln.for " + std::to_string(trips) + " iterations (" +
         joinNames(inits) + ") : (" + joinTypes(inits) + ") {");
  }
  scope().text += body;
  emit("}");
  for (size_t i = control; i < inits.size(); ++i) {
    Val r = carried[i - control];
    r.name = resultName(name, i, inits.size());
    add(r);
  }
  return true;
}

// --- driver -----------------------------------------------------------------

bool Generator::step() {
  // Weights of the op kinds, in the order of the cases below.
  static const unsigned weights[] = {12, 14, 5, 2, 8, 6, 6, 5, 5, 6,
                                     5,  2,  3, 10, 2, 2, 7, 1, 3, 3,
                                     2,  2,  2, 2,  3, 3, 2, 2};
  unsigned total = 0;
  for (unsigned w : weights)
    total += w;
  unsigned r = below(total), kind = 0;
  while (r >= weights[kind])
    r -= weights[kind++];
  bool controlFlow = options.controlFlow;
  switch (kind) {
  case 0:
    return unaryFloat();
  case 1:
    return binaryFloat();
  case 2:
    return intOp();
  case 3:
    return logicOp();
  case 4:
    return compareSelect();
  case 5:
    return castOp();
  case 6:
    return broadcastOp();
  case 7:
    return transposeOp();
  case 8:
    return reshapeOp();
  case 9:
    return sliceOp();
  case 10:
    return concatOp();
  case 11:
    return reverseOp();
  case 12:
    return padOp();
  case 13:
    return reduceOp();
  case 14:
    return argReduceOp();
  case 15:
    return cumsumOp();
  case 16:
    return matmulOp();
  case 17:
    return iotaOp();
  case 18:
    return controlFlow && condOp();
  case 19:
    return controlFlow && loopOp(/*asWhile=*/false);
  case 20:
    return controlFlow && loopOp(/*asWhile=*/true);
  case 21:
    return gatherOp();
  case 22:
    return dynamicSliceOp();
  case 23:
    return dynamicUpdateSliceOp();
  case 24:
    return convOp();
  case 25:
    return reduceWindowOp();
  case 26:
    return scatterAddOp();
  default:
    return controlFlow && callOp();
  }
}

std::string Generator::run() {
  Scope top;
  top.topLevel = true;
  top.indent = "  ";
  scopes.push_back(top);

  bool large = chance(options.largeShapePercent);
  unsigned shapes = range(1, 2);
  for (unsigned i = 0; i < shapes; ++i)
    baseShapes.push_back(randomShape(range(0, 4)));
  if (large) {
    baseShapes[0] = largeShape();
    elementCap = kLargeElements;
  } else if (chance(options.zeroSizePercent)) {
    // A zero-size argument.
    Shape &shape = baseShapes[0];
    if (shape.empty())
      shape.push_back(0);
    else
      shape[below(shape.size())] = 0;
  }
  unsigned argCount = range(1, 3);
  for (unsigned i = 0; i < argCount; ++i) {
    unsigned r = below(100);
    static const DType narrow[] = {DType::I8,   DType::I16,  DType::UI8,
                                   DType::UI16, DType::UI32, DType::UI64};
    DType d = r < 52   ? DType::F32
              : r < 58 ? pick(std::vector<DType>{DType::F16, DType::BF16})
              : r < 76 ? DType::F64
              : r < 85 ? DType::I32
              : r < 89 ? DType::I64
              : r < 93 ? DType::I1
                       : narrow[below(std::size(narrow))];
    newArgument(i < baseShapes.size() ? baseShapes[i] : pick(baseShapes), d);
  }
  fillBlock(range(options.minOps, options.maxOps));

  // Results: the values nothing else uses (so that no op is dead code),
  // at most six, newest first, and sometimes an argument or a value that
  // is also used (results that alias).
  std::vector<Val> &pool = scope().pool;
  const std::string &text = scope().text;
  auto uses = [&](const std::string &name) {
    unsigned n = 0;
    for (size_t at = text.find(name); at != std::string::npos;
         at = text.find(name, at + 1)) {
      char next = at + name.size() < text.size() ? text[at + name.size()] : ' ';
      n += !std::isdigit(static_cast<unsigned char>(next)) && next != '#' &&
           next != ':';
    }
    return n;
  };
  std::vector<Val> results;
  for (auto it = pool.rbegin(); it != pool.rend() && results.size() < 6; ++it)
    if (!it->literal && it->name.rfind("%arg", 0) != 0 &&
        uses(it->name) <= 1)
      results.push_back(*it);
  if (results.empty() || chance(15))
    results.push_back(pick(pool));

  std::ostringstream out;
  out << "// kiln-program-fuzz seed " << seed << "\n";
  out << "func.func @main(";
  for (size_t i = 0; i < args.size(); ++i)
    out << (i ? ", " : "") << args[i].name << ": " << args[i].type();
  out << ") -> (" << joinTypes(results) << ") {\n";
  out << scope().text;
  out << "  return " << joinNames(results) << " : " << joinTypes(results)
      << "\n}\n";
  for (const std::string &function : functions)
    out << function;
  return out.str();
}

} // namespace

std::string kiln::test::generateProgram(uint64_t seed,
                                        const GeneratorOptions &options) {
  return Generator(seed, options).run();
}
