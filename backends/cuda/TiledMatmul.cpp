//===- TiledMatmul.cpp - Float matmuls as shared-memory tiled kernels -----===//
//
// The generic mapping gives a matmul one thread per element of C, each
// reading a row of A and a column of B from global memory. Here the block
// of tile x tile threads that computes a tile of C stages matching tiles of
// A and B in shared memory, so each global element is read once per block
// instead of once per thread (see Passes.td for the steps).
//
//===----------------------------------------------------------------------===//

#include "Delinearize.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDATILEDMATMUL
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// A statically shaped f32 or f64 buffer.
bool isStaticFloat(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.hasStaticShape() &&
         (type.getElementType().isF32() || type.getElementType().isF64());
}

struct KilnCudaTiledMatmulPass
    : kiln::impl::KilnCudaTiledMatmulBase<KilnCudaTiledMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    if (tile < 1 || tile * tile > 1024) {
      getOperation().emitError(
          "kiln-cuda-tiled-matmul: tile must be in 1..32");
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) ||
          !op.hasPureBufferSemantics() ||
          op->getParentOfType<gpu::LaunchOp>())
        return;
      Type element = cast<MemRefType>(op->getOperand(0).getType())
                         .getElementType();
      if (llvm::all_of(op->getOperands(), isStaticFloat) &&
          llvm::all_of(op->getOperands(), [&](Value operand) {
            return cast<MemRefType>(operand.getType()).getElementType() ==
                   element;
          }))
        matmuls.push_back(op);
    });
    for (linalg::LinalgOp op : matmuls)
      rewrite(op);
  }

  void rewrite(linalg::LinalgOp op) {
    Location loc = op.getLoc();
    OpBuilder builder(op);
    Value a = op.getDpsInputOperand(0)->get();
    Value b = op.getDpsInputOperand(1)->get();
    Value c = op.getDpsInitOperand(0)->get();
    bool batched = isa<linalg::BatchMatmulOp>(op.getOperation());
    ArrayRef<int64_t> aShape = cast<MemRefType>(a.getType()).getShape();
    ArrayRef<int64_t> cShape = cast<MemRefType>(c.getType()).getShape();
    int64_t batch = batched ? cShape[0] : 1;
    int64_t m = cShape[batched ? 1 : 0], n = cShape[batched ? 2 : 1];
    int64_t k = aShape[batched ? 2 : 1];

    auto index = [&](int64_t value) -> Value {
      return builder.create<arith::ConstantIndexOp>(loc, value);
    };
    auto ceilDiv = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
    Type element = cast<MemRefType>(c.getType()).getElementType();
    auto shared = MemRefType::get(
        {tile, tile}, element, AffineMap(),
        gpu::AddressSpaceAttr::get(builder.getContext(),
                                   gpu::AddressSpace::Workgroup));
    Value one = index(1);
    // Grid x numbers the blocks, column tiles fastest: grid y and z hold
    // at most 65535 blocks.
    int64_t columnTiles = std::max<int64_t>(1, ceilDiv(n, tile));
    int64_t rowTiles = std::max<int64_t>(1, ceilDiv(m, tile));
    auto launch = builder.create<gpu::LaunchOp>(
        loc, index(columnTiles * rowTiles * std::max<int64_t>(1, batch)), one,
        one, index(tile), index(tile), one,
        /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/Type(),
        /*asyncDependencies=*/ValueRange(),
        /*workgroupAttributions=*/TypeRange{shared, shared});
    Block &body = launch.getBody().front();
    builder.setInsertionPointToStart(&body);
    Value aTile = launch.getWorkgroupAttributions()[0];
    Value bTile = launch.getWorkgroupAttributions()[1];
    Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
    Value tileSize = index(tile);
    SmallVector<Value> tileOf =
        kiln::delinearizeIndex(builder, loc, launch.getBlockIds().x,
                               {index(std::max<int64_t>(1, batch)),
                                index(rowTiles), index(columnTiles)});
    Value batchIndex = tileOf[0], rowTile = tileOf[1], columnTile = tileOf[2];
    Value row = builder.create<arith::AddIOp>(
        loc, builder.create<arith::MulIOp>(loc, rowTile, tileSize), ty);
    Value col = builder.create<arith::AddIOp>(
        loc, builder.create<arith::MulIOp>(loc, columnTile, tileSize), tx);
    Value zero = builder.create<arith::ConstantOp>(
        loc, builder.getFloatAttr(element, 0.0));
    auto less = [&](Value lhs, int64_t bound) -> Value {
      return builder.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                           lhs, index(bound));
    };
    auto at = [&](Value i, Value j) {
      SmallVector<Value> indices;
      if (batched)
        indices.push_back(batchIndex);
      indices.push_back(i);
      indices.push_back(j);
      return indices;
    };
    /// `source[at(i, j)]` where both are in bounds, else 0.
    auto loadOrZero = [&](Value source, Value i, int64_t iBound, Value j,
                          int64_t jBound) -> Value {
      Value inside = builder.create<arith::AndIOp>(loc, less(i, iBound),
                                                   less(j, jBound));
      auto choose = builder.create<scf::IfOp>(loc, element, inside,
                                              /*withElse=*/true);
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&choose.getThenRegion().front());
      Value loaded = builder.create<memref::LoadOp>(loc, source, at(i, j));
      builder.create<scf::YieldOp>(loc, loaded);
      builder.setInsertionPointToStart(&choose.getElseRegion().front());
      builder.create<scf::YieldOp>(loc, zero);
      return choose.getResult(0);
    };

    // 1-2. The steps along K.
    auto steps = builder.create<scf::ForOp>(loc, index(0),
                                            index(ceilDiv(k, tile)), one,
                                            ValueRange{zero});
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(steps.getBody());
      Value k0 = builder.create<arith::MulIOp>(loc, steps.getInductionVar(),
                                               tileSize);
      Value aCol = builder.create<arith::AddIOp>(loc, k0, tx);
      Value bRow = builder.create<arith::AddIOp>(loc, k0, ty);
      builder.create<memref::StoreOp>(loc, loadOrZero(a, row, m, aCol, k),
                                      aTile, ValueRange{ty, tx});
      builder.create<memref::StoreOp>(loc, loadOrZero(b, bRow, k, col, n),
                                      bTile, ValueRange{ty, tx});
      builder.create<gpu::BarrierOp>(loc);
      auto dot = builder.create<scf::ForOp>(
          loc, index(0), tileSize, one,
          ValueRange{steps.getRegionIterArgs()[0]});
      {
        OpBuilder::InsertionGuard inner(builder);
        builder.setInsertionPointToStart(dot.getBody());
        Value kk = dot.getInductionVar();
        Value x = builder.create<memref::LoadOp>(loc, aTile,
                                                 ValueRange{ty, kk});
        Value y = builder.create<memref::LoadOp>(loc, bTile,
                                                 ValueRange{kk, tx});
        Value sum = builder.create<arith::AddFOp>(
            loc, dot.getRegionIterArgs()[0],
            builder.create<arith::MulFOp>(loc, x, y));
        builder.create<scf::YieldOp>(loc, sum);
      }
      builder.create<gpu::BarrierOp>(loc);
      builder.create<scf::YieldOp>(loc, dot.getResult(0));
    }

    // 3. Into C.
    Value inside =
        builder.create<arith::AndIOp>(loc, less(row, m), less(col, n));
    auto store = builder.create<scf::IfOp>(loc, inside, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&store.getThenRegion().front());
      Value old = builder.create<memref::LoadOp>(loc, c, at(row, col));
      Value sum =
          builder.create<arith::AddFOp>(loc, old, steps.getResult(0));
      builder.create<memref::StoreOp>(loc, sum, c, at(row, col));
    }
    builder.create<gpu::TerminatorOp>(loc);
    op->erase();
  }
};
} // namespace
