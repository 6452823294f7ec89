//===- MpiCommunicator.cpp - A kiln communicator over MPI -----------------===//

#include "MpiCommunicator.h"
#include "MpiTypes.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/ElementType.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace kiln {
namespace comm_mpi {
namespace {

/// Point-to-point messages of a permutation travel on the data
/// communicator with this tag; messages between the same two ranks are
/// matched in the order they were posted, which is the same on every rank.
constexpr int kPermuteTag = 0x6b6c;
/// The comparisons of a replica group travel on the comparison
/// communicator with this tag. Two ranks in several groups together
/// compare for them in the same order (a collective of each group in
/// program order), so one tag serves every group.
constexpr int kGroupTag = 0x6b6d;
/// The tag of MPI_Comm_create_group; groups are made one at a time.
constexpr int kCreateTag = 0x6b6e;

bool check(int code, const char *call, std::string &error) {
  if (code == MPI_SUCCESS)
    return true;
  error = describeMpiError(call, code);
  return false;
}

/// Duplicates \p parent with MPI_ERRORS_RETURN set.
bool duplicate(MPI_Comm parent, MPI_Comm &out, std::string &error) {
  return check(MPI_Comm_dup(parent, &out), "MPI_Comm_dup", error) &&
         check(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN),
               "MPI_Comm_set_errhandler", error);
}

} // namespace

std::string describeMpiError(const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return std::string(call) + " failed with error code " +
           std::to_string(code);
  return std::string(call) + " failed: " + std::string(text, size_t(length));
}

MpiCommunicator *MpiCommunicator::create(std::string &error) {
  std::unique_ptr<MpiCommunicator> comm(new MpiCommunicator());
  int rank = 0, size = 0;
  if (!duplicate(MPI_COMM_WORLD, comm->control, error) ||
      !duplicate(MPI_COMM_WORLD, comm->data, error) ||
      !check(MPI_Comm_rank(comm->control, &rank), "MPI_Comm_rank", error) ||
      !check(MPI_Comm_size(comm->control, &size), "MPI_Comm_size", error))
    return nullptr;
  comm->rankValue = rank;
  comm->sizeValue = size;
  return comm.release();
}

MpiCommunicator::~MpiCommunicator() {
  for (auto &entry : groups)
    MPI_Comm_free(&entry.second);
  for (MPI_Comm *comm : {&data, &control})
    if (*comm != MPI_COMM_NULL)
      MPI_Comm_free(comm);
}

bool MpiCommunicator::minAll(int64_t *values, int64_t count,
                             std::string &error) {
  return check(MPI_Allreduce(MPI_IN_PLACE, values, int(count), MPI_INT64_T,
                             MPI_MIN, control),
               "MPI_Allreduce", error);
}

bool MpiCommunicator::gatherAll(const int64_t *values, int64_t count,
                                int64_t *all, std::string &error) {
  return check(MPI_Allgather(values, int(count), MPI_INT64_T, all, int(count),
                             MPI_INT64_T, control),
               "MPI_Allgather", error);
}

bool MpiCommunicator::exchangeGroup(const int64_t *members,
                                   int64_t memberCount, const int64_t *values,
                                   int64_t count, int64_t *all,
                                   int64_t timeoutMs, std::string &error) {
  // The buffers live on the heap: after a timeout the messages may still
  // complete, so they are handed to a list that lives as long as the
  // process rather than freed under MPI.
  auto sent = std::make_unique<std::vector<int64_t>>(values, values + count);
  auto received =
      std::make_unique<std::vector<int64_t>>(size_t(memberCount * count));
  std::vector<MPI_Request> requests;
  std::vector<int64_t> sources;
  for (int64_t i = 0; i < memberCount; ++i) {
    if (members[i] == rankValue) {
      std::copy_n(values, count, received->data() + i * count);
      continue;
    }
    requests.emplace_back();
    sources.push_back(members[i]);
    if (!check(MPI_Irecv(received->data() + i * count, int(count),
                         MPI_INT64_T, int(members[i]), kGroupTag, control,
                         &requests.back()),
               "MPI_Irecv", error))
      return false;
  }
  size_t receives = requests.size();
  for (int64_t i = 0; i < memberCount; ++i) {
    if (members[i] == rankValue)
      continue;
    requests.emplace_back();
    if (!check(MPI_Isend(sent->data(), int(count), MPI_INT64_T,
                         int(members[i]), kGroupTag, control,
                         &requests.back()),
               "MPI_Isend", error))
      return false;
  }
  auto begin = std::chrono::steady_clock::now();
  for (int64_t polls = 0;; ++polls) {
    int done = 0;
    if (!check(MPI_Testall(int(requests.size()), requests.data(), &done,
                           MPI_STATUSES_IGNORE),
               "MPI_Testall", error))
      return false;
    if (done)
      break;
    auto waited = std::chrono::steady_clock::now() - begin;
    if (timeoutMs > 0 && waited > std::chrono::milliseconds(timeoutMs)) {
      std::string silent;
      for (size_t r = 0; r < receives; ++r) {
        int arrived = 0;
        MPI_Request_get_status(requests[r], &arrived, MPI_STATUS_IGNORE);
        if (!arrived)
          silent += (silent.empty() ? "" : ", ") + std::to_string(sources[r]);
      }
      for (MPI_Request &request : requests)
        if (request != MPI_REQUEST_NULL)
          MPI_Request_free(&request);
      // MPI may still read and write them: they are kept for the rest of
      // the process (a timed-out group is refused afterwards, so few are).
      static auto *abandoned =
          new std::vector<std::unique_ptr<std::vector<int64_t>>>();
      static std::mutex abandonedMutex;
      std::lock_guard<std::mutex> lock(abandonedMutex);
      abandoned->push_back(std::move(sent));
      abandoned->push_back(std::move(received));
      error = "rank" + std::string(silent.find(',') == std::string::npos
                                       ? " "
                                       : "s ") +
              (silent.empty() ? std::string("?") : silent) +
              " of the group did not reach it within " +
              (timeoutMs % 1000 ? std::to_string(timeoutMs) + " ms"
                                : std::to_string(timeoutMs / 1000) + " s");
      return false;
    }
    // Spin briefly, then let the other processes of an oversubscribed
    // machine run.
    if (polls > 64)
      std::this_thread::sleep_for(std::chrono::microseconds(
          waited < std::chrono::milliseconds(10) ? 20 : 500));
  }
  std::copy(received->begin(), received->end(), all);
  return true;
}

bool MpiCommunicator::groupCommunicator(
    const kiln_comm_plugin_collective_t &collective, MPI_Comm &comm,
    std::string &error) {
  int64_t members = collective.group_count * collective.group_size;
  if (collective.group_count == 1) {
    bool inOrder = true;
    for (int64_t i = 0; inOrder && i < members; ++i)
      inOrder = collective.groups[i] == i;
    if (inOrder) {
      comm = data;
      return true;
    }
  }
  // The runtime checked that every rank is in exactly one group.
  std::vector<int64_t> row;
  for (int64_t i = 0; i < members && row.empty(); ++i)
    if (collective.groups[i] == rankValue) {
      const int64_t *first =
          collective.groups + (i / collective.group_size) * collective.group_size;
      row.assign(first, first + collective.group_size);
    }
  auto found = groups.find(row);
  if (found != groups.end()) {
    comm = found->second;
    return true;
  }
  MPI_Group world = MPI_GROUP_NULL, memberGroup = MPI_GROUP_NULL;
  std::vector<int> ranks(row.begin(), row.end());
  MPI_Comm made = MPI_COMM_NULL;
  bool ok =
      check(MPI_Comm_group(data, &world), "MPI_Comm_group", error) &&
      check(MPI_Group_incl(world, int(ranks.size()), ranks.data(), &memberGroup),
            "MPI_Group_incl", error) &&
      check(MPI_Comm_create_group(data, memberGroup, kCreateTag, &made),
            "MPI_Comm_create_group", error);
  if (memberGroup != MPI_GROUP_NULL)
    MPI_Group_free(&memberGroup);
  if (world != MPI_GROUP_NULL)
    MPI_Group_free(&world);
  if (!ok)
    return false;
  if (!check(MPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN),
             "MPI_Comm_set_errhandler", error)) {
    MPI_Comm_free(&made);
    return false;
  }
  groups.emplace(std::move(row), made);
  comm = made;
  return true;
}

bool MpiCommunicator::startPermute(
    const kiln_comm_plugin_collective_t &collective, MPI_Datatype type,
    std::vector<MPI_Request> &requests, std::string &error) {
  int count = int(collective.count);
  bool received = false;
  for (int64_t i = 0; i < collective.pair_count; ++i) {
    int64_t source = collective.pairs[2 * i];
    int64_t target = collective.pairs[2 * i + 1];
    if (target == rankValue) {
      requests.emplace_back();
      if (!check(MPI_Irecv(collective.output, count, type, int(source),
                           kPermuteTag, data, &requests.back()),
                 "MPI_Irecv", error))
        return false;
      received = true;
    }
    if (source == rankValue) {
      requests.emplace_back();
      if (!check(MPI_Isend(collective.input, count, type, int(target),
                           kPermuteTag, data, &requests.back()),
                 "MPI_Isend", error))
        return false;
    }
  }
  // A rank no pair targets receives zeros.
  if (!received && collective.count > 0)
    std::memset(collective.output, 0,
                size_t(collective.count) *
                    getElementTypeInfo(ElementType(collective.dtype)).byteSize);
  return true;
}

bool MpiCommunicator::start(const kiln_comm_plugin_collective_t &collective,
                            int64_t &handle, std::string &error) {
  MPI_Datatype type = datatypeOf(collective.dtype);
  if (type == MPI_DATATYPE_NULL) {
    error = "no MPI datatype for dtype " + std::to_string(collective.dtype);
    return false;
  }
  int64_t members = collective.group_size > 0 ? collective.group_size : 1;
  int64_t largest = collective.kind == KILN_COLLECTIVE_ALL_GATHER
                        ? collective.count * members
                        : collective.count;
  if (collective.count > INT_MAX || largest > INT_MAX) {
    error = std::to_string(largest) +
            " elements are more than one MPI operation can move (INT_MAX)";
    return false;
  }
  int count = int(collective.count);
  size_t bytes = size_t(collective.count) *
                 getElementTypeInfo(ElementType(collective.dtype)).byteSize;

  std::vector<MPI_Request> requests;
  if (collective.kind == KILN_COLLECTIVE_PERMUTE) {
    if (!startPermute(collective, type, requests, error)) {
      // Whatever was posted still has to complete before the buffers go.
      MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
      return false;
    }
  } else {
    MPI_Comm comm;
    if (!groupCommunicator(collective, comm, error))
      return false;
    MPI_Op op = MPI_OP_NULL;
    bool reduces = collective.kind == KILN_COLLECTIVE_ALL_REDUCE ||
                   collective.kind == KILN_COLLECTIVE_REDUCE_SCATTER;
    if (reduces &&
        !operationOf(collective.dtype, collective.reduction, op, error))
      return false;
    int block = int(collective.count / members);
    requests.emplace_back();
    MPI_Request *request = &requests.back();
    int code = MPI_SUCCESS;
    const char *call = "";
    switch (collective.kind) {
    case KILN_COLLECTIVE_ALL_REDUCE:
      call = "MPI_Iallreduce";
      code = MPI_Iallreduce(collective.input, collective.output, count, type,
                            op, comm, request);
      break;
    case KILN_COLLECTIVE_ALL_GATHER:
      call = "MPI_Iallgather";
      code = MPI_Iallgather(collective.input, count, type, collective.output,
                            count, type, comm, request);
      break;
    case KILN_COLLECTIVE_REDUCE_SCATTER:
      call = "MPI_Ireduce_scatter_block";
      code = MPI_Ireduce_scatter_block(collective.input, collective.output,
                                       block, type, op, comm, request);
      break;
    case KILN_COLLECTIVE_BROADCAST: {
      call = "MPI_Ibcast";
      int member = 0;
      MPI_Comm_rank(comm, &member);
      // The root sends its input from the output buffer, which it must
      // hold as well; the input stays untouched.
      if (member == collective.root && bytes > 0)
        std::memcpy(collective.output, collective.input, bytes);
      code = MPI_Ibcast(collective.output, count, type, int(collective.root),
                        comm, request);
      break;
    }
    case KILN_COLLECTIVE_ALL_TO_ALL:
      call = "MPI_Ialltoall";
      code = MPI_Ialltoall(collective.input, block, type, collective.output,
                           block, type, comm, request);
      break;
    default:
      error = "unknown collective kind " + std::to_string(collective.kind);
      return false;
    }
    if (!check(code, call, error))
      return false;
  }

  if (freeHandles.empty()) {
    handle = int64_t(inFlight.size());
    inFlight.emplace_back();
  } else {
    handle = freeHandles.back();
    freeHandles.pop_back();
  }
  inFlight[size_t(handle)].active = true;
  inFlight[size_t(handle)].requests = std::move(requests);
  return true;
}

bool MpiCommunicator::wait(int64_t handle, std::string &error) {
  if (handle < 0 || handle >= int64_t(inFlight.size()) ||
      !inFlight[size_t(handle)].active) {
    error = "no collective in flight has handle " + std::to_string(handle);
    return false;
  }
  Slot &slot = inFlight[size_t(handle)];
  std::vector<MPI_Request> requests = std::move(slot.requests);
  slot.requests.clear();
  slot.active = false;
  freeHandles.push_back(handle);
  std::vector<MPI_Status> statuses(requests.size());
  int code =
      MPI_Waitall(int(requests.size()), requests.data(), statuses.data());
  if (code == MPI_ERR_IN_STATUS)
    for (const MPI_Status &status : statuses)
      if (status.MPI_ERROR != MPI_SUCCESS) {
        code = status.MPI_ERROR;
        break;
      }
  return check(code, "MPI_Waitall", error);
}

} // namespace comm_mpi
} // namespace kiln
