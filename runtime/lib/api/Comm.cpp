//===- Comm.cpp - The kiln_comm_t object ----------------------------------===//

#include "Status.h"

#include "comm/Transport.h"

#include "kiln/CollectiveAbi.h"

#include <cstring>
#include <new>
#include <string>
#include <vector>

using kiln::runtime::makeStatus;
using kiln::runtime::comm::Transport;

namespace {

kiln_status_t create(std::unique_ptr<Transport> transport, kiln_comm_t **out) {
  auto comm = std::make_unique<kiln_comm>();
  comm->transport = std::move(transport);
  *out = comm.release();
  return nullptr;
}

/// The minimum of \p value over all ranks (a one-rank communicator has
/// nothing to compare with).
kiln_status_t minimum(kiln_comm_t *comm, const char *what, int64_t &value) {
  Transport &transport = *comm->transport;
  std::lock_guard<std::mutex> lock(transport.callLock());
  std::string error;
  if (transport.size() > 1 && !transport.minAll(&value, 1, error))
    return makeStatus(KILN_STATUS_COMM_ERROR,
                      "rank " + std::to_string(transport.rank()) + ": " + what +
                          ": " + error);
  return nullptr;
}

/// Whether every rank passes the same \p values (described by their
/// \p units); the sizes first, so that ranks passing different sizes fail
/// together instead of exchanging mismatched messages.
bool agree(Transport &transport, const std::vector<int64_t> &values,
           const std::vector<const char *> &units, std::string &error) {
  int64_t ranks = transport.size(), count = int64_t(values.size());
  std::vector<int64_t> all(size_t(ranks * count));
  if (!transport.gatherAll(values.data(), count, all.data(), error))
    return false;
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      if (all[size_t(r * count + i)] != values[size_t(i)]) {
        error = "this rank passes " + std::to_string(values[size_t(i)]) +
                units[size_t(i)] + " but rank " + std::to_string(r) +
                " passes " + std::to_string(all[size_t(r * count + i)]);
        return false;
      }
  return true;
}

/// Runs \p body on \p comm's transport under its call lock; a failure is
/// KILN_STATUS_COMM_ERROR naming this rank and \p function.
template <typename Body>
kiln_status_t onTransport(kiln_comm_t *comm, const char *function,
                          Body &&body) {
  try {
    Transport &transport = *comm->transport;
    std::lock_guard<std::mutex> lock(transport.callLock());
    std::string error;
    if (body(transport, error))
      return nullptr;
    return makeStatus(KILN_STATUS_COMM_ERROR,
                      "rank " + std::to_string(transport.rank()) + ": " +
                          function + ": " + error);
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

} // namespace

extern "C" {

kiln_status_t kiln_comm_create_mpi(kiln_comm_t **outComm) {
  if (!outComm)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_comm_create_mpi: out_comm is NULL");
  *outComm = nullptr;
  try {
    std::unique_ptr<Transport> transport;
    if (kiln_status_t status = kiln::runtime::comm::makeMpiTransport(transport))
      return status;
    return create(std::move(transport), outComm);
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln_comm_create_gloo(kiln_comm_t **outComm) {
  if (!outComm)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_comm_create_gloo: out_comm is NULL");
  *outComm = nullptr;
  try {
    std::unique_ptr<Transport> transport;
    if (kiln_status_t status =
            kiln::runtime::comm::makeGlooTransport(transport))
      return status;
    return create(std::move(transport), outComm);
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln_comm_create_self(kiln_comm_t **outComm) {
  if (!outComm)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_comm_create_self: out_comm is NULL");
  *outComm = nullptr;
  try {
    return create(kiln::runtime::comm::makeSelfTransport(), outComm);
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

void kiln_comm_release(kiln_comm_t *comm) { delete comm; }

int64_t kiln_comm_rank(const kiln_comm_t *comm) {
  return comm ? comm->transport->rank() : 0;
}

int64_t kiln_comm_size(const kiln_comm_t *comm) {
  return comm ? comm->transport->size() : 0;
}

kiln_status_t kiln_comm_all_ok(kiln_comm_t *comm, int localOk, int *allOk) {
  if (!comm || !allOk)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_comm_all_ok: comm and all_ok must not be NULL");
  try {
    int64_t value = localOk ? 1 : 0;
    if (kiln_status_t status = minimum(comm, "kiln_comm_all_ok", value))
      return status;
    *allOk = value == 1;
    return nullptr;
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln_comm_barrier(kiln_comm_t *comm) {
  if (!comm)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_comm_barrier: comm is NULL");
  try {
    int64_t value = 0;
    return minimum(comm, "kiln_comm_barrier", value);
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

kiln_status_t kiln_comm_all_gather(kiln_comm_t *comm, const void *data,
                                   size_t bytes, void *out) {
  if (!comm || (bytes && (!data || !out)))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_comm_all_gather: comm, data and out must not be "
                      "NULL");
  return onTransport(
      comm, "kiln_comm_all_gather", [&](Transport &transport,
                                        std::string &error) {
        int64_t ranks = transport.size();
        int64_t mine = static_cast<int64_t>(bytes);
        if (!agree(transport, {mine}, {" bytes"}, error))
          return false;
        int64_t words = (mine + 7) / 8;
        std::vector<int64_t> packed(words, 0), all(words * ranks);
        if (bytes)
          std::memcpy(packed.data(), data, bytes);
        if (!transport.gatherAll(packed.data(), words, all.data(), error))
          return false;
        for (int64_t r = 0; r < ranks; ++r)
          if (bytes)
            std::memcpy(static_cast<char *>(out) + r * bytes, &all[r * words],
                        bytes);
        return true;
      });
}

kiln_status_t kiln_comm_broadcast(kiln_comm_t *comm, void *data, size_t bytes,
                                  int64_t root) {
  if (!comm || (bytes && !data))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_comm_broadcast: comm and data must not be NULL");
  int64_t ranks = comm->transport->size();
  if (root < 0 || root >= ranks)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_comm_broadcast: root " + std::to_string(root) +
                          " is not a rank of the " + std::to_string(ranks) +
                          " ranks");
  if (ranks == 1 || bytes == 0)
    return nullptr;
  return onTransport(
      comm, "kiln_comm_broadcast", [&](Transport &transport,
                                       std::string &error) {
        int64_t rank = transport.rank();
        if (!agree(transport, {int64_t(bytes), root},
                   {" bytes", " as the root"}, error))
          return false;
        std::vector<int64_t> members(static_cast<size_t>(ranks));
        for (int64_t r = 0; r < ranks; ++r)
          members[size_t(r)] = r;
        // Gloo's broadcast reads the root's input while it writes the output.
        std::vector<char> source;
        if (rank == root)
          source.assign(static_cast<char *>(data),
                        static_cast<char *>(data) + bytes);
        kiln_comm_plugin_collective_t collective = {};
        collective.kind = KILN_COLLECTIVE_BROADCAST;
        collective.dtype = KILN_DTYPE_UI8;
        collective.input = rank == root ? source.data() : data;
        collective.output = data;
        collective.count = int64_t(bytes);
        collective.root = root;
        collective.groups = members.data();
        collective.group_count = 1;
        collective.group_size = ranks;
        int64_t handle = 0;
        return transport.start(collective, handle, error) &&
               transport.wait(handle, error);
      });
}

} // extern "C"
