/*===- CommPlugin.h - The interface of communicator plug-ins -----*- C -*-===*\
|*                                                                            *|
|* A communicator plug-in is a shared object that implements communication    *|
|* between the ranks of a run on an existing engine (libkiln_comm_mpi.so on   *|
|* OpenMPI). The runtime dlopens it only when a communicator over it is       *|
|* created, so the runtime itself links no communication library. The        *|
|* plug-in exports one C function, KILN_COMM_PLUGIN_ENTRY, which returns its *|
|* table; the runtime refuses a table of another version.                    *|
|*                                                                            *|
|* Division of work: the runtime checks every collective (its arguments, and *|
|* that all ranks agree on it, with min_all and gather_all) before it asks    *|
|* the plug-in to start it, so a plug-in's start only ever sees well-formed   *|
|* collectives that every rank of the run starts in the same order. The      *|
|* plug-in moves the data.                                                    *|
|*                                                                            *|
|* Every function that returns int returns 0 on success, or nonzero after    *|
|* writing a NUL-terminated description of the failure into                   *|
|* error[0 .. error_size - 1]. Buffers are host memory; a CUDA module's      *|
|* device buffers go to a device plug-in instead (DeviceCommPlugin.h, NCCL), *|
|* with this plug-in (or the single-rank communicator) as control plane.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_LIB_COMM_COMMPLUGIN_H
#define KILN_RUNTIME_LIB_COMM_COMMPLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_COMM_PLUGIN_VERSION 2

/* The symbol a plug-in exports: const kiln_comm_plugin_t *ENTRY(void). */
#define KILN_COMM_PLUGIN_ENTRY "kiln_comm_plugin"

/* One collective, as compiled code passed it to start() (see
 * kiln/CollectiveAbi.h for the meaning of each field). */
typedef struct kiln_comm_plugin_collective_t {
  int32_t kind;      /* kiln_collective_kind_t */
  int32_t reduction; /* kiln_collective_reduction_t */
  int32_t dtype;     /* kiln_dtype_t */
  const void *input;
  void *output;
  int64_t count;
  int64_t root;
  const int64_t *groups;
  int64_t group_count;
  int64_t group_size;
  const int64_t *pairs;
  int64_t pair_count;
} kiln_comm_plugin_collective_t;

typedef struct kiln_comm_plugin_t {
  /* KILN_COMM_PLUGIN_VERSION of the header the plug-in was built with. */
  uint32_t version;
  /* "mpi", for messages. */
  const char *name;

  /* Creates a communicator over all processes of the run, initializing the
   * engine if the process has not. */
  int (*create)(void **comm, char *error, size_t error_size);
  /* Destroys a communicator; the last one finalizes the engine if create
   * initialized it. */
  void (*destroy)(void *comm);
  int64_t (*rank)(void *comm);
  int64_t (*size)(void *comm);

  /* values[i] = the minimum of values[i] over all ranks (a blocking
   * all-reduce on a communicator of its own, apart from the data). */
  int (*min_all)(void *comm, int64_t *values, int64_t count, char *error,
                 size_t error_size);
  /* all[r * count + i] = values[i] of rank r (a blocking all-gather). */
  int (*gather_all)(void *comm, const int64_t *values, int64_t count,
                    int64_t *all, char *error, size_t error_size);

  /* Starts a collective without waiting for it; *handle identifies it for
   * wait. The buffers stay in use until wait returns. */
  int (*start)(void *comm, const kiln_comm_plugin_collective_t *collective,
               int64_t *handle, char *error, size_t error_size);
  /* Completes a started collective and forgets its handle. */
  int (*wait)(void *comm, int64_t handle, char *error, size_t error_size);
  /* all[i * count + j] = values[j] of members[i], for the member_count
   * ranks of one replica group (increasing, this rank among them); the
   * other ranks take no part. Fails, naming the members not heard from,
   * when timeout_ms > 0 passes first; the exchange's messages are then
   * left behind (version 2). */
  int (*exchange_group)(void *comm, const int64_t *members,
                        int64_t member_count, const int64_t *values,
                        int64_t count, int64_t *all, int64_t timeout_ms,
                        char *error, size_t error_size);
} kiln_comm_plugin_t;

typedef const kiln_comm_plugin_t *(*kiln_comm_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_LIB_COMM_COMMPLUGIN_H */
