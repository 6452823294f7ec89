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

#include "kiln/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
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

int fail(const std::string &message) {
  std::fprintf(stderr, "kiln-run: error: %s\n", message.c_str());
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

int emitOutputs(const kiln_function_t *function, const TensorList &outputs,
                const std::string &outputDir) {
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
      std::printf("%s = %s\n", heading.c_str(), formatValues(tensor).c_str());
      continue;
    }
    std::string path = outputDir + "/" + stems[i] + ".npy";
    std::string error;
    if (!saveTensor(path, tensor, error))
      return fail(error);
    std::printf("%s saved to %s\n", heading.c_str(), path.c_str());
  }
  return 0;
}

/// Prints what the module's CUDA device did over all calls (--stats).
int printCudaStats(const kiln_module_t *module) {
  kiln_cuda_stats_t stats;
  if (kiln_status_t status = kiln_module_cuda_stats(module, &stats))
    return fail(status);
  std::printf("cuda: %llu calls, %llu kernel launches, %llu stream waits, "
              "%llu device-to-host copies (%llu bytes), %llu driver "
              "allocations, %llu bytes held, largest device buffer %llu "
              "bytes\n",
              (unsigned long long)stats.calls,
              (unsigned long long)stats.kernel_launches,
              (unsigned long long)stats.stream_syncs,
              (unsigned long long)stats.device_to_host_copies,
              (unsigned long long)stats.device_to_host_bytes,
              (unsigned long long)stats.driver_allocations,
              (unsigned long long)stats.held_bytes,
              (unsigned long long)stats.largest_device_allocation);
  return 0;
}

/// Calls the function `repeat` more times and prints timing statistics.
int timeCalls(const kiln_function_t *function, const TensorList &inputs,
              unsigned long repeat) {
  TensorList outputs(kiln_function_output_count(function));
  std::vector<double> micros;
  micros.reserve(repeat);
  for (unsigned long i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    kiln_status_t status =
        kiln_function_call(function, inputs.tensors.data(),
                           inputs.tensors.size(), outputs.tensors.data(),
                           outputs.tensors.size());
    auto stop = std::chrono::steady_clock::now();
    if (status)
      return fail(status);
    outputs.clear();
    micros.push_back(
        std::chrono::duration<double, std::micro>(stop - start).count());
  }
  std::sort(micros.begin(), micros.end());
  size_t middle = micros.size() / 2;
  double median = micros.size() % 2 ? micros[middle]
                                    : (micros[middle - 1] + micros[middle]) / 2;
  std::printf("time per call: median %.3f us (min %.3f us, %lu runs)\n",
              median, micros.front(), repeat);
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
    listModule(holder.module);
    return 0;
  }

  const kiln_function_t *function = nullptr;
  if (!selectFunction(holder.module, options.functionName, &function, error))
    return fail(error);
  const std::string name = kiln_function_name(function);
  size_t inputCount = kiln_function_input_count(function);
  if (options.inputs.size() != inputCount)
    return fail("function '" + name + "' takes " + std::to_string(inputCount) +
                " input" + (inputCount == 1 ? "" : "s") + " but " +
                std::to_string(options.inputs.size()) + " --input " +
                (options.inputs.size() == 1 ? "was" : "were") + " given");

  TensorList inputs(inputCount);
  for (size_t i = 0; i < inputCount; ++i)
    if (!makeInput(function, i, options.inputs[i], &inputs.tensors[i], error))
      return fail("function '" + name + "': " + error);

  TensorList outputs(kiln_function_output_count(function));
  if (kiln_status_t status = kiln_function_call(
          function, inputs.tensors.data(), inputs.tensors.size(),
          outputs.tensors.data(), outputs.tensors.size()))
    return fail(status);
  if (int result = emitOutputs(function, outputs, options.outputDir))
    return result;
  if (options.repeat)
    if (int result = timeCalls(function, inputs, options.repeat))
      return result;
  if (options.stats && kiln_module_device(holder.module) == KILN_DEVICE_CUDA)
    return printCudaStats(holder.module);
  return 0;
}
