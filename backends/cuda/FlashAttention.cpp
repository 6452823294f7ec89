//===- FlashAttention.cpp - f32 attention as a tiled GPU kernel -----------===//
//
// kiln.attention computed as its composition materializes the Nq x Nk
// scores of every head in device memory and streams them through it
// several times. Here each f32 kiln.attention becomes one kernel in the
// manner of FlashAttention: a block of threads owns a tile of query rows
// (one row per thread), walks the keys and values in tiles staged in
// shared memory, and keeps per row an online softmax (running maximum m,
// running sum l, output accumulator acc, rescaled by exp(m - m') when the
// maximum grows), so the scores never leave the thread that computes
// them. A causal attention's blocks stop at the last key their rows see.
//
// As on the CPU (AttentionCalls.cpp), the op is taken aside while it is a
// kiln op and the kernel is built once buffers exist:
//
//   1. kiln-cuda-outline-attention, on kiln IR: each f32 kiln.attention
//      moves into a private function marked `kiln.cuda_attention` (its
//      scale and causal flag), called in its place (OutlinedOps.h).
//   2. kiln-cuda-flash-attention, on memrefs: each call of such a function
//      becomes a gpu.launch of the kernel on the call's buffers; the
//      functions are erased. What the launch reads and writes are the
//      call's operands, so the later CUDA passes (stream ordering, the
//      device arena, kernel outlining) treat it as any other launch.
//
// kiln.attention_grad, and attention in other element types, are
// decomposed into their composition as before (kiln-decompose-attention).
//
//===----------------------------------------------------------------------===//

#include "common/OutlinedOps.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <limits>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAOUTLINEATTENTION
#define GEN_PASS_DEF_KILNCUDAFLASHATTENTION
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The function attribute: {scale = f64, causal = bool}.
static constexpr llvm::StringLiteral kAttentionAttr = "kiln.cuda_attention";

/// Shared memory for one key tile and its value tile, in floats (32 KiB,
/// within the 48 KiB a block may have statically on every architecture).
static constexpr int64_t kSharedFloats = 8192;

namespace {

struct KilnCudaOutlineAttentionPass
    : mlir::kiln::impl::KilnCudaOutlineAttentionBase<
          KilnCudaOutlineAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<mlir::kiln::AttentionOp> ops;
    module.walk([&](mlir::kiln::AttentionOp op) {
      auto isF32 = [](Type type) {
        return cast<RankedTensorType>(type).getElementType().isF32();
      };
      if (llvm::all_of(op->getOperandTypes(), isF32) &&
          llvm::all_of(op->getResultTypes(), isF32))
        ops.push_back(op);
    });
    SymbolTable symbols(module);
    Builder builder(&getContext());
    for (mlir::kiln::AttentionOp op : ops) {
      auto info = builder.getDictionaryAttr(
          {builder.getNamedAttr("scale", builder.getF64FloatAttr(
                                             op.getScale().convertToDouble())),
           builder.getNamedAttr("causal",
                                builder.getBoolAttr(op.getCausal()))});
      func::FuncOp function = mlir::kiln::outlineWithPlaceholderBody(
          op, "kiln_cuda_attention", symbols);
      function->setAttr(kAttentionAttr, info);
    }
  }
};

/// Builds one kernel in place of one call.
class KernelBuilder {
public:
  KernelBuilder(func::CallOp call, int64_t rowsPerBlock, int64_t keysPerTile)
      : call(call), loc(call.getLoc()), b(call), rowsPerBlock(rowsPerBlock),
        keysPerTile(keysPerTile) {}

  LogicalResult build(DictionaryAttr info);

private:
  Value index(int64_t value) {
    return b.create<arith::ConstantIndexOp>(loc, value);
  }
  Value f32(double value) {
    return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(value));
  }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
  Value less(Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, y);
  }
  /// An scf.for from `lower` to `upper` by `step` carrying `inits`; `body`
  /// gets the induction variable and the carried values and returns the
  /// values to carry on.
  scf::ForOp loop(Value lower, Value upper, Value step, ValueRange inits,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto forOp = b.create<scf::ForOp>(loc, lower, upper, step, inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    SmallVector<Value> next =
        body(forOp.getInductionVar(), forOp.getRegionIterArgs());
    if (forOp.getBody()->empty() ||
        !isa<scf::YieldOp>(forOp.getBody()->back()))
      b.create<scf::YieldOp>(loc, next);
    return forOp;
  }
  /// `buffer[leading..., rest...]`, the leading indices being those of
  /// this block's batch entry (0 along the dims `buffer` broadcasts).
  SmallVector<Value> at(Value buffer, ArrayRef<Value> rest) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<Value> indices;
    for (size_t d = 0; d < leadingIndices.size(); ++d)
      indices.push_back(type.getDimSize(d) == 1 ? zero : leadingIndices[d]);
    for (auto [i, value] : llvm::enumerate(rest))
      indices.push_back(
          type.getDimSize(leadingIndices.size() + i) == 1 ? zero : value);
    return indices;
  }

  func::CallOp call;
  Location loc;
  OpBuilder b;
  int64_t rowsPerBlock, keysPerTile;
  Value zero;
  SmallVector<Value> leadingIndices;
};

LogicalResult KernelBuilder::build(DictionaryAttr info) {
  auto scaleAttr = info ? info.getAs<FloatAttr>("scale") : nullptr;
  auto causalAttr = info ? info.getAs<BoolAttr>("causal") : nullptr;
  if (!scaleAttr || !causalAttr)
    return call.emitError() << "'" << kAttentionAttr
                            << "' must be {scale = f64, causal = bool}";
  unsigned count = call.getNumOperands();
  bool masked = count == 6;
  auto staticF32 = [](Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    return type && type.hasStaticShape() && type.getElementType().isF32();
  };
  if ((count != 5 && count != 6) || call.getNumResults() != 0 ||
      !llvm::all_of(call.getOperands(), staticF32))
    return call.emitError()
           << "expected a call on static f32 buffers: query, key, value, "
              "the mask if any, then the result and log-sum-exp buffers";
  Value query = call.getOperand(0), key = call.getOperand(1),
        value = call.getOperand(2);
  Value mask = masked ? call.getOperand(3) : Value();
  Value out = call.getOperand(count - 2), lse = call.getOperand(count - 1);
  auto shapeOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getShape();
  };
  ArrayRef<int64_t> q = shapeOf(query);
  int64_t rank = q.size();
  if (rank < 2 || shapeOf(key).size() != size_t(rank) ||
      shapeOf(value).size() != size_t(rank) ||
      shapeOf(out).size() != size_t(rank) ||
      shapeOf(lse).size() != size_t(rank - 1) ||
      (mask && shapeOf(mask).size() != size_t(rank)))
    return call.emitError() << "the attention's buffers disagree in rank";
  ArrayRef<int64_t> leading = q.drop_back(2);
  int64_t queries = q[rank - 2], headDim = q[rank - 1];
  int64_t keys = shapeOf(key)[rank - 2];
  int64_t valueDim = shapeOf(value)[rank - 1];
  int64_t batch = 1;
  for (int64_t d : leading)
    batch *= d;
  if (batch == 0 || queries == 0) {
    // Nothing to compute: the results are empty.
    call.erase();
    return success();
  }
  double scale = scaleAttr.getValueAsDouble();
  bool causal = causalAttr.getValue();
  int64_t tileKeys = std::max<int64_t>(
      1, std::min(keysPerTile, kSharedFloats /
                                   std::max<int64_t>(1, headDim + valueDim)));

  MLIRContext *context = call.getContext();
  Type f32Type = b.getF32Type();
  auto space = [&](gpu::AddressSpace which) {
    return gpu::AddressSpaceAttr::get(context, which);
  };
  auto workgroup = [&](ArrayRef<int64_t> shape) {
    return MemRefType::get(shape, f32Type, AffineMap(),
                           space(gpu::AddressSpace::Workgroup));
  };
  auto privateBuffer = [&](int64_t size) {
    return MemRefType::get({std::max<int64_t>(size, 1)}, f32Type, AffineMap(),
                           space(gpu::AddressSpace::Private));
  };
  Value one = index(1);
  auto launch = b.create<gpu::LaunchOp>(
      loc, index((queries + rowsPerBlock - 1) / rowsPerBlock), index(batch),
      one, index(rowsPerBlock), one, one,
      /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/Type(),
      /*asyncDependencies=*/ValueRange(),
      /*workgroupAttributions=*/
      TypeRange{workgroup({tileKeys, std::max<int64_t>(headDim, 1)}),
                workgroup({tileKeys, std::max<int64_t>(valueDim, 1)})},
      /*privateAttributions=*/
      TypeRange{privateBuffer(headDim), privateBuffer(valueDim),
                privateBuffer(tileKeys)});
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value keyTile = launch.getWorkgroupAttributions()[0];
  Value valueTile = launch.getWorkgroupAttributions()[1];
  Value queryRow = launch.getPrivateAttributions()[0];
  Value accumulator = launch.getPrivateAttributions()[1];
  Value scores = launch.getPrivateAttributions()[2];

  zero = index(0);
  Value thread = launch.getThreadIds().x;
  Value blockStart = mul(launch.getBlockIds().x, index(rowsPerBlock));
  Value row = add(blockStart, thread);
  Value valid = less(row, index(queries));
  // The batch entry's index along each leading dim, last dim fastest.
  Value entry = launch.getBlockIds().y;
  leadingIndices.assign(leading.size(), Value());
  for (int64_t d = leading.size() - 1; d >= 0; --d) {
    Value size = index(leading[d]);
    leadingIndices[d] = b.create<arith::RemUIOp>(loc, entry, size);
    entry = b.create<arith::DivUIOp>(loc, entry, size);
  }
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value zeroF = f32(0.0), oneF = f32(1.0);
  Value headDimV = index(headDim), valueDimV = index(valueDim);
  Value keysV = index(keys), tileKeysV = index(tileKeys);
  Value rowsV = index(rowsPerBlock);

  // This thread's query row, times the scale, and a zero accumulator.
  auto ifValid = b.create<scf::IfOp>(loc, valid, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifValid.getThenRegion().front());
    Value scaleF = f32(scale);
    loop(zero, headDimV, one, {}, [&](Value d, ValueRange) {
      Value x = b.create<memref::LoadOp>(loc, query, at(query, {row, d}));
      b.create<memref::StoreOp>(loc, b.create<arith::MulFOp>(loc, x, scaleF),
                                queryRow, d);
      return SmallVector<Value>{};
    });
  }
  loop(zero, valueDimV, one, {}, [&](Value c, ValueRange) {
    b.create<memref::StoreOp>(loc, zeroF, accumulator, c);
    return SmallVector<Value>{};
  });

  // The key tiles this block's rows see: all, or up to its last row's
  // diagonal when causal (key j is seen by row i iff j <= i).
  Value tiles;
  if (causal) {
    Value lastRow = b.create<arith::MinSIOp>(loc, add(blockStart, rowsV),
                                             index(queries));
    Value seen = b.create<arith::MinSIOp>(loc, lastRow, keysV);
    tiles = b.create<arith::DivUIOp>(loc, add(seen, index(tileKeys - 1)),
                                     tileKeysV);
  } else {
    tiles = index((keys + tileKeys - 1) / tileKeys);
  }

  auto tileLoop = loop(
      zero, tiles, one, ValueRange{negInf, zeroF},
      [&](Value tile, ValueRange carried) -> SmallVector<Value> {
        Value runningMax = carried[0], runningSum = carried[1];
        Value firstKey = mul(tile, tileKeysV);
        // Stage the tile's keys and values (zeros past the last key), the
        // block's threads taking elements in turn.
        auto stage = [&](Value source, Value target, int64_t width) {
          Value widthV = index(width);
          loop(thread, index(tileKeys * width), rowsV, {},
               [&](Value element, ValueRange) {
                 Value r = b.create<arith::DivUIOp>(loc, element, widthV);
                 Value c = b.create<arith::RemUIOp>(loc, element, widthV);
                 Value k = add(firstKey, r);
                 auto inside = b.create<scf::IfOp>(loc, f32Type,
                                                   less(k, keysV), true);
                 {
                   OpBuilder::InsertionGuard guard(b);
                   b.setInsertionPointToStart(
                       &inside.getThenRegion().front());
                   b.create<scf::YieldOp>(
                       loc, b.create<memref::LoadOp>(loc, source,
                                                     at(source, {k, c}))
                                .getResult());
                   b.setInsertionPointToStart(
                       &inside.getElseRegion().front());
                   b.create<scf::YieldOp>(loc, zeroF);
                 }
                 b.create<memref::StoreOp>(loc, inside.getResult(0), target,
                                           ValueRange{r, c});
                 return SmallVector<Value>{};
               });
        };
        stage(key, keyTile, headDim);
        stage(value, valueTile, valueDim);
        b.create<gpu::BarrierOp>(loc);

        auto update = b.create<scf::IfOp>(loc, TypeRange{f32Type, f32Type},
                                          valid, /*withElse=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&update.getThenRegion().front());
          // The tile's scores (-inf for keys past the end or, when
          // causal, past the row), and their maximum.
          auto scoring = loop(
              zero, tileKeysV, one, ValueRange{negInf},
              [&](Value j, ValueRange tileMax) -> SmallVector<Value> {
                Value k = add(firstKey, j);
                Value seen = less(k, keysV);
                if (causal)
                  seen = b.create<arith::AndIOp>(
                      loc, seen,
                      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle,
                                              k, row));
                auto score = b.create<scf::IfOp>(loc, f32Type, seen, true);
                {
                  OpBuilder::InsertionGuard inner(b);
                  b.setInsertionPointToStart(&score.getThenRegion().front());
                  auto dot = loop(zero, headDimV, one, ValueRange{zeroF},
                                  [&](Value d, ValueRange sum) {
                                    Value x = b.create<memref::LoadOp>(
                                        loc, queryRow, d);
                                    Value y = b.create<memref::LoadOp>(
                                        loc, keyTile, ValueRange{j, d});
                                    return SmallVector<Value>{
                                        b.create<math::FmaOp>(loc, x, y,
                                                              sum[0])};
                                  });
                  Value s = dot.getResult(0);
                  if (mask)
                    s = b.create<arith::AddFOp>(
                        loc, s,
                        b.create<memref::LoadOp>(loc, mask,
                                                 at(mask, {row, k})));
                  b.create<scf::YieldOp>(loc, s);
                  b.setInsertionPointToStart(&score.getElseRegion().front());
                  b.create<scf::YieldOp>(loc, negInf);
                }
                Value s = score.getResult(0);
                b.create<memref::StoreOp>(loc, s, scores, j);
                return {b.create<arith::MaximumFOp>(loc, tileMax[0], s)};
              });
          Value newMax = b.create<arith::MaximumFOp>(loc, runningMax,
                                                     scoring.getResult(0));
          // Nothing seen yet: no rescaling, and every weight is 0 (exp of
          // -inf minus -inf would be NaN).
          Value nothing = b.create<arith::CmpFOp>(
              loc, arith::CmpFPredicate::OEQ, newMax, negInf);
          Value correction = b.create<arith::SelectOp>(
              loc, nothing, oneF,
              b.create<math::ExpOp>(
                  loc, b.create<arith::SubFOp>(loc, runningMax, newMax)));
          loop(zero, valueDimV, one, {}, [&](Value c, ValueRange) {
            Value a = b.create<memref::LoadOp>(loc, accumulator, c);
            b.create<memref::StoreOp>(
                loc, b.create<arith::MulFOp>(loc, a, correction), accumulator,
                c);
            return SmallVector<Value>{};
          });
          auto weighting = loop(
              zero, tileKeysV, one,
              ValueRange{b.create<arith::MulFOp>(loc, runningSum, correction)},
              [&](Value j, ValueRange sum) -> SmallVector<Value> {
                Value s = b.create<memref::LoadOp>(loc, scores, j);
                Value p = b.create<arith::SelectOp>(
                    loc, nothing, zeroF,
                    b.create<math::ExpOp>(
                        loc, b.create<arith::SubFOp>(loc, s, newMax)));
                loop(zero, valueDimV, one, {}, [&](Value c, ValueRange) {
                  Value a = b.create<memref::LoadOp>(loc, accumulator, c);
                  Value v =
                      b.create<memref::LoadOp>(loc, valueTile, ValueRange{j, c});
                  b.create<memref::StoreOp>(
                      loc, b.create<math::FmaOp>(loc, p, v, a), accumulator, c);
                  return SmallVector<Value>{};
                });
                return {b.create<arith::AddFOp>(loc, sum[0], p)};
              });
          b.create<scf::YieldOp>(loc,
                                 ValueRange{newMax, weighting.getResult(0)});
          b.setInsertionPointToStart(&update.getElseRegion().front());
          b.create<scf::YieldOp>(loc, ValueRange{runningMax, runningSum});
        }
        // Every thread is done with the tile before the next is staged.
        b.create<gpu::BarrierOp>(loc);
        return {update.getResult(0), update.getResult(1)};
      });

  // out = acc / l and lse = m + log(l); NaN for a row that saw no finite
  // score (all masked, or no keys), as the softmax's 0 / 0.
  auto write = b.create<scf::IfOp>(loc, valid, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&write.getThenRegion().front());
    Value finalMax = tileLoop.getResult(0), finalSum = tileLoop.getResult(1);
    Value none = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                         finalMax, negInf);
    Value nan = f32(std::numeric_limits<double>::quiet_NaN());
    loop(zero, valueDimV, one, {}, [&](Value c, ValueRange) {
      Value a = b.create<memref::LoadOp>(loc, accumulator, c);
      Value o = b.create<arith::SelectOp>(
          loc, none, nan, b.create<arith::DivFOp>(loc, a, finalSum));
      b.create<memref::StoreOp>(loc, o, out, at(out, {row, c}));
      return SmallVector<Value>{};
    });
    Value logSum = b.create<arith::AddFOp>(
        loc, finalMax, b.create<math::LogOp>(loc, finalSum));
    b.create<memref::StoreOp>(loc,
                              b.create<arith::SelectOp>(loc, none, nan, logSum),
                              lse, at(lse, {row}));
  }
  b.create<gpu::TerminatorOp>(loc);
  call.erase();
  return success();
}

struct KilnCudaFlashAttentionPass
    : mlir::kiln::impl::KilnCudaFlashAttentionBase<
          KilnCudaFlashAttentionPass> {
  using KilnCudaFlashAttentionBase::KilnCudaFlashAttentionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (rowsPerBlock < 1 || rowsPerBlock > 1024 || keysPerTile < 1) {
      module.emitError("kiln-cuda-flash-attention: rows-per-block must be in "
                       "1..1024 and keys-per-tile at least 1");
      return signalPassFailure();
    }
    SetVector<Operation *> callees;
    for (auto [call, callee] :
         mlir::kiln::callsOfMarkedFunctions(module, kAttentionAttr)) {
      KernelBuilder kernel(call, rowsPerBlock, keysPerTile);
      if (failed(kernel.build(
              callee->getAttrOfType<DictionaryAttr>(kAttentionAttr))))
        return signalPassFailure();
      callees.insert(callee);
    }
    for (Operation *callee : callees)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        callee->erase();
  }
};

} // namespace
