//===- RuntimeModule.cpp - kiln_runtime._runtime: load and call .kmod -----===//
//
// The runtime-only Python module: load a module written by kiln-compile or
// kiln.jit(...).compile(...).save(...), list its functions and call them
// on numpy arrays. It links the runtime alone (no LLVM, no MLIR), so a
// deployment that only runs compiled modules needs nothing else.
//
//===----------------------------------------------------------------------===//

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

/// (name, dtype, shape) of one input or output signature.
py::tuple describeSignature(const kiln_tensor_signature_t *signature) {
  py::tuple shape(signature->rank);
  for (size_t i = 0; i < signature->rank; ++i)
    shape[i] = signature->shape[i];
  py::object dtype;
  try {
    dtype = DTypeTable::get().numpy(signature->dtype);
  } catch (const py::type_error &) {
    dtype = py::str(kiln_dtype_name(signature->dtype));
  }
  return py::make_tuple(signature->name, dtype, shape);
}

py::object packResults(std::vector<py::array> results) {
  if (results.size() == 1)
    return std::move(results[0]);
  py::tuple tuple(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    tuple[i] = std::move(results[i]);
  return std::move(tuple);
}

} // namespace

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "kiln's runtime: load compiled .kmod modules and call them on "
            "numpy arrays";

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
            return packResults(callFunction(f.function, args));
          },
          "Calls the function: one array (or number) per input, each of its "
          "input's dtype and shape. Returns one numpy array, or a tuple of "
          "them for several outputs. C-contiguous aligned inputs are read "
          "in place, without a copy.");

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
      "The buffers CPU modules' code allocates, over the process: "
      "{'held_bytes': held now, 'peak_bytes': the most held at once since "
      "reset_memory_peak(), 'allocations': made since then}. Inputs and "
      "outputs are not counted.");
  m.def("reset_memory_peak", [] { kiln_memory_reset_peak(); },
        "Starts a new peak at the bytes held now, and a new count of "
        "allocations.");
  bindProfiler(m);
}
