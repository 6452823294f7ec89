/*===- runtime.h - The kiln runtime C API ------------------------*- C -*-===*\
|*                                                                            *|
|* Loads .kmod modules produced by kiln-compile and calls their functions.    *|
|*                                                                            *|
|* Conventions:                                                               *|
|*  - Every call that can fail returns a kiln_status_t. NULL means success;   *|
|*    anything else is an error object the caller must free with             *|
|*    kiln_status_free. No call aborts the process on bad input.             *|
|*  - Objects are created by kiln_<noun>_create/load and destroyed by         *|
|*    kiln_<noun>_release. Release functions accept NULL.                     *|
|*  - Accessors given NULL or an out-of-range index return 0 or NULL.         *|
|*  - A loaded module is immutable: its functions may be called from several *|
|*    threads at once, provided each call uses its own output tensors.        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Status ------------------------------------------------------------===*/

/* Broad classes of failure, so that callers can react without parsing
 * messages. The message always carries the specifics. */
typedef enum kiln_status_code_t {
  KILN_STATUS_OK = 0,
  /* The caller passed something unusable: a NULL pointer, an unknown dtype,
   * a tensor whose dtype or shape does not match a signature. */
  KILN_STATUS_INVALID_ARGUMENT = 1,
  /* A file, function or entry symbol does not exist. */
  KILN_STATUS_NOT_FOUND = 2,
  /* Reading a file or staging code for loading failed. */
  KILN_STATUS_IO_ERROR = 3,
  /* The bytes are not a module this runtime accepts: malformed, corrupted,
   * an unsupported format version, or code for another machine. */
  KILN_STATUS_INVALID_MODULE = 4,
  /* The dynamic loader rejected the module's code (dlopen failed). */
  KILN_STATUS_LOAD_FAILED = 5,
  /* Memory allocation failed. */
  KILN_STATUS_OUT_OF_MEMORY = 6,
  /* The module needs a device this machine cannot provide: no CUDA driver
   * (libcuda.so.1), no CUDA device, or a module for another device than the
   * one asked for. */
  KILN_STATUS_DEVICE_UNAVAILABLE = 7,
  /* The device is there but failed: it could not be opened (a driver
   * library without the driver API, cuInit failing for another reason than
   * there being no device, no context or stream), a kernel could not be
   * loaded (the message carries the PTX JIT's error log) or launched, a
   * device allocation or copy failed. */
  KILN_STATUS_DEVICE_ERROR = 8,
  /* Communication between ranks failed: the MPI plug-in or libmpi cannot be
   * loaded, MPI cannot be initialized, the ranks disagree on a collective
   * (its kind, dtype, count or groups), a collective spans another number
   * of ranks than the run has, a module with collectives is called without
   * a communicator, or MPI reported an error. */
  KILN_STATUS_COMM_ERROR = 9,
} kiln_status_code_t;

typedef struct kiln_status *kiln_status_t;

/* The class of failure; KILN_STATUS_OK for NULL. */
kiln_status_code_t kiln_status_code(kiln_status_t status);

/* The human-readable description; "OK" for NULL. Valid until the status is
 * freed. */
const char *kiln_status_message(kiln_status_t status);

/* Frees a status. Accepts NULL. */
void kiln_status_free(kiln_status_t status);

/*===-- Element types -----------------------------------------------------===*/

/* KILN_DTYPE_F32, KILN_DTYPE_I1 (one byte per element, 0 or 1), ...: one
 * enumerator per row of kiln/ElementTypes.def, valued by the row's code,
 * which is also the number stored in .kmod modules. */
typedef enum kiln_dtype_t {
#define KILN_DTYPE(NAME, CODE, ...) KILN_DTYPE_##NAME = CODE,
#include "kiln/ElementTypes.def"
} kiln_dtype_t;

/* Bytes per element, or 0 for a value that is not a dtype. */
size_t kiln_dtype_size(kiln_dtype_t dtype);

/* Short name ("f32", "i1", ...), or "invalid" for a value that is not a
 * dtype. */
const char *kiln_dtype_name(kiln_dtype_t dtype);

/*===-- Tensors -----------------------------------------------------------===*/

/* A dense, row-major tensor owning a 64-byte aligned buffer. A rank-0 tensor
 * holds one element. */
typedef struct kiln_tensor kiln_tensor_t;

/* Creates a tensor of the given dtype and shape (rank entries; may be NULL
 * when rank is 0). When data is not NULL, kiln_tensor_byte_size bytes are
 * copied from it; otherwise the tensor is zero-filled. */
kiln_status_t kiln_tensor_create(kiln_dtype_t dtype, size_t rank,
                                 const int64_t *shape, const void *data,
                                 kiln_tensor_t **out_tensor);

/* Makes a tensor over memory the caller owns, without copying: `data` holds
 * kiln_tensor_byte_size bytes in row-major order, aligned to the element
 * size, and must stay valid and unchanged until the tensor is released.
 * Such a tensor is meant as a function input (compiled code never writes
 * its inputs, except the donated ones of kiln_function_call);
 * kiln_tensor_release leaves `data` alone. Fails with
 * KILN_STATUS_INVALID_ARGUMENT for a NULL or misaligned `data`. */
kiln_status_t kiln_tensor_wrap(kiln_dtype_t dtype, size_t rank,
                               const int64_t *shape, void *data,
                               kiln_tensor_t **out_tensor);

/* Releases a tensor. Accepts NULL. */
void kiln_tensor_release(kiln_tensor_t *tensor);

kiln_dtype_t kiln_tensor_dtype(const kiln_tensor_t *tensor);
size_t kiln_tensor_rank(const kiln_tensor_t *tensor);
/* rank entries; NULL when the rank is 0. */
const int64_t *kiln_tensor_shape(const kiln_tensor_t *tensor);
size_t kiln_tensor_element_count(const kiln_tensor_t *tensor);
size_t kiln_tensor_byte_size(const kiln_tensor_t *tensor);
/* The element buffer; never NULL for a valid tensor, even when it holds no
 * elements. 64-byte aligned unless the tensor came from kiln_tensor_wrap.
 * For a tensor in CUDA device memory (kiln_tensor_memory), the device
 * address (a CUdeviceptr), which the host must not dereference. */
void *kiln_tensor_data(kiln_tensor_t *tensor);

/* Where a tensor's elements are: host memory (every tensor made by
 * kiln_tensor_create or kiln_tensor_wrap, and every output of
 * kiln_function_call), or the memory of a CUDA device (kiln_tensor_to_device
 * and the outputs of kiln_function_call_on_device). */
typedef enum kiln_memory_t {
  KILN_MEMORY_HOST = 0,
  KILN_MEMORY_CUDA = 1,
} kiln_memory_t;

kiln_memory_t kiln_tensor_memory(const kiln_tensor_t *tensor);

/* Copies a tensor's elements into a new host tensor (from the device for a
 * tensor in device memory). */
kiln_status_t kiln_tensor_to_host(const kiln_tensor_t *tensor,
                                  kiln_tensor_t **out_tensor);

/*===-- Modules and functions ---------------------------------------------===*/

typedef struct kiln_module kiln_module_t;

/* A function of a loaded module. Owned by the module; valid until the module
 * is released. */
typedef struct kiln_function kiln_function_t;

/* The expected dtype and exact shape of one input or output. Owned by the
 * module. */
typedef struct kiln_tensor_signature_t {
  const char *name;     /* never NULL; "" when the tensor is unnamed */
  kiln_dtype_t dtype;
  size_t rank;
  const int64_t *shape; /* rank entries; NULL when the rank is 0 */
  /* For an output of a function compiled with a donated input (JAX's
   * donate_argnums; kiln/IR/TiedResults.h): the index of that input, whose
   * buffer the call writes this output into, and which the output then
   * views (see kiln_function_call). -1 otherwise, and for every input. */
  int64_t tied_input;
} kiln_tensor_signature_t;

/* Verifies the module in [data, data + size) and loads its code. The bytes
 * are not referenced after the call returns. */
kiln_status_t kiln_module_load_memory(const void *data, size_t size,
                                      kiln_module_t **out_module);

/* Reads the file at path and loads it as kiln_module_load_memory does. */
kiln_status_t kiln_module_load_file(const char *path,
                                    kiln_module_t **out_module);

/* Unloads the module's code. Its functions must not be in use. Accepts
 * NULL. */
void kiln_module_release(kiln_module_t *module);

/* The target triple the module's code was compiled for. */
const char *kiln_module_target(const kiln_module_t *module);

size_t kiln_module_function_count(const kiln_module_t *module);
const kiln_function_t *kiln_module_function_at(const kiln_module_t *module,
                                               size_t index);
/* Finds a function by name; KILN_STATUS_NOT_FOUND if there is none. */
kiln_status_t kiln_module_function_lookup(const kiln_module_t *module,
                                          const char *name,
                                          const kiln_function_t **out_function);

const char *kiln_function_name(const kiln_function_t *function);
size_t kiln_function_input_count(const kiln_function_t *function);
size_t kiln_function_output_count(const kiln_function_t *function);
const kiln_tensor_signature_t *
kiln_function_input(const kiln_function_t *function, size_t index);
const kiln_tensor_signature_t *
kiln_function_output(const kiln_function_t *function, size_t index);

/*===-- Devices -----------------------------------------------------------===*/

/* Where a module's functions run. A module is compiled for one device
 * (kiln-compile --target=cpu|cuda); its target string says which. For
 * CUDA, a call copies host inputs to the device and the outputs back;
 * tensors in device memory (below kiln_function_call) are passed without
 * copies. */
typedef enum kiln_device_t {
  KILN_DEVICE_CPU = 0,
  KILN_DEVICE_CUDA = 1,
} kiln_device_t;

/* Short name: "cpu", "cuda", or "invalid". */
const char *kiln_device_name(kiln_device_t device);

/* NULL if `device` can run modules on this machine. For CUDA,
 * KILN_STATUS_DEVICE_UNAVAILABLE when no driver can be loaded - "no CUDA
 * driver found ..." - or it reports no device, KILN_STATUS_DEVICE_ERROR
 * when the device is there but cannot be opened. */
kiln_status_t kiln_device_check(kiln_device_t device);

/* The number of devices of the kind `device` this machine has: 1 for the
 * CPU; for CUDA, the driver's count (0 when it reports none), or
 * KILN_STATUS_DEVICE_UNAVAILABLE when no driver can be loaded. The ranks of
 * a run on one machine each take their own CUDA device (the rank on the
 * machine modulo this count, or KILN_CUDA_DEVICE), so a run of CUDA
 * modules with collectives needs as many devices as ranks per machine. */
kiln_status_t kiln_device_count(kiln_device_t device, int64_t *count);

/* The compute capability of the CUDA device this process's CUDA modules
 * run on (the one a call opens: KILN_CUDA_DEVICE, else the process's rank
 * on its machine, else the first), as (9, 0) for an H100, to compile for
 * it (kiln-compile --cuda-arch=sm_90). The device is not opened.
 * KILN_STATUS_DEVICE_UNAVAILABLE without a driver or a device, as
 * kiln_device_check. */
kiln_status_t kiln_cuda_compute_capability(int *major, int *minor);

/* The device the module's functions run on. */
kiln_device_t kiln_module_device(const kiln_module_t *module);

/* What a CUDA module's device did since it was loaded, over all calls. */
typedef struct kiln_cuda_stats_t {
  uint64_t calls;
  uint64_t kernel_launches;
  /* Waits for the stream: the host code's (before it reads a copied-back
   * loop predicate, ...) and the runtime's one per call before the outputs
   * are copied back. */
  uint64_t stream_syncs;
  /* Copies the compiled code made from device buffers to host memory (loop
   * predicates, indices), and their bytes; the runtime's output copies are
   * not counted. */
  uint64_t device_to_host_copies;
  uint64_t device_to_host_bytes;
  /* Buffers obtained from the driver (cuMemAlloc, cuMemAllocManaged);
   * buffers reused from the device's pool do not count. */
  uint64_t driver_allocations;
  /* Bytes of device and managed memory the module holds (in use or pooled). */
  uint64_t held_bytes;
  /* The largest device-memory (non-managed) buffer: a function's arena. */
  uint64_t largest_device_allocation;
  /* kiln.while loops run on the device as one CUDA graph each, with no
   * wait for the host per iteration (KILN_CUDA_GRAPHS=0 turns them off);
   * a loop in a call run as a graph counts when the call is captured. */
  uint64_t graph_loops;
  /* Calls run as one CUDA graph launch (kiln-cuda-graph-calls): the calls
   * whose work was captured into a graph, and the later calls with the
   * same argument buffers that launched it again without queueing their
   * kernels one by one. */
  uint64_t graph_calls;
  /* Of those, the calls captured (a function's second call, or a call
   * whose argument buffers no graph of the function was captured with). */
  uint64_t graph_captures;
  /* The module's constants uploaded to the device (once each, where a
   * call first uses them) and their bytes, part of held_bytes. */
  uint64_t constant_uploads;
  uint64_t constant_bytes;
  /* Bytes of the buffers the graphs of calls hold now (their
   * intermediates), part of held_bytes. The graphs of all functions share
   * them: graphs run one after the other on the module's stream, so this
   * is about the largest function's intermediates, not the sum. */
  uint64_t graph_bytes;
  /* Call sites the module implements in several ways (tuned attention)
   * decided by timing their variants at their first call. */
  uint64_t tuned_sites;
} kiln_cuda_stats_t;

/* Fills the first `stats_size` bytes of `stats` for a CUDA module; pass
 * sizeof(kiln_cuda_stats_t). The struct grows by fields appended at its
 * end, so a caller compiled against an older runtime.h gets the fields it
 * knows, and one compiled against a newer one gets zeros in the fields
 * this runtime lacks. KILN_STATUS_INVALID_ARGUMENT for a module compiled
 * for another device, or a size that is 0 or not a whole number of
 * fields. */
kiln_status_t kiln_module_cuda_stats(const kiln_module_t *module,
                                     kiln_cuda_stats_t *stats,
                                     size_t stats_size);

/* Load as kiln_module_load_memory / kiln_module_load_file do, but fail with
 * KILN_STATUS_DEVICE_UNAVAILABLE unless the module was compiled for
 * `device` and, for CUDA, the device can be opened now (as
 * kiln_device_check says, KILN_STATUS_DEVICE_ERROR for a device that is
 * there but cannot be opened). (The plain loaders take the device from the
 * module and open a CUDA device at the first call, so that a CUDA module can
 * be loaded and listed without CUDA; the call then fails with
 * KILN_STATUS_DEVICE_UNAVAILABLE.) */
kiln_status_t kiln_module_load_memory_on(kiln_device_t device,
                                         const void *data, size_t size,
                                         kiln_module_t **out_module);
kiln_status_t kiln_module_load_file_on(kiln_device_t device, const char *path,
                                       kiln_module_t **out_module);

/* Calls a function. Each input must match its signature's dtype and shape
 * exactly. On success, outputs[i] receives a new tensor (owned by the caller)
 * for every output; on failure every outputs[i] is set to NULL.
 * An input that an output's signature names as its tied_input is donated:
 * the call overwrites its elements with that output, which it returns as a
 * tensor viewing the input's memory (valid while the input is; releasing
 * it leaves the memory alone), and the input's old value is gone. A donated
 * input must not share memory with another input (the call refuses it with
 * KILN_STATUS_INVALID_ARGUMENT), and its memory must be writable.
 * A function of a module that uses collectives (kiln_module_uses_collectives)
 * has no communicator here: its first collective fails the call with
 * KILN_STATUS_COMM_ERROR, "this module uses collectives over N ranks; run
 * it with 'mpirun -n N kiln-run ...' or call kiln_function_call_with_comm"
 * (N is known only once the code starts a collective, whose replica groups
 * say how many ranks it spans). */
kiln_status_t kiln_function_call(const kiln_function_t *function,
                                 kiln_tensor_t *const *inputs,
                                 size_t input_count, kiln_tensor_t **outputs,
                                 size_t output_count);

/* Tensors that stay on the device. A function of a CUDA module takes
 * tensors in its device's memory as inputs without copying them (with
 * kiln_function_call too), and kiln_function_call_on_device leaves its
 * outputs there, so a loop of calls (a training step's parameters in, the
 * updated parameters out) copies nothing but what the host supplies anew.
 * A device tensor is valid as an input of any module on the same device;
 * it keeps that device open until it is released, even after its module
 * is. A CPU function given one fails with KILN_STATUS_INVALID_ARGUMENT. */

/* Copies `tensor` (host memory, or device memory of the same device) into
 * the memory of the CUDA device `module` runs on, opening it if needed.
 * KILN_STATUS_INVALID_ARGUMENT for a module compiled for the CPU,
 * KILN_STATUS_DEVICE_UNAVAILABLE or KILN_STATUS_DEVICE_ERROR when the
 * device cannot be opened or the copy fails. */
kiln_status_t kiln_tensor_to_device(const kiln_module_t *module,
                                    const kiln_tensor_t *tensor,
                                    kiln_tensor_t **out_tensor);

/* Makes a tensor over device memory the caller owns (another library's:
 * PyTorch's, JAX's, through DLPack), without copying: `data` is an address
 * in the memory of CUDA device `device_index` (the driver's ordinal), which
 * must be the device `module` runs on, holding kiln_tensor_byte_size bytes
 * in row-major order, aligned to the element size; it must stay valid, and
 * unchanged by other work, until the tensor is released. The caller's
 * writes to it must be complete before the tensor is used: kiln's calls run
 * on a stream that waits for CUDA's legacy default stream. Opens the
 * device if needed. KILN_STATUS_INVALID_ARGUMENT for a CPU module, another
 * device, a NULL or misaligned `data`. */
kiln_status_t kiln_tensor_wrap_device(const kiln_module_t *module,
                                      int device_index, kiln_dtype_t dtype,
                                      size_t rank, const int64_t *shape,
                                      void *data, kiln_tensor_t **out_tensor);

/* The ordinal of the CUDA device whose memory holds `tensor`; -1 for a host
 * tensor. */
int kiln_tensor_device_index(const kiln_tensor_t *tensor);

/* Calls a function of a CUDA module as kiln_function_call does, leaving
 * every output in the device's memory (outputs[i] are device tensors; read
 * them with kiln_tensor_to_host). KILN_STATUS_INVALID_ARGUMENT for a
 * function compiled for the CPU. */
kiln_status_t kiln_function_call_on_device(const kiln_function_t *function,
                                           kiln_tensor_t *const *inputs,
                                           size_t input_count,
                                           kiln_tensor_t **outputs,
                                           size_t output_count);

/*===-- Communicators -----------------------------------------------------===*/

/* The ranks of a run and the means to reach them. A module compiled from a
 * program with collective ops (kiln.all_reduce, ...) is SPMD code: every
 * rank of the run calls the same function, in the same order, with its own
 * inputs, and the collectives exchange data between them. Communication is
 * done by a plug-in (OpenMPI), loaded only when a communicator over it is
 * created, so the runtime itself never links a communication library.
 *
 * A communicator serves one call, or one kiln_comm_all_ok or
 * kiln_comm_barrier, at a time (others wait for it); calls with MPI
 * communicators are moreover serialized process-wide, as MPI is initialized
 * with MPI_THREAD_SERIALIZED. Every rank must make the same sequence of
 * calls on its communicator. When ranks disagree on a collective, every rank
 * gets KILN_STATUS_COMM_ERROR naming the collective and what differs,
 * instead of waiting forever. */
typedef struct kiln_comm kiln_comm_t;

/* Creates a communicator over all processes of the MPI run
 * (MPI_COMM_WORLD), e.g. those started by 'mpirun -n 4'. Loads the MPI
 * plug-in libkiln_comm_mpi.so on first use, from $KILN_COMM_MPI_PLUGIN when
 * that is set, else from lib/kiln/ beside the directory of the program or
 * library that holds the runtime (<prefix>/bin/../lib/kiln/), else from the
 * dynamic loader's search path. Initializes MPI (MPI_Init_thread,
 * MPI_THREAD_SERIALIZED) unless the process has done so already. A process
 * not started by mpirun is a run of one rank. Fails with
 * KILN_STATUS_COMM_ERROR, saying where it looked and how to install
 * OpenMPI, when the plug-in or libmpi cannot be loaded, and when MPI has
 * been finalized already (MPI cannot be initialized twice). */
kiln_status_t kiln_comm_create_mpi(kiln_comm_t **out_comm);

/* Creates a communicator over the ranks of a run that meet through a store
 * (Gloo's TCP transport), as kiln-launch starts them: the environment gives
 * this process's rank (KILN_RANK), the run's size (KILN_WORLD_SIZE) and the
 * store (KILN_STORE: file:DIRECTORY on a file system every rank sees, or
 * redis://HOST[:PORT]); KILN_RUN_ID prefixes the run's keys in the store
 * (default "kiln": a store holding an earlier run's keys needs another),
 * KILN_GLOO_HOSTNAME is the address the others reach this rank at (default
 * the host's name) and KILN_GLOO_TIMEOUT the seconds a connection or a
 * collective may take (default 300). The n-th communicator a process
 * creates meets the n-th of every other rank. With none of the three
 * variables set, the process is a run of one rank. Loads the plug-in
 * libkiln_comm_gloo.so on first use, from $KILN_COMM_GLOO_PLUGIN or where
 * kiln_comm_create_mpi looks for its own. Unlike MPI, releasing the
 * communicator closes its connections, and a process may create another
 * over a different set of ranks. Fails with KILN_STATUS_COMM_ERROR naming
 * what is missing: a variable, the store, a rank that did not connect
 * within the timeout. */
kiln_status_t kiln_comm_create_gloo(kiln_comm_t **out_comm);

/* Creates a communicator of one rank that needs no plug-in: every
 * collective over a group of one is a copy. Runs modules compiled for one
 * rank. */
kiln_status_t kiln_comm_create_self(kiln_comm_t **out_comm);

/* Releases a communicator. The last MPI communicator released finalizes
 * MPI, but only if the runtime initialized it; the host program finalizes
 * an MPI it initialized itself. Accepts NULL. */
void kiln_comm_release(kiln_comm_t *comm);

/* This process's rank, 0 to size - 1; 0 for NULL. */
int64_t kiln_comm_rank(const kiln_comm_t *comm);

/* The number of ranks; 0 for NULL. */
int64_t kiln_comm_size(const kiln_comm_t *comm);

/* Host-side agreement, for programs that must not go on when one rank
 * cannot: every rank calls it with local_ok (nonzero when this rank is
 * ready), and every rank receives in *all_ok 1 if all of them were, else 0.
 * Collective over the communicator. */
kiln_status_t kiln_comm_all_ok(kiln_comm_t *comm, int local_ok, int *all_ok);

/* Returns once every rank has called it. Collective over the
 * communicator. */
kiln_status_t kiln_comm_barrier(kiln_comm_t *comm);

/* Host data from every rank: `out` (size x `bytes` bytes) receives each
 * rank's `bytes` bytes of `data`, in rank order; e.g. the blocks of a
 * sharded tensor put back together. Collective over the communicator; every
 * rank must pass the same `bytes`, or every rank gets
 * KILN_STATUS_COMM_ERROR saying which rank passed what. */
kiln_status_t kiln_comm_all_gather(kiln_comm_t *comm, const void *data,
                                   size_t bytes, void *out);

/* Host data from one rank to all: the `bytes` bytes of `data` on rank
 * `root` replace those of `data` on every other rank. Collective over the
 * communicator; every rank must pass the same `bytes` and `root`, or every
 * rank gets KILN_STATUS_COMM_ERROR saying which rank passed what. */
kiln_status_t kiln_comm_broadcast(kiln_comm_t *comm, void *data, size_t bytes,
                                  int64_t root);

/*===-- Elastic runs ------------------------------------------------------===*/

/* A worker of an elastic run (kiln-launch --nproc MIN:MAX): its members
 * change while it runs, when workers die and when workers arrive, and each
 * set of members is a generation, agreed through the run's store. The
 * worker learns its rank and the run's size from each rendezvous, not from
 * its command line. Its communicator (kiln_elastic_comm) is one object for
 * the whole run, over the members of the generation joined last; functions
 * compiled for one size run on it whenever the run has that size again.
 * The state that survives a failure is the host program's: it keeps a
 * copy at each commit and, after a rendezvous, takes the copy of the root
 * (kiln_comm_broadcast). kiln.distributed.elastic in Python and
 * kiln/Elastic.h in C++ do that bookkeeping. */
typedef struct kiln_elastic kiln_elastic_t;

/* Opens this process's part in the elastic run its environment names, as
 * kiln-launch sets it: KILN_STORE, KILN_RUN_ID, KILN_ELASTIC (MIN:MAX, the
 * run's sizes), KILN_ELASTIC_TIMEOUT (seconds within which a member that
 * hangs is noticed; default 5; one that dies is noticed when its
 * connections close), KILN_ELASTIC_RENDEZVOUS_TIMEOUT (seconds a rendezvous
 * waits for the run's minimum; default 60), KILN_ELASTIC_SETTLE (seconds
 * without a new arrival that settle a generation; default 1),
 * KILN_WORKER_ID (this worker's name in the store) and KILN_GLOO_HOSTNAME.
 * Loads the Gloo plug-in. Joins no generation yet: its communicator has
 * no members until kiln_elastic_rendezvous. Fails with
 * KILN_STATUS_COMM_ERROR when a variable is missing or malformed, or the
 * store cannot be reached. */
kiln_status_t kiln_elastic_open(kiln_elastic_t **out_elastic);

/* Leaves the run (closing the communicator's connections). Accepts NULL. */
void kiln_elastic_release(kiln_elastic_t *elastic);

/* The communicator over the members of the generation joined last; owned
 * by `elastic`. Between generations every collective on it fails with
 * KILN_STATUS_COMM_ERROR. */
kiln_comm_t *kiln_elastic_comm(kiln_elastic_t *elastic);

/* Leaves the current generation, if any, and joins the next one with the
 * serial of this worker's last commit (-1 for a worker with no state of the
 * run, one that has just started): waits until its members are settled
 * and connected. Sets *generation (0, 1, ...) and *root, the rank whose
 * state is the newest (the highest commit serial, the lowest rank among
 * equals), which the others take. When the run finishes before this worker
 * is admitted, *generation is -1 and the communicator has no members.
 * Fails with KILN_STATUS_COMM_ERROR when fewer workers than the minimum
 * arrive within the rendezvous timeout, and when the store fails. */
kiln_status_t kiln_elastic_rendezvous(kiln_elastic_t *elastic,
                                      int64_t commit_serial,
                                      int64_t *generation, int64_t *root);

/* Whether workers wait to join and the run has room for them: *waiting is
 * 1 on every member when any member saw one in the store. Collective over
 * the communicator; call it where the members can re-form (at a commit). */
kiln_status_t kiln_elastic_members_waiting(kiln_elastic_t *elastic,
                                           int *waiting);

/* Records in the store that the run has finished, so that workers still
 * waiting to join leave. */
kiln_status_t kiln_elastic_finish(kiln_elastic_t *elastic);

/* Nonzero if the module's code performs collectives (it exports the
 * communicator slots of kiln/CollectiveAbi.h), so that its functions must
 * be called with kiln_function_call_with_comm on every rank of a run; 0 for
 * NULL. */
int kiln_module_uses_collectives(const kiln_module_t *module);

/* Calls a function as kiln_function_call does, with `comm` as the
 * communicator of its collectives. A function of a module that uses no
 * collectives ignores it. Every rank of the run makes the same call with
 * its own inputs; when a collective fails - the ranks disagree on it, its
 * groups span another number of ranks than `comm` has, MPI reports an error
 * - every rank's call returns KILN_STATUS_COMM_ERROR, with a message that
 * begins "rank R: " (R = this rank) and names the function, the collective
 * and what differs, e.g. "rank 1: function 'step', collective #1
 * (kiln.all_reduce): this rank starts kiln.all_reduce (sum) of 512 x f32
 * over 1 group of 2 ranks but rank 0 starts kiln.all_reduce (sum) of 1024 x
 * f32 over 1 group of 2 ranks". Collectives after a failure do not
 * communicate. A call that fails on one rank before its code runs (an input
 * that does not fit the signature) still tells the others, whose calls
 * fail at their first collective ("rank 1 failed earlier in this call").
 * A rank that dies (crashes, exits) cannot report anything: under mpirun,
 * mpirun then ends the other ranks. A failure of MPI itself on one rank
 * while the others go on can leave them waiting in that collective;
 * OpenMPI usually ends the run then. */
kiln_status_t
kiln_function_call_with_comm(const kiln_function_t *function, kiln_comm_t *comm,
                             kiln_tensor_t *const *inputs, size_t input_count,
                             kiln_tensor_t **outputs, size_t output_count);

/*===-- Profiling ---------------------------------------------------------===*/

/* A module compiled with kiln-compile --profile times each of its regions:
 * every fused loop nest, every oneDNN call and every loop of kiln.for or
 * kiln.while, named after what it came from ("fused: matmul+add+relu",
 * "dnnl_sgemm 256x1024x784", "while @ model.mlir:12"); every call of its
 * functions is a region too ("call @step"). Collection is process-wide and
 * off by default; a module compiled without --profile has no regions and
 * costs nothing either way. */

/* The number of profiling regions the module's code has, calls of its
 * functions included; 0 for a module compiled without --profile. */
size_t kiln_module_profile_region_count(const kiln_module_t *module);

/* Turns collection on (non-zero) or off. While it is on, each region that
 * ends records an event: its name, its thread, its start and its duration
 * (steady clock, ns). */
void kiln_profile_set_enabled(int enabled);
int kiln_profile_enabled(void);

/* Forgets every event and total collected so far. */
void kiln_profile_clear(void);

/* The totals of one region over the events collected. */
typedef struct kiln_profile_region_t {
  /* Valid as long as the process runs. */
  const char *name;
  /* How many times the region ran. */
  uint64_t count;
  /* The time it ran, and the part of it not spent in other regions it
   * holds. The self times of all regions add up to the time profiled. */
  uint64_t total_ns;
  uint64_t self_ns;
} kiln_profile_region_t;

/* Writes the totals of the regions that ran, most self time first, into
 * `regions` (up to `capacity` of them; NULL with 0 only counts) and returns
 * how many regions ran. */
size_t kiln_profile_regions(kiln_profile_region_t *regions, size_t capacity);

/* Writes the events collected to `path` in the Chrome trace event format
 * ({"traceEvents":[{"name":...,"ph":"X","ts":...,"dur":...,"pid":...,
 * "tid":...}, ...]}, times in microseconds), which chrome://tracing and
 * ui.perfetto.dev open. Fails with KILN_STATUS_IO_ERROR when the file
 * cannot be written. */
kiln_status_t kiln_profile_write_trace(const char *path);

/*===-- Memory ------------------------------------------------------------===*/

/* The buffers that CPU modules' code allocates while it runs - its
 * intermediates, planned arenas included (kiln-compile --memory-report
 * plans them) - counted over every module of the process: the bytes they
 * hold now, the most they held at once, and the allocations made. Inputs
 * and outputs, which the caller allocates, and the scratch of oneDNN, of
 * OpenMP and of the FlashAttention kernels are not counted; nor is
 * anything of a CUDA module (kiln_module_cuda_stats counts its device
 * memory). The counts are exact (each block's requested size, including
 * the code's alignment padding) and cost one atomic addition per
 * allocation. */
typedef struct kiln_memory_stats_t {
  uint64_t held_bytes;
  uint64_t peak_bytes;
  uint64_t allocations;
} kiln_memory_stats_t;

/* Writes the counts into `stats` (nothing when it is NULL). */
void kiln_memory_stats(kiln_memory_stats_t *stats);

/* Starts a new peak at the bytes held now, and a new count of
 * allocations, so that the next calls' peak can be read alone. */
void kiln_memory_reset_peak(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_H */
