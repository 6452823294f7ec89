//===- Function.cpp - Inspecting and calling functions ---------------------===//
//
// kiln_function_call is the only place where caller data meets compiled
// code. Compiled code trusts its arguments completely, so everything the
// signature promises - count, dtype and exact shape of every input - is
// checked here first, and outputs are allocated here to the signature.
//
//===----------------------------------------------------------------------===//

#include "Module.h"
#include "Status.h"
#include "Tensor.h"

#include "comm/CollectiveCall.h"
#include "profile/Profiler.h"

#include <new>

using kiln::runtime::makeStatus;

namespace {

std::string formatShape(const int64_t *shape, size_t rank) {
  std::string text = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

/// Names an argument for diagnostics, e.g. "input 1 ('x')".
std::string describe(const char *role, size_t index,
                     const kiln_tensor_signature_t &signature) {
  std::string text = std::string(role) + " " + std::to_string(index);
  if (*signature.name)
    text += std::string(" ('") + signature.name + "')";
  return text;
}

std::string plural(size_t count, const char *noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

kiln_status_t checkInput(const kiln_function_t &function, size_t index,
                         const kiln_tensor_t *tensor) {
  const kiln_tensor_signature_t &expected = function.inputs[index];
  std::string prefix = "function '" + function.signature.name + "': " +
                       describe("input", index, expected);
  if (!tensor)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, prefix + " is NULL");
  if (tensor->device && !function.cuda)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      prefix + " is in CUDA device memory, but the function "
                               "was compiled for the CPU and takes host "
                               "tensors (kiln_tensor_to_host copies it)");
  if (tensor->device && !function.cuda->sharesMemoryWith(*tensor->device))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      prefix + " is in the memory of another CUDA device "
                               "than the function's");
  if (tensor->dtype != expected.dtype)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      prefix + " has dtype " + kiln_dtype_name(tensor->dtype) +
                          " but the signature expects " +
                          kiln_dtype_name(expected.dtype));
  bool sameShape = tensor->shape.size() == expected.rank;
  for (size_t axis = 0; sameShape && axis < expected.rank; ++axis)
    sameShape = tensor->shape[axis] == expected.shape[axis];
  if (!sameShape)
    return makeStatus(
        KILN_STATUS_INVALID_ARGUMENT,
        prefix + " has shape " +
            formatShape(tensor->shape.data(), tensor->shape.size()) +
            " but the signature expects " +
            formatShape(expected.shape, expected.rank));
  return nullptr;
}

/// Owns the outputs of a call until they are handed to the caller.
struct OutputTensors {
  std::vector<kiln_tensor_t *> tensors;
  ~OutputTensors() {
    for (kiln_tensor_t *tensor : tensors)
      kiln_tensor_release(tensor);
  }
};

/// Times a call of a profiled function as its "call @name" region, which
/// holds the regions its code times (kiln/ProfileAbi.h).
struct ProfiledCall {
  int32_t region;
  explicit ProfiledCall(int32_t region) : region(region) {
    if (region >= 0)
      kiln::runtime::profile::Profiler::begin(region);
  }
  ~ProfiledCall() {
    if (region >= 0)
      kiln::runtime::profile::Profiler::end(region);
  }
};

/// Runs the code of a CPU or CUDA function on \p args.
kiln_status_t runEntry(const kiln_function_t &function,
                       kiln_tensor_t *const *inputs, size_t inputCount,
                       const OutputTensors &results,
                       std::vector<void *> &args) {
  ProfiledCall profiled(function.profileRegion);
  if (!function.cuda) {
    function.entry(args.data());
    return nullptr;
  }
  std::vector<kiln::runtime::cuda::CallBuffer> in, out;
  for (size_t i = 0; i < inputCount; ++i)
    in.push_back({inputs[i]->data, kiln_tensor_byte_size(inputs[i]),
                  inputs[i]->device != nullptr});
  for (kiln_tensor_t *tensor : results.tensors)
    out.push_back({tensor->data, kiln_tensor_byte_size(tensor),
                   tensor->device != nullptr});
  kiln_status_t status = function.cuda->call(function.entry, in, out);
  if (status && status->code != KILN_STATUS_OUT_OF_MEMORY)
    status->message =
        "function '" + function.signature.name + "': " + status->message;
  return status;
}

/// Returns \p status, a failure before the code ran. A function with
/// collectives called with a communicator first tells the other ranks,
/// which will meet this one at their first collective, that its call
/// failed, so that they fail too instead of waiting for it.
kiln_status_t refuse(const kiln_function_t &function, kiln_comm *comm,
                     kiln_status_t status) {
  if (!function.collectives || !comm)
    return status;
  try {
    kiln::runtime::comm::CollectiveCall call(comm, function.signature.name);
    call.failBeforeRunning(kiln_status_message(status));
    kiln_status_free(call.finish());
  } catch (const std::bad_alloc &) {
  }
  return status;
}

/// Whether the elements of \p a and \p b share a byte.
bool overlaps(const kiln_tensor_t *a, const kiln_tensor_t *b) {
  auto begin = [](const kiln_tensor_t *t) {
    return reinterpret_cast<uintptr_t>(t->data);
  };
  return a->byteSize && b->byteSize && begin(a) < begin(b) + b->byteSize &&
         begin(b) < begin(a) + a->byteSize;
}

/// A donated input (an output's tied_input) is overwritten while the code
/// still reads the others, so it must not share memory with any of them.
kiln_status_t checkDonatedInputs(const kiln_function_t &function,
                                 kiln_tensor_t *const *inputs) {
  for (size_t k = 0; k < function.outputs.size(); ++k) {
    int64_t donated = function.outputs[k].tied_input;
    if (donated < 0)
      continue;
    for (size_t j = 0; j < function.inputs.size(); ++j)
      if (j != static_cast<size_t>(donated) &&
          overlaps(inputs[donated], inputs[j]))
        return makeStatus(
            KILN_STATUS_INVALID_ARGUMENT,
            "function '" + function.signature.name + "': " +
                describe("input", donated, function.inputs[donated]) +
                " is donated (output " + std::to_string(k) +
                " is written into it) but shares memory with " +
                describe("input", j, function.inputs[j]) +
                "; pass a copy of one of them");
  }
  return nullptr;
}

kiln_status_t checkArguments(const kiln_function_t &function,
                             kiln_tensor_t *const *inputs, size_t inputCount,
                             kiln_tensor_t **outputs, size_t outputCount) {
  const std::string &name = function.signature.name;
  if (inputCount != function.inputs.size())
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "function '" + name + "' expects " +
                          plural(function.inputs.size(), "input") +
                          " but got " + std::to_string(inputCount));
  if (outputCount != function.outputs.size())
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "function '" + name + "' produces " +
                          plural(function.outputs.size(), "output") +
                          " but the outputs array holds " +
                          std::to_string(outputCount));
  if (inputCount != 0 && !inputs)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "function '" + name + "': the inputs array is NULL");
  if (outputCount != 0 && !outputs)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "function '" + name + "': the outputs array is NULL");
  for (size_t i = 0; i < inputCount; ++i)
    if (kiln_status_t status = checkInput(function, i, inputs[i]))
      return status;
  return checkDonatedInputs(function, inputs);
}

/// \p comm is NULL for kiln_function_call; \p outputsOnDevice leaves the
/// outputs of a CUDA function in its device's memory.
kiln_status_t callFunction(const kiln_function_t &function, kiln_comm *comm,
                           kiln_tensor_t *const *inputs, size_t inputCount,
                           kiln_tensor_t **outputs, size_t outputCount,
                           bool outputsOnDevice = false) {
  const std::string &name = function.signature.name;
  if (kiln_status_t status =
          checkArguments(function, inputs, inputCount, outputs, outputCount))
    return refuse(function, comm, status);

  std::vector<void *> args;
  args.reserve(inputCount + outputCount);
  for (size_t i = 0; i < inputCount; ++i)
    args.push_back(inputs[i]->data);
  OutputTensors results;
  results.tensors.reserve(outputCount);
  for (const kiln_tensor_signature_t &signature : function.outputs) {
    kiln_tensor_t *tensor = nullptr;
    // An output written into a donated input views that input's memory.
    if (signature.tied_input >= 0) {
      if (kiln_status_t status = kiln_tensor_wrap(
              signature.dtype, signature.rank, signature.shape,
              inputs[signature.tied_input]->data, &tensor))
        return refuse(function, comm, status);
      results.tensors.push_back(tensor);
      args.push_back(tensor->data);
      continue;
    }
    if (kiln_status_t status =
            outputsOnDevice
                ? kiln::runtime::createDeviceTensor(
                      "kiln_function_call_on_device", function.cuda,
                      signature.dtype, signature.rank, signature.shape,
                      nullptr, &tensor)
                : kiln::runtime::createTensor(signature.dtype, signature.rank,
                                              signature.shape, nullptr,
                                              /*zeroFill=*/false, &tensor))
      return refuse(function, comm, status);
    results.tensors.push_back(tensor);
    args.push_back(tensor->data);
  }

  if (!function.collectives) {
    if (kiln_status_t status =
            runEntry(function, inputs, inputCount, results, args))
      return status;
  } else {
    // A CUDA module's collectives exchange device buffers on its stream,
    // which exists once the device is open.
    void *stream = nullptr;
    if (function.cuda) {
      if (kiln_status_t status = function.cuda->open()) {
        status->message = "function '" + name + "': " + status->message;
        return refuse(function, comm, status);
      }
      stream = function.cuda->stream();
    }
    kiln::runtime::comm::CollectiveCall call(comm, name, stream);
    kiln_status_t status =
        runEntry(function, inputs, inputCount, results, args);
    // Even after a device failure the other ranks must learn that this
    // one returned.
    kiln_status_t communication = call.finish();
    if (status) {
      kiln_status_free(communication);
      return status;
    }
    if (communication)
      return communication;
  }

  for (size_t i = 0; i < outputCount; ++i)
    outputs[i] = results.tensors[i];
  results.tensors.clear();
  return nullptr;
}

/// What the call entry points share: every output set to NULL first, NULL
/// arguments (\p given false) refused with \p refusal, and running out of
/// memory returned as a status.
template <typename Call>
kiln_status_t enter(bool given, const char *refusal, kiln_tensor_t **outputs,
                    size_t outputCount, const Call &call) {
  if (outputs)
    for (size_t i = 0; i < outputCount; ++i)
      outputs[i] = nullptr;
  if (!given)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, refusal);
  try {
    return call();
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

} // namespace

extern "C" {

const char *kiln_function_name(const kiln_function_t *function) {
  return function ? function->signature.name.c_str() : nullptr;
}

size_t kiln_function_input_count(const kiln_function_t *function) {
  return function ? function->inputs.size() : 0;
}

size_t kiln_function_output_count(const kiln_function_t *function) {
  return function ? function->outputs.size() : 0;
}

const kiln_tensor_signature_t *
kiln_function_input(const kiln_function_t *function, size_t index) {
  if (!function || index >= function->inputs.size())
    return nullptr;
  return &function->inputs[index];
}

const kiln_tensor_signature_t *
kiln_function_output(const kiln_function_t *function, size_t index) {
  if (!function || index >= function->outputs.size())
    return nullptr;
  return &function->outputs[index];
}

kiln_status_t kiln_function_call(const kiln_function_t *function,
                                 kiln_tensor_t *const *inputs,
                                 size_t inputCount, kiln_tensor_t **outputs,
                                 size_t outputCount) {
  return enter(function, "kiln_function_call: function is NULL", outputs,
               outputCount, [&] {
                 return callFunction(*function, nullptr, inputs, inputCount,
                                     outputs, outputCount);
               });
}

kiln_status_t kiln_function_call_on_device(const kiln_function_t *function,
                                           kiln_tensor_t *const *inputs,
                                           size_t inputCount,
                                           kiln_tensor_t **outputs,
                                           size_t outputCount) {
  return enter(function, "kiln_function_call_on_device: function is NULL",
               outputs, outputCount, [&]() -> kiln_status_t {
                 if (!function->cuda)
                   return makeStatus(
                       KILN_STATUS_INVALID_ARGUMENT,
                       "kiln_function_call_on_device: function '" +
                           function->signature.name +
                           "' was compiled for the CPU; its outputs are host "
                           "tensors (kiln_function_call)");
                 return callFunction(*function, nullptr, inputs, inputCount,
                                     outputs, outputCount,
                                     /*outputsOnDevice=*/true);
               });
}

kiln_status_t
kiln_function_call_with_comm(const kiln_function_t *function, kiln_comm_t *comm,
                             kiln_tensor_t *const *inputs, size_t inputCount,
                             kiln_tensor_t **outputs, size_t outputCount) {
  return enter(function && comm,
               "kiln_function_call_with_comm: function and comm must not be "
               "NULL",
               outputs, outputCount, [&] {
                 return callFunction(*function, comm, inputs, inputCount,
                                     outputs, outputCount);
               });
}

} // extern "C"
