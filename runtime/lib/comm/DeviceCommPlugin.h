/*===- DeviceCommPlugin.h - The interface of device communicator plug-ins -*- C -*-===*\
|*                                                                            *|
|* The collectives of a CUDA module exchange device buffers, in the order of  *|
|* the module's stream. A device communicator plug-in moves them on an       *|
|* existing engine (libkiln_comm_nccl.so on NCCL); the runtime dlopens it     *|
|* the first time a CUDA module starts a collective, so neither the runtime   *|
|* nor kiln-run links a CUDA or NCCL library.                                 *|
|*                                                                            *|
|* Division of work: the run's communicator (CommPlugin.h, over MPI, or the   *|
|* built-in one of a single rank) remains the control plane. It compares     *|
|* every collective among the ranks before it starts (CollectiveCall.h) and  *|
|* carries each device group's unique id from the group's first member to    *|
|* the others. The device plug-in only makes groups from such an id and      *|
|* queues collectives on a stream; it never synchronizes the host with the   *|
|* stream.                                                                    *|
|*                                                                            *|
|* A group is one replica group, or all ranks of the run (the collectives   *|
|* over every rank and the permutations), its members numbered by their     *|
|* position in the group's row (kiln/CollectiveAbi.h): group ranks, not the  *|
|* run's. Every member creates the group with the same id, the group's size *|
|* and its own group rank; the creation returns once all members took part. *|
|* Groups are made on the device that is current on the calling thread (the *|
|* CUDA module's context, which the runtime makes current for the call).    *|
|*                                                                            *|
|* Every function that returns int returns 0 on success, or nonzero after    *|
|* writing a NUL-terminated description of the failure into                   *|
|* error[0 .. error_size - 1].                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_LIB_COMM_DEVICECOMMPLUGIN_H
#define KILN_RUNTIME_LIB_COMM_DEVICECOMMPLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_DEVICE_COMM_PLUGIN_VERSION 1

/* The symbol a plug-in exports: const kiln_device_comm_plugin_t *ENTRY(void). */
#define KILN_DEVICE_COMM_PLUGIN_ENTRY "kiln_device_comm_plugin"

/* The most bytes a group's unique id may take. */
#define KILN_DEVICE_COMM_MAX_ID_BYTES 256

/* One collective over one group, on device buffers. kind, reduction and
 * dtype are the codes of kiln/CollectiveAbi.h and kiln_dtype_t; count is
 * the number of elements of input, and the output's size follows from the
 * kind as there (S = the group's size):
 *   ALL_REDUCE      output[count] = reduction over the group of input
 *   ALL_GATHER      output[count * S] = the inputs in group-rank order
 *   REDUCE_SCATTER  output[count / S] = block (group rank) of the reduction
 *   BROADCAST       output[count] = input of group rank `root`
 *   ALL_TO_ALL      block j of input (count / S elements) goes to group
 *                   rank j; output block i comes from group rank i
 *   PERMUTE         input goes to group rank send_to (-1: nowhere);
 *                   output[count] = the input of group rank recv_from, or
 *                   zeros when recv_from is -1. The group is all ranks.
 * The reductions follow kiln/CollectiveAbi.h where the engine can: i1
 * elements (one byte, 0 or 1) sum as a logical or. */
typedef struct kiln_device_comm_collective_t {
  int32_t kind;
  int32_t reduction;
  int32_t dtype;
  const void *input;
  void *output;
  int64_t count;
  int64_t root;
  int64_t send_to;
  int64_t recv_from;
  /* The CUstream the collective is queued on, after the work queued there
   * before it and before the work queued after it. */
  void *stream;
} kiln_device_comm_collective_t;

typedef struct kiln_device_comm_plugin_t {
  /* KILN_DEVICE_COMM_PLUGIN_VERSION of the header the plug-in was built
   * with. */
  uint32_t version;
  /* "nccl", for messages. */
  const char *name;
  /* The bytes of a unique id, at most KILN_DEVICE_COMM_MAX_ID_BYTES. */
  int64_t id_bytes;

  /* Writes a new unique id (id_bytes) into id: the group's first member
   * makes it, the run's communicator carries it to the others. */
  int (*make_id)(void *id, char *error, size_t error_size);
  /* Joins the group identified by id as group rank `rank` of `size`;
   * returns once all members have joined. */
  int (*create)(void **group, const void *id, int64_t size, int64_t rank,
                char *error, size_t error_size);
  /* Releases a group (after the work queued for it). */
  void (*destroy)(void *group);
  /* Queues one collective on collective->stream and returns without
   * waiting for it. Only collectives that every member starts in the same
   * order reach it (the runtime has compared them). */
  int (*start)(void *group, const kiln_device_comm_collective_t *collective,
               char *error, size_t error_size);
} kiln_device_comm_plugin_t;

typedef const kiln_device_comm_plugin_t *(*kiln_device_comm_plugin_entry_fn)(
    void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_LIB_COMM_DEVICECOMMPLUGIN_H */
