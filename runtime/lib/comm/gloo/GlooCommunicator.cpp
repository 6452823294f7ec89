//===- GlooCommunicator.cpp - A kiln communicator over Gloo ---------------===//

#include "GlooCommunicator.h"
#include "KeyValueStore.h"

#include "comm/Reductions.h"

#include "kiln/CollectiveAbi.h"
#include "kiln/ElementType.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/redis_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace kiln {
namespace comm_gloo {
namespace {

/// The slot prefix of the exchanges and permutations this plug-in sends
/// itself, apart from those of Gloo's collectives (0x01 to 0x08).
constexpr uint8_t kExchangeSlotPrefix = 0x40;
constexpr uint8_t kPermuteSlotPrefix = 0x41;

/// "1, 2, 3".
template <typename Ranks> std::string joinRanks(const Ranks &ranks) {
  std::string text;
  for (int64_t rank : ranks)
    text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

/// "{1, 2, 3}".
template <typename Ranks> std::string describeMembers(const Ranks &ranks) {
  return "{" + joinRanks(ranks) + "}";
}

/// The integer in environment variable \p name; false with \p error set
/// when it is set but not an integer in [low, high].
bool integerVariable(const char *name, int64_t low, int64_t high,
                     std::optional<int64_t> &value, std::string &error) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return true;
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE || parsed < low ||
      parsed > high) {
    error = std::string(name) + " is '" + text + "', not an integer from " +
            std::to_string(low) + " to " + std::to_string(high);
    return false;
  }
  value = parsed;
  return true;
}

/// The store that KILN_STORE names, or null with \p error set.
std::shared_ptr<gloo::rendezvous::Store> openStore(const std::string &spec,
                                                   std::string &error) {
  StoreAddress address;
  if (!StoreAddress::parse(spec, address, error))
    return nullptr;
  try {
    if (address.kind == StoreAddress::Redis)
      return std::make_shared<gloo::rendezvous::RedisStore>(address.host,
                                                            address.port);
    if (!address.prepare(error))
      return nullptr;
    return std::make_shared<gloo::rendezvous::FileStore>(address.directory);
  } catch (const std::exception &e) {
    error = "cannot open the store '" + spec + "': " + e.what();
    return nullptr;
  }
}

/// Runs a Gloo call, turning its exceptions into \p error.
template <typename Fn>
bool guarded(const char *what, std::string &error, Fn &&fn) {
  try {
    fn();
    return true;
  } catch (const std::exception &e) {
    error = std::string(what) + " failed: " + e.what();
    return false;
  }
}

/// One collective on the context of its group, on elements stored as Word
/// (Gloo only moves bytes of that size; the reduction knows the dtype).
template <typename Word>
bool runOnGroup(const std::shared_ptr<gloo::Context> &group, uint32_t tag,
                const kiln_comm_plugin_collective_t &c, int64_t index,
                int64_t groupSize, std::string &error) {
  auto *input = static_cast<Word *>(const_cast<void *>(c.input));
  auto *output = static_cast<Word *>(c.output);
  auto count = size_t(c.count);
  switch (c.kind) {
  case KILN_COLLECTIVE_ALL_REDUCE:
  case KILN_COLLECTIVE_REDUCE_SCATTER: {
    comm_reductions::CombineFn combine =
        comm_reductions::combineFunction(c.dtype, c.reduction);
    if (!combine) {
      error = "no reduction " + std::to_string(c.reduction) + " on dtype " +
              std::to_string(c.dtype);
      return false;
    }
    std::vector<Word> whole;
    Word *target = output;
    if (c.kind == KILN_COLLECTIVE_REDUCE_SCATTER) {
      whole.resize(count);
      target = whole.data();
    }
    if (!guarded("gloo::allreduce", error, [&] {
          gloo::AllreduceOptions opts(group);
          opts.setInput(input, count);
          opts.setOutput(target, count);
          opts.setReduceFunction(combine);
          opts.setTag(tag);
          gloo::allreduce(opts);
        }))
      return false;
    if (c.kind == KILN_COLLECTIVE_REDUCE_SCATTER) {
      size_t block = count / size_t(groupSize);
      std::copy_n(whole.data() + size_t(index) * block, block, output);
    }
    return true;
  }
  case KILN_COLLECTIVE_ALL_GATHER:
    return guarded("gloo::allgather", error, [&] {
      gloo::AllgatherOptions opts(group);
      opts.setInput(input, count);
      opts.setOutput(output, count * size_t(groupSize));
      opts.setTag(tag);
      gloo::allgather(opts);
    });
  case KILN_COLLECTIVE_BROADCAST:
    return guarded("gloo::broadcast", error, [&] {
      gloo::BroadcastOptions opts(group);
      opts.setRoot(int(c.root));
      if (index == c.root)
        opts.setInput(input, count);
      opts.setOutput(output, count);
      opts.setTag(tag);
      gloo::broadcast(opts);
    });
  case KILN_COLLECTIVE_ALL_TO_ALL:
    return guarded("gloo::alltoall", error, [&] {
      gloo::AlltoallOptions opts(group);
      opts.setInput(input, count);
      opts.setOutput(output, count);
      opts.setTag(tag);
      gloo::alltoall(opts);
    });
  }
  error = "unknown collective kind " + std::to_string(c.kind);
  return false;
}

/// Aborts a buffer's wait for receives when a time limit passes, from a
/// thread of its own, so that the context survives: Gloo's own timeout
/// would tell every pair of the context it failed.
class Watchdog {
public:
  Watchdog(gloo::transport::UnboundBuffer &buffer,
           std::chrono::milliseconds limit)
      : thread([this, &buffer, limit] {
          std::unique_lock<std::mutex> lock(mutex);
          if (!done.wait_for(lock, limit, [this] { return finished; }))
            buffer.abortWaitRecv();
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      finished = true;
    }
    done.notify_one();
    thread.join();
  }

private:
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::thread thread;
};

/// Keeps the buffers of an exchange that failed for the rest of the
/// process: its messages may still arrive into them.
void abandon(std::unique_ptr<gloo::transport::UnboundBuffer> received,
             std::unique_ptr<gloo::transport::UnboundBuffer> sent,
             std::unique_ptr<std::vector<int64_t>> receivedData,
             std::unique_ptr<std::vector<int64_t>> sentData) {
  struct Abandoned {
    std::unique_ptr<gloo::transport::UnboundBuffer> received, sent;
    std::unique_ptr<std::vector<int64_t>> receivedData, sentData;
  };
  static std::mutex mutex;
  static auto *kept = new std::vector<Abandoned>();
  std::lock_guard<std::mutex> lock(mutex);
  kept->push_back({std::move(received), std::move(sent),
                   std::move(receivedData), std::move(sentData)});
}

} // namespace

bool hostnameFromEnvironment(std::string &hostname, std::string &error) {
  if (const char *host = std::getenv("KILN_GLOO_HOSTNAME"); host && *host) {
    hostname = host;
    return true;
  }
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) {
    error = std::string("gethostname failed: ") + std::strerror(errno) +
            "; set KILN_GLOO_HOSTNAME to this host's address";
    return false;
  }
  hostname = name;
  return true;
}

bool Rendezvous::fromEnvironment(Rendezvous &out, std::string &error) {
  std::optional<int64_t> rank, size, seconds;
  if (!integerVariable("KILN_RANK", 0, int64_t(1) << 30, rank, error) ||
      !integerVariable("KILN_WORLD_SIZE", 1, int64_t(1) << 30, size, error) ||
      !integerVariable("KILN_GLOO_TIMEOUT", 1, 86400 * 365, seconds, error))
    return false;
  const char *store = std::getenv("KILN_STORE");
  if (!rank && !size && !(store && *store)) {
    out = Rendezvous();
    return true; // not started by a launcher: a run of one rank
  }
  if (!rank || !size || !(store && *store)) {
    error = "a Gloo run needs KILN_RANK, KILN_WORLD_SIZE and KILN_STORE "
            "together (kiln-launch sets them); ";
    error += !rank ? "KILN_RANK" : !size ? "KILN_WORLD_SIZE" : "KILN_STORE";
    error += " is not set";
    return false;
  }
  if (*rank >= *size) {
    error = "KILN_RANK is " + std::to_string(*rank) +
            ", not below KILN_WORLD_SIZE " + std::to_string(*size);
    return false;
  }
  out.rank = *rank;
  out.size = *size;
  out.store = store;
  if (const char *runId = std::getenv("KILN_RUN_ID"); runId && *runId)
    out.runId = runId;
  if (!hostnameFromEnvironment(out.hostname, error))
    return false;
  if (seconds)
    out.timeout = std::chrono::milliseconds(*seconds * 1000);
  return true;
}

GlooCommunicator *GlooCommunicator::create(const Rendezvous &rendezvous,
                                           int64_t serial, std::string &error) {
  std::unique_ptr<GlooCommunicator> comm(new GlooCommunicator());
  comm->rankValue = rendezvous.rank;
  comm->sizeValue = rendezvous.size;
  comm->timeout = rendezvous.timeout;
  comm->prefix = rendezvous.runId + "/comm" + std::to_string(serial);
  if (rendezvous.size == 1)
    return comm.release();
  comm->store = openStore(rendezvous.store, error);
  if (!comm->store)
    return nullptr;
  if (!guarded("creating the TCP device", error, [&] {
        gloo::transport::tcp::attr attr;
        attr.hostname = rendezvous.hostname;
        comm->device = gloo::transport::tcp::CreateDevice(attr);
      })) {
    error += " (at '" + rendezvous.hostname +
             "'; set KILN_GLOO_HOSTNAME to an address of this host)";
    return nullptr;
  }
  // Every rank meets the others once here, so that a missing rank is
  // reported when the communicator is created.
  comm->everyone.resize(static_cast<size_t>(rendezvous.size));
  for (int64_t r = 0; r < rendezvous.size; ++r)
    comm->everyone[size_t(r)] = r;
  comm->world =
      comm->context(comm->everyone, /*comparisons=*/true, comm->timeout, error);
  if (!comm->world)
    return nullptr;
  return comm.release();
}

std::shared_ptr<gloo::Context>
GlooCommunicator::context(const std::vector<int64_t> &members, bool comparisons,
                          std::chrono::milliseconds limit, std::string &error) {
  auto key = std::make_pair(members, comparisons);
  if (auto found = contexts.find(key); found != contexts.end())
    return found->second;
  auto self = std::find(members.begin(), members.end(), rankValue);
  auto made = std::make_shared<gloo::rendezvous::Context>(
      int(self - members.begin()), int(members.size()));
  std::string name = prefix + (comparisons ? "/compare" : "/data");
  for (int64_t member : members)
    name += "/" + std::to_string(member);
  if (!guarded("connecting the ranks", error, [&] {
        made->setTimeout(limit);
        gloo::rendezvous::PrefixStore scoped(name, *store);
        made->connectFullMesh(scoped, device);
        made->setTimeout(timeout);
      })) {
    error = "ranks " + describeMembers(members) +
            " could not connect through the store within " +
            std::to_string(limit.count()) + " ms: " + error;
    return nullptr;
  }
  contexts[key] = made;
  return made;
}

bool GlooCommunicator::gatherAll(const int64_t *values, int64_t count,
                                 int64_t *all, std::string &error) {
  if (sizeValue == 1) {
    std::copy_n(values, count, all);
    return true;
  }
  uint32_t tag = nextTag[world.get()]++;
  return guarded("gloo::allgather", error, [&] {
    gloo::AllgatherOptions opts(world);
    opts.setInput(const_cast<int64_t *>(values), size_t(count));
    opts.setOutput(all, size_t(count * sizeValue));
    opts.setTag(tag);
    gloo::allgather(opts);
  });
}

bool GlooCommunicator::minAll(int64_t *values, int64_t count,
                              std::string &error) {
  std::vector<int64_t> all(size_t(count * sizeValue));
  if (!gatherAll(values, count, all.data(), error))
    return false;
  for (int64_t r = 0; r < sizeValue; ++r)
    for (int64_t i = 0; i < count; ++i)
      values[i] = std::min(values[i], all[size_t(r * count + i)]);
  return true;
}

bool GlooCommunicator::exchangeGroup(const int64_t *members,
                                     int64_t memberCount, const int64_t *values,
                                     int64_t count, int64_t *all,
                                     int64_t timeoutMs, std::string &error) {
  std::vector<int64_t> group(members, members + memberCount);
  int64_t self =
      std::find(group.begin(), group.end(), rankValue) - group.begin();
  if (memberCount == 1) {
    std::copy_n(values, count, all);
    return true;
  }
  // Point to point among the members on the context of every rank, made
  // when the communicator was: the members need no connection of their
  // own, which a member busy elsewhere would keep from forming.
  const std::shared_ptr<gloo::Context> &ctx = world;
  // The members number their exchanges alike; the other ranks take no part.
  uint32_t serial = exchangeSerial[group]++;
  uint32_t tag =
      uint32_t(std::hash<std::string>()(describeMembers(group))) * 2654435761u +
      serial;
  uint64_t slot = gloo::Slot::build(kExchangeSlotPrefix, tag);
  size_t bytes = size_t(count) * sizeof(int64_t);
  // Buffers of their own: after a timeout the messages may still arrive, so
  // the buffers are then kept for the rest of the process.
  auto sentData =
      std::make_unique<std::vector<int64_t>>(values, values + count);
  auto receivedData =
      std::make_unique<std::vector<int64_t>>(size_t(count * memberCount));
  std::set<int64_t> pending;
  std::unique_ptr<gloo::transport::UnboundBuffer> received, sent;
  bool timedOut = false;
  try {
    received = ctx->createUnboundBuffer(receivedData->data(),
                                        bytes * size_t(memberCount));
    sent = ctx->createUnboundBuffer(sentData->data(), bytes);
    for (int64_t i = 0; i < memberCount; ++i) {
      if (i == self)
        continue;
      received->recv(int(group[size_t(i)]), slot, size_t(i) * bytes, bytes);
      pending.insert(group[size_t(i)]);
    }
    for (int64_t i = 0; i < memberCount; ++i)
      if (i != self)
        sent->send(int(group[size_t(i)]), slot);
    // Gloo's own timeout would break the context for every rank; a
    // watchdog aborts the wait instead.
    Watchdog watchdog(*received, timeoutMs > 0
                                     ? std::chrono::milliseconds(timeoutMs)
                                     : timeout);
    while (!pending.empty()) {
      int from = -1;
      if (!received->waitRecv(&from)) {
        timedOut = true;
        break;
      }
      pending.erase(from);
    }
    if (!timedOut)
      for (int64_t i = 0; i < memberCount - 1; ++i)
        sent->waitSend();
  } catch (const std::exception &e) {
    error =
        "the exchange among ranks " + describeMembers(group) + " failed" +
        (pending.empty() ? std::string()
                         : " waiting for rank(s) " + describeMembers(pending)) +
        ": " + e.what();
    abandon(std::move(received), std::move(sent), std::move(receivedData),
            std::move(sentData));
    return false;
  }
  if (timedOut) {
    error = "rank" + std::string(pending.size() == 1 ? " " : "s ") +
            joinRanks(pending) + " of the group did not reach it within " +
            (timeoutMs % 1000 ? std::to_string(timeoutMs) + " ms"
                              : std::to_string(timeoutMs / 1000) + " s");
    abandon(std::move(received), std::move(sent), std::move(receivedData),
            std::move(sentData));
    return false;
  }
  std::copy(receivedData->begin(), receivedData->end(), all);
  std::copy_n(values, count, all + self * count);
  return true;
}

bool GlooCommunicator::permute(const kiln_comm_plugin_collective_t &c,
                               std::string &error) {
  size_t bytes =
      size_t(c.count) * getElementTypeInfo(ElementType(c.dtype)).byteSize;
  int64_t target = -1, source = -1;
  for (int64_t p = 0; p < c.pair_count; ++p) {
    if (c.pairs[2 * p] == rankValue)
      target = c.pairs[2 * p + 1];
    if (c.pairs[2 * p + 1] == rankValue)
      source = c.pairs[2 * p];
  }
  if (source < 0)
    std::memset(c.output, 0, bytes);
  if (target == rankValue)
    std::memcpy(c.output, c.input, bytes);
  if (sizeValue == 1)
    return true; // no other rank to send to or hear from
  bool sends = target >= 0 && target != rankValue;
  bool receives = source >= 0 && source != rankValue;
  // Every rank takes the tag, whether it moves data or not, so that the
  // ranks' tags stay equal.
  std::shared_ptr<gloo::Context> ctx =
      context(everyone, /*comparisons=*/false, timeout, error);
  if (!ctx)
    return false;
  uint64_t slot = gloo::Slot::build(kPermuteSlotPrefix, nextTag[ctx.get()]++);
  if ((!sends && !receives) || bytes == 0)
    return true;
  return guarded("the permutation's send and receive", error, [&] {
    auto in = ctx->createUnboundBuffer(const_cast<void *>(c.input), bytes);
    auto out = ctx->createUnboundBuffer(c.output, bytes);
    if (receives)
      out->recv(int(source), slot);
    if (sends)
      in->send(int(target), slot);
    if (receives)
      out->waitRecv(timeout);
    if (sends)
      in->waitSend(timeout);
  });
}

bool GlooCommunicator::runCollective(const kiln_comm_plugin_collective_t &c,
                                     std::string &error) {
  if (c.dtype < 0 || unsigned(c.dtype) >= kNumElementTypes) {
    error = "unknown dtype " + std::to_string(c.dtype);
    return false;
  }
  if (c.kind == KILN_COLLECTIVE_PERMUTE)
    return permute(c, error);
  // This rank's row of the replica groups.
  std::vector<int64_t> members;
  for (int64_t g = 0; g < c.group_count && members.empty(); ++g) {
    const int64_t *row = c.groups + g * c.group_size;
    if (std::find(row, row + c.group_size, rankValue) != row + c.group_size)
      members.assign(row, row + c.group_size);
  }
  if (members.empty()) {
    error = "rank " + std::to_string(rankValue) + " is in no replica group";
    return false;
  }
  int64_t index =
      std::find(members.begin(), members.end(), rankValue) - members.begin();
  unsigned width = getElementTypeInfo(ElementType(c.dtype)).byteSize;
  if (members.size() == 1 || c.count == 0) {
    std::memcpy(c.output, c.input, size_t(c.count) * width);
    return true;
  }
  // A member's index in a Gloo context is its position in the row: its
  // group index.
  std::shared_ptr<gloo::Context> ctx =
      context(members, /*comparisons=*/false, timeout, error);
  if (!ctx)
    return false;
  uint32_t tag = nextTag[ctx.get()]++;
  int64_t size = int64_t(members.size());
  switch (width) {
  case 1:
    return runOnGroup<uint8_t>(ctx, tag, c, index, size, error);
  case 2:
    return runOnGroup<uint16_t>(ctx, tag, c, index, size, error);
  case 4:
    return runOnGroup<uint32_t>(ctx, tag, c, index, size, error);
  case 8:
    return runOnGroup<uint64_t>(ctx, tag, c, index, size, error);
  }
  error = "elements of " + std::to_string(width) + " bytes";
  return false;
}

bool GlooCommunicator::start(const kiln_comm_plugin_collective_t &collective,
                             int64_t &handle, std::string &error) {
  if (!runCollective(collective, error))
    return false;
  handle = nextHandle++;
  open.push_back(handle);
  return true;
}

bool GlooCommunicator::wait(int64_t handle, std::string &error) {
  auto found = std::find(open.begin(), open.end(), handle);
  if (found == open.end()) {
    error = "no collective in flight has handle " + std::to_string(handle);
    return false;
  }
  open.erase(found);
  return true;
}

} // namespace comm_gloo
} // namespace kiln
