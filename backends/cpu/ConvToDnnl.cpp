//===- ConvToDnnl.cpp - f32 convolutions as oneDNN primitive calls --------===//
//
// Loops generated from a convolution's linalg.generic run far below what
// oneDNN's convolution primitive reaches (blocked JIT kernels, its own
// threads). The primitive needs the convolution's description, which the
// generic no longer states once it is lowered and bufferized (padding is a
// copy into a zero-filled buffer by then), so the CPU backend takes the
// convolution aside while it is still a kiln op and puts it back as a
// library call once buffers exist:
//
//   1. kiln-cpu-outline-dnnl-convs, on kiln IR: each f32 kiln.conv that
//      oneDNN takes moves into its own private function, marked with the
//      oneDNN descriptor; the op's place gets a call. The function is an
//      ordinary function to every later pass, so bufferization gives its
//      call the input, weight and result buffers (results become
//      out-params) and the memory planner places the result.
//   2. kiln-cpu-conv-to-dnnl, on memrefs: each call of such a function
//      becomes a call of kiln_dnnl_conv_f32 (backends/cpu/support/
//      DnnlConv.c) with the buffers' addresses, the descriptor (a constant
//      global) and a per-call-site global where the library caches the
//      primitive; the functions, now uncalled, are erased.
//
// Convolutions oneDNN's forward primitive does not take (lhs_dilation > 1,
// more than 3 spatial dims, empty dims, f64) and small ones stay the
// generic lowering (backends/common/ConvLowering.cpp).
//
//===----------------------------------------------------------------------===//

#include "BufferAccess.h"
#include "BufferAddress.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUOUTLINEDNNLCONVS
#define GEN_PASS_DEF_KILNCPUCONVTODNNL
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// The function attribute holding the oneDNN descriptor.
static constexpr llvm::StringLiteral kDnnlConvAttr = "kiln.dnnl_conv";
static constexpr llvm::StringLiteral kConvFunction = "kiln_dnnl_conv_f32";

/// The descriptor that DnnlConv.c reads, if oneDNN's forward convolution
/// takes `op` and it does at least `minMacs` multiply-adds.
static std::optional<SmallVector<int64_t>> dnnlDescriptor(mlir::kiln::ConvOp op,
                                                          int64_t minMacs) {
  RankedTensorType input = op.getInput().getType();
  RankedTensorType weight = op.getWeight().getType();
  RankedTensorType result = op.getType();
  int64_t spatial = input.getRank() - 2;
  if (!input.getElementType().isF32() || spatial < 1 || spatial > 3 ||
      input.getNumElements() == 0 || weight.getNumElements() == 0 ||
      result.getNumElements() == 0 ||
      llvm::any_of(op.getLhsDilation(), [](int64_t d) { return d != 1; }))
    return std::nullopt;
  int64_t macs = result.getNumElements() * weight.getNumElements() /
                 weight.getDimSize(0);
  if (macs < minMacs)
    return std::nullopt;
  SmallVector<int64_t> descriptor{spatial, static_cast<int64_t>(op.getGroups()),
                                  input.getDimSize(0), input.getDimSize(1),
                                  weight.getDimSize(0)};
  llvm::append_range(descriptor, input.getShape().drop_front(2));
  llvm::append_range(descriptor, weight.getShape().drop_front(2));
  llvm::append_range(descriptor, result.getShape().drop_front(2));
  llvm::append_range(descriptor, op.getStrides());
  llvm::append_range(descriptor, op.getPaddingLow());
  llvm::append_range(descriptor, op.getPaddingHigh());
  llvm::append_range(descriptor, op.getRhsDilation());
  return descriptor;
}

/// The buffer the call of an outlined convolution should write. After
/// results became out-params, a convolution whose value a function returns
/// writes a fresh allocation that is then copied into the out-param and
/// freed; the call can write the out-param directly when that copy follows
/// it, the allocation has no other use, and the out-param is neither
/// input. `dead` receives the ops that then go.
static Value forwardedResult(func::CallOp call,
                             SmallVectorImpl<Operation *> &dead) {
  Value result = call.getOperand(2);
  auto alloc = result.getDefiningOp<memref::AllocOp>();
  auto copy = dyn_cast_or_null<linalg::CopyOp>(call->getNextNode());
  if (!alloc || !copy || copy.getDpsInputOperand(0)->get() != result)
    return result;
  Value target = copy.getDpsInitOperand(0)->get();
  if (target.getType() != result.getType() ||
      !mlir::kiln::definedBefore(target, call))
    return result;
  SmallVector<Operation *> deallocs;
  for (Operation *user : result.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      deallocs.push_back(user);
    else if (user != call && user != copy)
      return result;
  }
  for (Value input : call.getOperands().take_front(2))
    if (mlir::kiln::mayAlias(mlir::kiln::rootOf(input),
                             mlir::kiln::rootOf(target)))
      return result;
  dead.push_back(copy);
  llvm::append_range(dead, deallocs);
  dead.push_back(alloc);
  return target;
}

namespace {

struct KilnCpuOutlineDnnlConvsPass
    : mlir::kiln::impl::KilnCpuOutlineDnnlConvsBase<
          KilnCpuOutlineDnnlConvsPass> {
  using KilnCpuOutlineDnnlConvsBase::KilnCpuOutlineDnnlConvsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<mlir::kiln::ConvOp, SmallVector<int64_t>>> convs;
    module.walk([&](mlir::kiln::ConvOp op) {
      // An outlined function's own conv stays where it is.
      auto parent = op->getParentOfType<func::FuncOp>();
      if (parent && parent->hasAttr(kDnnlConvAttr))
        return;
      if (auto descriptor = dnnlDescriptor(op, minMacs))
        convs.emplace_back(op, std::move(*descriptor));
    });
    SymbolTable symbols(module);
    OpBuilder builder(&getContext());
    for (auto &[op, descriptor] : convs) {
      Location loc = op.getLoc();
      builder.setInsertionPointToEnd(module.getBody());
      auto type = builder.getFunctionType(op->getOperandTypes(),
                                          op->getResultTypes());
      auto function =
          builder.create<func::FuncOp>(loc, "kiln_dnnl_conv", type);
      function.setPrivate();
      function->setAttr(kDnnlConvAttr,
                        builder.getDenseI64ArrayAttr(descriptor));
      symbols.insert(function); // makes the name unique
      Block *body = function.addEntryBlock();
      builder.setInsertionPointToStart(body);
      Operation *moved = builder.clone(*op);
      moved->setOperands(body->getArguments());
      builder.create<func::ReturnOp>(loc, moved->getResults());

      builder.setInsertionPoint(op);
      auto call = builder.create<func::CallOp>(loc, function, op->getOperands());
      op->replaceAllUsesWith(call);
      op->erase();
    }
  }
};

struct KilnCpuConvToDnnlPass
    : mlir::kiln::impl::KilnCpuConvToDnnlBase<KilnCpuConvToDnnlPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
    module.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (callee && callee->hasAttr(kDnnlConvAttr))
        calls.emplace_back(call, callee);
    });
    if (calls.empty())
      return;

    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Type pointer = LLVM::LLVMPointerType::get(context);
    auto convType = builder.getFunctionType(
        {pointer, pointer, pointer, pointer, pointer}, {});
    auto convFunction = module.lookupSymbol<func::FuncOp>(kConvFunction);
    if (!convFunction) {
      builder.setInsertionPointToStart(module.getBody());
      convFunction =
          builder.create<func::FuncOp>(module.getLoc(), kConvFunction, convType);
      convFunction.setPrivate();
    } else if (convFunction.getFunctionType() != convType) {
      convFunction.emitError()
          << "'" << kConvFunction << "' is declared with an unexpected type";
      return signalPassFailure();
    }

    SymbolTable symbols(module);
    SetVector<Operation *> callees;
    // One descriptor per function, one cache slot per call site.
    llvm::DenseMap<Operation *, memref::GlobalOp> descriptors;
    for (auto [call, callee] : calls) {
      if (call.getNumOperands() != 3 || call.getNumResults() != 0 ||
          !llvm::all_of(call.getOperandTypes(),
                        [](Type t) { return isa<MemRefType>(t); })) {
        call.emitError() << "expected a call of '" << callee.getSymName()
                         << "' on the input, weight and result buffers";
        return signalPassFailure();
      }
      Location loc = call.getLoc();
      auto descriptor = callee->getAttrOfType<DenseI64ArrayAttr>(kDnnlConvAttr);
      // The descriptor and the cache slot, as module globals.
      builder.setInsertionPoint(callee);
      memref::GlobalOp &descriptorGlobal = descriptors[callee];
      if (!descriptorGlobal) {
        auto descriptorType = MemRefType::get(
            {static_cast<int64_t>(descriptor.size())}, builder.getI64Type());
        descriptorGlobal = builder.create<memref::GlobalOp>(
            loc, "kiln_dnnl_conv_descriptor", builder.getStringAttr("private"),
            descriptorType,
            DenseElementsAttr::get(
                RankedTensorType::get(descriptorType.getShape(),
                                      builder.getI64Type()),
                descriptor.asArrayRef()),
            /*constant=*/true, /*alignment=*/nullptr);
        symbols.insert(descriptorGlobal);
      }
      auto slotType = MemRefType::get({1}, builder.getI64Type());
      auto slotGlobal = builder.create<memref::GlobalOp>(
          loc, "kiln_dnnl_conv_slot", builder.getStringAttr("private"),
          slotType,
          DenseElementsAttr::get(
              RankedTensorType::get({1}, builder.getI64Type()),
              ArrayRef<int64_t>{0}),
          /*constant=*/false, builder.getI64IntegerAttr(8));
      symbols.insert(slotGlobal);

      builder.setInsertionPoint(call);
      auto pointerTo = [&](Value memref) -> Value {
        mlir::kiln::BufferAddress address =
            mlir::kiln::bufferAddressOf(builder, loc, memref, 4);
        return builder.create<LLVM::IntToPtrOp>(loc, pointer, address.address);
      };
      auto globalPointer = [&](memref::GlobalOp global) -> Value {
        Value memref = builder.create<memref::GetGlobalOp>(
            loc, global.getType(), global.getSymName());
        Value index =
            builder.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
        Value address = builder.create<arith::IndexCastOp>(
            loc, builder.getI64Type(), index);
        return builder.create<LLVM::IntToPtrOp>(loc, pointer, address);
      };
      SmallVector<Operation *> dead;
      Value result = forwardedResult(call, dead);
      SmallVector<Value> operands{globalPointer(slotGlobal),
                                  globalPointer(descriptorGlobal),
                                  pointerTo(call.getOperand(0)),
                                  pointerTo(call.getOperand(1)),
                                  pointerTo(result)};
      builder.create<func::CallOp>(loc, convFunction, operands);
      call->erase();
      for (Operation *op : dead)
        op->erase();
      callees.insert(callee);
    }
    for (Operation *callee : callees)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        callee->erase();
  }
};

} // namespace
