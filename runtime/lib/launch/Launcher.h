//===- Launcher.h - Starting the ranks of a run that meet in a store -*- C++
//-*-===//
//
// What kiln-launch does: starts a command as the ranks of one run, each
// told its rank, the run's size and the store the ranks meet through
// (KILN_RANK, KILN_WORLD_SIZE, KILN_STORE, KILN_RUN_ID: what
// kiln_comm_create_gloo reads), watches them, and ends the run when one
// fails, so that no rank waits for a dead one. One launcher runs one fixed
// set of ranks on this host; with --nproc MIN:MAX, the workers of an elastic
// run on this host, which it starts again when they fail, up to
// --max-restarts, while the run goes on without them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_LAUNCH_LAUNCHER_H
#define KILN_RUNTIME_LIB_LAUNCH_LAUNCHER_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace kiln {
namespace launch {

struct LaunchOptions {
  /// How many ranks to start (>= 1).
  int64_t ranks = 1;
  /// An elastic run (--nproc MIN:MAX): the run's sizes; 0 for a fixed run.
  /// Its workers learn their rank and the run's size from the rendezvous
  /// (KILN_ELASTIC), and this launcher runs `ranks` of them (--local).
  int64_t minRanks = 0, maxRanks = 0;
  /// Elastic: how many times a worker that failed is started again.
  int64_t maxRestarts = 0;
  /// file:DIRECTORY or redis://HOST[:PORT]; empty: a fresh directory,
  /// removed when the run ends.
  std::string store;
  /// The prefix of the run's keys in the store; empty: one made from the
  /// launcher's process id and the time, new for every run.
  std::string runId;
  /// KILN_GLOO_HOSTNAME for the ranks; empty: 127.0.0.1 for a store of
  /// this launcher's own (every rank is on this host), else the host's
  /// name.
  std::string hostname;
  /// Seconds the other ranks get to stop (SIGTERM) once one has failed,
  /// before they are killed (SIGKILL).
  double graceSeconds = 10;
  /// The command every rank runs, and its arguments.
  std::vector<std::string> command;
};

/// Parses kiln-launch's command line (argv[0] excluded); false with the
/// mistake in \p error. Sets \p help for --help.
bool parseLaunchArguments(const std::vector<std::string> &arguments,
                          LaunchOptions &options, bool &help,
                          std::string &error);

/// kiln-launch --help.
const char *launchHelpText();

/// Runs the ranks to the end. Returns 0 when every rank exits with 0;
/// otherwise the status of the first rank that failed (128 + its signal
/// when a signal ended it), after the others were stopped, with what
/// happened written to \p log. A signal sent to the launcher (SIGINT,
/// SIGTERM) is passed on to every rank.
int runRanks(const LaunchOptions &options, std::ostream &log);

} // namespace launch
} // namespace kiln

#endif // KILN_RUNTIME_LIB_LAUNCH_LAUNCHER_H
