/*===- MemoryAbi.h - How compiled code's buffers reach the runtime -*- C -*-===*\
|*                                                                            *|
|* Code compiled for the CPU allocates and frees its buffers (memref.alloc,   *|
|* memref.dealloc) through two functions it defines itself, which call       *|
|* through pointer slots the module exports; the runtime fills them when it  *|
|* loads the module with functions that count the bytes the program's        *|
|* buffers hold (kiln_memory_stats in runtime.h). While a slot is empty the  *|
|* code calls malloc and free. Header-only, valid C and C++, shared by the   *|
|* CPU backend (kiln-cpu-memory-hooks) and the runtime.                      *|
|*                                                                            *|
|* A module exports two writable, pointer-sized data objects:                *|
|*                                                                            *|
|*   KILN_MEMORY_SLOT_ALLOC  a kiln_memory_alloc_fn: returns a block of at   *|
|*                           least `bytes` bytes, aligned to 16 bytes (the   *|
|*                           code aligns further itself), or NULL.           *|
|*   KILN_MEMORY_SLOT_FREE   a kiln_memory_free_fn: frees a block the alloc  *|
|*                           slot's function returned; NULL does nothing.    *|
|*                                                                            *|
|* Both slots are filled together, before any function of the module runs,   *|
|* so every block is freed by the function that matches its allocation.     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_MEMORYABI_H
#define KILN_MEMORYABI_H

#include <stdint.h>

#define KILN_MEMORY_SLOT_ALLOC "kiln_memory_fn_alloc"
#define KILN_MEMORY_SLOT_FREE "kiln_memory_fn_free"

typedef void *(*kiln_memory_alloc_fn)(uint64_t bytes);
typedef void (*kiln_memory_free_fn)(void *block);

#endif /* KILN_MEMORYABI_H */
