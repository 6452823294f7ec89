//===- LibraryMatmul.cpp - Float products as cuBLASLt calls ---------------===//
//
// A matrix product generated as a kernel cannot reach the speed of NVIDIA's
// GEMMs (tensor cores, asynchronous copies, tuned tiles per architecture),
// so on bufferized linalg every float contraction that a GEMM library can
// run (common/GemmForm.h: matmul, batch_matmul, their transposed variants,
// views with contiguous rows or columns) becomes one call
//
//   kiln_cuda_matmul(flags, ab_dtype, c_dtype, batch, m, n, k,
//                    A, lda, stride_a, B, ldb, stride_b, C, ldc, stride_c,
//                    bias, bias_gradient)
//
// of the runtime (kiln/CudaLibraryAbi.h), which queues one cuBLASLt product
// on the module's stream: f64, f32, f16 and bf16 A and B, C of the same
// type or f32 for f16 and bf16, accumulated in f32 (f64) and on tensor
// cores for f16 and bf16. An f32 product stays exact f32 unless the pass's
// `tf32` option (kiln-compile --cuda-tf32) lets cuBLASLt round its inputs
// to TF32.
//
// The pointers are the operands' device addresses (BufferAddress.h), the
// leading dimensions and batch strides their strides. When the last op
// before the product to touch C is a linalg.fill of C with zero (what the
// lowering writes), the fill is dropped and the product overwrites C;
// otherwise it accumulates into C as linalg does.
//
// A product of f16 or bf16 operands is lowered as an f32 product into a
// temporary and an elementwise truncation of it to the operands' type.
// cuBLASLt rounds its f32 sums to its output type itself, so when the
// truncation is the temporary's only reader (narrowingOf), the product
// writes the truncation's target in the operands' type and the temporary
// and the conversion kernel go; where the target may be one of the
// product's own inputs (bufferization reuses a buffer in place), the
// product writes a fresh buffer that is copied to the target.
//
// An f32 product whose result the next op to touch it adds a bias vector
// to in place (`C[i, j] + bias[j]`, what a dense layer lowers to) passes the
// bias to the call instead (KILN_CUDA_MATMUL_BIAS, cuBLASLt's bias
// epilogue): the addition's kernel goes and C is written once. The sum is
// the same f32 addition of the same f32 product, so nothing changes in the
// result. ReLU is not taken as an epilogue: kiln's ReLU propagates NaN,
// which cuBLASLt's does not promise. GELU reaches the backends decomposed
// (erf or tanh arithmetic), and stays a fused elementwise kernel.
//
// In a dense layer's gradient, the bias gradient db is the sum of dY over
// the batch, and the weight gradient X^T dY (or dY^T X) reads dY with the
// batch as k. Where such a sum of A over k (or B over k) into a
// zero-filled f32 vector sits in the block of an f32 product that reads
// the same buffer (biasGradientOf), the product's call writes the vector
// too (KILN_CUDA_MATMUL_BIAS_GRADIENT_A or _B, cuBLASLt's BGRADB and
// BGRADA epilogues) and the sum's kernel and its fill go: dY is read once
// for both. Where the gradient is used between the sum and a product after
// it (a training step's update of the bias), the product first moves up
// to the sum, when nothing between them writes its inputs or touches its
// result.
//
// The library takes its operands' addresses from the host. Where an
// input's address depends on a value the host code loads from device
// memory (a dynamic slice's row index, a kiln.select's pick, read in
// place), the host would read it back and wait for the stream first, which
// also keeps the call from being captured as a CUDA graph. Such an input is
// copied into a fresh buffer by a kernel first (a linalg.copy, which reads
// the index or the predicate itself: kiln-cuda-device-index-reads), and
// the product reads the copy.
//
// The call is device work in stream order: no wait before it
// (kiln-cuda-async-launches), and the buffers it reads and writes may live
// in the device arena (kiln-cuda-plan-arena keeps them alive up to the
// call that takes their addresses). Products the library cannot run
// (integers, empty ones, dynamic shapes, other layouts) are left to the
// kernels of the passes after this one.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "common/BufferAccess.h"
#include "common/BufferAddress.h"
#include "common/GemmForm.h"
#include "common/LibraryCalls.h"

#include "kiln/CudaLibraryAbi.h"
#include "kiln/IR/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDALIBRARYMATMUL
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// Whether cuBLASLt runs a product of A and B of type `ab` into C of type
/// `c` (kiln/CudaLibraryAbi.h).
static bool libraryRuns(Type ab, Type c) {
  if (!(ab.isF64() || ab.isF32() || ab.isF16() || ab.isBF16()))
    return false;
  return c == ab || ((ab.isF16() || ab.isBF16()) && c.isF32());
}

/// The kiln_dtype_t code of a float type the library runs.
static int64_t dtypeCode(Type type) {
  return static_cast<int64_t>(*::kiln::classifyElementType(type));
}

/// A truncation that a product of f16 or bf16 A and B into f32 C can do
/// itself: the only reader of C, an elementwise linalg.generic later in the
/// block that rounds all of C to A's type into `target`. The library
/// rounds its f32 sums once to its output type, as the truncation does, so
/// the product can write A's type directly instead of writing f32 and
/// running a kernel that converts it. C must be a fresh buffer that only
/// the product overwrites (after a zero fill that goes), the truncation
/// reads and deallocations free, and no op between the product and the
/// truncation may touch `target`.
struct Narrowing {
  linalg::GenericOp truncation;
  Value target;
  /// The ops of C that go with it: its allocation, fill and deallocations.
  SmallVector<Operation *> dead;
};

static std::optional<Narrowing>
narrowingOf(linalg::LinalgOp product, const mlir::kiln::GemmForm &form,
            linalg::FillOp zeroFill) {
  if (!zeroFill || !form.cType.isF32() ||
      !(form.abType.isF16() || form.abType.isBF16()))
    return std::nullopt;
  Value c = product.getDpsInitOperand(0)->get();
  auto alloc = c.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != product->getBlock())
    return std::nullopt;
  Narrowing narrowing;
  narrowing.dead.push_back(alloc);
  for (Operation *user : c.getUsers()) {
    if (user == product.getOperation() || user == zeroFill.getOperation())
      continue;
    if (isa<memref::DeallocOp>(user)) {
      narrowing.dead.push_back(user);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || narrowing.truncation)
      return std::nullopt;
    narrowing.truncation = generic;
  }
  linalg::GenericOp truncation = narrowing.truncation;
  if (!truncation || truncation->getBlock() != product->getBlock() ||
      !product->isBeforeInBlock(truncation) ||
      !truncation.hasPureBufferSemantics() ||
      truncation.getNumDpsInputs() != 1 || truncation.getNumDpsInits() != 1 ||
      truncation.getDpsInputOperand(0)->get() != c ||
      truncation.getNumParallelLoops() != truncation.getNumLoops() ||
      !llvm::all_of(truncation.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return std::nullopt;
  // The body is `yield truncf(in)` to A's type.
  auto truncf = mlir::kiln::yieldedFirstOp<arith::TruncFOp>(truncation);
  if (!truncf || truncf.getIn() != truncation.getRegion().getArgument(0) ||
      truncf.getType() != form.abType)
    return std::nullopt;
  narrowing.target = truncation.getDpsInitOperand(0)->get();
  auto targetType = cast<MemRefType>(narrowing.target.getType());
  if (targetType.getShape() != cast<MemRefType>(c.getType()).getShape() ||
      !targetType.getLayout().isIdentity())
    return std::nullopt;
  if (mlir::kiln::touchedBetween(product, truncation,
                     mlir::kiln::rootOf(narrowing.target)))
    return std::nullopt;
  narrowing.dead.push_back(zeroFill);
  return narrowing;
}

/// A sum of a product's A over its rows or B over its columns (k) that
/// cuBLASLt's bias-gradient epilogues compute while the product reads the
/// operand: a dense layer's bias gradient db, the sum of dY over the batch,
/// beside its weight gradient X^T dY (or dY^T X). The sum is a
/// linalg.generic in the product's block, before or after it, that reads
/// the operand itself and adds it up over the dim the product indexes
/// with k into a zero-filled f32 vector (`gradient`), which the call then
/// writes instead.
struct BiasGradient {
  linalg::GenericOp sum;
  linalg::FillOp zeroFill;
  Value gradient;
  /// KILN_CUDA_MATMUL_BIAS_GRADIENT_A or _B.
  int64_t flag;
};

/// If `sum` adds up its one rank-2 input over one dim into its rank-1 init
/// (`init[j] += input[i, j]` or `input[j, i]`), the input dim it sums over.
static std::optional<unsigned> summedDimOf(linalg::GenericOp sum) {
  if (!sum.hasPureBufferSemantics() || sum.getNumDpsInputs() != 1 ||
      sum.getNumDpsInits() != 1 || sum.getNumLoops() != 2 ||
      sum.getNumReductionLoops() != 1)
    return std::nullopt;
  unsigned reduction =
      sum.getIteratorTypesArray()[0] == utils::IteratorType::reduction ? 0 : 1;
  MLIRContext *context = sum.getContext();
  SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
  if (!maps[0].isPermutation() || maps[1].getNumResults() != 1 ||
      maps[1].getResult(0) != getAffineDimExpr(1 - reduction, context))
    return std::nullopt;
  // The body is `yield addf(out, in)` (either order) and nothing else.
  if (!mlir::kiln::yieldsSumOfArguments(sum))
    return std::nullopt;
  return maps[0].getResultPosition(getAffineDimExpr(reduction, context));
}

/// The sums of `product`'s operands (of GEMM form `form`) that its call
/// could compute as a bias gradient, that no other product has `claimed`,
/// each with its zero fill, wherever they are in the block. Only for a
/// single f32 product into f32: cuBLASLt's bias-gradient epilogues
/// are of one product, and the call sums in f32 as the sum does (in
/// another order, as the product's own sums are). Its kernels sum A only
/// when they read it transposed and B only when they do not (BGRADB and
/// BGRADA on its operands, which are kiln's swapped), so only an operand
/// stored with k along its rows qualifies.
static SmallVector<BiasGradient>
gradientSumsOf(linalg::LinalgOp product, const mlir::kiln::GemmForm &form,
               const llvm::DenseSet<Operation *> &claimed) {
  SmallVector<BiasGradient> sums;
  if (form.batched || !form.abType.isF32() || !form.cType.isF32())
    return sums;
  MLIRContext *context = product.getContext();
  Value cRoot = mlir::kiln::rootOf(product.getDpsInitOperand(0)->get());
  Value aRoot = mlir::kiln::rootOf(product.getDpsInputOperand(0)->get());
  Value bRoot = mlir::kiln::rootOf(product.getDpsInputOperand(1)->get());
  unsigned k = 0;
  while (product.getIteratorTypesArray()[k] != utils::IteratorType::reduction)
    ++k;
  for (unsigned i = 0; i < 2; ++i) {
    // cuBLASLt sums an operand only stored with k along its rows: A
    // transposed ([k, m]), B not ([k, n]), as a dense layer's dY is.
    if (i == 0 ? !form.transposeA : form.transposeB)
      continue;
    OpOperand *operand = product.getDpsInputOperand(i);
    Value input = operand->get();
    std::optional<unsigned> kDim =
        product.getMatchingIndexingMap(operand).getResultPosition(
            getAffineDimExpr(k, context));
    if (!kDim || mlir::kiln::mayAlias(mlir::kiln::rootOf(input), cRoot))
      continue;
    for (Operation *user : input.getUsers()) {
      auto sum = dyn_cast<linalg::GenericOp>(user);
      if (!sum || claimed.contains(sum) ||
          sum->getBlock() != product->getBlock() ||
          sum.getDpsInputOperand(0)->get() != input || summedDimOf(sum) != kDim)
        continue;
      // An f32 vector of m (A) or n (B) contiguous elements, no view of an
      // operand, at an address the host knows.
      Value gradient = sum.getDpsInitOperand(0)->get();
      auto type = cast<MemRefType>(gradient.getType());
      int64_t offset;
      SmallVector<int64_t> strides;
      if (type.getShape()[0] != (i == 0 ? form.m : form.n) ||
          !type.getElementType().isF32() ||
          failed(getStridesAndOffset(type, strides, offset)) ||
          strides[0] != 1 || mlir::kiln::addressReadsMemory(gradient))
        continue;
      Value root = mlir::kiln::rootOf(gradient);
      if (mlir::kiln::mayAlias(root, cRoot) ||
          mlir::kiln::mayAlias(root, aRoot) ||
          mlir::kiln::mayAlias(root, bRoot))
        continue;
      if (linalg::FillOp zeroFill = mlir::kiln::zeroFillBefore(sum, gradient))
        sums.push_back({sum, zeroFill, gradient,
                        i == 0 ? KILN_CUDA_MATMUL_BIAS_GRADIENT_A
                               : KILN_CUDA_MATMUL_BIAS_GRADIENT_B});
    }
  }
  return sums;
}

/// Whether `product`'s call can write `candidate`'s gradient where the
/// product is, instead of the fill and the sum: the gradient exists there,
/// nothing else from the first of the three to the last touches it, and
/// nothing between the sum and the product changes the summed input.
static bool writableAtProduct(linalg::LinalgOp product,
                              const BiasGradient &candidate) {
  linalg::GenericOp sum = candidate.sum;
  linalg::FillOp zeroFill = candidate.zeroFill;
  if (!mlir::kiln::definedBefore(candidate.gradient, product))
    return false;
  Value root = mlir::kiln::rootOf(candidate.gradient);
  Value inputRoot = mlir::kiln::rootOf(sum.getDpsInputOperand(0)->get());
  bool sumFirst = sum->isBeforeInBlock(product);
  Operation *first = zeroFill->isBeforeInBlock(product)
                         ? zeroFill.getOperation()
                         : product.getOperation();
  Operation *last = sumFirst ? product.getOperation() : sum.getOperation();
  for (Operation *op = first->getNextNode(); op != last; op = op->getNextNode())
    if (op != zeroFill.getOperation() && op != sum.getOperation() &&
        op != product.getOperation() &&
        (mlir::kiln::mayAccess(op, root) ||
         ((sumFirst ? sum : product)->isBeforeInBlock(op) &&
          mlir::kiln::mayWrite(op, inputRoot))))
      return false;
  return true;
}

/// Moves `product` (with its zero fill, if that comes after the sum) up to
/// right before `candidate`'s sum, where it can write the gradient, if the
/// gradient is used between the two (the optimizer's update of a bias in
/// a training step) and the move reorders nothing the product depends on:
/// all it uses exists at the sum, and nothing between the sum and the
/// product writes its inputs or touches its result. Returns whether it
/// moved.
static bool hoistToSum(linalg::LinalgOp product,
                       const BiasGradient &candidate) {
  linalg::GenericOp sum = candidate.sum;
  if (!sum->isBeforeInBlock(product) || writableAtProduct(product, candidate))
    return false;
  Value c = product.getDpsInitOperand(0)->get();
  linalg::FillOp zeroFill = mlir::kiln::zeroFillBefore(product, c);
  bool fillMoves = zeroFill && sum->isBeforeInBlock(zeroFill);
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(product->getRegions(), used);
  used.insert(product->operand_begin(), product->operand_end());
  if (fillMoves)
    used.insert(zeroFill->operand_begin(), zeroFill->operand_end());
  if (!llvm::all_of(used, [&](Value value) {
        return mlir::kiln::definedBefore(value, sum);
      }))
    return false;
  Value cRoot = mlir::kiln::rootOf(c);
  Value aRoot = mlir::kiln::rootOf(product.getDpsInputOperand(0)->get());
  Value bRoot = mlir::kiln::rootOf(product.getDpsInputOperand(1)->get());
  for (Operation *op = sum->getNextNode(); op != product.getOperation();
       op = op->getNextNode())
    if (op != zeroFill.getOperation() &&
        (mlir::kiln::mayAccess(op, cRoot) || mlir::kiln::mayWrite(op, aRoot) ||
         mlir::kiln::mayWrite(op, bRoot)))
      return false;
  if (fillMoves)
    zeroFill->moveBefore(sum);
  product->moveBefore(sum);
  return true;
}

/// The bias gradient that `product` (of GEMM form `form`) can write with
/// its result, if there is one that no other product has `claimed`.
static std::optional<BiasGradient>
biasGradientOf(linalg::LinalgOp product, const mlir::kiln::GemmForm &form,
               const llvm::DenseSet<Operation *> &claimed) {
  for (const BiasGradient &candidate : gradientSumsOf(product, form, claimed))
    if (writableAtProduct(product, candidate))
      return candidate;
  return std::nullopt;
}

namespace {
struct KilnCudaLibraryMatmulPass
    : mlir::kiln::impl::KilnCudaLibraryMatmulBase<KilnCudaLibraryMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Each product with the zero fill it makes unnecessary, found before
    // any product becomes a call (a call may touch any memory).
    struct Product {
      linalg::LinalgOp op;
      mlir::kiln::GemmForm form;
      linalg::FillOp zeroFill;
      std::optional<Narrowing> narrowing;
      std::optional<mlir::kiln::BiasAddition> bias;
      std::optional<BiasGradient> biasGradient;
    };
    SmallVector<Product> products;
    llvm::DenseSet<Operation *> claimedSums;
    // First the products whose bias gradient is used before them move up
    // to its sum, so that what follows sees where they will run.
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>())
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      if (std::optional<mlir::kiln::GemmForm> form = mlir::kiln::gemmFormOf(op))
        for (const BiasGradient &candidate : gradientSumsOf(op, *form, {}))
          if (hoistToSum(op, candidate))
            break;
    module.walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      std::optional<mlir::kiln::GemmForm> form = mlir::kiln::gemmFormOf(op);
      if (!form || !libraryRuns(form->abType, form->cType) ||
          form->batch == 0 || form->m == 0 || form->n == 0 || form->k == 0)
        return;
      // Inputs whose addresses the host would read memory for are read
      // through copies, whose identity layouts the library runs too.
      bool copied = false;
      for (OpOperand *input : op.getDpsInputOperands())
        if (mlir::kiln::addressReadsMemory(input->get())) {
          input->set(mlir::kiln::denseCopyAround(op, input->get(),
                                                 /*written=*/false));
          copied = true;
        }
      if (copied && !(form = mlir::kiln::gemmFormOf(op)))
        return;
      linalg::FillOp zeroFill =
          mlir::kiln::zeroFillBefore(op, op.getDpsInitOperand(0)->get());
      std::optional<Narrowing> narrowing = narrowingOf(op, *form, zeroFill);
      std::optional<mlir::kiln::BiasAddition> bias;
      if (!narrowing && !form->batched)
        bias = mlir::kiln::biasAdditionAfter(op, *form, zeroFill);
      // cuBLASLt takes one epilogue vector: a bias or a bias gradient.
      std::optional<BiasGradient> biasGradient;
      if (!narrowing && !bias &&
          (biasGradient = biasGradientOf(op, *form, claimedSums)))
        claimedSums.insert(biasGradient->sum);
      products.push_back({op, *form, zeroFill, narrowing, bias, biasGradient});
    });
    if (products.empty())
      return;

    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Type i64 = builder.getI64Type();
    Type pointer = LLVM::LLVMPointerType::get(context);
    // (flags, ab_dtype, c_dtype, batch, m, n, k, then the pointer, leading
    // dimension and batch stride of A, B and C, then the bias and the bias
    // gradient).
    auto type = builder.getFunctionType({i64, i64, i64, i64, i64, i64, i64,
                                         pointer, i64, i64, pointer, i64, i64,
                                         pointer, i64, i64, pointer, pointer},
                                        {});
    func::FuncOp routine = mlir::kiln::declareLibraryFunction(
        module, KILN_CUDA_MATMUL_FUNCTION, type);
    if (!routine)
      return signalPassFailure();
    // A, B and the bias are only read.
    mlir::kiln::markReadOnlyParameters(routine, {7, 10, 16});

    for (auto &[op, form, zeroFill, narrowing, bias, biasGradient] : products) {
      Location loc = op.getLoc();
      builder.setInsertionPoint(op);
      // C, or what a narrowing writes instead: the truncation's target, or
      // where the target may be A or B (bufferization reuses buffers in
      // place), a fresh buffer of A's type that is copied to the target
      // where the truncation was.
      Value c = op.getDpsInitOperand(0)->get();
      bool overwrite = zeroFill != nullptr;
      if (narrowing) {
        Value target = narrowing->target;
        Value root = mlir::kiln::rootOf(target);
        bool readByProduct = llvm::any_of(
            op.getDpsInputs(), [&](Value input) {
              return mlir::kiln::mayAlias(mlir::kiln::rootOf(input), root);
            });
        linalg::GenericOp truncation = narrowing->truncation;
        c = target;
        if (readByProduct) {
          auto type = MemRefType::get(
              cast<MemRefType>(target.getType()).getShape(), form.abType);
          c = builder.create<memref::AllocOp>(
              loc, type, builder.getI64IntegerAttr(64));
          OpBuilder after(truncation);
          after.create<memref::CopyOp>(truncation.getLoc(), c, target);
          after.create<memref::DeallocOp>(truncation.getLoc(), c);
        }
        truncation->erase();
        form.cType = form.abType;
      }
      int64_t flags =
          (form.transposeA ? KILN_CUDA_MATMUL_TRANSPOSE_A : 0) |
          (form.transposeB ? KILN_CUDA_MATMUL_TRANSPOSE_B : 0) |
          (overwrite ? 0 : KILN_CUDA_MATMUL_ACCUMULATE) |
          (tf32 && form.abType.isF32() ? KILN_CUDA_MATMUL_TF32 : 0) |
          (bias ? KILN_CUDA_MATMUL_BIAS : 0) |
          (biasGradient ? biasGradient->flag : 0);
      // A narrowed product's C goes with its allocation, fill and
      // deallocations, below.
      if (zeroFill && !narrowing)
        zeroFill->erase();
      auto constI64 = [&](int64_t value) -> Value {
        return builder.create<arith::ConstantIntOp>(loc, value, 64);
      };
      auto toI64 = [&](Value index) -> Value {
        return builder.create<arith::IndexCastOp>(loc, i64, index);
      };
      SmallVector<Value> operands{
          constI64(flags),        constI64(dtypeCode(form.abType)),
          constI64(dtypeCode(form.cType)), constI64(form.batch),
          constI64(form.m),       constI64(form.n),
          constI64(form.k)};
      Value unbatched = form.batched ? Value() : constI64(0);
      for (unsigned i = 0; i < 3; ++i) {
        Value operand = i == 2 ? c : op->getOperand(i);
        Type element = cast<MemRefType>(operand.getType()).getElementType();
        mlir::kiln::BufferAddress view = mlir::kiln::bufferAddressOf(
            builder, loc, operand, element.getIntOrFloatBitWidth() / 8);
        operands.push_back(
            builder.create<LLVM::IntToPtrOp>(loc, pointer, view.address));
        operands.push_back(toI64(view.strides[form.leadingDims[i]]));
        operands.push_back(form.batched ? toI64(view.strides[0]) : unbatched);
      }
      Value null;
      auto vectorAddress = [&](Value vector) -> Value {
        if (!vector)
          return null ? null
                      : null = builder.create<LLVM::ZeroOp>(loc, pointer);
        mlir::kiln::BufferAddress view =
            mlir::kiln::bufferAddressOf(builder, loc, vector, 4);
        return builder.create<LLVM::IntToPtrOp>(loc, pointer, view.address);
      };
      operands.push_back(vectorAddress(bias ? bias->bias : Value()));
      operands.push_back(
          vectorAddress(biasGradient ? biasGradient->gradient : Value()));
      if (bias)
        bias->addition->erase();
      if (biasGradient) {
        biasGradient->sum->erase();
        biasGradient->zeroFill->erase();
      }
      builder.create<func::CallOp>(loc, routine, operands);
      op->erase();
      if (narrowing)
        for (Operation *dead : llvm::reverse(narrowing->dead))
          dead->erase();
    }
  }
};
} // namespace
