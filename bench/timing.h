/*===- timing.h - clock and median helpers of the C benchmark tools ------===*\
 *
 * Shared by kiln-bench-stream, kiln-bench-dnnl-gemm, kiln-bench-dnnl-conv
 * and kiln-bench-attention-kernel: a monotonic clock in seconds, and the
 * comparison qsort needs to sort times for their median.
 *
\*===----------------------------------------------------------------------===*/
#ifndef KILN_BENCH_TIMING_H
#define KILN_BENCH_TIMING_H

#include <time.h>

static inline double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int compareDoubles(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

#endif /* KILN_BENCH_TIMING_H */
