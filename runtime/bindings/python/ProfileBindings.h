//===- ProfileBindings.h - The runtime's profiler for Python ----*- C++ -*-===//
//
// The profiler of the C API (kiln_profile_*) as functions of
// kiln_runtime._runtime. The process has one runtime (libkiln_runtime.so,
// which kiln._kiln links too), so kiln_runtime.profiler, which kiln.profiler
// is, sees the modules kiln_runtime loads and those kiln.jit compiles.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PYTHON_PROFILEBINDINGS_H
#define KILN_PYTHON_PROFILEBINDINGS_H

#include "kiln/ProfileSummary.h"
#include "kiln/runtime.h"

#include <pybind11/pybind11.h>

#include <string>

namespace kiln::python {

/// Defines profile_set_enabled, profile_enabled, profile_clear,
/// profile_regions, profile_summary and profile_write_trace in `m`.
inline void bindProfiler(pybind11::module_ &m) {
  namespace py = pybind11;
  m.def("profile_set_enabled",
        [](bool enabled) { kiln_profile_set_enabled(enabled ? 1 : 0); },
        py::arg("enabled"));
  m.def("profile_enabled", [] { return kiln_profile_enabled() != 0; });
  m.def("profile_clear", [] { kiln_profile_clear(); });
  m.def("profile_regions", [] {
    py::list regions;
    for (const kiln_profile_region_t &region :
         kiln::profile::collectedRegions()) {
      py::dict entry;
      entry["name"] = region.name ? region.name : "?";
      entry["count"] = region.count;
      entry["total_ns"] = region.total_ns;
      entry["self_ns"] = region.self_ns;
      regions.append(std::move(entry));
    }
    return regions;
  });
  m.def(
      "profile_summary",
      [](size_t top) {
        return kiln::profile::formatSummary(kiln::profile::collectedRegions(),
                                            top);
      },
      py::arg("top"));
  m.def(
      "profile_write_trace",
      [](const std::string &path) {
        if (kiln_status_t status = kiln_profile_write_trace(path.c_str())) {
          std::string message = kiln_status_message(status);
          kiln_status_free(status);
          PyErr_SetString(PyExc_OSError, message.c_str());
          throw py::error_already_set();
        }
      },
      py::arg("path"));
}

} // namespace kiln::python

#endif // KILN_PYTHON_PROFILEBINDINGS_H
