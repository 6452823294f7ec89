//===- DnnlMatmulCall.h - kiln_dnnl_matmul as the tests call it -*- C++ -*-===//
//
// The entry point of backends/cpu/support/DnnlMatmul.c, declared as the
// code kiln-cpu-matmul-to-dnnl emits calls it (operands: DnnlMatmulAbi.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_BACKENDS_DNNLMATMULCALL_H
#define KILN_TEST_UNIT_BACKENDS_DNNLMATMULCALL_H

#include "DnnlMatmulAbi.h"

#include <cstdint>

extern "C" void kiln_dnnl_matmul(void **slot, int64_t flags, int64_t batch,
                                 int64_t m, int64_t n, int64_t k,
                                 const void *a, int64_t lda, int64_t strideA,
                                 const void *b, int64_t ldb, int64_t strideB,
                                 void *c, int64_t ldc, int64_t strideC,
                                 const float *bias);

#endif // KILN_TEST_UNIT_BACKENDS_DNNLMATMULCALL_H
