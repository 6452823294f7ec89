/*===- ProfileAbi.h - How profiled code reaches the runtime --------*- C -*-===*\
|*                                                                            *|
|* Code compiled with kiln-compile --profile (the kiln-cpu-profile pass)      *|
|* brackets each of its regions - a fused loop nest, a oneDNN call, a loop    *|
|* of kiln.for or kiln.while - with calls that time it. Like the collectives *|
|* (CollectiveAbi.h) it links nothing: it calls through pointer slots it      *|
|* exports, which the runtime fills when it loads the module. Header-only,    *|
|* valid C and C++, shared by the CPU backend and the runtime so that both    *|
|* sides agree on every name.                                                 *|
|*                                                                            *|
|* A profiled module exports:                                                 *|
|*                                                                            *|
|*   KILN_PROFILE_REGION_COUNT  const int32_t: the number of regions, N.      *|
|*   KILN_PROFILE_REGION_NAMES  const char[]: N names, each terminated by a   *|
|*                              NUL, in the order of their region numbers     *|
|*                              0 to N-1.                                     *|
|*   KILN_PROFILE_REGION_BASE   int32_t, written by the runtime at load: the  *|
|*                              number the process gives region 0 of this     *|
|*                              module (regions of all loaded modules share   *|
|*                              one numbering).                               *|
|*   KILN_PROFILE_SLOT_PREFIX "begin", "end": pointer slots, each filled with *|
|*                              a kiln_profile_mark_fn.                       *|
|*                                                                            *|
|* The code calls begin(base + r) as region r starts and end(base + r) as it *|
|* ends, on the thread that runs it; regions nest properly on each thread.    *|
|* The runtime's functions return at once while profiling is off.             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_PROFILEABI_H
#define KILN_PROFILEABI_H

#include <stdint.h>

#define KILN_PROFILE_REGION_COUNT "kiln_profile_region_count"
#define KILN_PROFILE_REGION_NAMES "kiln_profile_region_names"
#define KILN_PROFILE_REGION_BASE "kiln_profile_region_base"

/* Each slot is an exported, writable, pointer-sized data object named
 * KILN_PROFILE_SLOT_PREFIX "begin" or ... "end". */
#define KILN_PROFILE_SLOT_PREFIX "kiln_profile_fn_"

typedef void (*kiln_profile_mark_fn)(int32_t region);

#endif /* KILN_PROFILEABI_H */
