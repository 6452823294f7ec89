//===- LibraryAttention.cpp - Half-precision attention as cuDNN calls -----===//
//
// cuDNN's fused flash-attention engines (the graphs of
// runtime/lib/cuda/cudnn/CudnnAttention.cpp) are NVIDIA's attention for
// each architecture, wgmma and TMA on Hopper included, where kiln's own
// tensor-core kernels (FlashAttention.cpp) use mma.sync. Under the
// `cudnn-attention` option the CUDA backend hands f16 and bf16 attention
// to them through the runtime, in two passes, as it hands convolutions
// (LibraryConv.cpp):
//
//   1. kiln-cuda-outline-library-attention, on kiln IR, before
//      kiln-cuda-outline-attention: each kiln.attention or
//      kiln.attention_grad that cuDNN computes moves into a private
//      function marked `kiln.cudnn_attention` (or
//      `kiln.cudnn_attention_grad`) with its descriptor
//      (kiln/CudaLibraryAbi.h), called with the op's own operands.
//   2. kiln-cuda-library-attention, on memrefs: each call becomes
//
//        kiln_cuda_attention(descriptor, q, k, v, mask, o, lse)
//        kiln_cuda_attention_grad(descriptor, q, k, v, o, lse, do, mask,
//                                 dq, dk, dv, scratch)
//
//      of the runtime with the buffers' device addresses (mask null where
//      there is none) and the descriptor as a constant global; the
//      gradient's f32 scratch (dq's accumulator and the rows' sums of
//      do * o) is allocated around the call.
//
// The leading dims fold into cuDNN's [B, H]: H the last of them, B the
// product of the others, so a mask must broadcast over all of the others
// or none. A gradient under `deterministic` stays with kiln's kernels:
// cuDNN's adds dq with atomics.
//
// Which of cuDNN's engines and kiln's own tensor-core kernels is faster
// depends on the GPU, the shapes and cuDNN's version. With the outlining's
// `tune`, an attention both take is left to the runtime: pass 1 marks its
// function for kiln's kernels too (AttentionKernels.h), and pass 2 makes
// the call a tuned call site (TunedSites.h) of two variants, `kiln` (the
// call kiln-cuda-flash-attention replaces) and `cudnn` (the runtime call
// above), which the runtime times at the first call, keeping the faster.
// kiln's comes first: a site first met in a CUDA graph's capture runs it,
// and a cuDNN that refuses the problem (or is missing) only drops its
// variant (CudaTuning.cpp). A gradient's call carries rowsum(do * o) for
// kiln's kernels, computed before it: cuDNN computes its own.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "TunedSites.h"

#include "kiln/Backends/Passes.h"

#include "common/ForwardedResults.h"
#include "common/LibraryCalls.h"
#include "common/OutlinedOps.h"

#include "kiln/CudaLibraryAbi.h"
#include "kiln/IR/ElementTypes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAOUTLINELIBRARYATTENTION
#define GEN_PASS_DEF_KILNCUDALIBRARYATTENTION
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The function attributes holding the descriptor.
static constexpr llvm::StringLiteral kForwardAttr = "kiln.cudnn_attention";
static constexpr llvm::StringLiteral kGradientAttr =
    "kiln.cudnn_attention_grad";

/// The widest head dim cuDNN's attention engines take on every
/// architecture from sm_80 on, forward and backward.
static constexpr int64_t kMaxHeadDim = 128;

/// The descriptor of kiln/CudaLibraryAbi.h for an attention (or its
/// gradient) of these operands, if cuDNN computes it.
static std::optional<SmallVector<int64_t>>
cudnnDescriptor(Value query, Value key, Value value, Value mask, double scale,
                bool causal) {
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto v = cast<RankedTensorType>(value.getType());
  Type element = q.getElementType();
  if (!(element.isF16() || element.isBF16()) || k.getElementType() != element ||
      v.getElementType() != element || !q.hasStaticShape() ||
      !k.hasStaticShape() || !v.hasStaticShape() || q.getNumElements() == 0 ||
      k.getNumElements() == 0 || v.getNumElements() == 0)
    return std::nullopt;
  int64_t rank = q.getRank();
  int64_t queries = q.getDimSize(rank - 2), headDim = q.getDimSize(rank - 1);
  int64_t keys = k.getDimSize(rank - 2), valueDim = v.getDimSize(rank - 1);
  // cuDNN reads and writes rows of 16-byte vectors.
  if (headDim % 8 || valueDim % 8 || headDim > kMaxHeadDim ||
      valueDim > kMaxHeadDim)
    return std::nullopt;
  ArrayRef<int64_t> leading = q.getShape().drop_back(2);
  int64_t heads = leading.empty() ? 1 : leading.back(), batch = 1;
  for (int64_t d : leading.drop_back(leading.empty() ? 0 : 1))
    batch *= d;
  int64_t flags = causal ? KILN_CUDA_ATTENTION_CAUSAL : 0;
  SmallVector<int64_t> maskDims{1, 1, 1, 1};
  if (mask) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (m.getElementType() != element || !m.hasStaticShape())
      return std::nullopt;
    ArrayRef<int64_t> dims = m.getShape();
    ArrayRef<int64_t> maskLeading = dims.drop_back(2);
    if (!maskLeading.empty()) {
      maskDims[1] = maskLeading.back();
      ArrayRef<int64_t> outer = maskLeading.drop_back();
      bool all = llvm::equal(outer, leading.drop_back());
      bool none = llvm::all_of(outer, [](int64_t d) { return d == 1; });
      if (!all && !none)
        return std::nullopt;
      maskDims[0] = none ? 1 : batch;
    }
    maskDims[2] = dims[rank - 2];
    maskDims[3] = dims[rank - 1];
    flags |= KILN_CUDA_ATTENTION_MASK;
  }
  int64_t scaleBits;
  std::memcpy(&scaleBits, &scale, sizeof(scale));
  SmallVector<int64_t> descriptor{
      static_cast<int64_t>(*::kiln::classifyElementType(element)),
      flags,
      batch,
      heads,
      queries,
      keys,
      headDim,
      valueDim};
  llvm::append_range(descriptor, maskDims);
  descriptor.push_back(scaleBits);
  return descriptor;
}

namespace {

struct KilnCudaOutlineLibraryAttentionPass
    : mlir::kiln::impl::KilnCudaOutlineLibraryAttentionBase<
          KilnCudaOutlineLibraryAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::tuple<Operation *, StringRef, SmallVector<int64_t>>> found;
    module.walk([&](Operation *op) {
      if (auto forward = dyn_cast<mlir::kiln::AttentionOp>(op)) {
        if (auto descriptor = cudnnDescriptor(
                forward.getQuery(), forward.getKey(), forward.getValue(),
                forward.getMask(), forward.getScale().convertToDouble(),
                forward.getCausal()))
          found.emplace_back(op, kForwardAttr, std::move(*descriptor));
      } else if (auto grad = dyn_cast<mlir::kiln::AttentionGradOp>(op)) {
        if (deterministic)
          return;
        if (auto descriptor = cudnnDescriptor(
                grad.getQuery(), grad.getKey(), grad.getValue(), grad.getMask(),
                grad.getScale().convertToDouble(), grad.getCausal()))
          found.emplace_back(op, kGradientAttr, std::move(*descriptor));
      }
    });
    SymbolTable symbols(module);
    OpBuilder builder(&getContext());
    for (auto &[op, mark, descriptor] : found) {
      bool gradient = mark == kGradientAttr;
      // A choice between cuDNN and kiln's tensor-core kernels is marked for
      // both ({scale, causal} for kiln's), and a gradient's call passes
      // rowsum(do * o) for kiln's kernels after do.
      DictionaryAttr kernels;
      SmallVector<Value> operands(op->getOperands());
      if (tune && mlir::kiln::takenByTensorCoreAttention(op)) {
        if (auto grad = dyn_cast<mlir::kiln::AttentionGradOp>(op)) {
          kernels = mlir::kiln::cudaAttentionInfo(builder, grad.getScale(),
                                                  grad.getCausal());
          operands.insert(operands.begin() + 6,
                          mlir::kiln::attentionGradRowsum(builder, grad));
        } else {
          auto forward = cast<mlir::kiln::AttentionOp>(op);
          kernels = mlir::kiln::cudaAttentionInfo(builder, forward.getScale(),
                                                  forward.getCausal());
        }
      }
      func::FuncOp function = mlir::kiln::outlineWithPlaceholderBody(
          op, operands,
          gradient ? "kiln_cuda_cudnn_attention_grad"
                   : "kiln_cuda_cudnn_attention",
          symbols);
      function->setAttr(mark, builder.getDenseI64ArrayAttr(descriptor));
      if (kernels)
        function->setAttr(gradient ? mlir::kiln::kCudaAttentionGradAttr
                                   : mlir::kiln::kCudaAttentionAttr,
                          kernels);
    }
  }
};

/// The buffers of one call: its inputs, the result buffers it writes and
/// the mask (null without one).
struct CallBuffers {
  SmallVector<Value> inputs, results;
  Value mask;
};

struct KilnCudaLibraryAttentionPass
    : mlir::kiln::impl::KilnCudaLibraryAttentionBase<
          KilnCudaLibraryAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forwards = mlir::kiln::callsOfMarkedFunctions(module, kForwardAttr);
    auto gradients = mlir::kiln::callsOfMarkedFunctions(module, kGradientAttr);
    if (forwards.empty() && gradients.empty())
      return;
    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Type pointer = LLVM::LLVMPointerType::get(context);
    /// The runtime function `name` of `params` pointers, the first
    /// `inputs` read-only (the descriptor and the operands), declared where
    /// some call needs it; null where none does.
    auto declare = [&](bool needed, StringRef name, unsigned params,
                       unsigned inputs) -> FailureOr<func::FuncOp> {
      if (!needed)
        return func::FuncOp();
      func::FuncOp routine = mlir::kiln::declareLibraryFunction(
          module, name,
          builder.getFunctionType(SmallVector<Type>(params, pointer), {}));
      if (!routine)
        return failure();
      mlir::kiln::markReadOnlyParameters(
          routine, llvm::to_vector(llvm::seq<unsigned>(0, inputs)));
      return routine;
    };
    FailureOr<func::FuncOp> forwardRoutine =
        declare(!forwards.empty(), KILN_CUDA_ATTENTION_FUNCTION, 7, 5);
    FailureOr<func::FuncOp> gradientRoutine =
        declare(!gradients.empty(), KILN_CUDA_ATTENTION_GRAD_FUNCTION, 12, 8);
    if (failed(forwardRoutine) || failed(gradientRoutine))
      return signalPassFailure();
    SymbolTable symbols(module);
    SetVector<Operation *> callees;
    llvm::DenseMap<Operation *, memref::GlobalOp> descriptors;
    llvm::DenseMap<Operation *, func::FuncOp> kernelFunctions;
    for (bool gradient : {false, true}) {
      for (auto [call, callee] : gradient ? gradients : forwards) {
        callees.insert(callee);
        func::CallOp library = call;
        if (callee->hasAttr(gradient ? mlir::kiln::kCudaAttentionGradAttr
                                     : mlir::kiln::kCudaAttentionAttr)) {
          FailureOr<func::CallOp> choice = buildChoice(
              module, call, callee, gradient, symbols, kernelFunctions[callee]);
          if (failed(choice))
            return signalPassFailure();
          library = *choice;
        }
        if (failed(replace(library, callee, gradient,
                           gradient ? *gradientRoutine : *forwardRoutine,
                           symbols, descriptors[callee])))
          return signalPassFailure();
      }
    }
    mlir::kiln::eraseUncalled(module, callees);
  }

  /// The descriptor `callee` is marked with, or an error.
  static FailureOr<DenseI64ArrayAttr> descriptorOf(func::FuncOp callee,
                                                   bool gradient) {
    StringRef mark = gradient ? kGradientAttr : kForwardAttr;
    auto descriptor = callee->getAttrOfType<DenseI64ArrayAttr>(mark);
    if (!descriptor || static_cast<int64_t>(descriptor.size()) !=
                           KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE)
      return callee.emitError()
             << "'" << mark << "' must hold "
             << static_cast<int64_t>(KILN_CUDA_ATTENTION_DESCRIPTOR_SIZE)
             << " values: dtype, flags, B, H, Nq, Nk, D, Dv, the mask's "
                "four dims and the scale's bits";
    return descriptor;
  }

  /// Whether `call` passes `inputs` static input buffers and `results`
  /// result buffers, or an error.
  static LogicalResult checkCall(func::CallOp call, func::FuncOp callee,
                                 unsigned inputs, unsigned results) {
    if (call.getNumOperands() == inputs + results &&
        call.getNumResults() == 0 &&
        llvm::all_of(call.getOperandTypes(), [](Type type) {
          auto memref = dyn_cast<MemRefType>(type);
          return memref && memref.hasStaticShape();
        }))
      return success();
    return call.emitError()
           << "expected a call of '" << callee.getSymName() << "' on " << inputs
           << " static input buffers and " << results << " result buffers";
  }

  /// Makes the `results` result operands after `call`'s `inputs` the
  /// buffers the function returns them in, where they are only copied
  /// there (ForwardedResults.h); the copies, their frees and the
  /// allocations go.
  static void forwardResults(func::CallOp call, unsigned inputs,
                             unsigned results) {
    SmallVector<unsigned> resultIndices;
    for (unsigned i = 0; i < results; ++i)
      resultIndices.push_back(inputs + i);
    SmallVector<Operation *> dead;
    SmallVector<Value> written =
        mlir::kiln::forwardedResults(call, resultIndices, dead);
    for (auto [index, buffer] : llvm::zip(resultIndices, written))
      call->setOperand(index, buffer);
    for (Operation *op : dead)
      op->erase();
  }

  /// Makes `call` of a choice between kiln's kernels and cuDNN (`callee`
  /// marked for both) a tuned call site: variant 0 calls `kernelFunction`
  /// (made at the first call of `callee`), marked for
  /// kiln-cuda-flash-attention alone, and variant 1 is returned for
  /// replace(), the gradient's rowsum dropped from it. The results are
  /// forwarded first, so that both variants write the same buffers.
  FailureOr<func::CallOp> buildChoice(ModuleOp module, func::CallOp call,
                                      func::FuncOp callee, bool gradient,
                                      SymbolTable &symbols,
                                      func::FuncOp &kernelFunction) {
    FailureOr<DenseI64ArrayAttr> descriptor = descriptorOf(callee, gradient);
    if (failed(descriptor))
      return failure();
    bool masked = (*descriptor)[1] & KILN_CUDA_ATTENTION_MASK;
    // q, k, v[, mask], o, lse; or q, k, v, o, lse, do, rowsum[, mask], dq,
    // dk, dv.
    unsigned inputs = (gradient ? 7 : 3) + (masked ? 1 : 0);
    unsigned results = gradient ? 3 : 2;
    if (failed(checkCall(call, callee, inputs, results)))
      return failure();
    forwardResults(call, inputs, results);

    FailureOr<SmallVector<Operation *>> variants =
        mlir::kiln::buildTunedSite(module, call, {"kiln", "cudnn"});
    if (failed(variants))
      return failure();
    auto kernels = cast<func::CallOp>((*variants)[0]);
    auto library = cast<func::CallOp>((*variants)[1]);
    // kiln's kernels take the gradient's do, lse and rowsum where cuDNN
    // takes o, lse and do.
    SmallVector<Value> operands(kernels.getOperands());
    if (gradient) {
      std::swap(operands[3], operands[5]);
      operands.erase(operands.begin() + 5);
    }
    if (!kernelFunction) {
      auto builder = OpBuilder::atBlockEnd(module.getBody());
      kernelFunction = builder.create<func::FuncOp>(
          callee.getLoc(),
          gradient ? "kiln_cuda_flash_attention_grad"
                   : "kiln_cuda_flash_attention",
          builder.getFunctionType(ValueRange(operands).getTypes(), {}));
      kernelFunction.setPrivate();
      for (unsigned i = 0; i + results < operands.size(); ++i)
        kernelFunction.setArgAttr(i, "bufferization.access",
                                  builder.getStringAttr("read"));
      StringRef mark = gradient ? mlir::kiln::kCudaAttentionGradAttr
                                : mlir::kiln::kCudaAttentionAttr;
      kernelFunction->setAttr(mark, callee->getAttr(mark));
      symbols.insert(kernelFunction);
    }
    OpBuilder builder(kernels);
    builder.create<func::CallOp>(kernels.getLoc(), kernelFunction, operands);
    kernels->erase();
    if (gradient)
      library->eraseOperand(6);
    return library;
  }

  LogicalResult replace(func::CallOp call, func::FuncOp callee, bool gradient,
                        func::FuncOp routine, SymbolTable &symbols,
                        memref::GlobalOp &global) {
    FailureOr<DenseI64ArrayAttr> marked = descriptorOf(callee, gradient);
    if (failed(marked))
      return failure();
    DenseI64ArrayAttr descriptor = *marked;
    bool masked = descriptor[1] & KILN_CUDA_ATTENTION_MASK;
    // Inputs, then the result buffers: q, k, v[, mask], o, lse; or q, k,
    // v, o, lse, do[, mask], dq, dk, dv.
    unsigned inputs = (gradient ? 6 : 3) + (masked ? 1 : 0);
    unsigned results = gradient ? 3 : 2;
    if (failed(checkCall(call, callee, inputs, results)))
      return failure();

    OpBuilder builder(call);
    Location loc = call.getLoc();
    if (!global) {
      builder.setInsertionPoint(callee);
      global = mlir::kiln::createI64Global(
          builder, loc, symbols, "kiln_cuda_attention_descriptor",
          descriptor.asArrayRef(), /*constant=*/true,
          builder.getI64IntegerAttr(8));
    }
    // The results written where the function returns them; then dense
    // buffers for cuDNN, as for convolutions.
    forwardResults(call, inputs, results);
    SmallVector<Value> buffers;
    for (unsigned i = 0; i < inputs + results; ++i)
      buffers.push_back(mlir::kiln::denseForLibrary(call, call.getOperand(i),
                                                    /*written=*/i >= inputs));

    // The descriptor, the plain inputs, the mask (null without one), the
    // results and, for the gradient, its scratch.
    builder.setInsertionPoint(call);
    auto address = [&](Value buffer) {
      return mlir::kiln::libraryPointer(builder, loc, buffer);
    };
    SmallVector<Value> operands{
        mlir::kiln::globalPointer(builder, loc, global)};
    unsigned plain = gradient ? 6 : 3;
    for (unsigned i = 0; i < plain; ++i)
      operands.push_back(address(buffers[i]));
    operands.push_back(
        masked ? address(buffers[plain])
               : builder.create<LLVM::ZeroOp>(
                     loc, LLVM::LLVMPointerType::get(builder.getContext())));
    for (unsigned i = 0; i < results; ++i)
      operands.push_back(address(buffers[inputs + i]));
    if (gradient) {
      // dq's f32 accumulator and the rows' sums of do * o.
      int64_t scratch =
          descriptor[2] * descriptor[3] * descriptor[4] * (descriptor[6] + 1);
      Value buffer = builder.create<memref::AllocOp>(
          loc, MemRefType::get({scratch}, builder.getF32Type()),
          builder.getI64IntegerAttr(64));
      operands.push_back(address(buffer));
      OpBuilder after(call->getNextNode());
      after.create<memref::DeallocOp>(loc, buffer);
    }
    builder.create<func::CallOp>(loc, routine, operands);
    call->erase();
    return success();
  }
};

} // namespace
