//===- SinCos.cpp - One vectorizable f32 sin and cos for every path -------===//
//
// libm's sinf and cosf are scalar calls, so a loop that contains one does
// not vectorize, and the call dominates the loop's time (the bench `while`
// solver spends about 60% of it in cosf). Vector versions of them exist
// (glibc's libmvec) but give other values in the last bits, and the scalar
// remainder of a vectorized loop, or a loop that did not vectorize, still
// called libm: the same cos(x) computed in two places then compared
// unequal, and a reduce_max gradient that recomputes its input for an
// equality mask found no maximum (NaN). What is needed is one function,
// whose scalar and vector forms give the same bits for every input.
//
// This pass defines that function in the module and calls it for every f32
// `math.sin` and `math.cos`:
//   - `kiln_sinf` / `kiln_cosf` (f32 -> f32), noinline, memory(none), which
//     name their 4-, 8- and 16-lane forms `kiln_sinf_v4` ... in LLVM's
//     "vector-function-abi-variant" attribute, so that the loop vectorizer
//     calls those for a vectorized loop and keeps the scalar one for the
//     remainder;
//   - both forms build their lanes from the same op sequence
//     (buildReducedSinCos), IEEE operations with explicit fma and no
//     fast-math flags, which LLVM may not rewrite into anything that rounds
//     differently, so a lane and the scalar call agree bit for bit.
//
// The arithmetic, for |x| < 2^24 (every f32 with a fraction, and beyond):
// in f64, k = roundeven(|x| * 2/pi), r = |x| - k*pi/2 with pi/2 in two
// parts and fma (Cody-Waite; the error of r is below 2^-80, so r keeps its
// relative accuracy wherever an f32 can come near a multiple of pi/2),
// then Taylor polynomials of sin and cos on |r| <= pi/4 (truncation error
// below 1e-11), the quadrant picked from k, and one rounding to f32. sin
// takes the sign of x afterwards, so sin(-0) = -0.
// Larger magnitudes, infinities and NaN are left to libm (`math.sin` /
// `math.cos` in the helper, which the math-to-LLVM lowering makes a libm
// call): its Payne-Hanek reduction is exact there, and since the choice
// depends on the element's own value only, every path still agrees. The
// vector form calls libm only for the lanes that need it, and only when one
// does.
//
// f64 sin and cos stay libm calls everywhere (scalar and consistent).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"


namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUSINCOS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
/// Marks the functions this pass defines, whose own math ops are the libm
/// path and stay as they are.
constexpr llvm::StringLiteral kHelperAttr = "kiln.sin_cos_helper";
/// The vector widths that get a vector form.
constexpr int64_t kLanes[] = {4, 8, 16};
/// Below this magnitude the Cody-Waite reduction is used; above it libm.
constexpr double kReductionLimit = 0x1p24;

/// `value` as a constant of `type` (a float or integer type, or a vector
/// of one).
Value constant(OpBuilder &b, Location loc, Type type, double value) {
  Type element = getElementTypeOrSelf(type);
  TypedAttr attr;
  if (auto floatType = dyn_cast<FloatType>(element))
    attr = b.getFloatAttr(floatType, value);
  else
    attr = b.getIntegerAttr(element, static_cast<int64_t>(value));
  if (auto vector = dyn_cast<VectorType>(type))
    return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(vector, attr));
  return b.create<arith::ConstantOp>(loc, attr);
}

/// `type`'s shape (scalar or vector) with element type `element`.
Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

/// sin(x) or cos(x) of f32 (or vector of f32) `x` by the Cody-Waite
/// reduction and polynomials of the file header. Lanes with |x| >= the
/// limit, or NaN, get a meaningless finite value that the caller replaces.
Value buildReducedSinCos(OpBuilder &b, Location loc, Value x, bool isCos) {
  Type f32Type = x.getType();
  Type f64Type = withElement(f32Type, b.getF64Type());
  Type i32Type = withElement(f32Type, b.getI32Type());
  auto f64 = [&](double value) { return constant(b, loc, f64Type, value); };
  auto i32 = [&](int64_t value) {
    return constant(b, loc, i32Type, static_cast<double>(value));
  };

  Value magnitude = b.create<math::AbsFOp>(loc, x);
  Value inRange = b.create<arith::CmpFOp>(
      loc, arith::CmpFPredicate::OLT, magnitude,
      constant(b, loc, f32Type, kReductionLimit));
  // Out-of-range lanes reduce 0 instead, so that no conversion overflows.
  Value wide = b.create<arith::SelectOp>(
      loc, inRange, b.create<arith::ExtFOp>(loc, f64Type, magnitude), f64(0));
  // pi/2 = kHalfPiHigh + kHalfPiLow to about 2^-107.
  constexpr double kHalfPiHigh = 0x1.921fb54442d18p0;
  constexpr double kHalfPiLow = 0x1.1a62633145c07p-54;
  Value k = b.create<math::RoundEvenOp>(
      loc, b.create<arith::MulFOp>(loc, wide, f64(0x1.45f306dc9c883p-1 /* 2/pi */)));
  Value minusK = b.create<arith::NegFOp>(loc, k);
  Value r = b.create<math::FmaOp>(loc, minusK, f64(kHalfPiHigh), wide);
  r = b.create<math::FmaOp>(loc, minusK, f64(kHalfPiLow), r);
  Value r2 = b.create<arith::MulFOp>(loc, r, r);

  // Horner's rule in r^2 over `coefficients` (highest power first).
  auto horner = [&](ArrayRef<double> coefficients) {
    Value sum = f64(coefficients.front());
    for (double c : coefficients.drop_front())
      sum = b.create<math::FmaOp>(loc, sum, r2, f64(c));
    return sum;
  };
  // sin r = r + r^3 (-1/3! + r^2/5! - ... - r^8/11!)
  Value sinTail = horner({-1.0 / 39916800, 1.0 / 362880, -1.0 / 5040,
                          1.0 / 120, -1.0 / 6});
  Value sinR = b.create<math::FmaOp>(
      loc, b.create<arith::MulFOp>(loc, r, r2), sinTail, r);
  // cos r = 1 + r^2 (-1/2! + r^2/4! - ... + r^10/12!)
  Value cosTail = horner({1.0 / 479001600, -1.0 / 3628800, 1.0 / 40320,
                          -1.0 / 720, 1.0 / 24, -0.5});
  Value cosR = b.create<math::FmaOp>(loc, r2, cosTail, f64(1));

  // Quadrant q of |x| (cos is sin one quadrant on): q odd takes the cosine
  // polynomial, q & 2 negates.
  Value q = b.create<arith::FPToSIOp>(loc, i32Type, k);
  if (isCos)
    q = b.create<arith::AddIOp>(loc, q, i32(1));
  auto bitSet = [&](Value bits, int64_t mask) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                   b.create<arith::AndIOp>(loc, bits, i32(mask)),
                                   i32(0));
  };
  Value value = b.create<arith::SelectOp>(loc, bitSet(q, 1), cosR, sinR);
  Value negate = bitSet(q, 2);
  if (!isCos) {
    // sin(x) = sign(x) sin(|x|), with -0 for -0.
    Value signBit = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::slt,
        b.create<arith::BitcastOp>(loc, i32Type, x), i32(0));
    negate = b.create<arith::XOrIOp>(loc, negate, signBit);
  }
  value = b.create<arith::SelectOp>(
      loc, negate, b.create<arith::NegFOp>(loc, value), value);
  return b.create<arith::TruncFOp>(loc, f32Type, value);
}

/// Whether `x` (f32 or vector of f32) is outside the reduction's range:
/// |x| >= the limit, infinite, or NaN.
Value needsLibm(OpBuilder &b, Location loc, Value x) {
  return b.create<arith::CmpFOp>(
      loc, arith::CmpFPredicate::UGE, b.create<math::AbsFOp>(loc, x),
      constant(b, loc, x.getType(), kReductionLimit));
}

Value libmSinCos(OpBuilder &b, Location loc, Value x, bool isCos) {
  if (isCos)
    return b.create<math::CosOp>(loc, x);
  return b.create<math::SinOp>(loc, x);
}

std::string helperName(bool isCos, int64_t lanes) {
  std::string name = isCos ? "kiln_cosf" : "kiln_sinf";
  if (lanes)
    name += "_v" + std::to_string(lanes);
  return name;
}

/// Creates the private function `name` of type (type) -> type at the end of
/// `module`, marked as a helper, and returns it with the builder inside its
/// entry block.
func::FuncOp createHelper(OpBuilder &b, ModuleOp module, StringRef name,
                          Type type) {
  b.setInsertionPointToEnd(module.getBody());
  auto function = b.create<func::FuncOp>(
      module.getLoc(), name, b.getFunctionType({type}, {type}));
  function.setPrivate();
  function->setAttr(kHelperAttr, b.getUnitAttr());
  b.setInsertionPointToStart(function.addEntryBlock());
  return function;
}

/// Defines kiln_sinf or kiln_cosf and their vector forms in `module`;
/// returns the scalar one.
func::FuncOp defineSinCos(ModuleOp module, bool isCos) {
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  Type f32 = b.getF32Type();

  // The scalar form: the reduction where it applies, else libm.
  func::FuncOp scalar = createHelper(b, module, helperName(isCos, 0), f32);
  Value x = scalar.getArgument(0);
  auto branch = b.create<scf::IfOp>(loc, TypeRange{f32}, needsLibm(b, loc, x),
                                    /*withElseRegion=*/true);
  b.setInsertionPointToStart(branch.thenBlock());
  b.create<scf::YieldOp>(loc, libmSinCos(b, loc, x, isCos));
  b.setInsertionPointToStart(branch.elseBlock());
  b.create<scf::YieldOp>(loc, buildReducedSinCos(b, loc, x, isCos));
  b.setInsertionPointAfter(branch);
  b.create<func::ReturnOp>(loc, branch.getResult(0));

  // The vector forms: every lane by the reduction, then libm for the
  // lanes that need it, if any does.
  std::string variants;
  for (int64_t lanes : kLanes) {
    auto type = VectorType::get({lanes}, f32);
    func::FuncOp vector =
        createHelper(b, module, helperName(isCos, lanes), type);
    Value v = vector.getArgument(0);
    Value reduced = buildReducedSinCos(b, loc, v, isCos);
    Value outside = needsLibm(b, loc, v);
    Value any = b.create<vector::ReductionOp>(loc, vector::CombiningKind::OR,
                                              outside);
    auto fix = b.create<scf::IfOp>(loc, TypeRange{type}, any,
                                   /*withElseRegion=*/true);
    b.setInsertionPointToStart(fix.thenBlock());
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value count = b.create<arith::ConstantIndexOp>(loc, lanes);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = b.create<scf::ForOp>(loc, zero, count, one, reduced);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value lane = loop.getInductionVar();
      Value acc = loop.getRegionIterArg(0);
      Value laneOutside = b.create<vector::ExtractElementOp>(loc, outside, lane);
      auto patch = b.create<scf::IfOp>(loc, TypeRange{type}, laneOutside,
                                       /*withElseRegion=*/true);
      b.setInsertionPointToStart(patch.thenBlock());
      Value element = b.create<vector::ExtractElementOp>(loc, v, lane);
      Value patched = b.create<vector::InsertElementOp>(
          loc, libmSinCos(b, loc, element, isCos), acc, lane);
      b.create<scf::YieldOp>(loc, patched);
      b.setInsertionPointToStart(patch.elseBlock());
      b.create<scf::YieldOp>(loc, acc);
      b.setInsertionPointAfter(patch);
      b.create<scf::YieldOp>(loc, patch.getResult(0));
    }
    b.create<scf::YieldOp>(loc, loop.getResult(0));
    b.setInsertionPointToStart(fix.elseBlock());
    b.create<scf::YieldOp>(loc, reduced);
    b.setInsertionPointAfter(fix);
    b.create<func::ReturnOp>(loc, fix.getResult(0));

    if (!variants.empty())
      variants += ",";
    variants += "_ZGV_LLVM_N" + std::to_string(lanes) + "v_" +
                helperName(isCos, 0) + "(" + helperName(isCos, lanes) + ")";
  }

  // Kept a call (so that the vectorizer sees it), free of side effects
  // (so that it may vectorize it), and mapped to its vector forms.
  MLIRContext *context = module.getContext();
  scalar->setAttr("passthrough",
                  b.getArrayAttr({b.getStringAttr("noinline"),
                                  b.getStringAttr("nounwind"),
                                  b.getStringAttr("willreturn"),
                                  b.getArrayAttr({b.getStringAttr(
                                                      "vector-function-abi-variant"),
                                                  b.getStringAttr(variants)})}));
  scalar->setAttr("memory", LLVM::MemoryEffectsAttr::get(
                                context, {LLVM::ModRefInfo::NoModRef,
                                          LLVM::ModRefInfo::NoModRef,
                                          LLVM::ModRefInfo::NoModRef}));
  return scalar;
}

/// Whether `type` is f32 or a fixed-size vector of f32.
bool isF32OrFixedVector(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (vector && vector.isScalable())
    return false;
  return getElementTypeOrSelf(type).isF32();
}

/// Replaces the f32 sin or cos `op` by calls of `scalar` (kiln_sinf or
/// kiln_cosf): one call for a scalar; one of its vector form for a 1-D
/// vector of 4, 8 or 16 lanes; one scalar call per element for any other
/// vector.
void replaceByCalls(Operation *op, func::FuncOp scalar, SymbolTable &symbols) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto vector = dyn_cast<VectorType>(x.getType());
  Value result;
  if (!vector) {
    result = b.create<func::CallOp>(loc, scalar, x).getResult(0);
  } else if (vector.getRank() == 1 &&
             llvm::is_contained(kLanes, vector.getNumElements())) {
    auto form = symbols.lookup<func::FuncOp>(
        (scalar.getName() + "_v" + Twine(vector.getNumElements())).str());
    result = b.create<func::CallOp>(loc, form, x).getResult(0);
  } else {
    result = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(vector, b.getF32FloatAttr(0).getValue()));
    SmallVector<int64_t> strides = computeStrides(vector.getShape());
    for (int64_t i = 0, e = vector.getNumElements(); i < e; ++i) {
      SmallVector<int64_t> position = delinearize(i, strides);
      Value element = b.create<vector::ExtractOp>(loc, x, position);
      Value value = b.create<func::CallOp>(loc, scalar, element).getResult(0);
      result = b.create<vector::InsertOp>(loc, value, result, position);
    }
  }
  op->replaceAllUsesWith(ValueRange{result});
  op->erase();
}

struct KilnCpuSinCosPass
    : kiln::impl::KilnCpuSinCosBase<KilnCpuSinCosPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](func::FuncOp function) {
      if (function->hasAttr(kHelperAttr))
        return;
      function.walk([&](Operation *op) {
        if (isa<math::SinOp, math::CosOp>(op) &&
            isF32OrFixedVector(op->getResult(0).getType()))
          ops.push_back(op);
      });
    });
    if (ops.empty())
      return;
    SymbolTable symbols(module);
    func::FuncOp helpers[2] = {};
    for (Operation *op : ops) {
      bool isCos = isa<math::CosOp>(op);
      func::FuncOp &helper = helpers[isCos];
      if (!helper) {
        for (int64_t lanes : {int64_t(0), kLanes[0], kLanes[1], kLanes[2]})
          if (symbols.lookup(helperName(isCos, lanes))) {
            op->emitError() << "kiln-cpu-sin-cos: the module already defines '"
                            << helperName(isCos, lanes) << "'";
            return signalPassFailure();
          }
        helper = defineSinCos(module, isCos);
        for (int64_t lanes : kLanes)
          symbols.insert(module.lookupSymbol(helperName(isCos, lanes)));
        symbols.insert(helper);
      }
      replaceByCalls(op, helper, symbols);
    }
  }
};
} // namespace
