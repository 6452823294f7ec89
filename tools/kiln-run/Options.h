//===- Options.h - kiln-run command line ------------------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_RUN_OPTIONS_H
#define KILN_TOOLS_KILN_RUN_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace run {

/// --shard-input NAME_OR_INDEX=DIM[:AXIS]: every rank reads the whole input
/// and keeps its block along `dimension`, one of as many blocks as there are
/// ranks, or with AXIS, one of as many as the --mesh axis has ranks.
struct ShardSpec {
  /// The input's name, or its index when `byIndex`.
  std::string name;
  size_t index = 0;
  bool byIndex = false;
  size_t dimension = 0;
  /// The --mesh axis the input is split over; empty for all ranks.
  std::string axis;
};

/// One axis of --mesh NAME=SIZE,...
struct MeshAxis {
  std::string name;
  int64_t size = 1;
};

struct Options {
  std::string modulePath;
  /// Empty when --function was not given.
  std::string functionName;
  /// One argument per input, in signature order.
  std::vector<std::string> inputs;
  /// Empty when outputs are printed rather than saved.
  std::string outputDir;
  /// Timed calls after the first one; 0 disables timing.
  unsigned long repeat = 0;
  /// The timed calls take their inputs from and leave their outputs in
  /// the CUDA device's memory (--device-resident).
  bool deviceResident = false;
  /// "cpu" or "cuda" from --device; empty runs on the module's own device.
  std::string device;
  bool list = false;
  /// Print the CUDA device's counters after the calls (--stats).
  bool stats = false;
  /// "auto", "mpi", "gloo" or "self" from --comm.
  std::string comm = "auto";
  std::vector<ShardSpec> shards;
  /// The ranks as a row-major mesh (--mesh), for --shard-input's AXIS.
  std::vector<MeshAxis> mesh;
  /// Where --profile-trace writes the trace; empty without it.
  std::string profilePath;
  /// Print the regions that took the most time (--profile-summary).
  bool profileSummary = false;
  /// Every rank prints or saves its outputs, not only rank 0.
  bool allRanksWrite = false;
  bool help = false;
  /// What the command line spelled in a deprecated way, one message each,
  /// for the tool to print as warnings.
  std::vector<std::string> warnings;
};

/// Parses the command line. Returns false with a description in \p error
/// when it is malformed; semantic checks (does the function exist, do the
/// inputs fit) are left to the caller.
bool parseOptions(int argc, char **argv, Options &options, std::string &error);

/// The --help text.
const char *helpText();

} // namespace run
} // namespace kiln

#endif // KILN_TOOLS_KILN_RUN_OPTIONS_H
