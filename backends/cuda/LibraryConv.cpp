//===- LibraryConv.cpp - Float convolutions as cuDNN calls ----------------===//
//
// A convolution generated as loops over its window reaches a small part of
// what cuDNN's kernels do (implicit GEMM on tensor cores, Winograd, tiles
// tuned per architecture), so the CUDA backend hands kiln.conv to cuDNN
// through the runtime, in two passes, as the CPU backend hands it to
// oneDNN (backends/cpu/ConvToDnnl.cpp):
//
//   1. kiln-cuda-outline-convs, on kiln IR: each f32, f16 or bf16
//      kiln.conv of 1 to 3 spatial dims, nothing empty, that cuDNN
//      computes moves into a private function marked `kiln.cuda_conv` with
//      the convolution's descriptor (kiln/CudaLibraryAbi.h), whose body
//      only allocates the result (OutlinedOps.h), so that bufferization
//      gives each call its input, weight and result buffers. Without input
//      dilation that is cuDNN's forward convolution. With input dilation
//      and unit strides (a transposed convolution, what the gradient of a
//      strided convolution with respect to its input is) it is cuDNN's
//      backward-data convolution of a forward convolution whose stride is
//      the input dilation: its kernel is the given one with the channel
//      dims swapped within each group and reversed in space (kiln ops
//      before the call, on the small kernel), its padding what puts the
//      same window over the same elements. The gradient with respect to a
//      kernel, which kiln-grad writes as a convolution of the input and
//      the cotangent with their batch and channel dims swapped (reshapes
//      and transposes of both, then of the result), becomes cuDNN's
//      backward-filter convolution of the untransposed input and
//      cotangent: the transposes of the activations go with it.
//   2. kiln-cuda-library-conv, on memrefs: each call of such a function
//      becomes a call
//
//        kiln_cuda_conv(descriptor, x, w, y)
//
//      of the runtime with the buffers' device addresses and the
//      descriptor as a constant global of the module; the runtime queues
//      one cuDNN convolution on the module's stream. A result that the
//      function returns is written into its out-param directly instead of
//      a buffer copied there (common/ForwardedResults.h); an operand that
//      is a strided view goes through a dense copy, since cuDNN reads the
//      dense layouts the descriptor implies.
//
// A convolution with input dilation and strides, or whose padding no
// forward convolution's backward data reproduces, keeps the generic
// lowering (backends/common/ConvLowering.cpp). f32 stays f32 unless the
// `tf32` option (kiln-compile --cuda-tf32) lets the library round the
// inputs to TF32, as for products.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "common/BufferAccess.h"
#include "common/BufferAddress.h"
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
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAOUTLINECONVS
#define GEN_PASS_DEF_KILNCUDALIBRARYCONV
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The function attribute holding the descriptor.
static constexpr llvm::StringLiteral kCudaConvAttr = "kiln.cuda_conv";

/// Whether cuDNN convolves tensors of these types: all of one f32, f16 or
/// bf16 element type, static, of 1 to 3 spatial dims (the first's rank
/// minus 2), and none empty.
static bool cudnnTakes(ArrayRef<RankedTensorType> types) {
  Type element = types.front().getElementType();
  int64_t spatial = types.front().getRank() - 2;
  if (!(element.isF32() || element.isF16() || element.isBF16()) ||
      spatial < 1 || spatial > KILN_CUDA_CONV_MAX_SPATIAL_DIMS)
    return false;
  return llvm::all_of(types, [&](RankedTensorType type) {
    return type.getElementType() == element && type.hasStaticShape() &&
           type.getNumElements() != 0;
  });
}

/// The descriptor of kiln/CudaLibraryAbi.h: the header, then D, K, E,
/// strides, low and high padding and dilation per spatial dim. `flags`
/// gains KILN_CUDA_CONV_TF32 for an f32 convolution under `tf32`.
static SmallVector<int64_t>
descriptorOf(int64_t groups, Type element, int64_t flags, bool tf32,
             int64_t batch, int64_t channels, int64_t outChannels,
             ArrayRef<ArrayRef<int64_t>> perDim) {
  if (tf32 && element.isF32())
    flags |= KILN_CUDA_CONV_TF32;
  SmallVector<int64_t> descriptor{
      static_cast<int64_t>(perDim.front().size()),
      groups,
      static_cast<int64_t>(*::kiln::classifyElementType(element)),
      flags,
      batch,
      channels,
      outChannels};
  for (ArrayRef<int64_t> values : perDim)
    llvm::append_range(descriptor, values);
  return descriptor;
}

/// Whether `permutation` swaps the first two dims and keeps the others.
static bool swapsLeadingDims(ArrayRef<int64_t> permutation) {
  for (int64_t d = 0; d < static_cast<int64_t>(permutation.size()); ++d)
    if (permutation[d] != (d < 2 ? 1 - d : d))
      return false;
  return true;
}

/// The descriptor of kiln/CudaLibraryAbi.h for `op`, if cuDNN computes it:
/// a forward convolution, or with KILN_CUDA_CONV_INPUT_GRADIENT in the
/// flags a backward-data one (see the file comment).
static std::optional<SmallVector<int64_t>> cudnnDescriptor(mlir::kiln::ConvOp op,
                                                           bool tf32) {
  RankedTensorType input = op.getInput().getType();
  RankedTensorType weight = op.getWeight().getType();
  RankedTensorType result = op.getType();
  if (!cudnnTakes({input, weight, result}))
    return std::nullopt;
  int64_t spatial = input.getRank() - 2;
  int64_t flags = 0;
  ArrayRef<int64_t> strides = op.getStrides(), low = op.getPaddingLow(),
                    high = op.getPaddingHigh(),
                    dilation = op.getRhsDilation();
  SmallVector<int64_t> backwardLow, backwardHigh;
  bool inputGradient =
      llvm::any_of(op.getLhsDilation(), [](int64_t d) { return d != 1; });
  if (inputGradient) {
    // result[e] sums x^[e + j * dilation] w[j], x^ the input dilated by s
    // and padded by low: with k = K - 1 - j that is the backward data of a
    // forward convolution of stride s, padding p = W - 1 - low before, the
    // kernel reversed, whose output (the input here) must have the size D
    // that the result's size E and padding p + q give it.
    if (llvm::any_of(strides, [](int64_t s) { return s != 1; }))
      return std::nullopt;
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t s = op.getLhsDilation()[d];
      int64_t window = (weight.getDimSize(d + 2) - 1) * dilation[d] + 1;
      int64_t p = window - 1 - low[d];
      int64_t q = std::max<int64_t>(0, window - 1 - high[d]);
      int64_t e = result.getDimSize(d + 2), padded = e + p + q;
      if (p < 0 || padded < window ||
          (padded - window) / s + 1 != input.getDimSize(d + 2))
        return std::nullopt;
      backwardLow.push_back(p);
      backwardHigh.push_back(q);
    }
    flags |= KILN_CUDA_CONV_INPUT_GRADIENT;
    strides = op.getLhsDilation();
    low = backwardLow;
    high = backwardHigh;
  }
  return descriptorOf(op.getGroups(), input.getElementType(), flags, tf32,
                      input.getDimSize(0), input.getDimSize(1),
                      weight.getDimSize(0),
                      {input.getShape().drop_front(2),
                       weight.getShape().drop_front(2),
                       result.getShape().drop_front(2), strides, low, high,
                       dilation});
}

/// The kernel [C, O/G, K...] of the forward convolution whose backward data
/// `op` (input-dilated, kernel [O, C/G, K...]) is: the channel dims swapped
/// within each group, reversed in space.
static Value forwardKernel(OpBuilder &builder, mlir::kiln::ConvOp op) {
  builder.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getWeight().getType());
  int64_t groups = op.getGroups();
  int64_t outChannels = type.getDimSize(0), groupChannels = type.getDimSize(1);
  ArrayRef<int64_t> kernel = type.getShape().drop_front(2);
  auto shaped = [&](ArrayRef<int64_t> front) {
    SmallVector<int64_t> shape(front);
    llvm::append_range(shape, kernel);
    return RankedTensorType::get(shape, type.getElementType());
  };
  Value w = builder.create<mlir::kiln::ReshapeOp>(
      loc, shaped({groups, outChannels / groups, groupChannels}),
      op.getWeight());
  SmallVector<int64_t> swap{0, 2, 1}, spatialDims;
  for (int64_t d = 0; d < static_cast<int64_t>(kernel.size()); ++d) {
    swap.push_back(3 + d);
    spatialDims.push_back(2 + d);
  }
  w = builder.create<mlir::kiln::TransposeOp>(loc, w, swap);
  w = builder.create<mlir::kiln::ReshapeOp>(
      loc, shaped({groups * groupChannels, outChannels / groups}), w);
  return builder.create<mlir::kiln::ReverseOp>(loc, w, spatialDims);
}

/// `value` is `source` [A, B, S...] regrouped as kiln-grad's conv rule
/// writes the operands of a kernel gradient: reshaped to [A, G, B/G, S...],
/// transposed by `perm` (a permutation of the first three dims) and
/// reshaped to the rank of `source`; with one group the transposition may
/// also be the plain swap of the first two dims. Returns the source.
static Value regroupedSource(Value value, int64_t groups,
                             ArrayRef<int64_t> perm) {
  auto outer = value.getDefiningOp<mlir::kiln::ReshapeOp>();
  if (!outer) {
    auto swap = value.getDefiningOp<mlir::kiln::TransposeOp>();
    if (!swap || groups != 1 || !swapsLeadingDims(swap.getPermutation()))
      return nullptr;
    return swap.getOperand();
  }
  auto transpose = outer.getOperand().getDefiningOp<mlir::kiln::TransposeOp>();
  auto inner = transpose
                   ? transpose.getOperand().getDefiningOp<mlir::kiln::ReshapeOp>()
                   : nullptr;
  if (!inner)
    return nullptr;
  Value source = inner.getOperand();
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto split = cast<RankedTensorType>(inner.getType());
  int64_t rank = sourceType.getRank();
  if (split.getRank() != rank + 1 ||
      cast<RankedTensorType>(value.getType()).getRank() != rank ||
      split.getDimSize(0) != sourceType.getDimSize(0) ||
      split.getDimSize(1) != groups ||
      split.getShape().drop_front(3) != sourceType.getShape().drop_front(2))
    return nullptr;
  ArrayRef<int64_t> p = transpose.getPermutation();
  for (int64_t d = 0; d < rank + 1; ++d)
    if (p[d] != (d < 3 ? perm[d] : d))
      return nullptr;
  return source;
}

/// A kernel gradient in kiln-grad's form: dw = transpose(slice?(conv(x',
/// dy'))), x' and dy' regrouped from the forward convolution's input and
/// cotangent (see regroupedSource), the convolution's strides the forward
/// one's kernel dilation and its kernel dilation the forward stride.
struct WeightGradient {
  Value input, cotangent;
  /// The transpose that yields dw, and the ops between it and the
  /// convolution.
  Operation *last;
  SmallVector<Operation *> between;
  SmallVector<int64_t> descriptor;
};

static std::optional<WeightGradient> weightGradientOf(mlir::kiln::ConvOp op,
                                                      bool tf32) {
  int64_t groups = op.getGroups();
  Value x = regroupedSource(op.getInput(), groups, {2, 1, 0});
  Value dy = regroupedSource(op.getWeight(), groups, {1, 2, 0});
  if (!x || !dy || !op->hasOneUse() ||
      llvm::any_of(op.getLhsDilation(), [](int64_t d) { return d != 1; }))
    return std::nullopt;
  WeightGradient gradient;
  gradient.input = x;
  gradient.cotangent = dy;
  Operation *user = *op->getUsers().begin();
  if (auto slice = dyn_cast<mlir::kiln::SliceOp>(user)) {
    if (!slice->hasOneUse() ||
        llvm::any_of(slice.getStart(), [](int64_t v) { return v != 0; }) ||
        llvm::any_of(slice.getStride(), [](int64_t v) { return v != 1; }))
      return std::nullopt;
    gradient.between.push_back(slice);
    user = *slice->getUsers().begin();
  }
  auto transpose = dyn_cast<mlir::kiln::TransposeOp>(user);
  if (!transpose || !swapsLeadingDims(transpose.getPermutation()))
    return std::nullopt;
  gradient.last = transpose;

  // The forward convolution: x [N, C, D...], dy [N, O, E...], dw [O, C/G,
  // K...], stride s and dilation d swapped back, the low padding kept,
  // and the high padding whatever makes E the output size.
  auto xType = cast<RankedTensorType>(x.getType());
  auto dyType = cast<RankedTensorType>(dy.getType());
  auto dwType = cast<RankedTensorType>(transpose.getType());
  int64_t spatial = xType.getRank() - 2;
  if (!cudnnTakes({xType, dyType, dwType}) ||
      dyType.getDimSize(0) != xType.getDimSize(0) ||
      dwType.getDimSize(0) != dyType.getDimSize(1) ||
      dwType.getDimSize(1) * groups != xType.getDimSize(1))
    return std::nullopt;
  ArrayRef<int64_t> strides = op.getRhsDilation(), dilations = op.getStrides(),
                    low = op.getPaddingLow();
  SmallVector<int64_t> high;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t in = xType.getDimSize(d + 2), out = dyType.getDimSize(d + 2);
    int64_t window = (dwType.getDimSize(d + 2) - 1) * dilations[d] + 1;
    int64_t h = std::max<int64_t>(
        0, (out - 1) * strides[d] + window - in - low[d]);
    int64_t padded = in + low[d] + h;
    if (padded < window || (padded - window) / strides[d] + 1 != out)
      return std::nullopt;
    high.push_back(h);
  }
  gradient.descriptor = descriptorOf(
      groups, xType.getElementType(), KILN_CUDA_CONV_WEIGHT_GRADIENT, tf32,
      xType.getDimSize(0), xType.getDimSize(1), dyType.getDimSize(1),
      {xType.getShape().drop_front(2), dwType.getShape().drop_front(2),
       dyType.getShape().drop_front(2), strides, low, high, dilations});
  return gradient;
}

namespace {

struct KilnCudaOutlineConvsPass
    : mlir::kiln::impl::KilnCudaOutlineConvsBase<KilnCudaOutlineConvsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<mlir::kiln::ConvOp, SmallVector<int64_t>>> convs;
    SmallVector<std::pair<mlir::kiln::ConvOp, WeightGradient>> gradients;
    module.walk([&](mlir::kiln::ConvOp op) {
      if (auto gradient = weightGradientOf(op, tf32))
        gradients.emplace_back(op, std::move(*gradient));
      else if (auto descriptor = cudnnDescriptor(op, tf32))
        convs.emplace_back(op, std::move(*descriptor));
    });
    SymbolTable symbols(module);
    OpBuilder builder(&getContext());
    for (auto &[op, gradient] : gradients) {
      func::FuncOp function = mlir::kiln::outlineWithPlaceholderBody(
          gradient.last, {gradient.input, gradient.cotangent},
          "kiln_cuda_conv", symbols);
      function->setAttr(kCudaConvAttr,
                        builder.getDenseI64ArrayAttr(gradient.descriptor));
      for (Operation *dead : llvm::reverse(gradient.between))
        dead->erase();
      Value regrouped[] = {op.getInput(), op.getWeight()};
      op->erase();
      // The regrouping of the activations, unless something else reads it.
      for (Value value : regrouped)
        while (Operation *def = value.getDefiningOp()) {
          if (!isa<mlir::kiln::ReshapeOp, mlir::kiln::TransposeOp>(def) ||
              !def->use_empty())
            break;
          value = def->getOperand(0);
          def->erase();
        }
    }
    for (auto &[op, descriptor] : convs) {
      SmallVector<Value> operands{op.getInput(), op.getWeight()};
      if (descriptor[3] & KILN_CUDA_CONV_INPUT_GRADIENT)
        operands[1] = forwardKernel(builder, op);
      func::FuncOp function = mlir::kiln::outlineWithPlaceholderBody(
          op, operands, "kiln_cuda_conv", symbols);
      function->setAttr(kCudaConvAttr,
                        builder.getDenseI64ArrayAttr(descriptor));
    }
  }
};

struct KilnCudaLibraryConvPass
    : mlir::kiln::impl::KilnCudaLibraryConvBase<KilnCudaLibraryConvPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto calls = mlir::kiln::callsOfMarkedFunctions(module, kCudaConvAttr);
    if (calls.empty())
      return;
    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Type pointer = LLVM::LLVMPointerType::get(context);
    func::FuncOp routine = mlir::kiln::declareLibraryFunction(
        module, KILN_CUDA_CONV_FUNCTION,
        builder.getFunctionType({pointer, pointer, pointer, pointer}, {}));
    if (!routine)
      return signalPassFailure();
    // The descriptor, x and w are only read (y is written), in every mode.
    mlir::kiln::markReadOnlyParameters(routine, {0, 1, 2});

    SymbolTable symbols(module);
    SetVector<Operation *> callees;
    llvm::DenseMap<Operation *, memref::GlobalOp> descriptors;
    for (auto [call, callee] : calls) {
      auto descriptor = callee->getAttrOfType<DenseI64ArrayAttr>(kCudaConvAttr);
      int64_t spatial = descriptor && !descriptor.empty() ? descriptor[0] : 0;
      if (spatial < 1 || spatial > KILN_CUDA_CONV_MAX_SPATIAL_DIMS ||
          static_cast<int64_t>(descriptor.size()) !=
              KILN_CUDA_CONV_HEADER_SIZE +
                  KILN_CUDA_CONV_ENTRIES_PER_DIM * spatial) {
        callee.emitError() << "'" << kCudaConvAttr
                           << "' must hold k (1 to 3), groups, dtype, "
                              "flags, N, C, O and 7 entries per spatial dim";
        return signalPassFailure();
      }
      if (call.getNumOperands() != 3 || call.getNumResults() != 0 ||
          !llvm::all_of(call.getOperandTypes(), [&](Type type) {
            auto memref = dyn_cast<MemRefType>(type);
            return memref && memref.hasStaticShape() &&
                   memref.getRank() == spatial + 2;
          })) {
        call.emitError() << "expected a call of '" << callee.getSymName()
                         << "' on static input, weight and result buffers "
                            "of rank "
                         << spatial + 2;
        return signalPassFailure();
      }
      Location loc = call.getLoc();
      builder.setInsertionPoint(callee);
      memref::GlobalOp &global = descriptors[callee];
      if (!global)
        global = mlir::kiln::createI64Global(
            builder, loc, symbols, "kiln_cuda_conv_descriptor",
            descriptor.asArrayRef(), /*constant=*/true,
            builder.getI64IntegerAttr(8));

      // The result written where the function returns it rather than
      // into a buffer copied there (ForwardedResults.h); then dense buffers
      // for cuDNN: strided views are copied into (inputs) or out of (the
      // result) a fresh buffer around the call, as are views whose
      // addresses the host would read device memory for (a dynamic
      // slice's row index): the copy's kernel reads it instead.
      SmallVector<Operation *> dead;
      Value result = mlir::kiln::forwardedResults(call, {2}, dead)[0];
      builder.setInsertionPoint(call);
      SmallVector<Value> buffers;
      for (unsigned i = 0; i < 3; ++i)
        buffers.push_back(mlir::kiln::denseForLibrary(
            call, i == 2 ? result : call.getOperand(i), /*written=*/i == 2));
      SmallVector<Value> operands{
          mlir::kiln::globalPointer(builder, loc, global)};
      for (Value buffer : buffers)
        operands.push_back(mlir::kiln::libraryPointer(builder, loc, buffer));
      builder.create<func::CallOp>(loc, routine, operands);
      call->erase();
      for (Operation *op : dead)
        op->erase();
      callees.insert(callee);
    }
    mlir::kiln::eraseUncalled(module, callees);
  }
};

} // namespace
