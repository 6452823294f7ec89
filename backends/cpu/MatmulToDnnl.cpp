//===- MatmulToDnnl.cpp - f32 GEMMs as oneDNN calls -----------------------===//
//
// Loops generated from linalg.matmul reach a small fraction of the FMA peak;
// oneDNN's sgemm reaches about 90% of it (blocking for the caches, packed
// AVX-512 micro-kernels, its own OpenMP threads). After bufferization, every
// f32 linalg.matmul and linalg.batch_matmul on memrefs whose rows are
// contiguous becomes a call to
//
//   dnnl_sgemm('N', 'N', M, N, K, 1.0, A, lda, B, ldb, 1.0, C, ldc)
//
// (row-major; beta 1 keeps linalg's C += A * B), one call per batch for
// batch_matmul. When the op right before is a linalg.fill of C with zero
// (what the lowering writes), the fill is dropped and beta is 0: sgemm then
// writes C without reading it. Leading
// dimensions come from the memrefs' strides, so views of larger buffers work
// without a copy. Products smaller than `min-macs` multiply-adds stay loops:
// the library call costs more than they do.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUMATMULTODNNL
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

static constexpr llvm::StringLiteral kSgemm = "dnnl_sgemm";

/// A statically shaped f32 memref whose last dim is contiguous (stride 1),
/// so that it is a row-major matrix (or a batch of them) with some leading
/// dimension.
static bool isRowMajorF32(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  return !strides.empty() && strides.back() == 1;
}

/// The linalg.fill of `init` with +0.0 right before `op`, if there is one.
static linalg::FillOp zeroFillBefore(Operation *op, Value init) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getDpsInitOperand(0)->get() != init)
    return nullptr;
  FloatAttr value;
  if (!matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant(&value)))
    return nullptr;
  return value.getValue().isPosZero() ? fill : nullptr;
}

namespace {
/// The address of a memref's first element, its strides, as values.
struct MatrixView {
  Value address; // i64
  SmallVector<Value> strides; // index
};

/// The `memref.view` a memref is derived from through view-like ops, if
/// any (the arenas of kiln-cpu-plan-memory). Its byte shift must be added
/// explicitly: `expand-strided-metadata` folds the metadata of view-like ops
/// into that of their source and drops the shift of a `memref.view`, while
/// the offset it leaves is relative to the view.
memref::ViewOp arenaViewOf(Value memref) {
  Operation *def = memref.getDefiningOp();
  while (auto viewLike = dyn_cast_or_null<ViewLikeOpInterface>(def)) {
    if (auto view = dyn_cast<memref::ViewOp>(def))
      return view;
    def = viewLike.getViewSource().getDefiningOp();
  }
  return nullptr;
}

MatrixView viewOf(OpBuilder &builder, Location loc, Value memref) {
  auto metadata = builder.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Value base;
  if (memref::ViewOp view = arenaViewOf(memref)) {
    // The arena's pointer plus the byte shift, then the offset from the
    // view (see arenaViewOf).
    base = builder.create<memref::ExtractAlignedPointerAsIndexOp>(
        loc, view.getSource());
    base = builder.create<arith::AddIOp>(loc, base, view.getByteShift());
  } else {
    base = builder.create<memref::ExtractAlignedPointerAsIndexOp>(
        loc, metadata.getBaseBuffer());
  }
  Value four = builder.create<arith::ConstantIndexOp>(loc, 4);
  Value offset =
      builder.create<arith::MulIOp>(loc, metadata.getOffset(), four);
  Value address = builder.create<arith::AddIOp>(loc, base, offset);
  MatrixView view;
  view.address = builder.create<arith::IndexCastOp>(loc, builder.getI64Type(),
                                                    address);
  view.strides.assign(metadata.getStrides().begin(),
                      metadata.getStrides().end());
  return view;
}

struct KilnCpuMatmulToDnnlPass
    : kiln::impl::KilnCpuMatmulToDnnlBase<KilnCpuMatmulToDnnlPass> {
  using KilnCpuMatmulToDnnlBase::KilnCpuMatmulToDnnlBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> products;
    module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
          !op.hasPureBufferSemantics())
        return;
      if (!llvm::all_of(op->getOperands(), isRowMajorF32))
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t macs = 1;
      for (int64_t range : ranges)
        macs *= range;
      if (macs >= static_cast<int64_t>(minMacs))
        products.push_back(op);
    });
    if (products.empty())
      return;

    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Type i32 = builder.getI32Type(), i64 = builder.getI64Type(),
         f32 = builder.getF32Type();
    Type pointer = LLVM::LLVMPointerType::get(context);
    auto sgemmType = builder.getFunctionType(
        {i32, i32, i64, i64, i64, f32, pointer, i64, pointer, i64, f32,
         pointer, i64},
        {i32});
    auto sgemm = module.lookupSymbol<func::FuncOp>(kSgemm);
    if (!sgemm) {
      builder.setInsertionPointToStart(module.getBody());
      sgemm = builder.create<func::FuncOp>(module.getLoc(), kSgemm, sgemmType);
      sgemm.setPrivate();
    } else if (sgemm.getFunctionType() != sgemmType) {
      sgemm.emitError() << "'" << kSgemm
                        << "' is declared with an unexpected type";
      return signalPassFailure();
    }

    for (linalg::LinalgOp op : products) {
      Location loc = op.getLoc();
      builder.setInsertionPoint(op);
      bool batched = isa<linalg::BatchMatmulOp>(op);
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      // Loop ranges: [batch,] m, n, k.
      int64_t batch = batched ? ranges[0] : 1;
      ArrayRef<int64_t> mnk = ArrayRef<int64_t>(ranges).take_back(3);
      Value a = op.getDpsInputOperand(0)->get();
      Value b = op.getDpsInputOperand(1)->get();
      Value c = op.getDpsInitOperand(0)->get();
      linalg::FillOp zeroFill = zeroFillBefore(op, c);
      MatrixView views[] = {viewOf(builder, loc, a), viewOf(builder, loc, b),
                            viewOf(builder, loc, c)};
      auto constI64 = [&](int64_t value) -> Value {
        return builder.create<arith::ConstantIntOp>(loc, value, 64);
      };
      auto toI64 = [&](Value index) -> Value {
        return builder.create<arith::IndexCastOp>(loc, i64, index);
      };
      Value transpose = builder.create<arith::ConstantIntOp>(loc, 'N', 32);
      Value one = builder.create<arith::ConstantFloatOp>(
          loc, APFloat(1.0f), cast<FloatType>(f32));
      Value beta = one;
      if (zeroFill) {
        beta = zeroFill.getDpsInputOperand(0)->get();
        zeroFill->erase();
      }
      unsigned rowDim = batched ? 1 : 0;
      Value leading[3];
      for (int i = 0; i < 3; ++i)
        leading[i] = toI64(views[i].strides[rowDim]);

      auto emitCall = [&](OpBuilder &b, Value batchIndex) {
        Value pointers[3];
        for (int i = 0; i < 3; ++i) {
          Value address = views[i].address;
          if (batchIndex) {
            Value step = b.create<arith::MulIOp>(
                loc, toI64(batchIndex), toI64(views[i].strides[0]));
            step = b.create<arith::MulIOp>(loc, step, constI64(4));
            address = b.create<arith::AddIOp>(loc, address, step);
          }
          pointers[i] = b.create<LLVM::IntToPtrOp>(loc, pointer, address);
        }
        b.create<func::CallOp>(
            loc, sgemm,
            ValueRange{transpose, transpose, constI64(mnk[0]), constI64(mnk[1]),
                       constI64(mnk[2]), one, pointers[0], leading[0],
                       pointers[1], leading[1], beta, pointers[2],
                       leading[2]});
      };
      if (batched) {
        Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
        Value step = builder.create<arith::ConstantIndexOp>(loc, 1);
        Value count = builder.create<arith::ConstantIndexOp>(loc, batch);
        auto loop = builder.create<scf::ForOp>(loc, zero, count, step);
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(loop.getBody()->getTerminator());
        emitCall(builder, loop.getInductionVar());
      } else {
        emitCall(builder, Value());
      }
      op->erase();
    }
  }
};
} // namespace
