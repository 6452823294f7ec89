//===- NumpyTensors.h - numpy arrays in, numpy arrays out -------*- C++ -*-===//
//
// The one place where Python values meet kiln_tensor_t, shared by the
// runtime's Python module (kiln_runtime) and the compiler's (kiln._kiln):
//
//   - numpy dtypes map to kiln dtypes through the npy descriptors of
//     kiln/ElementTypes.def, so the table has one definition;
//   - an input array that is C-contiguous, element-aligned, in native byte
//     order and of the expected dtype is wrapped without a copy
//     (kiln_tensor_wrap); anything else is converted by numpy first;
//   - an output tensor becomes a numpy array over the tensor's own buffer,
//     released when the array is collected;
//   - an output written into a donated input (its signature's tied_input)
//     becomes a numpy array over that input's memory, keeping the Python
//     object that owns it alive; a donated input is wrapped in place only
//     if numpy lets it be written.
//
// Header-only and free of everything but pybind11, numpy's Python API and
// the runtime's C API, so the runtime-only module needs nothing more.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BINDINGS_PYTHON_NUMPYTENSORS_H
#define KILN_BINDINGS_PYTHON_NUMPYTENSORS_H

#include "kiln/ElementType.h"
#include "kiln/runtime.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln {
namespace python {

namespace py = pybind11;

/// Owns a kiln_tensor_t.
struct TensorDeleter {
  void operator()(kiln_tensor_t *tensor) const { kiln_tensor_release(tensor); }
};
using TensorPtr = std::unique_ptr<kiln_tensor_t, TensorDeleter>;

/// A failure of communication between ranks (KILN_STATUS_COMM_ERROR):
/// kiln.distributed.CommunicationError in Python, which an elastic run
/// recovers from.
class CommError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Turns a failed runtime status into a Python ValueError carrying its
/// message (the runtime's messages name the function, input and shapes).
inline void check(kiln_status_t status) {
  if (!status)
    return;
  std::string message = kiln_status_message(status);
  kiln_status_code_t code = kiln_status_code(status);
  kiln_status_free(status);
  if (code == KILN_STATUS_OUT_OF_MEMORY)
    throw std::bad_alloc();
  if (code == KILN_STATUS_INVALID_ARGUMENT)
    throw py::value_error(message);
  if (code == KILN_STATUS_COMM_ERROR)
    throw CommError(message);
  throw std::runtime_error(message);
}

/// numpy's dtypes for kiln's element types, looked up once.
class DTypeTable {
public:
  static const DTypeTable &get() {
    static const DTypeTable *table = new DTypeTable();
    return *table;
  }

  /// The numpy dtype of `dtype`; throws for types numpy lacks (bf16 where
  /// the ml_dtypes package, which gives numpy a bfloat16, is missing).
  const py::dtype &numpy(kiln_dtype_t dtype) const {
    unsigned code = static_cast<unsigned>(dtype);
    if (code >= kNumElementTypes || !hasNumpy[code])
      throw py::type_error(std::string("kiln dtype ") +
                           kiln_dtype_name(dtype) +
                           " has no numpy equivalent");
    return dtypes[code];
  }

  /// Whether numpy has `dtype` (bf16 only with ml_dtypes).
  bool hasNumpyType(kiln_dtype_t dtype) const {
    unsigned code = static_cast<unsigned>(dtype);
    return code < kNumElementTypes && hasNumpy[code];
  }

  /// The kiln dtype of numpy type number `num`, if kiln has one.
  std::optional<kiln_dtype_t> fromNumpy(int num) const {
    for (unsigned code = 0; code < kNumElementTypes; ++code)
      if (hasNumpy[code] && nums[code] == num)
        return static_cast<kiln_dtype_t>(code);
    return std::nullopt;
  }

private:
  DTypeTable() {
    for (unsigned code = 0; code < kNumElementTypes; ++code) {
      const char *descriptor = kElementTypes[code].npyDescriptor;
      hasNumpy[code] = *descriptor != 0;
      if (hasNumpy[code])
        dtypes[code] = py::dtype(std::string(descriptor));
      else if (kElementTypes[code].type == ElementType::BF16)
        hasNumpy[code] = importBfloat16(dtypes[code]);
      if (hasNumpy[code])
        nums[code] = dtypes[code].num();
    }
  }
  /// ml_dtypes.bfloat16 (JAX's and TensorFlow's numpy bfloat16), if the
  /// package is installed.
  static bool importBfloat16(py::dtype &dtype) {
    try {
      dtype = py::dtype::from_args(
          py::module_::import("ml_dtypes").attr("bfloat16"));
      return true;
    } catch (py::error_already_set &) {
      return false;
    }
  }
  py::dtype dtypes[kNumElementTypes];
  int nums[kNumElementTypes] = {};
  bool hasNumpy[kNumElementTypes] = {};
};

/// True if `array` can be handed to compiled code as it is: C-contiguous,
/// aligned to its elements and in native byte order.
inline bool usableInPlace(const py::array &array) {
  const int required = py::array::c_style | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
  if ((array.flags() & required) != required)
    return false;
  char order = array.dtype().byteorder();
  return order != '>';
}

/// The kiln tensor for one input: `object` wrapped in place when
/// usableInPlace and of `dtype` (and writeable, for a `donated` input,
/// which the call overwrites), else converted to a fresh contiguous
/// array of `dtype` by numpy (kept alive in `keepAlive` for the call).
/// Arrays of another dtype are an error naming the input (`describe()`);
/// Python numbers and lists are converted. `viewed`, when given, receives
/// the array whose memory the tensor is.
template <typename Describe>
TensorPtr inputTensor(py::handle object, kiln_dtype_t dtype,
                      const Describe &describe,
                      std::vector<py::object> &keepAlive,
                      bool donated = false, py::object *viewed = nullptr) {
  const DTypeTable &table = DTypeTable::get();
  py::array array;
  if (py::isinstance<py::array>(object)) {
    array = py::reinterpret_borrow<py::array>(object);
    std::optional<kiln_dtype_t> got = table.fromNumpy(array.dtype().num());
    if (!got || *got != dtype)
      throw py::value_error(describe() + " has dtype " +
                            py::str(array.dtype()).cast<std::string>() +
                            " but " + kiln_dtype_name(dtype) + " (" +
                            py::str(py::handle(table.numpy(dtype))).cast<std::string>() +
                            ") is expected");
    if (!usableInPlace(array) || (donated && !array.writeable())) {
      // A contiguous, aligned copy in native byte order.
      py::module_ numpy = py::module_::import("numpy");
      array = numpy.attr("array")(array, table.numpy(dtype),
                                  py::arg("order") = "C");
      keepAlive.push_back(array);
    }
  } else {
    // asarray, not ascontiguousarray: the latter makes numbers 1-D.
    py::module_ numpy = py::module_::import("numpy");
    array = numpy.attr("asarray")(object, table.numpy(dtype), "C");
    keepAlive.push_back(array);
  }
  if (viewed)
    *viewed = array;
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  kiln_tensor_t *tensor = nullptr;
  check(kiln_tensor_wrap(dtype, shape.size(), shape.data(),
                         const_cast<void *>(array.data()), &tensor));
  return TensorPtr(tensor);
}

/// The C-order strides, in bytes, of a `raw`-shaped array. Explicit:
/// pybind11 would derive them from the dtype's item size, read from a
/// struct field that moved in numpy 2.
inline std::vector<py::ssize_t> rowMajorStrides(const kiln_tensor_t *raw) {
  size_t rank = kiln_tensor_rank(raw);
  const int64_t *shape = kiln_tensor_shape(raw);
  std::vector<py::ssize_t> strides(rank);
  py::ssize_t stride = static_cast<py::ssize_t>(
      kiln_dtype_size(kiln_tensor_dtype(raw)));
  for (size_t axis = rank; axis-- > 0;) {
    strides[axis] = stride;
    stride *= shape[axis];
  }
  return strides;
}

/// A numpy array over `tensor`'s buffer, owning the tensor; for an output
/// written into a donated input (`owner` the Python object whose memory
/// that is), an array over that memory keeping `owner` alive.
inline py::array outputArray(TensorPtr tensor, py::handle owner = {}) {
  kiln_tensor_t *raw = tensor.get();
  const py::dtype &dtype = DTypeTable::get().numpy(kiln_tensor_dtype(raw));
  size_t rank = kiln_tensor_rank(raw);
  const int64_t *shape = kiln_tensor_shape(raw);
  std::vector<py::ssize_t> dims(shape, shape + rank);
  std::vector<py::ssize_t> strides = rowMajorStrides(raw);
  void *data = kiln_tensor_data(raw);
  if (owner)
    return py::array(dtype, dims, strides, data, owner);
  py::capsule capsule(tensor.release(), [](void *pointer) {
    kiln_tensor_release(static_cast<kiln_tensor_t *>(pointer));
  });
  return py::array(dtype, dims, strides, data, capsule);
}

/// Calls `function` on `inputs` without holding the GIL (compiled code
/// touches no Python object, so other threads run meanwhile) and returns
/// its outputs as numpy arrays. A function with collectives runs on `comm`.
/// `viewed` holds, per input, the Python object whose memory its tensor
/// is (None for one made for the call): an output written into a donated
/// input is an array over that object's memory, or a copy where there is
/// none.
inline std::vector<py::array>
callOnTensors(const kiln_function_t *function, kiln_tensor_t *const *inputs,
              size_t inputCount, kiln_comm_t *comm = nullptr,
              const std::vector<py::object> *viewed = nullptr) {
  size_t outputCount = kiln_function_output_count(function);
  std::vector<kiln_tensor_t *> outputs(outputCount, nullptr);
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = comm ? kiln_function_call_with_comm(function, comm, inputs,
                                                 inputCount, outputs.data(),
                                                 outputs.size())
                  : kiln_function_call(function, inputs, inputCount,
                                       outputs.data(), outputs.size());
  }
  check(status);
  std::vector<py::array> results;
  results.reserve(outputCount);
  for (size_t k = 0; k < outputCount; ++k) {
    TensorPtr output(outputs[k]);
    int64_t donated = kiln_function_output(function, k)->tied_input;
    if (donated < 0) {
      results.push_back(outputArray(std::move(output)));
      continue;
    }
    py::object owner;
    if (viewed && static_cast<size_t>(donated) < viewed->size())
      owner = (*viewed)[donated];
    if (owner && !owner.is_none()) {
      results.push_back(outputArray(std::move(output), owner));
      continue;
    }
    // The input's memory belongs to no Python object that could keep it
    // alive (a tensor made for the call): the output is a copy of it.
    results.push_back(
        py::array(outputArray(std::move(output)).attr("copy")()));
  }
  return results;
}

/// Throws a TypeError unless `args` has one value per input of `function`.
inline void checkInputCount(const kiln_function_t *function, py::handle args) {
  size_t inputCount = kiln_function_input_count(function);
  size_t given = py::len(args);
  if (given != inputCount)
    throw py::type_error("function '" + std::string(kiln_function_name(
                                            function)) +
                         "' takes " +
                         std::to_string(inputCount) + " input" +
                         (inputCount == 1 ? "" : "s") + " but " +
                         std::to_string(given) + " were given");
}

/// The inputs of one call of `function` made from Python values: the
/// tensors in signature order, those made for the call, the Python objects
/// whose memory they borrow, and per tensor the array it views (for
/// callOnTensors; None where there is none).
struct CallInputs {
  std::vector<kiln_tensor_t *> tensors;
  std::vector<TensorPtr> owned;
  std::vector<py::object> keepAlive;
  std::vector<py::object> viewed;
  /// Per input, whether an output is written into it (its signature's
  /// tied_input), read once per call.
  std::vector<bool> donated;

  explicit CallInputs(const kiln_function_t *function)
      : donated(kiln_function_input_count(function), false) {
    for (size_t k = 0; k < kiln_function_output_count(function); ++k) {
      int64_t input = kiln_function_output(function, k)->tied_input;
      if (input >= 0 && static_cast<size_t>(input) < donated.size())
        donated[input] = true;
    }
  }

  /// Adds a tensor made for the call, over the memory of `array` if given.
  void add(TensorPtr tensor, py::object array = py::none()) {
    owned.push_back(std::move(tensor));
    tensors.push_back(owned.back().get());
    viewed.push_back(std::move(array));
  }
  /// Adds the next input from the Python value `object` (inputTensor: in
  /// place where it can be, written only if donated).
  template <typename Describe>
  void addValue(py::handle object, kiln_dtype_t dtype,
                const Describe &describe) {
    size_t index = tensors.size();
    py::object array;
    TensorPtr tensor =
        inputTensor(object, dtype, describe, keepAlive,
                    index < donated.size() && donated[index], &array);
    add(std::move(tensor), std::move(array));
  }
  /// Adds a tensor the caller owns.
  void borrow(kiln_tensor_t *tensor) {
    tensors.push_back(tensor);
    viewed.push_back(py::none());
  }
};

/// The inputs of `function` from the Python values `args`, one per input:
/// `convert(arg, dtype, describe, inputs)` adds each, where `describe()`
/// names the input for messages ("function 'f': input 0 ('x')").
template <typename Convert>
CallInputs gatherInputs(const kiln_function_t *function, py::handle args,
                        const Convert &convert) {
  checkInputCount(function, args);
  CallInputs inputs(function);
  size_t index = 0;
  for (py::handle arg : args) {
    const kiln_tensor_signature_t *signature =
        kiln_function_input(function, index);
    auto describe = [&] {
      std::string what = "function '" + std::string(kiln_function_name(
                                            function)) +
                         "': input " + std::to_string(index);
      if (*signature->name)
        what += std::string(" ('") + signature->name + "')";
      return what;
    };
    convert(arg, signature->dtype, describe, inputs);
    ++index;
  }
  return inputs;
}

/// Calls `function` on the Python values `args` (each converted for its
/// input's signature dtype) and returns its outputs as numpy arrays.
inline std::vector<py::array> callFunction(const kiln_function_t *function,
                                           py::handle args,
                                           kiln_comm_t *comm = nullptr) {
  CallInputs inputs = gatherInputs(
      function, args,
      [](py::handle arg, kiln_dtype_t dtype, const auto &describe,
         CallInputs &into) { into.addValue(arg, dtype, describe); });
  return callOnTensors(function, inputs.tensors.data(), inputs.tensors.size(),
                       comm, &inputs.viewed);
}

} // namespace python
} // namespace kiln

#endif // KILN_BINDINGS_PYTHON_NUMPYTENSORS_H
