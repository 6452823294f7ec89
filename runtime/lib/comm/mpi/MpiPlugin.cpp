//===- MpiPlugin.cpp - The communicator plug-in over MPI ------------------===//
//
// Exports kiln_comm_plugin, the table of CommPlugin.h. The first
// communicator initializes MPI (MPI_THREAD_SERIALIZED: the runtime lets one
// thread at a time communicate) unless the host program did; the last one
// released finalizes it again if it was initialized here.
//
//===----------------------------------------------------------------------===//

#include "MpiCommunicator.h"
#include "MpiTypes.h"

#include "comm/PluginTable.h"

#include <dlfcn.h>
#include <mutex>

namespace kiln {
namespace comm_mpi {
namespace {

std::mutex lifetimeMutex;
int liveCommunicators = 0;
bool initializedHere = false;

using comm_plugin::report;

/// OpenMPI dlopens components of its own that expect libmpi's symbols to
/// be global. The runtime loads this plug-in RTLD_GLOBAL, which covers
/// libmpi as its dependency; promoting libmpi itself again makes that hold
/// however the plug-in was loaded.
void makeLibmpiGlobal() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&MPI_Init_thread), &info) &&
      info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

const char *threadLevelName(int level) {
  switch (level) {
  case MPI_THREAD_SINGLE:
    return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED:
    return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED:
    return "MPI_THREAD_SERIALIZED";
  case MPI_THREAD_MULTIPLE:
    return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown thread level";
}

int create(void **out, char *error, size_t errorSize) {
  std::lock_guard<std::mutex> lock(lifetimeMutex);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return report("MPI was finalized in this process already and cannot be "
                  "initialized again; keep a communicator alive for as long "
                  "as the process uses MPI",
                  error, errorSize);
  if (!initialized) {
    makeLibmpiGlobal();
    int provided = MPI_THREAD_SINGLE;
    int code =
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS)
      return report(describeMpiError("MPI_Init_thread", code), error,
                    errorSize);
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      return report(std::string("MPI provides only ") +
                        threadLevelName(provided) +
                        "; kiln needs MPI_THREAD_SERIALIZED",
                    error, errorSize);
    }
    initializedHere = true;
  }
  std::string message;
  MpiCommunicator *comm = MpiCommunicator::create(message);
  if (!comm)
    return report(message, error, errorSize);
  ++liveCommunicators;
  *out = comm;
  return 0;
}

void destroy(void *comm) {
  std::lock_guard<std::mutex> lock(lifetimeMutex);
  delete static_cast<MpiCommunicator *>(comm);
  if (--liveCommunicators > 0)
    return;
  freeOperations();
  if (initializedHere) {
    MPI_Finalize();
    initializedHere = false;
  }
}

const kiln_comm_plugin_t table =
    comm_plugin::Forward<MpiCommunicator>::table("mpi", create, destroy);

} // namespace
} // namespace comm_mpi
} // namespace kiln

extern "C" __attribute__((visibility("default"))) const kiln_comm_plugin_t *
kiln_comm_plugin(void) {
  return &kiln::comm_mpi::table;
}
