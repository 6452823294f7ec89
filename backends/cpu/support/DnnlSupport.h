/*===- DnnlSupport.h - What the oneDNN support files share -----------------===*\
 *
 * DnnlConv.c and DnnlMatmul.c, linked together into the modules that call
 * them (the kiln_dnnl_support archive), run their primitives on one CPU
 * engine per module and report oneDNN's failures the same way. Hidden
 * symbols: every module has its own copy.
 *
\*===----------------------------------------------------------------------===*/

#ifndef KILN_BACKENDS_CPU_SUPPORT_DNNLSUPPORT_H
#define KILN_BACKENDS_CPU_SUPPORT_DNNLSUPPORT_H

#include <dnnl.h>

#define KILN_HIDDEN __attribute__((visibility("hidden")))

/* The module's CPU engine, created by the first call that needs it (two
 * threads that race both create one; the first to publish it wins) and
 * destroyed when the module is unloaded, after every primitive. */
KILN_HIDDEN dnnl_engine_t kiln_dnnl_engine(void);

/* Prints "kiln: oneDNN <component>: <what> failed (status N)" and aborts:
 * oneDNN failing on descriptors it accepted is a broken installation. */
KILN_HIDDEN __attribute__((noreturn)) void
kiln_dnnl_fail(const char *component, const char *what, dnnl_status_t status);

#endif /* KILN_BACKENDS_CPU_SUPPORT_DNNLSUPPORT_H */
