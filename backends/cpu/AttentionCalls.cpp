//===- AttentionCalls.cpp - f32 attention as FlashAttention kernel calls --===//
//
// kiln.attention computed as its composition materializes the Nq x Nk
// scores (and their exponentials) per head and streams them through memory
// several times; the CPU kernels of backends/cpu/support/Attention.c never
// form them (key tiles with an online softmax, FlashAttention-2's
// backward from the saved lse). Like the oneDNN convolutions
// (ConvToDnnl.cpp), the ops are taken aside while they are still kiln ops
// and become calls once buffers exist:
//
//   1. kiln-cpu-outline-attention, on kiln IR: each f32 kiln.attention and
//      kiln.attention_grad moves into a private function of its own,
//      marked with the kernel's descriptor (AttentionAbi.h); a call takes
//      its place. Bufferization gives the call its operand and result
//      buffers like any other; the function's body only allocates its
//      results (the function is never called). An f16 or bf16 one is
//      first rewritten as the f32 op between casts, its definition
//      (WidenedAttention.h); f64 ones are left to the composition.
//   2. kiln-cpu-attention-calls, on memrefs: each call of such a function
//      becomes an scf.parallel over (batch entry, query tile) calling the
//      forward kernel, or over batch entries calling the backward one; the
//      loops become OpenMP parallel loops with the rest
//      (kiln-cpu-parallel-loops, told each iteration's work through
//      `kiln.body_work`). The functions, now uncalled, are erased.
//
// The descriptor is fixed at compile time: shapes, the causal flag, the
// scale, the query tile and the mask's broadcast strides.
//
//===----------------------------------------------------------------------===//

#include "common/BufferAddress.h"
#include "common/ForwardedResults.h"
#include "common/LibraryCalls.h"
#include "common/OutlinedOps.h"
#include "common/WidenedAttention.h"
#include "support/AttentionAbi.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/bit.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUOUTLINEATTENTION
#define GEN_PASS_DEF_KILNCPUATTENTIONCALLS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The function attributes: the descriptor, and the mark of a backward.
static constexpr llvm::StringLiteral kAttentionAttr = "kiln.cpu_attention";
static constexpr llvm::StringLiteral kBackwardAttr =
    "kiln.cpu_attention_backward";
static constexpr llvm::StringLiteral kForwardFunction =
    "kiln_attention_f32_forward";
static constexpr llvm::StringLiteral kBackwardFunction =
    "kiln_attention_f32_backward";

/// The kernel descriptor of an attention on `query`, `key`, `value` and
/// `mask` (null for none).
static SmallVector<int64_t> descriptorOf(Value query, Value key, Value value,
                                         Value mask, double scale,
                                         bool causal, int64_t queryTile) {
  auto q = cast<RankedTensorType>(query.getType());
  int64_t rank = q.getRank();
  ArrayRef<int64_t> leading = q.getShape().drop_back(2);
  int64_t batch = 1;
  for (int64_t d : leading)
    batch *= d;
  SmallVector<int64_t> descriptor(KILN_ATTENTION_HEADER_SIZE, 0);
  descriptor[KILN_ATTENTION_BATCH] = batch;
  descriptor[KILN_ATTENTION_QUERIES] = q.getDimSize(rank - 2);
  descriptor[KILN_ATTENTION_KEYS] =
      cast<RankedTensorType>(key.getType()).getDimSize(rank - 2);
  descriptor[KILN_ATTENTION_HEAD_DIM] = q.getDimSize(rank - 1);
  descriptor[KILN_ATTENTION_VALUE_DIM] =
      cast<RankedTensorType>(value.getType()).getDimSize(rank - 1);
  descriptor[KILN_ATTENTION_FLAGS] =
      (causal ? KILN_ATTENTION_CAUSAL : 0) | (mask ? KILN_ATTENTION_MASKED : 0);
  descriptor[KILN_ATTENTION_SCALE_BITS] = llvm::bit_cast<int64_t>(scale);
  descriptor[KILN_ATTENTION_QUERY_TILE] = queryTile;
  descriptor[KILN_ATTENTION_LEADING_RANK] = rank - 2;
  llvm::append_range(descriptor, leading);
  if (mask) {
    // Row-major strides of the mask's own shape, 0 where it broadcasts.
    ArrayRef<int64_t> shape = cast<RankedTensorType>(mask.getType()).getShape();
    SmallVector<int64_t> strides(rank, 0);
    for (int64_t d = rank - 1, stride = 1; d >= 0; --d) {
      strides[d] = shape[d] == 1 ? 0 : stride;
      stride *= shape[d];
    }
    llvm::append_range(descriptor, strides);
  }
  return descriptor;
}

/// Whether every operand and result of `op` is an f32 tensor.
static bool allF32(Operation *op) {
  auto isF32 = [](Type type) {
    return cast<RankedTensorType>(type).getElementType().isF32();
  };
  return llvm::all_of(op->getOperandTypes(), isF32) &&
         llvm::all_of(op->getResultTypes(), isF32);
}

namespace {

struct KilnCpuOutlineAttentionPass
    : mlir::kiln::impl::KilnCpuOutlineAttentionBase<
          KilnCpuOutlineAttentionPass> {
  using KilnCpuOutlineAttentionBase::KilnCpuOutlineAttentionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (queryTile < 1) {
      module.emitError("kiln-cpu-outline-attention: query-tile must be at "
                       "least 1, got ")
          << static_cast<int64_t>(queryTile);
      return signalPassFailure();
    }
    // Half precision on the f32 kernels (WidenedAttention.h); f64 stays
    // for the composition.
    SmallVector<Operation *> ops =
        mlir::kiln::attentionsForKernels(module, allF32);
    SymbolTable symbols(module);
    OpBuilder builder(&getContext());
    for (Operation *op : ops) {
      SmallVector<int64_t> descriptor;
      bool backward = false;
      if (auto attention = dyn_cast<mlir::kiln::AttentionOp>(op)) {
        descriptor = descriptorOf(
            attention.getQuery(), attention.getKey(), attention.getValue(),
            attention.getMask(), attention.getScale().convertToDouble(),
            attention.getCausal(), queryTile);
      } else {
        auto grad = cast<mlir::kiln::AttentionGradOp>(op);
        descriptor = descriptorOf(
            grad.getQuery(), grad.getKey(), grad.getValue(), grad.getMask(),
            grad.getScale().convertToDouble(), grad.getCausal(), queryTile);
        backward = true;
      }
      // kiln-cpu-attention-calls replaces every call before anything
      // runs (the op itself would be compiled as its composition, N x N
      // buffers and all, only to be erased).
      func::FuncOp function =
          mlir::kiln::outlineWithPlaceholderBody(op, "kiln_attention", symbols);
      function->setAttr(kAttentionAttr,
                        builder.getDenseI64ArrayAttr(descriptor));
      if (backward)
        function->setAttr(kBackwardAttr, builder.getUnitAttr());
    }
  }
};

struct KilnCpuAttentionCallsPass
    : mlir::kiln::impl::KilnCpuAttentionCallsBase<KilnCpuAttentionCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto calls = mlir::kiln::callsOfMarkedFunctions(module, kAttentionAttr);
    if (calls.empty())
      return;

    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type i64 = builder.getI64Type();
    auto declare = [&](StringRef name, unsigned pointers, unsigned integers) {
      SmallVector<Type> inputs(pointers, pointer);
      inputs.append(integers, i64);
      return mlir::kiln::declareLibraryFunction(
          module, name, builder.getFunctionType(inputs, {}));
    };
    func::FuncOp forward = declare(kForwardFunction, 7, 2);
    func::FuncOp backwardKernel = declare(kBackwardFunction, 11, 1);
    if (!forward || !backwardKernel)
      return signalPassFailure();

    SymbolTable symbols(module);
    SetVector<Operation *> callees;
    llvm::DenseMap<Operation *, memref::GlobalOp> descriptors;
    for (auto [call, callee] : calls) {
      auto descriptor = callee->getAttrOfType<DenseI64ArrayAttr>(kAttentionAttr);
      bool backward = callee->hasAttr(kBackwardAttr);
      ArrayRef<int64_t> d = descriptor.asArrayRef();
      bool wellFormed = d.size() >= KILN_ATTENTION_HEADER_SIZE &&
                        d[KILN_ATTENTION_LEADING_RANK] >= 0 &&
                        d[KILN_ATTENTION_QUERY_TILE] >= 1;
      bool masked = wellFormed && (d[KILN_ATTENTION_FLAGS] & KILN_ATTENTION_MASKED);
      if (wellFormed) {
        int64_t rank = d[KILN_ATTENTION_LEADING_RANK];
        size_t size = KILN_ATTENTION_HEADER_SIZE + rank + (masked ? rank + 2 : 0);
        wellFormed = d.size() == size;
      }
      if (!wellFormed) {
        callee.emitError() << "'" << kAttentionAttr
                           << "' must hold the header of AttentionAbi.h, the "
                              "leading dims and, with a mask, its strides";
        return signalPassFailure();
      }
      unsigned expected = (backward ? 6 + 3 : 3 + 2) + (masked ? 1 : 0);
      if (call.getNumOperands() != expected || call.getNumResults() != 0 ||
          !llvm::all_of(call.getOperandTypes(), [](Type t) {
            auto memref = dyn_cast<MemRefType>(t);
            return memref && memref.getElementType().isF32();
          })) {
        call.emitError() << "expected a call of '" << callee.getSymName()
                         << "' on f32 buffers: the attention's operands and "
                            "then its result buffers";
        return signalPassFailure();
      }
      Location loc = call.getLoc();
      builder.setInsertionPoint(callee);
      memref::GlobalOp &global = descriptors[callee];
      if (!global)
        global = mlir::kiln::createI64Global(builder, loc, symbols,
                                             "kiln_attention_descriptor", d,
                                             /*constant=*/true,
                                             /*alignment=*/nullptr);

      builder.setInsertionPoint(call);
      auto pointerTo = [&](Value memref) -> Value {
        mlir::kiln::BufferAddress address =
            mlir::kiln::bufferAddressOf(builder, loc, memref, 4);
        return builder.create<LLVM::IntToPtrOp>(loc, pointer, address.address);
      };
      Value descriptorPointer = mlir::kiln::globalPointer(builder, loc, global);
      // Returned results written straight into the out-params.
      unsigned outputs = backward ? 3 : 2;
      SmallVector<unsigned> resultIndices;
      for (unsigned i = expected - outputs; i < expected; ++i)
        resultIndices.push_back(i);
      SmallVector<Operation *> dead;
      SmallVector<Value> operands(call.getOperands());
      for (auto [index, buffer] : llvm::zip(
               resultIndices,
               mlir::kiln::forwardedResults(call, resultIndices, dead)))
        operands[index] = buffer;
      SmallVector<Value> buffers;
      for (Value operand : operands)
        buffers.push_back(pointerTo(operand));
      Value null = builder.create<LLVM::ZeroOp>(loc, pointer);
      SmallVector<Value> pointers{descriptorPointer};
      if (!backward) {
        // (q, k, v[, mask], out, lse)
        pointers.append({buffers[0], buffers[1], buffers[2],
                         masked ? buffers[3] : null, buffers[expected - 2],
                         buffers[expected - 1]});
      } else {
        // (q, k, v, out, lse, dout[, mask], dq, dk, dv)
        pointers.append({buffers[0], buffers[1], buffers[2],
                         masked ? buffers[6] : null, buffers[3], buffers[4],
                         buffers[5], buffers[expected - 3],
                         buffers[expected - 2], buffers[expected - 1]});
      }

      int64_t batch = d[KILN_ATTENTION_BATCH];
      int64_t queries = d[KILN_ATTENTION_QUERIES];
      int64_t tile = d[KILN_ATTENTION_QUERY_TILE];
      int64_t tiles = backward ? 1 : (queries + tile - 1) / tile;
      // Multiply-adds per iteration: two products of the rows by the keys
      // (five for the backward, over all rows).
      int64_t keys = d[KILN_ATTENTION_KEYS];
      int64_t features =
          d[KILN_ATTENTION_HEAD_DIM] + d[KILN_ATTENTION_VALUE_DIM];
      int64_t work = backward ? queries * keys * features * 5 / 2
                              : std::min(tile, queries) * keys * features;
      Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
      Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
      SmallVector<Value> upper{builder.create<arith::ConstantIndexOp>(loc, batch)};
      SmallVector<Value> lower{zero}, steps{one};
      if (!backward) {
        upper.push_back(builder.create<arith::ConstantIndexOp>(loc, tiles));
        lower.push_back(zero);
        steps.push_back(one);
      }
      auto loop = builder.create<scf::ParallelOp>(loc, lower, upper, steps);
      loop->setAttr(kiln::kBodyWorkAttrName,
                    builder.getI64IntegerAttr(std::max<int64_t>(work, 1)));
      {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(loop.getBody()->getTerminator());
        SmallVector<Value> operands(pointers);
        for (Value index : loop.getInductionVars())
          operands.push_back(
              builder.create<arith::IndexCastOp>(loc, i64, index));
        builder.create<func::CallOp>(loc, backward ? backwardKernel : forward,
                                     operands);
      }
      call->erase();
      for (Operation *op : dead)
        op->erase();
      callees.insert(callee);
    }
    mlir::kiln::eraseUncalled(module, callees);
  }
};

} // namespace
