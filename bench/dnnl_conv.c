/*===- dnnl_conv.c - oneDNN convolution for the kiln benchmarks ------------===*\
 *
 * One 2-d f32 convolution with oneDNN's convolution primitive, the anchor
 * of bench/bench.py's convolution workloads: src [N, C, H, H], weights
 * [O, C, K, K], dst [N, O, E, E], stride S and padding P on every side, in
 * the plain row-major layouts (nchw, oihw) that the caller's tensors have,
 * as kiln's generated code calls it. The primitive is created once, before
 * timing; each timed call creates the memory objects and stream and
 * executes, as a caller that gets new buffers each call does. The thread
 * count comes from OMP_NUM_THREADS (oneDNN's OpenMP runtime). Before
 * timing, outputs on a grid are checked against a double-precision sum.
 * Prints the median of REPEAT calls after one warm-up.
 *
 * With a ninth argument `blocked`, the primitive instead chooses its own
 * layouts (format `any`, typically channel-blocked), and each timed call
 * also reorders src and weights into them and dst back, the work a caller
 * with plain tensors then does per call.
 *
 *   kiln-bench-dnnl-conv N C H O K S P REPEAT [blocked]
 *
\*===----------------------------------------------------------------------===*/
#include <dnnl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define CHECK(call)                                                            \
  do {                                                                         \
    dnnl_status_t status_ = (call);                                            \
    if (status_ != dnnl_success) {                                             \
      fprintf(stderr, "kiln-bench-dnnl-conv: %s failed (%d)\n", #call,        \
              (int)status_);                                                   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 9 && !(argc == 10 && strcmp(argv[9], "blocked") == 0)) {
    fprintf(stderr, "usage: kiln-bench-dnnl-conv N C H O K S P REPEAT [blocked]\n");
    return 2;
  }
  int blocked = argc == 10;
  long n = atol(argv[1]), c = atol(argv[2]), h = atol(argv[3]),
       o = atol(argv[4]), k = atol(argv[5]), s = atol(argv[6]),
       p = atol(argv[7]);
  int repeat = atoi(argv[8]);
  long e = (h + 2 * p - k) / s + 1;
  if (n <= 0 || c <= 0 || h <= 0 || o <= 0 || k <= 0 || s <= 0 || p < 0 ||
      e <= 0 || repeat <= 0) {
    fprintf(stderr, "kiln-bench-dnnl-conv: bad shape or REPEAT\n");
    return 2;
  }
  float *src = malloc(sizeof(float) * n * c * h * h);
  float *wei = malloc(sizeof(float) * o * c * k * k);
  float *dst = malloc(sizeof(float) * n * o * e * e);
  double *times = malloc(sizeof(double) * repeat);
  if (!src || !wei || !dst || !times) {
    fprintf(stderr, "kiln-bench-dnnl-conv: out of memory\n");
    return 1;
  }
  unsigned state = 12345u;
  for (long i = 0; i < n * c * h * h; ++i) {
    state = state * 1664525u + 1013904223u;
    src[i] = (float)((state >> 8) % 2001) / 1000.0f - 1.0f;
  }
  for (long i = 0; i < o * c * k * k; ++i) {
    state = state * 1664525u + 1013904223u;
    wei[i] = (float)((state >> 8) % 2001) / 1000.0f - 1.0f;
  }

  dnnl_engine_t engine;
  CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
  dnnl_dims_t srcDims = {n, c, h, h}, weiDims = {o, c, k, k},
              dstDims = {n, o, e, e};
  dnnl_dims_t strides = {s, s}, dilates = {0, 0}, pads = {p, p};
  dnnl_memory_desc_t srcMd, weiMd, dstMd;
  CHECK(dnnl_memory_desc_init_by_tag(&srcMd, 4, srcDims, dnnl_f32, dnnl_nchw));
  CHECK(dnnl_memory_desc_init_by_tag(&weiMd, 4, weiDims, dnnl_f32, dnnl_oihw));
  CHECK(dnnl_memory_desc_init_by_tag(&dstMd, 4, dstDims, dnnl_f32, dnnl_nchw));
  dnnl_memory_desc_t convMd[3] = {srcMd, weiMd, dstMd};
  if (blocked) {
    CHECK(dnnl_memory_desc_init_by_tag(&convMd[0], 4, srcDims, dnnl_f32,
                                       dnnl_format_tag_any));
    CHECK(dnnl_memory_desc_init_by_tag(&convMd[1], 4, weiDims, dnnl_f32,
                                       dnnl_format_tag_any));
    CHECK(dnnl_memory_desc_init_by_tag(&convMd[2], 4, dstDims, dnnl_f32,
                                       dnnl_format_tag_any));
  }
  dnnl_convolution_desc_t cd;
  CHECK(dnnl_dilated_convolution_forward_desc_init(
      &cd, dnnl_forward_inference, dnnl_convolution_direct, &convMd[0],
      &convMd[1], NULL, &convMd[2], strides, dilates, pads, pads));
  dnnl_primitive_desc_t pd;
  CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, engine, NULL));
  /* In blocked mode: the primitive's layouts, buffers in them, and the
   * reorders user src -> conv src, user weights -> conv weights, conv dst
   * -> user dst. */
  dnnl_memory_desc_t userMd[3] = {srcMd, weiMd, dstMd};
  dnnl_primitive_t reorders[3] = {NULL, NULL, NULL};
  void *staged[3] = {NULL, NULL, NULL};
  if (blocked) {
    dnnl_query_t queries[3] = {dnnl_query_src_md, dnnl_query_weights_md,
                               dnnl_query_dst_md};
    for (int i = 0; i < 3; ++i) {
      convMd[i] = *dnnl_primitive_desc_query_md(pd, queries[i], 0);
      staged[i] = aligned_alloc(64, (dnnl_memory_desc_get_size(&convMd[i]) + 63) / 64 * 64);
      dnnl_primitive_desc_t rpd;
      const dnnl_memory_desc_t *from = i < 2 ? &userMd[i] : &convMd[i];
      const dnnl_memory_desc_t *to = i < 2 ? &convMd[i] : &userMd[i];
      CHECK(dnnl_reorder_primitive_desc_create(&rpd, from, engine, to, engine, NULL));
      CHECK(dnnl_primitive_create(&reorders[i], rpd));
      dnnl_primitive_desc_destroy(rpd);
    }
  }
  const char *impl = "?";
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  dnnl_primitive_t conv;
  CHECK(dnnl_primitive_create(&conv, pd));

  for (int r = -1; r < repeat; ++r) {
    double start = now();
    dnnl_memory_t mems[3], stagedMems[3];
    void *user[3] = {src, wei, dst};
    for (int i = 0; i < 3; ++i) {
      CHECK(dnnl_memory_create(&mems[i], &userMd[i], engine, user[i]));
      if (blocked)
        CHECK(dnnl_memory_create(&stagedMems[i], &convMd[i], engine, staged[i]));
    }
    dnnl_stream_t stream;
    CHECK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    dnnl_memory_t *convMems = blocked ? stagedMems : mems;
    for (int i = 0; blocked && i < 2; ++i) {
      dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, mems[i]},
                              {DNNL_ARG_TO, stagedMems[i]}};
      CHECK(dnnl_primitive_execute(reorders[i], stream, 2, r));
    }
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, convMems[0]},
                               {DNNL_ARG_WEIGHTS, convMems[1]},
                               {DNNL_ARG_DST, convMems[2]}};
    CHECK(dnnl_primitive_execute(conv, stream, 3, args));
    if (blocked) {
      dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, stagedMems[2]},
                              {DNNL_ARG_TO, mems[2]}};
      CHECK(dnnl_primitive_execute(reorders[2], stream, 2, r));
    }
    CHECK(dnnl_stream_wait(stream));
    dnnl_stream_destroy(stream);
    for (int i = 0; i < 3; ++i) {
      dnnl_memory_destroy(mems[i]);
      if (blocked)
        dnnl_memory_destroy(stagedMems[i]);
    }
    double stop = now();
    if (r >= 0)
      times[r] = stop - start;
    if (r == -1) {
      for (long b = 0; b < n; b += 3)
        for (long oc = 0; oc < o; oc += 7)
          for (long y = 0; y < e; y += 5)
            for (long x = 0; x < e; x += 3) {
              double want = 0;
              for (long ic = 0; ic < c; ++ic)
                for (long ky = 0; ky < k; ++ky)
                  for (long kx = 0; kx < k; ++kx) {
                    long iy = y * s + ky - p, ix = x * s + kx - p;
                    if (iy < 0 || iy >= h || ix < 0 || ix >= h)
                      continue;
                    want += (double)src[((b * c + ic) * h + iy) * h + ix] *
                            wei[((oc * c + ic) * k + ky) * k + kx];
                  }
              double got = dst[((b * o + oc) * e + y) * e + x];
              if (fabs(want - got) > 1e-3 * (1.0 + fabs(want))) {
                fprintf(stderr, "kiln-bench-dnnl-conv: wrong dst[%ld][%ld][%ld][%ld]\n",
                        b, oc, y, x);
                return 1;
              }
            }
    }
  }
  qsort(times, repeat, sizeof(double), compareDoubles);
  printf("median_s %.9f\n", times[repeat / 2]);
  printf("min_s %.9f\n", times[0]);
  printf("impl %s\n", impl);
  for (int i = 0; i < 3; ++i) {
    if (reorders[i])
      dnnl_primitive_destroy(reorders[i]);
    free(staged[i]);
  }
  dnnl_primitive_destroy(conv);
  dnnl_primitive_desc_destroy(pd);
  dnnl_engine_destroy(engine);
  free(src);
  free(wei);
  free(dst);
  free(times);
  return 0;
}
