//===- ElasticRun.cpp - The generations of an elastic run -----------------===//

#include "ElasticRun.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>
#include <unistd.h>

namespace kiln {
namespace comm_gloo {
namespace {

using Clock = std::chrono::steady_clock;

/// How often a waiting worker reads the store again.
constexpr std::chrono::milliseconds kPoll{5};

/// The seconds in environment variable \p name as milliseconds; false with
/// \p error set when it is set but not a number in [low, high].
bool secondsVariable(const char *name, double low, double high,
                     std::chrono::milliseconds &value, std::string &error) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return true;
  char *end = nullptr;
  errno = 0;
  double parsed = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !(parsed >= low) ||
      !(parsed <= high)) {
    error = std::string(name) + " is '" + text + "', not a number of seconds "
            "from " + std::to_string(int64_t(low)) + " to " +
            std::to_string(int64_t(high));
    return false;
  }
  value = std::chrono::milliseconds(int64_t(std::llround(parsed * 1000)));
  return true;
}

/// "MIN:MAX" (or "N", MIN = MAX = N) into \p low and \p high.
bool parseBounds(const std::string &text, int64_t &low, int64_t &high) {
  auto number = [](const std::string &part, int64_t &out) {
    if (part.empty() || part.size() > 9 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      return false;
    out = std::strtoll(part.c_str(), nullptr, 10);
    return out >= 1;
  };
  size_t colon = text.find(':');
  if (colon == std::string::npos)
    return number(text, low) && number(text, high);
  return number(text.substr(0, colon), low) &&
         number(text.substr(colon + 1), high) && low <= high;
}

/// The integer at the start of a stored value; nullopt for a value that is
/// not one (a corrupted store).
std::optional<int64_t> leadingInteger(const std::string &text) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || errno == ERANGE)
    return std::nullopt;
  return value;
}

} // namespace

bool ElasticConfig::fromEnvironment(ElasticConfig &out, std::string &error) {
  out = ElasticConfig();
  const char *bounds = std::getenv("KILN_ELASTIC");
  if (!bounds || !*bounds) {
    error = "not an elastic run: KILN_ELASTIC is not set (start the workers "
            "with kiln-launch --nproc MIN:MAX)";
    return false;
  }
  if (!parseBounds(bounds, out.minSize, out.maxSize)) {
    error = std::string("KILN_ELASTIC is '") + bounds +
            "'; expected MIN:MAX, 1 <= MIN <= MAX";
    return false;
  }
  const char *store = std::getenv("KILN_STORE");
  if (!store || !*store) {
    error = "an elastic run needs KILN_STORE (file:DIRECTORY or "
            "redis://HOST[:PORT]; kiln-launch sets it)";
    return false;
  }
  out.store = store;
  if (const char *runId = std::getenv("KILN_RUN_ID"); runId && *runId)
    out.runId = runId;
  if (!secondsVariable("KILN_ELASTIC_TIMEOUT", 0.1, 86400, out.timeout,
                       error) ||
      !secondsVariable("KILN_ELASTIC_RENDEZVOUS_TIMEOUT", 0.1, 86400 * 365,
                       out.rendezvousTimeout, error) ||
      !secondsVariable("KILN_ELASTIC_SETTLE", 0, 3600, out.settle, error))
    return false;
  if (!hostnameFromEnvironment(out.hostname, error))
    return false;
  if (const char *id = std::getenv("KILN_WORKER_ID"); id && *id)
    out.workerId = id;
  else
    out.workerId = out.hostname + ":" + std::to_string(::getpid());
  return true;
}

std::unique_ptr<ElasticRun> ElasticRun::open(const ElasticConfig &config,
                                             std::string &error) {
  std::unique_ptr<ElasticRun> run(new ElasticRun());
  run->config = config;
  if (!StoreAddress::parse(config.store, run->address, error))
    return nullptr;
  double connect = std::chrono::duration<double>(config.timeout).count();
  run->store = KeyValueStore::open(run->address, connect, error);
  if (!run->store)
    return nullptr;
  return run;
}

std::string ElasticRun::key(const std::string &name) const {
  return config.runId + "/elastic/" + name;
}

std::string ElasticRun::generationKey(int64_t generation,
                                      const std::string &name) const {
  return key("g" + std::to_string(generation) + "/" + name);
}

bool ElasticRun::finished(bool &result, std::string &error) {
  std::optional<std::string> done;
  if (!store->get(key("done"), done, error))
    return false;
  result = done.has_value();
  return true;
}

bool ElasticRun::settle(int64_t generation, int64_t &size,
                        int64_t &abandonedAt, std::string &error) {
  Clock::time_point start = Clock::now(), lastArrival = start;
  int64_t seen = -1;
  std::string arrivalsKey = generationKey(generation, "arrivals");
  std::string sizeKey = generationKey(generation, "size");
  for (;;) {
    // Settled already, by this worker or another?
    std::optional<std::string> value;
    if (!store->get(sizeKey, value, error))
      return false;
    if (value) {
      std::optional<int64_t> parsed = leadingInteger(*value);
      if (!parsed || *parsed < 0) {
        error = "the store holds '" + *value + "' as the size of generation " +
                std::to_string(generation) + ", not a size";
        return false;
      }
      size = *parsed;
      abandonedAt = 0;
      if (size == 0) {
        size_t space = value->find(' ');
        std::optional<int64_t> arrivals =
            space == std::string::npos
                ? std::nullopt
                : leadingInteger(value->substr(space + 1));
        abandonedAt = arrivals ? *arrivals : int64_t(1) << 62;
      }
      return true;
    }
    bool done = false;
    if (!finished(done, error))
      return false;
    if (done) {
      size = -1;
      return true;
    }
    int64_t arrivals = 0;
    if (!store->add(arrivalsKey, 0, arrivals, error))
      return false;
    Clock::time_point now = Clock::now();
    if (arrivals != seen) {
      seen = arrivals;
      lastArrival = now;
    }
    int64_t candidate = -1;
    if (arrivals >= config.maxSize)
      candidate = config.maxSize;
    else if (arrivals >= config.minSize && now - lastArrival >= config.settle)
      candidate = arrivals;
    // After the first generation, only a group holding the run's state may
    // go on: workers that have just started wait for its members.
    if (candidate > 0 && generation > 0) {
      bool holder = false;
      for (int64_t a = 1; a <= candidate && !holder; ++a) {
        std::optional<int64_t> serial;
        if (!arrivalSerial(generation, a, serial, error))
          return false;
        holder = *serial >= 0;
      }
      if (!holder)
        candidate = -1;
    }
    if (candidate < 0 && now - start >= config.rendezvousTimeout)
      candidate = 0; // the arrivals so far fail; later ones go on
    if (candidate < 0) {
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    // Every waiting worker may settle the generation, so that none is a
    // single point of failure; the first to write the size decides, and
    // the others read it on the next turn. A generation given up records
    // how many had arrived: they fail together, and workers arriving later
    // (members that survived a failure, say) try the next one.
    std::string decided = std::to_string(candidate);
    if (candidate == 0)
      decided += " " + std::to_string(arrivals);
    bool written = false;
    if (!store->setIfAbsent(sizeKey, decided, written, error))
      return false;
    if (written && candidate > 0 &&
        !store->set(key("generation"), std::to_string(generation), error))
      return false;
  }
}

bool ElasticRun::arrivalSerial(int64_t generation, int64_t arrival,
                               std::optional<int64_t> &serial,
                               std::string &error) {
  std::string entryKey =
      generationKey(generation, "arrival/" + std::to_string(arrival));
  std::optional<std::string> entry;
  // An arrival counts itself before it writes its entry.
  Clock::time_point limit = Clock::now() + config.timeout;
  for (;;) {
    if (!store->get(entryKey, entry, error))
      return false;
    if (entry || Clock::now() >= limit)
      break;
    std::this_thread::sleep_for(kPoll);
  }
  if (entry)
    serial = leadingInteger(*entry);
  if (!serial) {
    error = "arrival " + std::to_string(arrival) + " at generation " +
            std::to_string(generation) + " left no commit serial";
    return false;
  }
  return true;
}

bool ElasticRun::rendezvous(int64_t commitSerial, Generation &out,
                            std::string &error) {
  out = Generation();
  int64_t generation = joined + 1;
  if (joined < 0) {
    std::optional<std::string> last;
    if (!store->get(key("generation"), last, error))
      return false;
    if (last) {
      std::optional<int64_t> parsed = leadingInteger(*last);
      if (!parsed) {
        error = "the store holds '" + *last +
                "' as the run's generation, not a number";
        return false;
      }
      generation = *parsed + 1;
    } else {
      generation = 0;
    }
  }
  for (;;) {
    bool done = false;
    if (!finished(done, error))
      return false;
    if (done)
      return true; // out.generation == -1
    int64_t arrival = 0;
    if (!store->add(generationKey(generation, "arrivals"), 1, arrival, error) ||
        !store->set(generationKey(generation,
                                  "arrival/" + std::to_string(arrival)),
                    std::to_string(commitSerial) + " " + config.workerId,
                    error))
      return false;
    int64_t size = 0, abandonedAt = 0;
    if (!settle(generation, size, abandonedAt, error))
      return false;
    if (size < 0)
      return true; // finished while waiting
    if (size == 0 && arrival > abandonedAt) {
      // Arrived after the generation was given up: the next one.
      ++generation;
      continue;
    }
    if (size == 0) {
      error = "generation " + std::to_string(generation) +
              " could not be formed within " +
              std::to_string(config.rendezvousTimeout.count() / 1000) +
              " s (KILN_ELASTIC_RENDEZVOUS_TIMEOUT): fewer workers than the "
              "run's minimum of " + std::to_string(config.minSize) +
              " arrived" + (generation > 0 ? ", or none that holds the "
                                             "run's state" : "");
      return false;
    }
    if (arrival > size) {
      // Too late for this generation: wait for the next one.
      ++generation;
      continue;
    }
    // The state's source: the lowest rank among the newest commits.
    int64_t best = -2, root = 0;
    for (int64_t a = 1; a <= size; ++a) {
      std::optional<int64_t> serial;
      if (!arrivalSerial(generation, a, serial, error))
        return false;
      if (*serial > best) {
        best = *serial;
        root = a - 1;
      }
    }
    Rendezvous group;
    group.rank = arrival - 1;
    group.size = size;
    group.store = config.store;
    group.runId = config.runId + "/g" + std::to_string(generation);
    group.hostname = config.hostname;
    group.timeout = config.timeout;
    std::unique_ptr<GlooCommunicator> comm(
        GlooCommunicator::create(group, 0, error));
    if (!comm) {
      error = "generation " + std::to_string(generation) + ", rank " +
              std::to_string(group.rank) + " of " + std::to_string(size) +
              ": " + error;
      return false;
    }
    joined = generation;
    joinedSize = size;
    out.generation = generation;
    out.rank = group.rank;
    out.size = size;
    out.root = root;
    out.comm = std::move(comm);
    return true;
  }
}

bool ElasticRun::waiting(bool &result, std::string &error) {
  result = false;
  if (joined < 0 || joinedSize >= config.maxSize)
    return true;
  int64_t arrivals = 0;
  if (!store->add(generationKey(joined + 1, "arrivals"), 0, arrivals, error))
    return false;
  result = arrivals > 0;
  return true;
}

bool ElasticRun::finish(std::string &error) {
  return store->set(key("done"), "1", error);
}

} // namespace comm_gloo
} // namespace kiln
