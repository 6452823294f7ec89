/*===- SanitizerDefaults.c - Options every ASan-built kiln program needs ---===*\
 *
 * Linked into each executable of a -DKILN_SANITIZE build with
 * AddressSanitizer (cmake/KilnSanitize.cmake). The runtime reads these
 * options before ASAN_OPTIONS, which can still override them.
 *
 * intercept_tls_get_addr=0: the sanitizer runtimes of GCC 12 (libasan.so.8)
 * and clang 14 record a thread's dynamic TLS blocks (the __thread data of
 * dlopened libraries) from a __tls_get_addr interceptor. A block whose
 * address is 16 modulo 4096 they take for one that glibc 2.19-2.24 mapped
 * behind a {size, start} header, and they read those two words as its
 * range. Since glibc 2.25 a block that does not fit in the spare static TLS
 * comes from malloc, and a new thread's first small block usually sits 16
 * bytes into a fresh page (its allocator cache starts one, and ASan's chunk
 * header is 16 bytes): the "header" is ASan's own, the range is garbage,
 * and LeakSanitizer's tracer dies scanning it at exit ("Tracer caught
 * signal 11"). The OpenMP (libomp) and oneDNN (libgomp) workers of a
 * compiled module are such threads. Without the interceptor nothing is
 * lost: LeakSanitizer treats the blocks the dynamic loader allocated as
 * reachable and scans them like any other heap block.
 *
\*===----------------------------------------------------------------------===*/

__attribute__((used, visibility("default"))) const char *
__asan_default_options(void) {
  return "intercept_tls_get_addr=0";
}
