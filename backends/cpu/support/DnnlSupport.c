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

void *kiln_dnnl_allocate(const char *component, size_t bytes) {
  void *buffer = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!buffer) {
    fprintf(stderr, "kiln: oneDNN %s: out of memory\n", component);
    abort();
  }
  return buffer;
}

void kiln_dnnl_scratchpad_init(KilnDnnlScratchpad *pad, const char *component,
                               const_dnnl_primitive_desc_t pd) {
  pad->md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  pad->bytes = dnnl_memory_desc_get_size(&pad->md);
  pad->buffer = pad->bytes ? kiln_dnnl_allocate(component, pad->bytes) : NULL;
  pad->busy = 0;
}

dnnl_memory_t kiln_dnnl_scratchpad_take(KilnDnnlScratchpad *pad,
                                        const char *component, void **own) {
  *own = NULL;
  if (!pad->bytes)
    return NULL;
  void *buffer = pad->buffer;
  if (__atomic_exchange_n(&pad->busy, 1, __ATOMIC_ACQUIRE))
    buffer = *own = kiln_dnnl_allocate(component, pad->bytes);
  dnnl_memory_t memory;
  dnnl_status_t status =
      dnnl_memory_create(&memory, &pad->md, kiln_dnnl_engine(), buffer);
  if (status)
    kiln_dnnl_fail(component, "dnnl_memory_create", status);
  return memory;
}

void kiln_dnnl_scratchpad_give(KilnDnnlScratchpad *pad, dnnl_memory_t memory,
                               void *own) {
  if (!memory)
    return;
  dnnl_memory_destroy(memory);
  if (own)
    free(own);
  else
    __atomic_store_n(&pad->busy, 0, __ATOMIC_RELEASE);
}

dnnl_primitive_t kiln_dnnl_reorder_primitive(const char *component,
                                             const dnnl_memory_desc_t *from,
                                             const dnnl_memory_desc_t *to) {
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t reorder;
  dnnl_status_t status;
  if ((status = dnnl_reorder_primitive_desc_create(
           &pd, from, kiln_dnnl_engine(), to, kiln_dnnl_engine(), NULL)))
    kiln_dnnl_fail(component, "dnnl_reorder_primitive_desc_create", status);
  status = dnnl_primitive_create(&reorder, pd);
  dnnl_primitive_desc_destroy(pd);
  if (status)
    kiln_dnnl_fail(component, "creating a reorder", status);
  return reorder;
}

void kiln_dnnl_reorder_now(const char *component, dnnl_primitive_t reorder,
                           const dnnl_memory_desc_t *fromMd, const void *source,
                           const dnnl_memory_desc_t *toMd, void *target) {
  dnnl_memory_t from, to;
  dnnl_stream_t stream;
  dnnl_status_t status;
  if ((status = dnnl_memory_create(&from, fromMd, kiln_dnnl_engine(),
                                   kiln_dnnl_handle(source))) ||
      (status = dnnl_memory_create(&to, toMd, kiln_dnnl_engine(), target)))
    kiln_dnnl_fail(component, "dnnl_memory_create", status);
  if ((status = dnnl_stream_create(&stream, kiln_dnnl_engine(),
                                   dnnl_stream_default_flags)))
    kiln_dnnl_fail(component, "dnnl_stream_create", status);
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if ((status = dnnl_primitive_execute(reorder, stream, 2, args)))
    kiln_dnnl_fail(component, "dnnl_primitive_execute", status);
  if ((status = dnnl_stream_wait(stream)))
    kiln_dnnl_fail(component, "dnnl_stream_wait", status);
  dnnl_stream_destroy(stream);
  dnnl_memory_destroy(from);
  dnnl_memory_destroy(to);
}
