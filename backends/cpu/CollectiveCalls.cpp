//===- CollectiveCalls.cpp - Collectives as calls into the communicator ---===//
//
// After kiln-decompose-collectives every collective is in a flat form
// (kiln/CollectiveAbi.h). This pass turns each into calls of the runtime's
// communicator, on the buffers of its operand and result:
//
//   %p = kiln.all_reduce_start %x ...         %in = bufferization.to_memref %x read_only
//   ...                                  ->   %out = memref.alloc()
//   %r = kiln.collective_wait %p, %x          %h = call @kiln_comm_start(kind, ..., %in, %out, ...)
//                                             ...
//                                             call @kiln_comm_wait(%h, %in', %out)
//                                             %r = bufferization.to_tensor %out restrict writable
//
// The wait names the operand's buffer again (`%in'`, a second read-only
// to_memref), so bufferization keeps it unchanged and alive until then.
// Synchronous broadcasts, all-to-alls and permutes wait right away;
// kiln.rank becomes a call of @kiln_comm_rank.
//
// The @kiln_comm_* functions are defined here, each a call through the
// exported pointer slot `kiln_comm_fn_<name>` that the runtime fills when it
// loads the module: the code never links a communication library, and a
// module without collectives has no slots.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/IR/ElementTypes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUCOLLECTIVECALLS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Builds the calls; owns the module-level pieces (slot globals, the
/// @kiln_comm_* functions, the constant tables of groups and pairs).
class CallBuilder {
public:
  explicit CallBuilder(ModuleOp module)
      : module(module), symbols(module), context(module.getContext()),
        ptr(LLVM::LLVMPointerType::get(context)),
        i32(IntegerType::get(context, 32)), i64(IntegerType::get(context, 64)) {}

  LogicalResult lower(Operation *op);

private:
  /// @kiln_comm_<name>(inputs) -> results, calling through its slot.
  func::FuncOp function(StringRef name, TypeRange inputs, TypeRange results);
  /// A constant i64 table; equal tables share one global.
  Value table(OpBuilder &b, Location loc, ArrayRef<int64_t> values);
  Value pointerTo(OpBuilder &b, Location loc, Value memref);
  Value constant(OpBuilder &b, Location loc, Type type, int64_t value) {
    return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, value));
  }
  /// Calls start for `op` on `operand`; returns the handle and the output
  /// buffer.
  std::pair<Value, Value> start(OpBuilder &b, Operation *op, Value operand,
                                RankedTensorType resultType, int32_t kind,
                                int32_t reduction, int64_t root);
  /// Calls wait, then returns the output buffer as the op's tensor.
  Value wait(OpBuilder &b, Location loc, Value handle, Value operand,
             Value output, RankedTensorType resultType);

  ModuleOp module;
  SymbolTable symbols;
  MLIRContext *context;
  Type ptr, i32, i64;
  llvm::StringMap<func::FuncOp> functions;
  std::map<std::vector<int64_t>, LLVM::GlobalOp> tables;
};
} // namespace

func::FuncOp CallBuilder::function(StringRef name, TypeRange inputs,
                                   TypeRange results) {
  auto found = functions.find(name);
  if (found != functions.end())
    return found->second;
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  // The slot: an exported pointer the runtime overwrites at load time.
  auto slot = b.create<LLVM::GlobalOp>(
      loc, ptr, /*isConstant=*/false, LLVM::Linkage::External,
      (KILN_COMM_SLOT_PREFIX + name).str(), Attribute());
  {
    Block *init = b.createBlock(&slot.getInitializerRegion());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(init);
    b.create<LLVM::ReturnOp>(loc, b.create<LLVM::ZeroOp>(loc, ptr).getResult());
  }
  b.setInsertionPointToEnd(module.getBody());
  auto func = b.create<func::FuncOp>(loc, ("kiln_comm_" + name).str(),
                                     b.getFunctionType(inputs, results));
  func.setPrivate();
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value address = b.create<LLVM::AddressOfOp>(loc, slot);
  Value callee = b.create<LLVM::LoadOp>(loc, ptr, address);
  SmallVector<Value> operands = {callee};
  llvm::append_range(operands, body->getArguments());
  Type resultType = results.empty() ? LLVM::LLVMVoidType::get(context)
                                    : results.front();
  auto call = b.create<LLVM::CallOp>(
      loc, LLVM::LLVMFunctionType::get(resultType, llvm::to_vector(inputs)),
      operands);
  b.create<func::ReturnOp>(loc, call.getResults());
  symbols.insert(func);
  functions[name] = func;
  return func;
}

Value CallBuilder::table(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  std::vector<int64_t> key(values.begin(), values.end());
  LLVM::GlobalOp &global = tables[key];
  if (!global) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    auto arrayType = LLVM::LLVMArrayType::get(i64, values.size());
    global = top.create<LLVM::GlobalOp>(
        loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal,
        "kiln_comm_table", top.getI64TensorAttr(values));
    symbols.insert(global);
  }
  return b.create<LLVM::AddressOfOp>(loc, global);
}

Value CallBuilder::pointerTo(OpBuilder &b, Location loc, Value memref) {
  Value index = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Value address = b.create<arith::IndexCastOp>(loc, i64, index);
  return b.create<LLVM::IntToPtrOp>(loc, ptr, address);
}

static MemRefType bufferType(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}

std::pair<Value, Value> CallBuilder::start(OpBuilder &b, Operation *op,
                                           Value operand,
                                           RankedTensorType resultType,
                                           int32_t kind, int32_t reduction,
                                           int64_t root) {
  Location loc = op->getLoc();
  auto operandType = cast<RankedTensorType>(operand.getType());
  Value input = b.create<bufferization::ToMemrefOp>(
      loc, bufferType(operandType), operand, /*read_only=*/true);
  Value output = b.create<memref::AllocOp>(loc, bufferType(resultType));

  Value groups, groupCount, groupSize, pairs, pairCount;
  if (auto permute = dyn_cast<CollectivePermuteOp>(op)) {
    groups = b.create<LLVM::ZeroOp>(loc, ptr);
    groupCount = groupSize = constant(b, loc, i64, 0);
    ArrayRef<int64_t> flat = permute.getPairs();
    pairs = flat.empty() ? b.create<LLVM::ZeroOp>(loc, ptr).getResult()
                         : table(b, loc, flat);
    pairCount = constant(b, loc, i64, flat.size() / 2);
  } else {
    ArrayRef<int64_t> ranks = op->getAttrOfType<DenseI64ArrayAttr>("groups");
    int64_t size = op->getAttrOfType<IntegerAttr>("group_size").getInt();
    groups = table(b, loc, ranks);
    groupCount = constant(b, loc, i64, ranks.size() / size);
    groupSize = constant(b, loc, i64, size);
    pairs = b.create<LLVM::ZeroOp>(loc, ptr);
    pairCount = constant(b, loc, i64, 0);
  }
  auto dtype = ::kiln::classifyElementType(operandType.getElementType());
  SmallVector<Value> args = {
      constant(b, loc, i32, kind),
      constant(b, loc, i32, reduction),
      constant(b, loc, i32, static_cast<int64_t>(*dtype)),
      pointerTo(b, loc, input),
      pointerTo(b, loc, output),
      constant(b, loc, i64, operandType.getNumElements()),
      constant(b, loc, i64, root),
      groups,
      groupCount,
      groupSize,
      pairs,
      pairCount};
  SmallVector<Type> types = {i32, i32, i32, ptr, ptr, i64,
                             i64, ptr, i64, i64, ptr, i64};
  func::FuncOp startFn = function("start", types, {i64});
  Value handle = b.create<func::CallOp>(loc, startFn, args).getResult(0);
  return {handle, output};
}

Value CallBuilder::wait(OpBuilder &b, Location loc, Value handle,
                        Value operand, Value output,
                        RankedTensorType resultType) {
  auto operandType = cast<RankedTensorType>(operand.getType());
  Value input = b.create<bufferization::ToMemrefOp>(
      loc, bufferType(operandType), operand, /*read_only=*/true);
  func::FuncOp waitFn = function("wait", {i64, ptr, ptr}, {});
  b.create<func::CallOp>(
      loc, waitFn,
      ValueRange{handle, pointerTo(b, loc, input), pointerTo(b, loc, output)});
  return b.create<bufferization::ToTensorOp>(loc, resultType, output,
                                             /*restrict=*/true,
                                             /*writable=*/true);
}

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

LogicalResult CallBuilder::lower(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto fail = [&](const Twine &what) {
    return op->emitOpError(what + " (kiln-decompose-collectives runs first)");
  };

  if (auto rank = dyn_cast<RankOp>(op)) {
    Value value =
        b.create<func::CallOp>(loc, function("rank", {}, {i64}), ValueRange{})
            .getResult(0);
    rank.replaceAllUsesWith(
        b.create<tensor::FromElementsOp>(loc, rank.getType(), value)
            .getResult());
    op->erase();
    return success();
  }

  // The synchronous collectives the runtime has no start form for.
  int32_t kind = -1;
  int64_t root = 0;
  if (auto broadcast = dyn_cast<CollectiveBroadcastOp>(op)) {
    kind = KILN_COLLECTIVE_BROADCAST;
    root = broadcast.getRoot();
  } else if (auto allToAll = dyn_cast<AllToAllOp>(op)) {
    if (allToAll.getSplitDim() != 0 || allToAll.getConcatDim() != 0)
      return fail("exchanges blocks along a dimension other than the first");
    kind = KILN_COLLECTIVE_ALL_TO_ALL;
  } else if (isa<CollectivePermuteOp>(op)) {
    kind = KILN_COLLECTIVE_PERMUTE;
  }
  if (kind >= 0) {
    Value operand = op->getOperand(0);
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    auto [handle, output] = start(b, op, operand, type, kind, 0, root);
    op->getResult(0).replaceAllUsesWith(
        wait(b, loc, handle, operand, output, type));
    op->erase();
    return success();
  }

  int32_t reduction = 0;
  if (auto allReduce = dyn_cast<AllReduceStartOp>(op)) {
    kind = KILN_COLLECTIVE_ALL_REDUCE;
    reduction = reductionCode(allReduce.getKind());
  } else if (auto gather = dyn_cast<AllGatherStartOp>(op)) {
    if (gather.getDimension() != 0)
      return fail("gathers along a dimension other than the first");
    kind = KILN_COLLECTIVE_ALL_GATHER;
  } else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op)) {
    if (scatter.getDimension() != 0)
      return fail("scatters along a dimension other than the first");
    kind = KILN_COLLECTIVE_REDUCE_SCATTER;
    reduction = reductionCode(scatter.getKind());
  } else {
    return fail("is not in a form the communicator runs");
  }
  if (reduction < 0)
    return fail("still reduces by mean");
  auto waitOp = cast<CollectiveWaitOp>(*op->getResult(0).user_begin());
  auto type = cast<RankedTensorType>(waitOp.getType());
  auto [handle, output] =
      start(b, op, op->getOperand(0), type, kind, reduction, 0);
  b.setInsertionPoint(waitOp);
  Value result =
      wait(b, waitOp.getLoc(), handle, waitOp.getSource(), output, type);
  waitOp.replaceAllUsesWith(result);
  waitOp->erase();
  op->erase();
  return success();
}

namespace {
struct KilnCpuCollectiveCallsPass
    : mlir::kiln::impl::KilnCpuCollectiveCallsBase<KilnCpuCollectiveCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> collectives;
    module.walk([&](Operation *op) {
      if (isa<RankOp, AllReduceOp, AllGatherOp, ReduceScatterOp,
              CollectiveBroadcastOp, AllToAllOp, CollectivePermuteOp,
              AllReduceStartOp, AllGatherStartOp, ReduceScatterStartOp>(op))
        collectives.push_back(op);
    });
    if (collectives.empty())
      return;
    CallBuilder builder(module);
    for (Operation *op : collectives)
      if (failed(builder.lower(op)))
        return signalPassFailure();
  }
};
} // namespace
