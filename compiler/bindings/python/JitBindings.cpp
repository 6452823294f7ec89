//===- JitBindings.cpp - Tracing, compiling and calling from Python -------===//
//
// kiln._kiln's side of kiln.jit: trace a Python callable into a
// TracedFunction, compile it with the same driver as kiln-compile, and call
// the loaded code on numpy arrays.
//
// Dispatcher is the cached-call fast path. kiln.jit registers each compiled
// signature whose arguments are plain arrays and numbers; a later call
// whose arguments match one (same types, dtypes and shapes) goes from
// Python straight to the compiled code here, without building a key or
// touching Python-level caches. Anything else returns the `miss` sentinel
// and kiln.jit takes its general path.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "NumpyTensors.h"

#include "kiln/Jit.h"

#include <pybind11/stl.h>

#include <memory>

using namespace kiln;
using namespace kiln::python;

namespace {

/// What one argument of a cached signature was.
struct ArgumentSpec {
  enum Kind : uint8_t { Array, Float, Int, Bool } kind;
  kiln_dtype_t dtype;
  int numpyType = -1;
  std::vector<int64_t> shape;
};

/// How a cached signature's outputs are returned.
enum class OutputMode { Single, Tuple, Unflatten };

struct DispatchEntry {
  std::vector<ArgumentSpec> arguments;
  std::shared_ptr<CompiledFunction> compiled;
  OutputMode mode;
  /// For OutputMode::Unflatten: called with the list of output arrays.
  py::object unflatten;
};

/// The spec of a Python argument as kiln.jit traces it; false for values
/// the fast path does not take (pytrees, tensors, other objects).
bool describeArgument(py::handle arg, ArgumentSpec &spec) {
  PyObject *object = arg.ptr();
  if (PyBool_Check(object)) {
    spec = {ArgumentSpec::Bool, KILN_DTYPE_I1, -1, {}};
    return true;
  }
  if (PyLong_CheckExact(object)) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow)
      return false;
    bool fits = value >= INT32_MIN && value <= INT32_MAX;
    spec = {ArgumentSpec::Int, fits ? KILN_DTYPE_I32 : KILN_DTYPE_I64, -1, {}};
    return true;
  }
  if (PyFloat_CheckExact(object)) {
    spec = {ArgumentSpec::Float, KILN_DTYPE_F32, -1, {}};
    return true;
  }
  if (!py::isinstance<py::array>(arg))
    return false;
  auto array = py::reinterpret_borrow<py::array>(arg);
  int num = array.dtype().num();
  std::optional<kiln_dtype_t> dtype = DTypeTable::get().fromNumpy(num);
  if (!dtype)
    return false;
  spec.kind = ArgumentSpec::Array;
  spec.dtype = *dtype;
  spec.numpyType = num;
  spec.shape.assign(array.shape(), array.shape() + array.ndim());
  return true;
}

/// True if `arg` has the type, dtype and shape of `spec`.
bool matches(py::handle arg, const ArgumentSpec &spec) {
  PyObject *object = arg.ptr();
  switch (spec.kind) {
  case ArgumentSpec::Bool:
    return PyBool_Check(object);
  case ArgumentSpec::Float:
    return PyFloat_CheckExact(object);
  case ArgumentSpec::Int: {
    if (!PyLong_CheckExact(object))
      return false;
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
    bool fits = !overflow && value >= INT32_MIN && value <= INT32_MAX;
    return overflow ? false : (spec.dtype == KILN_DTYPE_I32) == fits;
  }
  case ArgumentSpec::Array: {
    if (!py::isinstance<py::array>(arg))
      return false;
    auto array = py::reinterpret_borrow<py::array>(arg);
    if (array.dtype().num() != spec.numpyType ||
        static_cast<size_t>(array.ndim()) != spec.shape.size())
      return false;
    const py::ssize_t *shape = array.shape();
    for (size_t i = 0; i < spec.shape.size(); ++i)
      if (shape[i] != spec.shape[i])
        return false;
    return true;
  }
  }
  return false;
}

/// A rank-0 tensor holding the Python number `arg` as `dtype`.
TensorPtr scalarTensor(py::handle arg, kiln_dtype_t dtype) {
  kiln_tensor_t *tensor = nullptr;
  union {
    float f32;
    int32_t i32;
    int64_t i64;
    bool i1;
  } value;
  switch (dtype) {
  case KILN_DTYPE_F32:
    value.f32 = static_cast<float>(PyFloat_AsDouble(arg.ptr()));
    break;
  case KILN_DTYPE_I32:
    value.i32 = static_cast<int32_t>(PyLong_AsLongLong(arg.ptr()));
    break;
  case KILN_DTYPE_I64:
    value.i64 = PyLong_AsLongLong(arg.ptr());
    break;
  default:
    value.i1 = arg.ptr() == Py_True;
    break;
  }
  check(kiln_tensor_create(dtype, 0, nullptr, &value, &tensor));
  return TensorPtr(tensor);
}

/// Calls `function` with `args` already known to match `arguments`.
std::vector<py::array> callMatched(const kiln_function_t *function,
                                   const std::vector<ArgumentSpec> &arguments,
                                   py::handle args) {
  std::vector<py::object> keepAlive;
  TensorPtr owned[8];
  std::vector<TensorPtr> more;
  kiln_tensor_t *inputs[8];
  std::vector<kiln_tensor_t *> moreInputs;
  size_t count = arguments.size();
  bool small = count <= 8;
  if (!small) {
    more.resize(count);
    moreInputs.resize(count);
  }
  size_t index = 0;
  for (py::handle arg : args) {
    const ArgumentSpec &spec = arguments[index];
    TensorPtr tensor =
        spec.kind == ArgumentSpec::Array
            ? inputTensor(
                  arg, spec.dtype,
                  [&] { return "argument " + std::to_string(index); },
                  keepAlive)
            : scalarTensor(arg, spec.dtype);
    (small ? inputs[index] : moreInputs[index]) = tensor.get();
    (small ? owned[index] : more[index]) = std::move(tensor);
    ++index;
  }
  size_t outputCount = kiln_function_output_count(function);
  kiln_tensor_t *outputs[8] = {};
  std::vector<kiln_tensor_t *> moreOutputs;
  kiln_tensor_t **slots = outputs;
  if (outputCount > 8) {
    moreOutputs.resize(outputCount);
    slots = moreOutputs.data();
  }
  check(kiln_function_call(function, small ? inputs : moreInputs.data(), count,
                           slots, outputCount));
  std::vector<py::array> results;
  results.reserve(outputCount);
  for (size_t i = 0; i < outputCount; ++i)
    results.push_back(outputArray(TensorPtr(slots[i])));
  return results;
}

py::object packOutputs(std::vector<py::array> results, OutputMode mode,
                       const py::object &unflatten) {
  if (mode == OutputMode::Single)
    return std::move(results[0]);
  py::tuple tuple(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    tuple[i] = std::move(results[i]);
  if (mode == OutputMode::Tuple)
    return std::move(tuple);
  return unflatten(tuple);
}

/// The fast path of one kiln.jit function.
class Dispatcher {
public:
  explicit Dispatcher(py::object miss) : miss(std::move(miss)) {}

  /// Calls the compiled function whose signature `args` match, or returns
  /// the miss sentinel.
  py::object call(py::args args) {
    size_t count = args.size();
    for (size_t e = entries.size(); e-- > 0;) {
      const DispatchEntry &entry = entries[e];
      if (entry.arguments.size() != count)
        continue;
      bool all = true;
      for (size_t i = 0; all && i < count; ++i)
        all = matches(args[i], entry.arguments[i]);
      if (!all)
        continue;
      return packOutputs(
          callMatched(entry.compiled->function(), entry.arguments, args),
          entry.mode, entry.unflatten);
    }
    return miss;
  }

  /// Registers `compiled` for calls with arguments like `args`; returns
  /// false (and registers nothing) if the fast path cannot take them.
  bool add(py::tuple args, std::shared_ptr<CompiledFunction> compiled,
           int mode, py::object unflatten) {
    DispatchEntry entry;
    for (py::handle arg : args) {
      ArgumentSpec spec;
      if (!describeArgument(arg, spec))
        return false;
      entry.arguments.push_back(std::move(spec));
    }
    entry.compiled = std::move(compiled);
    entry.mode = static_cast<OutputMode>(mode);
    entry.unflatten = std::move(unflatten);
    entries.push_back(std::move(entry));
    return true;
  }

  size_t size() const { return entries.size(); }

private:
  py::object miss;
  std::vector<DispatchEntry> entries;
};

py::list specList(const std::vector<TensorSpec> &specs) {
  py::list list;
  for (const TensorSpec &spec : specs)
    list.append(py::make_tuple(spec.name, static_cast<int>(spec.dtype),
                               py::tuple(py::cast(spec.shape))));
  return list;
}
} // namespace

void kiln::python::bindJit(py::module_ &m) {
  py::class_<TracedFunction>(m, "TracedFunction")
      .def_property_readonly("name", &TracedFunction::name)
      .def("text", &TracedFunction::str, py::arg("with_locations") = false,
           "The kiln IR of the function (MLIR text).")
      .def_property_readonly("inputs",
                             [](const TracedFunction &f) {
                               return specList(f.inputSpecs());
                             })
      .def_property_readonly("outputs", [](const TracedFunction &f) {
        return specList(f.outputSpecs());
      });

  m.def(
      "trace",
      [](std::string name, py::handle specs, py::function fn) {
        SourceLoc loc = callerLocation();
        std::vector<TensorSpec> inputs;
        for (py::handle item : specs) {
          auto spec = item.cast<py::tuple>();
          inputs.push_back(TensorSpec{dtypeFromCode(spec[0].cast<int>()),
                                      spec[1].cast<Shape>(),
                                      spec[2].cast<std::string>()});
        }
        return detail::traceImpl(std::move(name), std::move(inputs),
                                 regionFn(fn), loc);
      },
      "Traces fn(list of Tensors) -> list of Tensors on inputs given as "
      "[(dtype code, shape, name)].");

  py::class_<CompiledFunction, std::shared_ptr<CompiledFunction>>(
      m, "CompiledFunction")
      .def_property_readonly("name", &CompiledFunction::name)
      .def_property_readonly("compile_seconds",
                             &CompiledFunction::compileSeconds)
      .def("save", &CompiledFunction::save, py::arg("path"),
           "Writes the .kmod for the runtime alone (kiln_runtime).")
      .def("module_bytes",
           [](const CompiledFunction &f) {
             const std::vector<uint8_t> &bytes = f.moduleBytes();
             return py::bytes(reinterpret_cast<const char *>(bytes.data()),
                              bytes.size());
           })
      .def(
          "call",
          [](const CompiledFunction &f, py::handle args) {
            std::vector<py::array> results = callFunction(f.function(), args);
            py::tuple tuple(results.size());
            for (size_t i = 0; i < results.size(); ++i)
              tuple[i] = std::move(results[i]);
            return tuple;
          },
          "Calls the function on a sequence of arrays; returns a tuple.");

  m.def(
      "compile",
      [](const TracedFunction &traced, unsigned optLevel) {
        JitOptions options;
        options.optLevel = optLevel;
        return std::make_shared<CompiledFunction>(compile(traced, options));
      },
      py::arg("traced"), py::arg("opt_level") = 2);

  py::class_<Dispatcher>(m, "Dispatcher")
      .def(py::init<py::object>())
      .def("__call__", &Dispatcher::call)
      .def("add", &Dispatcher::add)
      .def("__len__", &Dispatcher::size);
}

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "kiln's C++ tracer and JIT, bound for the kiln package";
  static py::exception<TraceError> traceError(m, "TraceError");
  static py::exception<JitError> jitError(m, "JitError",
                                          PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer)
        std::rethrow_exception(pointer);
    } catch (const TraceError &error) {
      // The C++ API's names, as Python spells them.
      std::string text = error.what();
      for (size_t at; (at = text.find("kiln::")) != std::string::npos;)
        text.replace(at, 6, "kiln.");
      traceError(text.c_str());
    } catch (const JitError &error) {
      jitError(error.what());
    }
  });
  bindTracer(m);
  bindJit(m);
}
