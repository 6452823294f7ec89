//===- Comm.cpp - The kiln_comm_t object ----------------------------------===//

#include "Status.h"

#include "comm/Transport.h"

#include <new>

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

} // extern "C"
