//===- CollectiveCalls.cpp - Collectives as calls into the communicator ---===//
//
// After kiln-decompose-collectives every collective is in a flat form
// (kiln/CollectiveAbi.h): a start op and its kiln.collective_wait, or a
// synchronous collective_broadcast, all_to_all (leading blocks) or
// collective_permute. These stay kiln ops until one-shot bufferization,
// which knows them through the BufferizableOpInterface models below, so
// that the analysis sees what they do to memory:
//
//   - a start op reads its operand and allocates its result; it bufferizes
//     into `@kiln_comm_start(kind, ..., %operand_buffer, %result_buffer,
//     ...) -> handle`;
//   - kiln.collective_wait writes the pending buffer in place (its result
//     is that buffer) and reads `source`, the start's operand, so the
//     analysis keeps that buffer unchanged until here; it bufferizes into
//     `@kiln_comm_wait(handle, %source_buffer, %pending_buffer)`, the
//     handle being the result of the start call that fills that buffer;
//   - the synchronous collectives read their operand and allocate their
//     result, and call start and wait at once.
// The buffers are passed to the calls as memrefs, so every later analysis
// (memory planning, deallocation) sees them used by the calls; only the
// @kiln_comm_* functions, defined here one per signature, take their
// addresses and call through the exported pointer slots
// `kiln_comm_fn_<name>` that the runtime fills when it loads the module.
// The code links no communication library, and a module without
// collectives gets no slots.
//
// The kiln-collective-calls pass lowers kiln.rank (a call of
// @kiln_comm_rank) before the kiln ops are lowered.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/IR/ElementTypes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCOLLECTIVECALLS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::bufferization;

//===----------------------------------------------------------------------===//
// The @kiln_comm_* functions and their slots
//===----------------------------------------------------------------------===//

/// The attribute that marks the functions this file defines (and its
/// tables), valued by the name of their slot.
static constexpr const char *kCommFunctionAttr = kCommFunctionAttrName;

static Type pointerType(MLIRContext *context) {
  return LLVM::LLVMPointerType::get(context);
}

/// The exported slot `kiln_comm_fn_<name>`, made on first use.
static LLVM::GlobalOp slotFor(ModuleOp module, StringRef name) {
  std::string symbol = (KILN_COMM_SLOT_PREFIX + name).str();
  if (auto global = module.lookupSymbol<LLVM::GlobalOp>(symbol))
    return global;
  Location loc = module.getLoc();
  Type ptr = pointerType(module.getContext());
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto global = b.create<LLVM::GlobalOp>(loc, ptr, /*isConstant=*/false,
                                         LLVM::Linkage::External, symbol,
                                         Attribute());
  Block *init = b.createBlock(&global.getInitializerRegion());
  b.setInsertionPointToStart(init);
  b.create<LLVM::ReturnOp>(loc, b.create<LLVM::ZeroOp>(loc, ptr).getResult());
  return global;
}

/// The address of the first element of `memref` (an argument of a
/// @kiln_comm_* function): its aligned pointer plus its offset.
static Value addressOf(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t elementBytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Value offset =
      b.create<memref::ExtractStridedMetadataOp>(loc, memref).getOffset();
  Value bytes = b.create<arith::MulIOp>(
      loc, offset, b.create<arith::ConstantIndexOp>(loc, elementBytes));
  Value address = b.create<arith::IndexCastOp>(
      loc, b.getI64Type(), b.create<arith::AddIOp>(loc, base, bytes));
  return b.create<LLVM::IntToPtrOp>(loc, pointerType(b.getContext()),
                                    address);
}

/// The function `@kiln_comm_<name>` of this signature: it passes its scalar
/// arguments, and the addresses of its memref arguments, to the function in
/// the slot `kiln_comm_fn_<name>`. One per signature, made on first use.
static func::FuncOp commFunction(ModuleOp module, StringRef name,
                                 FunctionType type) {
  for (auto func : module.getOps<func::FuncOp>())
    if (auto marker = func->getAttrOfType<StringAttr>(kCommFunctionAttr))
      if (marker.getValue() == name && func.getFunctionType() == type)
        return func;
  LLVM::GlobalOp slot = slotFor(module, name);
  Location loc = module.getLoc();
  MLIRContext *context = module.getContext();
  auto func = func::FuncOp::create(loc, ("kiln_comm_" + name).str(), type);
  func.setPrivate();
  func->setAttr(kCommFunctionAttr, StringAttr::get(context, name));
  // Inserting renames it if a function of another signature has the name.
  SymbolTable(module).insert(func);
  OpBuilder b(context);
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  Type ptr = pointerType(context);
  SmallVector<Value> operands = {
      b.create<LLVM::LoadOp>(loc, ptr, b.create<LLVM::AddressOfOp>(loc, slot))};
  SmallVector<Type> slotInputs;
  for (Value argument : body->getArguments()) {
    if (isa<MemRefType>(argument.getType()))
      argument = addressOf(b, loc, argument);
    operands.push_back(argument);
    slotInputs.push_back(argument.getType());
  }
  Type resultType = type.getNumResults() == 0 ? LLVM::LLVMVoidType::get(context)
                                              : type.getResult(0);
  auto call = b.create<LLVM::CallOp>(
      loc, LLVM::LLVMFunctionType::get(resultType, slotInputs), operands);
  b.create<func::ReturnOp>(loc, call.getResults());
  return func;
}

/// A constant i64 table (replica groups, permute pairs) as a global; equal
/// tables share one.
static Value tableOf(OpBuilder &b, Location loc, ModuleOp module,
                     ArrayRef<int64_t> values) {
  DenseIntElementsAttr contents = b.getI64TensorAttr(values);
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (global->hasAttr(kCommFunctionAttr) && global.getValueAttr() == contents)
      return b.create<LLVM::AddressOfOp>(loc, global);
  OpBuilder detached(b.getContext());
  auto global = detached.create<LLVM::GlobalOp>(
      loc, LLVM::LLVMArrayType::get(b.getI64Type(), values.size()),
      /*isConstant=*/true, LLVM::Linkage::Internal, "kiln_comm_table",
      contents);
  global->setAttr(kCommFunctionAttr, b.getStringAttr("table"));
  // Inserting (at the front) renames it if another table has the name.
  SymbolTable(module).insert(global, module.getBody()->begin());
  return b.create<LLVM::AddressOfOp>(loc, global);
}

//===----------------------------------------------------------------------===//
// Calls on buffers
//===----------------------------------------------------------------------===//

/// `buffer` itself where it is dense and row-major, else a copy that is:
/// the communicator reads and writes flat elements.
static Value denseBuffer(RewriterBase &rewriter, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getLayout().isIdentity())
    return buffer;
  Value copy = rewriter.create<memref::AllocOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType()));
  rewriter.create<linalg::CopyOp>(loc, buffer, copy);
  return copy;
}

namespace {
/// What one start call needs besides the buffers.
struct Exchange {
  int32_t kind = 0;
  int32_t reduction = 0;
  int64_t root = 0;
};
} // namespace

static int32_t reductionCode(CollectiveReduction kind) {
  switch (kind) {
  case CollectiveReduction::Sum:
    return KILN_REDUCTION_SUM;
  case CollectiveReduction::Max:
    return KILN_REDUCTION_MAX;
  case CollectiveReduction::Min:
    return KILN_REDUCTION_MIN;
  case CollectiveReduction::Mean:
    break;
  }
  return -1;
}

/// What `op` exchanges, or failure (with a diagnostic) for a form the
/// communicator does not run.
static FailureOr<Exchange> exchangeOf(Operation *op) {
  Exchange exchange;
  auto fail = [&](const Twine &what) {
    return op->emitOpError(what + " (kiln-decompose-collectives runs first)");
  };
  if (auto broadcast = dyn_cast<CollectiveBroadcastOp>(op)) {
    exchange.kind = KILN_COLLECTIVE_BROADCAST;
    exchange.root = broadcast.getRoot();
  } else if (auto allToAll = dyn_cast<AllToAllOp>(op)) {
    if (allToAll.getSplitDim() != 0 || allToAll.getConcatDim() != 0)
      return fail("exchanges blocks along a dimension other than the first");
    exchange.kind = KILN_COLLECTIVE_ALL_TO_ALL;
  } else if (isa<CollectivePermuteOp>(op)) {
    exchange.kind = KILN_COLLECTIVE_PERMUTE;
  } else if (auto allReduce = dyn_cast<AllReduceStartOp>(op)) {
    exchange.kind = KILN_COLLECTIVE_ALL_REDUCE;
    exchange.reduction = reductionCode(allReduce.getKind());
  } else if (auto gather = dyn_cast<AllGatherStartOp>(op)) {
    if (gather.getDimension() != 0)
      return fail("gathers along a dimension other than the first");
    exchange.kind = KILN_COLLECTIVE_ALL_GATHER;
  } else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op)) {
    if (scatter.getDimension() != 0)
      return fail("scatters along a dimension other than the first");
    exchange.kind = KILN_COLLECTIVE_REDUCE_SCATTER;
    exchange.reduction = reductionCode(scatter.getKind());
  } else {
    return fail("is not in a form the communicator runs");
  }
  if (exchange.reduction < 0)
    return fail("still reduces by mean");
  return exchange;
}

/// Calls @kiln_comm_start for `op` on `input` into a new `output` buffer.
static func::CallOp startCall(RewriterBase &rewriter, Operation *op,
                              const Exchange &exchange, Value input,
                              Value output) {
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  MLIRContext *context = op->getContext();
  Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
  Type ptr = pointerType(context);
  auto constant = [&](Type type, int64_t value) -> Value {
    return rewriter.create<arith::ConstantOp>(
        loc, rewriter.getIntegerAttr(type, value));
  };
  Value groups, groupCount, groupSize, pairs, pairCount;
  if (auto permute = dyn_cast<CollectivePermuteOp>(op)) {
    groups = rewriter.create<LLVM::ZeroOp>(loc, ptr);
    groupCount = groupSize = constant(i64, 0);
    ArrayRef<int64_t> flat = permute.getPairs();
    pairs = flat.empty() ? rewriter.create<LLVM::ZeroOp>(loc, ptr).getResult()
                         : tableOf(rewriter, loc, module, flat);
    pairCount = constant(i64, flat.size() / 2);
  } else {
    ArrayRef<int64_t> ranks = op->getAttrOfType<DenseI64ArrayAttr>("groups");
    int64_t size = op->getAttrOfType<IntegerAttr>("group_size").getInt();
    groups = tableOf(rewriter, loc, module, ranks);
    groupCount = constant(i64, ranks.size() / size);
    groupSize = constant(i64, size);
    pairs = rewriter.create<LLVM::ZeroOp>(loc, ptr);
    pairCount = constant(i64, 0);
  }
  auto inputType = cast<MemRefType>(input.getType());
  auto dtype = ::kiln::classifyElementType(inputType.getElementType());
  SmallVector<Value> args = {constant(i32, exchange.kind),
                             constant(i32, exchange.reduction),
                             constant(i32, static_cast<int64_t>(*dtype)),
                             input,
                             output,
                             constant(i64, inputType.getNumElements()),
                             constant(i64, exchange.root),
                             groups,
                             groupCount,
                             groupSize,
                             pairs,
                             pairCount};
  func::FuncOp start = commFunction(
      module, "start",
      FunctionType::get(context, ValueRange(args).getTypes(), {i64}));
  return rewriter.create<func::CallOp>(loc, start, args);
}

static void waitCall(RewriterBase &rewriter, Location loc, Value handle,
                     Value input, Value output) {
  auto module =
      rewriter.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  SmallVector<Value> args = {handle, input, output};
  func::FuncOp wait = commFunction(
      module, "wait",
      FunctionType::get(rewriter.getContext(), ValueRange(args).getTypes(), {}));
  rewriter.create<func::CallOp>(loc, wait, args);
}

//===----------------------------------------------------------------------===//
// Bufferization models
//===----------------------------------------------------------------------===//

namespace {
/// A collective that reads its operand into a fresh result: the start ops,
/// and (waiting at once) the synchronous broadcast, all_to_all and permute.
template <typename OpTy, bool waitsAtOnce>
struct ExchangeModel
    : BufferizableOpInterface::ExternalModel<ExchangeModel<OpTy, waitsAtOnce>,
                                             OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options) const {
    FailureOr<Exchange> exchange = exchangeOf(op);
    if (failed(exchange))
      return failure();
    FailureOr<Value> operand = getBuffer(rewriter, op->getOperand(0), options);
    if (failed(operand))
      return failure();
    Location loc = op->getLoc();
    Value input = denseBuffer(rewriter, loc, *operand);
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Value output = rewriter.create<memref::AllocOp>(
        loc, MemRefType::get(resultType.getShape(),
                             resultType.getElementType()));
    func::CallOp start = startCall(rewriter, op, *exchange, input, output);
    if (waitsAtOnce)
      waitCall(rewriter, loc, start.getResult(0), input, output);
    replaceOpWithBufferizedValues(rewriter, op, output);
    return success();
  }
};

/// The start call whose output buffer is \p buffer, if any.
static func::CallOp startFilling(Value buffer) {
  for (Operation *user : buffer.getUsers())
    if (auto call = dyn_cast<func::CallOp>(user))
      if (call.getNumOperands() > 4 && call.getOperand(4) == buffer &&
          call.getNumResults() == 1)
        return call;
  return nullptr;
}

/// kiln.collective_wait: completes the pending buffer in place.
struct WaitModel
    : BufferizableOpInterface::ExternalModel<WaitModel, CollectiveWaitOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    // The exchange reads `source` until here, and the pending buffer holds
    // what it received: a copy of it (below) must copy its contents.
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &operand,
                               const AnalysisState &) const {
    return operand.getOperandNumber() == 0;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    if (operand.getOperandNumber() != 0)
      return {};
    return {{op->getResult(0), BufferRelation::Equivalent}};
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options) const {
    auto wait = cast<CollectiveWaitOp>(op);
    FailureOr<Value> pending = getBuffer(rewriter, wait.getPending(), options);
    if (failed(pending))
      return failure();
    // The start call that fills the pending buffer holds the handle.
    func::CallOp start = startFilling(*pending);
    if (!start) {
      // The analysis may bufferize the wait out of place (its result
      // yielded from a kiln.cond branch whose other branch yields an
      // input): the pending tensor is then copied into a new buffer just
      // before the wait. The exchange must complete before that copy.
      for (Operation *copy : pending->getUsers()) {
        Value from, to;
        if (auto memrefCopy = dyn_cast<memref::CopyOp>(copy)) {
          from = memrefCopy.getSource();
          to = memrefCopy.getTarget();
        } else if (auto linalgCopy = dyn_cast<linalg::CopyOp>(copy)) {
          from = linalgCopy.getInputs().front();
          to = linalgCopy.getOutputs().front();
        }
        if (to != *pending)
          continue;
        if (func::CallOp found = startFilling(from)) {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPoint(copy);
          waitCall(rewriter, op->getLoc(), found.getResult(0),
                   found.getOperand(3), from);
          replaceOpWithBufferizedValues(rewriter, op, *pending);
          return success();
        }
      }
      return op->emitOpError("finds no start call filling its buffer");
    }
    // The wait names the buffer the start read: `source`'s, or the dense
    // copy the start made of it.
    waitCall(rewriter, op->getLoc(), start.getResult(0), start.getOperand(3),
             *pending);
    replaceOpWithBufferizedValues(rewriter, op, *pending);
    return success();
  }
};
} // namespace

void mlir::kiln::registerCollectiveBufferizationModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, KilnDialect *) {
    AllReduceStartOp::attachInterface<ExchangeModel<AllReduceStartOp, false>>(
        *context);
    AllGatherStartOp::attachInterface<ExchangeModel<AllGatherStartOp, false>>(
        *context);
    ReduceScatterStartOp::attachInterface<
        ExchangeModel<ReduceScatterStartOp, false>>(*context);
    CollectiveBroadcastOp::attachInterface<
        ExchangeModel<CollectiveBroadcastOp, true>>(*context);
    AllToAllOp::attachInterface<ExchangeModel<AllToAllOp, true>>(*context);
    CollectivePermuteOp::attachInterface<
        ExchangeModel<CollectivePermuteOp, true>>(*context);
    CollectiveWaitOp::attachInterface<WaitModel>(*context);
  });
}

//===----------------------------------------------------------------------===//
// The pass: kiln.rank
//===----------------------------------------------------------------------===//

namespace {
struct KilnCollectiveCallsPass
    : mlir::kiln::impl::KilnCollectiveCallsBase<KilnCollectiveCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<RankOp> ranks;
    module.walk([&](RankOp op) { ranks.push_back(op); });
    for (RankOp op : ranks) {
      OpBuilder b(op);
      func::FuncOp rank = commFunction(
          module, "rank", b.getFunctionType({}, {b.getI64Type()}));
      Value value =
          b.create<func::CallOp>(op.getLoc(), rank, ValueRange{}).getResult(0);
      op.replaceAllUsesWith(
          b.create<tensor::FromElementsOp>(op.getLoc(), op.getType(), value)
              .getResult());
      op.erase();
    }
  }
};
} // namespace
