//===- ActivationLayouts.h - Convolution activations' layouts in kiln IR --===//
//
// An outlined oneDNN convolution (kiln-cpu-outline-dnnl-convs) takes and
// returns its activations [N, C, D...] plain, channels-last [N, D..., C]
// or in oneDNN's blocked layout [N, C / b, D..., b] (nChw8c, nChw16c, ...:
// channel c at block c / b, lane c % b). The layout is explicit in the IR:
// kiln ops relay the logical tensor out into the layout before the call and
// back after it (a kiln.transpose for channels-last; a kiln.reshape that
// splits the channels into [C / b, b] and a kiln.transpose that moves the
// lanes innermost for blocked), and kiln-cpu-propagate-layouts moves the
// relayouts back down the graph to where the layout really changes. This
// header is what both passes know of those ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_ACTIVATIONLAYOUTS_H
#define KILN_BACKENDS_CPU_ACTIVATIONLAYOUTS_H

#include "DnnlConvLayouts.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Builders.h"

#include <optional>
#include <utility>

namespace mlir::kiln::dnnl {

/// A layout of a convolution's activations other than the plain one:
/// channels-last (`block` 0) or blocked by `block` channels.
struct ActivationLayout {
  int64_t block = 0;

  bool operator==(const ActivationLayout &other) const {
    return block == other.block;
  }

  /// The permutation that moves the lanes of [N, C / b, b, D...] (rank
  /// `rank`) innermost: [0, 1, 3, ..., rank - 1, 2].
  static llvm::SmallVector<int64_t> lanesLast(int64_t rank) {
    llvm::SmallVector<int64_t> perm{0, 1};
    for (int64_t d = 3; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(2);
    return perm;
  }

  /// The dims of the laid-out tensor that hold dim `d` of a logical
  /// tensor of rank `rank`: one, or for a blocked channel dim two (the
  /// block, then the lane).
  llvm::SmallVector<int64_t, 2> dimsOf(int64_t d, int64_t rank) const {
    if (d == 0)
      return {0};
    if (!block)
      return {d == 1 ? rank - 1 : d - 1};
    if (d == 1)
      return {1, rank};
    return {d};
  }

  /// The type of `logical` ([N, C, D...]) laid out.
  RankedTensorType laidOut(RankedTensorType logical) const {
    llvm::ArrayRef<int64_t> shape = logical.getShape();
    if (!block)
      return logical.clone(
          applyPermutation(shape, toChannelsLast(shape.size())));
    llvm::SmallVector<int64_t> laid{shape[0], shape[1] / block};
    laid.append(shape.begin() + 2, shape.end());
    laid.push_back(block);
    return logical.clone(laid);
  }

  /// `logical` ([N, C, D...]; C a multiple of the block) relaid out.
  Value into(OpBuilder &builder, Location loc, Value logical) const {
    auto type = cast<RankedTensorType>(logical.getType());
    int64_t rank = type.getRank();
    if (!block)
      return builder.create<TransposeOp>(loc, logical, toChannelsLast(rank));
    llvm::SmallVector<int64_t> split{type.getDimSize(0),
                                     type.getDimSize(1) / block, block};
    split.append(type.getShape().begin() + 2, type.getShape().end());
    Value blocks = builder.create<ReshapeOp>(loc, type.clone(split), logical);
    return builder.create<TransposeOp>(loc, blocks, lanesLast(rank + 1));
  }

  /// `laid`, in this layout, back in the order of `logical`'s type. The
  /// lanes of a blocked tensor of rank 3 ([N, C / b, b]: what a reduction
  /// over every spatial dim leaves) are in place already: a reshape only.
  Value outOf(OpBuilder &builder, Location loc, Value laid,
              RankedTensorType logical) const {
    int64_t rank = logical.getRank();
    if (!block)
      return builder.create<TransposeOp>(
          loc, laid, invertPermutationVector(toChannelsLast(rank)));
    llvm::SmallVector<int64_t> back =
        invertPermutationVector(lanesLast(rank + 1));
    if (!isIdentityPermutation(back))
      laid = builder.create<TransposeOp>(loc, laid, back);
    return builder.create<ReshapeOp>(loc, logical, laid);
  }

  /// Where `value` is a relayout out of a layout (the ops that outOf
  /// creates, of a logical rank of at least 3), that layout and the value
  /// laid out.
  static std::optional<std::pair<ActivationLayout, Value>>
  relaidFrom(Value value) {
    auto logical = dyn_cast<RankedTensorType>(value.getType());
    if (!logical || logical.getRank() < 3)
      return std::nullopt;
    int64_t rank = logical.getRank();
    if (auto transpose = value.getDefiningOp<TransposeOp>()) {
      if (transpose.getPermutation() !=
          llvm::ArrayRef<int64_t>(
              invertPermutationVector(toChannelsLast(rank))))
        return std::nullopt;
      return std::make_pair(ActivationLayout{}, transpose.getOperand());
    }
    auto reshape = value.getDefiningOp<ReshapeOp>();
    auto transpose = reshape ? reshape.getOperand().getDefiningOp<TransposeOp>()
                             : TransposeOp();
    if (!transpose || transpose.getPermutation() !=
                          llvm::ArrayRef<int64_t>(
                              invertPermutationVector(lanesLast(rank + 1))))
      return std::nullopt;
    Value laid = transpose.getOperand();
    auto laidType = cast<RankedTensorType>(laid.getType());
    ActivationLayout layout{laidType.getDimSize(rank)};
    if (layout.block <= 1 || layout.laidOut(logical) != laidType)
      return std::nullopt;
    return std::make_pair(layout, laid);
  }
};

} // namespace mlir::kiln::dnnl

#endif // KILN_BACKENDS_CPU_ACTIVATIONLAYOUTS_H
