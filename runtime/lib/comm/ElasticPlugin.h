/*===- ElasticPlugin.h - The interface of elastic rendezvous -----*- C -*-===*\
|*                                                                            *|
|* An elastic run's workers form groups again and again in live processes:   *|
|* when a member dies, and when workers arrive. The plug-in that can do this *|
|* (Gloo's, libkiln_comm_gloo.so) exports, beside its communicator table     *|
|* (CommPlugin.h), a second table under KILN_ELASTIC_PLUGIN_ENTRY: the       *|
|* rendezvous of the generations of a run, agreed through its store, each    *|
|* generation's group a communicator of the plug-in's communicator table.    *|
|*                                                                            *|
|* Functions that return int return 0 on success, or nonzero after writing a *|
|* NUL-terminated description of the failure into error[0 .. size - 1].    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_LIB_COMM_ELASTICPLUGIN_H
#define KILN_RUNTIME_LIB_COMM_ELASTICPLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ELASTIC_PLUGIN_VERSION 1
#define KILN_ELASTIC_PLUGIN_ENTRY "kiln_elastic_plugin"

/* What one rendezvous settled. */
typedef struct kiln_elastic_plugin_generation_t {
  /* The generation joined (0, 1, ...); -1 when the run had finished. */
  int64_t generation;
  int64_t rank;
  int64_t size;
  /* The lowest rank among those whose commit serial is the highest: the
   * rank whose state the others take. */
  int64_t root;
  /* The communicator over the generation's members (of the plug-in's
   * communicator table); NULL when the run had finished. */
  void *comm;
} kiln_elastic_plugin_generation_t;

typedef struct kiln_elastic_plugin_t {
  uint32_t version;
  /* Opens the run this process is a worker of, as the environment names it
   * (KILN_STORE, KILN_RUN_ID, KILN_ELASTIC, ...; kiln-launch sets them). */
  int (*open)(void **elastic, char *error, size_t error_size);
  void (*close)(void *elastic);
  /* Joins the next generation with the serial of this worker's last
   * commit (-1: none, a worker that has just started) and waits until its
   * members are settled. */
  int (*rendezvous)(void *elastic, int64_t commit_serial,
                    kiln_elastic_plugin_generation_t *out, char *error,
                    size_t error_size);
  /* *waiting = 1 when workers wait to join a generation after the one
   * joined last and there is room for them (the run is below its maximum
   * size); read from the store, by this worker alone. */
  int (*waiting)(void *elastic, int *waiting, char *error, size_t error_size);
  /* Records that the run has finished, so that workers still arriving
   * leave instead of waiting. */
  int (*finish)(void *elastic, char *error, size_t error_size);
} kiln_elastic_plugin_t;

typedef const kiln_elastic_plugin_t *(*kiln_elastic_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_LIB_COMM_ELASTICPLUGIN_H */
