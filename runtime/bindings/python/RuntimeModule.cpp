//===- RuntimeModule.cpp - kiln_runtime._runtime: load and call .kmod -----===//
//
// The runtime-only Python module: load a module written by kiln-compile or
// kiln.jit(...).compile(...).save(...), list its functions and call them
// on numpy arrays. It links the runtime alone (no LLVM, no MLIR), so a
// deployment that only runs compiled modules needs nothing else.
//
//===----------------------------------------------------------------------===//

#include "DataBindings.h"
#include "DeviceArrays.h"
#include "ModuleCapsule.h"
#include "NumpyTensors.h"
#include "ProfileBindings.h"

#include <pybind11/stl.h>

#include <memory>

namespace py = pybind11;
using namespace kiln::python;

namespace {

/// A loaded module, shared by the Function objects taken from it.
struct Module {
  std::shared_ptr<kiln_module_t> module;

  static Module adopt(kiln_module_t *raw) {
    return Module{std::shared_ptr<kiln_module_t>(raw, kiln_module_release)};
  }
};

/// One function of a loaded module; keeps the module loaded.
struct Function {
  std::shared_ptr<kiln_module_t> module;
  const kiln_function_t *function;
};

kiln_device_t parseDevice(const std::string &name) {
  if (name == "cpu")
    return KILN_DEVICE_CPU;
  if (name == "cuda")
    return KILN_DEVICE_CUDA;
  throw py::value_error("unknown device '" + name +
                        "' (expected 'cpu' or 'cuda')");
}

/// A kiln dtype as Python sees it: numpy's dtype, or the kiln name where
/// numpy has none (bf16 without ml_dtypes).
py::object pythonDType(kiln_dtype_t dtype) {
  if (DTypeTable::get().hasNumpyType(dtype))
    return DTypeTable::get().numpy(dtype);
  return py::str(kiln_dtype_name(dtype));
}

/// (name, dtype, shape) of one input or output signature.
py::tuple describeSignature(const kiln_tensor_signature_t *signature) {
  py::tuple shape(signature->rank);
  for (size_t i = 0; i < signature->rank; ++i)
    shape[i] = signature->shape[i];
  return py::make_tuple(signature->name, pythonDType(signature->dtype), shape);
}

py::object packResults(const py::list &results) {
  if (results.size() == 1)
    return results[0];
  return py::tuple(results);
}

/// The shape of a tensor as a tuple.
py::tuple shapeOf(kiln_tensor_t *tensor) {
  py::tuple shape(kiln_tensor_rank(tensor));
  for (size_t i = 0; i < kiln_tensor_rank(tensor); ++i)
    shape[i] = kiln_tensor_shape(tensor)[i];
  return shape;
}

/// A host copy of a device array, as a numpy array.
py::array toNumpy(const DeviceArray &array) {
  kiln_tensor_t *host = nullptr;
  check(kiln_tensor_to_host(array.tensor.get(), &host));
  return outputArray(TensorPtr(host));
}

} // namespace

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "kiln's runtime: load compiled .kmod modules and call them on "
            "numpy arrays";
  bindData(m);

  py::class_<Function>(m, "Function")
      .def_property_readonly("name",
                             [](const Function &f) {
                               return std::string(
                                   kiln_function_name(f.function));
                             })
      .def_property_readonly(
          "inputs",
          [](const Function &f) {
            py::list list;
            for (size_t i = 0; i < kiln_function_input_count(f.function); ++i)
              list.append(describeSignature(kiln_function_input(f.function, i)));
            return list;
          },
          "[(name, dtype, shape)] of the inputs")
      .def_property_readonly(
          "outputs",
          [](const Function &f) {
            py::list list;
            for (size_t i = 0; i < kiln_function_output_count(f.function); ++i)
              list.append(
                  describeSignature(kiln_function_output(f.function, i)));
            return list;
          },
          "[(name, dtype, shape)] of the outputs")
      .def(
          "__call__",
          [](const Function &f, py::args args) {
            return packResults(
                callWithDeviceArrays(f.function, f.module, args, false));
          },
          "Calls the function: one array (or number) per input, each of its "
          "input's dtype and shape. Returns one numpy array, or a tuple of "
          "them for several outputs. C-contiguous aligned inputs are read "
          "in place, without a copy; so are DeviceArrays and, for a CUDA "
          "module, arrays of other libraries on its GPU (anything with "
          "__dlpack__: PyTorch, JAX, CuPy).")
      .def(
          "call_on_device",
          [](const Function &f, py::args args) {
            return packResults(
                callWithDeviceArrays(f.function, f.module, args, true));
          },
          "Calls a CUDA module's function as __call__ does, leaving the "
          "outputs in device memory: returns DeviceArrays, which the next "
          "call takes without a copy.");

  py::class_<DeviceArray>(m, "DeviceArray",
                          "An array in a CUDA device's memory. Calls take it "
                          "without a copy; numpy() copies it to the host; "
                          "other libraries take it through DLPack "
                          "(torch.from_dlpack, jax.dlpack.from_dlpack).")
      .def_property_readonly(
          "shape", [](const DeviceArray &a) { return shapeOf(a.tensor.get()); })
      .def_property_readonly("dtype",
                             [](const DeviceArray &a) {
                               return pythonDType(
                                   kiln_tensor_dtype(a.tensor.get()));
                             })
      .def_property_readonly("device",
                             [](const DeviceArray &a) {
                               return "cuda:" +
                                      std::to_string(kiln_tensor_device_index(
                                          a.tensor.get()));
                             })
      .def("numpy", &toNumpy, "A copy on the host.")
      .def(
          "__array__",
          [](const DeviceArray &a, py::object dtype, py::object) {
            py::array host = toNumpy(a);
            return dtype.is_none() ? host
                                   : py::array(host.attr("astype")(dtype));
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def(
          "__dlpack__",
          [](const DeviceArray &a, py::object stream, py::object maxVersion,
             py::object dlDevice, py::object copy) {
            // kiln's calls are complete when they return: there is no
            // pending work for a consumer's stream to wait for.
            if (!dlDevice.is_none()) {
              py::tuple want = dlDevice;
              if (want[0].cast<int>() != kDLCUDA ||
                  want[1].cast<int>() != kiln_tensor_device_index(a.tensor.get()))
                throw py::buffer_error("a kiln DeviceArray exports only to "
                                       "its own device");
            }
            if (!copy.is_none() && copy.cast<bool>()) {
              kiln_tensor_t *copied = nullptr;
              check(kiln_tensor_to_device(a.module.get(), a.tensor.get(),
                                          &copied));
              return exportDLPack(DeviceArray::adopt(copied, a.module));
            }
            return exportDLPack(a);
          },
          py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def_property_readonly(
          "__cuda_array_interface__",
          [](const DeviceArray &a) {
            kiln_dtype_t dtype = kiln_tensor_dtype(a.tensor.get());
            if (!DTypeTable::get().hasNumpyType(dtype))
              throw py::attribute_error(
                  std::string("__cuda_array_interface__ has no type string "
                              "for ") +
                  kiln_dtype_name(dtype));
            py::dict interface;
            interface["shape"] = shapeOf(a.tensor.get());
            interface["typestr"] = DTypeTable::get().numpy(dtype).attr("str");
            interface["data"] = py::make_tuple(
                reinterpret_cast<uintptr_t>(kiln_tensor_data(a.tensor.get())),
                false);
            interface["strides"] = py::none();
            interface["version"] = 3;
            return interface;
          },
          "CUDA's array interface (CuPy, Numba): the device address, shape "
          "and type; the array is complete, no stream to wait for.")
      .def("__dlpack_device__",
           [](const DeviceArray &a) {
             return py::make_tuple(int(kDLCUDA),
                                   kiln_tensor_device_index(a.tensor.get()));
           })
      .def("__repr__", [](const DeviceArray &a) {
        return "DeviceArray(shape=" +
               py::repr(shapeOf(a.tensor.get())).cast<std::string>() +
               ", dtype=" + kiln_dtype_name(kiln_tensor_dtype(a.tensor.get())) +
               ", device='cuda:" +
               std::to_string(kiln_tensor_device_index(a.tensor.get())) + "')";
      });

  py::class_<Module>(m, "Module")
      .def_static(
          "load",
          [](const std::string &path, std::optional<std::string> device) {
            kiln_module_t *raw = nullptr;
            if (device)
              check(kiln_module_load_file_on(parseDevice(*device),
                                             path.c_str(), &raw));
            else
              check(kiln_module_load_file(path.c_str(), &raw));
            return Module::adopt(raw);
          },
          py::arg("path"), py::arg("device") = py::none(),
          "Loads a .kmod file. With `device`, fails unless the module was "
          "compiled for it and it is available now.")
      .def_static(
          "from_bytes",
          [](py::bytes data, std::optional<std::string> device) {
            std::string_view view = data;
            kiln_module_t *raw = nullptr;
            if (device)
              check(kiln_module_load_memory_on(parseDevice(*device),
                                               view.data(), view.size(), &raw));
            else
              check(kiln_module_load_memory(view.data(), view.size(), &raw));
            return Module::adopt(raw);
          },
          py::arg("data"), py::arg("device") = py::none(),
          "Loads a module from its bytes.")
      .def_static(
          "_share",
          [](py::capsule loaded) {
            // kiln.jit's compiled functions hand over the module they
            // loaded (ModuleCapsule.h): the same runtime holds it (one
            // library for both extensions), so no second load copies its
            // code and its constants onto the device again.
            if (loaded.name() == nullptr ||
                std::string_view(loaded.name()) != kModuleCapsuleName)
              throw py::type_error(
                  "Module._share takes the capsule of a loaded module");
            return Module{*loaded.get_pointer<ModuleCapsule>()};
          },
          py::arg("loaded"),
          "The module a kiln.jit function loaded, shared: no second load.")
      .def_property_readonly("target",
                             [](const Module &m) {
                               return std::string(
                                   kiln_module_target(m.module.get()));
                             })
      .def_property_readonly("device",
                             [](const Module &m) {
                               return std::string(kiln_device_name(
                                   kiln_module_device(m.module.get())));
                             })
      .def_property_readonly(
          "profile_region_count",
          [](const Module &m) {
            return kiln_module_profile_region_count(m.module.get());
          },
          "Regions the module's code times (0: compiled without profiling).")
      .def_property_readonly(
          "function_names",
          [](const Module &m) {
            std::vector<std::string> names;
            for (size_t i = 0; i < kiln_module_function_count(m.module.get());
                 ++i)
              names.push_back(kiln_function_name(
                  kiln_module_function_at(m.module.get(), i)));
            return names;
          })
      .def(
          "to_device",
          [](const Module &m, py::handle object) {
            // The array's own dtype; C order, as the runtime's tensors.
            py::array array = py::module_::import("numpy").attr(
                "ascontiguousarray")(object);
            std::optional<kiln_dtype_t> dtype =
                DTypeTable::get().fromNumpy(array.dtype().num());
            if (!dtype)
              throw py::value_error("to_device: kiln has no dtype for numpy's " +
                                    py::str(array.dtype()).cast<std::string>());
            std::vector<int64_t> shape(array.shape(),
                                       array.shape() + array.ndim());
            kiln_tensor_t *host = nullptr;
            check(kiln_tensor_wrap(*dtype, shape.size(), shape.data(),
                                   const_cast<void *>(array.data()), &host));
            TensorPtr wrapped(host);
            kiln_tensor_t *onDevice = nullptr;
            check(kiln_tensor_to_device(m.module.get(), host, &onDevice));
            return DeviceArray::adopt(onDevice, m.module);
          },
          py::arg("array"),
          "A copy of `array` in the memory of the CUDA device this module "
          "runs on, as a DeviceArray (ValueError for a CPU module).")
      .def(
          "__getitem__",
          [](const Module &m, const std::string &name) {
            const kiln_function_t *function = nullptr;
            kiln_status_t status = kiln_module_function_lookup(
                m.module.get(), name.c_str(), &function);
            if (status) {
              kiln_status_free(status);
              throw py::key_error("the module has no function '" + name + "'");
            }
            return Function{m.module, function};
          },
          "The function called `name`.");

  m.def(
      "cuda_compute_capability",
      [] {
        int major = 0, minor = 0;
        check(kiln_cuda_compute_capability(&major, &minor));
        return py::make_tuple(major, minor);
      },
      "(major, minor) of the CUDA device calls of CUDA modules run on "
      "(KILN_CUDA_DEVICE, else the first), without opening it; RuntimeError "
      "without a driver or a device.");
  m.def(
      "array_signature",
      [](py::handle object) -> py::object {
        if (py::isinstance<DeviceArray>(object)) {
          kiln_tensor_t *tensor =
              object.cast<const DeviceArray &>().tensor.get();
          return py::make_tuple(pythonDType(kiln_tensor_dtype(tensor)),
                                shapeOf(tensor));
        }
        if (py::isinstance<py::array>(object) ||
            !py::hasattr(object, "__dlpack__"))
          return py::none();
        std::optional<DLPackSignature> signature = dlpackSignature(object);
        if (!signature)
          return py::none();
        return py::make_tuple(pythonDType(signature->dtype),
                              py::cast(signature->shape));
      },
      py::arg("array"),
      "(dtype, shape) of a DeviceArray or another library's array "
      "(anything with __dlpack__), as a call would take it: the dtype is "
      "numpy's (the kiln name where numpy has none, bf16 without "
      "ml_dtypes); None for numpy arrays and other objects, and for a "
      "DLPack dtype kiln lacks.");
  m.def(
      "memory_stats",
      [] {
        kiln_memory_stats_t stats;
        kiln_memory_stats(&stats);
        py::dict result;
        result["held_bytes"] = stats.held_bytes;
        result["peak_bytes"] = stats.peak_bytes;
        result["allocations"] = stats.allocations;
        return result;
      },
      "The buffers the code of CPU modules allocates, those loaded "
      "through kiln_runtime and kiln.jit's functions alike: "
      "{'held_bytes': held now, 'peak_bytes': the most held at once since "
      "reset_memory_peak(), 'allocations': made since then}. Inputs and "
      "outputs are not counted.");
  m.def("reset_memory_peak", [] { kiln_memory_reset_peak(); },
        "Starts a new peak at the bytes held now, and a new count of "
        "allocations.");
  bindProfiler(m);
}
