/*===- DynamicTlsThreads.c - A leak check with TLS-using threads alive -----===*\
 *
 * Usage: kiln-dynamic-tls-threads LIBRARY COUNT
 *
 * dlopens LIBRARY (DynamicTlsLibrary.c), has it start COUNT threads, and
 * exits with them still running, so that LeakSanitizer checks for leaks
 * while their dynamic TLS is live. Exits 0 when the check finds nothing.
 *
\*===----------------------------------------------------------------------===*/

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s LIBRARY COUNT\n", argv[0]);
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  int (*start)(unsigned) =
      (int (*)(unsigned))dlsym(library, "kiln_start_tls_threads");
  if (!start || start((unsigned)strtoul(argv[2], NULL, 10)) != 0) {
    fprintf(stderr, "cannot start the threads of %s\n", argv[1]);
    return 2;
  }
  return 0;
}
