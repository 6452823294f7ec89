/*===- stream_triad.c - STREAM triad bandwidth for the kiln benchmarks -----===*\
 *
 * a[i] = b[i] + s * c[i] over N floats with OpenMP (when built with it),
 * the reference bandwidth the elementwise workload of bench/bench.py is
 * compared with. Prints the median time of REPEAT runs after one warm-up and
 * the bandwidth counting 12 bytes per element (two reads, one write), as
 * STREAM does.
 *
 *   kiln-bench-stream N REPEAT
 *
\*===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: kiln-bench-stream N REPEAT\n");
    return 2;
  }
  long n = atol(argv[1]);
  int repeat = atoi(argv[2]);
  if (n <= 0 || repeat <= 0) {
    fprintf(stderr, "kiln-bench-stream: N and REPEAT must be positive\n");
    return 2;
  }
  float *a = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
  float *b = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
  float *c = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
  double *times = malloc(sizeof(double) * repeat);
  if (!a || !b || !c || !times) {
    fprintf(stderr, "kiln-bench-stream: out of memory\n");
    return 1;
  }
  const float s = 3.0f;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f + (float)(i % 7);
    c[i] = 2.0f - (float)(i % 5);
  }
  for (int r = -1; r < repeat; ++r) {
    double start = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + s * c[i];
    double stop = now();
    if (r >= 0)
      times[r] = stop - start;
  }
  for (long i = 0; i < n; i += 4099)
    if (a[i] != b[i] + s * c[i]) {
      fprintf(stderr, "kiln-bench-stream: wrong result at %ld\n", i);
      return 1;
    }
  qsort(times, repeat, sizeof(double), compareDoubles);
  double median = repeat % 2 ? times[repeat / 2]
                             : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
  printf("median_s %.9f\nbandwidth_gbs %.3f\n", median, 12.0 * n / median / 1e9);
  free(a);
  free(b);
  free(c);
  free(times);
  return 0;
}
