//===- CollectiveCall.cpp - The collectives of one function call ----------===//

#include "CollectiveCall.h"

#include "api/Status.h"

#include <algorithm>

namespace kiln {
namespace runtime {
namespace comm {
namespace {

thread_local CollectiveCall *currentCall = nullptr;

std::string plural(int64_t count, const char *noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

} // namespace

CollectiveCall::CollectiveCall(kiln_comm *comm, const std::string &function)
    : transport(comm ? comm->transport.get() : nullptr), function(function),
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

std::string CollectiveCall::whereCollective(int64_t index, int64_t kind) const {
  return where() + ", collective #" + std::to_string(index + 1) + " (" +
         collectiveName(kind) + ")";
}

void CollectiveCall::fail(const std::string &message, State next) {
  if (error.empty())
    error = message;
  if (state != State::Stopped)
    state = next;
}

int64_t CollectiveCall::start(const kiln_comm_plugin_collective_t &collective) {
  int64_t index = started++;
  if (!transport) {
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
  if (state == State::Stopped)
    return -1;
  if (size() > 1) {
    if (!agree(collectiveSignature(functionHash, index, collective, size(),
                                   state == State::FailedHere)))
      return -1;
  } else if (state == State::FailedHere) {
    // No other rank to tell.
    state = State::Stopped;
    return -1;
  }
  std::string problem = checkCollective(collective, size());
  if (!problem.empty()) {
    fail(whereCollective(index, collective.kind) + ": " + problem,
         State::Stopped);
    return -1;
  }
  int64_t handle = -1;
  std::string reason;
  if (!transport->start(collective, handle, reason)) {
    fail(whereCollective(index, collective.kind) + ": " + reason,
         State::FailedHere);
    return -1;
  }
  inFlight.push_back(
      {handle, index, collective.kind, collective.input, collective.output});
  return handle;
}

void CollectiveCall::complete(const InFlight &entry) {
  // A collective every rank started is completed even after a failure:
  // the others complete it too, and its buffers must be released.
  std::string reason;
  if (!transport->wait(entry.handle, reason))
    fail(whereCollective(entry.index, entry.kind) + ": " + reason,
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
    fail(whereCollective(entry.index, entry.kind) +
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
  if (transport && size() > 1 && state != State::Stopped)
    agree(returnSignature(functionHash, started, state == State::FailedHere));
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

std::string CollectiveCall::mismatch(const Signature &mine,
                                     const Signature &theirs,
                                     int64_t other) const {
  std::string them = "rank " + std::to_string(other);
  if (mine[Signature::Function] != theirs[Signature::Function])
    return where() + ": this rank calls function '" + function + "' but " +
           them + " calls another function";
  bool iReturn = mine[Signature::Phase] == Signature::kPhaseReturn;
  bool theyReturn = theirs[Signature::Phase] == Signature::kPhaseReturn;
  int64_t index = mine[Signature::Index];
  std::string here = iReturn ? where() + ", on return"
                             : whereCollective(index, mine[Signature::Kind]);
  if (theirs[Signature::Failed])
    return here + ": " + them +
           " failed earlier in this call (its own error says how)";
  if (iReturn && theyReturn)
    return where() + ": this rank returned from the function after " +
           plural(index, "collective") + " but " + them + " after " +
           std::to_string(theirs[Signature::Index]);
  if (iReturn)
    return where() + ": this rank returned from the function after " +
           plural(index, "collective") + " but " + them +
           " starts collective #" + std::to_string(index + 1) + ", " +
           describe(theirs);
  if (theyReturn)
    return here + ": this rank starts " + describe(mine) + " but " + them +
           " returned from the function after " +
           plural(theirs[Signature::Index], "collective");
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
