//===- MapParallelLoops.cpp - scf.parallel to grid-stride kernels ---------===//
//
// Each outermost `scf.parallel` without results becomes one `gpu.launch`:
//   1. the trip count of every dimension, ceil((ub - lb) / step), and their
//      product `total` are computed on the host;
//   2. the launch has min(ceil(total / blockSize), maxBlocks) blocks (at
//      least one) of blockSize threads, all along x;
//   3. inside, `scf.for %l = blockIdx*blockDim + threadIdx to total step
//      gridDim*blockDim` (a grid-stride loop) delinearizes %l, row-major,
//      into one induction value per dimension (Delinearize.h: 32-bit
//      divisions by the constant trip counts where the space fits) and
//      runs a clone of the body.
// A linalg op lowered by `convert-linalg-to-parallel-loops` is one such
// loop (reduction dimensions are sequential `scf.for` inside it), so every
// elementwise op, reduction over inner dimensions and matmul becomes one
// kernel. Loops outside any `scf.parallel` are left alone (a reduction to a
// scalar is already a one-thread kernel, kiln-cuda-scalar-kernels).
//
//===----------------------------------------------------------------------===//

#include "Delinearize.h"
#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAMAPPARALLELLOOPS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnCudaMapParallelLoopsPass
    : kiln::impl::KilnCudaMapParallelLoopsBase<KilnCudaMapParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize <= 0 || blockSize > 1024 || maxBlocks <= 0 ||
        maxBlocks > 2147483647) {
      getOperation().emitError("kiln-cuda-map-parallel-loops: block-size must "
                               "be in 1..1024 and max-blocks in 1..2^31-1");
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop.getNumResults() == 0 &&
          !loop->getParentOfType<scf::ParallelOp>() &&
          !loop->getParentOfType<gpu::LaunchOp>())
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops)
      mapLoop(loop);
  }

  void mapLoop(scf::ParallelOp loop) {
    Location loc = loop.getLoc();
    OpBuilder builder(loop);
    auto constant = [&](int64_t value) -> Value {
      return builder.create<arith::ConstantIndexOp>(loc, value);
    };
    Value one = constant(1);

    // 1. Trip counts and their product (folded when the bounds are
    // constants, as they are for statically shaped tensors).
    SmallVector<Value> counts;
    Value total = one;
    for (auto [lower, upper, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(),
                   loop.getStep())) {
      Value extent = builder.createOrFold<arith::SubIOp>(loc, upper, lower);
      Value count = builder.createOrFold<arith::CeilDivSIOp>(loc, extent, step);
      count = builder.createOrFold<arith::MaxSIOp>(loc, count, constant(0));
      counts.push_back(count);
      total = builder.createOrFold<arith::MulIOp>(loc, total, count);
    }

    // 2. The grid.
    Value threads = constant(blockSize);
    Value blocks = builder.createOrFold<arith::CeilDivSIOp>(loc, total, threads);
    blocks = builder.createOrFold<arith::MinSIOp>(loc, blocks, constant(maxBlocks));
    blocks = builder.createOrFold<arith::MaxSIOp>(loc, blocks, one);
    auto launch = builder.create<gpu::LaunchOp>(loc, blocks, one, one,
                                                threads, one, one);

    // 3. The grid-stride loop and the delinearized body.
    Block &body = launch.getBody().front();
    builder.setInsertionPointToStart(&body);
    gpu::KernelDim3 blockId = launch.getBlockIds();
    gpu::KernelDim3 threadId = launch.getThreadIds();
    gpu::KernelDim3 gridSize = launch.getGridSize();
    gpu::KernelDim3 blockDim = launch.getBlockSize();
    Value start = builder.create<arith::AddIOp>(
        loc, builder.create<arith::MulIOp>(loc, blockId.x, blockDim.x),
        threadId.x);
    Value stride = builder.create<arith::MulIOp>(loc, gridSize.x, blockDim.x);
    auto strided = builder.create<scf::ForOp>(loc, start, total, stride);
    builder.create<gpu::TerminatorOp>(loc);

    builder.setInsertionPointToStart(strided.getBody());
    IRMapping mapping;
    SmallVector<Value> indices = kiln::delinearizeIndex(
        builder, loc, strided.getInductionVar(), counts);
    for (size_t dim = 0; dim < indices.size(); ++dim) {
      Value scaled =
          builder.create<arith::MulIOp>(loc, indices[dim], loop.getStep()[dim]);
      indices[dim] = builder.create<arith::AddIOp>(
          loc, loop.getLowerBound()[dim], scaled);
    }
    for (auto [inductionVar, index] :
         llvm::zip(loop.getInductionVars(), indices))
      mapping.map(inductionVar, index);
    for (Operation &op : loop.getBody()->without_terminator())
      builder.clone(op, mapping);
    loop.erase();
  }
};
} // namespace
