/*===- CollectiveAbi.h - How compiled code reaches the communicator -*- C -*-===*\
|*                                                                            *|
|* Code compiled from kiln's collective ops (kiln.all_reduce, ...) never      *|
|* links a communication library. It calls through pointer slots it exports,  *|
|* named KILN_COMM_SLOT_PREFIX + the function's name, which the runtime fills *|
|* when it loads a module that has them (and only then loads a communicator   *|
|* plug-in). The functions act on the communicator of the call in progress on *|
|* this thread. Header-only, valid C and C++, shared by the CPU backend and   *|
|* the runtime so that both sides agree on every name and number.             *|
|*                                                                            *|
|* The functions (the slot holds a pointer to each):                          *|
|*                                                                            *|
|*   int64_t rank(void);   this process's rank in the run                     *|
|*   int64_t size(void);   the number of ranks in the run                     *|
|*                                                                            *|
|*   int64_t start(int32_t kind, int32_t reduction, int32_t dtype,            *|
|*                 const void *input, void *output, int64_t count,            *|
|*                 int64_t root, const int64_t *groups, int64_t group_count,  *|
|*                 int64_t group_size, const int64_t *pairs,                  *|
|*                 int64_t pair_count);                                       *|
|*     Starts one collective over this rank's replica group and returns a     *|
|*     handle for wait(). `groups` holds group_count rows of group_size world *|
|*     ranks (row-major); every rank of the run is in exactly one row, so     *|
|*     group_count x group_size is the number of ranks the code was compiled  *|
|*     for.                                                                   *|
|*     `count` is the number of elements of `input`; `dtype` a kiln_dtype_t   *|
|*     code (kiln/ElementTypes.def). By kind, with S = group_size and the     *|
|*     position of this rank in its row as its group index:                   *|
|*       ALL_REDUCE      output[count] = reduction over the group of input    *|
|*       ALL_GATHER      output[count * S] = the inputs in group order        *|
|*       REDUCE_SCATTER  output[count / S] = block (group index) of the       *|
|*                       reduction over the group of input                    *|
|*       BROADCAST       output[count] = input of group member `root`         *|
|*       ALL_TO_ALL      block j of input (count / S elements) goes to group  *|
|*                       member j; output block i comes from member i         *|
|*       PERMUTE         `pairs` holds pair_count (source, target) world-rank *|
|*                       pairs; output[count] = input of the source whose     *|
|*                       target this rank is, zeros where there is none;      *|
|*                       groups is NULL and group_count, group_size are 0     *|
|*     Multi-dimensional collectives (along a dimension other than the        *|
|*     leading one) and mean reductions are rewritten by the compiler into    *|
|*     these flat forms. `input` is not written and stays untouched until     *|
|*     wait() returns; `output` is undefined until then. The two do not       *|
|*     overlap. The members of a replica group start the group's            *|
|*     collectives in the same order (every rank, for a group of all ranks   *|
|*     and for permutations); the runtime compares them among the members    *|
|*     before each one starts. When the call's communicator has failed (a    *|
|*     mismatch between ranks, a lost peer), start records the error for the *|
|*     call, does nothing and returns -1: the runtime reports the error when  *|
|*     the compiled function returns, after telling every rank, so none      *|
|*     waits for the others.                                                  *|
|*                                                                            *|
|*   void wait(int64_t handle, const void *input, void *output);              *|
|*     Completes the collective `handle` started (a no-op for -1). `input`    *|
|*     and `output` are start's again: passing them keeps the compiler from   *|
|*     reusing either buffer while the exchange is in flight, and lets the    *|
|*     runtime check that they belong to `handle` (other buffers fail the     *|
|*     call, after the collective has completed).                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_COLLECTIVEABI_H
#define KILN_COLLECTIVEABI_H

#include <stdint.h>

/* Each slot is an exported, writable, pointer-sized data object named
 * KILN_COMM_SLOT_PREFIX "rank", ... "start", ... "wait". */
#define KILN_COMM_SLOT_PREFIX "kiln_comm_fn_"

typedef enum kiln_collective_kind_t {
  KILN_COLLECTIVE_ALL_REDUCE = 0,
  KILN_COLLECTIVE_ALL_GATHER = 1,
  KILN_COLLECTIVE_REDUCE_SCATTER = 2,
  KILN_COLLECTIVE_BROADCAST = 3,
  KILN_COLLECTIVE_ALL_TO_ALL = 4,
  KILN_COLLECTIVE_PERMUTE = 5,
} kiln_collective_kind_t;

/* The reductions of ALL_REDUCE and REDUCE_SCATTER (0 for the other kinds),
 * as the reference evaluator computes them. Integers of the unsigned dtypes
 * compare unsigned; integer sums wrap. i1 elements are 0 or 1: their SUM
 * saturates (a logical or), MAX is an or and MIN an and. Float MAX and MIN
 * propagate NaN and order -0 below +0; f16 and bf16 are summed in f32 and
 * rounded back to nearest even at each step. */
typedef enum kiln_collective_reduction_t {
  KILN_REDUCTION_SUM = 0,
  KILN_REDUCTION_MAX = 1,
  KILN_REDUCTION_MIN = 2,
} kiln_collective_reduction_t;

typedef int64_t (*kiln_comm_rank_fn)(void);
typedef int64_t (*kiln_comm_size_fn)(void);
typedef int64_t (*kiln_comm_start_fn)(int32_t kind, int32_t reduction,
                                      int32_t dtype, const void *input,
                                      void *output, int64_t count,
                                      int64_t root, const int64_t *groups,
                                      int64_t group_count, int64_t group_size,
                                      const int64_t *pairs,
                                      int64_t pair_count);
typedef void (*kiln_comm_wait_fn)(int64_t handle, const void *input,
                                  void *output);

#endif /* KILN_COLLECTIVEABI_H */
