//===- Bindings.h - Shared pieces of the kiln._kiln module ------*- C++ -*-===//
//
// kiln._kiln binds the C++ tracer (kiln/kiln.h), JIT (kiln/Jit.h) and
// optimizers (kiln/Optim.h) for the Python package `kiln`. Op semantics,
// broadcasting, promotion, control flow, autodiff and optimizer updates all
// stay in C++; this layer converts Python values to tracer
// operands and Python callables to traced regions, and reports the user's
// Python file and line as the source location of everything it records.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BINDINGS_PYTHON_BINDINGS_H
#define KILN_BINDINGS_PYTHON_BINDINGS_H

#include "kiln/kiln.h"

#include <pybind11/pybind11.h>

#include <optional>

namespace kiln {
namespace python {

namespace py = pybind11;

/// The innermost Python frame outside the kiln package: the user's line
/// that called into kiln. Unknown when no such frame exists.
SourceLoc callerLocation();

/// Sets the directory of the kiln package, whose frames callerLocation
/// skips.
void setPackageDirectory(const std::string &directory);

/// A Python value as a tracer operand: kiln Tensors as they are, Python
/// bool/int/float as weakly typed scalars, anything else (numpy arrays and
/// scalars, lists) as a constant tensor of its numpy dtype.
Operand toOperand(py::handle value, SourceLoc loc);

/// Like toOperand, but always a tensor: Python numbers become rank-0
/// constants of kiln's default dtypes (float -> f32, int -> i32, or i64
/// when it does not fit, bool -> i1).
Tensor toTensor(py::handle value, SourceLoc loc);

/// A sequence of Python values as tensors (toTensor on each).
Tensors toTensors(py::handle sequence, SourceLoc loc);

/// Tensors as a Python list.
py::list toList(const Tensors &tensors);

/// A Python callable taking a list of tensors and returning a sequence of
/// tensors, as a traced region body.
detail::RegionFn regionFn(py::function fn);

/// The kiln DType for a dtype code from Python; rejects codes the tracer
/// does not offer.
DType dtypeFromCode(int code);

/// The dtype a Python int (`object`, a PyLong) is traced as: i32, or i64
/// when it does not fit; none when it does not fit in 64 bits either.
std::optional<DType> pythonIntDType(PyObject *object);

void bindTracer(py::module_ &m);
void bindJit(py::module_ &m);
void bindOptim(py::module_ &m);
void bindRandom(py::module_ &m);

} // namespace python
} // namespace kiln

#endif // KILN_BINDINGS_PYTHON_BINDINGS_H
