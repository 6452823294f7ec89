//===- ByteTables.cpp - Functions of 8-bit values as 256-entry tables -----===//
//
// A quantized model computes elementwise functions of 8-bit integers: ONNX's
// QDQ form wraps each activation (a Sigmoid, the Mul of a SiLU, a Clip) in
// a DequantizeLinear before and a QuantizeLinear after, so that from a
// uint8 tensor x the model computes y = f(x) element by element, f a chain
// of casts, divisions, roundings and transcendental functions run in f32
// on every element. An 8-bit x has 256 values, so f(x) is a lookup in a
// table of 256 entries computed once, at compile time, by the ops' folders
// (ONNX Runtime writes such tables by hand, one QLinear op at a time:
// QLinearSigmoid, QLinearLeakyRelu). This pass finds the largest such
// functions and replaces each by a kiln.gather from its table:
//
//   y = f(x)  ->  y = gather(table, cast(x) to i32 [+ 128 for an i8 x])
//
// where every op between x and y is elementwise (the Elementwise trait,
// kiln.cast, kiln.select), x is the only operand that is not a splat
// constant, x is ui8 or i8, and f is worth a lookup: it holds a division, a rounding or a
// transcendental function, or at least kMinOps ops. y is replaced where it
// is needed as it is: returned, or read by an op that is no function of
// the same x. The table holds what the folders compute (C's math library
// in f32, as the reference evaluator), which the compiled ops approximate
// within their tolerance.
//
// An 8-bit value that is itself a function of x is looked through, not
// taken as a second source: a QDQ SiLU multiplies the dequantized x by the
// dequantized, requantized sigmoid of x, and the whole of it is one table
// of x (two lookups and a pass of f32 arithmetic otherwise).
//
//===----------------------------------------------------------------------===//

#include "kiln/Fusion/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_BYTETABLES
#include "kiln/Fusion/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// A function with fewer ops than this, and no costly op, is cheaper to
/// compute than to look up.
constexpr unsigned kMinOps = 6;

/// The 8-bit integer element type of `value`, if it has one.
IntegerType byteType(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  auto integer = type ? dyn_cast<IntegerType>(type.getElementType()) : nullptr;
  return integer && integer.getWidth() == 8 ? integer : nullptr;
}

bool isSplatConstant(Value value) {
  DenseElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.isSplat();
}

bool isElementwise(Operation *op) {
  return op->getNumRegions() == 0 && op->getNumResults() == 1 &&
         (op->hasTrait<OpTrait::Elementwise>() || isa<CastOp, SelectOp>(op));
}

/// Whether `op` costs more than a lookup on its own.
bool isCostly(Operation *op) {
  return isa<DivOp, RoundOp, ExpOp, LogOp, SigmoidOp, TanhOp, PowOp, SqrtOp,
             RsqrtOp, ErfOp, SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp,
             SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, FloorOp, CeilOp>(op);
}

struct ByteTablesPass
    : mlir::kiln::impl::ByteTablesBase<ByteTablesPass> {
  /// The 8-bit value each elementwise result is a function of (null where
  /// it is none's), and how many ops and costly ops that function has.
  struct Function {
    Value source;
    unsigned ops = 0;
    bool costly = false;
  };
  llvm::DenseMap<Value, Function> functions;

  /// `value` as a leaf of a function: the function that computes it where
  /// there is one (also for an 8-bit value), otherwise itself where it is
  /// 8-bit.
  Function leaf(Value value) {
    if (isSplatConstant(value))
      return {};
    if (auto it = functions.find(value); it != functions.end())
      return it->second;
    if (byteType(value))
      return {value, 0, false};
    return {};
  }

  /// The function `op`'s result is of, if it is one of one 8-bit value.
  std::optional<Function> functionOf(Operation *op) {
    if (!isElementwise(op))
      return std::nullopt;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
    Function f;
    f.ops = 1;
    f.costly = isCostly(op);
    for (Value operand : op->getOperands()) {
      if (isSplatConstant(operand))
        continue;
      Function g = leaf(operand);
      if (!g.source || (f.source && f.source != g.source) ||
          cast<RankedTensorType>(operand.getType()).getShape() !=
              type.getShape())
        return std::nullopt;
      f.source = g.source;
      f.ops += g.ops;
      f.costly |= g.costly;
    }
    if (!f.source)
      return std::nullopt;
    return f;
  }

  /// The 256 values of `root` for the 256 values of `source` (in the order
  /// of the unsigned bytes, i8's -128 at 0), computed by folding a copy of
  /// the function at shape [256] before `root`'s op; null where an op does
  /// not fold.
  DenseElementsAttr table(Value root, Value source) {
    OpBuilder b(root.getDefiningOp());
    Location loc = root.getLoc();
    IntegerType byte = byteType(source);
    auto sourceType = RankedTensorType::get({256}, byte);
    SmallVector<APInt> bytes;
    for (int k = 0; k < 256; ++k)
      bytes.push_back(APInt(8, byte.isUnsigned() ? k : k - 128,
                            /*isSigned=*/!byte.isUnsigned()));
    llvm::DenseMap<Value, Attribute> values;
    values[source] = DenseElementsAttr::get(sourceType, bytes);
    // The ops from `source` to `root`, in order.
    SmallVector<Operation *> ops;
    llvm::SetVector<Operation *> seen;
    std::function<bool(Value)> collect = [&](Value v) -> bool {
      if (values.count(v))
        return true;
      DenseElementsAttr splat;
      if (matchPattern(v, m_Constant(&splat))) {
        values[v] = DenseElementsAttr::get(
            RankedTensorType::get({256}, splat.getElementType()),
            splat.getSplatValue<Attribute>());
        return true;
      }
      Operation *op = v.getDefiningOp();
      if (!op || !isElementwise(op))
        return false;
      if (seen.contains(op))
        return true;
      for (Value operand : op->getOperands())
        if (!collect(operand))
          return false;
      seen.insert(op);
      ops.push_back(op);
      return true;
    };
    if (!collect(root))
      return nullptr;
    for (Operation *op : ops) {
      // A copy at shape [256] on constants of the operands' 256 values,
      // folded.
      SmallVector<Attribute> operands;
      SmallVector<Operation *> scratch;
      OperationState state(loc, op->getName());
      for (Value operand : op->getOperands()) {
        auto value = cast<DenseElementsAttr>(values.lookup(operand));
        operands.push_back(value);
        scratch.push_back(b.create<ConstantOp>(loc, value.getType(), value));
        state.addOperands(scratch.back()->getResult(0));
      }
      state.addAttributes(op->getAttrs());
      state.addTypes(RankedTensorType::get(
          {256}, getElementTypeOrSelf(op->getResult(0).getType())));
      Operation *copy = b.create(state);
      SmallVector<OpFoldResult> folded;
      DenseElementsAttr result;
      if (succeeded(copy->fold(operands, folded)) && folded.size() == 1) {
        if (auto attr = dyn_cast<Attribute>(folded[0]))
          result = dyn_cast<DenseElementsAttr>(attr);
        // An identity (x * 1, a cast to the same type) folds to an operand.
        for (auto [operand, value] : llvm::zip(copy->getOperands(), operands))
          if (folded[0] == OpFoldResult(operand))
            result = cast<DenseElementsAttr>(value);
      }
      copy->erase();
      for (Operation *constant : scratch)
        constant->erase();
      if (!result)
        return nullptr;
      values[op->getResult(0)] = result;
    }
    return cast<DenseElementsAttr>(values.lookup(root));
  }

  void runOnOperation() override {
    functions.clear();
    SmallVector<Operation *> elementwise;
    getOperation()->walk([&](Operation *op) {
      if (std::optional<Function> f = functionOf(op)) {
        functions[op->getResult(0)] = *f;
        elementwise.push_back(op);
      }
    });
    // The roots, in program order so that the output does not depend on
    // the map's.
    SmallVector<std::pair<Value, Function>> roots;
    for (Operation *op : elementwise) {
      Value value = op->getResult(0);
      const Function &f = functions[value];
      if (!(f.costly || f.ops >= kMinOps))
        continue;
      auto type = cast<RankedTensorType>(value.getType());
      if (!type.getElementType().isIntOrFloat() ||
          type.getElementType().getIntOrFloatBitWidth() < 8)
        continue;
      // Needed as it is: returned, or read by an op that is no function of
      // the same source.
      bool needed = llvm::any_of(value.getUsers(), [&](Operation *user) {
        auto it = user->getNumResults() == 1
                      ? functions.find(user->getResult(0))
                      : functions.end();
        return it == functions.end() || it->second.source != f.source;
      });
      if (needed)
        roots.push_back({value, f});
    }
    // Every table before any replacement: a root may be inside another's
    // function.
    SmallVector<DenseElementsAttr> tables;
    for (auto &[root, f] : roots)
      tables.push_back(table(root, f.source));
    // An 8-bit root is the source of the functions after it: those read its
    // lookup once it is replaced.
    llvm::DenseMap<Value, Value> replaced;
    for (auto [root, values] : llvm::zip(roots, tables)) {
      if (!values)
        continue;
      Operation *computed = root.first.getDefiningOp();
      OpBuilder b(computed);
      Location loc = root.first.getLoc();
      Value source = replaced.lookup(root.second.source);
      if (!source)
        source = root.second.source;
      auto sourceType = cast<RankedTensorType>(source.getType());
      auto indexType = sourceType.clone(b.getI32Type());
      Value index = b.create<CastOp>(loc, indexType, source);
      if (!byteType(source).isUnsigned())
        index = b.create<AddOp>(
            loc, index,
            b.create<ConstantOp>(
                loc, indexType,
                DenseElementsAttr::get(indexType, ArrayRef<int32_t>{128})));
      Value lookup = b.create<GatherOp>(
          loc, b.create<ConstantOp>(loc, values.getType(), values), index);
      root.first.replaceAllUsesWith(lookup);
      replaced[root.first] = lookup;
      eraseDeadFunction(computed);
      ++numTables;
    }
  }

  /// Erases `op` where nothing reads it, then the ops that computed its
  /// operands that nothing reads any more.
  void eraseDeadFunction(Operation *op) {
    SmallVector<Operation *> worklist{op};
    while (!worklist.empty()) {
      Operation *dead = worklist.pop_back_val();
      if (!dead->use_empty() || !isElementwise(dead))
        continue;
      SmallVector<Operation *> defs;
      for (Value operand : dead->getOperands())
        if (Operation *def = operand.getDefiningOp())
          defs.push_back(def);
      functions.erase(dead->getResult(0));
      dead->erase();
      for (Operation *def : defs)
        if (llvm::find(worklist, def) == worklist.end())
          worklist.push_back(def);
    }
  }
};

} // namespace
