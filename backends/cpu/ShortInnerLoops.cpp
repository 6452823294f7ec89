//===- ShortInnerLoops.cpp - Short inner loops left to the vectorizer -----===//
//
// An elementwise loop nest whose innermost dimension is short (a [4096, 16]
// activation plus a [16] bias, an embedding table's rows) lowers to a loop
// over rows around a loop of 16 columns. LLVM unrolls the short loop
// completely first, and its loop vectorizer then vectorizes the loop over
// rows instead, each column a strided load out of wide ones: 57 us for what
// one 16-lane vector per row does in 13 (measured on AVX-512).
// kiln-cpu-collapse-contiguous-loops makes such nests one loop where every
// operand is contiguous over them; a broadcast operand (the bias) is not,
// so its nest stays two loops.
//
// Before LLVM's pipeline runs, each innermost loop of that shape (nested in
// another loop; a trip count known from its header, a multiple of 16 up to
// 64; no value carried but its counter, so not a reduction, which the
// vectorizer could not reorder anyway) is marked llvm.loop.unroll.disable:
// the vectorizer then takes the short loop itself, one or a few full
// vectors per row. Shorter loops keep LLVM's choice: at 8 columns one
// 8-lane vector per row was slower (26 us) than the gathers (16-20 us).
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"

#include <optional>

using namespace llvm;

namespace {

/// The trip count of `loop` when its header tests its only phi, counting
/// from a constant by a constant step, against a constant bound (the form
/// scf.for takes through scf-to-cf): `i < n` exits to outside the loop.
std::optional<int64_t> constantTripCount(Loop &loop) {
  BasicBlock *header = loop.getHeader();
  BasicBlock *latch = loop.getLoopLatch();
  BasicBlock *preheader = loop.getLoopPreheader();
  if (!latch || !preheader)
    return std::nullopt;
  auto phis = header->phis();
  if (std::distance(phis.begin(), phis.end()) != 1)
    return std::nullopt;
  PHINode &counter = *phis.begin();
  auto *start =
      dyn_cast<ConstantInt>(counter.getIncomingValueForBlock(preheader));
  Value *next = counter.getIncomingValueForBlock(latch);
  const APInt *step = nullptr, *bound = nullptr;
  using namespace PatternMatch;
  if (!start || !match(next, m_Add(m_Specific(&counter), m_APInt(step))))
    return std::nullopt;
  auto *branch = dyn_cast<BranchInst>(header->getTerminator());
  ICmpInst::Predicate predicate;
  if (!branch || !branch->isConditional() ||
      !match(branch->getCondition(),
             m_ICmp(predicate, m_Specific(&counter), m_APInt(bound))) ||
      (predicate != ICmpInst::ICMP_SLT && predicate != ICmpInst::ICMP_ULT) ||
      !loop.contains(branch->getSuccessor(0)) ||
      loop.contains(branch->getSuccessor(1)))
    return std::nullopt;
  int64_t first = start->getSExtValue(), stride = step->getSExtValue(),
          limit = bound->getSExtValue();
  if (stride <= 0 || limit <= first)
    return std::nullopt;
  return (limit - first + stride - 1) / stride;
}

void markShortInnerLoops(Function &function) {
  DominatorTree dominators(function);
  LoopInfo loops(dominators);
  for (Loop *loop : loops.getLoopsInPreorder()) {
    if (!loop->isInnermost() || loop->getLoopDepth() < 2)
      continue;
    std::optional<int64_t> trips = constantTripCount(*loop);
    if (!trips || *trips < 16 || *trips > 64 || *trips % 16 != 0)
      continue;
    loop->setLoopAlreadyUnrolled();
  }
}

} // namespace

void mlir::kiln::keepShortInnerLoopsForVectorizer(llvm::Module &module) {
  for (Function &function : module)
    if (!function.isDeclaration())
      markShortInnerLoops(function);
}
