/*===- DynamicTlsLibrary.c - Threads that use a dlopened library's TLS -----===*\
 *
 * Loaded by DynamicTlsThreads.c. Each thread started here keeps the only
 * pointer to a heap block in its dynamic TLS, then sleeps for good, as
 * OpenMP and oneDNN workers wait for work: the block stays reachable, and
 * the leak check at exit must neither report it nor die walking the TLS.
 *
\*===----------------------------------------------------------------------===*/

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

/// Exported, so that the compiler keeps the stores to it.
__thread void *kiln_tls_held;
static pthread_barrier_t started;

static void *work(void *unused) {
  (void)unused;
  kiln_tls_held = malloc(64);
  pthread_barrier_wait(&started);
  for (;;)
    pause();
  return NULL;
}

/// Starts \p count threads and returns once each has filled its TLS.
int kiln_start_tls_threads(unsigned count) {
  if (pthread_barrier_init(&started, NULL, count + 1) != 0)
    return -1;
  for (unsigned i = 0; i < count; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, work, NULL) != 0)
      return -1;
  }
  pthread_barrier_wait(&started);
  return 0;
}
