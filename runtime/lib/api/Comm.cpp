//===- Comm.cpp - The kiln_comm_t object ----------------------------------===//

#include "Status.h"

#include "comm/Transport.h"

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
  try {
    Transport &transport = *comm->transport;
    std::lock_guard<std::mutex> lock(transport.callLock());
    int64_t ranks = transport.size(), rank = transport.rank();
    auto fail = [&](const std::string &error) {
      return makeStatus(KILN_STATUS_COMM_ERROR,
                        "rank " + std::to_string(rank) +
                            ": kiln_comm_all_gather: " + error);
    };
    // The sizes first, so that ranks passing different sizes fail together
    // instead of exchanging mismatched messages.
    std::string error;
    int64_t mine = static_cast<int64_t>(bytes);
    std::vector<int64_t> sizes(ranks);
    if (!transport.gatherAll(&mine, 1, sizes.data(), error))
      return fail(error);
    for (int64_t r = 0; r < ranks; ++r)
      if (sizes[r] != mine)
        return fail("this rank passes " + std::to_string(mine) +
                    " bytes but rank " + std::to_string(r) + " passes " +
                    std::to_string(sizes[r]));
    int64_t words = (mine + 7) / 8;
    std::vector<int64_t> packed(words, 0), all(words * ranks);
    if (bytes)
      std::memcpy(packed.data(), data, bytes);
    if (!transport.gatherAll(packed.data(), words, all.data(), error))
      return fail(error);
    for (int64_t r = 0; r < ranks; ++r)
      if (bytes)
        std::memcpy(static_cast<char *>(out) + r * bytes, &all[r * words],
                    bytes);
    return nullptr;
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

} // extern "C"
