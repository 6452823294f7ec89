//===- KilnRegionBranch.cpp - Control flow between kiln regions ----------===//
//
// RegionBranchOpInterface for kiln.cond, kiln.while and kiln.for: which
// region may run after which, and which values flow along each edge.
// Upstream analyses built on the interface (sparse constant propagation,
// dead code analysis, integer ranges) then see through kiln's structured
// control flow as they do through scf. kiln.yield is ReturnLike, so it
// forwards all its operands along every edge that leaves its region.
//
// The edges and what they carry:
//
//   kiln.cond   op    -> then, else     `inputs` (not the predicate); a
//                                       constant predicate keeps only the
//                                       region it selects
//               then, else -> results   the yielded values
//
//   kiln.for    op    -> body           `inits` into the carried block
//                                       arguments (trip_count > 0)
//               op    -> results        `inits` (trip_count == 0)
//               body  -> body           the yielded values (trip_count > 1)
//               body  -> results        the yielded values
//               Block argument 0, the iteration index, is fed by no edge.
//
//   kiln.while  op, body -> cond, body, results
//                                       `inits` or the body's yielded values
//               cond  -> nothing
//               The cond region yields only the predicate, so no edge can
//               leave it carrying the loop values; they reach the body and
//               the results unchanged from whatever entered cond. Listing
//               those edges directly gives every block argument and result
//               exactly the values it gets at run time.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::kiln;

/// The value of a constant rank-0 i1 operand, or nullopt when `attr` is not
/// a known constant.
static std::optional<bool> getConstantPredicate(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(attr);
  if (!dense || !dense.isSplat() || !dense.getElementType().isInteger(1))
    return std::nullopt;
  return dense.getSplatValue<bool>();
}

/// A successor that enters `region` through all its block arguments.
static RegionSuccessor enter(Region &region) {
  return RegionSuccessor(&region, region.getArguments());
}

//===----------------------------------------------------------------------===//
// CondOp
//===----------------------------------------------------------------------===//

OperandRange CondOp::getEntrySuccessorOperands(RegionBranchPoint) {
  return getInputs();
}

void CondOp::getSuccessorRegions(RegionBranchPoint point,
                                 SmallVectorImpl<RegionSuccessor> &regions) {
  if (!point.isParent()) {
    regions.push_back(RegionSuccessor(getResults()));
    return;
  }
  regions.push_back(enter(getThenRegion()));
  regions.push_back(enter(getElseRegion()));
}

void CondOp::getEntrySuccessorRegions(
    ArrayRef<Attribute> operands, SmallVectorImpl<RegionSuccessor> &regions) {
  std::optional<bool> pred = getConstantPredicate(operands.front());
  if (!pred)
    return getSuccessorRegions(RegionBranchPoint::parent(), regions);
  regions.push_back(enter(*pred ? getThenRegion() : getElseRegion()));
}

void CondOp::getRegionInvocationBounds(
    ArrayRef<Attribute> operands, SmallVectorImpl<InvocationBounds> &bounds) {
  std::optional<bool> pred = getConstantPredicate(operands.front());
  if (!pred) {
    bounds.assign(2, InvocationBounds(0, 1));
    return;
  }
  bounds.push_back(*pred ? InvocationBounds(1, 1) : InvocationBounds(0, 0));
  bounds.push_back(*pred ? InvocationBounds(0, 0) : InvocationBounds(1, 1));
}

//===----------------------------------------------------------------------===//
// WhileOp
//===----------------------------------------------------------------------===//

OperandRange WhileOp::getEntrySuccessorOperands(RegionBranchPoint) {
  return getInits();
}

void WhileOp::getSuccessorRegions(RegionBranchPoint point,
                                  SmallVectorImpl<RegionSuccessor> &regions) {
  if (point == RegionBranchPoint(&getCondRegion()))
    return;
  regions.push_back(enter(getCondRegion()));
  regions.push_back(enter(getBodyRegion()));
  regions.push_back(RegionSuccessor(getResults()));
}

//===----------------------------------------------------------------------===//
// ForOp
//===----------------------------------------------------------------------===//

OperandRange ForOp::getEntrySuccessorOperands(RegionBranchPoint) {
  return getInits();
}

void ForOp::getSuccessorRegions(RegionBranchPoint point,
                                SmallVectorImpl<RegionSuccessor> &regions) {
  int64_t tripCount = static_cast<int64_t>(getTripCount());
  Region &body = getBodyRegion();
  // The carried values; the iteration index before them comes from the loop
  // itself, not from an operand or a yield.
  Block::BlockArgListType carried = body.getArguments();
  carried = carried.drop_front(carried.empty() ? 0 : 1);
  bool entersBody = point.isParent() ? tripCount > 0 : tripCount > 1;
  if (entersBody)
    regions.push_back(RegionSuccessor(&body, carried));
  if (!point.isParent() || tripCount == 0)
    regions.push_back(RegionSuccessor(getResults()));
}

void ForOp::getRegionInvocationBounds(
    ArrayRef<Attribute>, SmallVectorImpl<InvocationBounds> &bounds) {
  int64_t tripCount = static_cast<int64_t>(getTripCount());
  if (tripCount < 0 || tripCount > std::numeric_limits<unsigned>::max()) {
    bounds.push_back(InvocationBounds::getUnknown());
    return;
  }
  unsigned count = static_cast<unsigned>(tripCount);
  bounds.push_back(InvocationBounds(count, count));
}
