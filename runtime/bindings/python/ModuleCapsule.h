//===- ModuleCapsule.h - A module shared by extensions ----------*- C++ -*-===//
//
// kiln._kiln loads the module a kiln.jit function compiles; a function
// compiled for CUDA is called through kiln_runtime._runtime, which keeps
// its results on the device. Both extensions link the same runtime library
// (libkiln_runtime.so), so the module the first loaded is one the second
// can call: kiln._kiln hands it over as a PyCapsule of this name, whose
// pointer is a ModuleCapsule (a reference to the module, dropped with the
// capsule), and kiln_runtime.Module._share takes a reference of its own.
// A second load would compile the module's code for the device and copy
// its constants there again.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BINDINGS_PYTHON_MODULECAPSULE_H
#define KILN_BINDINGS_PYTHON_MODULECAPSULE_H

#include "kiln/runtime.h"

#include <pybind11/pybind11.h>

#include <memory>

namespace kiln::python {

/// What the capsule points to.
using ModuleCapsule = std::shared_ptr<kiln_module_t>;

inline constexpr const char *kModuleCapsuleName = "kiln_runtime.module";

/// A capsule holding a reference to `module`.
inline pybind11::capsule moduleCapsule(ModuleCapsule module) {
  return pybind11::capsule(
      new ModuleCapsule(std::move(module)), kModuleCapsuleName,
      [](PyObject *capsule) {
        delete static_cast<ModuleCapsule *>(
            PyCapsule_GetPointer(capsule, kModuleCapsuleName));
      });
}

} // namespace kiln::python

#endif // KILN_BINDINGS_PYTHON_MODULECAPSULE_H
