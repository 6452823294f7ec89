/*===- dnnl_gemm.c - oneDNN SGEMM for the kiln benchmarks ------------------===*\
 *
 * C = A * B for N x N row-major f32 matrices with oneDNN's dnnl_sgemm, the
 * GEMM anchor of bench/bench.py. The thread count comes from
 * OMP_NUM_THREADS (oneDNN's OpenMP runtime). Before timing, entries on a
 * grid are checked against a double-precision dot product, so a wrong
 * result is reported instead of a time. Prints the median of REPEAT calls
 * after one warm-up.
 *
 *   kiln-bench-dnnl-gemm N REPEAT
 *
\*===----------------------------------------------------------------------===*/
#include <dnnl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: kiln-bench-dnnl-gemm N REPEAT\n");
    return 2;
  }
  long n = atol(argv[1]);
  int repeat = atoi(argv[2]);
  if (n <= 0 || repeat <= 0) {
    fprintf(stderr, "kiln-bench-dnnl-gemm: N and REPEAT must be positive\n");
    return 2;
  }
  float *a = malloc(sizeof(float) * n * n);
  float *b = malloc(sizeof(float) * n * n);
  float *c = malloc(sizeof(float) * n * n);
  double *times = malloc(sizeof(double) * repeat);
  if (!a || !b || !c || !times) {
    fprintf(stderr, "kiln-bench-dnnl-gemm: out of memory\n");
    return 1;
  }
  unsigned state = 12345u;
  for (long i = 0; i < n * n; ++i) {
    state = state * 1664525u + 1013904223u;
    a[i] = (float)((state >> 8) % 2001) / 1000.0f - 1.0f;
    state = state * 1664525u + 1013904223u;
    b[i] = (float)((state >> 8) % 2001) / 1000.0f - 1.0f;
  }
  for (int r = -1; r < repeat; ++r) {
    double start = now();
    dnnl_status_t status = dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n,
                                      0.0f, c, n);
    double stop = now();
    if (status != dnnl_success) {
      fprintf(stderr, "kiln-bench-dnnl-gemm: dnnl_sgemm failed (%d)\n",
              (int)status);
      return 1;
    }
    if (r >= 0)
      times[r] = stop - start;
    if (r == -1) {
      for (long i = 0; i < n; i += 37)
        for (long j = 0; j < n; j += 41) {
          double want = 0;
          for (long k = 0; k < n; ++k)
            want += (double)a[i * n + k] * b[k * n + j];
          if (fabs(want - c[i * n + j]) > 1e-3 * (1.0 + fabs(want))) {
            fprintf(stderr, "kiln-bench-dnnl-gemm: wrong C[%ld][%ld]\n", i, j);
            return 1;
          }
        }
    }
  }
  qsort(times, repeat, sizeof(double), compareDoubles);
  double median = repeat % 2 ? times[repeat / 2]
                             : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
  printf("median_s %.9f\ngflops %.3f\n", median, 2.0 * n * n * n / median / 1e9);
  free(a);
  free(b);
  free(c);
  free(times);
  return 0;
}
