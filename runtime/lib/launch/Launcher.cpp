//===- Launcher.cpp - Starting the ranks of a run that meet in a store ----===//

#include "Launcher.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kiln {
namespace launch {
namespace {

/// The signal the launcher received (SIGINT, SIGTERM), or 0.
volatile std::sig_atomic_t received = 0;

void onSignal(int signal) { received = signal; }

bool parseCount(const std::string &text, int64_t &value) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  value = std::stoll(text);
  return true;
}

/// "rank R exited with status S" / "worker R was killed by signal N
/// (NAME)": \p what names the process.
std::string describeEnd(const char *what, int64_t index, int status) {
  std::string text = std::string(what) + " " + std::to_string(index);
  if (WIFEXITED(status))
    return text + " exited with status " + std::to_string(WEXITSTATUS(status));
  int signal = WTERMSIG(status);
  const char *name = strsignal(signal);
  return text + " was killed by signal " + std::to_string(signal) +
         (name ? std::string(" (") + name + ")" : std::string());
}

int exitCodeOf(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

const char *launchHelpText() {
  return R"(OVERVIEW: kiln-launch - start a command as the ranks of one run

USAGE: kiln-launch --nproc N [options] -- COMMAND [ARGUMENTS...]
       kiln-launch --nproc MIN:MAX [--local K] [--max-restarts R]
                   [options] -- COMMAND [ARGUMENTS...]

Starts COMMAND N times on this host, as ranks 0 to N-1 of one run that
meet through a store, over the Gloo communicator (kiln-run --comm gloo,
kiln_comm_create_gloo, kiln.distributed.gloo()). Each rank finds in its
environment KILN_RANK, KILN_WORLD_SIZE, KILN_STORE, KILN_RUN_ID and
KILN_GLOO_HOSTNAME. When a rank fails, the others are stopped (SIGTERM,
then SIGKILL after the grace period) and kiln-launch exits with the
failed rank's status (128 + the signal for a rank a signal ended), so that
no rank waits for a dead one. SIGINT and SIGTERM sent to kiln-launch are
passed on to every rank. Unless OMP_NUM_THREADS is set, each of several
ranks gets OMP_NUM_THREADS = cores / ranks (at least 1), as torchrun does.

With --nproc MIN:MAX the run is elastic: it goes on while at least MIN
workers remain and takes in arriving ones up to MAX. This launcher starts
K workers (--local; default MAX), which learn their rank and the run's
size from the store at each rendezvous (KILN_ELASTIC, KILN_STORE,
KILN_RUN_ID, KILN_WORKER_ID; kiln.distributed.elastic, kiln/Elastic.h),
not from their command line. A worker that fails is started again, up to
--max-restarts times in all, and joins the run; the others go on without
waiting for it. Across hosts, run one kiln-launch per host with the same
--store (redis://) and --run-id; a launcher started later adds its
workers to the run. kiln-launch exits with 0 when a worker of its own
finished the run, else with the status of its last worker that failed.

OPTIONS:
  --nproc N          The number of ranks (required, at least 1).
  --nproc MIN:MAX    An elastic run of MIN to MAX workers (1 <= MIN <= MAX).
  --local K          Elastic: the workers this launcher runs (default MAX).
  --max-restarts R   Elastic: how many times this launcher starts a worker
                     in place of one that failed (default 0).
  --store SPEC       Where the ranks meet: file:DIRECTORY (on a file system
                     every rank sees) or redis://HOST[:PORT]. Default: a
                     new directory, removed when the run ends.
  --run-id ID        The prefix of the run's keys in the store. Default: a
                     new one for every run (a store keeps a run's keys, so
                     two runs must not share an ID); required for an
                     elastic run with --store, whose launchers share it.
  --hostname HOST    The address other ranks reach these at (KILN_GLOO_
                     HOSTNAME). Default: 127.0.0.1 with the default store,
                     else the ranks' host name.
  --grace SECONDS    How long the other ranks get to stop after one failed
                     or a signal came (default 10).
  --help, -h         Print this help and exit.
)";
}

bool parseLaunchArguments(const std::vector<std::string> &arguments,
                          LaunchOptions &options, bool &help,
                          std::string &error) {
  help = false;
  bool haveRanks = false, restartsGiven = false;
  int64_t localRanks = 0;
  size_t i = 0;
  for (; i < arguments.size(); ++i) {
    std::string argument = arguments[i];
    if (argument == "--") {
      ++i;
      break;
    }
    if (argument == "--help" || argument == "-h") {
      help = true;
      return true;
    }
    if (argument.rfind("--", 0) != 0) {
      // The command starts here without a "--".
      break;
    }
    std::string name = argument, value;
    bool valueInline = false;
    if (size_t equals = argument.find('='); equals != std::string::npos) {
      name = argument.substr(0, equals);
      value = argument.substr(equals + 1);
      valueInline = true;
    }
    if (name != "--nproc" && name != "--store" && name != "--run-id" &&
        name != "--hostname" && name != "--grace" && name != "--local" &&
        name != "--max-restarts") {
      error = "unknown option '" + name + "'";
      return false;
    }
    if (!valueInline) {
      if (i + 1 >= arguments.size()) {
        error = name + " needs a value";
        return false;
      }
      value = arguments[++i];
    }
    if (name == "--nproc") {
      size_t colon = value.find(':');
      if (colon != std::string::npos) {
        if (!parseCount(value.substr(0, colon), options.minRanks) ||
            !parseCount(value.substr(colon + 1), options.maxRanks) ||
            options.minRanks < 1 || options.minRanks > options.maxRanks) {
          error = "--nproc MIN:MAX needs 1 <= MIN <= MAX, not '" + value + "'";
          return false;
        }
      } else if (!parseCount(value, options.ranks) || options.ranks < 1) {
        error = "--nproc needs a number of ranks of at least 1, not '" + value +
                "'";
        return false;
      }
      haveRanks = true;
    } else if (name == "--local") {
      if (!parseCount(value, localRanks) || localRanks < 1) {
        error = "--local needs a number of workers of at least 1, not '" +
                value + "'";
        return false;
      }
    } else if (name == "--max-restarts") {
      if (!parseCount(value, options.maxRestarts)) {
        error = "--max-restarts needs a count, not '" + value + "'";
        return false;
      }
      restartsGiven = true;
    } else if (name == "--store") {
      if (!(value.rfind("file:", 0) == 0 && value.size() > 5) &&
          !(value.rfind("redis://", 0) == 0 && value.size() > 8)) {
        error = "--store must be file:DIRECTORY or redis://HOST[:PORT], not '" +
                value + "'";
        return false;
      }
      options.store = value;
    } else if (name == "--run-id") {
      if (value.empty()) {
        error = "--run-id needs a non-empty ID";
        return false;
      }
      options.runId = value;
    } else if (name == "--hostname") {
      if (value.empty()) {
        error = "--hostname needs a non-empty address";
        return false;
      }
      options.hostname = value;
    } else {
      char *end = nullptr;
      double seconds = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(seconds >= 0) || seconds > 86400) {
        error = "--grace needs a number of seconds from 0 to 86400, not '" +
                value + "'";
        return false;
      }
      options.graceSeconds = seconds;
    }
  }
  options.command.assign(arguments.begin() + std::ptrdiff_t(i),
                         arguments.end());
  if (!haveRanks) {
    error = "--nproc N is required";
    return false;
  }
  if (options.maxRanks == 0 && (localRanks || restartsGiven)) {
    error = std::string(localRanks ? "--local" : "--max-restarts") +
            " is for an elastic run (--nproc MIN:MAX)";
    return false;
  }
  if (options.maxRanks > 0) {
    options.ranks = localRanks ? localRanks : options.maxRanks;
    if (!options.store.empty() && options.runId.empty()) {
      error = "an elastic run on a store of your own needs --run-id, the same "
              "for every launcher of the run";
      return false;
    }
  }
  if (options.command.empty()) {
    error = "no command to run: kiln-launch --nproc N -- COMMAND [ARGUMENTS]";
    return false;
  }
  return true;
}

/// Writes the parts as one line to `log` in a single write: the ranks
/// write their own lines to the same stream, and a line written piece by
/// piece could be split by theirs.
template <typename... Parts>
static void writeLine(std::ostream &log, const Parts &...parts) {
  std::ostringstream line;
  (line << ... << parts);
  const std::string text = line.str();
  log.write(text.data(), std::streamsize(text.size()));
  log.flush();
}

int runRanks(const LaunchOptions &options, std::ostream &log) {
  namespace fs = std::filesystem;
  std::string store = options.store, hostname = options.hostname;
  fs::path ownStore;
  if (store.empty()) {
    char pattern[] = "/tmp/kiln-launch-XXXXXX";
    if (!::mkdtemp(pattern)) {
      writeLine(
          log, "kiln-launch: error: cannot make a store directory under /tmp: ",
          std::strerror(errno), "\n");
      return 1;
    }
    ownStore = pattern;
    store = "file:" + (ownStore / "store").string();
    if (hostname.empty())
      hostname = "127.0.0.1";
  }
  std::string runId = options.runId;
  if (runId.empty())
    runId = "launch-" + std::to_string(::getpid()) + "-" +
            std::to_string(
                std::chrono::system_clock::now().time_since_epoch().count());

  struct sigaction action = {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  struct sigaction oldInt, oldTerm;
  sigaction(SIGINT, &action, &oldInt);
  sigaction(SIGTERM, &action, &oldTerm);
  received = 0;

  const bool elastic = options.maxRanks > 0;
  // Several ranks on one host each running as many threads as it has cores
  // oversubscribe it, and OpenMP's spinning threads then starve the others'
  // communication (a step 20x slower): as torchrun does, each rank gets an
  // equal share unless OMP_NUM_THREADS says otherwise.
  std::string threads;
  if (options.ranks > 1 && !std::getenv("OMP_NUM_THREADS")) {
    long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
    threads = std::to_string(std::max<long>(1, cores / options.ranks));
    writeLine(log, "kiln-launch: OMP_NUM_THREADS=", threads,
              " for each of the ", options.ranks, " ranks on this host (",
              cores, " cores; set OMP_NUM_THREADS to choose)\n");
  }
  std::vector<pid_t> pids(size_t(options.ranks), -1);
  std::vector<int64_t> starts(size_t(options.ranks), 0);
  std::vector<char *> argv;
  for (const std::string &word : options.command)
    argv.push_back(const_cast<char *>(word.c_str()));
  argv.push_back(nullptr);
  int result = 0;
  bool stopping = false;
  // Starts slot's process: rank `slot` of a fixed run, or a worker of an
  // elastic one (named by this launcher, the slot and how often it was
  // started, so that a worker started again is a new one in the store).
  auto start = [&](int64_t slot) {
    pid_t pid = ::fork();
    if (pid == 0) {
      sigaction(SIGINT, &oldInt, nullptr);
      sigaction(SIGTERM, &oldTerm, nullptr);
      if (elastic) {
        ::unsetenv("KILN_RANK");
        ::unsetenv("KILN_WORLD_SIZE");
        ::setenv("KILN_ELASTIC",
                 (std::to_string(options.minRanks) + ":" +
                  std::to_string(options.maxRanks))
                     .c_str(),
                 1);
        std::string worker = (hostname.empty() ? "host" : hostname) + "/" +
                             std::to_string(::getppid()) + "/" +
                             std::to_string(slot) + "." +
                             std::to_string(starts[size_t(slot)]);
        ::setenv("KILN_WORKER_ID", worker.c_str(), 1);
      } else {
        ::setenv("KILN_RANK", std::to_string(slot).c_str(), 1);
        ::setenv("KILN_WORLD_SIZE", std::to_string(options.ranks).c_str(), 1);
      }
      ::setenv("KILN_STORE", store.c_str(), 1);
      ::setenv("KILN_RUN_ID", runId.c_str(), 1);
      if (!threads.empty())
        ::setenv("OMP_NUM_THREADS", threads.c_str(), 1);
      if (!hostname.empty())
        ::setenv("KILN_GLOO_HOSTNAME", hostname.c_str(), 1);
      ::execvp(argv[0], argv.data());
      std::string message = "kiln-launch: error: " +
                            std::string(elastic ? "worker " : "rank ") +
                            std::to_string(slot) + " cannot run '" +
                            options.command[0] + "': " + std::strerror(errno) +
                            "\n";
      ssize_t ignored = ::write(2, message.data(), message.size());
      (void)ignored;
      ::_exit(127);
    }
    if (pid > 0) {
      pids[size_t(slot)] = pid;
      ++starts[size_t(slot)];
    }
    return pid > 0;
  };
  for (int64_t slot = 0; slot < options.ranks; ++slot) {
    if (!start(slot)) {
      writeLine(log, "kiln-launch: error: cannot start ",
                elastic ? "worker " : "rank ", slot, ": ", std::strerror(errno),
                "\n");
      result = 1;
      stopping = true;
      break;
    }
  }
  int64_t restartsLeft = options.maxRestarts;
  bool finishedRun = false;
  int lastFailure = 0;

  auto live = [&] {
    int64_t count = 0;
    for (pid_t pid : pids)
      count += pid > 0;
    return count;
  };
  auto signalAll = [&](int signal) {
    for (pid_t pid : pids)
      if (pid > 0)
        ::kill(pid, signal);
  };
  // When the ranks still running after a failure or a signal are killed.
  auto graceDeadline = [&] {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(options.graceSeconds));
  };
  auto deadline = std::chrono::steady_clock::time_point::max();
  if (stopping) {
    signalAll(SIGTERM);
    deadline = graceDeadline();
  }
  bool killed = false;
  while (live() > 0) {
    if (received && !stopping) {
      writeLine(log, "kiln-launch: passing signal ", int(received),
                " on to the ranks\n");
      signalAll(int(received));
      stopping = true;
      result = 128 + int(received);
      deadline = graceDeadline();
    }
    if (stopping && !killed && std::chrono::steady_clock::now() >= deadline) {
      writeLine(log, "kiln-launch: ", live(),
                " rank(s) still running after the grace period: killing "
                "them\n");
      signalAll(SIGKILL);
      killed = true;
    }
    int status = 0;
    pid_t done = ::waitpid(-1, &status, stopping ? WNOHANG : 0);
    if (done == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (done < 0) {
      if (errno == EINTR)
        continue;
      break; // no children left
    }
    int64_t rank = -1;
    for (size_t r = 0; r < pids.size(); ++r)
      if (pids[r] == done) {
        rank = int64_t(r);
        pids[r] = -1;
      }
    if (rank < 0)
      continue;
    bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (elastic) {
      if (!failed) {
        finishedRun = true;
        continue;
      }
      lastFailure = exitCodeOf(status);
      if (stopping || finishedRun)
        continue;
      std::string what = describeEnd("worker", rank, status);
      if (restartsLeft > 0) {
        --restartsLeft;
        writeLine(log, "kiln-launch: ", what, "; starting it again (",
                  restartsLeft, " restart(s) left)\n");
        if (!start(rank))
          writeLine(log, "kiln-launch: error: cannot start worker ", rank, ": ",
                    std::strerror(errno), "\n");
      } else {
        writeLine(log, "kiln-launch: ", what,
                  "; the run goes on without it (no restarts left)\n");
      }
      continue;
    }
    if (!failed || stopping)
      continue;
    writeLine(log, "kiln-launch: ", describeEnd("rank", rank, status),
              "; stopping the other ranks\n");
    result = exitCodeOf(status);
    stopping = true;
    signalAll(SIGTERM);
    deadline = graceDeadline();
  }
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  if (elastic && result == 0 && !finishedRun) {
    writeLine(log, "kiln-launch: no worker of this host finished the run\n");
    result = lastFailure ? lastFailure : 1;
  }
  if (!ownStore.empty()) {
    std::error_code ignored;
    fs::remove_all(ownStore, ignored);
  }
  return result;
}

} // namespace launch
} // namespace kiln
