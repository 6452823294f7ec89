//===- CollectiveCall.cpp - The collectives of one function call ----------===//

#include "CollectiveCall.h"
#include "PluginLoader.h"

#include "api/Status.h"

#include "kiln/CollectiveAbi.h"

#include <algorithm>
#include <cstdlib>

namespace kiln {
namespace runtime {
namespace comm {
namespace {

thread_local CollectiveCall *currentCall = nullptr;

std::string plural(int64_t count, const char *noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

/// "{0, 1}".
std::string describeGroup(const std::vector<int64_t> &members) {
  std::string text = "{";
  for (size_t i = 0; i < members.size(); ++i)
    text += (i ? ", " : "") + std::to_string(members[i]);
  return text + "}";
}

/// How long the members of a group wait for each other before comparing
/// (KILN_COMM_GROUP_TIMEOUT, in seconds; 0 or less: forever), in ms; -1
/// and \p error set when the variable is not a number.
int64_t groupTimeoutMs(std::string &error) {
  const char *text = std::getenv("KILN_COMM_GROUP_TIMEOUT");
  if (!text || !*text)
    return 600 * 1000;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds == seconds) ||
      seconds > 1e9) {
    error = std::string("KILN_COMM_GROUP_TIMEOUT is '") + text +
            "', not a number of seconds";
    return -1;
  }
  return seconds <= 0 ? 0 : std::max<int64_t>(1, int64_t(seconds * 1000));
}

} // namespace

CollectiveCall::CollectiveCall(kiln_comm *comm, const std::string &function,
                               void *deviceStream)
    : transport(comm ? comm->transport.get() : nullptr),
      deviceStream(deviceStream), function(function),
      functionHash(hashName(function)), previous(currentCall) {
  if (transport)
    lock = std::unique_lock<std::mutex>(transport->callLock());
  currentCall = this;
}

CollectiveCall::~CollectiveCall() { currentCall = previous; }

CollectiveCall *CollectiveCall::current() { return currentCall; }

int64_t CollectiveCall::rank() const {
  return transport ? transport->rank() : 0;
}

int64_t CollectiveCall::size() const {
  return transport ? transport->size() : 1;
}

std::string CollectiveCall::where() const {
  std::string text = "function '" + function + "'";
  return transport ? "rank " + std::to_string(rank()) + ": " + text : text;
}

std::string
CollectiveCall::whereCollective(int64_t index, int64_t kind,
                                const std::vector<int64_t> &group) const {
  return where() + ", collective #" + std::to_string(index + 1) +
         (group.empty() ? "" : " in replica group " + describeGroup(group)) +
         " (" + collectiveName(kind) + ")";
}

std::vector<int64_t>
CollectiveCall::groupOf(const kiln_comm_plugin_collective_t &collective,
                        bool wellFormed) {
  if (collective.kind == KILN_COLLECTIVE_PERMUTE || !wellFormed ||
      collective.group_size == size())
    return {};
  int64_t members = collective.group_count * collective.group_size;
  for (int64_t i = 0; i < members; ++i)
    if (collective.groups[i] == rank()) {
      const int64_t *row = collective.groups +
                           i / collective.group_size * collective.group_size;
      std::vector<int64_t> group(row, row + collective.group_size);
      std::sort(group.begin(), group.end());
      return group;
    }
  return {};
}

void CollectiveCall::fail(const std::string &message, State next) {
  if (error.empty())
    error = message;
  if (state != State::Stopped)
    state = next;
}

int64_t CollectiveCall::start(const kiln_comm_plugin_collective_t &collective) {
  if (!transport) {
    ++started;
    int64_t ranks = spannedRanks(collective);
    std::string count = ranks > 0 ? std::to_string(ranks) : "N";
    fail(
        "function '" + function + "': this module uses collectives over " +
            (ranks > 0 ? plural(ranks, "rank") : std::string("several ranks")) +
            "; run it with 'mpirun -n " + count +
            " kiln-run ...' or call kiln_function_call_with_comm",
        State::Stopped);
    return -1;
  }
  // Depends on the collective alone, so every rank reaches the same verdict;
  // it is reported after the comparison (step 3).
  std::string problem = checkCollective(collective, size());
  std::vector<int64_t> group = groupOf(collective, problem.empty());
  int64_t index = group.empty() ? started++ : startedInGroup[group]++;
  if (state == State::Stopped || state == State::Quiet)
    return -1;
  if (size() > 1) {
    Signature mine = collectiveSignature(functionHash, index, collective,
                                         size(), state == State::FailedHere);
    if (!(group.empty() ? agree(mine)
                        : agreeInGroup(group, mine, collective.kind)))
      return -1;
  } else if (state == State::FailedHere) {
    // No other rank to tell.
    state = State::Stopped;
    return -1;
  }
  if (!problem.empty()) {
    // A malformed collective has no group: every rank compared it.
    fail(whereCollective(index, collective.kind) + ": " + problem,
         State::Stopped);
    return -1;
  }
  int64_t handle = -1;
  std::string reason;
  if (deviceStream) {
    if (!startOnDevice(collective, reason)) {
      fail(whereCollective(index, collective.kind, group) + ": " + reason,
           State::FailedHere);
      return -1;
    }
    handle = nextStreamHandle++;
  } else if (!transport->start(collective, handle, reason)) {
    fail(whereCollective(index, collective.kind, group) + ": " + reason,
         State::FailedHere);
    return -1;
  }
  inFlight.push_back({handle, index, collective.kind, std::move(group),
                      collective.input, collective.output,
                      deviceStream != nullptr});
  return handle;
}

bool CollectiveCall::startOnDevice(
    const kiln_comm_plugin_collective_t &collective, std::string &error) {
  if (!transport->device) {
    const kiln_device_comm_plugin_t *table = nullptr;
    if (kiln_status_t status = loadDevicePlugin(table)) {
      error = kiln_status_message(status);
      kiln_status_free(status);
      return false;
    }
    transport->device = std::make_unique<DeviceComm>(*transport, *table);
  }
  int64_t timeoutMs = groupTimeoutMs(error);
  return timeoutMs >= 0 && transport->device->start(collective, deviceStream,
                                                    timeoutMs, error);
}

void CollectiveCall::complete(const InFlight &entry) {
  // Work queued on the device stream completes in the stream's order.
  if (entry.onStream)
    return;
  // A collective every rank started is completed even after a failure:
  // the others complete it too, and its buffers must be released.
  std::string reason;
  if (!transport->wait(entry.handle, reason))
    fail(whereCollective(entry.index, entry.kind, entry.group) + ": " +
             reason,
         State::FailedHere);
}

void CollectiveCall::wait(int64_t handle, const void *input,
                          const void *output) {
  if (handle < 0)
    return;
  auto found = std::find_if(
      inFlight.begin(), inFlight.end(),
      [&](const InFlight &entry) { return entry.handle == handle; });
  if (found == inFlight.end()) {
    fail(where() + ": the code waits for collective handle " +
             std::to_string(handle) + ", which is not in flight in this call",
         State::FailedHere);
    return;
  }
  InFlight entry = *found;
  inFlight.erase(found);
  complete(entry);
  if (input != entry.input || output != entry.output)
    fail(whereCollective(entry.index, entry.kind, entry.group) +
             ": the code waits for it with other buffers than it started "
             "it with",
         State::FailedHere);
}

void CollectiveCall::failBeforeRunning(const std::string &message) {
  fail(message, State::FailedHere);
}

void CollectiveCall::failOutOfMemory() noexcept {
  outOfMemory = true;
  if (state != State::Stopped)
    state = State::FailedHere;
}

kiln_status_t CollectiveCall::finish() {
  // The outputs are handed back, and the inputs may be freed, after this.
  while (!inFlight.empty()) {
    InFlight entry = inFlight.front();
    inFlight.erase(inFlight.begin());
    complete(entry);
  }
  if (transport && size() > 1) {
    // Each group first, in the same order on every member, then all ranks,
    // which learn of a failure that only a group saw.
    for (const auto &[group, count] : startedInGroup)
      if (state == State::Running || state == State::FailedHere)
        agreeInGroup(group,
                     returnSignature(functionHash, count,
                                     state == State::FailedHere),
                     -1);
    if (state != State::Stopped)
      agree(returnSignature(functionHash, started, state != State::Running));
  }
  if (!error.empty())
    return makeStatus(KILN_STATUS_COMM_ERROR, error);
  return outOfMemory ? outOfMemoryStatus() : nullptr;
}

bool CollectiveCall::agree(const Signature &mine) {
  constexpr int kFields = Signature::FieldCount;
  int64_t values[2 * kFields];
  for (int i = 0; i < kFields; ++i) {
    values[i] = mine.fields[i];
    values[kFields + i] = -mine.fields[i];
  }
  std::string reason;
  if (!transport->minAll(values, 2 * kFields, reason)) {
    fail(where() +
             ": comparing the next collective with the other ranks "
             "failed: " +
             reason,
         State::Stopped);
    return false;
  }
  bool differ = false;
  for (int i = 0; i < kFields; ++i)
    differ |= values[i] != -values[kFields + i];
  bool someFailed = -values[kFields + Signature::Failed] != 0;
  if (!differ && !someFailed)
    return true;
  // Every rank has seen the same minima and maxima, so all of them take
  // the same branch here and stop together.
  if (differ) {
    int64_t ranks = size();
    std::vector<int64_t> all(size_t(ranks) * kFields);
    if (!transport->gatherAll(mine.fields, kFields, all.data(), reason)) {
      fail(where() +
               ": gathering the other ranks' collectives failed: " + reason,
           State::Stopped);
      return false;
    }
    for (int64_t other = 0; other < ranks && state != State::FailedHere;
         ++other) {
      Signature theirs;
      std::copy_n(all.begin() + other * kFields, kFields, theirs.fields);
      if (other != rank() && theirs != mine) {
        fail(mismatch(mine, theirs, other), State::Stopped);
        break;
      }
    }
  }
  // A rank that failed here has its own error already.
  state = State::Stopped;
  return false;
}

bool CollectiveCall::agreeInGroup(const std::vector<int64_t> &group,
                                  const Signature &mine, int64_t kind) {
  std::string where = kind < 0 ? this->where() + ", on return"
                               : whereCollective(mine[Signature::Index], kind,
                                                 group);
  auto unusable = transport->unusableGroups.find(group);
  if (unusable != transport->unusableGroups.end()) {
    fail(where + ": replica group " + describeGroup(group) +
             " cannot be used again on this communicator since an earlier "
             "call: " +
             unusable->second,
         State::Quiet);
    return false;
  }
  std::string reason;
  int64_t timeoutMs = groupTimeoutMs(reason);
  if (timeoutMs < 0) {
    fail(where + ": " + reason, State::Quiet);
    return false;
  }
  constexpr int kFields = Signature::FieldCount;
  std::vector<int64_t> all(group.size() * kFields);
  if (!transport->exchangeGroup(group, mine.fields, kFields, all.data(),
                                timeoutMs, reason)) {
    std::string message = "comparing with replica group " +
                          describeGroup(group) + " failed: " + reason;
    transport->unusableGroups.emplace(group, message);
    fail(where + ": " + message, State::Quiet);
    return false;
  }
  bool someFailed = false;
  for (size_t i = 0; i < group.size(); ++i) {
    Signature theirs;
    std::copy_n(all.begin() + i * kFields, kFields, theirs.fields);
    someFailed |= theirs[Signature::Failed] != 0;
    if (group[i] != rank() && theirs != mine && state != State::FailedHere) {
      fail(mismatch(mine, theirs, group[i], group), State::Quiet);
      return false;
    }
  }
  if (!someFailed)
    return true;
  // A member that failed here has its own error already.
  state = State::Quiet;
  return false;
}

std::string CollectiveCall::mismatch(const Signature &mine,
                                     const Signature &theirs, int64_t other,
                                     const std::vector<int64_t> &group) const {
  std::string them = "rank " + std::to_string(other);
  if (mine[Signature::Function] != theirs[Signature::Function])
    return where() + ": this rank calls function '" + function + "' but " +
           them + " calls another function";
  bool iReturn = mine[Signature::Phase] == Signature::kPhaseReturn;
  bool theyReturn = theirs[Signature::Phase] == Signature::kPhaseReturn;
  int64_t index = mine[Signature::Index];
  std::string here =
      iReturn ? where() + ", on return"
              : whereCollective(index, mine[Signature::Kind], group);
  if (theirs[Signature::Failed])
    return here + ": " + them +
           " failed earlier in this call (its own error says how)";
  std::string in =
      group.empty() ? "" : " in replica group " + describeGroup(group);
  if (iReturn && theyReturn)
    return where() + ": this rank returned from the function after " +
           plural(index, "collective") + in + " but " + them + " after " +
           std::to_string(theirs[Signature::Index]);
  if (iReturn)
    return where() + ": this rank returned from the function after " +
           plural(index, "collective") + in + " but " + them +
           " starts collective #" + std::to_string(index + 1) + ", " +
           describe(theirs);
  if (theyReturn)
    return here + ": this rank starts " + describe(mine) + " but " + them +
           " returned from the function after " +
           plural(theirs[Signature::Index], "collective") + in;
  std::string ours = describe(mine), yours = describe(theirs);
  if (ours == yours)
    yours += mine[Signature::Groups] != theirs[Signature::Groups]
                 ? " with other replica groups"
                 : " with other source-target pairs";
  return here + ": this rank starts " + ours + " but " + them + " starts " +
         yours;
}

} // namespace comm
} // namespace runtime
} // namespace kiln
