/*===- KernelMacros.h - What kiln's own C kernels share --------------------===*\
 *
 * Included by the kernels of kiln's own archives (Attention.c,
 * PackedMatmul.c), whose helpers pass GCC's generic vectors to each other:
 * the helpers are always inlined, so those vectors never cross a call and
 * the ABI changes -Wpsabi reports do not apply (GCC's note needs -Wno-psabi
 * on the command line too, see backends/CMakeLists.txt). Their entry
 * points are hidden: every module gets its own copy, and a module unloaded
 * while another still runs must not take the other's code along.
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_KERNELMACROS_H
#define KILN_BACKENDS_CPU_SUPPORT_KERNELMACROS_H

#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define KILN_HIDDEN __attribute__((visibility("hidden")))
#define KILN_INLINE static inline __attribute__((always_inline))

#endif /* KILN_BACKENDS_CPU_SUPPORT_KERNELMACROS_H */
