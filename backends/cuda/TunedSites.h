//===- TunedSites.h - Call sites the runtime times once ---------*- C++ -*-===//
//
// Where the backend has several kernels for one computation and which is
// fastest depends on the device (the f32 attention on CUDA cores or in
// 3xTF32 products on tensor cores), it builds them all as the variants of
// a tuned call site, and the runtime keeps the fastest, timed at the
// site's first call (runtime/lib/cuda/CudaTuning.cpp, kiln/CudaLibraryAbi.h's
// KILN_CUDA_TUNE_* functions). In the host code:
//
//   %rounds = call @kiln_cuda_tune_rounds(%site, %variants, %names)
//   scf.for %round = 0 to %rounds {kiln.cuda_tuned_site = site} {
//     %variant = call @kiln_cuda_tune_begin(%site, %round)
//     scf.if (%variant == 0) {kiln.cuda_tuned_variant = 0} { variant 0 }
//     else { scf.if (%variant == 1) ... else { the last variant } }
//     call @kiln_cuda_tune_end(%site, %round)
//   }
//
// The rounds come from no memory, and where the work is captured into a
// CUDA graph the runtime runs one round of the chosen variant:
// kiln-cuda-graph-calls, kiln-cuda-graph-conds and kiln-cuda-graph-loops
// count a site's loop as one trip (constantTripCount in DeviceWork.h) and
// its choices as host control flow. A loop's graph is captured at each
// run, where nothing could be timed: a while loop holding sites asks the
// runtime whether they are decided (KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION)
// and runs on the host until they are, from its first trip on.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_TUNEDSITES_H
#define KILN_BACKENDS_CUDA_TUNEDSITES_H

#include "common/LibraryCalls.h"

#include "kiln/CudaLibraryAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln {

/// The attribute of a tuned site's loop of rounds (its site number), and
/// of each of its choices (the variant its first region runs).
constexpr StringLiteral kTunedSiteAttr = "kiln.cuda_tuned_site";
constexpr StringLiteral kTunedVariantAttr = "kiln.cuda_tuned_variant";

/// The runtime's functions a tuned site calls.
constexpr StringLiteral kTuneRoundsFunction = KILN_CUDA_TUNE_ROUNDS_FUNCTION;
constexpr StringLiteral kTuneBeginFunction = KILN_CUDA_TUNE_BEGIN_FUNCTION;
constexpr StringLiteral kTuneEndFunction = KILN_CUDA_TUNE_END_FUNCTION;

inline bool isTunedSite(Operation *op) {
  return isa<scf::ForOp>(op) && op->hasAttr(kTunedSiteAttr);
}

/// Replaces `op` (which has no results) by a tuned call site whose
/// variants are named `names`: returns a clone of `op` for each variant,
/// alone in its region, for the caller to build that variant from; `op`
/// is erased. The site's number is the next free one in `module`.
inline FailureOr<SmallVector<Operation *>>
buildTunedSite(ModuleOp module, Operation *op, ArrayRef<std::string> names) {
  if (op->getNumResults() != 0 || names.size() < 2)
    return op->emitError("a tuned call site needs an op without results "
                         "and at least two variants");
  MLIRContext *context = module.getContext();
  Type i64 = IntegerType::get(context, 64);
  auto pointer = LLVM::LLVMPointerType::get(context);
  func::FuncOp rounds = declareLibraryFunction(
      module, kTuneRoundsFunction,
      FunctionType::get(context, {i64, i64, pointer}, {i64}));
  func::FuncOp begin =
      declareLibraryFunction(module, kTuneBeginFunction,
                             FunctionType::get(context, {i64, i64}, {i64}));
  func::FuncOp end = declareLibraryFunction(
      module, kTuneEndFunction, FunctionType::get(context, {i64, i64}, {}));
  if (!rounds || !begin || !end)
    return failure();
  int64_t site = 0;
  module.walk([&](scf::ForOp loop) {
    if (auto number = loop->getAttrOfType<IntegerAttr>(kTunedSiteAttr))
      site = std::max(site, number.getInt() + 1);
  });

  // The variants' names, comma-separated and NUL-terminated, for the
  // runtime's log.
  std::string joined = llvm::join(names, ",");
  SmallVector<int8_t> bytes(joined.begin(), joined.end());
  bytes.push_back(0);
  auto namesType = MemRefType::get({static_cast<int64_t>(bytes.size())},
                                   IntegerType::get(context, 8));
  auto namesValue = DenseElementsAttr::get(
      RankedTensorType::get(namesType.getShape(), namesType.getElementType()),
      ArrayRef<int8_t>(bytes));
  // Sites of the same variants share their names.
  memref::GlobalOp namesGlobal;
  for (auto global : module.getOps<memref::GlobalOp>())
    if (global.getSymName().starts_with("kiln_tuned_site_names") &&
        global.getInitialValue() == namesValue)
      namesGlobal = global;
  if (!namesGlobal) {
    SymbolTable symbols(module);
    OpBuilder atModule(module.getBodyRegion());
    namesGlobal = atModule.create<memref::GlobalOp>(
        op->getLoc(), "kiln_tuned_site_names",
        atModule.getStringAttr("private"), namesType, namesValue,
        /*constant=*/true, /*alignment=*/IntegerAttr());
    symbols.insert(namesGlobal);
  }

  Location loc = op->getLoc();
  OpBuilder b(op);
  Value siteNumber = b.create<arith::ConstantIntOp>(loc, site, 64);
  Value variants = b.create<arith::ConstantIntOp>(
      loc, static_cast<int64_t>(names.size()), 64);
  Value count =
      b.create<func::CallOp>(
           loc, rounds,
           ValueRange{siteNumber, variants, globalPointer(b, loc, namesGlobal)})
          .getResult(0);
  Value upper = b.create<arith::IndexCastOp>(loc, b.getIndexType(), count);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(loc, zero, upper, one);
  loop->setAttr(kTunedSiteAttr, b.getI64IntegerAttr(site));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value round = b.create<arith::IndexCastOp>(loc, i64, loop.getInductionVar());
  Value variant =
      b.create<func::CallOp>(loc, begin, ValueRange{siteNumber, round})
          .getResult(0);
  auto ended = b.create<func::CallOp>(loc, end, ValueRange{siteNumber, round});
  b.setInsertionPoint(ended);
  SmallVector<Operation *> clones;
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    Value index = b.create<arith::ConstantIntOp>(loc, i, 64);
    Value chosen =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, variant, index);
    auto choice = b.create<scf::IfOp>(loc, chosen, /*withElseRegion=*/true);
    choice->setAttr(kTunedVariantAttr, b.getI64IntegerAttr(i));
    OpBuilder then = OpBuilder::atBlockTerminator(choice.thenBlock());
    clones.push_back(then.clone(*op));
    b.setInsertionPoint(choice.elseBlock()->getTerminator());
  }
  clones.push_back(b.clone(*op));
  op->erase();
  return clones;
}

/// Where the kernels run on the host (kiln-cuda-launches-on-cpu) there is
/// no device to time: each tuned site runs every variant once per call,
/// variant 0 last, so that the call's results are variant 0's and every
/// variant's work is checked to run. The runtime's calls become
///   rounds -> the number of variants, begin -> (round + 1) mod that,
/// and end goes, as do their declarations. Fails, with an error on the
/// site, where a site's loop is not as buildTunedSite made it.
inline LogicalResult runEveryVariantOnHost(ModuleOp module) {
  SmallVector<scf::ForOp> sites;
  module.walk([&](scf::ForOp loop) {
    if (isTunedSite(loop))
      sites.push_back(loop);
  });
  for (scf::ForOp loop : sites) {
    auto upper = loop.getUpperBound().getDefiningOp<arith::IndexCastOp>();
    auto rounds =
        upper ? upper.getIn().getDefiningOp<func::CallOp>() : func::CallOp();
    if (!rounds || rounds.getCallee() != kTuneRoundsFunction)
      return loop.emitError("a tuned call site's rounds do not come from ")
             << kTuneRoundsFunction;
    Value variants = rounds.getOperand(1);
    SmallVector<func::CallOp> calls;
    loop.getBody()->walk([&](func::CallOp call) {
      if (call.getCallee() == kTuneBeginFunction ||
          call.getCallee() == kTuneEndFunction)
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      if (call.getCallee() == kTuneBeginFunction) {
        OpBuilder b(call);
        Location loc = call.getLoc();
        Value next =
            b.create<arith::AddIOp>(loc, call.getOperand(1),
                                    b.create<arith::ConstantIntOp>(loc, 1, 64));
        call.getResult(0).replaceAllUsesWith(
            b.create<arith::RemUIOp>(loc, next, variants));
      }
      call.erase();
    }
    rounds.getResult(0).replaceAllUsesWith(variants);
    rounds.erase();
  }
  for (StringRef name :
       {kTuneRoundsFunction, kTuneBeginFunction, kTuneEndFunction}) {
    auto function = module.lookupSymbol<func::FuncOp>(name);
    if (!function)
      continue;
    if (!SymbolTable::symbolKnownUseEmpty(function, module))
      return function.emitError("called outside a tuned call site's loop");
    function.erase();
  }
  return success();
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_TUNEDSITES_H
