//===- GemmForm.h - Contractions that a GEMM library can run ----*- C++ -*-===//
//
// The backends hand matrix products to libraries (oneDNN's sgemm and matmul
// primitive on the CPU, cuBLASLt on CUDA), which read row-major matrices
// with a leading dimension, optionally transposed, one after the other in
// a batch. After bufferization, a contraction on memrefs is such a product
// when its maps read A as [b, m, k] or [b, k, m], B as [b, k, n] or
// [b, n, k] and write C as [b, m, n] (the batch dim optional, always first;
// linalg.matmul, batch_matmul, their _transpose_a/_b variants and the
// generics kiln-fold-transposes-into-matmuls makes), every operand
// statically shaped with contiguous rows or contiguous columns (a
// column-major operand is read with the opposite transpose flag).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_GEMMFORM_H
#define KILN_BACKENDS_COMMON_GEMMFORM_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::kiln {

/// How a contraction maps onto a GEMM: its loop ranges, whether each
/// operand is read transposed, and its element types.
struct GemmForm {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool batched = false;
  bool transposeA = false, transposeB = false;
  /// Per operand (A, B, C), the dim whose stride is the leading dimension.
  unsigned leadingDims[3] = {0, 0, 0};
  /// The element type of A and B (they agree), and that of C.
  Type abType, cType;
  /// For integers widened to a wider C (8-bit operands into i32), whether
  /// the body widens A and B unsigned (arith.extui) rather than signed:
  /// signless memrefs keep the signedness only there.
  bool unsignedA = false, unsignedB = false;
};

/// The GEMM form of `op`, or nullopt when it is not one (see the header).
std::optional<GemmForm> gemmFormOf(linalg::LinalgOp op);

/// The linalg.fill of `init` with +0.0 (or integer 0) that is the last op of
/// `op`'s block before `op` to touch the memory of `init`, if there is one: a
/// library call that overwrites C makes it unnecessary.
linalg::FillOp zeroFillBefore(Operation *op, Value init);

/// The op of type OpTy that `generic`'s body computes first and yields as
/// its only value, if it does (the epilogue bodies a library call can
/// take over: a truncation, a bias addition).
template <typename OpTy> OpTy yieldedFirstOp(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto op = yield.getValues().size() == 1
                ? yield.getValues()[0].getDefiningOp<OpTy>()
                : nullptr;
  return op && &body.front() == op.getOperation() ? op : nullptr;
}

/// Whether `generic`'s body is only `yield addf(x, y)` of its block
/// arguments 0 and 1, in either order (a bias addition's, a sum's).
bool yieldsSumOfArguments(linalg::GenericOp generic);

/// A bias row added to a product's result in place (what a dense layer
/// lowers to), which a GEMM library can add as it writes C: cuBLASLt's
/// bias epilogue, oneDNN's matmul bias.
struct BiasAddition {
  linalg::GenericOp addition;
  Value bias;
};

/// The bias addition after `product`, of GEMM form `form`: the first op
/// after it to touch C's memory is an elementwise linalg.generic over C's
/// [batch x] m x n that reads C and an n-element contiguous f32 bias
/// indexed by C's last dim, writes C itself, and yields `c + bias`. The
/// bias may be no view of C, and no op between the two may touch it. Only
/// for an f32 C that the product overwrites (`zeroFill`, which the call
/// drops), so that the library computes the same f32 addition of the same
/// f32 product.
std::optional<BiasAddition> biasAdditionAfter(linalg::LinalgOp product,
                                              const GemmForm &form,
                                              linalg::FillOp zeroFill);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_GEMMFORM_H
