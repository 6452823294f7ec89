//===- KilnOps.h - kiln dialect operations ----------------------*- C++ -*-===//
#ifndef KILN_IR_KILNOPS_H
#define KILN_IR_KILNOPS_H

#include "kiln/IR/KilnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

namespace mlir {
namespace kiln {
/// A string attribute on an op whose result has no derivative with respect
/// to its operands although the op itself has one: the op is a step of a
/// computation (a rejection sampler) whose derivative is not the chain of
/// its steps'. The autodiff passes refuse to differentiate through such an
/// op, with the attribute's text as the reason.
inline constexpr llvm::StringLiteral kNoDerivativeAttrName =
    "kiln.no_derivative";

/// Whether `type` is a kiln stack: a ranked tensor of a kiln element type
/// whose leading dimension is dynamic and whose other dimensions are static.
bool isStackType(Type type);
/// The static shape of one row of the stack type `stack`.
RankedTensorType getStackRowType(RankedTensorType stack);
/// The stack type whose rows have the static type `row`.
RankedTensorType getStackType(RankedTensorType row);

/// The size of one spatial dimension of a kiln.conv result (see the op's
/// description): floor((P - W) / stride) + 1 for the padded, input-dilated
/// size P and the dilated kernel size W, and 0 when the kernel does not fit
/// or either size is 0; nullopt when a size overflows int64.
std::optional<int64_t> convOutputSize(int64_t inputSize, int64_t kernelSize, int64_t stride,
                       int64_t paddingLow, int64_t paddingHigh,
                       int64_t lhsDilation, int64_t rhsDilation);

/// Whether `op` computes f16 and bf16 as if its half-precision operands
/// were widened to f32 (exactly), the op computed in f32, and its half-
/// precision results rounded once: the reductions, scans, windows,
/// convolutions, iota and attention, and matmuls of f16 operands (see
/// kiln.matmul),
/// when an operand or result is f16 or bf16. Sums then accumulate in f32,
/// as GEMM and reduction libraries do in half precision; for max, argmax
/// and argmin the widening changes nothing. The reference evaluator and
/// the backends compute these ops exactly so.
bool widensHalfPrecision(Operation *op);

/// The element type of kiln.attention's lse for operands of `element`:
/// f32, or f64 for f64 operands.
Type attentionLseElementType(Type element);

/// True if reshaping `from` to `to` only inserts or removes size-1
/// dimensions (the reshapes of numpy's keepdims and of squeeze).
bool isUnitReshape(RankedTensorType from, RankedTensorType to);

/// Verifies the region signatures of kiln.cond, kiln.while and kiln.for
/// (block arguments and kiln.yield operands against the op's operands and
/// results) through the op's `verifyRegionSignatures`. Listed before
/// RegionBranchOpInterface, whose generic check of the same control-flow
/// edges would otherwise report a mismatch first and less precisely.
template <typename ConcreteType>
class RegionSignatures
    : public OpTrait::TraitBase<ConcreteType, RegionSignatures> {
public:
  static LogicalResult verifyRegionTrait(Operation *op) {
    return cast<ConcreteType>(op).verifyRegionSignatures();
  }
};

/// What the collectives (KilnCollectiveOps.td) read and write besides their
/// operands: the channel between the ranks of an SPMD run.
struct CommResource : public SideEffects::Resource::Base<CommResource> {
  StringRef getName() final { return "kiln.comm"; }
};

/// The rows of a flattened replica-group table, `groupSize` ranks each.
SmallVector<ArrayRef<int64_t>> groupRows(ArrayRef<int64_t> groups,
                                         int64_t groupSize);

/// `groups = [[0, 1], [2, 3]]` as the attributes `groups` (the ranks,
/// flattened) and `group_size`.
ParseResult parseReplicaGroups(OpAsmParser &parser, DenseI64ArrayAttr &groups,
                               IntegerAttr &groupSize);
void printReplicaGroups(OpAsmPrinter &printer, Operation *op,
                        DenseI64ArrayAttr groups, IntegerAttr groupSize);

/// Whether `op` is one of the ops of KilnCollectiveOps.td: a collective,
/// its start form, kiln.collective_wait or kiln.rank.
bool isCollective(Operation *op);

/// Checks that `groups` (rows of `groupSize` ranks) partitions the ranks
/// 0 .. N-1 of a run; on failure reports through `op`.
LogicalResult verifyReplicaGroups(Operation *op, ArrayRef<int64_t> groups,
                                  int64_t groupSize);
} // namespace kiln
} // namespace mlir

#include "kiln/IR/KilnEnums.h.inc"
// kiln.yield also ends kiln.fused regions, so its parent check needs FusedOp.
#include "kiln/IR/KilnFusionOps.h"

#define GET_OP_CLASSES
#include "kiln/IR/KilnOps.h.inc"

#endif // KILN_IR_KILNOPS_H
