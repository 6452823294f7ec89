//===- GraphCalls.cpp - Whole calls as CUDA graphs ------------------------===//
//
// The host code of a call queues its kernels, copies and library calls on
// the stream one by one: a driver call each, a few microseconds of host
// time, on every call. Where a function's host code does nothing but
// queue device work, the runtime can capture one call's work into a CUDA
// graph and launch that graph on later calls with the same argument
// buffers (runtime/lib/cuda/CudaGraphCalls.cpp). This pass marks such
// functions by bracketing their entries:
//
//   kiln_entry_f(args):
//     if (kiln_cuda_graph_call_begin() == 0) {
//       the entry as it was
//       kiln_cuda_graph_call_end()
//     }
//
// A function qualifies when its host code (and that of the functions it
// calls) only queues device work: asynchronous launches, stream-ordered
// waits, device allocations, frees and copies, products, convolutions and
// constants' copies through the runtime, host control flow whose bounds
// and conditions come from no memory, and kiln.while loops and kiln.conds
// in kiln-cuda-graph-loops' and kiln-cuda-graph-conds' graph forms, whose
// conditional nodes the runtime puts into the call's graph (the host
// forms they also hold are what runs where the runtime has no graphs, and
// no call is captured there).
// Host work on host memory of the host code's own (heap buffers and stack
// slots no device work touches, as ownership-based deallocation's run-time
// alias check uses) queues nothing and is allowed too. Waits for the
// stream, copies from or to host memory and host reads or writes of any
// other buffer leave the function as it is. A capture unrolls the
// host code's other loops, so a function whose captured work would exceed
// kMaxGraphNodes nodes (or whose loop bounds are not constants) stays as
// it is too.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "DeviceWork.h"

#include "common/LibraryCalls.h"

#include "kiln/CudaLibraryAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <optional>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAGRAPHCALLS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// The most nodes (launches, copies, library calls) a call's graph may
/// hold: capturing and instantiating a graph takes time per node, once.
constexpr int64_t kMaxGraphNodes = 100000;

/// The runtime's calls a captured call may make besides its library work
/// and the calls of loops and conds in their graph forms (whose nodes go
/// into the call's graph) and of tuned call sites (TunedSites.h), decided
/// at the call's first run, which is not captured (isDeviceWorkCall):
/// constants' copies.
const StringLiteral kOtherCalls[] = {KILN_CUDA_COPY_CONSTANT_FUNCTION,
                                     KILN_CUDA_RESIDENT_CONSTANT_FUNCTION};

/// Which functions only queue device work, and how many graph nodes a call
/// of each makes.
class CallAnalysis {
public:
  explicit CallAnalysis(ModuleOp module) : symbols(module) {}

  /// The nodes a call of the entry `entry` makes, if its host code only
  /// queues device work and they are at most kMaxGraphNodes. The entry
  /// itself unpacks the runtime's argument array and calls the function.
  std::optional<int64_t> entryNodes(func::FuncOp entry) {
    if (!entry.getBody().hasOneBlock())
      return std::nullopt;
    int64_t nodes = 0;
    for (Operation &op : entry.front()) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        std::optional<int64_t> callee = calleeNodes(call);
        if (!callee)
          return std::nullopt;
        nodes += *callee;
        continue;
      }
      // Unpacking the argument array reads host memory that holds the
      // arguments' addresses, which the runtime's graphs are keyed by.
      if (isa<func::ReturnOp, UnrealizedConversionCastOp, LLVM::LoadOp>(op) ||
          (op.getNumRegions() == 0 && isMemoryEffectFree(&op)))
        continue;
      return std::nullopt;
    }
    if (nodes > kMaxGraphNodes)
      return std::nullopt;
    return nodes;
  }

private:
  /// What a function's analysis found: the nodes a call makes, and whether
  /// its host code reads or writes memory its arguments point to (which
  /// its callers must then pass host memory of their own).
  struct FunctionInfo {
    std::optional<int64_t> nodes;
    bool touchesArguments = false;
  };

  /// Whether `value` is host memory the host code allocated itself (a
  /// heap buffer or a stack slot), through views and casts: memory no
  /// device work reads or writes (a copy from or to it is refused), such
  /// as the buffers of the deallocation's run-time alias check
  /// (bufferization's dealloc_helper).
  static bool ownHostMemory(Value value) {
    Value root = kiln::rootThroughMetadata(value);
    return root.getDefiningOp<memref::AllocOp>() ||
           root.getDefiningOp<memref::AllocaOp>();
  }

  std::optional<int64_t> calleeNodes(func::CallOp call) {
    if (kiln::isDeviceWorkCall(call.getCallee(), kOtherCalls))
      return 1;
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal())
      return std::nullopt;
    // A function being analyzed calls itself: not a static graph (its
    // entry's nodes are unknown until its analysis ends).
    auto [known, first] = functions.try_emplace(callee, FunctionInfo());
    if (first) {
      func::FuncOp caller = analyzing;
      bool callerTouches = touchesArguments;
      analyzing = callee;
      touchesArguments = false;
      std::optional<int64_t> nodes = regionNodes(callee.getBody());
      functions[callee] = {nodes, touchesArguments};
      analyzing = caller;
      touchesArguments = callerTouches;
    }
    const FunctionInfo &info = functions[callee];
    if (info.touchesArguments)
      for (Value operand : call.getOperands())
        if (isa<MemRefType>(operand.getType()) && !ownHostMemory(operand))
          return std::nullopt;
    return info.nodes;
  }

  /// Whether the host code may read or write `memref` (of a load or a
  /// store): host memory of its own, or an argument of the function being
  /// analyzed (which its callers must pass host memory of their own).
  bool hostAccessible(Value memref) {
    if (ownHostMemory(memref))
      return true;
    auto argument = dyn_cast<BlockArgument>(kiln::rootThroughMetadata(memref));
    if (!argument || !analyzing ||
        argument.getOwner()->getParentOp() != analyzing.getOperation())
      return false;
    touchesArguments = true;
    return true;
  }

  std::optional<int64_t> regionNodes(Region &region) {
    int64_t nodes = 0;
    for (Block &block : region)
      for (Operation &op : block) {
        std::optional<int64_t> inner = opNodes(op);
        if (!inner)
          return std::nullopt;
        nodes += *inner;
        if (nodes > kMaxGraphNodes)
          return std::nullopt;
      }
    return nodes;
  }

  std::optional<int64_t> opNodes(Operation &op) {
    if (auto launch = dyn_cast<gpu::LaunchOp>(op))
      return launch.getAsyncToken() ? std::optional<int64_t>(1) : std::nullopt;
    if (auto call = dyn_cast<func::CallOp>(op))
      return calleeNodes(call);
    if (isa<gpu::MemcpyOp>(op))
      return kiln::queuesDeviceWorkOnly(&op, kOtherCalls)
                 ? std::optional<int64_t>(1)
                 : std::nullopt;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return hostAccessible(load.getMemRef()) ? std::optional<int64_t>(0)
                                              : std::nullopt;
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return hostAccessible(store.getMemRef()) ? std::optional<int64_t>(0)
                                               : std::nullopt;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
      return ownHostMemory(dealloc.getMemref()) ? std::optional<int64_t>(0)
                                                : std::nullopt;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      std::optional<int64_t> trips = kiln::constantTripCount(loop);
      std::optional<int64_t> body = regionNodes(loop.getRegion());
      // A loop of host work only (the alias check's) may run any number
      // of times: it queues nothing.
      if (!trips)
        return body && *body == 0 ? body : std::nullopt;
      if (!body || (*body && *trips > kMaxGraphNodes / *body))
        return std::nullopt;
      return *trips * *body;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      // A call is captured where the runtime runs graphs, and there its
      // loops and conds take their graph forms (where it cannot, the host
      // forms' waits break the capture and the call runs again without
      // one).
      if (kiln::isGraphFormChoice(branch, kiln::kGraphFormQueries))
        return regionNodes(branch.getThenRegion());
      std::optional<int64_t> then = regionNodes(branch.getThenRegion());
      std::optional<int64_t> otherwise = regionNodes(branch.getElseRegion());
      if (!then || !otherwise)
        return std::nullopt;
      return std::max(*then, *otherwise);
    }
    // Host memory of the host code's own (a predicate's stack slot, the
    // alias check's buffers) is no device work; its uses are checked
    // themselves.
    if (isa<scf::YieldOp, func::ReturnOp, memref::AllocaOp, memref::AllocOp>(
            op))
      return 0;
    return kiln::queuesDeviceWorkOnly(&op, kOtherCalls)
               ? std::optional<int64_t>(0)
               : std::nullopt;
  }

  SymbolTable symbols;
  llvm::DenseMap<func::FuncOp, FunctionInfo> functions;
  /// The function whose body is being analyzed, and whether it touches
  /// memory its arguments point to so far.
  func::FuncOp analyzing;
  bool touchesArguments = false;
};

/// Puts the body of `entry` (one block) under the runtime's begin call.
void bracket(func::FuncOp entry, func::FuncOp begin, func::FuncOp end) {
  Block &body = entry.front();
  Operation *terminator = body.getTerminator();
  Location loc = entry.getLoc();
  OpBuilder builder(&body, body.begin());
  Value launched =
      builder.create<func::CallOp>(loc, begin, ValueRange()).getResult(0);
  Value zero = builder.create<arith::ConstantIntOp>(loc, 0, 32);
  Value run = builder.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                            launched, zero);
  auto guard = builder.create<scf::IfOp>(loc, run, /*withElseRegion=*/false);
  Block &then = guard.getThenRegion().front();
  while (guard->getNextNode() != terminator)
    guard->getNextNode()->moveBefore(then.getTerminator());
  OpBuilder::atBlockTerminator(&then).create<func::CallOp>(loc, end,
                                                           ValueRange());
}

struct KilnCudaGraphCallsPass
    : kiln::impl::KilnCudaGraphCallsBase<KilnCudaGraphCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    CallAnalysis analysis(module);
    SmallVector<func::FuncOp> entries;
    for (func::FuncOp function : module.getOps<func::FuncOp>())
      if (function.getName().starts_with(kiln::kEntryPrefix) &&
          !function.isExternal() && function.getNumResults() == 0 &&
          analysis.entryNodes(function))
        entries.push_back(function);
    if (entries.empty())
      return;
    MLIRContext *context = &getContext();
    func::FuncOp begin = kiln::declareLibraryFunction(
        module, KILN_CUDA_GRAPH_CALL_BEGIN_FUNCTION,
        FunctionType::get(context, {}, {IntegerType::get(context, 32)}));
    func::FuncOp end =
        kiln::declareLibraryFunction(module, KILN_CUDA_GRAPH_CALL_END_FUNCTION,
                                     FunctionType::get(context, {}, {}));
    if (!begin || !end)
      return signalPassFailure();
    for (func::FuncOp entry : entries)
      bracket(entry, begin, end);
  }
};
} // namespace
