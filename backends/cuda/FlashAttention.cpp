//===- FlashAttention.cpp - f32 attention as a tiled GPU kernel -----------===//
//
// kiln.attention computed as its composition materializes the Nq x Nk
// scores of every head in device memory and streams them through it
// several times. Here each f32 kiln.attention becomes one kernel in the
// manner of FlashAttention: a block of threads owns a tile of query rows,
// a few threads (lanes) per row each holding a share of the row's head
// dims in registers, walks the keys and values in tiles staged in shared
// memory, and keeps per row an online softmax (running maximum m, running
// sum l, output accumulator acc, rescaled by exp(m - m') when the maximum
// grows), so the scores never leave the block that computes them. A
// causal attention's blocks stop at their last row's diagonal.
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
#include "llvm/Support/MathExtras.h"

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

/// Workgroup memory for a key tile, its value tile and the block's scores
/// of that tile, in floats (44 KiB, within the 48 KiB a block may have
/// statically on every architecture).
static constexpr int64_t kSharedFloats = 11264;

/// Head dims a lane aims at, and the most it may hold: each lane keeps its
/// share of the scaled query row and of the output accumulator in
/// registers, so an attention that would leave a lane more than
/// kMaxDimsPerLane is decomposed instead.
static constexpr int64_t kDimsPerLane = 8;
static constexpr int64_t kMaxDimsPerLane = 64;

/// Threads (lanes) per query row: a power of two up to 32 dividing both
/// head dims, doubled while a lane would hold more than kDimsPerLane of
/// the wider one. Lane g of a row owns dims g, g + lanes, ..., so the
/// lanes of a row read neighbouring words of a staged tile.
static int64_t lanesPerRow(int64_t headDim, int64_t valueDim) {
  int64_t lanes = 1;
  int64_t widest = std::max(headDim, valueDim);
  while (lanes < 32 && headDim % (2 * lanes) == 0 &&
         valueDim % (2 * lanes) == 0 && widest / lanes > kDimsPerLane)
    lanes *= 2;
  return lanes;
}

/// Whether the kernel takes an attention with these head dims.
static bool fitsTheKernel(int64_t headDim, int64_t valueDim) {
  int64_t lanes = lanesPerRow(headDim, valueDim);
  return std::max(headDim, valueDim) / lanes <= kMaxDimsPerLane;
}

namespace {

struct KilnCudaOutlineAttentionPass
    : mlir::kiln::impl::KilnCudaOutlineAttentionBase<
          KilnCudaOutlineAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<mlir::kiln::AttentionOp> ops;
    module.walk([&](mlir::kiln::AttentionOp op) {
      auto isStaticF32 = [](Type type) {
        auto tensor = cast<RankedTensorType>(type);
        return tensor.getElementType().isF32() && tensor.hasStaticShape();
      };
      if (!llvm::all_of(op->getOperandTypes(), isStaticF32) ||
          !llvm::all_of(op->getResultTypes(), isStaticF32))
        return;
      int64_t headDim =
          cast<RankedTensorType>(op->getOperand(0).getType()).getShape().back();
      int64_t valueDim =
          cast<RankedTensorType>(op->getOperand(2).getType()).getShape().back();
      if (fitsTheKernel(headDim, valueDim))
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
  Value equal(Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, y);
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
  /// Runs `body` under `condition` (an scf.if without results).
  void when(Value condition, function_ref<void()> body) {
    auto ifOp = b.create<scf::IfOp>(loc, condition, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
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
  if (!fitsTheKernel(headDim, valueDim))
    return call.emitError()
           << "head dims " << headDim << " and " << valueDim
           << " leave a thread more than " << kMaxDimsPerLane
           << " of them; kiln-cuda-outline-attention leaves such "
              "attentions to their composition";
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
  int64_t lanes = lanesPerRow(headDim, valueDim);
  int64_t queryDims = headDim / lanes, valueDims = valueDim / lanes;
  int64_t rows = std::max<int64_t>(1, std::min(rowsPerBlock, 1024 / lanes));
  // A shuffle takes the whole warp (all 32 threads named in its mask), so
  // with several lanes per row a block is made of whole warps.
  if (lanes > 1)
    rows = llvm::alignTo(rows, 32 / lanes);
  int64_t threads = rows * lanes;
  int64_t tileKeys = std::max<int64_t>(
      1, std::min(keysPerTile,
                  kSharedFloats /
                      std::max<int64_t>(1, headDim + valueDim + rows)));

  MLIRContext *context = call.getContext();
  Type f32Type = b.getF32Type();
  auto workgroup = [&](ArrayRef<int64_t> shape) {
    return MemRefType::get(
        shape, f32Type, AffineMap(),
        gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
  };
  Value one = index(1);
  auto launch = b.create<gpu::LaunchOp>(
      loc, index((queries + rows - 1) / rows), index(batch), one,
      index(threads), one, one,
      /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/Type(),
      /*asyncDependencies=*/ValueRange(),
      /*workgroupAttributions=*/
      TypeRange{workgroup({tileKeys, std::max<int64_t>(headDim, 1)}),
                workgroup({tileKeys, std::max<int64_t>(valueDim, 1)}),
                workgroup({rows, tileKeys})});
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value keyTile = launch.getWorkgroupAttributions()[0];
  Value valueTile = launch.getWorkgroupAttributions()[1];
  Value scoreTile = launch.getWorkgroupAttributions()[2];

  zero = index(0);
  Value thread = launch.getThreadIds().x;
  Value lanesV = index(lanes);
  Value lane = b.create<arith::RemUIOp>(loc, thread, lanesV);
  Value local = b.create<arith::DivUIOp>(loc, thread, lanesV);
  Value blockStart = mul(launch.getBlockIds().x, index(rows));
  Value row = add(blockStart, local);
  Value valid = less(row, index(queries));
  // Rows past the end compute on the last row, so that every thread takes
  // part in the shuffles and barriers; they write nothing.
  Value readRow = b.create<arith::MinSIOp>(loc, row, index(queries - 1));
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
  Value keysV = index(keys), tileKeysV = index(tileKeys);

  // The dims this lane owns, and its share of the scaled query row; the
  // output accumulator starts at zero. Both live in registers (values
  // carried by the loops), never in memory.
  auto dimsOfLane = [&](int64_t count) {
    SmallVector<Value> dims;
    for (int64_t t = 0; t < count; ++t)
      dims.push_back(add(index(t * lanes), lane));
    return dims;
  };
  SmallVector<Value> queryDim = dimsOfLane(queryDims);
  SmallVector<Value> valueDimOf = dimsOfLane(valueDims);
  SmallVector<Value> scaledQuery;
  Value scaleF = f32(scale);
  for (Value d : queryDim)
    scaledQuery.push_back(b.create<arith::MulFOp>(
        loc, b.create<memref::LoadOp>(loc, query, at(query, {readRow, d})),
        scaleF));

  // The key tiles this block's rows see: all, or up to its last row's
  // diagonal when causal (key j is seen by row i iff j <= i).
  Value tiles;
  if (causal) {
    Value lastRow = b.create<arith::MinSIOp>(loc, add(blockStart, index(rows)),
                                             index(queries));
    Value seen = b.create<arith::MinSIOp>(loc, lastRow, keysV);
    tiles = b.create<arith::DivUIOp>(loc, add(seen, index(tileKeys - 1)),
                                     tileKeysV);
  } else {
    tiles = index((keys + tileKeys - 1) / tileKeys);
  }

  // Carried through the tiles: the running maximum, the running sum, then
  // the lane's accumulators.
  SmallVector<Value> inits{negInf, zeroF};
  inits.append(valueDims, zeroF);
  auto tileLoop = loop(
      zero, tiles, one, inits,
      [&](Value tile, ValueRange carried) -> SmallVector<Value> {
        Value runningMax = carried[0], runningSum = carried[1];
        ValueRange accumulators = carried.drop_front(2);
        Value firstKey = mul(tile, tileKeysV);
        // Stage the tile's keys and values (zeros past the last key), the
        // block's threads taking neighbouring elements.
        auto stage = [&](Value source, Value target, int64_t width) {
          Value widthV = index(width);
          loop(thread, index(tileKeys * width), index(threads), {},
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

        // The tile's scores (-inf for keys past the end or, when causal,
        // past the row) into workgroup memory, and their maximum: each
        // lane sums the products of its dims, a butterfly of shuffles
        // gives every lane of the row the same total, and the lane whose
        // turn it is stores it.
        auto scoring = loop(
            zero, tileKeysV, one, ValueRange{negInf},
            [&](Value j, ValueRange tileMax) -> SmallVector<Value> {
              Value k = add(firstKey, j);
              Value s = zeroF;
              for (auto [x, d] : llvm::zip(scaledQuery, queryDim))
                s = b.create<math::FmaOp>(
                    loc, x,
                    b.create<memref::LoadOp>(loc, keyTile, ValueRange{j, d}),
                    s);
              for (int64_t offset = lanes / 2; offset >= 1; offset /= 2)
                s = b.create<arith::AddFOp>(
                    loc, s,
                    b.create<gpu::ShuffleOp>(loc, s, int32_t(offset),
                                             int32_t(32),
                                             gpu::ShuffleMode::XOR)
                        .getShuffleResult());
              if (mask) {
                Value readKey =
                    b.create<arith::MinSIOp>(loc, k, index(keys - 1));
                s = b.create<arith::AddFOp>(
                    loc, s,
                    b.create<memref::LoadOp>(loc, mask,
                                             at(mask, {readRow, readKey})));
              }
              Value seen = less(k, keysV);
              if (causal)
                seen = b.create<arith::AndIOp>(
                    loc, seen,
                    b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, k,
                                            row));
              s = b.create<arith::SelectOp>(loc, seen, s, negInf);
              when(equal(lane, b.create<arith::RemUIOp>(loc, j, lanesV)),
                   [&] {
                     b.create<memref::StoreOp>(loc, s, scoreTile,
                                               ValueRange{local, j});
                   });
              return {b.create<arith::MaximumFOp>(loc, tileMax[0], s)};
            });
        b.create<gpu::BarrierOp>(loc);

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
        SmallVector<Value> weightInits{
            b.create<arith::MulFOp>(loc, runningSum, correction)};
        for (Value a : accumulators)
          weightInits.push_back(b.create<arith::MulFOp>(loc, a, correction));
        auto weighting = loop(
            zero, tileKeysV, one, weightInits,
            [&](Value j, ValueRange sums) -> SmallVector<Value> {
              Value s = b.create<memref::LoadOp>(loc, scoreTile,
                                                 ValueRange{local, j});
              Value p = b.create<arith::SelectOp>(
                  loc, nothing, zeroF,
                  b.create<math::ExpOp>(
                      loc, b.create<arith::SubFOp>(loc, s, newMax)));
              SmallVector<Value> next{
                  b.create<arith::AddFOp>(loc, sums[0], p)};
              for (auto [a, d] :
                   llvm::zip(sums.drop_front(), valueDimOf))
                next.push_back(b.create<math::FmaOp>(
                    loc, p,
                    b.create<memref::LoadOp>(loc, valueTile,
                                             ValueRange{j, d}),
                    a));
              return next;
            });
        // Every thread is done with the tile before the next is staged.
        b.create<gpu::BarrierOp>(loc);
        SmallVector<Value> next{newMax};
        llvm::append_range(next, weighting.getResults());
        return next;
      });

  // out = acc / l and lse = m + log(l); NaN for a row that saw no finite
  // score (all masked, or no keys), as the softmax's 0 / 0.
  when(valid, [&] {
    Value finalMax = tileLoop.getResult(0), finalSum = tileLoop.getResult(1);
    Value none = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                         finalMax, negInf);
    Value nan = f32(std::numeric_limits<double>::quiet_NaN());
    for (auto [a, d] :
         llvm::zip(tileLoop.getResults().drop_front(2), valueDimOf)) {
      Value o = b.create<arith::SelectOp>(
          loc, none, nan, b.create<arith::DivFOp>(loc, a, finalSum));
      b.create<memref::StoreOp>(loc, o, out, at(out, {row, d}));
    }
    when(equal(lane, zero), [&] {
      Value logSum = b.create<arith::AddFOp>(
          loc, finalMax, b.create<math::LogOp>(loc, finalSum));
      b.create<memref::StoreOp>(
          loc, b.create<arith::SelectOp>(loc, none, nan, logSum), lse,
          at(lse, {row}));
    });
  });
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
