//===- Options.cpp - kiln-run command line ---------------------------------===//

#include "Options.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kiln {
namespace run {

namespace {

bool parseCount(const std::string &text, unsigned long &out) {
  if (text.empty() || text[0] < '0' || text[0] > '9')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long value = std::strtoul(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value == 0)
    return false;
  out = value;
  return true;
}

/// Whether `text` can name a --mesh axis in --shard-input: it starts with
/// a letter or '_' (a dimension is all digits).
bool isAxisName(const std::string &text) {
  return !text.empty() &&
         (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_');
}

/// Parses NAME_OR_INDEX=DIM[:AXIS] (the name may itself contain '=': the
/// last '=' ends it), or the deprecated NAME_OR_INDEX:DIM[:AXIS] (the name
/// may contain ':': the last all-digit field is the dimension, and a field
/// after it that starts with a letter or '_' the mesh axis), which adds a
/// warning.
bool parseShard(const std::string &text, ShardSpec &shard,
                std::vector<std::string> &warnings, std::string &error) {
  auto fail = [&]() {
    error = "--shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS "
            "(e.g. x=0, 1=0 or w=1:tp), not '" +
            text + "'";
    return false;
  };
  std::string name, dimensionText;
  size_t equals = text.rfind('=');
  if (equals != std::string::npos) {
    name = text.substr(0, equals);
    dimensionText = text.substr(equals + 1);
    size_t colon = dimensionText.find(':');
    if (colon != std::string::npos) {
      shard.axis = dimensionText.substr(colon + 1);
      dimensionText = dimensionText.substr(0, colon);
      if (!isAxisName(shard.axis))
        return fail();
    }
  } else {
    std::string rest = text;
    size_t colon = rest.rfind(':');
    if (colon != std::string::npos && isAxisName(rest.substr(colon + 1))) {
      shard.axis = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
      colon = rest.rfind(':');
    }
    if (colon == std::string::npos)
      return fail();
    name = rest.substr(0, colon);
    dimensionText = rest.substr(colon + 1);
  }
  unsigned long dimension = 0;
  bool dimensionOk =
      !dimensionText.empty() &&
      dimensionText.find_first_not_of("0123456789") == std::string::npos;
  if (dimensionOk) {
    errno = 0;
    dimension = std::strtoul(dimensionText.c_str(), nullptr, 10);
    dimensionOk = errno == 0;
  }
  if (name.empty() || !dimensionOk)
    return fail();
  if (equals == std::string::npos)
    warnings.push_back("--shard-input " + text +
                       " is deprecated: write NAME_OR_INDEX=DIM[:AXIS], '" +
                       name + "=" + dimensionText +
                       (shard.axis.empty() ? "" : ":" + shard.axis) + "'");
  shard.name = name;
  shard.byIndex =
      shard.name.find_first_not_of("0123456789") == std::string::npos;
  if (shard.byIndex)
    shard.index = std::strtoul(shard.name.c_str(), nullptr, 10);
  shard.dimension = dimension;
  return true;
}

/// Parses NAME=SIZE,NAME=SIZE,... (distinct names, sizes >= 1).
bool parseMesh(const std::string &text, std::vector<MeshAxis> &mesh,
               std::string &error) {
  mesh.clear();
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string field = text.substr(start, comma - start);
    size_t equals = field.find('=');
    unsigned long size = 0;
    if (equals == std::string::npos || equals == 0 ||
        !parseCount(field.substr(equals + 1), size)) {
      error = "--mesh needs NAME=SIZE,... with sizes >= 1 (e.g. dp=2,tp=2), "
              "not '" +
              text + "'";
      return false;
    }
    MeshAxis axis{field.substr(0, equals), static_cast<int64_t>(size)};
    for (const MeshAxis &other : mesh)
      if (other.name == axis.name) {
        error = "--mesh names the axis '" + axis.name + "' twice";
        return false;
      }
    mesh.push_back(axis);
    if (comma == std::string::npos)
      return true;
    start = comma + 1;
  }
}

} // namespace

bool parseOptions(int argc, char **argv, Options &options,
                  std::string &error) {
  std::vector<std::string> positional;
  bool optionsEnded = false;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (optionsEnded || argument.size() < 2 || argument[0] != '-') {
      positional.push_back(argument);
      continue;
    }
    if (argument == "--") {
      optionsEnded = true;
      continue;
    }
    if (argument == "--help" || argument == "-h") {
      options.help = true;
      continue;
    }
    if (argument == "--list") {
      options.list = true;
      continue;
    }
    if (argument == "--stats") {
      options.stats = true;
      continue;
    }
    if (argument == "--device-resident") {
      options.deviceResident = true;
      continue;
    }
    if (argument == "--all-ranks-write") {
      options.allRanksWrite = true;
      continue;
    }
    if (argument == "--profile-summary") {
      options.profileSummary = true;
      continue;
    }

    // The remaining options take a value, as "--opt VALUE" or "--opt=VALUE".
    std::string name = argument, value;
    size_t equals = argument.find('=');
    bool inlineValue = equals != std::string::npos;
    if (inlineValue) {
      name = argument.substr(0, equals);
      value = argument.substr(equals + 1);
    }
    if (name != "--function" && name != "--input" && name != "--output-dir" &&
        name != "--repeat" && name != "--device" && name != "--comm" &&
        name != "--shard-input" && name != "--profile-trace" &&
        name != "--profile" && name != "--mesh") {
      error = "unknown option '" + argument + "'";
      return false;
    }
    if (!inlineValue) {
      if (i + 1 >= argc) {
        error = "option '" + name + "' needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (name == "--function") {
      if (value.empty()) {
        error = "--function needs a non-empty name";
        return false;
      }
      options.functionName = value;
    } else if (name == "--input") {
      options.inputs.push_back(value);
    } else if (name == "--output-dir") {
      if (value.empty()) {
        error = "--output-dir needs a non-empty path";
        return false;
      }
      options.outputDir = value;
    } else if (name == "--device") {
      if (value != "cpu" && value != "cuda") {
        error = "--device must be 'cpu' or 'cuda', not '" + value + "'";
        return false;
      }
      options.device = value;
    } else if (name == "--comm") {
      if (value != "auto" && value != "mpi" && value != "gloo" &&
          value != "self") {
        error = "--comm must be 'auto', 'mpi', 'gloo' or 'self', not '" +
                value + "'";
        return false;
      }
      options.comm = value;
    } else if (name == "--profile-trace" || name == "--profile") {
      if (value.empty()) {
        error = name + " needs a non-empty path";
        return false;
      }
      if (name == "--profile")
        options.warnings.push_back(
            "--profile FILE is deprecated: write --profile-trace FILE "
            "(kiln-compile's --profile is the flag that makes a module "
            "profilable)");
      options.profilePath = value;
    } else if (name == "--mesh") {
      if (!parseMesh(value, options.mesh, error))
        return false;
    } else if (name == "--shard-input") {
      ShardSpec shard;
      if (!parseShard(value, shard, options.warnings, error))
        return false;
      options.shards.push_back(shard);
    } else if (!parseCount(value, options.repeat)) {
      error = "--repeat needs a positive integer, not '" + value + "'";
      return false;
    }
  }
  if (options.help)
    return true;
  if (positional.size() != 1) {
    error = positional.empty()
                ? "no module given"
                : "expected one module, got " +
                      std::to_string(positional.size()) + " arguments ('" +
                      positional[0] + "', '" + positional[1] + "', ...)";
    return false;
  }
  options.modulePath = positional[0];
  if (options.deviceResident && !options.repeat) {
    error = "--device-resident times the calls of --repeat; give --repeat N";
    return false;
  }
  return true;
}

const char *helpText() {
  return R"HELP(USAGE: kiln-run MODULE.kmod [options]

Loads a module compiled by kiln-compile, calls one of its functions once with
the given inputs, and prints the outputs.

OPTIONS:
  --function NAME   The function to call. May be omitted when the module has
                    exactly one function.
  --input VALUE     The next input of the function, in signature order; give
                    one per input. VALUE is either
                      - a .npy file (format 1.0 or 2.0, C order, dtype <f2,
                        <f4, <f8, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8 or
                        |b1) whose dtype and shape match the input exactly;
                        a bf16 input is read from a <f4 file, rounding to
                        nearest even, or bit for bit from the <V2 file
                        numpy writes for an ml_dtypes.bfloat16 array; or
                      - for a rank-0 input, a literal of its dtype: a
                        decimal integer, a number such as -2.5, 1e-3, inf or
                        nan for floats, or true, false, 1 or 0 for i1. An
                        argument that reads as a number, true or false is
                        taken as a literal rather than as a file name.
  --output-dir DIR  Save each output to DIR/NAME.npy instead of printing its
                    values, where NAME is the output's name in the signature,
                    or out<i> (i = output index) when it is unnamed, is not a
                    plain file name, or repeats an earlier one. DIR is created
                    if it does not exist. bf16 outputs are saved as <f4, which
                    holds them exactly.
  --repeat N        After the first call, call the function N more times and
                    print "time per call: median X us (min Y us, N runs)". The
                    time of a call includes allocating its outputs. The outputs
                    shown are those of the last call (on a GPU, a call the
                    runtime may run as a CUDA graph captured earlier).
  --device-resident With --repeat, for a CUDA module: copy the inputs to the
                    device once, before the timed calls, and leave each timed
                    call's outputs in device memory, so that the time per
                    call is the function's work on the device without the
                    copies in and out (the last call's outputs are copied to
                    the host to be shown, after the timing).
  --device DEVICE   cpu or cuda: require the module to be compiled for that
                    device (kiln-compile --target) and, for cuda, a working
                    CUDA driver and device before anything runs. Without it
                    the module runs where it was compiled for; a CUDA module
                    then needs the driver (libcuda.so.1) at its first call.
  --stats           After the calls print what they used. For a CPU module:
                    the most bytes the code's buffers held at once during
                    the calls (its intermediates; not the inputs and
                    outputs, nor oneDNN's and OpenMP's scratch), the bytes
                    still held after them (0 unless the code leaks) and
                    the allocations made, as "memory: peak N bytes ...".
                    For a CUDA module, the device's counters over all of
                    them: calls, kernel launches, stream waits,
                    device-to-host copies made by the compiled code (loop
                    predicates) and their bytes, driver allocations, memory
                    held, the largest device buffer (a function's arena)
                    and the while loops run on the device as CUDA graphs
                    (KILN_CUDA_GRAPHS=0 runs them as host loops). With
                    several ranks, each rank's own (see
                    --all-ranks-write).
  --comm MODE       How the ranks of a run reach each other, for modules
                    that use collectives (kiln.all_reduce, ...):
                      auto  (the default) MPI when started by mpirun (the
                            environment has OMPI_COMM_WORLD_SIZE or
                            PMIX_RANK), Gloo when started by kiln-launch
                            (it has KILN_WORLD_SIZE and KILN_STORE), and the
                            module uses collectives or --shard-input is
                            given; otherwise none, and a
                            module with collectives fails at its first one,
                            saying how many ranks to start it on;
                      mpi   always MPI (one rank outside mpirun);
                      gloo  ranks that meet through a store over Gloo:
                            KILN_RANK, KILN_WORLD_SIZE and KILN_STORE
                            (file:DIRECTORY or redis://HOST[:PORT]) say
                            which (one rank when none is set); from the
                            plug-in libkiln_comm_gloo.so;
                      self  a run of one rank, without MPI: collectives
                            over one rank are copies.
                    MPI comes from the plug-in libkiln_comm_mpi.so, found
                    in lib/kiln/ beside kiln-run's bin/, or where
                    KILN_COMM_MPI_PLUGIN points.
  --shard-input NAME_OR_INDEX=DIM[:AXIS]
                    Split an input between the ranks: every rank reads the
                    whole file given with --input and keeps its contiguous
                    block along dimension DIM, rank r the r-th of `size`
                    equal blocks, which must have the input's shape in the
                    signature. With AXIS, an axis of --mesh, the input is
                    split over that axis only: rank r keeps block
                    (r / stride) % n of n, n the axis's size and stride the
                    product of the sizes of the axes after it. The input is
                    named by its signature name or its index. Repeatable,
                    one per input. (The spelling NAME_OR_INDEX:DIM[:AXIS]
                    still works, with a warning.)
  --mesh NAME=SIZE,...
                    The ranks as a device mesh, laid out row-major (rank =
                    dp * 2 + tp for dp=2,tp=2), as the kiln.mesh annotation
                    of a function partitioned by kiln-partition names it;
                    the sizes must multiply to the number of ranks. Used by
                    --shard-input's AXIS.
  --all-ranks-write Every rank prints its outputs, each line prefixed
                    "rank R: ", or saves them as DIR/NAME.rankR.npy, and
                    writes its --profile-trace as FILE with ".rankR" before
                    the extension (trace.rank1.json). Without it only rank 0
                    prints or saves them, as usual.
  --profile-trace FILE
                    For a module compiled with kiln-compile --profile: time
                    the call, or with --repeat the N timed calls (not the
                    first, whose one-time costs would hide the others), and
                    write the regions they ran to FILE as a Chrome trace
                    (JSON; open it in ui.perfetto.dev or chrome://tracing):
                    one event per call ("call @f") and per fused loop nest,
                    oneDNN call and loop inside it, with its thread, start
                    and duration. A module compiled without --profile is an
                    error. (--profile FILE still works, with a warning.)
  --profile-summary For such a module: after the calls print the regions
                    that took the most time (at most 10, the rest summed on
                    one line), each with its self time (not counting the
                    regions it holds), its share of the time profiled, how
                    often it ran and its total time. The shares add up to
                    100%. Combines with --profile-trace.
  --list            Print the module's target and the signature of each
                    function, then exit without calling anything.
  --help, -h        Print this help and exit.

  Options taking a value also accept the form --option=VALUE. Values that
  name something and give it a value are written NAME=VALUE, as
  kiln-compile's --input-shape NAME=DIMS and --mesh NAME=SIZE are.

OUTPUT:
  One line per output, in signature order:
    NAME: DTYPE[SHAPE] = VALUES
  where VALUES are nested in brackets as numpy does (a bare value for rank 0),
  floats are printed with enough digits to read back the same value (9 for
  f32, 17 for f64, 5 for f16, 4 for bf16) and i1 values as true/false.
  With --output-dir, one line per saved file instead:
    NAME: DTYPE[SHAPE] saved to PATH
  --repeat's timing line and --profile-summary's table follow.

RUNNING ON SEVERAL RANKS:
  mpirun -n 4 kiln-run MODULE.kmod --input x.npy --shard-input x=0
  starts four processes that call the function together, each with its own
  inputs. A module partitioned over a mesh takes its inputs split the same
  way: mpirun -n 4 kiln-run step.kmod --mesh dp=2,tp=2 --input x.npy
  --input w.npy --shard-input x=0:dp --shard-input w=1:tp. Before calling,
  the ranks agree that every one of them loaded its inputs, so one rank's
  bad input stops all of them with an error instead of leaving the others
  waiting. Only rank 0 prints (outputs, --repeat
  timings, --list) unless --all-ranks-write is given; errors come from
  every rank, prefixed "rank R: ". When the ranks disagree on a collective
  (kind, dtype, count, groups), every rank reports it. A rank that crashes
  cannot report anything; mpirun then ends the others.

EXIT STATUS:
  0 on success; 1 if the module cannot be loaded, the function or an input is
  wrong, an output cannot be saved, or communication between ranks fails;
  2 for a malformed command line.
)HELP";
}

} // namespace run
} // namespace kiln
