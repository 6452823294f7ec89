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
};

/// The GEMM form of `op`, or nullopt when it is not one (see the header).
std::optional<GemmForm> gemmFormOf(linalg::LinalgOp op);

/// The linalg.fill of `init` with +0.0 that is the last op of `op`'s block
/// before `op` to touch the memory of `init`, if there is one: a library
/// call that overwrites C makes it unnecessary.
linalg::FillOp zeroFillBefore(Operation *op, Value init);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_GEMMFORM_H
