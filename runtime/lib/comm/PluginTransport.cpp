//===- PluginTransport.cpp - Communication through a communicator plug-in -===//
//
// The transport over a plug-in's table (CommPlugin.h): the MPI one, and the
// Gloo one.
//
//===----------------------------------------------------------------------===//

#include "PluginLoader.h"
#include "Transport.h"

#include "api/Status.h"

namespace kiln {
namespace runtime {
namespace comm {
namespace {

class PluginTransport final : public Transport {
public:
  /// \p sharedLock: whether every communicator over the engine shares one
  /// lock.
  PluginTransport(const kiln_comm_plugin_t &table, void *comm,
                  bool sharedLock)
      : table(table), comm(comm), rankValue(table.rank(comm)),
        sizeValue(table.size(comm)), sharedLock(sharedLock) {}
  ~PluginTransport() override { table.destroy(comm); }

  int64_t rank() const override { return rankValue; }
  int64_t size() const override { return sizeValue; }

  bool minAll(int64_t *values, int64_t count, std::string &error) override {
    return check(table.min_all(comm, values, count, buffer, sizeof(buffer)),
                 error);
  }
  bool gatherAll(const int64_t *values, int64_t count, int64_t *all,
                 std::string &error) override {
    return check(
        table.gather_all(comm, values, count, all, buffer, sizeof(buffer)),
        error);
  }
  bool exchangeGroup(const std::vector<int64_t> &members,
                     const int64_t *values, int64_t count, int64_t *all,
                     int64_t timeoutMs, std::string &error) override {
    return check(table.exchange_group(comm, members.data(),
                                      int64_t(members.size()), values, count,
                                      all, timeoutMs, buffer, sizeof(buffer)),
                 error);
  }
  bool start(const kiln_comm_plugin_collective_t &collective, int64_t &handle,
             std::string &error) override {
    return check(
        table.start(comm, &collective, &handle, buffer, sizeof(buffer)), error);
  }
  bool wait(int64_t handle, std::string &error) override {
    return check(table.wait(comm, handle, buffer, sizeof(buffer)), error);
  }

  /// MPI is initialized MPI_THREAD_SERIALIZED: all communicators over it
  /// share one lock. A Gloo communicator's contexts are its own.
  std::mutex &callLock() override {
    static std::mutex lock;
    return sharedLock ? lock : ownLock;
  }

private:
  bool check(int result, std::string &error) {
    if (result == 0)
      return true;
    buffer[sizeof(buffer) - 1] = '\0';
    error = std::string(table.name) + ": " + buffer;
    return false;
  }

  const kiln_comm_plugin_t &table;
  void *comm;
  int64_t rankValue, sizeValue;
  bool sharedLock;
  std::mutex ownLock;
  /// The plug-in's error text; a transport serves one call at a time.
  char buffer[1024] = {};
};

/// A transport over the plug-in that \p load loads.
kiln_status_t makePluginTransport(kiln_status_t (*load)(
                                      const kiln_comm_plugin_t *&),
                                  bool sharedLock,
                                  std::unique_ptr<Transport> &out) {
  const kiln_comm_plugin_t *table = nullptr;
  if (kiln_status_t status = load(table))
    return status;
  char error[1024] = {};
  void *comm = nullptr;
  if (table->create(&comm, error, sizeof(error)) != 0) {
    error[sizeof(error) - 1] = '\0';
    return makeStatus(KILN_STATUS_COMM_ERROR,
                      std::string(table->name) + ": " + error);
  }
  out = std::make_unique<PluginTransport>(*table, comm, sharedLock);
  return nullptr;
}

} // namespace

kiln_status_t makeMpiTransport(std::unique_ptr<Transport> &out) {
  return makePluginTransport(loadMpiPlugin, /*sharedLock=*/true, out);
}

kiln_status_t makeGlooTransport(std::unique_ptr<Transport> &out) {
  return makePluginTransport(loadGlooPlugin, /*sharedLock=*/false, out);
}

kiln_status_t adoptGlooCommunicator(void *comm,
                                    std::unique_ptr<Transport> &out) {
  const kiln_comm_plugin_t *table = nullptr;
  if (kiln_status_t status = loadGlooPlugin(table))
    return status;
  out = std::make_unique<PluginTransport>(*table, comm, /*sharedLock=*/false);
  return nullptr;
}

} // namespace comm
} // namespace runtime
} // namespace kiln
