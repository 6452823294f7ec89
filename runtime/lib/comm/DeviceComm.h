//===- DeviceComm.h - Collectives on device buffers -------------*- C++ -*-===//
//
// A CUDA module's collectives exchange device buffers in the order of the
// module's stream. They are compared among the ranks like any other
// (CollectiveCall), then queued on the stream by the device plug-in
// (DeviceCommPlugin.h, NCCL), which the runtime loads at the first one.
//
// The plug-in's groups are made here, on first use, one per replica group
// (its row, in row order: a member's group rank is its position there) and
// one of all ranks for the permutations. The row's first member makes the
// group's unique id; the communicator's own transport, which the members
// already use to compare their collectives, carries it to the others: an
// all-gather for a group of every rank, an exchange among the members for a
// smaller one. A member that cannot make the id says so in the same message,
// so the others fail with it instead of waiting in the plug-in.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_DEVICECOMM_H
#define KILN_RUNTIME_LIB_COMM_DEVICECOMM_H

#include "CommPlugin.h"
#include "DeviceCommPlugin.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {
namespace runtime {
namespace comm {

class Transport;

class DeviceComm {
public:
  /// Groups made from ids that \p control carries; \p table is the loaded
  /// device plug-in.
  DeviceComm(Transport &control, const kiln_device_comm_plugin_t &table)
      : control(control), table(table) {}
  ~DeviceComm();
  DeviceComm(const DeviceComm &) = delete;
  DeviceComm &operator=(const DeviceComm &) = delete;

  /// Queues \p collective (checked and agreed on by every rank it
  /// involves; groups and pairs in the run's ranks) on \p stream, making
  /// its group first if this is the group's first collective. \p timeoutMs
  /// bounds the wait for a smaller group's id as in
  /// Transport::exchangeGroup.
  bool start(const kiln_comm_plugin_collective_t &collective, void *stream,
             int64_t timeoutMs, std::string &error);

private:
  /// The plug-in's group for \p row (this rank among its members).
  bool groupFor(const std::vector<int64_t> &row, int64_t timeoutMs,
                void *&group, std::string &error);
  /// "nccl: " + \p message.
  std::string fromPlugin(const char *message) const;

  Transport &control;
  const kiln_device_comm_plugin_t &table;
  std::map<std::vector<int64_t>, void *> groups;
};

} // namespace comm
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_DEVICECOMM_H
