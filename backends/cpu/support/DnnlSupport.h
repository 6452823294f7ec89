/*===- DnnlSupport.h - What the oneDNN support files share -----------------===*\
 *
 * DnnlConv.c and DnnlMatmul.c, linked together into the modules that call
 * them (the kiln_dnnl_support archive), run their primitives on one CPU
 * engine per module, publish the primitives they cache per call site the
 * same way and report oneDNN's failures the same way (DnnlSupport.c).
 * Hidden symbols: every module has its own copy.
 *
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_DNNLSUPPORT_H
#define KILN_BACKENDS_CPU_SUPPORT_DNNLSUPPORT_H

#include <dnnl.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KILN_HIDDEN __attribute__((visibility("hidden")))

/* oneDNN's memory objects take a non-const handle, also for the buffers a
 * primitive only reads. */
static inline void *kiln_dnnl_handle(const void *data) {
  return (void *)(uintptr_t)data;
}

/* bf16 -> f32, exactly: a bf16 value's bits are the high half of its f32
 * value's. Both files widen bf16 operands where oneDNN has no bf16 kernel
 * for this CPU. */
static inline float kiln_dnnl_widen_bf16(uint16_t bits) {
  uint32_t wide = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &wide, sizeof(value));
  return value;
}

/* A cache entry's link in its file's list of published entries, which the
 * file's destructor walks when the module is unloaded: the first member of
 * every entry type, so that an entry's address is its link's. */
typedef struct KilnDnnlEntry {
  struct KilnDnnlEntry *next;
} KilnDnnlEntry;

/* Publishes `created` as the entry of the call site whose cache slot is
 * `slot` (a pointer-sized module global, null at load), unless another
 * thread published one first (compare-and-swap). Returns the site's entry:
 * `created`, then also pushed on `*published`, or the other thread's, and
 * the caller destroys its own. */
KILN_HIDDEN KilnDnnlEntry *kiln_dnnl_publish(void **slot,
                                             KilnDnnlEntry **published,
                                             KilnDnnlEntry *created);

/* The module's CPU engine, created by the first call that needs it (two
 * threads that race both create one; the first to publish it wins) and
 * destroyed when the module is unloaded, after every primitive. */
KILN_HIDDEN dnnl_engine_t kiln_dnnl_engine(void);

/* Prints "kiln: oneDNN <component>: <what> failed (status N)" and aborts:
 * oneDNN failing on descriptors it accepted is a broken installation. */
KILN_HIDDEN __attribute__((noreturn)) void
kiln_dnnl_fail(const char *component, const char *what, dnnl_status_t status);

/* A 64-byte aligned buffer of at least `bytes` bytes; out of memory,
 * prints "kiln: oneDNN <component>: out of memory" and aborts. */
KILN_HIDDEN void *kiln_dnnl_allocate(const char *component, size_t bytes);

/* A primitive's scratchpad kept by its call site (primitives are made with
 * dnnl_scratchpad_mode_user: oneDNN's own scratchpad is not safe for calls
 * on several threads at once), used by one call at a time (`busy`); a call
 * that finds it taken allocates its own. `bytes` 0: none needed. */
typedef struct KilnDnnlScratchpad {
  dnnl_memory_desc_t md;
  size_t bytes;
  void *buffer;
  int busy;
} KilnDnnlScratchpad;

/* The scratchpad that `pd` asks for, allocated for `component`. */
KILN_HIDDEN void kiln_dnnl_scratchpad_init(KilnDnnlScratchpad *pad,
                                           const char *component,
                                           const_dnnl_primitive_desc_t pd);

/* A memory object on the site's scratchpad, or on a buffer of this call's
 * (`*own`) where another call holds it; null where none is needed. */
KILN_HIDDEN dnnl_memory_t kiln_dnnl_scratchpad_take(KilnDnnlScratchpad *pad,
                                                    const char *component,
                                                    void **own);

/* Ends the call's use of what kiln_dnnl_scratchpad_take gave it. */
KILN_HIDDEN void kiln_dnnl_scratchpad_give(KilnDnnlScratchpad *pad,
                                           dnnl_memory_t memory, void *own);

/* A reorder primitive on the module's engine from layout `from` to `to`
 * (failures reported for `component`, as kiln_dnnl_fail does). */
KILN_HIDDEN dnnl_primitive_t
kiln_dnnl_reorder_primitive(const char *component,
                            const dnnl_memory_desc_t *from,
                            const dnnl_memory_desc_t *to);

/* Runs `reorder` now, from `source` (layout `fromMd`) to `target` (layout
 * `toMd`), and waits for it: a constant weight packed once. */
KILN_HIDDEN void kiln_dnnl_reorder_now(const char *component,
                                       dnnl_primitive_t reorder,
                                       const dnnl_memory_desc_t *fromMd,
                                       const void *source,
                                       const dnnl_memory_desc_t *toMd,
                                       void *target);

#endif /* KILN_BACKENDS_CPU_SUPPORT_DNNLSUPPORT_H */
