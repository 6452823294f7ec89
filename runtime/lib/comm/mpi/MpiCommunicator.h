//===- MpiCommunicator.h - A kiln communicator over MPI ---------*- C++ -*-===//
//
// One per kiln_comm_t over MPI. It duplicates MPI_COMM_WORLD twice - one
// communicator for the runtime's comparisons between ranks, one for the
// data - so that neither meets the host program's own traffic nor the
// other's, and sets MPI_ERRORS_RETURN on every communicator it makes, so
// that MPI failures become kiln errors with MPI_Error_string's text
// instead of aborting the process.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H
#define KILN_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H

#include "comm/CommPlugin.h"

#include <mpi.h>

#include <map>
#include <string>
#include <vector>

namespace kiln {
namespace comm_mpi {

/// "MPI_Xxx failed: <MPI_Error_string of code>".
std::string describeMpiError(const char *call, int code);

class MpiCommunicator {
public:
  /// Duplicates MPI_COMM_WORLD; MPI must be initialized.
  static MpiCommunicator *create(std::string &error);
  ~MpiCommunicator();

  int64_t rank() const { return rankValue; }
  int64_t size() const { return sizeValue; }

  bool minAll(int64_t *values, int64_t count, std::string &error);
  bool gatherAll(const int64_t *values, int64_t count, int64_t *all,
                 std::string &error);
  /// Point-to-point messages between the members on the comparison
  /// communicator, polled until \p timeoutMs (when > 0) passes.
  bool exchangeGroup(const int64_t *members, int64_t memberCount,
                     const int64_t *values, int64_t count, int64_t *all,
                     int64_t timeoutMs, std::string &error);
  bool start(const kiln_comm_plugin_collective_t &collective, int64_t &handle,
             std::string &error);
  bool wait(int64_t handle, std::string &error);

private:
  MpiCommunicator() = default;

  /// The communicator of this rank's replica group, made with
  /// MPI_Comm_create_group the first time the group is seen and kept:
  /// compiled code names the same few groups over and over. Only the
  /// members make it (every one of them is starting this collective, as
  /// the runtime has checked), so a group's collectives need nothing of the
  /// ranks outside it.
  bool groupCommunicator(const kiln_comm_plugin_collective_t &collective,
                         MPI_Comm &comm, std::string &error);
  bool startPermute(const kiln_comm_plugin_collective_t &collective,
                    MPI_Datatype type, std::vector<MPI_Request> &requests,
                    std::string &error);

  MPI_Comm control = MPI_COMM_NULL;
  MPI_Comm data = MPI_COMM_NULL;
  int64_t rankValue = 0, sizeValue = 0;
  /// Sub-communicators by the ranks of this rank's group, in group order.
  std::map<std::vector<int64_t>, MPI_Comm> groups;
  /// A collective in flight: its requests (none for a permutation in
  /// which this rank neither sends nor receives).
  struct Slot {
    bool active = false;
    std::vector<MPI_Request> requests;
  };
  /// By handle; the slots of completed collectives are reused.
  std::vector<Slot> inFlight;
  std::vector<int64_t> freeHandles;
};

} // namespace comm_mpi
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_MPI_MPICOMMUNICATOR_H
