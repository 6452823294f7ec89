//===- ConvToDnnl.cpp - f32/bf16 convolutions as oneDNN calls ------------===//
//
// Loops generated from a convolution's linalg.generic run far below what
// oneDNN's convolution primitive reaches (blocked JIT kernels, its own
// threads). The primitive needs the convolution's description, which the
// generic no longer states once it is lowered and bufferized (padding is a
// copy into a zero-filled buffer by then), so the CPU backend takes the
// convolution aside while it is still a kiln op and puts it back as a
// library call once buffers exist:
//
//   1. kiln-cpu-outline-dnnl-convs, on kiln IR: each f32 or bf16 kiln.conv that
//      oneDNN takes moves into its own private function, marked with the
//      oneDNN descriptor, together with the epilogue oneDNN applies while
//      it writes the result (a per-channel bias, a residual addition, a
//      ReLU or a clip: each a separate pass over memory otherwise;
//      an activation's function also returns a bound on the result's
//      magnitude where the result is another outlined convolution's input,
//      which that one's call takes, see DnnlConv.c); the
//      place of the last op moved gets a call. The function is an
//      ordinary function to every later pass, so bufferization gives its
//      call the input, weight and result buffers (results become
//      out-params) and the memory planner places the result.
//   2. kiln-cpu-conv-to-dnnl, on memrefs: each call of such a function
//      becomes a call of kiln_dnnl_conv_f32 or kiln_dnnl_conv_bf16
//      (backends/cpu/support/DnnlConv.c) with the buffers' addresses, the
//      descriptor (a constant
//      global) and a per-call-site global where the library caches the
//      primitive; the functions, now uncalled, are erased.
//
// Convolutions oneDNN's forward primitive does not take (lhs_dilation > 1,
// more than 3 spatial dims, empty dims, f64, f16) and small ones stay the
// generic lowering (backends/common/ConvLowering.cpp).
//
// A SiLU stays kiln's loop: oneDNN's swish post-op cost 0.55 ns per value
// on f32 kernels, more than kiln's loop, and made AMX's bf16 kernels 5x
// slower (1x1, 16 -> 96 channels on 112x112: 1.27 against 0.26 ms).
// EfficientNet-B0 in f32 ran 8-13% faster without it.
//
// A bf16 convolution (kiln-autocast makes them: the sums rounded to bf16,
// widened to f32 for the ops after it) takes the same epilogue, run by
// oneDNN on the f32 sums, so the result is rounded once, after it:
// to bf16 where the program narrows it again for the next convolution
// (then the call replaces the narrowing cast) or where its readers take
// the rounded value (then a cast widens the call's result for them), to
// nothing where an addend joins it (the call writes f32, as the residual
// additions of MobileNet and EfficientNet keep their sums). Either is at
// least as close to the exact value as the program's rounding of the sums
// before the bias, and it is where PyTorch's autocast rounds (its
// convolutions take their bias).
//
//===----------------------------------------------------------------------===//

#include "ActivationLayouts.h"
#include "Dequantized.h"
#include "DnnlCalls.h"
#include "DnnlConvLayouts.h"
#include "support/WinogradConv.h"

#include "common/BufferAccess.h"
#include "common/BufferAddress.h"
#include "common/ForwardedResults.h"
#include "common/LibraryCalls.h"
#include "common/OutlinedOps.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUOUTLINEDNNLCONVS
#define GEN_PASS_DEF_KILNCPUCONVTODNNL
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

using namespace mlir::kiln::dnnl;
using mlir::kiln::Dequantized;
using mlir::kiln::dequantized;
using mlir::kiln::exactInt8Scale;
using mlir::kiln::isValueOf;
using mlir::kiln::splatF32;

/// The descriptor that DnnlConv.c reads, if oneDNN's forward convolution
/// takes `op` and it does at least `minMacs` multiply-adds.
static std::optional<SmallVector<int64_t>> dnnlDescriptor(mlir::kiln::ConvOp op,
                                                          int64_t minMacs) {
  RankedTensorType input = op.getInput().getType();
  RankedTensorType weight = op.getWeight().getType();
  RankedTensorType result = op.getType();
  int64_t spatial = input.getRank() - 2;
  Type element = input.getElementType();
  if (!(element.isF32() || element.isBF16()) || spatial < 1 || spatial > 3 ||
      input.getNumElements() == 0 || weight.getNumElements() == 0 ||
      result.getNumElements() == 0 ||
      llvm::any_of(op.getLhsDilation(), [](int64_t d) { return d != 1; }))
    return std::nullopt;
  int64_t macs = result.getNumElements() * weight.getNumElements() /
                 weight.getDimSize(0);
  if (macs < minMacs)
    return std::nullopt;
  int64_t flags = element.isBF16() ? int64_t(KILN_DNNL_CONV_BFLOAT16) : 0;
  if (op.getWeight().getDefiningOp<mlir::kiln::ConstantOp>())
    flags |= KILN_DNNL_CONV_CONSTANT_WEIGHT;
  // Layouts: on plain layouts oneDNN runs im2col and its GEMM; in layouts
  // of its choice (channels blocked by the vector width) its direct
  // kernels, which pay off where there is a spatial window to reuse data
  // over and enough output positions to amortize the reorders (measured on
  // ResNet-50's convolutions with one thread: at 49 positions a 3x3
  // convolution is faster on the plain layouts, from 196 on faster
  // blocked). A 1x1 convolution is a GEMM already: the reorders would cost
  // it more than they gain.
  bool window = llvm::any_of(weight.getShape().drop_front(2),
                             [](int64_t k) { return k > 1; });
  int64_t positions = result.getDimSize(0);
  for (int64_t e : result.getShape().drop_front(2))
    positions *= e;
  // A grouped convolution (depthwise, as in MobileNet and EfficientNet, at
  // the extreme) runs on plain layouts as one small GEMM per group: 1152
  // groups of a 5x5 window over 7x7 positions took 1.5 ms that way with
  // one thread, against tens of microseconds for oneDNN's depthwise
  // kernels in its blocked layouts, whatever the number of positions.
  bool grouped = op.getGroups() > 1;
  if (window && (positions >= 128 || grouped))
    flags |= KILN_DNNL_CONV_BLOCKED;
  SmallVector<int64_t> descriptor{spatial,
                                  static_cast<int64_t>(op.getGroups()),
                                  input.getDimSize(0),
                                  input.getDimSize(1),
                                  weight.getDimSize(0),
                                  flags};
  llvm::append_range(descriptor, input.getShape().drop_front(2));
  llvm::append_range(descriptor, weight.getShape().drop_front(2));
  llvm::append_range(descriptor, result.getShape().drop_front(2));
  llvm::append_range(descriptor, op.getStrides());
  llvm::append_range(descriptor, op.getPaddingLow());
  llvm::append_range(descriptor, op.getPaddingHigh());
  llvm::append_range(descriptor, op.getRhsDilation());
  return descriptor;
}

/// The output positions of all images of the 2-d convolution `d`.
static int64_t outputPositions(ArrayRef<int64_t> d) {
  return d[2] * d[KILN_DNNL_CONV_HEADER_SIZE + 4] *
         d[KILN_DNNL_CONV_HEADER_SIZE + 5];
}

/// Where oneDNN's Winograd kernels run when asked for (`always`,
/// `kiln-compile --conv-algorithm=winograd`): a 3x3 window at stride 1
/// without dilation or groups, at least 16 input and 64 output channels and
/// 392 output positions (two 14x14 maps). Their transformed weights are
/// 16/9 of the direct ones' bytes, read from memory on each call in a
/// model, so the output positions must be enough to amortize them. In
/// ResNet-50 (`kiln-compile --profile`, one thread, oneDNN 2.6, AVX-512) they
/// were 15-17% faster than the direct kernels on 56x56 and 28x28 maps at
/// batch 1 and 1.35-1.85x at batch 8; kiln's own (`ownWinogradPays`) runs
/// the same convolutions as fast or faster.
static bool winogradPays(ArrayRef<int64_t> d) {
  return kiln_winograd_conv_applies(d.data()) && d[3] >= 16 && d[4] >= 64 &&
         outputPositions(d) >= 392;
}

/// Whether kiln's own Winograd convolution (WinogradConv.c), in `tiling`,
/// beats oneDNN's direct kernels, and its Winograd kernels where the CPU
/// has them, on the f32 convolution of `descriptor`. Its products [tiles,
/// C] x [C, K], one per transformed position, read all the transformed weights
/// however few the tiles, and its transforms cost per tile in proportion to C +
/// K where the products do to C K: so C K / (C + K) at least 32 (F(4x4,
/// 3x3) more on maps it fills in part, below) and, for F(4x4, 3x3) (4x the
/// direct weights' bytes), at least 8 tiles of 4x4 outputs.
/// Measured on an AVX2 EPYC, one thread, oneDNN 2.6's direct kernels on nChw8c
/// against it, one call at a time, ms: C = K = 64 on 56x56 2.8 / 1.5, 128 on
/// 28x28 3.0 / 1.3, 256 on 14x14 (16 tiles) 2.7 / 1.8, 512 on 7x7 (4 tiles) 3.8
/// / 6.0 and at batch 2 (8 tiles) 6.9 / 5.3; 448 -> 384 on 8x8 (4 tiles) 2.4
/// / 4.0 (3.5 / 6.5 on another day); 32 -> 64 on 147x147 (C K / (C + K) =
/// 21) 9.9 / 12.8; 16 -> 16 on 32x32 0.07 / 0.09. In DenseNet-121 (`--profile`,
/// batch 1) its 128 -> 32 convolutions (25.6) gained on 28x28 maps (8.3 -> 7.0
/// ms for 12) and lost on 56x56 (16.0 -> 16.4-18.0 for 6) and 14x14 (4.4-4.9
/// -> 6.4-6.8 for 24); ResNet-50's and Inception-v3's (32 and up)
/// gained 1.4-2.1x. A window of one row or column (F(m, r): F(4, 7) reads 10/7
/// of the direct weights' bytes, F(4, 3) 2x) takes at least 32 tiles of m
/// outputs. Alone, with its weights in cache, in microseconds: Inception's 160
/// -> 160 1x7 on 17x17 (85 tiles) 1640 / 856, 7x1 1230 / 866, 192 -> 192 1x7
/// 2127 / 966, at batch 8 14.9 / 10.4 ms; 384 -> 384 1x3 on 8x8 (16 tiles) 913
/// / 546, 3x1 986 / 440; 64 -> 64 1x7 on 17x17 271 / 230, 48 -> 64 (27.4) 207 /
/// 192, 32 -> 32 (16) 72 / 97. In the model (`--profile`, batch 1), whose
/// weights come from memory: the 17x17 ones 1.3-1.9x faster (192 -> 192 1x7
/// 2652 / 1514), the 8x8 ones no faster (1x3 1326 / 1364, 3x1 1264 / 1088).
/// With AVX-512 (a Zen 5 EPYC, `--profile`, one thread, ms per call of all
/// convolutions of a shape; oneDNN's Winograd kernels / direct / kiln's):
/// ResNet-50 at batch 1, 64 on 56x56 1.76 / - / 1.74, 128 on 28x28 1.74 / -
/// / 1.42, 256 on 14x14 (16 tiles) - / 4.08 / 3.37, 512 on 7x7 (4 tiles) -
/// / 2.18 / 6.26; at batch 8 12.7 / - / 13.0, 12.0 / - / 9.0, 22.0 / 31.7 /
/// 19.2, 15.2 / 13.2 / 11.4; Inception-v3 at batch 1, 80 -> 192 on 71x71
/// 2.99 / 5.01 / 2.30, 96 -> 96 on 35x35 1.75 / 2.17 / 1.33, 64 -> 96 1.38 /
/// 1.94 / 1.26, 32 -> 64 on 147x147 (21) 4.13 / 2.91 / 2.27; DenseNet-121's
/// 128 -> 32 (25.6, left direct) on 14x14 maps - / 1.30 / 2.21, on 28x28 -
/// / 2.45 / 2.17.
///
/// For F(4x4, 3x3) the channel bound also depends on how much of its tiles
/// the map fills (`covered`: 1 on 28x28 and 56x56 maps, (14 / 16)^2 = 0.77
/// on 14x14 and 7x7 ones, whose last tiles compute two or three outputs of
/// four along each dim, 0.39 on 5x5 ones): the products save 4 `covered` -
/// 1 of the direct multiplies per output and the transforms cost in
/// proportion to C + K, so C K / (C + K) at least 57 / (4 `covered` - 1)
/// too (19 on whole tiles, 28 at 0.77, 102 at 0.39; the 57 fitted to the
/// measurements above). Below 32 it paid on one thread and not on two:
/// DenseNet-121's 128 -> 32 (25.6) at batch 8 on one thread, direct /
/// kiln's, ms per call for all of a shape, 56x56 45.4 / 32.6, 28x28 19.8 /
/// 14.0, 14x14 9.7 / 10.2, 7x7 1.6 / 3.0 (the model 7% faster), but on two
/// threads of the same host the model at batch 1 and 8 5-6% slower (its
/// 28x28 ones at batch 1 1.37 / 1.98 ms), so 32 stays the floor.
static bool ownWinogradPays(ArrayRef<int64_t> d,
                            const KilnWinogradTiling &tiling) {
  int64_t tiles = d[2] * tiling.tilesH * tiling.tilesW;
  int64_t c = d[3], k = d[4];
  if (c * k < 32 * (c + k))
    return false;
  if (tiling.axis != KILN_WINOGRAD_SQUARE)
    return tiles >= 32;
  // Of one image's tiles (outputPositions counts all images').
  double covered =
      double(d[KILN_DNNL_CONV_HEADER_SIZE + 4] *
             d[KILN_DNNL_CONV_HEADER_SIZE + 5]) /
      double(tiling.tilesH * tiling.tileH * tiling.tilesW * tiling.tileW);
  return tiles >= 8 && double(c * k) * (4 * covered - 1) >= 57.0 * (c + k);
}

/// The ops after a convolution that oneDNN applies as it writes the
/// result, in order: a per-channel bias, an addend, a ReLU or a clip. Each
/// must be the only user of the value before it.
struct Epilogue {
  /// A bf16 convolution's: the cast of its result to f32 that the ops
  /// read, and the cast of their result back to bf16 (or none).
  mlir::kiln::CastOp widen, narrow;
  /// bf16 only: the call writes f32 (with an addend), or its bf16 result
  /// is widened after it for readers of the f32 value (`rewiden`).
  bool f32Dst = false;
  bool rewiden = false;
  mlir::kiln::AddOp biasAdd;
  Value bias; // the broadcast's operand: dims all 1 but the channel dim
  /// Or the value of a splat constant of the result's shape that the add
  /// adds (a bias of one value, zero for a model's untrained biases, which
  /// the constant folder turns into such a constant).
  std::optional<APFloat> uniformBias;
  mlir::kiln::AddOp addendAdd;
  Value addend;
  mlir::kiln::ReluOp relu;
  /// Or a clip (a ReLU6): kiln.max with a splat constant and then kiln.min
  /// with one (or a ReLU then kiln.min; either alone), in order, with its
  /// bounds (infinite where the chain has no such op).
  SmallVector<Operation *> clip;
  float clipLow = -std::numeric_limits<float>::infinity();
  float clipHigh = std::numeric_limits<float>::infinity();
  /// The last op of the chain (the convolution where there is none).
  Operation *last;
};

/// The only user of `value`, if it has exactly one use.
static Operation *soleUser(Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

/// The other operand of the add `op` whose one operand is `value`.
template <typename BinaryOp>
static Value otherOperand(BinaryOp op, Value value) {
  return op.getLhs() == value ? op.getRhs() : op.getLhs();
}

/// The per-channel vector broadcast by `value`, if it is a
/// kiln.broadcast_in_dim of a vector [O] along dim 1 or of a tensor whose
/// dims are all 1 but dim 1 (the channel dim), in place (identity dims):
/// either holds the bias's bytes in order.
static Value channelBias(Value value, int64_t channels) {
  auto broadcast = value.getDefiningOp<mlir::kiln::BroadcastInDimOp>();
  if (!broadcast)
    return nullptr;
  auto type = cast<RankedTensorType>(broadcast.getOperand().getType());
  ArrayRef<int64_t> dims = broadcast.getDims();
  // A vector [O] along dim 1.
  if (type.getRank() == 1 && dims[0] == 1 && type.getDimSize(0) == channels)
    return broadcast.getOperand();
  if (type.getRank() != cast<RankedTensorType>(value.getType()).getRank())
    return nullptr;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (dims[d] != d || type.getDimSize(d) != (d == 1 ? channels : 1))
      return nullptr;
  return broadcast.getOperand();
}

/// The bound of `op`, a kiln.max or kiln.min (`BoundOp`) of `value` and a
/// splat constant other than NaN (with a NaN bound every result is NaN,
/// which oneDNN's clip would not give), if it is `value`'s only user.
template <typename BoundOp>
static std::optional<float> clipBound(Value value, BoundOp &op) {
  op = dyn_cast_or_null<BoundOp>(soleUser(value));
  if (!op || op.getLhs() == op.getRhs())
    return std::nullopt;
  std::optional<float> bound = splatF32(otherOperand(op, value));
  if (!bound || std::isnan(*bound))
    return std::nullopt;
  return bound;
}

/// The clip that follows `value` in `epilogue`, if any: max(x, lo) or a
/// ReLU (`relu`, already matched), then min(x, hi); or min(x, hi) then
/// max(x, lo) where lo <= hi (then the same clamp).
static void findClip(Value value, mlir::kiln::ReluOp relu,
                     Epilogue &epilogue) {
  mlir::kiln::MaxOp max;
  mlir::kiln::MinOp min;
  std::optional<float> low = relu ? std::optional<float>(0.0f)
                                  : clipBound(value, max);
  if (low) {
    Operation *first = relu ? relu.getOperation() : max.getOperation();
    std::optional<float> high = clipBound(first->getResult(0), min);
    if (!high && relu)
      return; // a ReLU alone: its own flag
    epilogue.clip.push_back(first);
    epilogue.clipLow = *low;
    if (high) {
      epilogue.clip.push_back(min);
      epilogue.clipHigh = *high;
    }
  } else if (std::optional<float> high = clipBound(value, min)) {
    epilogue.clip.push_back(min);
    epilogue.clipHigh = *high;
    std::optional<float> low = clipBound(min.getResult(), max);
    if (low && *low <= *high) {
      epilogue.clip.push_back(max);
      epilogue.clipLow = *low;
    }
  }
  if (!epilogue.clip.empty())
    epilogue.last = epilogue.clip.back();
}

/// The ops of `epilogue` that read `current`, the sums of a convolution
/// with `channels` output channels: a bias always (on either path it costs
/// oneDNN less than a separate pass), an addend and a ReLU or clip only for
/// a convolution in blocked layouts (`blocked`),
/// whose direct kernels apply them as they store; the GEMM-based path runs
/// them as extra passes of its own, slower than the generated code's (its
/// sum post-op several times the convolution's cost on ResNet-50's 1x1
/// convolutions).
static void findEpilogueOps(Value current, int64_t channels, bool blocked,
                            Epilogue &epilogue) {
  auto add = dyn_cast_or_null<mlir::kiln::AddOp>(soleUser(current));
  if (add && add.getLhs() != add.getRhs()) {
    Value other = otherOperand(add, current);
    Value bias = channelBias(other, channels);
    DenseElementsAttr splat;
    if (!bias && matchPattern(other, m_Constant(&splat)) && splat.isSplat())
      epilogue.uniformBias = splat.getSplatValue<APFloat>();
    if (bias || epilogue.uniformBias) {
      epilogue.biasAdd = add;
      epilogue.bias = bias;
      epilogue.last = add;
      current = add.getResult();
      add = dyn_cast_or_null<mlir::kiln::AddOp>(soleUser(current));
    }
  }
  if (!blocked)
    return;
  if (add && add.getLhs() != add.getRhs()) {
    epilogue.addendAdd = add;
    epilogue.addend = otherOperand(add, current);
    epilogue.last = add;
    current = add.getResult();
  }
  auto relu = dyn_cast_or_null<mlir::kiln::ReluOp>(soleUser(current));
  findClip(current, relu, epilogue);
  if (!epilogue.clip.empty())
    return;
  if (relu) {
    epilogue.relu = relu;
    epilogue.last = relu;
  }
}

/// The epilogue of `op`, an f32 or bf16 convolution (see the top).
static Epilogue findEpilogue(mlir::kiln::ConvOp op, bool blocked) {
  Epilogue epilogue;
  epilogue.last = op;
  Type element = op.getType().getElementType();
  Value sums = op.getResult();
  if (element.isBF16()) {
    auto widen = dyn_cast_or_null<mlir::kiln::CastOp>(soleUser(sums));
    if (!widen || !widen.getType().getElementType().isF32())
      return epilogue;
    epilogue.widen = widen;
    sums = widen.getResult();
  } else if (!element.isF32()) {
    return epilogue;
  }
  findEpilogueOps(sums, op.getType().getDimSize(1), blocked, epilogue);
  if (!epilogue.widen)
    return epilogue;
  if (epilogue.last == op) {
    epilogue.widen = nullptr; // nothing to apply
  } else if (epilogue.addend) {
    epilogue.f32Dst = true;
  } else if (auto narrow = dyn_cast_or_null<mlir::kiln::CastOp>(
                 soleUser(epilogue.last->getResult(0)));
             narrow && narrow.getType().getElementType() == element) {
    epilogue.narrow = narrow;
    epilogue.last = narrow;
  } else {
    epilogue.rewiden = true;
  }
  return epilogue;
}

/// A convolution of dequantized 8-bit integers with weights that are int8
/// values times a scale: what ONNX's QDQ form (DequantizeLinear before a
/// Conv) leaves once the weights' DequantizeLinear is folded.
struct QuantizedConv {
  /// The 8-bit input (uint8 or int8) that was dequantized.
  Value source;
  int32_t zeroPoint = 0;
  /// The weights as int8, in their row-major order, and each output
  /// channel's scale: the input's times the weights'.
  SmallVector<int8_t> weights;
  SmallVector<float> scales;
};

/// `op` as a quantized convolution, where its input is dequantized 8-bit
/// integers and its weights constants exactly int8 values times one scale
/// (per tensor) or a scale per output channel (per axis 0).
static std::optional<QuantizedConv> quantizedConv(mlir::kiln::ConvOp op) {
  if (!op.getType().getElementType().isF32())
    return std::nullopt;
  std::optional<Dequantized> input = dequantized(op.getInput());
  DenseElementsAttr weights;
  if (!input || !matchPattern(op.getWeight(), m_Constant(&weights)))
    return std::nullopt;
  QuantizedConv q;
  q.source = input->source;
  q.zeroPoint = input->zeroPoint;
  SmallVector<float> values(weights.getValues<float>());
  int64_t channels = op.getWeight().getType().getDimSize(0);
  int64_t perChannel = values.size() / channels;
  q.weights.resize(values.size());
  SmallVector<float> weightScales;
  if (std::optional<float> s = exactInt8Scale(values, q.weights.data())) {
    weightScales.assign(channels, *s);
  } else {
    for (int64_t o = 0; o < channels; ++o) {
      std::optional<float> s =
          exactInt8Scale(ArrayRef(values).slice(o * perChannel, perChannel),
                         q.weights.data() + o * perChannel);
      if (!s)
        return std::nullopt;
      weightScales.push_back(*s);
    }
  }
  for (float s : weightScales)
    q.scales.push_back(input->scale * s);
  return q;
}

/// The ops after a quantized convolution that its call applies, each the
/// only user of the value before it: a constant per-channel bias, a ReLU,
/// and the QuantizeLinear of the result (a division by a splat scale, a
/// rounding, the addition of a splat even zero point, a saturating cast to
/// 8 bits), which makes the call write 8-bit integers instead of f32.
struct Requantization {
  /// The ops, in order from the convolution's user to `last`.
  SmallVector<Operation *> ops;
  Operation *last = nullptr;
  /// The bias divided by each channel's scale: oneDNN 2.6 adds an int8
  /// convolution's bias to its sums before scaling them.
  SmallVector<float> bias;
  bool relu = false;
  /// The QuantizeLinear: its scale, zero point and 8-bit type.
  float scale = 0;
  int32_t zeroPoint = 0;
  IntegerType type;
};

/// The bias, ReLU and requantization after `op`, whose channels' scales
/// are `scales`.
static Requantization findRequantization(mlir::kiln::ConvOp op,
                                         ArrayRef<float> scales) {
  Requantization r;
  r.last = op;
  Value current = op.getResult();
  int64_t channels = op.getType().getDimSize(1);
  auto advance = [&](Operation *next) {
    r.ops.push_back(next);
    r.last = next;
    current = next->getResult(0);
  };
  // A per-channel bias of constants, or a splat.
  if (auto add = dyn_cast_or_null<mlir::kiln::AddOp>(soleUser(current));
      add && add.getLhs() != add.getRhs()) {
    Value other = otherOperand(add, current);
    DenseElementsAttr values;
    if (Value bias = channelBias(other, channels)) {
      if (matchPattern(bias, m_Constant(&values)))
        r.bias = llvm::to_vector(values.getValues<float>());
    } else if (matchPattern(other, m_Constant(&values)) && values.isSplat()) {
      r.bias.assign(channels, values.getSplatValue<float>());
    }
    if (!r.bias.empty()) {
      for (int64_t o = 0; o < channels; ++o)
        r.bias[o] /= scales[o];
      advance(add);
    }
  }
  if (auto relu = dyn_cast_or_null<mlir::kiln::ReluOp>(soleUser(current))) {
    r.relu = true;
    advance(relu);
  }
  // QuantizeLinear: round(x / scale) [+ zero point], saturated to 8 bits.
  Requantization before = r;
  auto div = dyn_cast_or_null<mlir::kiln::DivOp>(soleUser(current));
  std::optional<float> scale =
      div && div.getLhs() == current ? splatF32(div.getRhs()) : std::nullopt;
  if (!scale || !(*scale > 0) || !std::isnormal(*scale))
    return before;
  advance(div);
  auto round = dyn_cast_or_null<mlir::kiln::RoundOp>(soleUser(current));
  if (!round)
    return before;
  advance(round);
  float zeroPoint = 0;
  if (auto add = dyn_cast_or_null<mlir::kiln::AddOp>(soleUser(current))) {
    std::optional<float> z = splatF32(otherOperand(add, current));
    if (!z || add.getLhs() == add.getRhs())
      return before;
    zeroPoint = *z;
    advance(add);
  }
  auto castOp = dyn_cast_or_null<mlir::kiln::CastOp>(soleUser(current));
  auto type = castOp ? dyn_cast<IntegerType>(castOp.getType().getElementType())
                     : nullptr;
  if (!type || type.getWidth() != 8)
    return before;
  // oneDNN adds the zero point before it rounds, QuantizeLinear after: the
  // two agree on ties (rounded to even) only for an even zero point.
  if (!isValueOf(zeroPoint, type) || std::fmod(zeroPoint, 2.0f) != 0)
    return before;
  advance(castOp);
  r.scale = *scale;
  r.zeroPoint = static_cast<int32_t>(zeroPoint);
  r.type = type;
  return r;
}

/// What an outlined quantized convolution computes from its arguments
/// (source, int8 weights, the bias where there is one, then the O scales
/// and the two zero points), as `op` and the ops of `r` computed it from
/// the dequantized source: the sums of (source - zero point) * weights,
/// plus the bias, times each channel's scale, a ReLU, and the
/// requantization. `source` is the first argument in the logical order
/// [N, C, D...].
static Value quantizedBody(OpBuilder &b, mlir::kiln::ConvOp op, Location loc,
                           Value source, ValueRange args,
                           const Requantization &r) {
  using namespace mlir::kiln;
  Type f32 = b.getF32Type();
  RankedTensorType type = op.getType();
  int64_t channels = type.getDimSize(1);
  Value quant = args.back();
  // The scalar at quant[index], broadcast to `shape`.
  auto scalarAt = [&](int64_t index, RankedTensorType shape) -> Value {
    Value one = b.create<SliceOp>(loc, quant, ArrayRef<int64_t>{index},
                                  ArrayRef<int64_t>{index + 1},
                                  ArrayRef<int64_t>{1});
    one = b.create<ReshapeOp>(loc, RankedTensorType::get({}, f32), one);
    return b.create<BroadcastInDimOp>(loc, shape, one, ArrayRef<int64_t>{});
  };
  auto sourceType = cast<RankedTensorType>(source.getType()).clone(f32);
  Value x = b.create<CastOp>(loc, sourceType, source);
  x = b.create<SubOp>(loc, x, scalarAt(channels, sourceType));
  Value weights = b.create<CastOp>(
      loc, cast<RankedTensorType>(args[1].getType()).clone(f32), args[1]);
  IRMapping mapping;
  mapping.map(op.getInput(), x);
  mapping.map(op.getWeight(), weights);
  Value result = b.clone(*op, mapping)->getResult(0);
  if (!r.bias.empty())
    result = b.create<AddOp>(
        loc, result,
        b.create<BroadcastInDimOp>(loc, type, args[2], ArrayRef<int64_t>{1}));
  Value scales = b.create<SliceOp>(loc, quant, ArrayRef<int64_t>{0},
                                   ArrayRef<int64_t>{channels},
                                   ArrayRef<int64_t>{1});
  result = b.create<MulOp>(
      loc, result,
      b.create<BroadcastInDimOp>(loc, type, scales, ArrayRef<int64_t>{1}));
  if (r.relu)
    result = b.create<ReluOp>(loc, result);
  if (!r.type)
    return result;
  result = b.create<AddOp>(loc, result, scalarAt(channels + 1, type));
  result = b.create<RoundOp>(loc, result);
  return b.create<CastOp>(loc, type.clone(r.type), result);
}

namespace {

struct KilnCpuOutlineDnnlConvsPass
    : mlir::kiln::impl::KilnCpuOutlineDnnlConvsBase<
          KilnCpuOutlineDnnlConvsPass> {
  using KilnCpuOutlineDnnlConvsBase::KilnCpuOutlineDnnlConvsBase;

  /// How the activations of the f32 or bf16 convolution of `descriptor`
  /// are laid out, as the `layouts` option says: where oneDNN's
  /// implementation wants them ("query"): channels-last (AMX's bf16
  /// kernels), or an f32 one's in its blocked layout where one of its
  /// kernels reads and writes them so as they are (from one convolution to
  /// the next: AVX2's and AVX-512's jit kernels want nChw8c and nChw16c), or
  /// channels-last as they are where it wants neither (`direct`); always
  /// channels-last ("channels-last", and "channels-last-direct" with
  /// `direct`), blocked by 8 or 16 channels as they are where the channel
  /// counts allow ("blocked-8", "blocked-16"; tests use these to be
  /// independent of the CPU), or never ("plain").
  ConvLayouts layoutsFor(ArrayRef<int64_t> descriptor, int32_t srcZeroPoint,
                         int32_t dstZeroPoint) {
    if (layouts == "plain")
      return {};
    if (layouts == "channels-last")
      return {true, true};
    if (layouts == "channels-last-direct")
      return {true, true, 0, 0, true};
    int64_t channels = descriptor[3], outputs = descriptor[4];
    bool f32 =
        !(descriptor[5] & (KILN_DNNL_CONV_BFLOAT16 | KILN_DNNL_CONV_INT8));
    if (layouts == "blocked-8" || layouts == "blocked-16") {
      int64_t block = layouts == "blocked-8" ? 8 : 16;
      ConvLayouts blocked;
      blocked.inputBlock = channels % block ? 0 : block;
      blocked.resultBlock = outputs % block ? 0 : block;
      blocked.direct = true;
      if (!f32 || (!blocked.inputBlock && !blocked.resultBlock))
        return {};
      return blocked;
    }
    ConvLayouts chosen =
        preferredLayouts(descriptor, srcZeroPoint, dstZeroPoint)
            .value_or(ConvLayouts{});
    // A blocked result (and input, or a plain one: a first convolution on
    // three channels) as oneDNN's kernel wants them, kept so from one
    // call to the next.
    int64_t block = chosen.resultBlock;
    if (f32 && block &&
        (chosen.inputBlock == block ||
         (!chosen.inputBlock && !chosen.inputLast && channels % block))) {
      int64_t flags = KILN_DNNL_CONV_BLOCKED_DST |
                      (chosen.inputBlock ? KILN_DNNL_CONV_BLOCKED_SRC : 0) |
                      (block == 16 ? KILN_DNNL_CONV_BLOCK_16 : 0);
      if (hasDirectKernel(descriptor, flags))
        return {false, false, chosen.inputBlock, block, true};
    }
    // Where oneDNN's fastest kernel wants neither activation channels-last
    // and its blocked layout cannot be kept (a bf16 convolution's, or
    // channels that are no multiple of the block: every call would reorder
    // into and out of it), one that reads and writes them channels-last as
    // they are.
    if (!chosen.inputLast && !chosen.resultLast &&
        hasDirectKernel(descriptor, KILN_DNNL_CONV_CHANNELS_LAST_SRC |
                                        KILN_DNNL_CONV_CHANNELS_LAST_DST))
      return {true, true, 0, 0, true};
    return {chosen.inputLast, chosen.resultLast};
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (layouts != "query" && layouts != "channels-last" &&
        layouts != "channels-last-direct" && layouts != "blocked-8" &&
        layouts != "blocked-16" && layouts != "plain") {
      module.emitError() << "kiln-cpu-outline-dnnl-convs: layouts must be "
                            "'query', 'channels-last', "
                            "'channels-last-direct', 'blocked-8', "
                            "'blocked-16' or 'plain', not '"
                         << layouts << "'";
      return signalPassFailure();
    }
    if (winograd != "query" && winograd != "always" && winograd != "own" &&
        winograd != "never") {
      module.emitError() << "kiln-cpu-outline-dnnl-convs: winograd must be "
                            "'query', 'always', 'own' or 'never', not '"
                         << winograd << "'";
      return signalPassFailure();
    }
    SmallVector<std::pair<mlir::kiln::ConvOp, SmallVector<int64_t>>> convs;
    module.walk([&](mlir::kiln::ConvOp op) {
      // An outlined function's own conv stays where it is.
      auto parent = op->getParentOfType<func::FuncOp>();
      if (parent && parent->hasAttr(kConvDescriptorAttr))
        return;
      if (auto descriptor = dnnlDescriptor(op, minMacs))
        convs.emplace_back(op, std::move(*descriptor));
    });
    SymbolTable symbols(module);
    OpBuilder builder(&getContext());
    llvm::SmallPtrSet<Operation *, 16> outlined;
    for (auto &entry : convs)
      outlined.insert(entry.first);
    // The bound on |value| that the call computing it writes, where value
    // is (the relayout of) an outlined convolution's result that has one.
    auto boundWritten = [&](Value value) -> Value {
      if (auto relaid = ActivationLayout::relaidFrom(value))
        value = relaid->second;
      auto call = value.getDefiningOp<func::CallOp>();
      if (!call || call.getNumResults() != 2 || call.getResult(0) != value)
        return nullptr;
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      auto descriptor =
          callee ? callee->getAttrOfType<DenseI64ArrayAttr>(kConvDescriptorAttr)
                 : nullptr;
      if (!descriptor || descriptor.size() <= 5 ||
          !(descriptor[5] & KILN_DNNL_CONV_DST_BOUND))
        return nullptr;
      return call.getResult(1);
    };
    for (auto &[op, descriptor] : convs) {
      Location loc = op.getLoc();
      int64_t &flags = descriptor[5];
      // A quantized convolution runs on oneDNN's int8 kernels, always in
      // layouts of its choice (the weights blocked for VNNI's dot
      // products), with its bias, ReLU and requantization. Where oneDNN
      // is asked about this CPU ("query"), only with VNNI's int8 dot
      // products; the explicit layouts (tests) outline it whatever the
      // CPU, and a CPU without them widens the call to f32.
      std::optional<QuantizedConv> quantized;
      if (layouts != "query" || hasInt8DotProducts())
        quantized = quantizedConv(op);
      Requantization requantization;
      if (quantized) {
        flags |= KILN_DNNL_CONV_INT8 | KILN_DNNL_CONV_BLOCKED;
        if (!cast<IntegerType>(
                 cast<RankedTensorType>(quantized->source.getType())
                     .getElementType())
                 .isUnsigned())
          flags |= KILN_DNNL_CONV_SIGNED_SRC;
        requantization = findRequantization(op, quantized->scales);
        if (!requantization.bias.empty())
          flags |= KILN_DNNL_CONV_BIAS;
        if (requantization.relu)
          flags |= KILN_DNNL_CONV_RELU;
        if (requantization.type) {
          flags |= KILN_DNNL_CONV_INT8_DST;
          if (!requantization.type.isUnsigned())
            flags |= KILN_DNNL_CONV_SIGNED_DST;
        }
      }
      ConvLayouts laid =
          layoutsFor(descriptor, quantized ? quantized->zeroPoint : 0,
                     requantization.zeroPoint);
      if (quantized)
        laid.inputBlock = laid.resultBlock = 0;
      if (laid.direct && !quantized) {
        flags &= ~int64_t(KILN_DNNL_CONV_BLOCKED);
        flags |= KILN_DNNL_CONV_ANY_WEIGHTS;
        if (laid.inputLast)
          flags |= KILN_DNNL_CONV_CHANNELS_LAST_SRC;
        if (laid.resultLast)
          flags |= KILN_DNNL_CONV_CHANNELS_LAST_DST;
        if (laid.inputBlock)
          flags |= KILN_DNNL_CONV_BLOCKED_SRC;
        if (laid.resultBlock)
          flags |= KILN_DNNL_CONV_BLOCKED_DST;
        if (std::max(laid.inputBlock, laid.resultBlock) == 16)
          flags |= KILN_DNNL_CONV_BLOCK_16;
      } else {
        if (laid.inputLast)
          flags |= KILN_DNNL_CONV_CHANNELS_LAST_SRC | KILN_DNNL_CONV_BLOCKED;
        if (laid.resultLast)
          flags |= KILN_DNNL_CONV_CHANNELS_LAST_DST | KILN_DNNL_CONV_BLOCKED;
      }
      // The layout of the input and of the result (and addend), where not
      // plain.
      auto layoutOf = [](bool last, int64_t block) {
        return last || block
                   ? std::optional<ActivationLayout>(ActivationLayout{block})
                   : std::nullopt;
      };
      std::optional<ActivationLayout> inputLayout =
          layoutOf(laid.inputLast, laid.inputBlock);
      std::optional<ActivationLayout> resultLayout =
          layoutOf(laid.resultLast, laid.resultBlock);
      Epilogue epilogue;
      epilogue.last = quantized ? requantization.last : op;
      if (!quantized)
        epilogue = findEpilogue(
            op, flags & (KILN_DNNL_CONV_BLOCKED | KILN_DNNL_CONV_ANY_WEIGHTS));
      if (epilogue.uniformBias) {
        // The uniform bias as the [O] vector oneDNN takes, not a tensor of
        // the result's shape added on each call.
        builder.setInsertionPoint(epilogue.biasAdd);
        auto type = RankedTensorType::get({op.getType().getDimSize(1)},
                                          builder.getF32Type());
        epilogue.bias = builder.create<mlir::kiln::ConstantOp>(
            loc, type, DenseElementsAttr::get(type, *epilogue.uniformBias));
      }
      SmallVector<Value> operands{op.getInput(), op.getWeight()};
      if (quantized) {
        // The source, the int8 weights, the bias divided by the scales,
        // and the scales (divided by the requantization's) followed by the
        // two zero points, as constants next to the call.
        builder.setInsertionPoint(op);
        auto constant = [&](RankedTensorType type, DenseElementsAttr value) {
          return builder.create<mlir::kiln::ConstantOp>(loc, type, value)
              .getResult();
        };
        auto int8 = op.getWeight().getType().clone(builder.getI8Type());
        operands = {quantized->source,
                    constant(int8, DenseElementsAttr::get(
                                       int8, ArrayRef(quantized->weights)))};
        int64_t channels = quantized->scales.size();
        auto vector = [&](int64_t n) {
          return RankedTensorType::get({n}, builder.getF32Type());
        };
        if (!requantization.bias.empty())
          operands.push_back(constant(
              vector(channels), DenseElementsAttr::get(
                                    vector(channels),
                                    ArrayRef(requantization.bias))));
        SmallVector<float> quant;
        for (float scale : quantized->scales)
          quant.push_back(requantization.type ? scale / requantization.scale
                                              : scale);
        quant.push_back(quantized->zeroPoint);
        quant.push_back(requantization.zeroPoint);
        operands.push_back(constant(
            vector(channels + 2),
            DenseElementsAttr::get(vector(channels + 2), ArrayRef(quant))));
      }
      if (epilogue.bias) {
        operands.push_back(epilogue.bias);
        flags |= KILN_DNNL_CONV_BIAS;
      }
      std::optional<size_t> addendIndex;
      if (epilogue.addend) {
        addendIndex = operands.size();
        operands.push_back(epilogue.addend);
        flags |= KILN_DNNL_CONV_ADDEND;
      }
      if (epilogue.relu)
        flags |= KILN_DNNL_CONV_RELU;
      if (!epilogue.clip.empty())
        flags |= KILN_DNNL_CONV_CLIP;
      if (epilogue.f32Dst)
        flags |= KILN_DNNL_CONV_F32_DST;
      // oneDNN's Winograd kernels only where asked (`always`, where the
      // shape allows): kiln's own below runs the same convolutions sooner
      // (`ownWinogradPays`).
      if (!quantized && winograd == "always" && winogradPays(descriptor))
        flags |= KILN_DNNL_CONV_WINOGRAD | KILN_DNNL_CONV_BLOCKED;
      // kiln's own Winograd convolution, on the layouts chosen above, where
      // it pays (`query`) or wherever the shape allows (`own`). Not for a
      // convolution of dequantized integers that runs as f32 (a CPU without
      // VNNI): its direct sums of products of integers times scales stay
      // close to the int8 kernels' exact ones, and the transforms' rounding
      // moves more requantized values by a step that the next layers carry
      // on (the QDQ ResNet-18 of test/onnx/quantized_models.py against the
      // file evaluated node by node, six seeds: the same on five, 2.4e-2 of
      // the largest output with kiln's Winograd against 0 on the sixth).
      KilnWinogradTiling tiling;
      if (!quantized && kiln_winograd_conv_tiling(descriptor.data(), &tiling) &&
          (winograd == "own" ||
           (winograd == "query" && ownWinogradPays(descriptor, tiling) &&
            !quantizedConv(op))))
        flags |= KILN_DNNL_CONV_OWN_WINOGRAD;
      // An activation's or a Winograd kernel's call reads its operands'
      // magnitudes (DnnlConv.c): where src is what an earlier such call
      // wrote, that call passes on a bound of it, and so does this one
      // where its result is another outlined convolution's input.
      bool guarded = !quantized && (flags & (KILN_DNNL_CONV_ACTIVATIONS |
                                             KILN_DNNL_CONV_WINOGRAD |
                                             KILN_DNNL_CONV_OWN_WINOGRAD));
      Value srcBound = guarded ? boundWritten(op.getInput()) : Value();
      if (srcBound) {
        operands.push_back(srcBound);
        flags |= KILN_DNNL_CONV_SRC_BOUND;
      }
      Value value = epilogue.last->getResult(0);
      if (guarded && llvm::any_of(value.getUsers(), [&](Operation *user) {
            auto conv = dyn_cast<mlir::kiln::ConvOp>(user);
            return conv && conv.getInput() == value && outlined.contains(conv);
          }))
        flags |= KILN_DNNL_CONV_DST_BOUND;
      // The activations laid out channels-last or blocked are relaid out
      // into that layout at the call site and out of it after the call
      // (ActivationLayout): relayouts that kiln-cpu-propagate-layouts moves
      // to where the layout really changes. Every operand dominates the
      // last op of the chain, where the call goes.
      // Each operand's layout: the input's, and the addend's (the
      // result's).
      SmallVector<std::optional<ActivationLayout>> operandLayouts(
          operands.size());
      operandLayouts[0] = inputLayout;
      if (addendIndex)
        operandLayouts[*addendIndex] = resultLayout;
      builder.setInsertionPoint(epilogue.last);
      SmallVector<Value> callOperands;
      for (auto [value, layout] : llvm::zip(operands, operandLayouts))
        callOperands.push_back(layout ? layout->into(builder, loc, value)
                                      : value);
      // The value the program reads after the chain, and the call's (in
      // the logical order): the bf16 result a cast widens, with rewiden.
      auto logicalType =
          cast<RankedTensorType>(epilogue.last->getResultTypes()[0]);
      RankedTensorType callType =
          epilogue.rewiden ? logicalType.clone(op.getType().getElementType())
                           : logicalType;
      RankedTensorType resultType =
          resultLayout ? resultLayout->laidOut(callType) : callType;
      SmallVector<Type> resultTypes{resultType};
      auto boundType = RankedTensorType::get({}, builder.getF32Type());
      if (flags & KILN_DNNL_CONV_DST_BOUND)
        resultTypes.push_back(boundType);
      if (flags & KILN_DNNL_CONV_CLIP)
        for (float bound : {epilogue.clipLow, epilogue.clipHigh})
          descriptor.push_back(llvm::bit_cast<uint32_t>(bound));
      builder.setInsertionPointToEnd(module.getBody());
      auto type = builder.getFunctionType(
          ValueRange(callOperands).getTypes(), resultTypes);
      auto function =
          builder.create<func::FuncOp>(loc, "kiln_dnnl_conv", type);
      function.setPrivate();
      function->setAttr(kConvDescriptorAttr,
                        builder.getDenseI64ArrayAttr(descriptor));
      symbols.insert(function); // makes the name unique
      Block *body = function.addEntryBlock();
      builder.setInsertionPointToStart(body);
      // The body computes what the moved ops did, from the arguments.
      IRMapping mapping;
      for (auto [value, argument, layout] :
           llvm::zip(operands, body->getArguments(), operandLayouts))
        mapping.map(value, layout ? layout->outOf(
                                        builder, loc, argument,
                                        cast<RankedTensorType>(value.getType()))
                                  : Value(argument));
      Value result =
          quantized ? quantizedBody(builder, op, loc,
                                    mapping.lookup(quantized->source),
                                    body->getArguments(), requantization)
                    : builder.clone(*op, mapping)->getResult(0);
      mapping.map(op.getResult(), result);
      if (epilogue.widen)
        result = builder.clone(*epilogue.widen, mapping)->getResult(0);
      if (epilogue.biasAdd) {
        Value sums =
            epilogue.widen ? epilogue.widen.getResult() : op.getResult();
        Operation *broadcast =
            otherOperand(epilogue.biasAdd, sums).getDefiningOp();
        builder.clone(*broadcast, mapping);
        result = builder.clone(*epilogue.biasAdd, mapping)->getResult(0);
      }
      if (epilogue.addendAdd)
        result = builder.clone(*epilogue.addendAdd, mapping)->getResult(0);
      if (epilogue.relu)
        result = builder.clone(*epilogue.relu, mapping)->getResult(0);
      for (Operation *bound : epilogue.clip) {
        for (Value operand : bound->getOperands())
          if (Operation *constant = operand.getDefiningOp();
              constant && !mapping.contains(operand))
            builder.clone(*constant, mapping);
        result = builder.clone(*bound, mapping)->getResult(0);
      }
      if (epilogue.narrow)
        result = builder.clone(*epilogue.narrow, mapping)->getResult(0);
      if (epilogue.rewiden)
        result = builder.create<mlir::kiln::CastOp>(loc, callType, result);
      if (resultLayout)
        result = resultLayout->into(builder, loc, result);
      SmallVector<Value> results{result};
      // The bound as this body knows it: none (+inf); the library call
      // computes a finite one where it can.
      if (flags & KILN_DNNL_CONV_DST_BOUND)
        results.push_back(builder.create<mlir::kiln::ConstantOp>(
            loc, boundType,
            DenseElementsAttr::get(
                boundType, std::numeric_limits<float>::infinity())));
      builder.create<func::ReturnOp>(loc, results);

      builder.setInsertionPoint(epilogue.last);
      Value called =
          builder.create<func::CallOp>(loc, function, callOperands)
              .getResult(0);
      if (resultLayout)
        called = resultLayout->outOf(builder, loc, called, callType);
      if (epilogue.rewiden)
        called = builder.create<mlir::kiln::CastOp>(loc, logicalType, called);
      epilogue.last->getResult(0).replaceAllUsesWith(called);
      SmallVector<Operation *> moved{epilogue.last};
      if (quantized && !requantization.ops.empty())
        moved.assign(requantization.ops.rbegin(), requantization.ops.rend());
      if (epilogue.relu && epilogue.relu != epilogue.last)
        moved.push_back(epilogue.relu);
      for (Operation *bound : llvm::reverse(epilogue.clip))
        if (bound != epilogue.last)
          moved.push_back(bound);
      if (epilogue.addendAdd && epilogue.addendAdd != epilogue.last)
        moved.push_back(epilogue.addendAdd);
      if (epilogue.biasAdd && epilogue.biasAdd != epilogue.last)
        moved.push_back(epilogue.biasAdd);
      if (epilogue.widen)
        moved.push_back(epilogue.widen);
      if (op != epilogue.last)
        moved.push_back(op);
      for (Operation *dead : moved)
        dead->erase();
    }
  }
};

struct KilnCpuConvToDnnlPass
    : mlir::kiln::impl::KilnCpuConvToDnnlBase<KilnCpuConvToDnnlPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto calls =
        mlir::kiln::callsOfMarkedFunctions(module, kConvDescriptorAttr);
    if (calls.empty())
      return;

    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Type pointer = LLVM::LLVMPointerType::get(context);
    // Each entry is declared where a call needs it (declareLibraryFunction
    // returns an existing declaration).
    auto entry = [&](StringRef name) {
      // kiln_dnnl_conv_f32 and _bf16 take the bounds after dst.
      unsigned arity = name == kConvInt8Function ? 7 : 9;
      return mlir::kiln::declareLibraryFunction(
          module, name,
          builder.getFunctionType(SmallVector<Type>(arity, pointer), {}));
    };

    SymbolTable symbols(module);
    SetVector<Operation *> callees;
    // One descriptor per function, one cache slot per call site.
    llvm::DenseMap<Operation *, memref::GlobalOp> descriptors;
    for (auto [call, callee] : calls) {
      auto descriptor =
          callee->getAttrOfType<DenseI64ArrayAttr>(kConvDescriptorAttr);
      // The header (k, groups, N, C, O, flags), then 7 entries per dim,
      // then a clip's two bounds.
      bool wellFormed = descriptor.size() > KILN_DNNL_CONV_HEADER_SIZE &&
                        descriptor[0] >= 1 && descriptor[0] <= 3 &&
                        static_cast<int64_t>(descriptor.size()) ==
                            kiln_dnnl_conv_descriptor_size(descriptor[0],
                                                           descriptor[5]);
      if (!wellFormed) {
        callee.emitError() << "'" << kConvDescriptorAttr
                           << "' must hold k (1 to 3), groups, N, C, O, "
                              "flags, 7 entries per spatial dim and, with a "
                              "clip, its two bounds";
        return signalPassFailure();
      }
      int64_t flags = descriptor[5];
      bool quantized = flags & KILN_DNNL_CONV_INT8;
      bool dstBound = flags & KILN_DNNL_CONV_DST_BOUND;
      unsigned expected = 3 + ((flags & KILN_DNNL_CONV_BIAS) != 0) +
                          ((flags & KILN_DNNL_CONV_ADDEND) != 0) + quantized +
                          ((flags & KILN_DNNL_CONV_SRC_BOUND) != 0) + dstBound;
      if (call.getNumOperands() != expected ||
          call.getNumResults() != 0 ||
          !llvm::all_of(call.getOperandTypes(),
                        [](Type t) { return isa<MemRefType>(t); })) {
        call.emitError() << "expected a call of '" << callee.getSymName()
                         << "' on the input, weight, bias, addend and "
                            "source bound (as the descriptor's flags say; "
                            "for a quantized one the scales and zero points "
                            "instead of the addend) and result buffers (and "
                            "the result's bound)";
        return signalPassFailure();
      }
      Location loc = call.getLoc();
      // The descriptor and the cache slot, as module globals.
      builder.setInsertionPoint(callee);
      memref::GlobalOp &descriptorGlobal = descriptors[callee];
      if (!descriptorGlobal)
        descriptorGlobal = mlir::kiln::createI64Global(
            builder, loc, symbols, "kiln_dnnl_conv_descriptor",
            descriptor.asArrayRef(), /*constant=*/true, /*alignment=*/nullptr);
      memref::GlobalOp slotGlobal = mlir::kiln::createI64Global(
          builder, loc, symbols, "kiln_dnnl_conv_slot", {0},
          /*constant=*/false, builder.getI64IntegerAttr(8));

      builder.setInsertionPoint(call);
      auto pointerTo = [&](Value memref) -> Value {
        int64_t bytes = cast<MemRefType>(memref.getType())
                            .getElementTypeBitWidth() / 8;
        mlir::kiln::BufferAddress address =
            mlir::kiln::bufferAddressOf(builder, loc, memref, bytes);
        return builder.create<LLVM::IntToPtrOp>(loc, pointer, address.address);
      };
      auto globalPointer = [&](memref::GlobalOp global) {
        return mlir::kiln::globalPointer(builder, loc, global);
      };
      SmallVector<Operation *> dead;
      unsigned operandCount = call.getNumOperands();
      SmallVector<unsigned> resultOperands{operandCount - 1 - dstBound};
      if (dstBound)
        resultOperands.push_back(operandCount - 1);
      SmallVector<Value> results =
          mlir::kiln::forwardedResults(call, resultOperands, dead);
      Value null;
      auto nullPointer = [&] {
        if (!null)
          null = builder.create<LLVM::ZeroOp>(loc, pointer);
        return null;
      };
      func::CallOp site = call;
      auto optional = [&](int64_t flag, unsigned &next) -> Value {
        if (!(flags & flag))
          return nullPointer();
        return pointerTo(site.getOperand(next++));
      };
      unsigned next = 2;
      // A quantized call's scales and zero points take the place of the
      // addend.
      Value bias = optional(KILN_DNNL_CONV_BIAS, next);
      Value addend = quantized ? pointerTo(call.getOperand(next++))
                               : optional(KILN_DNNL_CONV_ADDEND, next);
      SmallVector<Value> operands{globalPointer(slotGlobal),
                                  globalPointer(descriptorGlobal),
                                  pointerTo(call.getOperand(0)),
                                  pointerTo(call.getOperand(1)),
                                  bias,
                                  addend,
                                  pointerTo(results[0])};
      // kiln_dnnl_conv_f32 and _bf16 also take the bounds (null where
      // absent).
      if (!quantized) {
        operands.push_back(optional(KILN_DNNL_CONV_SRC_BOUND, next));
        operands.push_back(dstBound ? pointerTo(results[1]) : nullPointer());
      }
      func::FuncOp convFunction =
          entry(quantized                           ? kConvInt8Function
                : flags & KILN_DNNL_CONV_BFLOAT16 ? kConvBf16Function
                                                   : kConvFunction);
      if (!convFunction)
        return signalPassFailure();
      builder.create<func::CallOp>(loc, convFunction, operands);
      call->erase();
      for (Operation *op : dead)
        op->erase();
      callees.insert(callee);
    }
    mlir::kiln::eraseUncalled(module, callees);
  }
};

} // namespace
