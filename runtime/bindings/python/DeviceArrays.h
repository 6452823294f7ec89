//===- DeviceArrays.h - Tensors in device memory, and DLPack ----*- C++ -*-===//
//
// kiln_runtime's side of device-resident tensors:
//
//   - DeviceArray: a kiln_tensor_t in a CUDA device's memory
//     (kiln_tensor_to_device, kiln_function_call_on_device), which a call
//     takes without a copy and which other libraries take through DLPack
//     (`__dlpack__`, `__dlpack_device__`: torch.from_dlpack,
//     jax.dlpack.from_dlpack, cupy.from_dlpack);
//   - any other object with `__dlpack__` (a PyTorch or JAX array on the
//     GPU, or on the CPU) is taken as an input without a copy: its memory is
//     wrapped (kiln_tensor_wrap_device, kiln_tensor_wrap) for the call and
//     handed back to its owner afterwards, as the DLPack protocol asks.
//
// DLPack's structs come from Debian's libdlpack-dev (dlpack/dlpack.h); the
// capsules are the protocol's unversioned "dltensor" ones, which every
// consumer accepts.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BINDINGS_PYTHON_DEVICEARRAYS_H
#define KILN_BINDINGS_PYTHON_DEVICEARRAYS_H

#include "NumpyTensors.h"

#include <dlpack/dlpack.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace python {

/// A tensor in device memory; shared so that DLPack exports keep it alive.
struct DeviceArray {
  std::shared_ptr<kiln_tensor_t> tensor;
  /// The module it was made for, for copies (`copy()`).
  std::shared_ptr<kiln_module_t> module;

  /// The array owning a device tensor the runtime returned.
  static DeviceArray adopt(kiln_tensor_t *tensor,
                           std::shared_ptr<kiln_module_t> module) {
    return {std::shared_ptr<kiln_tensor_t>(tensor, kiln_tensor_release),
            std::move(module)};
  }
};

/// DLPack's (code, bits) of a kiln dtype.
inline DLDataType dlpackType(kiln_dtype_t dtype) {
  std::string name = kiln_dtype_name(dtype);
  DLDataType type;
  type.lanes = 1;
  type.bits = static_cast<uint8_t>(8 * kiln_dtype_size(dtype));
  if (name == "i1") {
    type.code = 6; // kDLBool (DLPack 0.8), one byte per element
  } else if (name == "bf16") {
    type.code = kDLBfloat;
  } else if (name[0] == 'f') {
    type.code = kDLFloat;
  } else if (name.rfind("ui", 0) == 0) {
    type.code = kDLUInt;
  } else {
    type.code = kDLInt;
  }
  return type;
}

/// Whether a DLPack tensor holds `dtype` (a bool may come as a one-byte
/// unsigned integer from producers older than DLPack's kDLBool).
inline bool holdsDType(const DLDataType &type, kiln_dtype_t dtype) {
  DLDataType want = dlpackType(dtype);
  if (type.lanes != 1 || type.bits != want.bits)
    return false;
  return type.code == want.code ||
         (want.code == 6 && type.code == kDLUInt && type.bits == 8);
}

inline std::string describeDLPackType(const DLDataType &type) {
  static const char *const codes[] = {"int",   "uint",    "float", "opaque",
                                      "bfloat", "complex", "bool"};
  std::string code = type.code < 7 ? codes[type.code]
                                   : "code " + std::to_string(type.code);
  return code + std::to_string(type.bits) +
         (type.lanes != 1 ? "x" + std::to_string(type.lanes) : "");
}

/// Hands a consumed DLPack tensor back to its producer when collected.
inline py::capsule ownerOf(DLManagedTensor *managed) {
  return py::capsule(managed, [](void *pointer) {
    auto *tensor = static_cast<DLManagedTensor *>(pointer);
    if (tensor->deleter)
      tensor->deleter(tensor);
  });
}

/// The kiln tensor over the memory of a DLPack-exporting `object` (another
/// library's array) for an input of `dtype`: device memory of `module`'s
/// device, or host memory. The producer's tensor is kept alive in
/// `keepAlive` until the call is over. Arrays of another dtype, strided
/// views and memory of another kind are errors naming the input.
template <typename Describe>
TensorPtr dlpackInput(py::handle object, const kiln_module_t *module,
                      kiln_dtype_t dtype, const Describe &describe,
                      std::vector<py::object> &keepAlive) {
  py::tuple where = object.attr("__dlpack_device__")();
  int deviceType = where[0].cast<int>();
  int deviceId = where[1].cast<int>();
  if (deviceType != kDLCPU && deviceType != kDLCUDA)
    throw py::value_error(describe() + " is in memory of DLPack device type " +
                          std::to_string(deviceType) +
                          "; kiln takes CPU or CUDA memory");
  // Stream 1, CUDA's legacy default stream: the producer orders its pending
  // work before it, and kiln's stream waits for it.
  py::object capsule = deviceType == kDLCUDA
                           ? object.attr("__dlpack__")(py::arg("stream") = 1)
                           : object.attr("__dlpack__")();
  auto *managed = static_cast<DLManagedTensor *>(
      PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed)
    throw py::error_already_set();
  // Consumed: the capsule no longer frees it; `owner` does, after the call.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  keepAlive.push_back(ownerOf(managed));
  const DLTensor &t = managed->dl_tensor;
  if (!holdsDType(t.dtype, dtype))
    throw py::value_error(describe() + " has DLPack dtype " +
                          describeDLPackType(t.dtype) + " but " +
                          kiln_dtype_name(dtype) + " is expected");
  if (t.strides) {
    int64_t expected = 1;
    for (int axis = t.ndim; axis-- > 0;) {
      if (t.shape[axis] != 1 && t.strides[axis] != expected)
        throw py::value_error(describe() +
                              " is a strided view; kiln takes row-major "
                              "contiguous arrays (make it contiguous first)");
      expected *= t.shape[axis];
    }
  }
  void *data = static_cast<char *>(t.data) + t.byte_offset;
  kiln_tensor_t *tensor = nullptr;
  if (deviceType == kDLCUDA) {
    if (!module)
      throw py::value_error(describe() + " is in CUDA memory, which this call "
                                         "cannot take");
    check(kiln_tensor_wrap_device(module, deviceId, dtype, t.ndim, t.shape,
                                  data, &tensor));
  } else {
    check(kiln_tensor_wrap(dtype, t.ndim, t.shape, data, &tensor));
  }
  return TensorPtr(tensor);
}

/// What a call sees of another library's array: its kiln dtype and shape.
struct DLPackSignature {
  kiln_dtype_t dtype;
  std::vector<int64_t> shape;
};

/// The signature of a DLPack-exporting `object`, read from a capsule it
/// exports and leaves unconsumed (its producer frees it); none for a DLPack
/// dtype no kiln dtype holds.
inline std::optional<DLPackSignature> dlpackSignature(py::handle object) {
  py::object capsule = object.attr("__dlpack__")();
  auto *managed = static_cast<DLManagedTensor *>(
      PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed)
    throw py::error_already_set();
  const DLTensor &t = managed->dl_tensor;
  for (unsigned code = 0; code < kNumElementTypes; ++code) {
    auto dtype = static_cast<kiln_dtype_t>(code);
    // A one-byte unsigned integer is ui8 here; holdsDType also lets it
    // stand for a bool, which only the signature it is called with decides.
    DLDataType want = dlpackType(dtype);
    if (t.dtype.lanes == 1 && t.dtype.bits == want.bits &&
        t.dtype.code == want.code)
      return DLPackSignature{dtype,
                             std::vector<int64_t>(t.shape, t.shape + t.ndim)};
  }
  return std::nullopt;
}

/// A DLPack capsule over a device array, keeping it alive until the
/// consumer is done with it.
inline py::capsule exportDLPack(const DeviceArray &array) {
  kiln_tensor_t *raw = array.tensor.get();
  auto *managed = new DLManagedTensor();
  managed->manager_ctx = new std::shared_ptr<kiln_tensor_t>(array.tensor);
  managed->deleter = [](DLManagedTensor *self) {
    delete static_cast<std::shared_ptr<kiln_tensor_t> *>(self->manager_ctx);
    delete self;
  };
  DLTensor &t = managed->dl_tensor;
  t.data = kiln_tensor_data(raw);
  t.device = {kDLCUDA, kiln_tensor_device_index(raw)};
  t.ndim = static_cast<int32_t>(kiln_tensor_rank(raw));
  t.dtype = dlpackType(kiln_tensor_dtype(raw));
  t.shape = const_cast<int64_t *>(kiln_tensor_shape(raw));
  t.strides = nullptr; // row-major and compact
  t.byte_offset = 0;
  // A capsule still named "dltensor" when collected was never consumed.
  PyObject *capsule = PyCapsule_New(managed, "dltensor", [](PyObject *self) {
    if (!PyCapsule_IsValid(self, "dltensor"))
      return;
    auto *tensor =
        static_cast<DLManagedTensor *>(PyCapsule_GetPointer(self, "dltensor"));
    tensor->deleter(tensor);
  });
  if (!capsule) {
    managed->deleter(managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

/// Calls `function` on Python values: numpy arrays and numbers (as
/// callFunction does), DeviceArrays (passed as they are) and other
/// DLPack-exporting arrays (wrapped in place). The outputs are numpy
/// arrays, or with `onDevice` DeviceArrays of `module`'s device.
inline py::list callWithDeviceArrays(const kiln_function_t *function,
                                     const std::shared_ptr<kiln_module_t> &module,
                                     py::handle args, bool onDevice) {
  CallInputs inputs = gatherInputs(
      function, args,
      [&](py::handle arg, kiln_dtype_t dtype, const auto &describe,
          CallInputs &into) {
        if (py::isinstance<DeviceArray>(arg))
          into.borrow(arg.cast<const DeviceArray &>().tensor.get());
        else if (!py::isinstance<py::array>(arg) &&
                 py::hasattr(arg, "__dlpack__") &&
                 py::hasattr(arg, "__dlpack_device__"))
          into.add(
              dlpackInput(arg, module.get(), dtype, describe, into.keepAlive));
        else
          into.addValue(arg, dtype, describe);
      });
  py::list results;
  if (!onDevice) {
    for (py::array &array :
         callOnTensors(function, inputs.tensors.data(), inputs.tensors.size(),
                       /*comm=*/nullptr, &inputs.viewed))
      results.append(std::move(array));
    return results;
  }
  std::vector<kiln_tensor_t *> outputs(kiln_function_output_count(function),
                                       nullptr);
  kiln_status_t status;
  {
    py::gil_scoped_release release;
    status = kiln_function_call_on_device(
        function, inputs.tensors.data(), inputs.tensors.size(),
        outputs.data(), outputs.size());
  }
  check(status);
  for (kiln_tensor_t *output : outputs)
    results.append(DeviceArray::adopt(output, module));
  return results;
}

} // namespace python
} // namespace kiln

#endif // KILN_BINDINGS_PYTHON_DEVICEARRAYS_H
