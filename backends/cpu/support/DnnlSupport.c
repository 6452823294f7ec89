/*===- DnnlSupport.c - What the oneDNN support files share -----------------===*\
 *
 * See DnnlSupport.h. The engine outlives the primitives made on it: its
 * destructor has the lowest priority number, so it runs after the
 * unprioritized destructors of DnnlConv.c and DnnlMatmul.c that destroy
 * the cached primitives.
 *
\*===----------------------------------------------------------------------===*/

#include "DnnlSupport.h"

#include <stdio.h>
#include <stdlib.h>

static dnnl_engine_t sharedEngine;

__attribute__((destructor(101))) static void destroyEngine(void) {
  dnnl_engine_t cpu = __atomic_exchange_n(&sharedEngine, NULL,
                                          __ATOMIC_ACQ_REL);
  if (cpu)
    dnnl_engine_destroy(cpu);
}

void kiln_dnnl_fail(const char *component, const char *what,
                    dnnl_status_t status) {
  fprintf(stderr, "kiln: oneDNN %s: %s failed (status %d)\n", component, what,
          (int)status);
  abort();
}

dnnl_engine_t kiln_dnnl_engine(void) {
  dnnl_engine_t current = __atomic_load_n(&sharedEngine, __ATOMIC_ACQUIRE);
  if (current)
    return current;
  dnnl_engine_t created;
  dnnl_status_t status = dnnl_engine_create(&created, dnnl_cpu, 0);
  if (status != dnnl_success)
    kiln_dnnl_fail("engine", "dnnl_engine_create", status);
  dnnl_engine_t expected = NULL;
  if (!__atomic_compare_exchange_n(&sharedEngine, &expected, created, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    dnnl_engine_destroy(created);
    return expected;
  }
  return created;
}

KilnDnnlEntry *kiln_dnnl_publish(void **slot, KilnDnnlEntry **published,
                                 KilnDnnlEntry *created) {
  KilnDnnlEntry *expected = NULL;
  if (!__atomic_compare_exchange_n((KilnDnnlEntry **)slot, &expected, created,
                                   0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return expected;
  KilnDnnlEntry *head = __atomic_load_n(published, __ATOMIC_ACQUIRE);
  do
    created->next = head;
  while (!__atomic_compare_exchange_n(published, &head, created, 1,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  return created;
}
