//===- DnnlConvLayouts.cpp - The layouts oneDNN wants for a convolution ---===//
//
// See DnnlConvLayouts.h. Creating a primitive descriptor chooses an
// implementation (and with it the layouts) without generating its kernel,
// so asking costs little next to the rest of a compile.
//
//===----------------------------------------------------------------------===//

#include "DnnlConvLayouts.h"

#ifdef KILN_HAVE_DNNL
#include "support/DnnlConvAbi.h"
#include "support/DnnlConvDesc.h"

#include "llvm/ADT/StringRef.h"

#include <dnnl.h>

#include <vector>
#endif

using namespace mlir::kiln::dnnl;

#ifdef KILN_HAVE_DNNL
/// One engine for the compiler's lifetime: it holds no more than the CPU's
/// description. Null where oneDNN has none.
static dnnl_engine_t compileEngine() {
  static dnnl_engine_t engine = [] {
    dnnl_engine_t created = nullptr;
    if (dnnl_engine_create(&created, dnnl_cpu, 0) != dnnl_success)
      return static_cast<dnnl_engine_t>(nullptr);
    return created;
  }();
  return engine;
}

/// The name of the implementation oneDNN chose for `pd` ("jit_dw:avx2",
/// "gemm:jit", "ref:any"), or an empty one.
static llvm::StringRef implementationOf(const_dnnl_primitive_desc_t pd) {
  const char *name = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) !=
          dnnl_success ||
      !name)
    return {};
  return name;
}
#endif

std::optional<ConvLayouts>
mlir::kiln::dnnl::preferredLayouts(llvm::ArrayRef<int64_t> descriptor,
                                   int32_t srcZeroPoint, int32_t dstZeroPoint) {
#ifdef KILN_HAVE_DNNL
  dnnl_engine_t engine = compileEngine();
  if (!engine)
    return std::nullopt;
  const int64_t *desc = descriptor.data();
  int64_t flags = desc[5] | KILN_DNNL_CONV_BLOCKED;
  dnnl_data_type_t type =
      (flags & KILN_DNNL_CONV_BFLOAT16) ? dnnl_bf16 : dnnl_f32;
  // The channels-last descriptions, whose dims the `any` layouts share.
  dnnl_memory_desc_t last[3], bias;
  if (kiln_dnnl_conv_describe(desc,
                              flags | KILN_DNNL_CONV_CHANNELS_LAST_SRC |
                                  KILN_DNNL_CONV_CHANNELS_LAST_DST,
                              type, last, &bias) != dnnl_success)
    return std::nullopt;
  dnnl_memory_desc_t any[3];
  dnnl_primitive_desc_t pd;
  // A quantized convolution's scales and zero point: their values do not
  // change which implementation runs, whether a zero point is there may.
  std::vector<float> scales(desc[4], 1.0f);
  KilnDnnlConvQuant quant{scales.data(), srcZeroPoint, dstZeroPoint};
  if (kiln_dnnl_conv_layouts(flags, last, any) != dnnl_success ||
      kiln_dnnl_conv_primitive_desc(desc, flags, any, &bias,
                                    /*binaryAddend=*/nullptr, &quant, engine,
                                    &pd) != dnnl_success)
    return std::nullopt;
  const dnnl_memory_desc_t *src =
      dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *dst =
      dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  ConvLayouts chosen;
  chosen.inputLast = dnnl_memory_desc_equal(src, &last[0]);
  chosen.resultLast = dnnl_memory_desc_equal(dst, &last[2]);
  // Which blocked layout, if one: each described as the call would (a
  // channel count that is no multiple of the block describes none).
  for (int64_t block : {8, 16}) {
    int64_t blocked = KILN_DNNL_CONV_BLOCKED_SRC | KILN_DNNL_CONV_BLOCKED_DST |
                      (block == 16 ? KILN_DNNL_CONV_BLOCK_16 : 0);
    dnnl_memory_desc_t user[3], unusedBias;
    for (int side : {0, 2}) {
      int64_t sideFlags = flags & ~int64_t(KILN_DNNL_CONV_BLOCKED_SRC |
                                           KILN_DNNL_CONV_BLOCKED_DST);
      sideFlags |= blocked & ~int64_t(side == 0 ? KILN_DNNL_CONV_BLOCKED_DST
                                                : KILN_DNNL_CONV_BLOCKED_SRC);
      if (kiln_dnnl_conv_describe(desc, sideFlags, type, user, &unusedBias) !=
              dnnl_success ||
          !dnnl_memory_desc_equal(side == 0 ? src : dst, &user[side]))
        continue;
      (side == 0 ? chosen.inputBlock : chosen.resultBlock) = block;
    }
  }
  dnnl_primitive_desc_destroy(pd);
  return chosen;
#else
  (void)descriptor;
  (void)srcZeroPoint;
  (void)dstZeroPoint;
  return std::nullopt;
#endif
}

bool mlir::kiln::dnnl::hasDirectKernel(llvm::ArrayRef<int64_t> descriptor,
                                       int64_t layoutFlags) {
#ifdef KILN_HAVE_DNNL
  dnnl_engine_t engine = compileEngine();
  if (!engine)
    return false;
  const int64_t *desc = descriptor.data();
  int64_t flags =
      (desc[5] & ~int64_t(KILN_DNNL_CONV_BLOCKED | KILN_DNNL_CONV_WINOGRAD)) |
      layoutFlags | KILN_DNNL_CONV_ANY_WEIGHTS;
  if (flags & KILN_DNNL_CONV_INT8)
    return false;
  dnnl_data_type_t type =
      (flags & KILN_DNNL_CONV_BFLOAT16) ? dnnl_bf16 : dnnl_f32;
  dnnl_memory_desc_t user[3], layouts[3], bias;
  dnnl_primitive_desc_t pd;
  if (kiln_dnnl_conv_describe(desc, flags, type, user, &bias) != dnnl_success ||
      kiln_dnnl_conv_layouts(flags, user, layouts) != dnnl_success ||
      kiln_dnnl_conv_primitive_desc(desc, flags, layouts, &bias,
                                    /*binaryAddend=*/nullptr,
                                    /*quant=*/nullptr, engine,
                                    &pd) != dnnl_success)
    return false;
  llvm::StringRef implementation = implementationOf(pd);
  bool direct =
      !implementation.empty() && !implementation.starts_with("ref") &&
      !implementation.contains("gemm") &&
      dnnl_memory_desc_equal(
          dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), &user[0]) &&
      dnnl_memory_desc_equal(
          dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), &user[2]);
  dnnl_primitive_desc_destroy(pd);
  return direct;
#else
  (void)descriptor;
  (void)layoutFlags;
  return false;
#endif
}

bool mlir::kiln::dnnl::hasInt8DotProducts() {
#ifdef KILN_HAVE_DNNL
  return kiln_dnnl_int8_dot_products() != 0;
#else
  return false;
#endif
}

bool mlir::kiln::dnnl::matmulPacksConstantB(int64_t m, int64_t n, int64_t k,
                                            bool transposeB) {
#ifdef KILN_HAVE_DNNL
  dnnl_engine_t engine = compileEngine();
  if (!engine || m <= 0 || n <= 0 || k <= 0)
    return false;
  dnnl_dims_t dimsA = {m, k}, dimsB = {k, n}, dimsC = {m, n};
  dnnl_memory_desc_t a, b, plainB, c;
  if (dnnl_memory_desc_init_by_tag(&a, 2, dimsA, dnnl_f32, dnnl_ab) ||
      dnnl_memory_desc_init_by_tag(&b, 2, dimsB, dnnl_f32,
                                   dnnl_format_tag_any) ||
      dnnl_memory_desc_init_by_tag(&plainB, 2, dimsB, dnnl_f32,
                                   transposeB ? dnnl_ba : dnnl_ab) ||
      dnnl_memory_desc_init_by_tag(&c, 2, dimsC, dnnl_f32, dnnl_ab))
    return false;
  dnnl_matmul_desc_t desc;
  dnnl_primitive_desc_t pd;
  if (dnnl_matmul_desc_init(&desc, &a, &b, nullptr, &c) ||
      dnnl_primitive_desc_create(&pd, &desc, nullptr, engine, nullptr))
    return false;
  llvm::StringRef implementation = implementationOf(pd);
  bool packs =
      !implementation.empty() && !implementation.starts_with("ref") &&
      !dnnl_memory_desc_equal(
          dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), &plainB);
  dnnl_primitive_desc_destroy(pd);
  return packs;
#else
  (void)m;
  (void)n;
  (void)k;
  (void)transposeB;
  return false;
#endif
}
