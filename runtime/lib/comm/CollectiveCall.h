//===- CollectiveCall.h - The collectives of one function call --*- C++ -*-===//
//
// Compiled code starts and waits for collectives through the slots of
// kiln/CollectiveAbi.h, which know nothing of the call they are part of. A
// CollectiveCall is that call: made current on the calling thread for the
// extent of a call of a module that uses collectives, it holds the
// communicator (or none), counts the collectives, and keeps the call's
// first error for the runtime to return.
//
// Collectives are group-local (KilnCollectiveOps.td): one whose replica
// groups are smaller than the run involves the members of this rank's group
// alone, and is numbered among that group's collectives; one over every
// rank (and every permutation) among the run's.
//
// The protocol that keeps ranks from waiting on each other forever:
//   1. Before each collective over every rank, every rank compares its
//      Signature (where it is in the call, what it starts) with all others
//      in one all-reduce of the fields and their negations (a minimum of
//      both is a minimum and a maximum). A communicator of one rank skips
//      it. If they differ, all ranks gather all signatures, and each
//      records an error naming the first other rank that differs from it
//      and how.
//   2. Before a collective of a smaller group, its members alone exchange
//      their signatures (Transport::exchangeGroup), and each records an
//      error naming the first member that differs. A member that does not
//      come within KILN_COMM_GROUP_TIMEOUT seconds (default 600; 0 waits
//      forever) is reported instead of waited for; the group is then
//      unusable on this rank for the communicator's lifetime.
//   3. If they agree, the collective is checked against the size of the run
//      (its groups, root, pairs); the verdict is the same on every rank.
//   4. Only then is it started (a CUDA module's, on device buffers, is
//      queued on its stream by the device plug-in instead, DeviceComm.h). After any failure agreed on in 1-3 the call
//      communicates no more: start returns -1 on the ranks that agreed.
//   5. A failure of this rank alone (MPI reports an error in start or wait)
//      is carried in the Failed field of its next signature, so the others
//      stop at the same point.
//   6. When the function returns, whatever the code left in flight is
//      completed, the members of each group this call used compare once
//      more, and then all ranks, so a rank that returned while another
//      starts one more collective is reported, not waited for, and a failure
//      that only a group saw fails the call on every rank.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_COMM_COLLECTIVECALL_H
#define KILN_RUNTIME_LIB_COMM_COLLECTIVECALL_H

#include "CollectiveSignature.h"
#include "Transport.h"

#include "kiln/runtime.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {
namespace runtime {
namespace comm {

class CollectiveCall {
public:
  /// Makes a call of \p function over \p comm (NULL for a call without a
  /// communicator) current on this thread, holding the communicator's call
  /// lock until destroyed. \p deviceStream is the CUstream of a CUDA
  /// module's call: its collectives exchange device buffers, queued on that
  /// stream by the device plug-in (DeviceComm.h); NULL for host buffers.
  CollectiveCall(kiln_comm *comm, const std::string &function,
                 void *deviceStream = nullptr);
  ~CollectiveCall();
  CollectiveCall(const CollectiveCall &) = delete;
  CollectiveCall &operator=(const CollectiveCall &) = delete;

  /// The call in progress on this thread; NULL outside calls.
  static CollectiveCall *current();

  /// This rank and the number of ranks; 0 and 1 without a communicator.
  int64_t rank() const;
  int64_t size() const;

  /// The slots' start and wait (CollectiveAbi.h). wait completes the
  /// collective \p handle even when \p input and \p output are not the
  /// buffers it was started with, and then fails the call.
  int64_t start(const kiln_comm_plugin_collective_t &collective);
  void wait(int64_t handle, const void *input, const void *output);

  /// Records \p message as the call's failure before its code ran (an
  /// argument that does not fit the signature): finish then tells the
  /// other ranks, which stop at their next collective.
  void failBeforeRunning(const std::string &message);

  /// Records that memory ran out in start or wait (which must not throw
  /// into compiled code); the call fails with KILN_STATUS_OUT_OF_MEMORY.
  void failOutOfMemory() noexcept;

  /// Once the function has returned: completes what the code left in
  /// flight, compares with the other ranks that they returned too, and
  /// returns the call's first error (KILN_STATUS_COMM_ERROR) or NULL.
  kiln_status_t finish();

private:
  enum class State {
    Running,
    /// This rank failed alone; it still takes part in the next comparison,
    /// to tell the others.
    FailedHere,
    /// The call failed where only a group saw it: nothing more is
    /// communicated but the comparison of all ranks on return.
    Quiet,
    /// Every rank knows the call failed; nothing more is communicated.
    Stopped
  };

  /// Queues an agreed-on collective on the device stream (step 4 of a CUDA
  /// module's call); false with \p error when it could not.
  bool startOnDevice(const kiln_comm_plugin_collective_t &collective,
                     std::string &error);
  /// Step 1 of the protocol; false when the call must stop.
  bool agree(const Signature &mine);
  /// Step 2 for the group \p members; false when the call must stop.
  bool agreeInGroup(const std::vector<int64_t> &members,
                    const Signature &mine, int64_t kind);
  /// The ranks \p collective involves, this one among them, in increasing
  /// order: its group's, or none for a collective of every rank (and for
  /// one that is not \p wellFormed, which step 3 reports after step 1).
  std::vector<int64_t> groupOf(const kiln_comm_plugin_collective_t &collective,
                               bool wellFormed);
  /// What the first rank that differs from this one does differently.
  /// \p group: the members compared, empty for every rank.
  std::string mismatch(const Signature &mine, const Signature &theirs,
                       int64_t other,
                       const std::vector<int64_t> &group = {}) const;
  /// Records \p message unless an error was recorded already.
  void fail(const std::string &message, State next);
  /// "rank R: function 'NAME'" ("function 'NAME'" without a communicator).
  std::string where() const;
  std::string whereCollective(int64_t index, int64_t kind,
                              const std::vector<int64_t> &group = {}) const;

  Transport *transport;
  void *deviceStream;
  /// The handles of collectives queued on the device stream.
  int64_t nextStreamHandle = int64_t(1) << 40;
  std::unique_lock<std::mutex> lock;
  std::string function;
  int64_t functionHash;
  /// Collectives of every rank started so far (the index of the next one).
  int64_t started = 0;
  /// The same for each group of fewer ranks this call used.
  std::map<std::vector<int64_t>, int64_t> startedInGroup;
  State state = State::Running;
  std::string error;
  bool outOfMemory = false;
  struct InFlight {
    int64_t handle;
    int64_t index;
    int64_t kind;
    std::vector<int64_t> group;
    const void *input;
    const void *output;
    /// Queued on the device stream: complete in the stream's order, with
    /// nothing to wait for here.
    bool onStream;
  };
  /// Completes \p entry, which has left inFlight.
  void complete(const InFlight &entry);
  std::vector<InFlight> inFlight;
  CollectiveCall *previous;
};

} // namespace comm
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_COMM_COLLECTIVECALL_H
