//===- Transport.h - How a communicator reaches the other ranks -*- C++ -*-===//
//
// A communicator (kiln_comm_t) is a Transport plus the lock that makes its
// calls one at a time. The transport of one rank is built in; the MPI one
// forwards to the plug-in's table (CommPlugin.h). Everything above it - the
// checks, the agreement between ranks, the error messages - is shared, in
// CollectiveCall.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_TRANSPORT_H
#define KILN_RUNTIME_LIB_COMM_TRANSPORT_H

#include "CommPlugin.h"
#include "DeviceComm.h"

#include "kiln/runtime.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {
namespace runtime {
namespace comm {

/// The operations of CommPlugin.h, with errors as strings.
class Transport {
public:
  virtual ~Transport() { device.reset(); }
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  /// values[i] = the minimum over all ranks of values[i].
  virtual bool minAll(int64_t *values, int64_t count, std::string &error) = 0;
  /// all[r * count + i] = values[i] of rank r.
  virtual bool gatherAll(const int64_t *values, int64_t count, int64_t *all,
                         std::string &error) = 0;
  /// all[i * count + j] = values[j] of members[i]: an exchange among the
  /// ranks of one replica group (increasing, this rank among them) alone,
  /// which fails when \p timeoutMs (> 0) passes before every member took
  /// part.
  virtual bool exchangeGroup(const std::vector<int64_t> &members,
                             const int64_t *values, int64_t count,
                             int64_t *all, int64_t timeoutMs,
                             std::string &error) = 0;
  /// Starts a collective that CollectiveCall has checked and every member
  /// of its group has agreed on.
  virtual bool start(const kiln_comm_plugin_collective_t &collective,
                     int64_t &handle, std::string &error) = 0;
  virtual bool wait(int64_t handle, std::string &error) = 0;
  /// The lock a call over this transport holds: the communicator's own, or
  /// one shared by all communicators over an engine that may not be entered
  /// from two threads at once (MPI_THREAD_SERIALIZED).
  virtual std::mutex &callLock() = 0;

  /// The groups whose comparison timed out on this rank, with the error
  /// that said so: their messages may still arrive, so a later comparison
  /// in them would read stale ones. They are not used again.
  std::map<std::vector<int64_t>, std::string> unusableGroups;

  /// The groups of device collectives (a CUDA module's), made at the first
  /// one; released with the transport.
  std::unique_ptr<DeviceComm> device;
};

/// The transport of a run of one rank, where every collective is a copy.
std::unique_ptr<Transport> makeSelfTransport();

/// The transport over the MPI plug-in, which it loads on first use.
kiln_status_t makeMpiTransport(std::unique_ptr<Transport> &out);

/// The transport over the Gloo plug-in, which it loads on first use.
kiln_status_t makeGlooTransport(std::unique_ptr<Transport> &out);

/// The transport over a communicator that the Gloo plug-in made already (an
/// elastic run's generation), which it owns from then on.
kiln_status_t adoptGlooCommunicator(void *comm,
                                    std::unique_ptr<Transport> &out);

} // namespace comm
} // namespace runtime
} // namespace kiln

/// A communicator: its transport, used by one call at a time.
struct kiln_comm {
  std::unique_ptr<kiln::runtime::comm::Transport> transport;
};

#endif // KILN_RUNTIME_LIB_COMM_TRANSPORT_H
