//===- kiln-run.cpp - Run a function of a .kmod module ---------------------===//
//
// A thin driver over the runtime C API: load a module, turn arguments into
// input tensors, call, and print or save the outputs. All real checking is
// the runtime's; this file only adds file handling and presentation.
//
//===----------------------------------------------------------------------===//

#include "Inputs.h"
#include "Options.h"
#include "Outputs.h"
#include "TensorText.h"

#include "kiln/ProfileSummary.h"
#include "kiln/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace kiln::run;

namespace {

/// Owns the tensors of one call.
struct TensorList {
  std::vector<kiln_tensor_t *> tensors;
  explicit TensorList(size_t count = 0) : tensors(count, nullptr) {}
  TensorList(const TensorList &) = delete;
  TensorList &operator=(const TensorList &) = delete;
  ~TensorList() { clear(); }
  void clear() {
    for (kiln_tensor_t *&tensor : tensors) {
      kiln_tensor_release(tensor);
      tensor = nullptr;
    }
  }
};

struct ModuleHolder {
  kiln_module_t *module = nullptr;
  ~ModuleHolder() { kiln_module_release(module); }
};

/// "rank R: " in a run of several ranks, else empty: every error says
/// which rank reports it.
std::string rankPrefix;

int fail(const std::string &message) {
  // The runtime's communication errors name the rank already.
  bool named = message.compare(0, rankPrefix.size(), rankPrefix) == 0;
  std::fprintf(stderr, "kiln-run: error: %s%s\n",
               named ? "" : rankPrefix.c_str(), message.c_str());
  return 1;
}

/// Reports a status and frees it.
int fail(kiln_status_t status) {
  int result = fail(kiln_status_message(status));
  kiln_status_free(status);
  return result;
}

void listModule(const kiln_module_t *module) {
  std::printf("target: %s\n", kiln_module_target(module));
  for (size_t i = 0; i < kiln_module_function_count(module); ++i) {
    const kiln_function_t *function = kiln_module_function_at(module, i);
    std::string line = std::string(kiln_function_name(function)) + "(";
    for (size_t j = 0; j < kiln_function_input_count(function); ++j)
      line += (j ? ", " : "") +
              formatSignature(*kiln_function_input(function, j));
    line += ") -> (";
    for (size_t j = 0; j < kiln_function_output_count(function); ++j)
      line += (j ? ", " : "") +
              formatSignature(*kiln_function_output(function, j));
    std::printf("%s)\n", line.c_str());
  }
}

/// Picks the function named by --function, or the module's only one.
bool selectFunction(const kiln_module_t *module, const std::string &name,
                    const kiln_function_t **out, std::string &error) {
  if (!name.empty()) {
    kiln_status_t status = kiln_module_function_lookup(module, name.c_str(), out);
    if (!status)
      return true;
    error = kiln_status_message(status);
    kiln_status_free(status);
    return false;
  }
  size_t count = kiln_module_function_count(module);
  if (count == 1) {
    *out = kiln_module_function_at(module, 0);
    return true;
  }
  error = "the module has " + std::to_string(count) +
          " functions; choose one with --function (";
  for (size_t i = 0; i < count; ++i)
    error += (i ? ", " : "") +
             std::string(kiln_function_name(kiln_module_function_at(module, i)));
  error += ")";
  return false;
}

/// True when mpirun started this process (OpenMPI's or PMIx's variables).
bool startedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK");
}

/// True when kiln-launch started this process: a rank of a run whose ranks
/// meet through a store (the Gloo communicator).
bool startedByKilnLaunch() {
  return std::getenv("KILN_WORLD_SIZE") && std::getenv("KILN_STORE");
}

/// The rank mpirun or kiln-launch gave this process; 0 outside them.
int64_t launcherRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "KILN_RANK"})
    if (const char *value = std::getenv(name))
      return std::strtoll(value, nullptr, 10);
  return 0;
}

/// Owns the communicator. Ranks leave together: each one's output is out
/// before any of them exits, since mpirun ends the others as soon as one
/// exits with an error. Every rank gets here, whether its call succeeded
/// or not, because errors of the call reach all ranks alike.
struct CommHolder {
  kiln_comm_t *comm = nullptr;
  ~CommHolder() {
    if (!comm)
      return;
    std::fflush(stdout);
    std::fflush(stderr);
    kiln_status_free(kiln_comm_barrier(comm));
    kiln_comm_release(comm);
  }
};

/// Creates the communicator --comm asks for, or none (NULL): auto means MPI
/// under mpirun, Gloo under kiln-launch, when the module uses collectives or
/// an input is sharded.
kiln_status_t makeComm(const Options &options, const kiln_module_t *module,
                       kiln_comm_t **out) {
  *out = nullptr;
  if (options.comm == "self")
    return kiln_comm_create_self(out);
  if (options.comm == "gloo")
    return kiln_comm_create_gloo(out);
  bool needed =
      kiln_module_uses_collectives(module) || !options.shards.empty();
  if (options.comm == "auto" && needed && startedByKilnLaunch())
    return kiln_comm_create_gloo(out);
  bool wanted = options.comm == "mpi" || (startedByMpirun() && needed);
  return wanted ? kiln_comm_create_mpi(out) : nullptr;
}

/// The --shard-input of each input (NULL where it has none), resolving
/// names and indices against the function's inputs.
bool resolveShards(const kiln_function_t *function, const Options &options,
                   std::vector<const ShardSpec *> &byInput,
                   std::string &error) {
  size_t count = kiln_function_input_count(function);
  byInput.assign(count, nullptr);
  std::string name = kiln_function_name(function);
  for (const ShardSpec &shard : options.shards) {
    size_t index = shard.index;
    if (!shard.byIndex) {
      index = count;
      for (size_t i = 0; i < count; ++i)
        if (shard.name == kiln_function_input(function, i)->name)
          index = i;
    }
    if (index >= count) {
      std::string known;
      for (size_t i = 0; i < count; ++i) {
        const char *input = kiln_function_input(function, i)->name;
        known +=
            (i ? ", " : "") + (*input ? std::string(input) : std::to_string(i));
      }
      error = "--shard-input " + shard.name + "=" +
              std::to_string(shard.dimension) +
              (shard.axis.empty() ? "" : ":" + shard.axis) + ": function '" +
              name +
              "' has no input " +
              (shard.byIndex ? shard.name : "named '" + shard.name + "'") +
              " (its inputs: " + known + ")";
      return false;
    }
    if (byInput[index]) {
      error = "--shard-input names input " + std::to_string(index) +
              " of function '" + name + "' twice";
      return false;
    }
    byInput[index] = &shard;
  }
  return true;
}

/// Narrows `shard` (this rank's block over all `size` ranks) to the blocks
/// of mesh axis `axis`: block (rank / stride) % n of n.
bool placeOnMeshAxis(const std::vector<MeshAxis> &mesh, const std::string &axis,
                     int64_t size, InputShard &shard, std::string &error) {
  if (mesh.empty()) {
    error = "--shard-input splits over the mesh axis '" + axis +
            "', but no --mesh was given";
    return false;
  }
  int64_t ranks = 1;
  for (const MeshAxis &a : mesh)
    ranks *= a.size;
  if (ranks != size) {
    error = "--mesh has " + std::to_string(ranks) + " ranks, but the run has " +
            std::to_string(size);
    return false;
  }
  int64_t stride = 1;
  for (size_t a = mesh.size(); a-- > 0;) {
    if (mesh[a].name == axis) {
      shard.rank = (shard.rank / stride) % mesh[a].size;
      shard.size = mesh[a].size;
      return true;
    }
    stride *= mesh[a].size;
  }
  std::string known;
  for (const MeshAxis &a : mesh)
    known += (known.empty() ? "" : ", ") + a.name;
  error = "--shard-input names the mesh axis '" + axis +
          "', which --mesh does not have (its axes: " + known + ")";
  return false;
}

/// Selects the function and makes its inputs; this rank's part of the
/// preparation that all ranks must agree succeeded.
bool prepareCall(const kiln_module_t *module, const Options &options,
                 int64_t rank, int64_t size, const kiln_function_t **function,
                 TensorList &inputs, std::string &error) {
  if (!selectFunction(module, options.functionName, function, error))
    return false;
  const std::string name = kiln_function_name(*function);
  size_t inputCount = kiln_function_input_count(*function);
  if (options.inputs.size() != inputCount) {
    error = "function '" + name + "' takes " + std::to_string(inputCount) +
            " input" + (inputCount == 1 ? "" : "s") + " but " +
            std::to_string(options.inputs.size()) + " --input " +
            (options.inputs.size() == 1 ? "was" : "were") + " given";
    return false;
  }
  std::vector<const ShardSpec *> shards;
  if (!resolveShards(*function, options, shards, error))
    return false;
  inputs.tensors.assign(inputCount, nullptr);
  for (size_t i = 0; i < inputCount; ++i) {
    InputShard shard;
    if (shards[i]) {
      shard.dimension = shards[i]->dimension;
      shard.rank = rank;
      shard.size = size;
      if (!shards[i]->axis.empty() &&
          !placeOnMeshAxis(options.mesh, shards[i]->axis, size, shard, error))
        return false;
    }
    if (!makeInput(*function, i, options.inputs[i], &inputs.tensors[i], error,
                   shards[i] ? &shard : nullptr)) {
      error = "function '" + name + "': " + error;
      return false;
    }
  }
  return true;
}

/// Prints the outputs, or saves them under \p outputDir with \p fileSuffix
/// before ".npy"; every printed line starts with \p linePrefix.
int emitOutputs(const kiln_function_t *function, const TensorList &outputs,
                const std::string &outputDir, const std::string &linePrefix,
                const std::string &fileSuffix) {
  std::vector<std::string> stems;
  if (!outputDir.empty()) {
    std::string error;
    if (!ensureDirectory(outputDir, error))
      return fail(error);
    stems = outputFileStems(function);
  }
  for (size_t i = 0; i < outputs.tensors.size(); ++i) {
    kiln_tensor_t *tensor = outputs.tensors[i];
    std::string heading =
        outputDisplayName(function, i) + ": " +
        formatType(kiln_tensor_dtype(tensor), kiln_tensor_rank(tensor),
                   kiln_tensor_shape(tensor));
    if (outputDir.empty()) {
      std::printf("%s%s = %s\n", linePrefix.c_str(), heading.c_str(),
                  formatValues(tensor).c_str());
      continue;
    }
    std::string path = outputDir + "/" + stems[i] + fileSuffix + ".npy";
    std::string error;
    if (!saveTensor(path, tensor, error))
      return fail(error);
    std::printf("%s%s saved to %s\n", linePrefix.c_str(), heading.c_str(),
                path.c_str());
  }
  return 0;
}

/// Prints what the module's CUDA device did over all calls (--stats).
int printCudaStats(const kiln_module_t *module) {
  kiln_cuda_stats_t stats;
  if (kiln_status_t status =
          kiln_module_cuda_stats(module, &stats, sizeof(stats)))
    return fail(status);
  std::printf("cuda: %llu calls, %llu kernel launches, %llu stream waits, "
              "%llu device-to-host copies (%llu bytes), %llu driver "
              "allocations, %llu bytes held, largest device buffer %llu "
              "bytes, %llu loops as graphs, %llu calls as graphs (%llu "
              "captured, holding %llu bytes), %llu constants on the "
              "device (%llu bytes), %llu call sites tuned\n",
              (unsigned long long)stats.calls,
              (unsigned long long)stats.kernel_launches,
              (unsigned long long)stats.stream_syncs,
              (unsigned long long)stats.device_to_host_copies,
              (unsigned long long)stats.device_to_host_bytes,
              (unsigned long long)stats.driver_allocations,
              (unsigned long long)stats.held_bytes,
              (unsigned long long)stats.largest_device_allocation,
              (unsigned long long)stats.graph_loops,
              (unsigned long long)stats.graph_calls,
              (unsigned long long)stats.graph_captures,
              (unsigned long long)stats.graph_bytes,
              (unsigned long long)stats.constant_uploads,
              (unsigned long long)stats.constant_bytes,
              (unsigned long long)stats.tuned_sites);
  return 0;
}

/// Prints --stats' line for a CPU module: the calls' peak of the code's
/// buffers, above what was held before them, and what they left held.
void printMemoryStats(const std::string &linePrefix, uint64_t heldBefore) {
  kiln_memory_stats_t stats;
  kiln_memory_stats(&stats);
  uint64_t peak = stats.peak_bytes - std::min(stats.peak_bytes, heldBefore);
  uint64_t left = stats.held_bytes - std::min(stats.held_bytes, heldBefore);
  std::printf("%smemory: peak %llu bytes (%.2f MiB) held by the code's "
              "buffers, %llu bytes left held after the calls, %llu "
              "allocations\n",
              linePrefix.c_str(), (unsigned long long)peak,
              double(peak) / (1024.0 * 1024.0), (unsigned long long)left,
              (unsigned long long)stats.allocations);
}

/// Calls \p function, with \p comm when there is one.
kiln_status_t call(const kiln_function_t *function, kiln_comm_t *comm,
                   const TensorList &inputs, TensorList &outputs) {
  if (comm)
    return kiln_function_call_with_comm(
        function, comm, inputs.tensors.data(), inputs.tensors.size(),
        outputs.tensors.data(), outputs.tensors.size());
  return kiln_function_call(function, inputs.tensors.data(),
                            inputs.tensors.size(), outputs.tensors.data(),
                            outputs.tensors.size());
}

/// Calls the function `repeat` more times and sets \p summary to "time
/// per call: ...". With \p resident (a CUDA module's function), the calls
/// take device copies of \p inputs, made once, and leave their outputs on
/// the device. The last call's outputs replace \p shown (copied to the
/// host when on the device), so that what is shown comes from a call
/// that repeats the first (on the GPU, a CUDA graph launched again).
int timeCalls(const kiln_module_t *module, const kiln_function_t *function,
              kiln_comm_t *comm, const TensorList &inputs, unsigned long repeat,
              bool resident, std::string &summary, TensorList &shown) {
  TensorList outputs(kiln_function_output_count(function));
  TensorList onDevice(resident ? inputs.tensors.size() : 0);
  for (size_t i = 0; i < onDevice.tensors.size(); ++i)
    if (kiln_status_t status = kiln_tensor_to_device(
            module, inputs.tensors[i], &onDevice.tensors[i]))
      return fail(status);
  // --stats: the calls' peak, from what the process's modules hold now.
  kiln_memory_reset_peak();
  std::vector<double> micros;
  micros.reserve(repeat);
  for (unsigned long i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    kiln_status_t status =
        resident ? kiln_function_call_on_device(
                       function, onDevice.tensors.data(),
                       onDevice.tensors.size(), outputs.tensors.data(),
                       outputs.tensors.size())
                 : call(function, comm, inputs, outputs);
    auto stop = std::chrono::steady_clock::now();
    if (status)
      return fail(status);
    if (i + 1 < repeat)
      outputs.clear();
    micros.push_back(
        std::chrono::duration<double, std::micro>(stop - start).count());
  }
  for (size_t i = 0; i < outputs.tensors.size(); ++i) {
    kiln_tensor_t *last = outputs.tensors[i];
    if (resident) {
      if (kiln_status_t status = kiln_tensor_to_host(last, &last))
        return fail(status);
    } else {
      outputs.tensors[i] = nullptr;
    }
    kiln_tensor_release(shown.tensors[i]);
    shown.tensors[i] = last;
  }
  std::sort(micros.begin(), micros.end());
  size_t middle = micros.size() / 2;
  double median = micros.size() % 2 ? micros[middle]
                                    : (micros[middle - 1] + micros[middle]) / 2;
  char text[128];
  std::snprintf(text, sizeof(text),
                "time per call: median %.3f us (min %.3f us, %lu runs%s)",
                median, micros.front(), repeat,
                resident ? ", inputs and outputs on the device" : "");
  summary = text;
  return 0;
}

/// `path` with `suffix` inserted before its extension, as the outputs of
/// --all-ranks-write are named: trace.json becomes trace.rank1.json.
std::string withSuffix(const std::string &path, const std::string &suffix) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || dot == 0 ||
      (slash != std::string::npos && (dot < slash || dot == slash + 1)))
    return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

/// Writes the trace of --profile-trace (each rank its own file, named with
/// `fileSuffix`) and prints the table of --profile-summary, as asked.
int reportProfile(const Options &options, const std::string &linePrefix,
                  const std::string &fileSuffix) {
  if (!options.profilePath.empty())
    if (kiln_status_t status = kiln_profile_write_trace(
            withSuffix(options.profilePath, fileSuffix).c_str()))
      return fail(status);
  if (!options.profileSummary)
    return 0;
  std::string table =
      kiln::profile::formatSummary(kiln::profile::collectedRegions(), 10);
  for (size_t start = 0; start < table.size();) {
    size_t end = table.find('\n', start);
    std::printf("%s%s\n", linePrefix.c_str(),
                table.substr(start, end - start).c_str());
    start = end + 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, options, error)) {
    std::fprintf(stderr,
                 "kiln-run: error: %s\nRun 'kiln-run --help' for usage.\n",
                 error.c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(helpText(), stdout);
    return 0;
  }

  bool launched = startedByMpirun() || startedByKilnLaunch();
  int64_t rank = launcherRank(), size = 1;
  if (launched)
    rankPrefix = "rank " + std::to_string(rank) + ": ";
  // Deprecated spellings still work; rank 0 says how to write them now.
  if (rank == 0)
    for (const std::string &warning : options.warnings)
      std::fprintf(stderr, "kiln-run: warning: %s\n", warning.c_str());

  ModuleHolder holder;
  kiln_status_t loaded =
      options.device.empty()
          ? kiln_module_load_file(options.modulePath.c_str(), &holder.module)
          : kiln_module_load_file_on(options.device == "cuda"
                                         ? KILN_DEVICE_CUDA
                                         : KILN_DEVICE_CPU,
                                     options.modulePath.c_str(),
                                     &holder.module);
  if (loaded)
    return fail(loaded);
  if (options.list) {
    if (rank == 0 || options.allRanksWrite)
      listModule(holder.module);
    return 0;
  }

  if (options.deviceResident &&
      kiln_module_device(holder.module) != KILN_DEVICE_CUDA)
    return fail("--device-resident keeps tensors in CUDA device memory, but '" +
                options.modulePath + "' was compiled for " +
                kiln_device_name(kiln_module_device(holder.module)) +
                " (kiln-compile --target=cuda)");

  bool profiling = !options.profilePath.empty() || options.profileSummary;
  if (profiling && !kiln_module_profile_region_count(holder.module))
    return fail("'" + options.modulePath +
                "' was compiled without --profile, so it has no regions to "
                "time; recompile it with 'kiln-compile --profile' for "
                "kiln-run --profile-trace or --profile-summary");

  CommHolder comm;
  if (kiln_status_t status = makeComm(options, holder.module, &comm.comm))
    return fail(status);
  if (options.deviceResident && comm.comm)
    return fail("--device-resident times calls without a communicator; "
                "this run has one (a module with collectives, or mpirun)");
  if (comm.comm) {
    rank = kiln_comm_rank(comm.comm);
    size = kiln_comm_size(comm.comm);
    if (launched || size > 1)
      rankPrefix = "rank " + std::to_string(rank) + ": ";
  }

  // Every rank prepares its call; then all of them agree that all
  // succeeded, so that one rank's bad input stops every rank instead of
  // leaving the others waiting in the first collective.
  const kiln_function_t *function = nullptr;
  TensorList inputs;
  bool prepared =
      prepareCall(holder.module, options, rank, size, &function, inputs, error);
  if (comm.comm) {
    int allPrepared = 0;
    if (kiln_status_t status =
            kiln_comm_all_ok(comm.comm, prepared, &allPrepared))
      return fail(status);
    if (prepared && !allPrepared)
      return fail("another rank could not prepare its call (its error says "
                  "why)");
  }
  if (!prepared)
    return fail(error);

  TensorList outputs(kiln_function_output_count(function));
  // --stats: the calls' peak, from what the process's modules hold now.
  kiln_memory_reset_peak();
  kiln_memory_stats_t before;
  kiln_memory_stats(&before);
  uint64_t heldBefore = before.held_bytes;
  // The profile covers the calls that are timed, the --repeat ones, as
  // the first call's one-time costs (oneDNN creating its kernels) would
  // hide how the function runs; without --repeat, the one call.
  kiln_profile_set_enabled(profiling && !options.repeat);
  if (kiln_status_t status = call(function, comm.comm, inputs, outputs))
    return fail(status);
  kiln_profile_set_enabled(profiling);
  // The timed calls come before anything is written, so that a rank that
  // fails to save its outputs leaves no other rank calling without it.
  std::string timing;
  if (options.repeat)
    if (int result =
            timeCalls(holder.module, function, comm.comm, inputs,
                      options.repeat, options.deviceResident, timing, outputs))
      return result;
  kiln_profile_set_enabled(0);
  if (rank != 0 && !options.allRanksWrite)
    return 0;
  std::string linePrefix =
      options.allRanksWrite ? "rank " + std::to_string(rank) + ": " : "";
  std::string fileSuffix =
      options.allRanksWrite ? ".rank" + std::to_string(rank) : "";
  if (int result = emitOutputs(function, outputs, options.outputDir,
                               linePrefix, fileSuffix))
    return result;
  if (!timing.empty())
    std::printf("%s%s\n", linePrefix.c_str(), timing.c_str());
  if (profiling)
    if (int result = reportProfile(options, linePrefix, fileSuffix))
      return result;
  if (options.stats) {
    if (kiln_module_device(holder.module) == KILN_DEVICE_CUDA)
      return printCudaStats(holder.module);
    printMemoryStats(linePrefix, heldBefore);
  }
  return 0;
}
