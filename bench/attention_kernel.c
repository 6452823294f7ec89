/*===- attention_kernel.c - the CPU attention kernels alone ---------------===*\
 *
 * Times kiln_attention_f32_forward and kiln_attention_f32_backward
 * (backends/cpu/support/Attention.c, the archive compiled modules link)
 * called directly on one thread, without kiln-run, a module or OpenMP:
 * the forward for every (head, query tile), then the backward for every
 * head, on H heads of N x 64 f32 with standard normal q, k, v and dout
 * (or q, k, v from Q.N.npy, K.N.npy, V.N.npy in DIR, as bench/attention.py
 * writes them). Prints the median and minimum of REPEAT rounds per pass
 * and the forward's and backward's GFLOP/s (4 and 10 N^2 D flops per head,
 * half with a causal mask). A check on the first round compares a few
 * rows of the forward with a double-precision reference, so that a
 * broken kernel reports an error instead of a time.
 *
 *   kiln-bench-attention-kernel N [TILE [CAUSAL [REPEAT [HEADS [DIR]]]]]
 *
 * TILE: the query rows per forward call (kiln-cpu-outline-attention's
 * query-tile, default 256). This is the tool for comparing two versions
 * of the kernels on a noisy machine: build each, then run them in turn
 * several times (bench/README.md, "Attention kernels").
 *
\*===----------------------------------------------------------------------===*/
#include "AttentionAbi.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

enum { kHeadDim = 64 };

/* Standard normal floats (Box-Muller over a 64-bit LCG). */
static void fillNormal(float *x, size_t n, uint64_t *state) {
  for (size_t i = 0; i < n; ++i) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    double u1 = ((*state >> 11) + 1.0) / 9007199254740993.0;
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    double u2 = (*state >> 11) / 9007199254740992.0;
    x[i] = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
  }
}

/* The data of a float32 .npy file of n elements, or 0 when it is not. */
static int readNpy(const char *path, float *x, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  unsigned char head[10];
  int ok = fread(head, 1, 10, f) == 10 && memcmp(head, "\x93NUMPY", 6) == 0;
  if (ok) {
    size_t headerLength = head[8] | (size_t)head[9] << 8;
    char header[4096];
    ok = headerLength < sizeof header &&
         fread(header, 1, headerLength, f) == headerLength;
    if (ok) {
      header[headerLength] = 0;
      ok = strstr(header, "'<f4'") != NULL && fread(x, 4, n, f) == n;
    }
  }
  fclose(f);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 7) {
    fprintf(stderr, "usage: %s N [TILE [CAUSAL [REPEAT [HEADS [DIR]]]]]\n",
            argv[0]);
    return 2;
  }
  const int64_t n = atoll(argv[1]);
  const int64_t tile = argc > 2 ? atoll(argv[2]) : 256;
  const int causal = argc > 3 ? atoi(argv[3]) : 0;
  const int repeat = argc > 4 ? atoi(argv[4]) : 5;
  const int64_t heads = argc > 5 ? atoll(argv[5]) : 8;
  if (n < 1 || tile < 1 || repeat < 1 || heads < 1) {
    fprintf(stderr, "N, TILE, REPEAT and HEADS must be positive\n");
    return 2;
  }
  const int64_t d = kHeadDim;
  int64_t desc[KILN_ATTENTION_HEADER_SIZE + 1] = {0};
  desc[KILN_ATTENTION_BATCH] = heads;
  desc[KILN_ATTENTION_QUERIES] = n;
  desc[KILN_ATTENTION_KEYS] = n;
  desc[KILN_ATTENTION_HEAD_DIM] = d;
  desc[KILN_ATTENTION_VALUE_DIM] = d;
  desc[KILN_ATTENTION_FLAGS] = causal ? KILN_ATTENTION_CAUSAL : 0;
  double scale = 1.0 / sqrt((double)d);
  memcpy(&desc[KILN_ATTENTION_SCALE_BITS], &scale, sizeof scale);
  desc[KILN_ATTENTION_QUERY_TILE] = tile;
  desc[KILN_ATTENTION_LEADING_RANK] = 1;
  desc[KILN_ATTENTION_HEADER_SIZE] = heads;

  const size_t elems = (size_t)(heads * n * d);
  float *buf[9];
  for (int i = 0; i < 9; ++i) {
    buf[i] = aligned_alloc(64, (elems * sizeof(float) + 63) & ~(size_t)63);
    if (!buf[i]) {
      fprintf(stderr, "out of memory\n");
      return 1;
    }
  }
  float *q = buf[0], *k = buf[1], *v = buf[2], *dout = buf[3], *out = buf[4];
  float *dq = buf[5], *dk = buf[6], *dv = buf[7], *lse = buf[8];
  uint64_t state = 20261125;
  fillNormal(dout, elems, &state);
  if (argc > 6) {
    const char *names[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s.%lld.npy", argv[6], names[i],
               (long long)n);
      if (!readNpy(path, buf[i], elems)) {
        fprintf(stderr, "cannot read %lld float32 values from %s\n",
                (long long)elems, path);
        return 1;
      }
    }
  } else {
    fillNormal(q, elems, &state);
    fillNormal(k, elems, &state);
    fillNormal(v, elems, &state);
  }

  double *forward = malloc(repeat * sizeof(double));
  double *backward = malloc(repeat * sizeof(double));
  const int64_t tiles = (n + tile - 1) / tile;
  for (int r = 0; r < repeat; ++r) {
    double t0 = now();
    for (int64_t b = 0; b < heads; ++b)
      for (int64_t t = 0; t < tiles; ++t)
        kiln_attention_f32_forward(desc, q, k, v, NULL, out, lse, b, t);
    double t1 = now();
    for (int64_t b = 0; b < heads; ++b)
      kiln_attention_f32_backward(desc, q, k, v, NULL, out, lse, dout, dq, dk,
                                  dv, b);
    double t2 = now();
    forward[r] = t1 - t0;
    backward[r] = t2 - t1;
    if (r > 0)
      continue;
    /* Rows 0, n / 2 and n - 1 of the last head against a reference. */
    const int64_t h = heads - 1;
    const int64_t rows[3] = {0, n / 2, n - 1};
    double worst = 0.0;
    double *s = malloc(n * sizeof(double));
    for (int c = 0; c < 3; ++c) {
      const int64_t i = rows[c], keys = causal ? i + 1 : n;
      const float *qi = q + (h * n + i) * d;
      double mx = -INFINITY, sum = 0.0;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0.0;
        for (int64_t e = 0; e < d; ++e)
          dot += (double)qi[e] * k[(h * n + j) * d + e];
        s[j] = dot * scale;
        mx = s[j] > mx ? s[j] : mx;
      }
      for (int64_t j = 0; j < keys; ++j)
        sum += exp(s[j] - mx);
      for (int64_t e = 0; e < d; ++e) {
        double o = 0.0;
        for (int64_t j = 0; j < keys; ++j)
          o += exp(s[j] - mx) / sum * v[(h * n + j) * d + e];
        double err = fabs(o - out[(h * n + i) * d + e]);
        worst = err > worst ? err : worst;
      }
    }
    free(s);
    if (!(worst < 1e-4)) {
      fprintf(stderr, "wrong forward result: error %.3g\n", worst);
      return 1;
    }
  }
  qsort(forward, repeat, sizeof(double), compareDoubles);
  qsort(backward, repeat, sizeof(double), compareDoubles);
  const double pairs = (double)heads * n * n * d * (causal ? 0.5 : 1.0);
  printf("N=%lld heads=%lld tile=%lld causal=%d: forward median %.3f ms min "
         "%.3f ms (%.0f GFLOP/s), backward median %.3f ms min %.3f ms "
         "(%.0f GFLOP/s)\n",
         (long long)n, (long long)heads, (long long)tile, causal,
         forward[repeat / 2] * 1e3, forward[0] * 1e3,
         4.0 * pairs / forward[0] * 1e-9, backward[repeat / 2] * 1e3,
         backward[0] * 1e3, 10.0 * pairs / backward[0] * 1e-9);
  for (int i = 0; i < 9; ++i)
    free(buf[i]);
  free(forward);
  free(backward);
  return 0;
}
