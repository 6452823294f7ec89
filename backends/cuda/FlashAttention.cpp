//===- FlashAttention.cpp - Attention as a tiled GPU kernel ---------------===//
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
// causal attention's blocks stop at their last row's diagonal, and its
// longest blocks start first, across the heads (launchBlocks). Where the
// head dims allow (fitsTheTiledKernel: those of BERT and GPT-2), the
// forward is instead register-tiled (KernelBuilder::buildTiled): each
// thread computes a 4 x 4 tile of scores and of outputs from vectors of
// four floats in shared memory, eight times fewer shared-memory reads per
// multiply-add than the lanes' kernel, whose every product reads a word;
// and so is the gradient where both head dims are 64
// (fitsTheTiledGradient, KernelBuilder::buildTiledGrad), by default one
// kernel over key rows that adds dq with atomics, as FlashAttention-2's.
//
// As on the CPU (AttentionCalls.cpp), the op is taken aside while it is a
// kiln op and the kernel is built once buffers exist:
//
//   1. kiln-cuda-outline-attention, on kiln IR: each f32 kiln.attention
//      moves into a private function marked `kiln.cuda_attention` (its
//      scale and causal flag), called in its place (OutlinedOps.h); each
//      f32 kiln.attention_grad likewise into one marked
//      `kiln.cuda_attention_grad`, with rowsum(dO * O) computed by kiln ops
//      before the call and passed in O's place.
//   2. kiln-cuda-flash-attention, on memrefs: each call of such a function
//      becomes a gpu.launch of the kernel on the call's buffers (two for
//      the gradient: dq over query rows, dk and dv over key rows, both
//      recomputing the probabilities from the saved lse; or, for the
//      register-tiled gradient, a launch zeroing dq and one over key rows
//      that adds into it); the functions
//      are erased. What the launches read and write are the call's
//      operands, so the later CUDA passes (stream ordering, the device
//      arena, kernel outlining) treat them as any other launch.
//
// An f16 or bf16 forward whose head dims fit (fitsTheMmaKernels: multiples
// of 8 up to 128) runs on tensor cores (KernelBuilder::buildMma,
// FlashAttention-2's tiling on PTX's mma.m16n8k16), and so does such a
// gradient (KernelBuilder::buildMmaGrad: for head dims up to 64 by default
// one kernel over key rows that adds dq in f32 with atomics, else two
// kernels, over key rows and over query rows). With the pass's
// f32-tensor-cores, f32 attention and its gradient of the same head dims
// run on the same kernels in 3xTF32 products (splitTF32: each f32 operand
// as two TF32 words, three m16n8k8 products per product, f32's accuracy),
// the gradient as one kernel with atomics where its tiles fit staged split
// (planMmaGradKeyBuffers), else as its two. Other f16 and bf16
// attention runs the f32 kernels on operands
// widened by kiln.cast, its results rounded once, as the ops define it
// (WidenedAttention.h). f64, and head dims that would leave a thread more
// than kMaxDimsPerLane of them, are decomposed into their composition
// (kiln-decompose-attention).
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "Delinearize.h"
#include "LaunchHints.h"
#include "TensorCoreMma.h"
#include "TunedSites.h"

#include "common/OutlinedOps.h"
#include "common/WidenedAttention.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAOUTLINEATTENTION
#define GEN_PASS_DEF_KILNCUDAFLASHATTENTION
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The function attributes: {scale = f64, causal = bool}.
static constexpr llvm::StringLiteral kAttentionAttr =
    mlir::kiln::kCudaAttentionAttr;
static constexpr llvm::StringLiteral kAttentionGradAttr =
    mlir::kiln::kCudaAttentionGradAttr;

/// Workgroup memory for a key tile, its value tile and the block's scores
/// of that tile, in floats (44 KiB, within the 48 KiB a block may have
/// statically on every architecture).
static constexpr int64_t kSharedFloats = 11264;

/// The alignment of a 16-byte read, the widest a thread may make.
static constexpr int64_t kAlignedBytes = 16;

/// The bytes of rows that the blocks running at one time may share from
/// L2 when a causal grid interleaves batch entries (launchBlocks): a third
/// of an H100's or H200's 50 MiB, and within an A100's 40 MiB.
static constexpr int64_t kL2ShareBytes = 16 << 20;

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

/// The register-tiled forward kernel (KernelBuilder::buildTiled): a block
/// of kTiledSide x kTiledSide threads owns kTiledRows query rows and walks
/// the keys in tiles of kTiledKeys; each thread computes a 4 x 4 tile of
/// scores (rows ty + 16 i, keys 4 tx + j) and of the output (rows ty + 16 i,
/// dims 4 tx + j), reading workgroup memory four floats at a time.
static constexpr int64_t kTiledSide = 16;
static constexpr int64_t kTiledRows = 4 * kTiledSide;
static constexpr int64_t kTiledKeys = 4 * kTiledSide;

/// Whether the register-tiled kernel takes these head dims: query dims a
/// multiple of 4 up to kTiledRows (its key tile, transposed, has a row per
/// query dim in the buffer the weights' kTiledRows rows then take) and
/// value dims four per thread of a row. Its three 16 KiB buffers fill the 48
/// KiB a block may have statically.
static bool fitsTheTiledKernel(int64_t headDim, int64_t valueDim) {
  return headDim > 0 && headDim % 4 == 0 && headDim <= kTiledRows &&
         valueDim == 4 * kTiledSide;
}

/// The blocks per multiprocessor the register-tiled gradient's kernels ask
/// ptxas for (kiln.min_blocks_per_sm, kiln-cuda-outline-kernels): two
/// blocks of 256 threads leave 128 registers a thread, which the kernels
/// fit without spilling on sm_90 (32 accumulators and the products'
/// operands), while left to itself ptxas may take a few more and run one
/// block per SM, half the warps to hide latency with.
static constexpr int64_t kTiledGradBlocksPerSM = 2;

/// Whether the register-tiled gradient (KernelBuilder::buildTiledGrad)
/// takes these head dims: both 64, so that every product's columns are
/// four per thread of a row.
static bool fitsTheTiledGradient(int64_t headDim, int64_t valueDim) {
  return headDim == 4 * kTiledSide && valueDim == 4 * kTiledSide;
}

/// The tensor-core forward kernel (KernelBuilder::buildMma), for f16 and
/// bf16 operands: each of a block's kMmaWarps warps owns 16 query rows,
/// and the block walks the keys in tiles (mmaTileKeys).
static constexpr int64_t kMmaWarps = 4;
static constexpr int64_t kMmaRows = 16 * kMmaWarps;

/// The blocks per multiprocessor the tensor-core forward asks ptxas for
/// (kiln.min_blocks_per_sm) where its head dims are at most
/// kMmaBlocksPerSMDims: three blocks of 128 threads leave 168 registers a
/// thread, which those kernels fit without spilling on sm_90, while left
/// to itself ptxas may take up to 220 where the rows are clamped (D = Dv =
/// 96, 300 rows) and run two blocks per SM. Wider head dims take 255.
static constexpr int64_t kMmaBlocksPerSM = 3;
static constexpr int64_t kMmaBlocksPerSMDims = 96;

/// The groups of 16 query rows each warp of the tensor-core forward owns:
/// two for head dims up to 64 without a mask (blocks of 128 rows, as
/// FlashAttention-2's), so that each key and value fragment read from
/// workgroup memory feeds two products and each staged tile serves twice
/// the rows. ptxas then takes 241 to 255 registers a thread (two blocks per
/// SM) and spills nothing on sm_90; a mask's reads would spill 92 bytes at
/// D = Dv = 64, and wider head dims' accumulators leave no registers for a
/// second group, so those take one.
static int64_t mmaRowGroups(int64_t headDim, int64_t valueDim, bool masked) {
  return masked || std::max(headDim, valueDim) > 64 ? 1 : 2;
}

/// The keys of the tensor-core kernel's tiles: 64, as FlashAttention-2's,
/// but 32 for head dims over 64 up to 96, whose forward is held at
/// kMmaBlocksPerSM blocks per SM (168 registers a thread): with 64 keys
/// ptxas spills 4 to 20 bytes of it on sm_90. At D = Dv = 128 the forward
/// takes 64 keys in 168 to 232 registers without spilling (two blocks
/// per SM), and each tile's rescaling of its 64 accumulators a lane then
/// serves twice the keys. In f32 (3xTF32): 32, whose keys and values take
/// 32 KiB of workgroup memory at D = Dv = 64 staged split (stagedSplit)
/// and at 128 as f32 words.
static int64_t mmaTileKeys(int64_t headDim, int64_t valueDim, bool f32) {
  int64_t widest = std::max(headDim, valueDim);
  if (f32)
    return 32;
  return widest > 64 && widest <= 96 ? 32 : 64;
}

/// Whether the f32 (3xTF32) kernels stage the tiles they read as B
/// operands split into their big and small TF32 parts (storeSplit), each
/// part in a tile of its own (the gradient's kernels: both in one buffer,
/// splitParts), rather than as f32 words that each warp
/// splits as it reads them: for head dims up to 64. A split costs five
/// integer instructions besides its subtraction (the integer pipes run at
/// half the FP32 rate); split as read, each of the block's four warps
/// splits every word of the tiles, split as staged each word is split
/// once, by one thread. The forward's key and value tiles of 32 keys then
/// take the 32 KiB that f32 words of 64 keys took (split as read, 256
/// words a warp per 64 keys at D = Dv = 64, more integer work than the
/// tile's 384 tensor-core products take time for). The gradient's query
/// kernel (dq) fills the 48 KiB a block may have statically with its key,
/// value and transposed key tiles (split as read, 192 of the 272 splits a
/// lane made per tile); its key kernel: stagedSplitKeyGrad.
static bool stagedSplit(bool f32, int64_t headDim, int64_t valueDim) {
  return f32 && std::max(headDim, valueDim) <= 64;
}

/// Whether the f32 (3xTF32) gradient's key kernel (dk, dv) stages its
/// tiles split (stagedSplit): its query and dO tiles of 32 queries, as
/// pairs and transposed, split, take 64 KiB (dynamic shared memory,
/// kiln-cuda-dynamic-shared-memory), where the target gives a block
/// `sharedBytes` of at least twice the kernel's `kernelBytes`, so that
/// two blocks (which its registers allow) still share a multiprocessor:
/// sm_80 and sm_90, not the 99 KiB of sm_86 and sm_89. Split as read,
/// 256 of the 352 splits a lane made per tile at D = Dv = 64 were of
/// those tiles' words.
static bool stagedSplitKeyGrad(bool f32, int64_t headDim, int64_t valueDim,
                               int64_t kernelBytes, int64_t sharedBytes) {
  return stagedSplit(f32, headDim, valueDim) && 2 * kernelBytes <= sharedBytes;
}

/// Whether the tensor-core kernels (KernelBuilder::buildMma, buildMmaGrad)
/// take these head dims: D and Dv in steps of 8, up to 128. Every product
/// whose k is D or Dv (the forward's s = Q K^T, the gradient's s and dp =
/// dO V^T) then runs in whole steps: in f32 their k is 8; in f16 and bf16
/// it is 16, and the last step of a head dim of 8 mod 16 (Stable
/// Diffusion's 40, or 24) has zeros in its upper eight dims (mmaHeadDim).
/// The other products' n is 8 too, and the staged tiles, 64 x D and Dv x
/// 64 halves, take 16 KiB each at most.
static bool fitsTheMmaKernels(int64_t headDim, int64_t valueDim) {
  return headDim > 0 && headDim % 8 == 0 && headDim <= 128 && valueDim > 0 &&
         valueDim % 8 == 0 && valueDim <= 128;
}

/// The width of the tiles staged for products whose k is D (or Dv, for
/// the gradient's dp = dO V^T): the head dim rounded up to 16, zeros past
/// it (stagePairs). In f16 and bf16 that is their k, and the A operands
/// are zeros there too (leftWords). f32's products stop at the head dim
/// (its k is 8); the wider rows keep a staged tile's words swizzled
/// (swizzledWord), where rows of 8 mod 16 words would not be.
static int64_t mmaHeadDim(int64_t headDim) {
  return llvm::alignTo(headDim, 16);
}

/// The rows of the other side's tiles in the tensor-core gradient's
/// kernels: the forward's keys a tile, but for head dims over 96 16
/// queries in the key kernel, whose f32 accumulators (dk and dv, 2 x 64
/// registers a lane at 128) leave too few registers for wider tiles'
/// scores (with 32, ptxas spills 16 to 88 bytes on sm_90), and 32 keys in
/// the query kernel (dq without atomics), which takes them in 168 to 182
/// registers without spilling. In f32 (3xTF32), both kernels: 32, whose
/// staged tiles take 32 KiB in the key kernel at D = Dv = 64 (four of them)
/// and 24 KiB in the query kernel (three) as f32 words, twice that staged
/// split (stagedSplitKeyGrad, stagedSplit); 16 for head dims over
/// 64, which keeps the f32 words within 48 KiB at 128.
static int64_t mmaGradientTile(int64_t headDim, int64_t valueDim,
                               bool keyKernel, bool f32) {
  int64_t widest = std::max(headDim, valueDim);
  if (f32)
    return widest > 64 ? 16 : 32;
  if (widest <= 96)
    return mmaTileKeys(headDim, valueDim, /*f32=*/false);
  return keyKernel ? 16 : 32;
}

/// Whether the key kernel's warps can share dq's product of a tile of
/// `tile` queries evenly (addQueryGradShares): its slabs of 16 queries go
/// to the warps in turn, and the warps of a slab split its fragments of 8
/// dims evenly.
static bool shareableQueryGrad(int64_t tile, int64_t headDim) {
  if (tile % 16 != 0 || kMmaWarps % (tile / 16) != 0)
    return false;
  return headDim % 8 == 0 && (headDim / 8) % (kMmaWarps / (tile / 16)) == 0;
}

DictionaryAttr mlir::kiln::cudaAttentionInfo(Builder &builder, APFloat scale,
                                             bool causal) {
  return builder.getDictionaryAttr(
      {builder.getNamedAttr("scale",
                            builder.getF64FloatAttr(scale.convertToDouble())),
       builder.getNamedAttr("causal", builder.getBoolAttr(causal))});
}

/// Whether the kernels take an attention (or its gradient) on these
/// operands and results: static f32, head dims that fit.
static bool takenByTheKernels(Operation *op) {
  auto isStaticF32 = [](Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return tensor.getElementType().isF32() && tensor.hasStaticShape();
  };
  if (!llvm::all_of(op->getOperandTypes(), isStaticF32) ||
      !llvm::all_of(op->getResultTypes(), isStaticF32))
    return false;
  auto lastDim = [&](unsigned operand) {
    return cast<RankedTensorType>(op->getOperand(operand).getType())
        .getShape()
        .back();
  };
  return fitsTheKernel(lastDim(0), lastDim(2));
}

bool mlir::kiln::takenByTensorCoreAttention(Operation *op) {
  if (!isa<mlir::kiln::AttentionOp, mlir::kiln::AttentionGradOp>(op))
    return false;
  auto shapeOf = [&](unsigned operand) {
    return cast<RankedTensorType>(op->getOperand(operand).getType()).getShape();
  };
  Type element =
      cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
  auto isStatic = [](Type type) {
    return cast<RankedTensorType>(type).hasStaticShape();
  };
  int64_t headDim = shapeOf(0).back(), valueDim = shapeOf(2).back();
  return (element.isBF16() || element.isF16()) &&
         llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic) &&
         fitsTheMmaKernels(headDim, valueDim);
}

Value mlir::kiln::attentionGradRowsum(OpBuilder &builder,
                                      AttentionGradOp grad) {
  // As kiln ops (a block reduction on the GPU), in f32 for half precision.
  builder.setInsertionPoint(grad);
  Location loc = grad.getLoc();
  auto widened = [&](Value x) -> Value {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType().isF32())
      return x;
    return builder.create<CastOp>(loc, type.clone(builder.getF32Type()), x);
  };
  int64_t last =
      cast<RankedTensorType>(grad.getResult().getType()).getRank() - 1;
  Value cotangent = widened(grad.getResultGrad());
  Value result = widened(grad.getResult());
  return builder.create<ReduceSumOp>(
      loc, builder.create<MulOp>(loc, cotangent, result),
      ArrayRef<int64_t>{last});
}

namespace {

struct KilnCudaOutlineAttentionPass
    : mlir::kiln::impl::KilnCudaOutlineAttentionBase<
          KilnCudaOutlineAttentionPass> {
  using KilnCudaOutlineAttentionBase::KilnCudaOutlineAttentionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Half-precision attention and gradients on tensor cores where they
    // fit, the rest of half precision on the f32 kernels (WidenedAttention.h);
    // f64 and head dims too wide stay for the composition.
    bool tensorCores = this->tensorCores;
    auto asItIs = [&](Operation *op) {
      return tensorCores && mlir::kiln::takenByTensorCoreAttention(op);
    };
    SmallVector<Operation *> ops = mlir::kiln::attentionsForKernels(
        module,
        [&](Operation *op) { return asItIs(op) || takenByTheKernels(op); },
        asItIs);
    SymbolTable symbols(module);
    OpBuilder builder(&getContext());
    for (Operation *op : ops) {
      if (auto forward = dyn_cast<mlir::kiln::AttentionOp>(op)) {
        func::FuncOp function = mlir::kiln::outlineWithPlaceholderBody(
            op, "kiln_cuda_flash_attention", symbols);
        function->setAttr(kAttentionAttr, mlir::kiln::cudaAttentionInfo(
                                              builder, forward.getScale(),
                                              forward.getCausal()));
        continue;
      }
      // The gradient's kernels need rowsum(dO * O) per query row, not O,
      // passed in O's place.
      auto grad = cast<mlir::kiln::AttentionGradOp>(op);
      Value delta = mlir::kiln::attentionGradRowsum(builder, grad);
      SmallVector<Value> operands{grad.getQuery(), grad.getKey(),
                                  grad.getValue(), grad.getResultGrad(),
                                  grad.getLse(), delta};
      if (grad.getMask())
        operands.push_back(grad.getMask());
      APFloat scale = grad.getScale();
      bool causal = grad.getCausal();
      func::FuncOp function = mlir::kiln::outlineWithPlaceholderBody(
          op, operands, "kiln_cuda_flash_attention_grad", symbols);
      function->setAttr(kAttentionGradAttr,
                        mlir::kiln::cudaAttentionInfo(builder, scale, causal));
    }
  }
};

/// Builds one kernel in place of one call.
class KernelBuilder {
public:
  KernelBuilder(func::CallOp call, int64_t rowsPerBlock, int64_t keysPerTile,
                bool gradientAtomics, bool f32TensorCores, int64_t sharedBytes)
      : call(call), loc(call.getLoc()), b(call), rowsPerBlock(rowsPerBlock),
        keysPerTile(keysPerTile), gradientAtomics(gradientAtomics),
        f32TensorCores(f32TensorCores), sharedBytes(sharedBytes) {}

  /// The forward kernel, for a call of a `kiln.cuda_attention` function.
  LogicalResult build(DictionaryAttr info);
  /// The register-tiled forward kernel, where fitsTheTiledKernel.
  void buildTiled(Value query, Value key, Value value, Value mask, Value out,
                  Value lse, double scale, bool causal, int64_t batch,
                  ArrayRef<int64_t> leading, int64_t queries, int64_t keys,
                  int64_t headDim);
  /// The tensor-core forward kernel, for f16 and bf16 buffers where
  /// fitsTheMmaKernels, and f32 ones there too under f32TensorCores.
  void buildMma(Value query, Value key, Value value, Value mask, Value out,
                Value lse, double scale, bool causal, int64_t batch,
                ArrayRef<int64_t> leading, int64_t queries, int64_t keys,
                int64_t headDim, int64_t valueDim);
  /// What planMmaGradKeyBuffers decides.
  struct MmaGradKeyBuffers {
    SmallVector<MemRefType> buffers;
    bool splitKeyTiles, dsOwnBuffer, atomics;
  };
  MmaGradKeyBuffers planMmaGradKeyBuffers(Type element, int64_t headDim,
                                          int64_t valueDim, int64_t queries,
                                          int64_t keys);
  /// The tensor-core gradient's kernels, for f16 and bf16 buffers where
  /// fitsTheMmaKernels, and f32 ones there too under f32TensorCores:
  /// `operands` and `grads` as for buildTiledGrad.
  void buildMmaGrad(ArrayRef<Value> operands, Value mask, ArrayRef<Value> grads,
                    double scale, bool causal, int64_t batch,
                    ArrayRef<int64_t> leading, int64_t queries, int64_t keys,
                    int64_t headDim, int64_t valueDim);
  /// The register-tiled gradient's kernels, where fitsTheTiledGradient:
  /// `operands` are query, key, value, dO, lse and rowsum(dO * O), `grads`
  /// the dq, dk and dv buffers. Erases the call.
  void buildTiledGrad(ArrayRef<Value> operands, Value mask,
                      ArrayRef<Value> grads, double scale, bool causal,
                      int64_t batch, ArrayRef<int64_t> leading, int64_t queries,
                      int64_t keys);
  /// The gradient's two kernels, for a call of a
  /// `kiln.cuda_attention_grad` function.
  LogicalResult buildGrad(DictionaryAttr info);

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
  /// Reads {scale, causal} from `info` (the callee's `mark`) and checks
  /// that the call passes `plain` static f32 buffers, or `plain + 1` with
  /// the mask at `maskIndex`; `expected` says which when it does not.
  LogicalResult readCall(DictionaryAttr info, StringRef mark, unsigned plain,
                         unsigned maskIndex, StringRef expected, double &scale,
                         bool &causal, Value &mask) {
    auto scaleAttr = info ? info.getAs<FloatAttr>("scale") : nullptr;
    auto causalAttr = info ? info.getAs<BoolAttr>("causal") : nullptr;
    if (!scaleAttr || !causalAttr)
      return call.emitError()
             << "'" << mark << "' must be {scale = f64, causal = bool}";
    unsigned count = call.getNumOperands();
    // Half-precision buffers are checked by build() and buildGrad().
    auto staticFloat = [&](Value value) {
      auto type = dyn_cast<MemRefType>(value.getType());
      Type element = type ? type.getElementType() : Type();
      return type && type.hasStaticShape() &&
             (element.isF32() || element.isF16() || element.isBF16());
    };
    if ((count != plain && count != plain + 1) || call.getNumResults() != 0 ||
        !llvm::all_of(call.getOperands(), staticFloat))
      return call.emitError() << expected;
    scale = scaleAttr.getValueAsDouble();
    causal = causalAttr.getValue();
    mask = count == plain + 1 ? call.getOperand(maskIndex) : Value();
    return success();
  }
  /// Fails, saying `expected`, unless the buffers `ofElement` hold
  /// `element` and `f32s` f32: a tensor-core kernel's half-precision
  /// operands and results beside its f32 row statistics.
  LogicalResult checkHalfBuffers(Type element, ArrayRef<Value> ofElement,
                                 ArrayRef<Value> f32s, StringRef expected) {
    auto elementOf = [](Value v) {
      return cast<MemRefType>(v.getType()).getElementType();
    };
    if (llvm::any_of(ofElement,
                     [&](Value v) { return elementOf(v) != element; }) ||
        !llvm::all_of(f32s, [&](Value v) { return elementOf(v).isF32(); }))
      return call.emitError() << expected;
    return success();
  }
  /// Fails, saying so, where a call whose query is f32 passes a buffer of
  /// another type: the f32 kernels take f32 throughout.
  LogicalResult allF32() {
    for (auto [i, type] : llvm::enumerate(call.getOperandTypes()))
      if (!cast<MemRefType>(type).getElementType().isF32())
        return call.emitError()
               << "operand " << i << " is " << type
               << ", where the f32 kernels take f32 buffers throughout";
    return success();
  }
  /// Fails, saying why, where the kernels do not take these head dims.
  LogicalResult checkHeadDims(int64_t headDim, int64_t valueDim) {
    if (fitsTheKernel(headDim, valueDim))
      return success();
    return call.emitError()
           << "head dims " << headDim << " and " << valueDim
           << " leave a thread more than " << kMaxDimsPerLane
           << " of them; kiln-cuda-outline-attention leaves such "
              "attentions to their composition";
  }
  /// Rows per block for `lanes` lanes per row: rows-per-block, at most
  /// 1024 threads, and whole warps when lanes > 1 (a shuffle takes the
  /// whole warp, all 32 threads named in its mask).
  int64_t blockRows(int64_t lanes) const {
    int64_t rows = std::max<int64_t>(1, std::min(rowsPerBlock, 1024 / lanes));
    return lanes > 1 ? int64_t(llvm::alignTo(rows, 32 / lanes)) : rows;
  }
  /// Which row blocks of a launch work longest. Causal attention's query
  /// blocks see the keys up to their diagonal, so the last work longest;
  /// its key blocks are seen by the queries from their diagonal on, so the
  /// first do. Otherwise all blocks work alike.
  enum class Longest { None, Last, First };
  /// A launch, and where one of its blocks works: its row block within
  /// its batch entry, and the entry.
  struct Blocks {
    gpu::LaunchOp launch;
    Value rowBlock, entry;
  };
  /// One launch before the call: blocks x batch blocks of `threads`
  /// threads with workgroup buffers of `workgroup` types, the builder left
  /// at the start of its body. Sets `zero` and `one`.
  ///
  /// Grid x numbers all the blocks: grid y and z hold at most 65535 blocks,
  /// fewer than the batch entries of many sequences' heads. A GPU starts
  /// the blocks about in that order, so it decides two things:
  ///   - Longest::None: entry by entry, so that the blocks running at one
  ///     time read the same entry's rows, from L2.
  ///   - otherwise the longest blocks start first, across entries, so that
  ///     none of them starts late and finishes after everything else.
  ///     Entries are taken in groups whose rows (entryBytes each, the rows
  ///     every block of an entry reads) fit in a share of L2 together
  ///     (the largest such divisor of batch): within a group, block ranks
  ///     by length, entries fastest.
  Blocks launchBlocks(int64_t blocks, int64_t threads, int64_t batch,
                      ArrayRef<MemRefType> workgroup, Longest order,
                      int64_t entryBytes) {
    b.setInsertionPoint(call);
    one = index(1);
    auto launch = b.create<gpu::LaunchOp>(
        loc, index(blocks * batch), one, one, index(threads), one, one,
        /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/Type(),
        /*asyncDependencies=*/ValueRange(),
        /*workgroupAttributions=*/
        SmallVector<Type>(workgroup.begin(), workgroup.end()));
    b.setInsertionPointToStart(&launch.getBody().front());
    zero = index(0);
    // Block x is (group, rank, entry in the group), entry by entry for
    // Longest::None (groups of one).
    int64_t group = 1;
    if (order != Longest::None) {
      int64_t fit = kL2ShareBytes / std::max<int64_t>(1, entryBytes);
      for (int64_t g = 1; g <= std::min(batch, fit); ++g)
        if (batch % g == 0)
          group = g;
    }
    SmallVector<Value> extents = {index(batch / group), index(blocks)};
    if (group > 1)
      extents.push_back(index(group));
    SmallVector<Value> at =
        kiln::delinearizeIndex(b, loc, launch.getBlockIds().x, extents);
    Blocks placed{launch, at[1], at[0]};
    if (group > 1)
      placed.entry = add(mul(at[0], index(group)), at[2]);
    if (order == Longest::Last)
      placed.rowBlock =
          b.create<arith::SubIOp>(loc, index(blocks - 1), placed.rowBlock);
    return placed;
  }
  /// One launch before the call: ceil(own / rows) x batch blocks of
  /// rows x lanes threads with workgroup buffers of `workgroup` types in
  /// `order` (entryBytes as for launchBlocks), the builder left at the
  /// start of its body, and there this thread's lane, its row in the block
  /// and in `own` (queries or keys), whether that row exists, and the row it
  /// reads (the last one for rows past the end, so that every thread takes
  /// part in the shuffles and barriers; they write nothing). Sets `zero`,
  /// `one` and the batch entry's leading indices (last dim fastest).
  struct Rows {
    gpu::LaunchOp launch;
    Value thread, lane, local, blockStart, row, valid, readRow;
  };
  Rows launchRows(int64_t own, int64_t rows, int64_t lanes, int64_t batch,
                  ArrayRef<int64_t> leading, ArrayRef<MemRefType> workgroup,
                  Longest order, int64_t entryBytes) {
    Blocks blocks = launchBlocks((own + rows - 1) / rows, rows * lanes, batch,
                                 workgroup, order, entryBytes);
    Rows r;
    r.launch = blocks.launch;
    r.thread = blocks.launch.getThreadIds().x;
    Value lanesV = index(lanes);
    r.lane = b.create<arith::RemUIOp>(loc, r.thread, lanesV);
    r.local = b.create<arith::DivUIOp>(loc, r.thread, lanesV);
    r.blockStart = mul(blocks.rowBlock, index(rows));
    r.row = add(r.blockStart, r.local);
    r.valid = less(r.row, index(own));
    r.readRow = b.create<arith::MinSIOp>(loc, r.row, index(own - 1));
    setLeadingIndices(blocks.entry, leading);
    return r;
  }
  /// The indices along the leading dims of batch entry `entry` (last dim
  /// fastest), for `at`.
  void setLeadingIndices(Value entry, ArrayRef<int64_t> leading) {
    SmallVector<Value> extents;
    for (int64_t size : leading)
      extents.push_back(index(size));
    leadingIndices = kiln::delinearizeIndex(b, loc, entry, extents);
  }
  /// A buffer of f32 (or `element`) in workgroup memory.
  MemRefType workgroupType(ArrayRef<int64_t> shape, Type element = {}) {
    return MemRefType::get(
        shape, element ? element : b.getF32Type(), AffineMap(),
        gpu::AddressSpaceAttr::get(call.getContext(),
                                   gpu::AddressSpace::Workgroup));
  }
  /// The dims lane `lane` of `lanes` owns among `count` x lanes: lane,
  /// lane + lanes, ...
  SmallVector<Value> dimsOfLane(Value lane, int64_t lanes, int64_t count) {
    SmallVector<Value> dims;
    for (int64_t t = 0; t < count; ++t)
      dims.push_back(add(index(t * lanes), lane));
    return dims;
  }
  /// buffer[row, d] times `factor` for each of `dims`: a lane's share of a
  /// row, as values the loops carry (registers).
  SmallVector<Value> loadShare(Value buffer, Value row, ArrayRef<Value> dims,
                               double factor) {
    Value factorF = factor != 1.0 ? f32(factor) : Value();
    SmallVector<Value> share;
    for (Value d : dims) {
      Value x = b.create<memref::LoadOp>(loc, buffer, at(buffer, {row, d}));
      if (factorF)
        x = b.create<arith::MulFOp>(loc, x, factorF);
      share.push_back(x);
    }
    return share;
  }
  /// The key tiles of `tile` keys a block of query rows from `blockStart`
  /// sees: all, or up to its last row's diagonal when causal (key j is seen
  /// by row i iff j <= i).
  Value keyTiles(Value blockStart, int64_t rows, int64_t queries,
                 int64_t keys, int64_t tile, bool causal) {
    if (!causal)
      return index((keys + tile - 1) / tile);
    Value lastRow = b.create<arith::MinSIOp>(loc, add(blockStart, index(rows)),
                                             index(queries));
    Value seen = b.create<arith::MinSIOp>(loc, lastRow, index(keys));
    return b.create<arith::DivUIOp>(loc, add(seen, index(tile - 1)),
                                    index(tile));
  }
  /// The gradient's p = exp(s - lse) where the key is seen (0 elsewhere)
  /// and ds = p (dp - rowsum(dO * O)) of one (query, key) pair.
  std::pair<Value, Value> gradientWeights(Value s, Value seen, Value logSum,
                                          Value dp, Value rowDelta) {
    Value p = b.create<arith::SelectOp>(
        loc, seen,
        b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, s, logSum)),
        f32(0.0));
    Value ds = b.create<arith::MulFOp>(
        loc, p, b.create<arith::SubFOp>(loc, dp, rowDelta));
    return {p, ds};
  }
  /// One step of a row's online softmax (both forward kernels): the new
  /// running maximum, whether it is still -inf (nothing seen yet), and the
  /// factor exp(m - m') that rescales the running sum and accumulators, 1
  /// while nothing was seen (exp of -inf minus -inf would be NaN).
  struct SoftmaxStep {
    Value max, nothing, correction;
  };
  SoftmaxStep foldMax(Value runningMax, Value tileMax) {
    SoftmaxStep step;
    step.max = b.create<arith::MaximumFOp>(loc, runningMax, tileMax);
    step.nothing =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, step.max,
                                f32(-std::numeric_limits<double>::infinity()));
    step.correction = b.create<arith::SelectOp>(
        loc, step.nothing, f32(1.0),
        b.create<math::ExpOp>(
            loc, b.create<arith::SubFOp>(loc, runningMax, step.max)));
    return step;
  }
  /// A score's weight exp(s - m') after `step`, 0 while nothing was seen.
  Value softmaxWeight(Value s, const SoftmaxStep &step) {
    return b.create<arith::SelectOp>(
        loc, step.nothing, f32(0.0),
        b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, s, step.max)));
  }
  /// lse[row] = max + log(sum), or `nan` where the row saw no finite
  /// score (`none`), as the softmax's 0 / 0.
  void storeLogSumExp(Value lse, Value row, Value max, Value sum, Value none,
                      Value nan) {
    Value logSum =
        b.create<arith::AddFOp>(loc, max, b.create<math::LogOp>(loc, sum));
    b.create<memref::StoreOp>(loc,
                              b.create<arith::SelectOp>(loc, none, nan, logSum),
                              lse, at(lse, {row}));
  }
  /// Every lane of a row gets `Combine` over the row's lanes' `value`: a
  /// butterfly of shuffles, whose combinations see the same operands in
  /// every lane.
  template <typename Combine> Value overLanes(Value value, int64_t lanes) {
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2)
      value = b.create<Combine>(
          loc, value,
          b.create<gpu::ShuffleOp>(loc, value, int32_t(offset), int32_t(32),
                                   gpu::ShuffleMode::XOR)
              .getShuffleResult());
    return value;
  }
  /// The sum of the row's lanes' `value`, in every lane of the row.
  Value sumOverLanes(Value value, int64_t lanes) {
    return overLanes<arith::AddFOp>(value, lanes);
  }
  /// The maximum of the row's lanes' `value`, in every lane of the row.
  Value maxOverLanes(Value value, int64_t lanes) {
    return overLanes<arith::MaximumFOp>(value, lanes);
  }
  /// Element `i` of a vector of four floats.
  Value element(Value vector, int64_t i) {
    return b.create<LLVM::ExtractElementOp>(
        loc, vector, b.create<arith::ConstantIntOp>(loc, i, 32));
  }
  /// The vector of four floats `values`.
  Value quad(ArrayRef<Value> values) {
    Value vector =
        b.create<LLVM::UndefOp>(loc, VectorType::get({4}, b.getF32Type()));
    for (auto [i, x] : llvm::enumerate(values))
      vector = b.create<LLVM::InsertElementOp>(
          loc, vector, x, b.create<arith::ConstantIntOp>(loc, i, 32));
    return vector;
  }
  /// source[leading..., min(row, rows - 1), column] (0 along the dims
  /// `source` broadcasts), or 0 where row >= rows: a read that stays in
  /// bounds without a branch.
  Value loadOrZero(Value source, Value row, int64_t rows, Value column) {
    Value x = b.create<memref::LoadOp>(
        loc, source,
        at(source,
           {b.create<arith::MinSIOp>(loc, row, index(rows - 1)), column}));
    Value zeroOfType =
        b.create<arith::ConstantOp>(loc, b.getZeroAttr(x.getType()));
    return b.create<arith::SelectOp>(loc, less(row, index(rows)), x,
                                     zeroOfType);
  }
  /// s plus the mask at (query, key) if there is one, and whether the
  /// query sees the key: `inRange` and, when causal, key <= query.
  std::pair<Value, Value> maskAndSee(Value s, Value mask, Value query,
                                     int64_t queries, Value key, int64_t keys,
                                     Value inRange, bool causal) {
    if (mask) {
      Value readQuery =
          b.create<arith::MinSIOp>(loc, query, index(queries - 1));
      Value readKey = b.create<arith::MinSIOp>(loc, key, index(keys - 1));
      Value entry =
          b.create<memref::LoadOp>(loc, mask, at(mask, {readQuery, readKey}));
      if (entry.getType() != s.getType())
        entry = b.create<arith::ExtFOp>(loc, s.getType(), entry);
      s = b.create<arith::AddFOp>(loc, s, entry);
    }
    Value seen = inRange;
    if (causal)
      seen = b.create<arith::AndIOp>(
          loc, seen,
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, key, query));
    return {s, seen};
  }
  /// The threads of a register-tiled launch: kTiledSide x kTiledSide of
  /// them (tx = thread mod 16, ty = thread / 16) own kTiledRows rows of a
  /// batch entry; thread (tx, ty) owns rows ty + 16 i (i < 4) and columns
  /// 4 tx + j (j < 4) of what the block walks.
  struct Tile {
    gpu::LaunchOp launch;
    Value thread, tx, ty, rowBlock, blockStart, firstColumn;
    /// The thread's rows in the block, and overall.
    SmallVector<Value> localRow, row;
  };
  /// A register-tiled launch over `own` rows with workgroup buffers of
  /// kTiledRows x `quads` vectors of four floats, its blocks in `order`
  /// (entryBytes as for launchBlocks).
  Tile launchTiled(int64_t own, int64_t batch, ArrayRef<int64_t> leading,
                   ArrayRef<int64_t> quads, Longest order, int64_t entryBytes) {
    Type vector = VectorType::get({4}, b.getF32Type());
    SmallVector<MemRefType> buffers;
    for (int64_t q : quads)
      buffers.push_back(workgroupType({kTiledRows, q}, vector));
    Blocks blocks =
        launchBlocks(llvm::divideCeil(own, kTiledRows), kTiledSide * kTiledSide,
                     batch, buffers, order, entryBytes);
    Tile t;
    t.launch = blocks.launch;
    t.rowBlock = blocks.rowBlock;
    setLeadingIndices(blocks.entry, leading);
    t.thread = t.launch.getThreadIds().x;
    Value side = index(kTiledSide);
    t.tx = b.create<arith::RemUIOp>(loc, t.thread, side);
    t.ty = b.create<arith::DivUIOp>(loc, t.thread, side);
    t.blockStart = mul(t.rowBlock, index(kTiledRows));
    for (int64_t i = 0; i < 4; ++i) {
      t.localRow.push_back(add(t.ty, index(kTiledSide * i)));
      t.row.push_back(add(t.blockStart, t.localRow.back()));
    }
    t.firstColumn = mul(t.tx, index(4));
    return t;
  }
  /// A transposed tile's column c of row d is stored at c xor (d mod 16):
  /// the 16 columns of a row are read by the 16 threads of a row of the
  /// block, and the threads that stage consecutive dims of a row then
  /// write different banks.
  Value swizzled(Value d, Value c) {
    return b.create<arith::XOrIOp>(
        loc, c, b.create<arith::AndIOp>(loc, d, index(kTiledSide - 1)));
  }
  /// tile[r][c] = dims 4c..4c+3 of row first + r of this block's batch
  /// entry of `source` (times `factor`), zeros from row `limit` on;
  /// consecutive threads take consecutive vectors of a row.
  void stageRows(const Tile &t, Value source, Value first, int64_t limit,
                 Value tile, double factor) {
    int64_t quads = cast<MemRefType>(tile.getType()).getDimSize(1);
    Value factorF = factor != 1.0 ? f32(factor) : Value();
    loop(t.thread, index(kTiledRows * quads), index(kTiledSide * kTiledSide),
         {}, [&](Value e, ValueRange) {
           Value r = b.create<arith::DivUIOp>(loc, e, index(quads));
           Value c = b.create<arith::RemUIOp>(loc, e, index(quads));
           SmallVector<Value> xs;
           for (int64_t k = 0; k < 4; ++k) {
             Value x = loadOrZero(source, add(first, r), limit,
                                  add(mul(c, index(4)), index(k)));
             xs.push_back(factorF ? b.create<arith::MulFOp>(loc, x, factorF)
                                  : x);
           }
           b.create<memref::StoreOp>(loc, quad(xs), tile, ValueRange{r, c});
           return SmallVector<Value>{};
         });
  }
  /// tile[d][swizzled(d, c)] = dim d of rows first + 4c .. first + 4c + 3
  /// of `source` (zeros from row `limit` on), for d < depth; consecutive
  /// threads read consecutive dims of a row.
  void stageTransposed(const Tile &t, Value source, Value first, int64_t limit,
                       Value tile, int64_t depth) {
    loop(t.thread, index(depth * kTiledSide), index(kTiledSide * kTiledSide),
         {}, [&](Value e, ValueRange) {
           Value d = b.create<arith::RemUIOp>(loc, e, index(depth));
           Value c = b.create<arith::DivUIOp>(loc, e, index(depth));
           SmallVector<Value> xs;
           for (int64_t k = 0; k < 4; ++k)
             xs.push_back(
                 loadOrZero(source, add(first, add(mul(c, index(4)), index(k))),
                            limit, d));
           b.create<memref::StoreOp>(loc, quad(xs), tile,
                                     ValueRange{d, swizzled(d, c)});
           return SmallVector<Value>{};
         });
  }
  /// How tileProduct reads its operands.
  enum class Layout {
    /// left[row][k4] holds k = 4 k4 .. 4 k4 + 3 of a row; right[k][tx] the
    /// thread's four columns of row k.
    Plain,
    /// As Plain, with right's columns as stageTransposed stores them.
    SwizzledRight,
    /// left as storeInterleaved stores it: left[row][k4 xor (row / 4 mod
    /// 16)] holds k = k4, k4 + 16, k4 + 32, k4 + 48; right's rows plain.
    Interleaved,
  };
  /// init[4 i + j] + the sum over k < 4 quads of left[row i][k] times
  /// right[k][column j]: the thread's 4 x 4 tile of a product, `left`
  /// holding its rows (kTiledRows x quads vectors along k), `right` its
  /// columns (k x 16 vectors of four columns), read as `layout` says; four
  /// multiply-adds per read of each.
  SmallVector<Value> tileProduct(const Tile &t, Value left, Value right,
                                 int64_t quads, Layout layout,
                                 ValueRange init) {
    auto product = loop(zero, index(quads), one, init,
                        [&](Value k4, ValueRange sums) -> SmallVector<Value> {
                          SmallVector<Value> rows;
                          for (int64_t i = 0; i < 4; ++i) {
                            Value column = k4;
                            if (layout == Layout::Interleaved)
                              column = interleavedColumn(t.localRow[i], k4);
                            rows.push_back(b.create<memref::LoadOp>(
                                loc, left, ValueRange{t.localRow[i], column}));
                          }
                          SmallVector<Value> next(sums);
                          for (int64_t kk = 0; kk < 4; ++kk) {
                            Value k = layout == Layout::Interleaved
                                          ? add(k4, index(kTiledSide * kk))
                                          : add(mul(k4, index(4)), index(kk));
                            Value columns = b.create<memref::LoadOp>(
                                loc, right,
                                ValueRange{k, layout == Layout::SwizzledRight
                                                  ? swizzled(k, t.tx)
                                                  : t.tx});
                            SmallVector<Value> column;
                            for (int64_t j = 0; j < 4; ++j)
                              column.push_back(element(columns, j));
                            for (int64_t i = 0; i < 4; ++i) {
                              Value x = element(rows[i], kk);
                              for (int64_t j = 0; j < 4; ++j)
                                next[4 * i + j] = b.create<math::FmaOp>(
                                    loc, x, column[j], next[4 * i + j]);
                            }
                          }
                          return next;
                        });
    return SmallVector<Value>(product.getResults());
  }
  /// Where Layout::Interleaved keeps vector k4 of row `row`: swizzled by
  /// row / 4, so that the 16 threads of a row of the block, which store
  /// rows 4 tx + j, write different banks.
  Value interleavedColumn(Value row, Value k4) {
    Value group = b.create<arith::AndIOp>(
        loc, b.create<arith::DivUIOp>(loc, row, index(4)),
        index(kTiledSide - 1));
    return b.create<arith::XOrIOp>(loc, k4, group);
  }
  /// The thread's 4 x 4 tile transposed into `tile` as Layout::Interleaved
  /// reads it: row 4 tx + j gets values j, 4 + j, 8 + j, 12 + j (the
  /// thread's rows ty, ty + 16, ty + 32, ty + 48) as vector ty.
  void storeInterleaved(const Tile &t, Value tile, ArrayRef<Value> values) {
    for (int64_t j = 0; j < 4; ++j) {
      Value row = add(t.firstColumn, index(j));
      b.create<memref::StoreOp>(
          loc, quad({values[j], values[4 + j], values[8 + j], values[12 + j]}),
          tile, ValueRange{row, interleavedColumn(row, t.ty)});
    }
  }
  /// `body(r, c)` for each element (r, c) of a kTiledRows x 4 kTiledSide
  /// tile, the block's consecutive threads on consecutive columns of a
  /// row (coalesced accesses to the rows of a buffer).
  void forEachTileElement(const Tile &t,
                          function_ref<void(Value, Value)> body) {
    int64_t columns = 4 * kTiledSide;
    loop(t.thread, index(kTiledRows * columns), index(kTiledSide * kTiledSide),
         {}, [&](Value e, ValueRange) {
           body(b.create<arith::DivUIOp>(loc, e, index(columns)),
                b.create<arith::RemUIOp>(loc, e, index(columns)));
           return SmallVector<Value>{};
         });
  }
  /// Element c mod 4 of tile[r][c / 4], a tile of vectors of four floats
  /// read one float at a time (selects: an extract at an index known only
  /// at run time would go through local memory).
  Value tileElement(Value tile, Value r, Value c) {
    Value vector = b.create<memref::LoadOp>(
        loc, tile, ValueRange{r, b.create<arith::DivUIOp>(loc, c, index(4))});
    Value which = b.create<arith::RemUIOp>(loc, c, index(4));
    Value x = element(vector, 3);
    for (int64_t k = 2; k >= 0; --k)
      x = b.create<arith::SelectOp>(loc, equal(which, index(k)),
                                    element(vector, k), x);
    return x;
  }
  /// tile[row i][tx] = values 4 i .. 4 i + 3: the thread's 4 x 4 tile in
  /// rows of vectors.
  void storeQuads(const Tile &t, Value tile, ArrayRef<Value> values) {
    for (int64_t i = 0; i < 4; ++i)
      b.create<memref::StoreOp>(loc, quad(values.slice(4 * i, 4)), tile,
                                ValueRange{t.localRow[i], t.tx});
  }
  /// The thread's 4 x 4 tile times `factor` into its rows (below `limit`)
  /// and columns of this block's batch entry of `buffer`.
  void storeRows(const Tile &t, Value buffer, ArrayRef<Value> values,
                 double factor, int64_t limit) {
    Value factorF = factor != 1.0 ? f32(factor) : Value();
    for (int64_t i = 0; i < 4; ++i)
      when(less(t.row[i], index(limit)), [&] {
        for (int64_t j = 0; j < 4; ++j) {
          Value x = values[4 * i + j];
          if (factorF)
            x = b.create<arith::MulFOp>(loc, x, factorF);
          b.create<memref::StoreOp>(
              loc, x, buffer,
              at(buffer, {t.row[i], add(t.firstColumn, index(j))}));
        }
      });
  }
  /// Copies rows first, first + 1, ... of this block's batch entry of
  /// `source` ([L..., rows, width] or [L..., rows]) into `target` ([tile,
  /// width] or [tile]), zeros for rows from `limit` on; the block's
  /// `threads` threads take neighbouring elements.
  void stage(Value source, Value target, Value first, int64_t limit,
             Value thread, int64_t threads) {
    auto targetType = cast<MemRefType>(target.getType());
    bool rowsOnly = targetType.getRank() == 1;
    int64_t width =
        rowsOnly ? 1 : cast<MemRefType>(source.getType()).getShape().back();
    if (width == 0)
      return;
    Value widthV = index(width);
    Value zeroF = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0.0));
    loop(thread, index(targetType.getDimSize(0) * width), index(threads), {},
         [&](Value element, ValueRange) {
           Value r = b.create<arith::DivUIOp>(loc, element, widthV);
           Value c = b.create<arith::RemUIOp>(loc, element, widthV);
           Value k = add(first, r);
           SmallVector<Value> inner{k}, tileIndex{r};
           if (!rowsOnly) {
             inner.push_back(c);
             tileIndex.push_back(c);
           }
           auto inside = b.create<scf::IfOp>(loc, b.getF32Type(),
                                             less(k, index(limit)), true);
           {
             OpBuilder::InsertionGuard guard(b);
             b.setInsertionPointToStart(&inside.getThenRegion().front());
             b.create<scf::YieldOp>(
                 loc, b.create<memref::LoadOp>(loc, source, at(source, inner))
                          .getResult());
             b.setInsertionPointToStart(&inside.getElseRegion().front());
             b.create<scf::YieldOp>(loc, zeroF);
           }
           b.create<memref::StoreOp>(loc, inside.getResult(0), target,
                                     tileIndex);
           return SmallVector<Value>{};
         });
  }
  /// The 32-bit word of two halves (f16 or bf16) an mma operand holds,
  /// `low` in its low bits.
  Value packHalves(Value low, Value high) {
    auto bits = [&](Value x) -> Value {
      return b.create<arith::ExtUIOp>(
          loc, b.getI32Type(),
          b.create<arith::BitcastOp>(loc, b.getI16Type(), x));
    };
    return b.create<arith::OrIOp>(
        loc, bits(low),
        b.create<arith::ShLIOp>(loc, bits(high),
                                b.create<arith::ConstantIntOp>(loc, 16, 32)));
  }
  /// An f32 x as the sum of two TF32 words, big + small: each is the
  /// value rounded to TF32's 10 bits of significand (to nearest, ties away
  /// from zero, as cvt.rna.tf32.f32), big that of x and small that of x -
  /// big, exact in f32. Products of such sums but small * small are x y to
  /// within about 2^-21 of it, f32's accuracy where a TF32 product's is
  /// 2^-10 (CUTLASS's 3xTF32). The rounding adds half of TF32's last place
  /// to the bits; big then clears the 13 bits below it, which x - big
  /// needs, but small keeps them: the tensor cores ignore them, so that
  /// small is the same TF32 value for one instruction less (per word of
  /// every operand, most of the 3xTF32 kernels' integer work).
  /// An x whose big part is infinite (x infinite, or within half a TF32
  /// place of f32's largest, which rounds to infinity) is its small part
  /// alone, big 0 and small x rounded: x - big would be NaN, and with x
  /// in big and 0 in small, the other operand's small part times x (0
  /// times inf, or a small part of the other sign than its big one) would
  /// make NaN of the product's +-inf. This way the product of a finite y
  /// and an infinite x is y_big x, +-inf as in f32 (a product of two
  /// infinite values is NaN). A caller that knows x `finite` (or NaN)
  /// leaves the test out; a NaN stays NaN.
  std::pair<Value, Value> splitTF32(Value x, bool finite = false) {
    Type i32 = b.getI32Type(), f32Type = b.getF32Type();
    auto halfUp = [&](Value value) -> Value {
      return b.create<arith::AddIOp>(
          loc, b.create<arith::BitcastOp>(loc, i32, value),
          i32Constant(0x1000));
    };
    Value big =
        b.create<arith::AndIOp>(loc, halfUp(x), i32Constant(0xFFFFE000));
    if (!finite) {
      Value infinite = b.create<arith::CmpFOp>(
          loc, arith::CmpFPredicate::OEQ,
          b.create<math::AbsFOp>(loc,
                                 b.create<arith::BitcastOp>(loc, f32Type, big)),
          f32(std::numeric_limits<double>::infinity()));
      big = b.create<arith::SelectOp>(loc, infinite, i32Constant(0), big);
    }
    Value small = halfUp(b.create<arith::SubFOp>(
        loc, x, b.create<arith::BitcastOp>(loc, f32Type, big)));
    return {big, small};
  }
  Value i32Constant(int64_t value) {
    return b.create<arith::ConstantIntOp>(loc, value, 32);
  }
  /// The split words of f32 values: the big parts, then the small ones
  /// (splitTF32, `finite` where no value is infinite).
  SmallVector<Value, 4> splitWords(ArrayRef<Value> values,
                                   bool finite = false) {
    SmallVector<Value, 4> big, small;
    for (Value x : values) {
      auto [bigWord, smallWord] = splitTF32(x, finite);
      big.push_back(bigWord);
      small.push_back(smallWord);
    }
    llvm::append_range(big, small);
    return big;
  }
  /// D = C + A B on tensor cores for one warp (TensorCoreMma.h): `left`
  /// the four words of the lane's share of A, `right` the two of B, `acc`
  /// its four accumulators; halves of type `element`. For f32, `left` is
  /// eight words, the big and the small TF32 parts of four values
  /// (splitTF32), `right` two values' bits (split here) or their four
  /// split words (big, then small: staged split, storeSplit), and D = C +
  /// A_big B_small + A_small B_big + A_big B_big, three m16n8k8 products
  /// (3xTF32, the small terms first).
  SmallVector<Value> mma(Type element, ArrayRef<Value> left,
                         ArrayRef<Value> right, ArrayRef<Value> acc) {
    if (element.isF32()) {
      assert(left.size() == 8 && "the big and the small parts of A");
      SmallVector<Value, 2> rightBig, rightSmall;
      if (right.size() == 4) {
        rightBig.assign(right.begin(), right.begin() + 2);
        rightSmall.assign(right.begin() + 2, right.end());
      } else {
        for (Value word : right) {
          auto [big, small] =
              splitTF32(b.create<arith::BitcastOp>(loc, b.getF32Type(), word));
          rightBig.push_back(big);
          rightSmall.push_back(small);
        }
      }
      ArrayRef<Value> leftBig = left.take_front(4),
                      leftSmall = left.drop_front(4);
      SmallVector<Value> d(acc.begin(), acc.end());
      d = mmaCall(mlir::kiln::kMmaTF32, leftBig, rightSmall, d);
      d = mmaCall(mlir::kiln::kMmaTF32, leftSmall, rightBig, d);
      return mmaCall(mlir::kiln::kMmaTF32, leftBig, rightBig, d);
    }
    SmallVector<Value> operands;
    for (Value word : llvm::concat<const Value>(left, right))
      operands.push_back(
          element.isBF16()
              ? word
              : b.create<LLVM::BitcastOp>(
                    loc, VectorType::get({2}, b.getF16Type()), word));
    return mmaCall(element.isBF16() ? mlir::kiln::kMmaBF16
                                    : mlir::kiln::kMmaF16,
                   operands, {}, acc);
  }
  /// The intrinsic `name` on A's words `left`, B's `right` and the
  /// accumulators `acc`: the four floats of D.
  SmallVector<Value> mmaCall(StringRef name, ArrayRef<Value> left,
                             ArrayRef<Value> right, ArrayRef<Value> acc) {
    SmallVector<Value> operands(left.begin(), left.end());
    llvm::append_range(operands, right);
    llvm::append_range(operands, acc);
    Type f32 = b.getF32Type();
    auto product = b.create<LLVM::CallIntrinsicOp>(
        loc,
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32}),
        name, operands);
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(b.create<LLVM::ExtractValueOp>(loc, product.getResults(),
                                                 ArrayRef<int64_t>{i}));
    return d;
  }
  /// A thread of a tensor-core kernel: its warp, and in the warp its group
  /// g = lane / 4 and its place t = lane % 4 in the group, by which the
  /// fragments are laid out (TensorCoreMma.h).
  struct MmaLane {
    Value thread, warp, g, t;
  };
  MmaLane mmaLane(gpu::LaunchOp launch) {
    MmaLane l;
    l.thread = launch.getThreadIds().x;
    Value lane = b.create<arith::RemUIOp>(loc, l.thread, index(32));
    l.warp = b.create<arith::DivUIOp>(loc, l.thread, index(32));
    l.g = b.create<arith::DivUIOp>(loc, lane, index(4));
    l.t = b.create<arith::RemUIOp>(loc, lane, index(4));
    return l;
  }
  /// Where word c of row r of a staged tile of `width` words a row is
  /// kept, so that the eight rows 8 n + g a warp's groups read at once fall
  /// in different banks: c's bits 2..4 xor r mod 8 where rows are a
  /// multiple of 32 words (each starts at bank 0), bits 2..3 xor (r / 2)
  /// mod 4 where they are an odd multiple of 16 (rows start at banks 0 and
  /// 16 in turn).
  Value swizzledWord(int64_t width, Value r, Value c) {
    auto xorOf = [&](Value x, Value y) -> Value {
      return b.create<arith::XOrIOp>(loc, x, y);
    };
    if (width % 32 == 0)
      return xorOf(c,
                   mul(b.create<arith::RemUIOp>(loc, r, index(8)), index(4)));
    if (width % 16 == 0)
      return xorOf(
          c, mul(b.create<arith::RemUIOp>(
                     loc, b.create<arith::DivUIOp>(loc, r, index(2)), index(4)),
                 index(4)));
    return c;
  }
  /// A lane's two words of the B operand of fragment `n` (columns 8 n ..
  /// 8 n + 7) of the rows from `firstRow` (a multiple of 8; 0 without):
  /// words 8 chunk + t and 8 chunk + 4 + t of row firstRow + 8 n + g of a
  /// staged tile.
  /// With `smallTile` (f32 staged split, storeSplit), the two words of
  /// `tile` (the big TF32 parts) and then the same two of `smallTile`.
  SmallVector<Value, 4> rightWords(const MmaLane &l, Value tile, int64_t n,
                                   int64_t chunk, Value firstRow = {},
                                   Value smallTile = {}) {
    Value row = firstRow ? add(firstRow, l.g) : l.g;
    SmallVector<Value, 4> words;
    for (Value from : {tile, smallTile}) {
      if (!from)
        continue;
      for (int64_t w = 0; w < 2; ++w)
        words.push_back(loadStaged(from, row, l.t, 8 * n, 8 * chunk + 4 * w));
    }
    return words;
  }
  /// The columns along which swizzledWord repeats: words c and c +
  /// period of a row are kept period words apart (1 where it keeps every
  /// word in place).
  int64_t swizzlePeriod(int64_t width) {
    return width % 32 == 0 ? 32 : width % 16 == 0 ? 16 : 1;
  }
  /// Word (r + rowsAhead, c + columnsAhead) of a staged tile, swizzled,
  /// where rowsAhead is a multiple of 8 and c plus columnsAhead modulo the
  /// swizzle's period stays within a period: swizzledWord keeps it at
  /// the address of word (r, c + columnsAhead mod period) plus a
  /// constant, which the load takes as its offset. A lane then computes
  /// an address for each column of a period its reads start from, not
  /// one for each read: every address of a lane is the same in each tile
  /// of a loop, and where each read had its own, LLVM kept them all in
  /// registers from before the loop (ptxas spilled 132 bytes of a bf16
  /// gradient at D = 64 for them). kiln-cuda-check-launches follows the
  /// address back to the tile, as it follows a view.
  Value loadStaged(Value tile, Value r, Value c, int64_t rowsAhead,
                   int64_t columnsAhead) {
    return b.create<LLVM::LoadOp>(
        loc, b.getI32Type(), stagedAddress(tile, r, c, rowsAhead, columnsAhead),
        /*alignment=*/4);
  }
  /// Stores `word` where loadStaged reads it, at an address shared in the
  /// same way.
  void storeStaged(Value word, Value tile, Value r, Value c, int64_t rowsAhead,
                   int64_t columnsAhead) {
    b.create<LLVM::StoreOp>(loc, word,
                            stagedAddress(tile, r, c, rowsAhead, columnsAhead),
                            /*alignment=*/4);
  }
  /// The address of loadStaged's word.
  Value stagedAddress(Value tile, Value r, Value c, int64_t rowsAhead,
                      int64_t columnsAhead) {
    auto type = cast<MemRefType>(tile.getType());
    int64_t width = type.getDimSize(1);
    int64_t period = swizzlePeriod(width);
    // A tile's rows may start further into its buffer (splitParts' small
    // part): the offset joins the load's constant.
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    bool rows = succeeded(getStridesAndOffset(type, strides, offset)) &&
                strides == SmallVector<int64_t>{width, 1} &&
                !ShapedType::isDynamic(offset);
    assert(type.getElementType().isInteger(32) && rows && "a tile of words");
    (void)rows;
    assert(rowsAhead % 8 == 0 && "rows of the swizzle's period");
    int64_t inPeriod = columnsAhead % period;
    Value word = add(mul(r, index(width)),
                     swizzledWord(width, r, add(c, index(inPeriod))));
    Value address =
        add(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, tile),
            mul(word, index(4)));
    Type i32 = b.getI32Type();
    auto shared = LLVM::LLVMPointerType::get(b.getContext(), /*shared=*/3);
    return b.create<LLVM::GEPOp>(
        loc, shared, i32,
        b.create<LLVM::IntToPtrOp>(
            loc, shared,
            b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), address)),
        ArrayRef<LLVM::GEPArg>{
            int32_t(offset + rowsAhead * width + columnsAhead - inPeriod)});
  }
  /// The two parts of a tile staged split (storeSplit) in one workgroup
  /// buffer of twice its rows: the big TF32 words in the first half, the
  /// small ones in the second, as views. A lane then reads a small word at
  /// the address of its big one plus a constant (loadStaged), where two
  /// buffers took an address each, every one a register that LLVM keeps
  /// across the tile loop. The rows of a half are a multiple of 8, so that
  /// both are swizzled alike.
  std::pair<Value, Value> splitParts(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    int64_t rows = type.getDimSize(0) / 2, width = type.getDimSize(1);
    assert(rows % 8 == 0 && "halves of the swizzle's period");
    auto part = [&](int64_t first) -> Value {
      return b.create<memref::SubViewOp>(
          loc, buffer, ArrayRef<int64_t>{first, 0},
          ArrayRef<int64_t>{rows, width}, ArrayRef<int64_t>{1, 1});
    };
    return {part(0), part(rows)};
  }
  /// The buffer splitParts takes for a tile of `type`: twice its rows.
  MemRefType splitBufferType(MemRefType type) {
    return workgroupType({2 * type.getDimSize(0), type.getDimSize(1)},
                         type.getElementType());
  }
  /// Whether rows of `source` may be read 16 bytes at a time where the
  /// buffer itself starts at a 16-byte boundary: a static layout whose
  /// offset and outer strides are multiples of 16 bytes, its rows
  /// contiguous (the callers read chunks of 16 bytes from columns that are
  /// multiples of such chunks).
  bool alignable(MemRefType type) {
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(getStridesAndOffset(type, strides, offset)) ||
        ShapedType::isDynamic(offset) ||
        offset * elementBytes % kAlignedBytes != 0 || strides.back() != 1)
      return false;
    return llvm::all_of(ArrayRef(strides).drop_back(), [&](int64_t stride) {
      return !ShapedType::isDynamic(stride) &&
             stride * elementBytes % kAlignedBytes == 0;
    });
  }
  /// Runs `stage(aligned)`, which reads rows of `source` in chunks of 16
  /// bytes (readChunk), twice over: with aligned = true where the buffer
  /// starts at a 16-byte boundary, which every chunk then does, and with
  /// false elsewhere. The buffers a program allocates are aligned; a
  /// caller's view of a larger array may not be.
  void whereAligned(Value source, function_ref<void(bool)> stage) {
    if (!alignable(cast<MemRefType>(source.getType()))) {
      stage(false);
      return;
    }
    Value start = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, source);
    auto ifOp = b.create<scf::IfOp>(
        loc,
        equal(b.create<arith::RemUIOp>(loc, start, index(kAlignedBytes)), zero),
        /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    stage(true);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    stage(false);
  }
  /// Columns column .. column + n - 1 (16 bytes) of row `row` of this
  /// block's batch entry of `source` as a vector, zeros where row >= rows:
  /// a read that stays in bounds without a branch. Where `aligned`
  /// (whereAligned), one load of 16 bytes that says so, in the global
  /// address space (ld.global.v4 on a GPU). Elsewhere a vector.load, which
  /// LLVM reads an element at a time, knowing no more alignment than an
  /// element's.
  Value readChunk(bool aligned, Value source, Value row, int64_t rows,
                  Value column, int64_t n) {
    auto type = cast<MemRefType>(source.getType());
    auto chunkType = VectorType::get({n}, type.getElementType());
    assert(n * type.getElementTypeBitWidth() == 8 * kAlignedBytes &&
           "a chunk of 16 bytes");
    SmallVector<Value> indices = at(
        source, {b.create<arith::MinSIOp>(loc, row, index(rows - 1)), column});
    Value chunk;
    if (aligned) {
      SmallVector<int64_t> strides;
      int64_t offset;
      (void)getStridesAndOffset(type, strides, offset);
      Value element = index(offset);
      for (auto [i, stride] : llvm::enumerate(strides))
        element = add(element, mul(indices[i], index(stride)));
      Value address =
          add(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, source),
              mul(element, index(type.getElementTypeBitWidth() / 8)));
      // A generic pointer cast to the global address space (cvta.to.global;
      // nothing on the host).
      Value pointer = b.create<LLVM::AddrSpaceCastOp>(
          loc, LLVM::LLVMPointerType::get(b.getContext(), /*global=*/1),
          b.create<LLVM::IntToPtrOp>(
              loc, LLVM::LLVMPointerType::get(b.getContext()),
              b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), address)));
      chunk = b.create<LLVM::LoadOp>(loc, chunkType, pointer, kAlignedBytes);
    } else {
      chunk = b.create<vector::LoadOp>(loc, chunkType, source, indices);
    }
    return b.create<arith::SelectOp>(
        loc, less(row, index(rows)), chunk,
        b.create<arith::ConstantOp>(loc, b.getZeroAttr(chunkType)));
  }
  /// A vector of halves as words: word w holds halves 2w (low bits) and
  /// 2w + 1, as packHalves makes them; a vector of f32 as their bits.
  Value wordsOf(Value pairs) {
    auto type = cast<VectorType>(pairs.getType());
    int64_t n = type.getNumElements() * type.getElementTypeBitWidth() / 32;
    return b.create<vector::BitCastOp>(
        loc, VectorType::get({n}, b.getI32Type()), pairs);
  }
  /// The values of a tensor-core kernel's element type one word holds: two
  /// halves, or one f32.
  static int64_t perWord(Type element) { return element.isF32() ? 1 : 2; }
  /// Word w of wordsOf's vector.
  Value wordOf(Value words, int64_t w) {
    return b.create<vector::ExtractOp>(loc, words, ArrayRef<int64_t>{w});
  }
  /// tile[r][c] (swizzled) = columns 2c and 2c + 1 of row first + r of
  /// this block's batch entry of `source` as one word, zeros from row
  /// `limit` on: rows as B operands whose k runs along the columns (f32:
  /// column c's bits). A thread stages 4 words at a time, which the
  /// swizzle keeps together: one 16-byte read and one 16-byte store where
  /// `source` is aligned (whereAligned). The eight threads that store at
  /// once store a row's eight chunks, in different banks. A tile wider than
  /// `source` (mmaHeadDim) holds zeros past its columns.
  void stagePairs(Value source, Value first, int64_t limit, Value tile,
                  Value thread, int64_t threads, Value smallTile = {}) {
    auto type = cast<MemRefType>(tile.getType());
    int64_t width = type.getDimSize(1);
    assert(width % 4 == 0 && "rows of chunks of four words");
    int64_t chunks = width / 4;
    auto sourceType = cast<MemRefType>(source.getType());
    int64_t values = perWord(sourceType.getElementType());
    int64_t columns = sourceType.getShape().back();
    assert(columns % (4 * values) == 0 && columns <= width * values &&
           "whole chunks of the source's columns");
    whereAligned(source, [&](bool aligned) {
      loop(thread, index(type.getDimSize(0) * chunks), index(threads), {},
           [&](Value e, ValueRange) {
             Value r = b.create<arith::DivUIOp>(loc, e, index(chunks));
             Value c =
                 mul(b.create<arith::RemUIOp>(loc, e, index(chunks)), index(4));
             Value column = mul(c, index(values));
             // Past the source's columns: a chunk of its own row read
             // (in bounds) and zeros stored.
             Value inside;
             if (columns < width * values) {
               inside = less(column, index(columns));
               column = b.create<arith::MinSIOp>(loc, column,
                                                 index(columns - 4 * values));
             }
             Value pairs = readChunk(aligned, source, add(first, r), limit,
                                     column, 4 * values);
             if (inside)
               pairs = b.create<arith::SelectOp>(
                   loc, inside, pairs,
                   b.create<arith::ConstantOp>(loc,
                                               b.getZeroAttr(pairs.getType())));
             Value words = wordsOf(pairs);
             Value placed = swizzledWord(width, r, c);
             for (int64_t w = 0; w < 4; ++w)
               storeSplit(wordOf(words, w), tile, smallTile,
                          {r, add(placed, index(w))});
             return SmallVector<Value>{};
           });
    });
  }
  /// tile[d][c] (swizzled) = column d of rows first + 2c and first + 2c + 1
  /// of `source` as one word, zeros from row `limit` on: rows as B
  /// operands whose k runs along the rows. A thread reads 8 columns of its
  /// two rows (two 16-byte reads where `source` is aligned) and stores
  /// their 8 words; the threads that store at once take consecutive pairs
  /// of rows, which the swizzle puts in different banks.
  void stagePairsTransposed(Value source, Value first, int64_t limit,
                            Value tile, Value thread, int64_t threads) {
    auto type = cast<MemRefType>(tile.getType());
    int64_t width = type.getDimSize(1);
    assert(type.getDimSize(0) % 8 == 0 && "rows of chunks of eight columns");
    whereAligned(source, [&](bool aligned) {
      loop(thread, index(type.getNumElements() / 8), index(threads), {},
           [&](Value e, ValueRange) {
             Value c = b.create<arith::RemUIOp>(loc, e, index(width));
             Value d0 =
                 mul(b.create<arith::DivUIOp>(loc, e, index(width)), index(8));
             Value row = add(first, mul(c, index(2)));
             Value upper = readChunk(aligned, source, row, limit, d0, 8);
             Value lower =
                 readChunk(aligned, source, add(row, one), limit, d0, 8);
             // Halves j of the two rows side by side: word j of the pairs.
             SmallVector<int64_t> interleave;
             for (int64_t j = 0; j < 8; ++j)
               interleave.append({j, 8 + j});
             storeDown(tile,
                       wordsOf(b.create<vector::ShuffleOp>(loc, upper, lower,
                                                           interleave)),
                       d0, c);
             return SmallVector<Value>{};
           });
    });
  }
  /// Word j of the vector `words` into row first + j of a staged tile, at
  /// column `column` (swizzled): a transposed staging's column of words.
  void storeDown(Value tile, Value words, Value first, Value column,
                 Value smallTile = {}) {
    int64_t width = cast<MemRefType>(tile.getType()).getDimSize(1);
    int64_t n = cast<VectorType>(words.getType()).getNumElements();
    for (int64_t j = 0; j < n; ++j) {
      Value row = add(first, index(j));
      storeSplit(wordOf(words, j), tile, smallTile,
                 {row, swizzledWord(width, row, column)});
    }
  }
  /// tile[indices] = word, or with `smallTile` the f32 word's split
  /// (splitTF32): its big part into `tile` and its small part into
  /// `smallTile`, so that the warps that read it as a B operand do not
  /// each split it again.
  void storeSplit(Value word, Value tile, Value smallTile,
                  ArrayRef<Value> indices) {
    if (!smallTile) {
      b.create<memref::StoreOp>(loc, word, tile, indices);
      return;
    }
    auto [big, small] =
        splitTF32(b.create<arith::BitcastOp>(loc, b.getF32Type(), word));
    b.create<memref::StoreOp>(loc, big, tile, indices);
    b.create<memref::StoreOp>(loc, small, smallTile, indices);
  }
  /// The word of key j of a tile where an f32 tile is staged as B operands
  /// of k along its keys (stageTransposedKeys): within each 8 keys, key 2i
  /// at word i and key 2i + 1 at word i + 4, the k order in which
  /// fragmentWords passes the weights.
  Value permutedKey(Value j) {
    Value chunk = mul(b.create<arith::DivUIOp>(loc, j, index(8)), index(8));
    Value inChunk = b.create<arith::RemUIOp>(loc, j, index(8));
    return add(chunk, add(b.create<arith::DivUIOp>(loc, inChunk, index(2)),
                          mul(b.create<arith::RemUIOp>(loc, inChunk, index(2)),
                              index(4))));
  }
  /// The f32 counterpart of stagePairsTransposed: tile[d][permutedKey(c)]
  /// (swizzled) = column d of row first + c of `source`'s bits, zeros from
  /// row `limit` on. A thread reads 4 columns of a row (16 bytes where
  /// `source` is aligned) and stores their 4 words; the threads that store
  /// at once take consecutive rows, 32 words of one row of the tile, which
  /// the swizzle keeps in different banks.
  void stageTransposedKeys(Value source, Value first, int64_t limit, Value tile,
                           Value thread, int64_t threads,
                           Value smallTile = {}) {
    auto type = cast<MemRefType>(tile.getType());
    int64_t width = type.getDimSize(1);
    assert(type.getDimSize(0) % 4 == 0 && width % 8 == 0 &&
           "rows of chunks of four columns, keys in steps of 8");
    whereAligned(source, [&](bool aligned) {
      loop(thread, index(type.getNumElements() / 4), index(threads), {},
           [&](Value e, ValueRange) {
             Value c = b.create<arith::RemUIOp>(loc, e, index(width));
             Value d0 =
                 mul(b.create<arith::DivUIOp>(loc, e, index(width)), index(4));
             storeDown(tile,
                       wordsOf(readChunk(aligned, source, add(first, c), limit,
                                         d0, 4)),
                       d0, permutedKey(c), smallTile);
             return SmallVector<Value>{};
           });
    });
  }
  /// Rows first, first + 1, ... of `source` staged transposed as B
  /// operands whose k runs along them: stagePairsTransposed for halves,
  /// stageTransposedKeys for f32.
  void stageTransposed(Value source, Value first, int64_t limit, Value tile,
                       Value thread, int64_t threads, Value smallTile = {}) {
    if (cast<MemRefType>(source.getType()).getElementType().isF32())
      stageTransposedKeys(source, first, limit, tile, thread, threads,
                          smallTile);
    else
      stagePairsTransposed(source, first, limit, tile, thread, threads);
  }
  /// A lane's A operands of rows `rows` (g and g + 8 of its warp's 16) of
  /// this block's batch entry of `source`, read once: the four words of
  /// each step of 16 columns (f32: of 8 columns, split, splitWords). Halves
  /// in steps of 8 columns take a last step whose upper 8 are zeros
  /// (mmaHeadDim).
  SmallVector<SmallVector<Value, 4>> leftWords(const MmaLane &l, Value source,
                                               ArrayRef<Value> rows,
                                               bool split = true) {
    int64_t width = cast<MemRefType>(source.getType()).getShape().back();
    auto load = [&](Value row, Value column) -> Value {
      return b.create<memref::LoadOp>(loc, source, at(source, {row, column}));
    };
    SmallVector<SmallVector<Value, 4>> steps;
    if (cast<MemRefType>(source.getType()).getElementType().isF32()) {
      for (int64_t kc = 0; kc < width / 8; ++kc) {
        SmallVector<Value, 4> values;
        for (int64_t w = 0; w < 4; ++w)
          values.push_back(
              load(rows[w % 2], add(l.t, index(8 * kc + 4 * (w / 2)))));
        if (split) {
          steps.push_back(splitWords(values));
          continue;
        }
        for (Value &x : values)
          x = b.create<arith::BitcastOp>(loc, b.getI32Type(), x);
        steps.push_back(values);
      }
      return steps;
    }
    for (int64_t kc = 0, kcs = llvm::divideCeil(width, 16); kc < kcs; ++kc) {
      SmallVector<Value, 4> words;
      for (int64_t w = 0; w < 4; ++w) {
        if (16 * kc + 8 * (w / 2) >= width) {
          words.push_back(i32Constant(0));
          continue;
        }
        Value column = add(mul(l.t, index(2)), index(16 * kc + 8 * (w / 2)));
        words.push_back(packHalves(load(rows[w % 2], column),
                                   load(rows[w % 2], add(column, one))));
      }
      steps.push_back(words);
    }
    return steps;
  }
  /// A lane's A operand of the 16 rows from `firstRow` of a tile staged
  /// as pairs of columns (swizzled), step `kc` (columns 16 kc .. 16 kc +
  /// 15): words 8 kc + t and 8 kc + 4 + t of rows g and g + 8.
  SmallVector<Value, 4> stagedLeftWords(const MmaLane &l, Value tile,
                                        Value firstRow, int64_t kc) {
    Value row = add(firstRow, l.g);
    SmallVector<Value, 4> words;
    for (int64_t w = 0; w < 4; ++w)
      words.push_back(
          loadStaged(tile, row, l.t, 8 * (w % 2), 8 * kc + 4 * (w / 2)));
    return words;
  }
  /// Stores a warp's 16 x (8 x fragments) D fragments (rows its own,
  /// columns the other side's), rounded to `element`, transposed as pairs
  /// of rows into `tile` (swizzled): tile[column][8 warp + r / 2] holds
  /// rows r and r + 1 of the column, the A operand of the transpose's
  /// product along the own rows. Lanes g and g + 1 swap halves with one
  /// shuffle per fragment, the even lane then storing its row pair's word
  /// of column 8 n + 2 t, the odd lane that of column 8 n + 2 t + 1.
  void storePairsTransposed(const MmaLane &l, Value tile,
                            ArrayRef<Value> fragments, Type element) {
    int64_t width = cast<MemRefType>(tile.getType()).getDimSize(1);
    Type i32 = b.getI32Type();
    auto bits = [&](Value x) -> Value {
      return b.create<arith::ExtUIOp>(
          loc, i32,
          b.create<arith::BitcastOp>(
              loc, b.getI16Type(), b.create<arith::TruncFOp>(loc, element, x)));
    };
    auto select = [&](Value c, Value x, Value y) -> Value {
      return b.create<arith::SelectOp>(loc, c, x, y);
    };
    Value odd = equal(b.create<arith::RemUIOp>(loc, l.g, index(2)), one);
    Value pairColumn = add(mul(l.warp, index(8)),
                           b.create<arith::DivUIOp>(loc, l.g, index(2)));
    Value row0 = add(mul(l.t, index(2)), select(odd, one, zero));
    for (int64_t n = 0; n < int64_t(fragments.size()) / 4; ++n) {
      // Halves h = 0 and 1 (rows g and g + 8): each lane's bits of columns
      // 2 t and 2 t + 1, and the one its partner needs in one word.
      Value own[2][2];
      for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 2; ++j)
          own[h][j] = bits(fragments[4 * n + 2 * h + j]);
      Value sent = b.create<arith::OrIOp>(
          loc, select(odd, own[0][0], own[0][1]),
          b.create<arith::ShLIOp>(loc, select(odd, own[1][0], own[1][1]),
                                  i32Constant(16)));
      Value got = b.create<gpu::ShuffleOp>(loc, sent, int32_t(4), int32_t(32),
                                           gpu::ShuffleMode::XOR)
                      .getShuffleResult();
      Value gotHalf[2] = {
          b.create<arith::AndIOp>(loc, got, i32Constant(0xFFFF)),
          b.create<arith::ShRUIOp>(loc, got, i32Constant(16))};
      Value row = add(row0, index(8 * n));
      for (int h = 0; h < 2; ++h) {
        Value low = select(odd, gotHalf[h], own[h][0]);
        Value high = select(odd, own[h][1], gotHalf[h]);
        Value word = b.create<arith::OrIOp>(
            loc, low, b.create<arith::ShLIOp>(loc, high, i32Constant(16)));
        Value column = add(pairColumn, index(4 * h));
        b.create<memref::StoreOp>(
            loc, word, tile, ValueRange{row, swizzledWord(width, row, column)});
      }
    }
  }
  /// The f32 counterpart of storePairsTransposed, from the split words
  /// fragmentWords made of a warp's D fragments (step n: the values of
  /// rows g and g + 8, columns 8 n + 2 t and 8 n + 2 t + 1, in the order
  /// h + 2 j, big parts then small): tile[column][permutedKey(16 warp +
  /// r)] (swizzled) holds the big part of row r of the column and
  /// smallTile the small one, in the order stageTransposedKeys stages the
  /// rows' other operand. Each lane stores its own words, no shuffle; the
  /// 32 words of a store fall in different banks.
  void storeSplitTransposed(const MmaLane &l, Value tile, Value smallTile,
                            ArrayRef<SmallVector<Value, 4>> steps) {
    Value ownRow = add(mul(l.warp, index(16)), l.g);
    // Four addresses a lane (rows 2 t + j, columns of its rows g + 8 h),
    // each fragment's 8 rows further on (storeStaged).
    for (int h = 0; h < 2; ++h) {
      Value column = permutedKey(add(ownRow, index(8 * h)));
      for (int j = 0; j < 2; ++j) {
        Value row = add(mul(l.t, index(2)), index(j));
        for (auto [n, words] : llvm::enumerate(steps)) {
          storeStaged(words[h + 2 * j], tile, row, column, 8 * n, 0);
          storeStaged(words[4 + h + 2 * j], smallTile, row, column, 8 * n, 0);
        }
      }
    }
  }
  /// dq += ds k for a key block's tile of queries from `first` (a
  /// multiple of 16, shareableQueryGrad), with atomics into `sum` (f32):
  /// ds staged transposed in `dsTile` (rows the tile's queries, pairs of
  /// the block's kMmaRows keys), the block's keys in `keyTile` (rows their
  /// dims, pairs of keys). In f32 both hold single keys in the order
  /// stageTransposedKeys keeps them (permutedKey), split: their small TF32
  /// parts in `dsSmall` and `keySmall`. The tile's slabs of 16 queries go
  /// to the warps
  /// in turn, each slab's dims split evenly between the warps that share
  /// it (all of them at 16 queries, none at kMmaRows); a warp adds its
  /// part a few fragments of 8 dims at a time, so that few accumulators
  /// live beside the loop's; ds's words are read again for each few
  /// (kept, they would take 16 registers more through the products).
  void addQueryGradShares(const MmaLane &l, Value dsTile, Value keyTile,
                          Value sum, Value first, Type element, int64_t queries,
                          int64_t headDim, Value dsSmall = {},
                          Value keySmall = {}) {
    constexpr int64_t kFragmentsAtOnce = 2;
    int64_t tile = cast<MemRefType>(dsTile.getType()).getDimSize(0);
    // A step of the products along the keys: 8 words of the tiles' rows
    // (16 keys in halves, 8 in f32).
    int64_t steps = kMmaRows / (8 * perWord(element));
    assert(shareableQueryGrad(tile, headDim) && "warps that share dq evenly");
    int64_t slabs = tile / 16, fragments = headDim / 8 / (kMmaWarps / slabs);
    Value slabStart =
        mul(b.create<arith::RemUIOp>(loc, l.warp, index(slabs)), index(16));
    // The keys' rows (dims) of the warp's first fragment.
    Value dimStart = mul(b.create<arith::DivUIOp>(loc, l.warp, index(slabs)),
                         index(8 * fragments));
    Value rows[2] = {add(first, add(slabStart, l.g)),
                     add(first, add(slabStart, add(l.g, index(8))))};
    for (int64_t n0 = 0; n0 < fragments; n0 += kFragmentsAtOnce) {
      int64_t count = std::min(kFragmentsAtOnce, fragments - n0);
      SmallVector<Value> acc(4 * count, f32(0.0));
      for (int64_t kc = 0; kc < steps; ++kc) {
        SmallVector<Value, 4> left = stagedLeftWords(l, dsTile, slabStart, kc);
        if (dsSmall)
          llvm::append_range(left, stagedLeftWords(l, dsSmall, slabStart, kc));
        for (int64_t j = 0; j < count; ++j) {
          SmallVector<Value> updated =
              mma(element, left,
                  rightWords(l, keyTile, n0 + j, kc, dimStart, keySmall),
                  ArrayRef<Value>(acc).slice(4 * j, 4));
          std::copy(updated.begin(), updated.end(), acc.begin() + 4 * j);
        }
      }
      for (int h = 0; h < 2; ++h)
        when(less(rows[h], index(queries)), [&] {
          for (int64_t j = 0; j < count; ++j)
            for (int64_t c = 0; c < 2; ++c) {
              Value column = add(
                  dimStart, add(mul(l.t, index(2)), index(8 * (n0 + j) + c)));
              b.create<memref::AtomicRMWOp>(loc, arith::AtomicRMWKind::addf,
                                            acc[4 * j + 2 * h + c], sum,
                                            at(sum, {rows[h], column}));
            }
        });
    }
  }
  /// The A operand's words, step by step, from the D fragments of a
  /// 16-row product rounded to `element`: fragments 2 kk and 2 kk + 1
  /// (columns 8 at a time) are words 0, 1 and 2, 3 of step kk (columns
  /// 16 kk .. 16 kk + 15). For f32, fragment kk is step kk, split
  /// (splitWords), its columns 2t and 2t + 1 in the places of the TF32
  /// product's k = t and t + 4: the B operand's rows must be staged in that
  /// order (stageTransposedKeys). `finite` where no fragment is infinite
  /// (splitTF32).
  SmallVector<SmallVector<Value, 4>>
  fragmentWords(ArrayRef<Value> fragments, Type element, bool finite = false) {
    SmallVector<SmallVector<Value, 4>> steps;
    if (element.isF32()) {
      for (int64_t kk = 0; kk < int64_t(fragments.size()) / 4; ++kk)
        steps.push_back(
            splitWords({fragments[4 * kk], fragments[4 * kk + 2],
                        fragments[4 * kk + 1], fragments[4 * kk + 3]},
                       finite));
      return steps;
    }
    auto rounded = [&](int64_t i) -> Value {
      return b.create<arith::TruncFOp>(loc, element, fragments[i]);
    };
    for (int64_t kk = 0; kk < int64_t(fragments.size()) / 8; ++kk) {
      SmallVector<Value, 4> words;
      for (int64_t w = 0; w < 4; ++w) {
        int64_t i = 4 * (2 * kk + w / 2) + 2 * (w % 2);
        words.push_back(packHalves(rounded(i), rounded(i + 1)));
      }
      steps.push_back(words);
    }
    return steps;
  }
  /// acc + A B for one warp, for each of several A operands on the same B
  /// (a warp's row groups): A's words `lefts[q]`, a step of 16 along k
  /// each; B the rows of `staged` (its pairs along k), one fragment of 8
  /// columns per four accumulators, read from workgroup memory once for
  /// every group's product (f32 with `stagedSmall`: B staged split, its
  /// big parts in `staged` and its small ones there). Step by step: the
  /// products of a step are independent, which a GPU overlaps and the
  /// CPU's emulation runs in one phase.
  SmallVector<SmallVector<Value>>
  mmaProducts(Type element, const MmaLane &l,
              ArrayRef<SmallVector<SmallVector<Value, 4>>> lefts, Value staged,
              SmallVector<SmallVector<Value>> accs, Value stagedSmall = {}) {
    for (int64_t step = 0; step < int64_t(lefts.front().size()); ++step) {
      // f32 words left whole (leftWords without split) are split here,
      // once per step.
      SmallVector<SmallVector<Value, 4>> stepLefts;
      for (const SmallVector<SmallVector<Value, 4>> &left : lefts) {
        stepLefts.push_back(left[step]);
        if (element.isF32() && left[step].size() == 4) {
          SmallVector<Value> values;
          for (Value word : left[step])
            values.push_back(
                b.create<arith::BitcastOp>(loc, b.getF32Type(), word));
          stepLefts.back() = splitWords(values);
        }
      }
      for (int64_t n = 0; n < int64_t(accs.front().size()) / 4; ++n) {
        SmallVector<Value, 4> right =
            rightWords(l, staged, n, step, /*firstRow=*/{}, stagedSmall);
        for (auto [left, acc] : llvm::zip(stepLefts, accs)) {
          SmallVector<Value> updated =
              mma(element, left, right, ArrayRef<Value>(acc).slice(4 * n, 4));
          std::copy(updated.begin(), updated.end(), acc.begin() + 4 * n);
        }
      }
    }
    return accs;
  }
  /// mmaProducts for one A operand.
  SmallVector<Value> mmaProduct(Type element, const MmaLane &l,
                                ArrayRef<SmallVector<Value, 4>> left,
                                Value staged, SmallVector<Value> acc,
                                Value stagedSmall = {}) {
    SmallVector<SmallVector<Value, 4>> words(left.begin(), left.end());
    return mmaProducts(element, l, {words}, staged, {acc}, stagedSmall).front();
  }
  /// Stores a warp's 16 x 8 groups fragments times `factor`, rounded to
  /// the buffer's type, into rows rows[0] (g) and rows[1] (g + 8) below
  /// `limit` of this block's batch entry of `buffer`, columns 8 n + 2 t
  /// and 8 n + 2 t + 1.
  void storeFragments(const MmaLane &l, Value buffer, ArrayRef<Value> rows,
                      int64_t limit, ArrayRef<Value> fragments, double factor) {
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    Value factorF = factor != 1.0 ? f32(factor) : Value();
    Value firstColumn = mul(l.t, index(2));
    for (int h = 0; h < 2; ++h)
      when(less(rows[h], index(limit)), [&] {
        for (int64_t n = 0; n < int64_t(fragments.size()) / 4; ++n)
          for (int64_t j = 0; j < 2; ++j) {
            Value x = fragments[4 * n + 2 * h + j];
            if (factorF)
              x = b.create<arith::MulFOp>(loc, x, factorF);
            if (element != x.getType())
              x = b.create<arith::TruncFOp>(loc, element, x);
            b.create<memref::StoreOp>(
                loc, x, buffer,
                at(buffer, {rows[h], add(firstColumn, index(8 * n + j))}));
          }
      });
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
  /// Whether the register-tiled gradient is one kernel that adds dq with
  /// atomics rather than two that each recompute p.
  bool gradientAtomics;
  /// Whether an f32 forward whose head dims fit runs on tensor cores in
  /// 3xTF32 products (fitsTheMmaKernels).
  bool f32TensorCores;
  /// The shared memory a block may have on the target, with its kernel's
  /// opt-in (maxSharedBytesPerBlock).
  int64_t sharedBytes;
  Value zero, one;
  SmallVector<Value> leadingIndices;
};

LogicalResult KernelBuilder::build(DictionaryAttr info) {
  double scale;
  bool causal;
  Value mask;
  if (failed(readCall(info, kAttentionAttr, 5, 3,
                      "expected a call on static f32, f16 or bf16 buffers: "
                      "query, key, value, the mask if any, then the result "
                      "and log-sum-exp buffers",
                      scale, causal, mask)))
    return failure();
  unsigned count = call.getNumOperands();
  Value query = call.getOperand(0), key = call.getOperand(1),
        value = call.getOperand(2);
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
  Type element = cast<MemRefType>(query.getType()).getElementType();
  bool half = !element.isF32();
  if (half) {
    if (failed(checkHalfBuffers(
            element, {key, value, out}, {lse},
            "expected query, key, value and result buffers of one element "
            "type and an f32 log-sum-exp buffer")))
      return failure();
    if (!fitsTheMmaKernels(headDim, valueDim))
      return call.emitError()
             << "the tensor-core kernel takes a head dim and a value dim "
                "that are multiples of 8 up to 128, not "
             << headDim << " and " << valueDim;
  } else if (failed(checkHeadDims(headDim, valueDim)) || failed(allF32())) {
    return failure();
  }
  int64_t batch = 1;
  for (int64_t d : leading)
    batch *= d;
  if (batch == 0 || queries == 0) {
    // Nothing to compute: the results are empty.
    call.erase();
    return success();
  }
  if (half || (f32TensorCores && fitsTheMmaKernels(headDim, valueDim))) {
    buildMma(query, key, value, mask, out, lse, scale, causal, batch, leading,
             queries, keys, headDim, valueDim);
    call.erase();
    return success();
  }
  if (fitsTheTiledKernel(headDim, valueDim)) {
    buildTiled(query, key, value, mask, out, lse, scale, causal, batch, leading,
               queries, keys, headDim);
    call.erase();
    return success();
  }
  int64_t lanes = lanesPerRow(headDim, valueDim);
  int64_t queryDims = headDim / lanes, valueDims = valueDim / lanes;
  int64_t rows = blockRows(lanes);
  int64_t threads = rows * lanes;
  int64_t tileKeys = std::max<int64_t>(
      1, std::min(keysPerTile,
                  kSharedFloats /
                      std::max<int64_t>(1, headDim + valueDim + rows)));

  Rows r = launchRows(
      queries, rows, lanes, batch, leading,
      {workgroupType({tileKeys, std::max<int64_t>(headDim, 1)}),
       workgroupType({tileKeys, std::max<int64_t>(valueDim, 1)}),
       workgroupType({rows, tileKeys})},
      causal ? Longest::Last : Longest::None, 4 * keys * (headDim + valueDim));
  Value keyTile = r.launch.getWorkgroupAttributions()[0];
  Value valueTile = r.launch.getWorkgroupAttributions()[1];
  Value scoreTile = r.launch.getWorkgroupAttributions()[2];
  Value thread = r.thread, lane = r.lane, local = r.local, row = r.row,
        readRow = r.readRow;
  Value lanesV = index(lanes);
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value zeroF = f32(0.0);
  Value keysV = index(keys), tileKeysV = index(tileKeys);

  // The dims this lane owns, and its share of the scaled query row; the
  // output accumulator starts at zero. Both live in registers (values
  // carried by the loops), never in memory.
  SmallVector<Value> queryDim = dimsOfLane(lane, lanes, queryDims);
  SmallVector<Value> valueDimOf = dimsOfLane(lane, lanes, valueDims);
  SmallVector<Value> scaledQuery = loadShare(query, readRow, queryDim, scale);
  Value tiles =
      keyTiles(r.blockStart, rows, queries, keys, tileKeys, causal);

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
        // Stage the tile's keys and values (zeros past the last key).
        stage(key, keyTile, firstKey, keys, thread, threads);
        stage(value, valueTile, firstKey, keys, thread, threads);
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
              Value dot = sumOverLanes(s, lanes);
              Value inRange = less(k, keysV);
              auto [masked, seen] =
                  maskAndSee(dot, mask, row, queries, k, keys, inRange, causal);
              s = b.create<arith::SelectOp>(loc, seen, masked, negInf);
              when(equal(lane, b.create<arith::RemUIOp>(loc, j, lanesV)),
                   [&] {
                     b.create<memref::StoreOp>(loc, s, scoreTile,
                                               ValueRange{local, j});
                   });
              return {b.create<arith::MaximumFOp>(loc, tileMax[0], s)};
            });
        b.create<gpu::BarrierOp>(loc);

        SoftmaxStep step = foldMax(runningMax, scoring.getResult(0));
        SmallVector<Value> weightInits{
            b.create<arith::MulFOp>(loc, runningSum, step.correction)};
        for (Value a : accumulators)
          weightInits.push_back(
              b.create<arith::MulFOp>(loc, a, step.correction));
        auto weighting = loop(
            zero, tileKeysV, one, weightInits,
            [&](Value j, ValueRange sums) -> SmallVector<Value> {
              Value s = b.create<memref::LoadOp>(loc, scoreTile,
                                                 ValueRange{local, j});
              Value p = softmaxWeight(s, step);
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
        SmallVector<Value> next{step.max};
        llvm::append_range(next, weighting.getResults());
        return next;
      });

  // out = acc / l and lse = m + log(l); NaN for a row that saw no finite
  // score (all masked, or no keys), as the softmax's 0 / 0.
  when(r.valid, [&] {
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
    when(equal(lane, zero),
         [&] { storeLogSumExp(lse, row, finalMax, finalSum, none, nan); });
  });
  b.create<gpu::TerminatorOp>(loc);
  call.erase();
  return success();
}

/// The forward kernel with register tiles, for head dims that
/// fitsTheTiledKernel. The block's query rows are staged once, scaled.
/// Per tile of kTiledKeys keys it stages the keys transposed (kt[d][keys
/// 4c..4c+3] as one vector) and the values; each thread sums its 4 x 4
/// scores s[i][j] = q[ty + 16 i] . k[4 tx + j] from four-float reads (four
/// query dims of a row, four keys of a dim), masks them, and folds them
/// into its rows' running maximum and sum: the 16 threads of a row are one
/// half of a warp, combined by shuffles. The weights p replace the
/// transposed keys in workgroup memory, and each thread adds p v into its
/// 4 x 4 accumulators (rows ty + 16 i, value dims 4 tx + j), four keys'
/// weights and four dims of a value row per read. A causal grid starts
/// with the blocks of the last rows, the longest, of all heads. Per
/// multiply-add it reads an eighth of a float from workgroup memory, where
/// the lanes' kernel (build) reads one.
void KernelBuilder::buildTiled(Value query, Value key, Value value, Value mask,
                               Value out, Value lse, double scale, bool causal,
                               int64_t batch, ArrayRef<int64_t> leading,
                               int64_t queries, int64_t keys, int64_t headDim) {
  Tile t = launchTiled(queries, batch, leading,
                       {headDim / 4, kTiledSide, kTiledSide},
                       causal ? Longest::Last : Longest::None,
                       4 * keys * (headDim + 4 * kTiledSide));
  Value queryTile = t.launch.getWorkgroupAttributions()[0];
  // kt[d][c] while the scores are computed, then p[row][c].
  Value sharedTile = t.launch.getWorkgroupAttributions()[1];
  Value valueTile = t.launch.getWorkgroupAttributions()[2];
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value zeroF = f32(0.0);
  SmallVector<Value> zeros(16, zeroF);

  stageRows(t, query, t.blockStart, queries, queryTile, scale);
  Value tiles =
      keyTiles(t.blockStart, kTiledRows, queries, keys, kTiledKeys, causal);
  // Carried: the rows' running maxima, their sums, the accumulators
  // (row-major, 4 x 4).
  SmallVector<Value> inits(4, negInf);
  inits.append(4, zeroF);
  inits.append(zeros);
  auto tileLoop = loop(
      zero, tiles, one, inits,
      [&](Value tile, ValueRange carried) -> SmallVector<Value> {
        ValueRange runningMax = carried.take_front(4);
        ValueRange runningSum = carried.slice(4, 4);
        ValueRange accumulators = carried.drop_front(8);
        Value firstKey = mul(tile, index(kTiledKeys));
        stageTransposed(t, key, firstKey, keys, sharedTile, headDim);
        stageRows(t, value, firstKey, keys, valueTile, 1.0);
        b.create<gpu::BarrierOp>(loc);
        SmallVector<Value> scores =
            tileProduct(t, queryTile, sharedTile, headDim / 4,
                        Layout::SwizzledRight, zeros);
        // Every thread is done with kt before p replaces it.
        b.create<gpu::BarrierOp>(loc);

        SmallVector<Value> next(8), scaled(16), weights(16);
        for (int64_t i = 0; i < 4; ++i) {
          Value row = t.row[i];
          SmallVector<Value> s(4);
          Value tileMax = negInf;
          for (int64_t j = 0; j < 4; ++j) {
            Value k = add(firstKey, add(t.firstColumn, index(j)));
            auto [x, seen] = maskAndSee(scores[4 * i + j], mask, row, queries,
                                        k, keys, less(k, index(keys)), causal);
            s[j] = b.create<arith::SelectOp>(loc, seen, x, negInf);
            tileMax = b.create<arith::MaximumFOp>(loc, tileMax, s[j]);
          }
          SoftmaxStep step =
              foldMax(runningMax[i], maxOverLanes(tileMax, kTiledSide));
          Value rowSum = zeroF;
          for (int64_t j = 0; j < 4; ++j) {
            Value p = softmaxWeight(s[j], step);
            weights[4 * i + j] = p;
            rowSum = b.create<arith::AddFOp>(loc, rowSum, p);
          }
          next[i] = step.max;
          next[4 + i] = b.create<arith::AddFOp>(
              loc, b.create<arith::MulFOp>(loc, runningSum[i], step.correction),
              sumOverLanes(rowSum, kTiledSide));
          for (int64_t j = 0; j < 4; ++j)
            scaled[4 * i + j] = b.create<arith::MulFOp>(
                loc, accumulators[4 * i + j], step.correction);
        }
        storeQuads(t, sharedTile, weights);
        b.create<gpu::BarrierOp>(loc);
        // acc += p v, four keys per step.
        llvm::append_range(next,
                           tileProduct(t, sharedTile, valueTile, kTiledKeys / 4,
                                       Layout::Plain, scaled));
        // Every thread is done with p and the values before the next tile
        // is staged.
        b.create<gpu::BarrierOp>(loc);
        return next;
      });

  // out = acc / l and lse = m + log(l); NaN for a row that saw no finite
  // score (all masked, or no keys), as the softmax's 0 / 0.
  Value nan = f32(std::numeric_limits<double>::quiet_NaN());
  for (int64_t i = 0; i < 4; ++i) {
    Value row = t.row[i];
    when(less(row, index(queries)), [&] {
      Value finalMax = tileLoop.getResult(i);
      Value finalSum = tileLoop.getResult(4 + i);
      Value none = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                           finalMax, negInf);
      for (int64_t j = 0; j < 4; ++j) {
        Value o = b.create<arith::SelectOp>(
            loc, none, nan,
            b.create<arith::DivFOp>(loc, tileLoop.getResult(8 + 4 * i + j),
                                    finalSum));
        b.create<memref::StoreOp>(loc, o, out,
                                  at(out, {row, add(t.firstColumn, index(j))}));
      }
      when(equal(t.tx, zero),
           [&] { storeLogSumExp(lse, row, finalMax, finalSum, none, nan); });
    });
  }
  b.create<gpu::TerminatorOp>(loc);
}

/// The forward kernel on tensor cores, for f16 and bf16 (FlashAttention-2's
/// tiling, on PTX's mma.m16n8k16 with f32 accumulators, TensorCoreMma.h),
/// and for f32 on 3xTF32 products (mma.m16n8k8: words of one f32 each,
/// steps of 8 along k, the weights split rather than rounded, the values
/// staged in their fragments' order of keys, one group of rows).
/// A block has kMmaWarps warps, each owning 16 query rows; a lane holds
/// rows g and g + 8 of its warp's (g = lane / 4, t = lane % 4). The
/// warp's query rows stay in registers as A operands, read once. Per tile
/// of mmaTileKeys keys the block stages the keys as pairs of head dims
/// ([key][D / 2] words) and the values transposed as pairs of keys
/// ([Dv][keys / 2] words), both swizzled so that the eight groups of
/// a warp read different banks. Each warp then computes its 16 x
/// keys scores S = Q K^T, scaled and masked in f32, folds each row's
/// maximum over the row's four lanes (two shuffles) into its online
/// softmax, rounds the weights p to the operands' type and adds p V into
/// its 16 x Dv accumulators: the S product's D fragments are the P
/// product's A fragments, so p never leaves registers. A lane keeps its
/// share of each row's sum and the row's four lanes add theirs at the end.
/// The result is rounded once from out = acc / l; lse = m + log(l) in f32.
void KernelBuilder::buildMma(Value query, Value key, Value value, Value mask,
                             Value out, Value lse, double scale, bool causal,
                             int64_t batch, ArrayRef<int64_t> leading,
                             int64_t queries, int64_t keys, int64_t headDim,
                             int64_t valueDim) {
  Type element = cast<MemRefType>(query.getType()).getElementType();
  bool single = element.isF32();
  Type i32 = b.getI32Type();
  // The products' head dims: the key tile's past headDim are zeros
  // (stagePairs), and so are the query's A operands (leftWords).
  int64_t productDim = mmaHeadDim(headDim);
  int64_t tileKeys = mmaTileKeys(productDim, valueDim, single);
  int64_t groups = single ? 1 : mmaRowGroups(productDim, valueDim, bool(mask));
  int64_t blockRows = kMmaRows * groups;
  int64_t threads = 32 * kMmaWarps;
  int64_t values = perWord(element);
  // f32 key and value tiles staged split (stagedSplit), big parts and
  // small ones in tiles of their own: with both parts in one buffer
  // (splitParts), ptxas takes 177 registers for the causal forward at
  // D = Dv = 64 on sm_90 where it takes 168, three blocks an SM.
  bool split = stagedSplit(single, headDim, valueDim);
  SmallVector<MemRefType> tileTypes = {
      workgroupType({tileKeys, productDim / values}, i32),
      workgroupType({valueDim, tileKeys / values}, i32)};
  if (split)
    tileTypes.append({tileTypes[0], tileTypes[1]});
  Blocks blocks = launchBlocks(
      llvm::divideCeil(queries, blockRows), threads, batch, tileTypes,
      causal ? Longest::Last : Longest::None,
      keys * (headDim + valueDim) * element.getIntOrFloatBitWidth() / 8);
  // In f32, asking for three blocks per SM (168 registers a thread)
  // spills where D + Dv > 96 (12 bytes at D = Dv = 64 on sm_90, staged
  // split, where ptxas unasked takes 168 without spilling) or with a
  // mask (ptxas then takes 218 without spilling: two blocks per SM).
  bool f32Fits = !mask && headDim + valueDim <= 96;
  if (groups == 1 && std::max(productDim, valueDim) <= kMmaBlocksPerSMDims &&
      (!single || f32Fits))
    blocks.launch->setAttr(kiln::kMinBlocksPerSmAttr,
                           b.getI64IntegerAttr(kMmaBlocksPerSM));
  setLeadingIndices(blocks.entry, leading);
  Value keyTile = blocks.launch.getWorkgroupAttributions()[0];
  Value valueTile = blocks.launch.getWorkgroupAttributions()[1];
  Value keySmall, valueSmall;
  if (split) {
    keySmall = blocks.launch.getWorkgroupAttributions()[2];
    valueSmall = blocks.launch.getWorkgroupAttributions()[3];
  }
  MmaLane l = mmaLane(blocks.launch);
  Value blockStart = mul(blocks.rowBlock, index(blockRows));
  // Group q of the warp: the lane's rows g and g + 8 of the warp's 16 in
  // the block's q-th kMmaRows, and the rows it reads (the last one past
  // the end: such rows compute and write nothing).
  SmallVector<std::array<Value, 2>> rows(groups), readRows(groups);
  for (int64_t q = 0; q < groups; ++q) {
    rows[q][0] = add(
        blockStart, add(mul(l.warp, index(16)), add(l.g, index(q * kMmaRows))));
    rows[q][1] = add(rows[q][0], index(8));
    for (int h = 0; h < 2; ++h)
      readRows[q][h] =
          b.create<arith::MinSIOp>(loc, rows[q][h], index(queries - 1));
  }
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value zeroF = f32(0.0);
  Value scaleF = f32(scale);

  // Each group's query rows as A operands, 16 head dims per product (f32:
  // 8, split; over 64 dims kept whole and split per tile, over 96 read
  // again per tile from L1, which keeps D = 128 from spilling).
  bool reloadQuery = single && headDim > 96;
  auto queryOperands = [&] {
    SmallVector<SmallVector<SmallVector<Value, 4>>> words;
    for (int64_t q = 0; q < groups; ++q)
      words.push_back(
          leftWords(l, query, readRows[q], !single || headDim <= 64));
    return words;
  };
  SmallVector<SmallVector<SmallVector<Value, 4>>> queryWords;
  if (!reloadQuery)
    queryWords = queryOperands();

  Value tiles =
      keyTiles(blockStart, blockRows, queries, keys, tileKeys, causal);
  int64_t valueGroups = valueDim / 8;
  // Carried, group by group: the rows' running maxima, the lane's shares
  // of their sums, its accumulators (valueGroups fragments of four).
  int64_t carriedPerGroup = 4 + 4 * valueGroups;
  SmallVector<Value> inits;
  for (int64_t q = 0; q < groups; ++q) {
    inits.append({negInf, negInf, zeroF, zeroF});
    inits.append(4 * valueGroups, zeroF);
  }
  auto tileLoop = loop(
      zero, tiles, one, inits,
      [&](Value tile, ValueRange carriedAll) -> SmallVector<Value> {
        Value firstKey = mul(tile, index(tileKeys));
        // Keys as pairs of dims, values transposed as pairs of keys (f32:
        // keys as dims, values transposed in fragmentWords' order of
        // keys); zeros past the last key.
        stagePairs(key, firstKey, keys, keyTile, l.thread, threads, keySmall);
        stageTransposed(value, firstKey, keys, valueTile, l.thread, threads,
                        valueSmall);
        b.create<gpu::BarrierOp>(loc);

        // S = Q K^T, eight keys per product, each key fragment read once
        // for all groups: products[q][4 n + i] is element i of group q's
        // fragment of keys 8 n .. 8 n + 7 (rows g, g, g + 8, g + 8; keys
        // 2t, 2t + 1, 2t, 2t + 1 of them).
        SmallVector<SmallVector<Value>> products = mmaProducts(
            element, l, reloadQuery ? queryOperands() : queryWords, keyTile,
            SmallVector<SmallVector<Value>>(
                groups, SmallVector<Value>(tileKeys / 2, zeroF)),
            keySmall);
        SmallVector<SmallVector<SmallVector<Value, 4>>> weightWords;
        SmallVector<SmallVector<Value>> accs;
        SmallVector<Value> next;
        Value firstColumn = add(firstKey, mul(l.t, index(2)));
        for (int64_t q = 0; q < groups; ++q) {
          ValueRange carried =
              carriedAll.slice(q * carriedPerGroup, carriedPerGroup);
          SmallVector<Value> scores;
          Value tileMax[2] = {negInf, negInf};
          for (auto [i, product] : llvm::enumerate(products[q])) {
            Value k = add(firstColumn, index(8 * (i / 4) + i % 2));
            auto [s, seen] =
                maskAndSee(b.create<arith::MulFOp>(loc, product, scaleF), mask,
                           rows[q][(i % 4) / 2], queries, k, keys,
                           less(k, index(keys)), causal);
            scores.push_back(b.create<arith::SelectOp>(loc, seen, s, negInf));
            tileMax[(i % 4) / 2] = b.create<arith::MaximumFOp>(
                loc, tileMax[(i % 4) / 2], scores.back());
          }

          // The rows' online softmax: their maxima over the four lanes of
          // a row, the weights, the lane's shares of the sums, the
          // rescaled accumulators.
          SoftmaxStep step[2];
          for (int h = 0; h < 2; ++h) {
            step[h] = foldMax(carried[h], maxOverLanes(tileMax[h], 4));
            next.push_back(step[h].max);
          }
          SmallVector<Value> weights;
          Value sums[2] = {
              b.create<arith::MulFOp>(loc, carried[2], step[0].correction),
              b.create<arith::MulFOp>(loc, carried[3], step[1].correction)};
          for (auto [i, s] : llvm::enumerate(scores)) {
            Value p = softmaxWeight(s, step[(i % 4) / 2]);
            weights.push_back(p);
            sums[(i % 4) / 2] =
                b.create<arith::AddFOp>(loc, sums[(i % 4) / 2], p);
          }
          next.append({sums[0], sums[1]});
          SmallVector<Value> acc;
          for (auto [i, a] : llvm::enumerate(carried.drop_front(4)))
            acc.push_back(
                b.create<arith::MulFOp>(loc, a, step[(i % 4) / 2].correction));
          accs.push_back(acc);
          // The score fragments, rounded, are the A operands of p V: the
          // weights exp(s - m) of the running maximum m, at most 1 (or
          // NaN), never infinite.
          weightWords.push_back(
              fragmentWords(weights, element, /*finite=*/true));
        }

        // acc += P V, 16 keys per product, each value fragment read once
        // for all groups.
        SmallVector<SmallVector<Value>> updated =
            mmaProducts(element, l, weightWords, valueTile, accs, valueSmall);
        SmallVector<Value> carriedNext;
        for (int64_t q = 0; q < groups; ++q) {
          carriedNext.append(next.begin() + 4 * q, next.begin() + 4 * q + 4);
          llvm::append_range(carriedNext, updated[q]);
        }
        // Every warp is done with the tiles before the next is staged.
        b.create<gpu::BarrierOp>(loc);
        return carriedNext;
      });

  // out = acc / l rounded, and lse = m + log(l); NaN for a row that saw no
  // finite score (all masked, or no keys), as the softmax's 0 / 0.
  Value nan = f32(std::numeric_limits<double>::quiet_NaN());
  for (int64_t q = 0; q < groups; ++q) {
    ValueRange results =
        tileLoop.getResults().slice(q * carriedPerGroup, carriedPerGroup);
    Value finalMax[2], finalSum[2], none[2];
    for (int h = 0; h < 2; ++h) {
      finalMax[h] = results[h];
      finalSum[h] = sumOverLanes(results[2 + h], 4);
      none[h] = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                        finalMax[h], negInf);
    }
    SmallVector<Value> outs;
    for (int64_t i = 0; i < 4 * valueGroups; ++i) {
      int h = (i % 4) / 2;
      outs.push_back(b.create<arith::SelectOp>(
          loc, none[h], nan,
          b.create<arith::DivFOp>(loc, results[4 + i], finalSum[h])));
    }
    storeFragments(l, out, rows[q], queries, outs, 1.0);
    for (int h = 0; h < 2; ++h)
      when(b.create<arith::AndIOp>(loc, less(rows[q][h], index(queries)),
                                   equal(l.t, zero)),
           [&] {
             storeLogSumExp(lse, rows[q][h], finalMax[h], finalSum[h], none[h],
                            nan);
           });
  }
  b.create<gpu::TerminatorOp>(loc);
}

/// The gradient key kernel's workgroup buffers (buildMmaGrad), and
/// whether that kernel adds dq with atomics (one kernel) or the query
/// kernel computes it (two kernels).
KernelBuilder::MmaGradKeyBuffers
KernelBuilder::planMmaGradKeyBuffers(Type element, int64_t headDim,
                                     int64_t valueDim, int64_t queries,
                                     int64_t keys) {
  Type i32 = b.getI32Type();
  bool single = element.isF32();
  int64_t values = perWord(element);
  // The query and dO tiles' rows as pairs of dims: their products' k,
  // padded.
  int64_t productDim = mmaHeadDim(headDim),
          productValueDim = mmaHeadDim(valueDim);
  int64_t tile =
      mmaGradientTile(productDim, productValueDim, /*keyKernel=*/true, single);
  auto words = [&](int64_t rows, int64_t width) {
    return workgroupType({rows, width}, i32);
  };
  // The key kernel's workgroup buffers: the query tile's rows and dO's as
  // pairs of dims and transposed, their lse and rowsum; in f32, staged
  // split (stagedSplitKeyGrad), the first four with both parts of their
  // tiles (splitParts). With atomics also the block's keys transposed as
  // pairs of rows (f32: single keys, both parts), and the tile's ds
  // transposed (likewise) in a buffer of its own, or in the query tile's,
  // free once every warp
  // computed s^T: in halves where its own would pass the 48 KiB (at D =
  // Dv = 64 by 512 bytes); in f32 where the query tile's rows are as wide
  // (D = 64), which leaves two blocks of the kernel 194.5 KiB of sm_90's
  // 228 and the L1 cache the 60 KiB above, for the own rows that each
  // tile reads again (the 32 KiB a block at D = Dv = 64).
  SmallVector<MemRefType> keyBuffers = {words(tile, productDim / values),
                                        words(tile, productValueDim / values),
                                        words(headDim, tile / values),
                                        words(valueDim, tile / values),
                                        workgroupType({tile}),
                                        workgroupType({tile})};
  MemRefType keyT = words(headDim, kMmaRows / values),
             dsType = words(tile, kMmaRows / values);
  auto bytesOf = [](ArrayRef<MemRefType> types) {
    return *mlir::kiln::sharedBytesOf(
        SmallVector<Type>(types.begin(), types.end()));
  };
  bool splitKeyTiles = false, dsOwnBuffer = false;
  // A tile's buffer, both parts where staged split (splitParts).
  auto bothParts = [&](MemRefType type) {
    return splitKeyTiles ? splitBufferType(type) : type;
  };
  if (single) {
    SmallVector<MemRefType> withSmall(keyBuffers);
    for (int i = 0; i < 4; ++i)
      withSmall[i] = splitBufferType(keyBuffers[i]);
    splitKeyTiles = stagedSplitKeyGrad(single, headDim, valueDim,
                                       bytesOf(withSmall), sharedBytes);
    if (splitKeyTiles)
      keyBuffers = withSmall;
    dsOwnBuffer = headDim < kMmaRows;
  } else {
    SmallVector<MemRefType> withOwn(keyBuffers);
    withOwn.append({keyT, dsType});
    dsOwnBuffer = bytesOf(withOwn) <= mlir::kiln::kMaxStaticSharedBytes;
  }
  SmallVector<MemRefType> withAtomics(keyBuffers);
  withAtomics.push_back(bothParts(keyT));
  if (dsOwnBuffer)
    withAtomics.push_back(bothParts(dsType));
  // Atomics where the warps can share dq's product of a tile
  // (addQueryGradShares): its slabs of 16 queries, each over a part of
  // the dims. At head dims over 64, whose own rows are read per tile,
  // ptxas spills nothing at D = Dv = 96 on sm_90 and at most 32 bytes at
  // 128 (with an address per read of a staged tile it spilled 196 and
  // 112), where the two kernels take two products more per tile pair.
  // f32 takes them where its tiles are staged split and two blocks of the
  // kernel with the keys and ds still share a multiprocessor (sm_90 up to
  // D = Dv = 64, sm_80 up to 32); elsewhere the two kernels, whose query
  // kernel splits its tiles as staged too.
  bool atomics =
      gradientAtomics && queries != 0 && keys != 0 &&
      shareableQueryGrad(tile, headDim) &&
      (single ? splitKeyTiles && 2 * bytesOf(withAtomics) <= sharedBytes
              : dsOwnBuffer || productDim >= kMmaRows);
  if (atomics)
    keyBuffers = withAtomics;
  return {keyBuffers, splitKeyTiles, dsOwnBuffer, atomics};
}

/// The gradient on tensor cores, for f16 and bf16 (FlashAttention-2's
/// backward, on buildMma's fragments and staged tiles; for f32 on its
/// 3xTF32 products), as kernels that
/// recompute p = exp(s - lse) and ds = p (dp - rowsum(dO * O)) per tile:
///   dk, dv: a block's kMmaWarps warps own 16 key rows each, whose keys
///     and values are A operands in registers, read once. Per tile of
///     query rows (causal: from the tile of the block's first key) the
///     block stages the queries and dO as pairs of dims and transposed as
///     pairs of rows, with their lse and rowsum; each warp computes s^T =
///     K Q^T and dp^T = V dO^T, then dv += p^T dO and dk += ds^T Q, the
///     weights rounded to the operands' type as A operands.
///   dq, with gradientAtomics where the warps share a tile's product
///     evenly (shareableQueryGrad): the key kernel also stages its keys once
///     transposed as pairs of rows, writes each tile's ds transposed
///     (storePairsTransposed) and adds ds K for the tile's queries into an
///     f32 buffer with atomics (addQueryGradShares), which a launch zeroes
///     before and one scales and rounds into dq after: five products per
///     tile pair where the two kernels take seven; dq's sums' order
///     follows the blocks'. In f32 the keys and ds are staged split,
///     single keys in stageTransposedKeys' order (storeSplitTransposed),
///     and dq is its own sum, scaled in place.
///   dq, without: warps own 16 query rows each, whose queries and dO are
///     A operands;
///     per tile of keys (causal: up to the block's diagonal) the block
///     stages the keys as pairs of dims and transposed, and the values as
///     pairs of dims; each warp computes s = Q K^T and dp = dO V^T, then
///     dq += ds K. Every sum is then in one order on every run.
/// dq and dk are scaled once at the end; the products accumulate in f32
/// and every result is rounded once. For head dims over 64 the own rows'
/// A operands are read per tile rather than kept (reloadOwnRows).
void KernelBuilder::buildMmaGrad(ArrayRef<Value> operands, Value mask,
                                 ArrayRef<Value> grads, double scale,
                                 bool causal, int64_t batch,
                                 ArrayRef<int64_t> leading, int64_t queries,
                                 int64_t keys, int64_t headDim,
                                 int64_t valueDim) {
  Value query = operands[0], key = operands[1], value = operands[2],
        resultGrad = operands[3], lse = operands[4], delta = operands[5];
  Type element = cast<MemRefType>(query.getType()).getElementType();
  Type i32 = b.getI32Type();
  bool single = element.isF32();
  int64_t values = perWord(element);
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  // s = Q K^T's and dp = dO V^T's k: D and Dv padded as the forward's D
  // (mmaHeadDim), the staged rows zeros past them (stagePairs) and so the
  // own rows' operands (leftWords).
  int64_t productDim = mmaHeadDim(headDim),
          productValueDim = mmaHeadDim(valueDim);
  int64_t tile =
      mmaGradientTile(productDim, productValueDim, /*keyKernel=*/true, single);
  int64_t threads = 32 * kMmaWarps;
  // A warp's own rows as A operands take 16 registers a lane per 64 dims,
  // read once; for head dims over 64 they are read again per tile (from
  // L1 or L2) instead, which keeps the wide kernels from spilling. f32's
  // take 64 registers per 64 dims split into TF32 words, and are read and
  // split per tile.
  bool reloadOwnRows = single || std::max(productDim, productValueDim) > 64;
  /// A launch of blocks of kMmaRows rows of `own` per batch entry, the
  /// builder left in its body; the lane's rows g and g + 8 of its warp's,
  /// and the rows it reads (the last past the end).
  struct Own {
    gpu::LaunchOp launch;
    MmaLane lane;
    Value rowBlock, blockStart, rows[2], readRows[2];
  };
  auto launchOwn = [&](int64_t own, Longest order, int64_t otherBytes,
                       ArrayRef<MemRefType> tiles) {
    Own o;
    Blocks blocks =
        launchBlocks(llvm::divideCeil(own, kMmaRows), threads, batch, tiles,
                     causal ? order : Longest::None, otherBytes);
    setLeadingIndices(blocks.entry, leading);
    o.launch = blocks.launch;
    o.lane = mmaLane(blocks.launch);
    o.rowBlock = blocks.rowBlock;
    o.blockStart = mul(blocks.rowBlock, index(kMmaRows));
    o.rows[0] = add(o.blockStart, add(mul(o.lane.warp, index(16)), o.lane.g));
    o.rows[1] = add(o.rows[0], index(8));
    for (int h = 0; h < 2; ++h)
      o.readRows[h] = b.create<arith::MinSIOp>(loc, o.rows[h], index(own - 1));
    return o;
  };
  auto words = [&](int64_t rows, int64_t width) {
    return workgroupType({rows, width}, i32);
  };
  /// The A operands of a warp's own rows of `source`: read once before
  /// the tile loop (`kept`, unless reloadOwnRows), or in each tile.
  using Words = SmallVector<SmallVector<Value, 4>>;
  auto keepWords = [&](const Own &o, Value source) {
    return reloadOwnRows ? Words() : leftWords(o.lane, source, o.readRows);
  };
  /// Both products a tile begins with, of the own rows of `sources` (kept
  /// in `kept`, or read now) and the other side's rows staged in `staged`
  /// (f32 staged split: their small parts in `small`): s (or s^T) and dp
  /// (or dp^T).
  auto scoresAndGrads = [&](const Own &o, ArrayRef<Value> sources,
                            ArrayRef<Words> kept, ArrayRef<Value> staged,
                            ArrayRef<Value> small) {
    // Both operands' reads first: with the reads of the second after the
    // first product, ptxas spills 24 bytes at D = Dv = 128.
    Words words[2];
    for (int i = 0; i < 2; ++i)
      words[i] =
          reloadOwnRows ? leftWords(o.lane, sources[i], o.readRows) : kept[i];
    // Each the product of a warp's 16 own rows and the other side's rows
    // staged as pairs of dims: a fragment for each 8 of those rows.
    int64_t columns = cast<MemRefType>(staged[0].getType()).getDimSize(0);
    SmallVector<Value> zeros(columns / 2, f32(0.0));
    SmallVector<Value> scores =
        mmaProduct(element, o.lane, words[0], staged[0], zeros, small[0]);
    return std::make_pair(scores, mmaProduct(element, o.lane, words[1],
                                             staged[1], zeros, small[1]));
  };
  /// acc + the product of a warp's 16 x tile weights (D fragments, rounded
  /// as A operands) and a staged tile transposed as pairs of rows (f32
  /// staged split: its small parts in `small`). The weights are split
  /// with the infinity test: p = exp(s - lse) is at most 1 only where lse
  /// is the forward's.
  auto addWeighted = [&](const MmaLane &l, ArrayRef<Value> weights,
                         Value staged, Value small, ValueRange acc) {
    return mmaProduct(element, l, fragmentWords(weights, element), staged,
                      SmallVector<Value>(acc), small);
  };
  MmaGradKeyBuffers plan =
      planMmaGradKeyBuffers(element, headDim, valueDim, queries, keys);
  SmallVector<MemRefType> keyBuffers = plan.buffers;
  bool splitKeyTiles = plan.splitKeyTiles, dsOwnBuffer = plan.dsOwnBuffer,
       atomics = plan.atomics;
  Value queryGradSum;
  /// A launch over the queries x headDim elements of each batch entry of
  /// dq, `body` given an element's row and column.
  auto forEachQueryGrad = [&](function_ref<void(Value, Value)> body) {
    int64_t elements = queries * headDim, perBlock = 256;
    Blocks blocks = launchBlocks(llvm::divideCeil(elements, perBlock), perBlock,
                                 batch, {}, Longest::None, 0);
    setLeadingIndices(blocks.entry, leading);
    Value e = add(mul(blocks.rowBlock, index(perBlock)),
                  blocks.launch.getThreadIds().x);
    when(less(e, index(elements)), [&] {
      body(b.create<arith::DivUIOp>(loc, e, index(headDim)),
           b.create<arith::RemUIOp>(loc, e, index(headDim)));
    });
    b.create<gpu::TerminatorOp>(loc);
  };
  if (atomics) {
    // dq is summed in f32 from 0 by the key kernel's atomics, and scaled
    // and rounded once at the end; an f32 dq is its own sum.
    b.setInsertionPoint(call);
    queryGradSum =
        single ? grads[0]
               : b.create<memref::AllocOp>(
                     loc, MemRefType::get(
                              cast<MemRefType>(grads[0].getType()).getShape(),
                              b.getF32Type()));
    forEachQueryGrad([&](Value row, Value column) {
      b.create<memref::StoreOp>(loc, f32(0.0), queryGradSum,
                                at(queryGradSum, {row, column}));
    });
  }
  if (keys != 0) {
    // dk and dv: key rows, query tiles.
    // Each entry's rows a block reads: the queries and dO, lse and rowsum,
    // and with atomics dq's f32 sums (4 bytes a dim).
    Own o = launchOwn(keys, Longest::First,
                      elementBytes * queries * (headDim + valueDim) +
                          (atomics ? 4 * queries * headDim : 0) + 8 * queries,
                      keyBuffers);
    ValueRange staged = o.launch.getWorkgroupAttributions();
    Value queryTile = staged[0], gradTile = staged[1], queryT = staged[2],
          gradT = staged[3], lseTile = staged[4], deltaTile = staged[5];
    Value querySmall, gradSmall, queryTSmall, gradTSmall;
    if (splitKeyTiles) {
      std::tie(queryTile, querySmall) = splitParts(queryTile);
      std::tie(gradTile, gradSmall) = splitParts(gradTile);
      std::tie(queryT, queryTSmall) = splitParts(queryT);
      std::tie(gradT, gradTSmall) = splitParts(gradT);
    }
    Value keyTile, keySmall, dsTile, dsSmall;
    if (atomics) {
      keyTile = staged[6];
      dsTile = dsOwnBuffer ? staged[7] : queryTile;
      dsSmall = querySmall;
      if (splitKeyTiles) {
        std::tie(keyTile, keySmall) = splitParts(keyTile);
        if (dsOwnBuffer)
          std::tie(dsTile, dsSmall) = splitParts(dsTile);
      }
    }
    const MmaLane &l = o.lane;
    Value scaleF = f32(scale);
    Words keyWords = keepWords(o, key), valueWords = keepWords(o, value);
    if (atomics) {
      if (single)
        stageTransposedKeys(key, o.blockStart, keys, keyTile, l.thread, threads,
                            keySmall);
      else
        stagePairsTransposed(key, o.blockStart, keys, keyTile, l.thread,
                             threads);
    }
    Value firstTile =
        causal ? b.create<arith::DivUIOp>(loc, o.blockStart, index(tile))
               : zero;
    Value lastTile = index(llvm::divideCeil(queries, tile));
    // With atomics, the blocks of a batch entry start their walks at
    // different query tiles (the block's index modulo the tiles it walks),
    // so that they do not all add into the same rows of dq at once: the
    // loop counts steps from 0, tile (step + rotation) mod steps after the
    // first. Without, the loop runs over the tiles themselves, which
    // leaves the wide kernels one register more.
    Value steps, rotation;
    if (atomics) {
      steps = b.create<arith::MaxSIOp>(
          loc, zero, b.create<arith::SubIOp>(loc, lastTile, firstTile));
      rotation = b.create<arith::RemUIOp>(
          loc, o.rowBlock, b.create<arith::MaxSIOp>(loc, steps, one));
    }
    SmallVector<Value> inits(4 * (headDim + valueDim) / 8, f32(0.0));
    auto tileLoop = loop(
        atomics ? zero : firstTile, atomics ? steps : lastTile, one, inits,
        [&](Value step, ValueRange acc) -> SmallVector<Value> {
          // The rotated tile's remainder in 32 bits: a 64-bit one by the
          // causal grid's varying steps is a long sequence, whose
          // registers cost the f32 key kernel 4 bytes of spills on sm_90.
          Value t = step;
          if (atomics) {
            Type i32 = b.getI32Type();
            auto narrow = [&](Value x) -> Value {
              return b.create<arith::IndexCastUIOp>(loc, i32, x);
            };
            t = add(firstTile,
                    b.create<arith::IndexCastUIOp>(
                        loc, b.getIndexType(),
                        b.create<arith::RemUIOp>(
                            loc, narrow(add(step, rotation)), narrow(steps))));
          }
          Value first = mul(t, index(tile));
          stagePairs(query, first, queries, queryTile, l.thread, threads,
                     querySmall);
          stagePairs(resultGrad, first, queries, gradTile, l.thread, threads,
                     gradSmall);
          stageTransposed(query, first, queries, queryT, l.thread, threads,
                          queryTSmall);
          stageTransposed(resultGrad, first, queries, gradT, l.thread, threads,
                          gradTSmall);
          stage(lse, lseTile, first, queries, l.thread, threads);
          stage(delta, deltaTile, first, queries, l.thread, threads);
          b.create<gpu::BarrierOp>(loc);
          // s^T and dp^T: rows are the warp's keys, columns the tile's
          // queries 8 n + 2 t + i % 2.
          auto [s, dp] =
              scoresAndGrads(o, {key, value}, {keyWords, valueWords},
                             {queryTile, gradTile}, {querySmall, gradSmall});
          SmallVector<Value> p, ds;
          for (int64_t i = 0; i < tile / 2; ++i) {
            Value column = add(mul(l.t, index(2)), index(8 * (i / 4) + i % 2));
            Value q = add(first, column);
            // Keys past the end see nothing: with atomics their ds meets
            // zero key rows in dq's product, where inf or NaN would
            // survive.
            Value key = o.rows[(i % 4) / 2];
            Value inRange = less(q, index(queries));
            if (atomics)
              inRange =
                  b.create<arith::AndIOp>(loc, inRange, less(key, index(keys)));
            auto [score, seen] =
                maskAndSee(b.create<arith::MulFOp>(loc, s[i], scaleF), mask, q,
                           queries, key, keys, inRange, causal);
            auto [weight, grad] = gradientWeights(
                score, seen,
                b.create<memref::LoadOp>(loc, lseTile, ValueRange{column}),
                dp[i],
                b.create<memref::LoadOp>(loc, deltaTile, ValueRange{column}));
            p.push_back(weight);
            ds.push_back(grad);
          }
          // ds's A operands for dk's product, and ds transposed for dq's
          // product after the barrier (in the query tile's buffer once
          // every warp has read it for s^T). In f32 ds is split once, for
          // both.
          SmallVector<SmallVector<Value, 4>> dsWords;
          if (single)
            dsWords = fragmentWords(ds, element);
          if (atomics) {
            if (!dsOwnBuffer)
              b.create<gpu::BarrierOp>(loc);
            if (single)
              storeSplitTransposed(l, dsTile, dsSmall, dsWords);
            else
              storePairsTransposed(l, dsTile, ds, element);
          }
          if (!single)
            dsWords = fragmentWords(ds, element);
          int64_t split = 4 * headDim / 8;
          SmallVector<Value> updated = mmaProduct(
              element, l, dsWords, queryT,
              SmallVector<Value>(acc.take_front(split)), queryTSmall);
          llvm::append_range(updated, addWeighted(l, p, gradT, gradTSmall,
                                                  acc.drop_front(split)));
          b.create<gpu::BarrierOp>(loc);
          if (atomics) {
            addQueryGradShares(l, dsTile, keyTile, queryGradSum, first, element,
                               queries, headDim, dsSmall, keySmall);
            // The next tile stages its queries into ds's buffer when that
            // is the query tile's, once every warp has read ds; its own
            // buffer is written again after the next tile's first barrier.
            if (!dsOwnBuffer)
              b.create<gpu::BarrierOp>(loc);
          }
          return updated;
        });
    SmallVector<Value> results(tileLoop.getResults());
    int64_t split = 4 * headDim / 8;
    storeFragments(l, grads[1], o.rows, keys,
                   ArrayRef<Value>(results).take_front(split), scale);
    storeFragments(l, grads[2], o.rows, keys,
                   ArrayRef<Value>(results).drop_front(split), 1.0);
    b.create<gpu::TerminatorOp>(loc);
  }
  if (atomics) {
    forEachQueryGrad([&](Value row, Value column) {
      Value sum = b.create<memref::LoadOp>(loc, queryGradSum,
                                           at(queryGradSum, {row, column}));
      Value scaled = b.create<arith::MulFOp>(loc, sum, f32(scale));
      if (!single)
        scaled = b.create<arith::TruncFOp>(loc, element, scaled);
      b.create<memref::StoreOp>(loc, scaled, grads[0],
                                at(grads[0], {row, column}));
    });
    if (!single) {
      b.setInsertionPoint(call);
      b.create<memref::DeallocOp>(loc, queryGradSum);
    }
  } else if (queries != 0) {
    // dq: query rows, key tiles.
    int64_t keysPerTile = mmaGradientTile(productDim, productValueDim,
                                          /*keyKernel=*/false, single);
    // f32 tiles staged split (stagedSplit): each buffer both parts of its
    // tile (splitParts).
    bool split = stagedSplit(single, headDim, valueDim);
    SmallVector<MemRefType> tileTypes = {
        words(keysPerTile, productDim / values),
        words(keysPerTile, productValueDim / values),
        words(headDim, keysPerTile / values)};
    if (split)
      for (MemRefType &type : tileTypes)
        type = splitBufferType(type);
    Own o =
        launchOwn(queries, Longest::Last,
                  elementBytes * keys * (2 * headDim + valueDim), tileTypes);
    ValueRange staged = o.launch.getWorkgroupAttributions();
    Value keyTile = staged[0], valueTile = staged[1], keyT = staged[2];
    Value keySmall, valueSmall, keyTSmall;
    if (split) {
      // Left to itself, ptxas fits four blocks of 48 KiB an SM in 128
      // registers a thread and spills 16 bytes of the causal kernel on
      // sm_90; three take 168.
      o.launch->setAttr(kiln::kMinBlocksPerSmAttr,
                        b.getI64IntegerAttr(kMmaBlocksPerSM));
      std::tie(keyTile, keySmall) = splitParts(keyTile);
      std::tie(valueTile, valueSmall) = splitParts(valueTile);
      std::tie(keyT, keyTSmall) = splitParts(keyT);
    }
    const MmaLane &l = o.lane;
    Value scaleF = f32(scale);
    Words queryWords = keepWords(o, query),
          gradWords = keepWords(o, resultGrad);
    Value logSum[2], rowDelta[2];
    for (int h = 0; h < 2; ++h) {
      logSum[h] = b.create<memref::LoadOp>(loc, lse, at(lse, {o.readRows[h]}));
      rowDelta[h] =
          b.create<memref::LoadOp>(loc, delta, at(delta, {o.readRows[h]}));
    }
    Value tiles =
        keyTiles(o.blockStart, kMmaRows, queries, keys, keysPerTile, causal);
    auto tileLoop = loop(
        zero, tiles, one, SmallVector<Value>(4 * headDim / 8, f32(0.0)),
        [&](Value t, ValueRange acc) -> SmallVector<Value> {
          Value first = mul(t, index(keysPerTile));
          stagePairs(key, first, keys, keyTile, l.thread, threads, keySmall);
          stagePairs(value, first, keys, valueTile, l.thread, threads,
                     valueSmall);
          stageTransposed(key, first, keys, keyT, l.thread, threads, keyTSmall);
          b.create<gpu::BarrierOp>(loc);
          auto [s, dp] =
              scoresAndGrads(o, {query, resultGrad}, {queryWords, gradWords},
                             {keyTile, valueTile}, {keySmall, valueSmall});
          SmallVector<Value> ds;
          for (int64_t i = 0; i < keysPerTile / 2; ++i) {
            int h = (i % 4) / 2;
            Value k =
                add(first, add(mul(l.t, index(2)), index(8 * (i / 4) + i % 2)));
            auto [score, seen] = maskAndSee(
                b.create<arith::MulFOp>(loc, s[i], scaleF), mask, o.rows[h],
                queries, k, keys, less(k, index(keys)), causal);
            ds.push_back(
                gradientWeights(score, seen, logSum[h], dp[i], rowDelta[h])
                    .second);
          }
          SmallVector<Value> next = addWeighted(l, ds, keyT, keyTSmall, acc);
          b.create<gpu::BarrierOp>(loc);
          return next;
        });
    storeFragments(l, grads[0], o.rows, queries,
                   SmallVector<Value>(tileLoop.getResults()), scale);
    b.create<gpu::TerminatorOp>(loc);
  }
}

/// The gradient with register tiles, for head dims that
/// fitsTheTiledGradient: kernels of buildTiled's geometry that recompute
/// p = exp(s - lse) per tile, each thread on a 4 x 4 tile of (query, key)
/// pairs, with three 16 KiB buffers.
///   dk, dv: blocks own 64 key rows (staged once, scaled) and walk the
///     query tiles (causal: from the tile of the block's first key): s from
///     the queries transposed, dp from the block's value rows and dO
///     transposed; p then ds written, dv += p dO and dk += ds q from the
///     dO and query rows.
///   dq, with gradientAtomics (FlashAttention-2's backward): the same
///     kernel then writes ds transposed (storeInterleaved), multiplies it
///     by its key rows and adds the tile into dq with atomics, after a
///     launch that zeroes dq. Five products per tile where the two kernels
///     below take seven; the sums' order follows the blocks'.
///   dq, without: blocks own 64 query rows (staged once, scaled) and walk
///     the key tiles: s from the keys transposed, dp = dO . v from the
///     block's dO rows and the values transposed, ds = p (dp - delta)
///     written over the keys, then dq += ds k from the key rows.
/// dq and dk are scaled once at the end (dq's atomic shares by the scaled
/// key rows).
void KernelBuilder::buildTiledGrad(ArrayRef<Value> operands, Value mask,
                                   ArrayRef<Value> grads, double scale,
                                   bool causal, int64_t batch,
                                   ArrayRef<int64_t> leading, int64_t queries,
                                   int64_t keys) {
  Value query = operands[0], key = operands[1], value = operands[2],
        resultGrad = operands[3], lse = operands[4], delta = operands[5];
  constexpr int64_t dims = 4 * kTiledSide, quads = kTiledSide;
  SmallVector<int64_t> buffers(3, quads);
  /// The two products both kernels begin a tile with, from `tiles` (the
  /// block's own rows, staged; then two buffers to stage into) and
  /// `sources` (the other side's rows for s, the block's own rows and the
  /// other side's rows for dp): s = own . other^T over the other side's
  /// tile from `first` (below `otherLimit`), and dp = the block's rows of
  /// sources[1] (below `ownLimit`) . sources[2]^T over the same tile.
  auto scoresAndGrads =
      [&](const Tile &t, ArrayRef<Value> tiles, ArrayRef<Value> sources,
          Value first, int64_t otherLimit, int64_t ownLimit, ValueRange zeros) {
        Value ownTile = tiles[0], rowsTile = tiles[1], sharedTile = tiles[2];
        stageTransposed(t, sources[0], first, otherLimit, sharedTile, dims);
        b.create<gpu::BarrierOp>(loc);
        SmallVector<Value> s = tileProduct(t, ownTile, sharedTile, quads,
                                           Layout::SwizzledRight, zeros);
        b.create<gpu::BarrierOp>(loc);
        stageRows(t, sources[1], t.blockStart, ownLimit, rowsTile, 1.0);
        stageTransposed(t, sources[2], first, otherLimit, sharedTile, dims);
        b.create<gpu::BarrierOp>(loc);
        SmallVector<Value> dp = tileProduct(t, rowsTile, sharedTile, quads,
                                            Layout::SwizzledRight, zeros);
        b.create<gpu::BarrierOp>(loc);
        return std::make_pair(s, dp);
      };
  auto rowValue = [&](Value buffer, Value row, int64_t rows) {
    return b.create<memref::LoadOp>(
        loc, buffer,
        at(buffer, {b.create<arith::MinSIOp>(loc, row, index(rows - 1))}));
  };

  if (batch != 0 && queries != 0 && gradientAtomics) {
    // dq starts at 0: the key kernel adds each tile's share into it.
    Tile t = launchTiled(queries, batch, leading, {}, Longest::None, 0);
    forEachTileElement(t, [&](Value r, Value c) {
      Value row = add(t.blockStart, r);
      when(less(row, index(queries)), [&] {
        b.create<memref::StoreOp>(loc, f32(0.0), grads[0],
                                  at(grads[0], {row, c}));
      });
    });
    b.create<gpu::TerminatorOp>(loc);
  }
  if (batch != 0 && queries != 0 && !gradientAtomics) {
    Tile t = launchTiled(queries, batch, leading, buffers,
                         causal ? Longest::Last : Longest::None,
                         4 * keys * 2 * dims);
    t.launch->setAttr(kiln::kMinBlocksPerSmAttr,
                      b.getI64IntegerAttr(kTiledGradBlocksPerSM));
    Value queryTile = t.launch.getWorkgroupAttributions()[0];
    Value rowsTile = t.launch.getWorkgroupAttributions()[1];
    Value sharedTile = t.launch.getWorkgroupAttributions()[2];
    SmallVector<Value> zeros(16, f32(0.0));
    stageRows(t, query, t.blockStart, queries, queryTile, scale);
    SmallVector<Value> rowLse, rowDelta;
    for (Value row : t.row) {
      rowLse.push_back(rowValue(lse, row, queries));
      rowDelta.push_back(rowValue(delta, row, queries));
    }
    Value tiles =
        keyTiles(t.blockStart, kTiledRows, queries, keys, kTiledKeys, causal);
    auto tileLoop =
        loop(zero, tiles, one, zeros,
             [&](Value tile, ValueRange acc) -> SmallVector<Value> {
               Value firstKey = mul(tile, index(kTiledKeys));
               auto [s, dp] = scoresAndGrads(
                   t, {queryTile, rowsTile, sharedTile},
                   {key, resultGrad, value}, firstKey, keys, queries, zeros);
               SmallVector<Value> ds(16);
               for (int64_t i = 0; i < 4; ++i)
                 for (int64_t j = 0; j < 4; ++j) {
                   Value k = add(firstKey, add(t.firstColumn, index(j)));
                   auto [x, seen] =
                       maskAndSee(s[4 * i + j], mask, t.row[i], queries, k,
                                  keys, less(k, index(keys)), causal);
                   ds[4 * i + j] = gradientWeights(x, seen, rowLse[i],
                                                   dp[4 * i + j], rowDelta[i])
                                       .second;
                 }
               storeQuads(t, sharedTile, ds);
               stageRows(t, key, firstKey, keys, rowsTile, 1.0);
               b.create<gpu::BarrierOp>(loc);
               SmallVector<Value> next = tileProduct(
                   t, sharedTile, rowsTile, kTiledKeys / 4, Layout::Plain, acc);
               b.create<gpu::BarrierOp>(loc);
               return next;
             });
    storeRows(t, grads[0], SmallVector<Value>(tileLoop.getResults()), scale,
              queries);
    b.create<gpu::TerminatorOp>(loc);
  }
  if (batch != 0 && keys != 0) {
    // Blocks read the queries, dO and their row values, and add into dq.
    Tile t = launchTiled(keys, batch, leading, buffers,
                         causal ? Longest::First : Longest::None,
                         4 * queries * ((gradientAtomics ? 3 : 2) * dims + 2));
    t.launch->setAttr(kiln::kMinBlocksPerSmAttr,
                      b.getI64IntegerAttr(kTiledGradBlocksPerSM));
    Value keyTile = t.launch.getWorkgroupAttributions()[0];
    Value rowsTile = t.launch.getWorkgroupAttributions()[1];
    Value sharedTile = t.launch.getWorkgroupAttributions()[2];
    SmallVector<Value> zeros(16, f32(0.0));
    stageRows(t, key, t.blockStart, keys, keyTile, scale);
    // Earlier queries see none of the block's keys when causal.
    Value firstTile =
        causal ? b.create<arith::DivUIOp>(loc, t.blockStart, index(kTiledRows))
               : zero;
    Value lastTile = index(llvm::divideCeil(queries, kTiledRows));
    // With atomics, the blocks of a batch entry start their walks at
    // different query tiles (the block's index modulo the tiles it walks),
    // so that they do not all add into the same rows of dq at once.
    Value steps = b.create<arith::SubIOp>(loc, lastTile, firstTile);
    Value rotation;
    if (gradientAtomics)
      rotation = b.create<arith::RemUIOp>(
          loc, t.rowBlock, b.create<arith::MaxSIOp>(loc, steps, one));
    SmallVector<Value> inits(zeros);
    inits.append(zeros);
    auto tileLoop = loop(
        zero, steps, one, inits,
        [&](Value step, ValueRange acc) -> SmallVector<Value> {
          Value tile =
              add(firstTile, rotation ? b.create<arith::RemUIOp>(
                                            loc, add(step, rotation), steps)
                                      : step);
          Value firstQuery = mul(tile, index(kTiledRows));
          auto [s, dp] = scoresAndGrads(t, {keyTile, rowsTile, sharedTile},
                                        {query, value, resultGrad}, firstQuery,
                                        queries, keys, zeros);
          SmallVector<Value> p(16), ds(16);
          for (int64_t j = 0; j < 4; ++j) {
            Value qi = add(firstQuery, add(t.firstColumn, index(j)));
            Value logSum = rowValue(lse, qi, queries);
            Value queryDelta = rowValue(delta, qi, queries);
            for (int64_t i = 0; i < 4; ++i) {
              // Keys past the end see nothing: their ds meets zero key
              // rows in dq's product, where inf or NaN would survive.
              Value inRange = b.create<arith::AndIOp>(
                  loc, less(qi, index(queries)), less(t.row[i], index(keys)));
              auto [x, seen] = maskAndSee(s[4 * i + j], mask, qi, queries,
                                          t.row[i], keys, inRange, causal);
              std::tie(p[4 * i + j], ds[4 * i + j]) =
                  gradientWeights(x, seen, logSum, dp[4 * i + j], queryDelta);
            }
          }
          storeQuads(t, sharedTile, p);
          stageRows(t, resultGrad, firstQuery, queries, rowsTile, 1.0);
          b.create<gpu::BarrierOp>(loc);
          SmallVector<Value> valueGrad =
              tileProduct(t, sharedTile, rowsTile, kTiledRows / 4,
                          Layout::Plain, acc.drop_front(16));
          b.create<gpu::BarrierOp>(loc);
          storeQuads(t, sharedTile, ds);
          stageRows(t, query, firstQuery, queries, rowsTile, 1.0);
          b.create<gpu::BarrierOp>(loc);
          SmallVector<Value> next =
              tileProduct(t, sharedTile, rowsTile, kTiledRows / 4,
                          Layout::Plain, acc.take_front(16));
          b.create<gpu::BarrierOp>(loc);
          llvm::append_range(next, valueGrad);
          if (gradientAtomics) {
            // dq += ds k over the block's keys: ds transposed (rows of
            // queries) times the staged key rows, which carry the scale;
            // the tile then goes through workgroup memory so that
            // neighbouring threads add into neighbouring words of dq.
            storeInterleaved(t, sharedTile, ds);
            b.create<gpu::BarrierOp>(loc);
            SmallVector<Value> queryGrad =
                tileProduct(t, sharedTile, keyTile, kTiledKeys / 4,
                            Layout::Interleaved, zeros);
            storeQuads(t, rowsTile, queryGrad);
            b.create<gpu::BarrierOp>(loc);
            forEachTileElement(t, [&](Value r, Value c) {
              Value row = add(firstQuery, r);
              when(less(row, index(queries)), [&] {
                b.create<memref::AtomicRMWOp>(loc, arith::AtomicRMWKind::addf,
                                              tileElement(rowsTile, r, c),
                                              grads[0], at(grads[0], {row, c}));
              });
            });
            // The next tile's first product stages into sharedTile, which
            // the barrier above freed, and its second into rowsTile after
            // another barrier, once every thread read this tile's dq.
          }
          return next;
        });
    SmallVector<Value> results(tileLoop.getResults());
    storeRows(t, grads[1], ArrayRef<Value>(results).take_front(16), scale,
              keys);
    storeRows(t, grads[2], ArrayRef<Value>(results).drop_front(16), 1.0, keys);
    b.create<gpu::TerminatorOp>(loc);
  }
  call.erase();
}

/// The gradient, from the saved lse and delta = rowsum(dO * O) (with
/// s = scale q.k + mask, -inf where unseen, and p = exp(s - lse)):
///   dv_j = sum_i p_ij dO_i,   ds_ij = p_ij (dO_i . v_j - delta_i),
///   dq_i = scale sum_j ds_ij k_j,   dk_j = scale sum_i ds_ij q_i.
/// Two kernels of the forward's shape, neither with an Nq x Nk buffer: one
/// owns query rows and walks the key tiles for dq, the other owns key rows
/// and walks the query tiles for dk and dv, each recomputing p. Both keep
/// their rows' shares of the operands and sums in registers.
LogicalResult KernelBuilder::buildGrad(DictionaryAttr info) {
  double scale;
  bool causal;
  Value mask;
  if (failed(readCall(info, kAttentionGradAttr, 9, 6,
                      "expected a call on static f32, f16 or bf16 buffers: "
                      "query, key, value, the result's cotangent, lse, "
                      "rowsum(cotangent * result), the mask if any, then the "
                      "query, key and value gradient buffers",
                      scale, causal, mask)))
    return failure();
  unsigned count = call.getNumOperands();
  Value query = call.getOperand(0), key = call.getOperand(1),
        value = call.getOperand(2), resultGrad = call.getOperand(3),
        lse = call.getOperand(4), delta = call.getOperand(5);
  Value queryGrad = call.getOperand(count - 3),
        keyGrad = call.getOperand(count - 2),
        valueGrad = call.getOperand(count - 1);
  auto shapeOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getShape();
  };
  ArrayRef<int64_t> q = shapeOf(query);
  size_t rank = q.size();
  ArrayRef<int64_t> leading = q.drop_back(2);
  auto rowsAndLast = [&](Value v) {
    ArrayRef<int64_t> shape = shapeOf(v);
    return shape.size() == rank && shape.drop_back(2) == leading;
  };
  if (rank < 2 || !rowsAndLast(key) || !rowsAndLast(value) ||
      !rowsAndLast(resultGrad) || !rowsAndLast(queryGrad) ||
      !rowsAndLast(keyGrad) || !rowsAndLast(valueGrad) ||
      shapeOf(lse).size() != rank - 1 || shapeOf(delta).size() != rank - 1 ||
      (mask && shapeOf(mask).size() != rank))
    return call.emitError()
           << "the attention gradient's buffers disagree in rank or leading "
              "dims";
  int64_t queries = q[rank - 2], headDim = q[rank - 1];
  int64_t keys = shapeOf(key)[rank - 2];
  int64_t valueDim = shapeOf(value)[rank - 1];
  Type element = cast<MemRefType>(query.getType()).getElementType();
  bool half = !element.isF32();
  if (half) {
    if (failed(checkHalfBuffers(
            element, {key, value, resultGrad, queryGrad, keyGrad, valueGrad},
            {lse, delta},
            "expected query, key, value, cotangent and gradient buffers of "
            "one element type and f32 log-sum-exp and rowsum buffers")))
      return failure();
    if (!fitsTheMmaKernels(headDim, valueDim))
      return call.emitError()
             << "the tensor-core gradient takes head and value dims that "
                "are multiples of 8 up to 128, not "
             << headDim << " and " << valueDim;
  } else if (failed(checkHeadDims(headDim, valueDim)) || failed(allF32())) {
    return failure();
  }
  int64_t batch = 1;
  for (int64_t d : leading)
    batch *= d;
  if (half || (f32TensorCores && fitsTheMmaKernels(headDim, valueDim))) {
    if (batch != 0)
      buildMmaGrad({query, key, value, resultGrad, lse, delta}, mask,
                   {queryGrad, keyGrad, valueGrad}, scale, causal, batch,
                   leading, queries, keys, headDim, valueDim);
    call.erase();
    return success();
  }
  if (fitsTheTiledGradient(headDim, valueDim)) {
    buildTiledGrad({query, key, value, resultGrad, lse, delta}, mask,
                   {queryGrad, keyGrad, valueGrad}, scale, causal, batch,
                   leading, queries, keys);
    return success();
  }
  int64_t lanes = lanesPerRow(headDim, valueDim);
  int64_t queryDims = headDim / lanes, valueDims = valueDim / lanes;
  int64_t rows = blockRows(lanes);
  int64_t threads = rows * lanes;
  int64_t tile = std::max<int64_t>(
      1, std::min(keysPerTile,
                  kSharedFloats / std::max<int64_t>(1, headDim + valueDim + 2)));

  auto workgroup = [&](ArrayRef<int64_t> shape) {
    return workgroupType(shape);
  };
  /// One kernel: blocks of `rows` rows of `own` (queries or keys) per
  /// batch entry in `order`, walking the tiles of the other side (of
  /// `otherBytes` per entry) with `walk`.
  auto kernel = [&](int64_t own, Longest order, int64_t otherBytes,
                    ArrayRef<MemRefType> tiles,
                    function_ref<void(Rows &)> walk) {
    Rows r = launchRows(own, rows, lanes, batch, leading, tiles,
                        causal ? order : Longest::None, otherBytes);
    walk(r);
    b.create<gpu::TerminatorOp>(loc);
  };
  /// The lanes' sum of share[t] * tile[j, dims[t]], with the tile's values.
  auto dot = [&](ArrayRef<Value> share, Value tileBuffer, Value j,
                 ArrayRef<Value> dims, SmallVectorImpl<Value> &loaded) {
    Value sum = f32(0.0);
    for (auto [x, d] : llvm::zip(share, dims)) {
      Value y = b.create<memref::LoadOp>(loc, tileBuffer, ValueRange{j, d});
      loaded.push_back(y);
      sum = b.create<math::FmaOp>(loc, x, y, sum);
    }
    return sumOverLanes(sum, lanes);
  };
  /// The score s of a (query, key) pair plus the mask's entry (read at
  /// indices clamped into range), and whether the pair is seen: `inRange`
  /// and, when causal, key <= query.
  auto maskAndSee = [&](Value s, Value query, Value key, Value inRange) {
    return this->maskAndSee(s, mask, query, queries, key, keys, inRange,
                            causal);
  };
  /// The loop over tiles [from, count) carrying `inits`: stages each tile
  /// (`stageTile` with the tile's first row), waits for the block, runs
  /// `perRow` (the row's index, its index in the tile, the carried values)
  /// over the tile's rows, and waits again before the next is staged.
  auto walkTiles =
      [&](Value from, Value count, ValueRange inits,
          function_ref<void(Value)> stageTile,
          function_ref<SmallVector<Value>(Value, Value, ValueRange)> perRow) {
        return loop(
            from, count, one, inits,
            [&](Value t, ValueRange sums) -> SmallVector<Value> {
              Value first = mul(t, index(tile));
              stageTile(first);
              b.create<gpu::BarrierOp>(loc);
              auto rowLoop = loop(
                  zero, index(tile), one, sums,
                  [&](Value i, ValueRange acc) -> SmallVector<Value> {
                    return perRow(add(first, i), i, acc);
                  });
              b.create<gpu::BarrierOp>(loc);
              return SmallVector<Value>(rowLoop.getResults());
            });
      };
  auto store = [&](Value buffer, Value row, ArrayRef<Value> share,
                   ArrayRef<Value> dims, double factor) {
    for (auto [x, d] : llvm::zip(share, dims)) {
      Value y = factor == 1.0 ? x : b.create<arith::MulFOp>(loc, x, f32(factor));
      b.create<memref::StoreOp>(loc, y, buffer, at(buffer, {row, d}));
    }
  };

  if (batch != 0 && queries != 0) {
    // dq: query rows, key tiles (up to the block's last row's diagonal
    // when causal).
    kernel(queries, Longest::Last, 4 * keys * (headDim + valueDim),
           SmallVector<MemRefType>{
               workgroup({tile, std::max<int64_t>(headDim, 1)}),
               workgroup({tile, std::max<int64_t>(valueDim, 1)})},
           [&](Rows &r) {
             Value row = r.row, readRow = r.readRow, thread = r.thread;
             Value keyTile = r.launch.getWorkgroupAttributions()[0];
             Value valueTile = r.launch.getWorkgroupAttributions()[1];
             SmallVector<Value> qDims = dimsOfLane(r.lane, lanes, queryDims);
             SmallVector<Value> vDims = dimsOfLane(r.lane, lanes, valueDims);
             SmallVector<Value> scaledQuery =
                 loadShare(query, readRow, qDims, scale);
             SmallVector<Value> rowGrad =
                 loadShare(resultGrad, readRow, vDims, 1.0);
             Value logSum =
                 b.create<memref::LoadOp>(loc, lse, at(lse, {readRow}));
             Value rowDelta =
                 b.create<memref::LoadOp>(loc, delta, at(delta, {readRow}));
             Value tiles =
                 keyTiles(r.blockStart, rows, queries, keys, tile, causal);
             SmallVector<Value> inits(queryDims, f32(0.0));
             auto tileLoop = walkTiles(
                 zero, tiles, inits,
                 [&](Value first) {
                   stage(key, keyTile, first, keys, thread, threads);
                   stage(value, valueTile, first, keys, thread, threads);
                 },
                 [&](Value k, Value j, ValueRange acc) -> SmallVector<Value> {
                   SmallVector<Value> keyRow, unused;
                   auto [s, seen] = maskAndSee(
                       dot(scaledQuery, keyTile, j, qDims, keyRow), row, k,
                       less(k, index(keys)));
                   Value dp = dot(rowGrad, valueTile, j, vDims, unused);
                   Value ds =
                       gradientWeights(s, seen, logSum, dp, rowDelta).second;
                   SmallVector<Value> next;
                   for (auto [a, y] : llvm::zip(acc, keyRow))
                     next.push_back(b.create<math::FmaOp>(loc, ds, y, a));
                   return next;
                 });
             when(r.valid, [&] {
               store(queryGrad, row, SmallVector<Value>(tileLoop.getResults()),
                     qDims, scale);
             });
           });
  }
  if (batch != 0 && keys != 0) {
    // dk and dv: key rows, query tiles (from the tile holding the block's
    // first key when causal: earlier queries see none of its keys).
    kernel(keys, Longest::First, 4 * queries * (headDim + valueDim + 2),
           SmallVector<MemRefType>{
               workgroup({tile, std::max<int64_t>(headDim, 1)}),
               workgroup({tile, std::max<int64_t>(valueDim, 1)}),
               workgroup({tile}), workgroup({tile})},
           [&](Rows &r) {
             Value row = r.row, readRow = r.readRow, thread = r.thread;
             Value queryTile = r.launch.getWorkgroupAttributions()[0];
             Value gradTile = r.launch.getWorkgroupAttributions()[1];
             Value lseTile = r.launch.getWorkgroupAttributions()[2];
             Value deltaTile = r.launch.getWorkgroupAttributions()[3];
             SmallVector<Value> qDims = dimsOfLane(r.lane, lanes, queryDims);
             SmallVector<Value> vDims = dimsOfLane(r.lane, lanes, valueDims);
             SmallVector<Value> scaledKey = loadShare(key, readRow, qDims, scale);
             SmallVector<Value> keyValue = loadShare(value, readRow, vDims, 1.0);
             Value firstTile = causal ? b.create<arith::DivUIOp>(
                                            loc, r.blockStart, index(tile))
                                      : zero;
             Value tiles = index((queries + tile - 1) / tile);
             SmallVector<Value> inits(queryDims + valueDims, f32(0.0));
             auto tileLoop = walkTiles(
                 firstTile, tiles, inits,
                 [&](Value first) {
                   stage(query, queryTile, first, queries, thread, threads);
                   stage(resultGrad, gradTile, first, queries, thread, threads);
                   stage(lse, lseTile, first, queries, thread, threads);
                   stage(delta, deltaTile, first, queries, thread, threads);
                 },
                 [&](Value qi, Value i, ValueRange acc) -> SmallVector<Value> {
                   SmallVector<Value> queryRow, gradRow;
                   auto [s, seen] = maskAndSee(
                       dot(scaledKey, queryTile, i, qDims, queryRow), qi, row,
                       less(qi, index(queries)));
                   Value dp = dot(keyValue, gradTile, i, vDims, gradRow);
                   Value logSum =
                       b.create<memref::LoadOp>(loc, lseTile, ValueRange{i});
                   Value rowDelta =
                       b.create<memref::LoadOp>(loc, deltaTile, ValueRange{i});
                   auto [p, ds] =
                       gradientWeights(s, seen, logSum, dp, rowDelta);
                   SmallVector<Value> next;
                   for (auto [a, x] :
                        llvm::zip(acc.take_front(queryDims), queryRow))
                     next.push_back(b.create<math::FmaOp>(loc, ds, x, a));
                   for (auto [a, x] :
                        llvm::zip(acc.drop_front(queryDims), gradRow))
                     next.push_back(b.create<math::FmaOp>(loc, p, x, a));
                   return next;
                 });
             when(r.valid, [&] {
               SmallVector<Value> results(tileLoop.getResults());
               store(keyGrad, row, ArrayRef<Value>(results).take_front(queryDims),
                     qDims, scale);
               store(valueGrad, row,
                     ArrayRef<Value>(results).drop_front(queryDims), vDims, 1.0);
             });
           });
  }
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
    for (bool grad : {false, true}) {
      StringRef mark = grad ? kAttentionGradAttr : kAttentionAttr;
      for (auto [call, callee] :
           mlir::kiln::callsOfMarkedFunctions(module, mark)) {
        auto attrs = callee->getAttrOfType<DictionaryAttr>(mark);
        if (failed(buildVariants(module, call, attrs, grad)))
          return signalPassFailure();
        callees.insert(callee);
      }
    }
    mlir::kiln::eraseUncalled(module, callees);
  }

  /// One kernel configuration of a call: its name at a tuned site, and the
  /// options it is built with.
  struct Variant {
    std::string name;
    bool gradientAtomics, f32TensorCores;
  };

  /// The kernels of `call` (a gradient's with `grad`) as the options ask:
  /// one, or with tune-f32 the variants of a tuned call site where an f32
  /// call fits the tensor-core kernels.
  LogicalResult buildVariants(ModuleOp module, func::CallOp call,
                              DictionaryAttr attrs, bool grad) {
    SmallVector<Variant> variants = variantsOf(call, grad);
    SmallVector<Operation *> calls = {call};
    if (variants.size() > 1) {
      SmallVector<std::string> names;
      for (const Variant &variant : variants)
        names.push_back(variant.name);
      FailureOr<SmallVector<Operation *>> clones =
          mlir::kiln::buildTunedSite(module, call, names);
      if (failed(clones))
        return failure();
      calls = *clones;
    }
    for (auto [op, variant] : llvm::zip(calls, variants)) {
      KernelBuilder kernel(cast<func::CallOp>(op), rowsPerBlock, keysPerTile,
                           variant.gradientAtomics, variant.f32TensorCores,
                           sharedBytes);
      if (failed(grad ? kernel.buildGrad(attrs) : kernel.build(attrs)))
        return failure();
    }
    return success();
  }

  /// The configurations to build `call` with: the options', and with
  /// tune-f32, for an f32 call of static shapes the tensor-core kernels
  /// take, the f32 kernels', the 3xTF32 ones' and, for a gradient whose
  /// f32 or 3xTF32 kernel adds dq with atomics, its two kernels'.
  SmallVector<Variant> variantsOf(func::CallOp call, bool grad) {
    SmallVector<Variant> variants = {{"f32", gradientAtomics, f32TensorCores}};
    auto query = dyn_cast<MemRefType>(call.getOperand(0).getType());
    auto key = dyn_cast<MemRefType>(call.getOperand(1).getType());
    auto value = dyn_cast<MemRefType>(call.getOperand(2).getType());
    if (!tuneF32 || f32TensorCores || !query || !key || !value ||
        !query.getElementType().isF32() || !query.hasStaticShape() ||
        !key.hasStaticShape() || !value.hasStaticShape() ||
        query.getRank() < 2 || key.getRank() != query.getRank() ||
        value.getRank() != query.getRank())
      return variants;
    int64_t headDim = query.getShape().back(),
            valueDim = value.getShape().back();
    int64_t queries = query.getShape()[query.getRank() - 2],
            keys = key.getShape()[key.getRank() - 2];
    if (!fitsTheMmaKernels(headDim, valueDim))
      return variants;
    // The register-tiled gradient is one kernel with atomics too: its two
    // kernels are a variant of their own.
    if (grad && gradientAtomics && fitsTheTiledGradient(headDim, valueDim))
      variants.push_back({"f32-two-kernels", false, false});
    variants.push_back({"3xtf32", gradientAtomics, true});
    if (grad && gradientAtomics) {
      KernelBuilder kernel(call, rowsPerBlock, keysPerTile, gradientAtomics,
                           true, sharedBytes);
      if (kernel
              .planMmaGradKeyBuffers(query.getElementType(), headDim, valueDim,
                                     queries, keys)
              .atomics)
        variants.push_back({"3xtf32-two-kernels", false, true});
    }
    return variants;
  }
};

} // namespace
