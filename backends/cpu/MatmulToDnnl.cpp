//===- MatmulToDnnl.cpp - f32 and bf16 GEMMs as oneDNN calls --------------===//
//
// Loops generated from linalg.matmul reach a small fraction of the FMA peak;
// oneDNN's GEMMs reach about 90% of it (blocking for the caches, packed
// AVX-512 micro-kernels, its own OpenMP threads). After bufferization, every
// f32 or bf16 (into f32) matmul-like contraction on memrefs whose rows are
// contiguous (linalg.matmul, batch_matmul, their _transpose_a/_b variants,
// and the generics that kiln-fold-transposes-into-matmuls makes, whose
// maps read A as [m, k] or [k, m] and B as [k, n] or [n, k]) becomes one of
// two calls:
//
//   - oneDNN's matmul primitive, through kiln_dnnl_matmul (DnnlMatmul.c,
//     a primitive cached per call site; DnnlMatmulAbi.h), for every bf16
//     product and for the f32 ones that read B transposed and A not: there
//     its brgemm kernels beat the GEMMs. Measured with the MLP training
//     step's products, 1 and 2 threads: f32 dY W^T (256x1024x1024, B
//     transposed) 2.86 -> 2.58 ms and 1.69 -> 1.43 ms on a Xeon with AMX,
//     2.32 -> 2.14 ms and 1.83 -> 1.15 ms on an AMD EPYC; the bf16 ones,
//     on AMX tiles, 3.68 -> 3.39 ms and 2.13 -> 1.67 ms all five together.
//     The other f32 products are as fast or faster through sgemm (the
//     transposed-A ones 10-20% faster on the Xeon), so they stay there,
//     except those with a constant B of few rows (a recurrence's weights)
//     or of many multiply-adds (a transformer's projections), which the
//     primitive keeps packed (KILN_DNNL_MATMUL_CONSTANT_B: any product
//     whose B is a constant global passes it). A
//     whole batch is one call: the primitive threads over it.
//   - dnnl_sgemm(ta, tb, M, N, K, 1.0, A, lda, B, ldb, 1.0, C, ldc) for the
//     other f32 products (row-major; 'T' for an operand read transposed,
//     which sgemm does in place; beta 1 keeps linalg's C += A * B), one call
//     per batch for batched ones: an scf.parallel over the batch when there
//     are at least 4 products of fewer than 2^22 multiply-adds each (so each
//     thread runs whole products), an scf.for otherwise.
//
// Products of 8-bit integers into i32 (kiln.matmul's widened bytes: int8
// or uint8 A and B, each widened by the signedness its body's extsi/extui
// says) always go to the primitive, oneDNN's int8 kernels (AMX or VNNI: a
// dynamically quantized BERT-base's 128x768 by 768x3072 in 0.43 ms on one
// thread of a Xeon with AMX, against 54 ms in kiln's own loops); uint8 B,
// which the kernels do not take, runs as int8 B - 128 with 128 times A's
// row sums added (DnnlMatmul.c). Where the CPU has no VNNI,
// kiln_dnnl_matmul computes them in plain loops instead (oneDNN's older
// int8 kernels saturate).
//
// When the last op before the product to touch C is a linalg.fill of C with
// zero (what the lowering writes), the fill is dropped and the call
// overwrites C (sgemm's beta 0; no accumulation for the primitive). When
// the next op to touch an overwritten f32 C of a primitive's product adds
// a bias row to it in place (a dense layer's bias, C[i, j] + bias[j]:
// common/GemmForm.h's biasAdditionAfter, which the CUDA backend's cuBLASLt
// epilogue shares), the primitive adds it as it writes C
// (KILN_DNNL_MATMUL_BIAS) and that pass goes. Leading dimensions and batch
// strides come from the memrefs' strides, so views of larger buffers work
// without a copy. Products smaller than `min-macs` multiply-adds stay
// loops: the library call costs more than they do.
//
// Where oneDNN's primitive on the compiling CPU would keep a constant B
// plain (below AVX-512), the products of at most 16 rows by it call kiln's
// own packed kernel (callPackedKernel), and those of more rows read a copy
// of B that the pass stores transposed, which oneDNN's GEMM packs faster
// (the measurements are where the copy is made). From AVX-512 up, the
// products of at most 16 rows by a constant B call the packed kernel too
// (its AVX-512 tiles and its prefetching of B beat the primitive there).
//
//===----------------------------------------------------------------------===//

#include "DnnlCalls.h"
#include "DnnlConvLayouts.h"
#include "common/BufferAddress.h"
#include "common/GemmForm.h"
#include "common/LibraryCalls.h"
#include "support/PackedMatmulAbi.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SetVector.h"

#include <map>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUMATMULTODNNL
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// A batched product of at least this many products, each smaller than
/// kMaxParallelBatchMacs multiply-adds, runs its products on different
/// threads (one sgemm per thread) rather than one after the other, each
/// split across the threads: oneDNN splits a small product poorly.
static constexpr int64_t kMinParallelBatch = 4;
static constexpr int64_t kMaxParallelBatchMacs = int64_t(1) << 22;

/// The two routines a product can call (DnnlCalls.h): oneDNN's sgemm, and
/// kiln_dnnl_matmul, which runs oneDNN's matmul primitive (f32, or bf16 A
/// and B accumulating in f32: AMX or AVX-512 BF16 where the host has them)
/// and falls back to sgemm or dnnl_gemm_bf16bf16f32 where it cannot.
static constexpr llvm::StringLiteral kSgemm = mlir::kiln::dnnl::kSgemmFunction;
static constexpr llvm::StringLiteral kMatmul =
    mlir::kiln::dnnl::kMatmulFunction;
static constexpr llvm::StringLiteral kPackedMatmul =
    mlir::kiln::dnnl::kPackedMatmulFunction;

/// Products of at most this many rows whose B is a constant, where kiln's
/// packed kernel does not take them (`packed` = never, or a B it cannot
/// pack), run through the primitive with B packed once: they read all of
/// B per row, and an
/// LSTM step (1x512 by 512x2048) took 37 us that way on two threads, 83 us
/// through sgemm (144 and 151 us on one). At 8 rows (the LSTM at batch 8)
/// the primitive's per-call cost made one thread 7% slower for a 3% gain
/// on two.
static constexpr int64_t kMaxPackedRows = 1;

/// Products of a constant B with at least this many multiply-adds also run
/// through the primitive with B packed once, where the per-call cost is
/// small next to the product: the projections of BERT-base and GPT-2
/// (128x768 by 768x768, 768x3072, 3072x768, 768x2304) made the whole model
/// 10% (BERT, 250 -> 225 ms) and 7-12% (GPT-2, 245-260 -> 227-230 ms)
/// faster on one thread of a Xeon with AVX-512 and no AMX, where sgemm
/// reaches about 110 GFLOP/s on them. The LSTM at batch 8 (8.4 million)
/// stays below.
static constexpr int64_t kMinPackedMacs = int64_t(1) << 24;

/// Products of at most this many rows by a constant B run kiln's own
/// kernel (kiln_packed_matmul_f32, PackedMatmul.c) over a copy of B that
/// this pass packs into the module, on every CPU unless `packed` = never.
/// Below AVX-512 oneDNN's matmul primitive keeps that B plain and its GEMM
/// packs all of B on every call: an LSTM step at batch 8 (8x512 by
/// 512x2048) on one core of an AMD EPYC with AVX2 took 1090 us through
/// sgemm, 238-268 us packed (about its FMA peak). With AVX-512, where the
/// primitive packs B itself, the kernel's AVX-512 tiles (about 245 GFLOP/s
/// at 8 rows on a Zen 5 core, sgemm 218 in the model) and its prefetching
/// of B (which one row reads once per call from L3) make it faster still,
/// in the whole model on that Zen 5 host (kiln-run, ms, alternating):
/// LSTM at batch 1 12.5 -> 10.7-11.4 on one thread and 6.8-7.0 -> 6.0-6.4
/// on two, the GRU 9.3 -> 8.0-8.4 and 5.1-5.2 -> 4.4-4.7; at batch 8 the
/// LSTM 35.2-35.8 -> 35.0-36.0 and 20.2-22.1 -> 19.5-19.7, the GRU
/// 24.5-25.4 -> 25.6-26.4 (3% slower) and 15.4-15.9 -> 13.9.
static constexpr int64_t kMaxPackedKernelRows = 16;

/// The packed kernel's calls each take at least this many multiply-adds'
/// worth of panels, so that a product splits over the threads in chunks
/// that outweigh a call (an LSTM step at batch 8: 64 chunks of 32
/// columns).
static constexpr int64_t kMinPackedChunkMacs = int64_t(1) << 17;

/// Whether `form` multiplies 8-bit integers into i32.
static bool isInt8(const kiln::GemmForm &form) {
  return form.abType.isInteger(8) && form.cType.isInteger(32);
}

/// The constant global whose values `b` holds on every call: `b` is the
/// global, or a view of it whose offsets and sizes are static; null
/// otherwise.
static memref::GlobalOp constantGlobalOf(Value b, SymbolTable &symbols) {
  while (Operation *def = b.getDefiningOp()) {
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      auto global = symbols.lookup<memref::GlobalOp>(get.getName());
      return global && global.getConstant() ? global : nullptr;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view || def->getNumOperands() != 1)
      return nullptr;
    b = view.getViewSource();
  }
  return nullptr;
}

/// Whether `b` holds the same values on every call (see constantGlobalOf).
static bool isConstantBuffer(Value b, SymbolTable &symbols) {
  return static_cast<bool>(constantGlobalOf(b, symbols));
}

/// B's values packed in panels of `panel` columns, [n / panel, k, panel]:
/// for kiln_packed_matmul_f32 (PackedMatmulAbi.h; panels of
/// KILN_PACKED_MATMUL_PANEL), or with panels of one column B transposed,
/// [n, k]. Where
/// `b` is a view with static strides and offset of a constant global whose
/// f32 values the module holds (a dense attribute); nullopt otherwise. The
/// key names the global and the view, so that products of the same view
/// share one packed copy.
struct PackedB {
  memref::GlobalOp source;
  std::string key;
  /// The packed values; empty where they are all `splat` (a splat B whose
  /// columns fill whole panels).
  SmallVector<float> values;
  float splat = 0.0f;
};
static std::optional<PackedB>
packedValuesOf(Value b, const kiln::GemmForm &form, SymbolTable &symbols,
               int64_t panel = KILN_PACKED_MATMUL_PANEL) {
  auto type = dyn_cast<MemRefType>(b.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (form.batched || !type || type.getRank() != 2 ||
      !type.getElementType().isF32() ||
      failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  // B is stored [k, n], or [n, k] when read transposed.
  int64_t rowsOfB = form.transposeB ? form.n : form.k;
  int64_t colsOfB = form.transposeB ? form.k : form.n;
  if (type.getDimSize(0) != rowsOfB || type.getDimSize(1) != colsOfB)
    return std::nullopt;
  memref::GlobalOp global = constantGlobalOf(b, symbols);
  auto initial =
      global ? dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr())
             : nullptr;
  if (!initial || !initial.getElementType().isF32() ||
      !global.getType().getLayout().isIdentity())
    return std::nullopt;
  int64_t size = initial.getNumElements();
  // The raw bytes of a dense f32 attribute are its values, in order (a
  // splat holds one).
  ArrayRef<char> raw = initial.getRawData();
  const char *data = raw.data();
  bool splat = initial.isSplat();
  auto valueAt = [data, splat](int64_t index) {
    float value;
    std::memcpy(&value, data + (splat ? 0 : index * 4), sizeof(float));
    return value;
  };
  int64_t last =
      offset + (rowsOfB - 1) * strides[0] + (colsOfB - 1) * strides[1];
  if (offset < 0 || strides[0] < 0 || strides[1] < 0 || last >= size ||
      (!initial.isSplat() && static_cast<int64_t>(raw.size()) != size * 4))
    return std::nullopt;
  int64_t panels = (form.n + panel - 1) / panel;
  PackedB packed;
  packed.source = global;
  packed.key =
      (global.getSymName() + ":" + Twine(offset) + ":" + Twine(strides[0]) +
       ":" + Twine(strides[1]) + ":" + Twine(form.k) + ":" + Twine(form.n) +
       ":" + Twine(form.transposeB) + ":" + Twine(panel))
          .str();
  if (initial.isSplat() && form.n % panel == 0) {
    packed.splat = valueAt(0);
    return packed;
  }
  packed.values.assign(panels * form.k * panel, 0.0f);
  // B stored [k, n] is read along its rows, B stored [n, k] along its
  // columns of k: the inner loop reads the weights in memory order (BERT's
  // 85 million took 0.8 s across them).
  int64_t rowStride = form.transposeB ? strides[1] : strides[0];
  int64_t colStride = form.transposeB ? strides[0] : strides[1];
  float *out = packed.values.data();
  for (int64_t p = 0; p < panels; ++p) {
    int64_t width = std::min(panel, form.n - p * panel);
    float *panelOut = out + p * form.k * panel;
    const int64_t first = offset + p * panel * colStride;
    if (form.transposeB) {
      for (int64_t c = 0; c < width; ++c)
        for (int64_t q = 0; q < form.k; ++q)
          panelOut[q * panel + c] =
              valueAt(first + c * colStride + q * rowStride);
    } else {
      for (int64_t q = 0; q < form.k; ++q)
        for (int64_t c = 0; c < width; ++c)
          panelOut[q * panel + c] =
              valueAt(first + q * rowStride + c * colStride);
    }
  }
  return packed;
}

/// Erases the views of `value` that nothing reads: what is left of a
/// product's B once the product reads a copy of it.
static void eraseUnreadViews(Value value) {
  for (Operation *user : llvm::make_early_inc_range(value.getUsers())) {
    if (!isa<ViewLikeOpInterface>(user) || user->getNumResults() != 1)
      continue;
    eraseUnreadViews(user->getResult(0));
    if (user->use_empty())
      user->erase();
  }
}

/// Whether `form` runs through oneDNN's matmul primitive rather than a GEMM
/// (see the file header for the measurements behind the choice).
static bool prefersPrimitive(const kiln::GemmForm &form, bool constantB) {
  int64_t macs = form.m * form.n * form.k;
  return form.abType.isBF16() || isInt8(form) ||
         (form.transposeB && !form.transposeA) ||
         (constantB && (form.m <= kMaxPackedRows || macs >= kMinPackedMacs));
}

/// The oneDNN form of `op`: an f32 product, one of bf16 A and B into f32
/// C, or one of int8 or uint8 A and B into i32 C.
static std::optional<kiln::GemmForm> dnnlFormOf(linalg::LinalgOp op) {
  std::optional<kiln::GemmForm> form = kiln::gemmFormOf(op);
  if (!form)
    return std::nullopt;
  if (isInt8(*form))
    return form;
  if (!form->cType.isF32() || !(form->abType.isF32() || form->abType.isBF16()))
    return std::nullopt;
  return form;
}

namespace {
struct KilnCpuMatmulToDnnlPass
    : kiln::impl::KilnCpuMatmulToDnnlBase<KilnCpuMatmulToDnnlPass> {
  using KilnCpuMatmulToDnnlBase::KilnCpuMatmulToDnnlBase;

  /// A product with the zero fill before it and the bias addition after it
  /// that the call takes over, where there are.
  struct Product {
    linalg::LinalgOp op;
    kiln::GemmForm form;
    linalg::FillOp zeroFill;
    std::optional<kiln::BiasAddition> bias;
  };

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (packed != "query" && packed != "always" && packed != "never") {
      module.emitError() << "kiln-cpu-matmul-to-dnnl: packed must be "
                            "'query', 'always' or 'never', not '"
                         << packed << "'";
      return signalPassFailure();
    }
    packedGlobals.clear();
    packedSources.clear();
    // Each product with the zero fill it makes unnecessary and the bias
    // addition the primitive can take over, found before any product
    // becomes a call (a call may touch any memory).
    SmallVector<Product> products;
    module.walk([&](linalg::LinalgOp op) {
      std::optional<kiln::GemmForm> form = dnnlFormOf(op);
      if (!form || form->batch * form->m * form->n * form->k <
                       static_cast<int64_t>(minMacs))
        return;
      linalg::FillOp zeroFill =
          kiln::zeroFillBefore(op, op.getDpsInitOperand(0)->get());
      products.push_back(
          {op, *form, zeroFill,
           form->abType.isBF16()
               ? std::nullopt
               : kiln::biasAdditionAfter(op, *form, zeroFill)});
    });
    if (products.empty())
      return;

    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Type i32 = builder.getI32Type(), i64 = builder.getI64Type(),
         f32 = builder.getF32Type();
    Type pointer = LLVM::LLVMPointerType::get(context);
    // Each routine is declared where a call needs it
    // (declareLibraryFunction returns an existing declaration).
    auto sgemmType = builder.getFunctionType(
        {i32, i32, i64, i64, i64, f32, pointer, i64, pointer, i64, f32,
         pointer, i64},
        {i32});
    // (slot, flags, batch, M, N, K, then pointer, leading dimension and
    // batch stride of A, B and C, then the bias: DnnlMatmulAbi.h).
    auto matmulType = builder.getFunctionType(
        {pointer, i64, i64, i64, i64, i64, pointer, i64, i64, pointer, i64,
         i64, pointer, i64, i64, pointer},
        {});
    SymbolTable symbols(module);

    for (Product &product : products) {
      linalg::LinalgOp op = product.op;
      kiln::GemmForm form = product.form;
      linalg::FillOp zeroFill = product.zeroFill;
      std::optional<kiln::BiasAddition> bias = product.bias;
      bool int8 = isInt8(form);
      bool bf16 = form.abType.isBF16();
      Value bOperand = op.getDpsInputOperand(1)->get();
      bool constantB = isConstantBuffer(bOperand, symbols);
      // Whether kiln may lay out this constant f32 B itself.
      bool ownable = constantB && !int8 && !bf16 && packed != "never";
      if (ownable && form.m <= kMaxPackedKernelRows) {
        if (std::optional<PackedB> values =
                packedValuesOf(bOperand, form, symbols)) {
          if (failed(callPackedKernel(product, *values, symbols)))
            return signalPassFailure();
          continue;
        }
      }
      // Whether it does for the copy below (oneDNN's primitive on this CPU
      // would keep B plain, as `packed` says): asked once, and only for the
      // products the kernel did not take.
      bool ownLayout =
          ownable &&
          (packed == "always" || !kiln::dnnl::matmulPacksConstantB(
                                     form.m, form.n, form.k, form.transposeB));
      // A constant B that the GEMM would read as stored, [k, n], and pack
      // on every call (oneDNN's primitive on this CPU keeps it plain): the
      // module holds it transposed, [n, k], read with 'T'. oneDNN 2.6's
      // AVX2 GEMM packs that one faster: 128x768 by 768x3072 (BERT-base's
      // feed-forward product) in 9.2-11.0 ms against 17.7 on one core of
      // an AMD EPYC, 256x1024 by 1024x4096 36 against 59 ms, larger ones
      // the same within the noise. The primitive takes the copy as it is
      // (not as a constant B, which it would reorder back into [k, n]).
      bool transposedCopy = false;
      if (ownLayout && !form.transposeB && !form.batched) {
        if (std::optional<PackedB> values =
                packedValuesOf(bOperand, form, symbols, /*panel=*/1)) {
          memref::GlobalOp global =
              constantCopy(*values, {form.n, form.k}, "_transposed", symbols);
          builder.setInsertionPoint(op);
          bOperand = builder.create<memref::GetGlobalOp>(
              op.getLoc(), global.getType(), global.getSymName());
          form.transposeB = true;
          transposedCopy = true;
        }
      }
      bool primitive = prefersPrimitive(form, constantB);
      func::FuncOp routine = mlir::kiln::declareLibraryFunction(
          module, primitive ? kMatmul : kSgemm,
          primitive ? matmulType : sgemmType);
      if (!routine)
        return signalPassFailure();
      Location loc = op.getLoc();
      builder.setInsertionPoint(op);
      Value a = op.getDpsInputOperand(0)->get();
      Value b = bOperand;
      Value c = op.getDpsInitOperand(0)->get();
      int64_t operandBytes = bf16 ? 2 : int8 ? 1 : 4;
      int64_t bytes[3] = {operandBytes, operandBytes, 4};
      mlir::kiln::BufferAddress views[] = {
          mlir::kiln::bufferAddressOf(builder, loc, a, bytes[0]),
          mlir::kiln::bufferAddressOf(builder, loc, b, bytes[1]),
          mlir::kiln::bufferAddressOf(builder, loc, c, bytes[2])};
      auto constI64 = [&](int64_t value) -> Value {
        return builder.create<arith::ConstantIntOp>(loc, value, 64);
      };
      auto toI64 = [&](Value index) -> Value {
        return builder.create<arith::IndexCastOp>(loc, i64, index);
      };
      Value leading[3];
      for (int i = 0; i < 3; ++i)
        leading[i] = toI64(views[i].strides[form.leadingDims[i]]);

      if (primitive) {
        // One call for the whole batch, through the site's cached
        // primitive.
        memref::GlobalOp slot;
        {
          OpBuilder::InsertionGuard guard(builder);
          builder.setInsertionPoint(op->getParentOfType<func::FuncOp>());
          slot = mlir::kiln::createI64Global(
              builder, loc, symbols, "kiln_dnnl_matmul_slot", {0},
              /*constant=*/false, builder.getI64IntegerAttr(8));
        }
        // A bias added to C after the product: the primitive adds it as it
        // writes C, and the separate pass goes.
        int64_t flags =
            (form.transposeA ? KILN_DNNL_MATMUL_TRANSPOSE_A : 0) |
            (form.transposeB ? KILN_DNNL_MATMUL_TRANSPOSE_B : 0) |
            (zeroFill ? 0 : KILN_DNNL_MATMUL_ACCUMULATE) |
            (bf16 ? KILN_DNNL_MATMUL_BFLOAT16 : 0) |
            (int8 ? KILN_DNNL_MATMUL_INT8 : 0) |
            (form.unsignedA ? KILN_DNNL_MATMUL_UNSIGNED_A : 0) |
            (form.unsignedB ? KILN_DNNL_MATMUL_UNSIGNED_B : 0) |
            (constantB && !transposedCopy ? KILN_DNNL_MATMUL_CONSTANT_B : 0) |
            (bias ? KILN_DNNL_MATMUL_BIAS : 0);
        if (zeroFill)
          zeroFill->erase();
        SmallVector<Value> operands{
            mlir::kiln::globalPointer(builder, loc, slot), constI64(flags),
            constI64(form.batch), constI64(form.m), constI64(form.n),
            constI64(form.k)};
        Value unbatched = form.batched ? Value() : constI64(0);
        for (int i = 0; i < 3; ++i) {
          operands.push_back(
              builder.create<LLVM::IntToPtrOp>(loc, pointer, views[i].address));
          operands.push_back(leading[i]);
          operands.push_back(form.batched ? toI64(views[i].strides[0])
                                          : unbatched);
        }
        operands.push_back(
            bias ? builder
                       .create<LLVM::IntToPtrOp>(
                           loc, pointer,
                           mlir::kiln::bufferAddressOf(builder, loc,
                                                       bias->bias, 4)
                               .address)
                       .getResult()
                 : builder.create<LLVM::ZeroOp>(loc, pointer).getResult());
        builder.create<func::CallOp>(loc, routine, operands);
        if (bias)
          bias->addition->erase();
        op->erase();
        continue;
      }

      Value transposeA = builder.create<arith::ConstantIntOp>(
          loc, form.transposeA ? 'T' : 'N', 32);
      Value transposeB =
          form.transposeA == form.transposeB
              ? transposeA
              : builder.create<arith::ConstantIntOp>(
                    loc, form.transposeB ? 'T' : 'N', 32);
      Value one = builder.create<arith::ConstantFloatOp>(
          loc, APFloat(1.0f), cast<FloatType>(f32));
      Value beta = one;
      if (zeroFill) {
        beta = zeroFill.getDpsInputOperand(0)->get();
        zeroFill->erase();
      }
      int64_t mnk[] = {form.m, form.n, form.k};
      auto emitCall = [&](OpBuilder &b, Value batchIndex) {
        Value pointers[3];
        for (int i = 0; i < 3; ++i) {
          Value address = views[i].address;
          if (batchIndex) {
            Value step = b.create<arith::MulIOp>(
                loc, toI64(batchIndex), toI64(views[i].strides[0]));
            step = b.create<arith::MulIOp>(loc, step, constI64(bytes[i]));
            address = b.create<arith::AddIOp>(loc, address, step);
          }
          pointers[i] = b.create<LLVM::IntToPtrOp>(loc, pointer, address);
        }
        b.create<func::CallOp>(
            loc, routine,
            ValueRange{transposeA, transposeB, constI64(mnk[0]), constI64(mnk[1]),
                       constI64(mnk[2]), one, pointers[0], leading[0],
                       pointers[1], leading[1], beta, pointers[2],
                       leading[2]});
      };
      int64_t macs = mnk[0] * mnk[1] * mnk[2];
      if (form.batched && form.batch >= kMinParallelBatch &&
          macs < kMaxParallelBatchMacs) {
        // Many small products: one sgemm per thread at a time. Inside the
        // parallel loop oneDNN runs each call on the calling thread (OpenMP
        // does not nest), and the loop's work is what the products cost, so
        // kiln-cpu-parallel-loops keeps it parallel.
        Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
        Value step = builder.create<arith::ConstantIndexOp>(loc, 1);
        Value count = builder.create<arith::ConstantIndexOp>(loc, form.batch);
        auto loop = builder.create<scf::ParallelOp>(loc, ValueRange{zero},
                                                    ValueRange{count},
                                                    ValueRange{step});
        loop->setAttr(kiln::kBodyWorkAttrName,
                      builder.getI64IntegerAttr(macs));
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(loop.getBody()->getTerminator());
        emitCall(builder, loop.getInductionVars()[0]);
      } else if (form.batched) {
        Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
        Value step = builder.create<arith::ConstantIndexOp>(loc, 1);
        Value count = builder.create<arith::ConstantIndexOp>(loc, form.batch);
        auto loop = builder.create<scf::ForOp>(loc, zero, count, step);
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(loop.getBody()->getTerminator());
        emitCall(builder, loop.getInductionVar());
      } else {
        emitCall(builder, Value());
      }
      op->erase();
    }
    // The constants that only the packed kernel's products read go (with
    // the views they read them through): the module holds their packed or
    // transposed copies instead.
    for (memref::GlobalOp source : packedSources) {
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(source, module);
      if (!uses)
        continue;
      SmallVector<Operation *> dead;
      bool used = false;
      for (const SymbolTable::SymbolUse &use : *uses) {
        Operation *user = use.getUser();
        if (auto get = dyn_cast<memref::GetGlobalOp>(user))
          eraseUnreadViews(get.getResult());
        if (isa<memref::GetGlobalOp>(user) && user->use_empty())
          dead.push_back(user);
        else
          used = true;
      }
      for (Operation *user : dead)
        user->erase();
      if (!used)
        symbols.erase(source);
    }
  }

  /// The packed copies of constant Bs made so far (by PackedB's key), and
  /// the constants they copy (one for all the views of a constant).
  std::map<std::string, memref::GlobalOp> packedGlobals;
  llvm::SetVector<memref::GlobalOp> packedSources;

  /// The constant global of `shape` holding `values` (one per key: products
  /// of the same view share it), named after the constant it copies with
  /// `suffix`.
  memref::GlobalOp constantCopy(PackedB &values, ArrayRef<int64_t> shape,
                                StringRef suffix, SymbolTable &symbols) {
    memref::GlobalOp &global = packedGlobals[values.key];
    if (global)
      return global;
    OpBuilder builder(values.source);
    Type f32 = builder.getF32Type();
    auto type = MemRefType::get(shape, f32);
    auto tensorType = RankedTensorType::get(shape, f32);
    DenseElementsAttr initial =
        values.values.empty()
            ? DenseElementsAttr::get(tensorType, values.splat)
            : DenseElementsAttr::getFromRawBuffer(
                  tensorType,
                  ArrayRef<char>(
                      reinterpret_cast<const char *>(values.values.data()),
                      values.values.size() * sizeof(float)));
    global = builder.create<memref::GlobalOp>(
        values.source.getLoc(), (values.source.getSymName() + suffix).str(),
        builder.getStringAttr("private"), type, initial,
        /*constant=*/true, builder.getI64IntegerAttr(64));
    symbols.insert(global);
    packedSources.insert(values.source);
    return global;
  }

  /// Replaces the product by calls of kiln_packed_matmul_f32 over the
  /// packed copy of its B: one call where the product is small, otherwise
  /// one per chunk of columns, in an scf.parallel over the chunks.
  LogicalResult callPackedKernel(const Product &product, PackedB &values,
                                 SymbolTable &symbols) {
    linalg::LinalgOp op = product.op;
    const kiln::GemmForm &form = product.form;
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Location loc = op.getLoc();
    Type i64 = builder.getI64Type();
    Type pointer = LLVM::LLVMPointerType::get(context);
    constexpr int64_t panel = KILN_PACKED_MATMUL_PANEL;
    int64_t panels = (form.n + panel - 1) / panel;

    memref::GlobalOp packedGlobal =
        constantCopy(values, {panels, form.k, panel}, "_packed", symbols);

    auto functionType = builder.getFunctionType(
        {i64, i64, i64, i64, pointer, i64, pointer, pointer, i64, pointer}, {});
    func::FuncOp routine =
        mlir::kiln::declareLibraryFunction(module, kPackedMatmul, functionType);
    if (!routine)
      return failure();

    builder.setInsertionPoint(op);
    auto constI64 = [&](int64_t value) -> Value {
      return builder.create<arith::ConstantIntOp>(loc, value, 64);
    };
    auto toI64 = [&](Value index) -> Value {
      return builder.create<arith::IndexCastOp>(loc, i64, index);
    };
    Value a = op.getDpsInputOperand(0)->get();
    Value c = op.getDpsInitOperand(0)->get();
    mlir::kiln::BufferAddress viewA =
        mlir::kiln::bufferAddressOf(builder, loc, a, 4);
    mlir::kiln::BufferAddress viewC =
        mlir::kiln::bufferAddressOf(builder, loc, c, 4);
    Value packedB = builder.create<memref::GetGlobalOp>(
        loc, packedGlobal.getType(), packedGlobal.getSymName());
    Value addressB =
        mlir::kiln::bufferAddressOf(builder, loc, packedB, 4).address;
    Value addressBias =
        product.bias
            ? mlir::kiln::bufferAddressOf(builder, loc, product.bias->bias, 4)
                  .address
            : Value();
    Value lda = toI64(viewA.strides[form.leadingDims[0]]);
    Value ldc = toI64(viewC.strides[form.leadingDims[2]]);
    int64_t flags = (form.transposeA ? KILN_PACKED_MATMUL_TRANSPOSE_A : 0) |
                    (product.zeroFill ? 0 : KILN_PACKED_MATMUL_ACCUMULATE) |
                    (product.bias ? KILN_PACKED_MATMUL_BIAS : 0);
    if (product.zeroFill)
      product.zeroFill->erase();

    int64_t panelMacs = form.m * form.k * panel;
    int64_t chunkPanels = std::clamp<int64_t>(
        (kMinPackedChunkMacs + panelMacs - 1) / panelMacs, 1, panels);
    int64_t chunkColumns = chunkPanels * panel;
    int64_t chunks = (panels + chunkPanels - 1) / chunkPanels;
    // The call on columns [column, column + width) (see
    // PackedMatmulAbi.h); the whole product without a chunk index.
    auto emitCall = [&](OpBuilder &b, Value chunk) {
      Value column = constI64(0), width = constI64(form.n);
      if (chunk) {
        column =
            b.create<arith::MulIOp>(loc, toI64(chunk), constI64(chunkColumns));
        width = b.create<arith::MinSIOp>(
            loc, constI64(chunkColumns),
            b.create<arith::SubIOp>(loc, constI64(form.n), column));
      }
      auto shifted = [&](Value address, Value elements) -> Value {
        Value bytes = b.create<arith::MulIOp>(loc, elements, constI64(4));
        return b.create<LLVM::IntToPtrOp>(
            loc, pointer, b.create<arith::AddIOp>(loc, address, bytes));
      };
      Value panelOffset =
          b.create<arith::MulIOp>(loc, column, constI64(form.k));
      Value bias = addressBias
                       ? shifted(addressBias, column)
                       : b.create<LLVM::ZeroOp>(loc, pointer).getResult();
      b.create<func::CallOp>(
          loc, routine,
          ValueRange{constI64(flags), constI64(form.m), width, constI64(form.k),
                     b.create<LLVM::IntToPtrOp>(loc, pointer, viewA.address),
                     lda, shifted(addressB, panelOffset),
                     shifted(viewC.address, column), ldc, bias});
    };
    if (chunks == 1) {
      emitCall(builder, Value());
    } else {
      Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
      Value step = builder.create<arith::ConstantIndexOp>(loc, 1);
      Value count = builder.create<arith::ConstantIndexOp>(loc, chunks);
      auto loop = builder.create<scf::ParallelOp>(
          loc, ValueRange{zero}, ValueRange{count}, ValueRange{step});
      loop->setAttr(kiln::kBodyWorkAttrName,
                    builder.getI64IntegerAttr(form.m * chunkColumns * form.k));
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(loop.getBody()->getTerminator());
      emitCall(builder, loop.getInductionVars()[0]);
    }
    if (product.bias)
      product.bias->addition->erase();
    op->erase();
    return success();
  }
};
} // namespace
