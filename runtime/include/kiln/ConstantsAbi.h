/*===- ConstantsAbi.h - Where compiled code finds its constants -*- C -*-===*\
|*                                                                            *|
|* A CPU module keeps its large constants (a model's weights) out of its code *|
|* object: they are the bytes of the body's `constants` field (kmod.fbs), and *|
|* the code reads each at a fixed offset from a base address the runtime      *|
|* stores, when it loads the module, into a pointer slot the code exports.    *|
|* Weights then never pass through LLVM, the object writer or the linker, and *|
|* the runtime loads them with one copy. Header-only, valid C and C++, shared *|
|* by the CPU backend (kiln-cpu-pool-constants) and the runtime.              *|
|*                                                                            *|
|* A module whose code reads pooled constants exports two data objects:       *|
|*                                                                            *|
|*   KILN_CONSTANTS_SLOT  a writable pointer: the address of the module's     *|
|*                        constants, aligned to KILN_CONSTANTS_ALIGNMENT      *|
|*                        bytes, stored before any function of the module     *|
|*                        runs.                                               *|
|*   KILN_CONSTANTS_SIZE  a uint64_t: how many bytes the code reads there;   *|
|*                        the runtime refuses a module whose `constants`     *|
|*                        field has another size.                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_CONSTANTSABI_H
#define KILN_CONSTANTSABI_H

#define KILN_CONSTANTS_SLOT "kiln_constants"
#define KILN_CONSTANTS_SIZE "kiln_constants_size"

/* Every pooled constant starts at a multiple of this many bytes from the
   base, and the base is aligned to it: a cache line, the alignment kiln
   gives a constant in code (FlattenGlobals.cpp). */
#define KILN_CONSTANTS_ALIGNMENT 64

#endif /* KILN_CONSTANTSABI_H */
