//===- ConvAddendInPlace.cpp - A convolution's result over its addend -----===//
//
// A residual block ends in a convolution whose result is added to the
// block's input (ResNet's bottlenecks, MobileNet's inverted residuals), and
// kiln-cpu-outline-dnnl-convs puts that addition in the convolution's
// epilogue. The input usually dies there. oneDNN has two ways to add it:
// a `sum` post-op, which adds what the result buffer already holds, and a
// `binary` post-op, which reads the addend from a buffer of its own. With
// the addend in a separate buffer, the call either copies it into the
// result buffer first (a pass over the result's bytes) or takes the binary
// post-op, which fewer of oneDNN's kernels have: on ResNet-50 at batch 8
// (AMD Zen 5, one thread) the 64 -> 256 channel 1x1 convolutions on 56x56
// maps ran jit_1x1 with the binary post-op at 8.1-8.5 ms each, where
// brgconv_1x1 runs the same convolution without an addend in 3.6 ms.
//
// So where the addend dies at the call, this pass gives the call the
// addend's buffer as its result buffer: the library call (DnnlConv.c) sees
// the two addresses equal and adds with the sum post-op where the addend
// lies, and the block needs one buffer fewer. On buffers, before
// kiln-cpu-plan-memory; the conditions, all within the call's block:
//   - the call is in the block of the allocations of both buffers, which
//     have one type (shape, element type, identity layout);
//   - every other use of the addend (through views) lies before the call
//     and only reads or writes it there (PlainAccess.h): nothing keeps
//     it, and the call is its last reader;
//   - the addend, or a view of it, is no other operand of the call (the
//     convolution's input read while the result is written), and nothing
//     uses the result buffer before the call.
// A call in a loop body whose addend comes from outside the body keeps its
// buffers (a later iteration would read the overwritten addend).
//
//===----------------------------------------------------------------------===//

#include "DnnlCalls.h"
#include "PlainAccess.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUCONVADDENDINPLACE
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

/// Whether every use of `buffer` and of views of it, but `call`'s use of
/// `buffer` itself, is an access (isPlainAccess) inside an op of `call`'s
/// block before `call`.
static bool lastUsedBy(Value buffer, func::CallOp call) {
  Block *block = call->getBlock();
  return kiln::walkBufferUses(buffer, [&](Operation *user, Value used) {
    // The call's addend operand; a view of the addend as another of its
    // operands (its input) would be read while the result is written.
    if (user == call)
      return used == buffer;
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    return ancestor && ancestor->isBeforeInBlock(call);
  });
}

/// Whether nothing uses `buffer` before `call` (in `call`'s block).
static bool unusedBefore(Value buffer, func::CallOp call) {
  Block *block = call->getBlock();
  return llvm::all_of(buffer.getUsers(), [&](Operation *user) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    return ancestor && !ancestor->isBeforeInBlock(call);
  });
}

/// Places `call`'s result in its addend's buffer where that is safe (see
/// the file comment); `descriptor` is its callee's.
static void placeOverAddend(func::CallOp call, ArrayRef<int64_t> descriptor) {
  if (descriptor.size() <= 5)
    return;
  int64_t flags = descriptor[5];
  // A quantized call's scales take the addend's place.
  if (!(flags & KILN_DNNL_CONV_ADDEND) || (flags & KILN_DNNL_CONV_INT8))
    return;
  unsigned addendIndex = 2 + ((flags & KILN_DNNL_CONV_BIAS) != 0);
  unsigned dstBound = (flags & KILN_DNNL_CONV_DST_BOUND) != 0;
  if (call.getNumOperands() < addendIndex + 2 + dstBound)
    return;
  unsigned resultIndex = call.getNumOperands() - 1 - dstBound;
  Value addend = call.getOperand(addendIndex);
  Value result = call.getOperand(resultIndex);
  auto addendAlloc = addend.getDefiningOp<memref::AllocOp>();
  auto resultAlloc = result.getDefiningOp<memref::AllocOp>();
  if (!addendAlloc || !resultAlloc || addend.getType() != result.getType() ||
      addendAlloc->getBlock() != call->getBlock() ||
      resultAlloc->getBlock() != call->getBlock() ||
      !addendAlloc.getType().getLayout().isIdentity())
    return;
  for (auto [i, operand] : llvm::enumerate(call.getOperands()))
    if (operand == addend && i != addendIndex)
      return;
  if (!lastUsedBy(addend, call) || !unusedBefore(result, call))
    return;
  if (std::optional<uint64_t> alignment = resultAlloc.getAlignment())
    if (addendAlloc.getAlignment().value_or(0) < *alignment)
      addendAlloc.setAlignment(*alignment);
  resultAlloc.replaceAllUsesWith(addendAlloc.getResult());
  resultAlloc.erase();
}

namespace {
struct KilnCpuConvAddendInPlacePass
    : kiln::impl::KilnCpuConvAddendInPlaceBase<KilnCpuConvAddendInPlacePass> {
  void runOnOperation() override {
    SmallVector<std::pair<func::CallOp, ArrayRef<int64_t>>> calls;
    getOperation().walk([&](func::CallOp call) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee)
        return;
      if (auto descriptor = callee->getAttrOfType<DenseI64ArrayAttr>(
              kiln::dnnl::kConvDescriptorAttr))
        calls.emplace_back(call, descriptor.asArrayRef());
    });
    for (auto [call, descriptor] : calls)
      placeOverAddend(call, descriptor);
  }
};
} // namespace
