//===- TracerBindings.cpp - kiln.Tensor, its ops and control flow ---------===//
//
// Binds the C++ tracer for kiln._kiln: the Tensor handle, one Python
// function per tracer op (each recording at the caller's Python line),
// cond/while/fori/scan with Python callables as their regions, and the
// grad/value_and_grad/vjp transforms. The Python package builds the numpy
// API, pytrees and error hints on top.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "NumpyTensors.h"

#include <pybind11/stl.h>

#include <frameobject.h>

#include <cstring>
#include <unordered_set>

using namespace kiln;
using namespace kiln::python;

//===----------------------------------------------------------------------===//
// Source locations
//===----------------------------------------------------------------------===//

namespace {
std::string &packageDirectory() {
  static std::string directory;
  return directory;
}

/// File names live as long as the process: SourceLoc holds a const char *.
const char *intern(const char *file) {
  static std::unordered_set<std::string> files;
  return files.insert(file).first->c_str();
}
} // namespace

void kiln::python::setPackageDirectory(const std::string &directory) {
  packageDirectory() = directory;
}

SourceLoc kiln::python::callerLocation() {
  SourceLoc loc;
  PyFrameObject *frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  const std::string &skip = packageDirectory();
  while (frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    bool inside = file && !skip.empty() &&
                  std::strncmp(file, skip.data(), skip.size()) == 0;
    if (file && !inside) {
      loc.file = intern(file);
      loc.line = PyFrame_GetLineNumber(frame);
      Py_DECREF(code);
      Py_DECREF(frame);
      return loc;
    }
    Py_DECREF(code);
    PyFrameObject *back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  PyErr_Clear();
  return loc;
}

//===----------------------------------------------------------------------===//
// Python values as tensors
//===----------------------------------------------------------------------===//

DType kiln::python::dtypeFromCode(int code) {
  std::optional<DType> dtype =
      code >= 0 ? tracedDType(static_cast<ElementType>(code)) : std::nullopt;
  if (!dtype)
    throw py::value_error("kiln does not trace element type code " +
                          std::to_string(code));
  return *dtype;
}

std::optional<DType> kiln::python::pythonIntDType(PyObject *object) {
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
  if (overflow)
    return std::nullopt;
  return value >= INT32_MIN && value <= INT32_MAX ? DType::I32 : DType::I64;
}

namespace {
/// A constant tensor with the elements of a contiguous numpy array.
template <typename T>
Tensor constantOf(const py::array &array, const Shape &shape, SourceLoc loc) {
  const T *data = static_cast<const T *>(array.data());
  std::vector<T> values(data, data + array.size());
  return constant(values, shape, loc);
}

Tensor constantFromNumpy(py::handle value, SourceLoc loc) {
  py::module_ numpy = py::module_::import("numpy");
  py::array array = numpy.attr("asarray")(value);
  py::dtype dtype = array.dtype();
  char kind = dtype.kind();
  // Through Python: the struct field moved between numpy 1 and 2.
  size_t size = dtype.attr("itemsize").cast<size_t>();
  // Types the tracer lacks widen to one it has.
  std::optional<DType> target;
  std::optional<kiln_dtype_t> known = DTypeTable::get().fromNumpy(dtype.num());
  if (kind == 'b')
    target = DType::I1;
  else if (kind == 'f')
    target = size == 2 ? DType::F16 : size <= 4 ? DType::F32 : DType::F64;
  else if (known == KILN_DTYPE_BF16)
    target = DType::BF16;
  else if (kind == 'i')
    target = size <= 4 ? DType::I32 : DType::I64;
  else if (kind == 'u')
    target = size <= 2 ? DType::I32 : size == 4 ? DType::UI32 : DType::I64;
  if (!target)
    throw py::type_error("kiln cannot trace a value of numpy dtype " +
                         py::str(dtype).cast<std::string>() +
                         " (it traces bool, int32, int64, uint32, "
                         "float16, bfloat16, float32 and float64)");
  // Half-precision values are exact in float32: they travel as float32
  // constants and a cast that folds back to a half-precision constant.
  if (*target == DType::F16 || *target == DType::BF16)
    return cast(constantFromNumpy(array.attr("astype")("float32"), loc),
                *target, loc);
  // asarray, not ascontiguousarray: the latter makes rank 0 into rank 1.
  array = numpy.attr("asarray")(
      array,
      DTypeTable::get().numpy(static_cast<kiln_dtype_t>(toElementType(*target))),
      "C");
  Shape shape(array.shape(), array.shape() + array.ndim());
  switch (*target) {
  case DType::I1: {
    const bool *data = static_cast<const bool *>(array.data());
    return constant(std::vector<bool>(data, data + array.size()), shape, loc);
  }
  case DType::F32:
    return constantOf<float>(array, shape, loc);
  case DType::F64:
    return constantOf<double>(array, shape, loc);
  case DType::I32:
    return constantOf<int32_t>(array, shape, loc);
  case DType::UI32:
    return constantOf<uint32_t>(array, shape, loc);
  default:
    return constantOf<int64_t>(array, shape, loc);
  }
}

/// A Python int as a C++ integer; out of int64 range is an error.
int64_t pythonInt(py::handle value, SourceLoc loc) {
  int overflow = 0;
  long long result = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow)
    detail::fail(loc, "the integer " + py::str(value).cast<std::string>() +
                          " does not fit in 64 bits");
  return result;
}
} // namespace

Operand kiln::python::toOperand(py::handle value, SourceLoc loc) {
  if (py::isinstance<Tensor>(value))
    return Operand(value.cast<const Tensor &>(), loc);
  if (PyBool_Check(value.ptr()))
    return Operand(value.ptr() == Py_True, loc);
  // Exact checks: numpy's float64 and int scalars subclass Python's, but
  // carry a dtype of their own (strong, like arrays).
  if (PyLong_CheckExact(value.ptr()))
    return Operand(pythonInt(value, loc), loc);
  if (PyFloat_CheckExact(value.ptr()))
    return Operand(PyFloat_AsDouble(value.ptr()), loc);
  return Operand(constantFromNumpy(value, loc), loc);
}

Tensor kiln::python::toTensor(py::handle value, SourceLoc loc) {
  if (py::isinstance<Tensor>(value))
    return value.cast<const Tensor &>();
  if (PyBool_Check(value.ptr()))
    return constant(Scalar(value.ptr() == Py_True), DType::I1, loc);
  if (PyLong_CheckExact(value.ptr())) {
    int64_t integer = pythonInt(value, loc);
    return constant(Scalar(integer), *pythonIntDType(value.ptr()), loc);
  }
  if (PyFloat_CheckExact(value.ptr()))
    return constant(Scalar(PyFloat_AsDouble(value.ptr())), DType::F32, loc);
  return constantFromNumpy(value, loc);
}

Tensors kiln::python::toTensors(py::handle sequence, SourceLoc loc) {
  Tensors tensors;
  for (py::handle item : sequence)
    tensors.push_back(toTensor(item, loc));
  return tensors;
}

py::list kiln::python::toList(const Tensors &tensors) {
  py::list list;
  for (const Tensor &tensor : tensors)
    list.append(py::cast(tensor));
  return list;
}

detail::RegionFn kiln::python::regionFn(py::function fn) {
  return [fn](const Tensors &args) -> Tensors {
    py::object result = fn(toList(args));
    return toTensors(result, callerLocation());
  };
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

namespace {
Axes axesFrom(py::handle axes) {
  if (axes.is_none())
    return Axes::all();
  if (PyLong_Check(axes.ptr()))
    return Axes(axes.cast<int64_t>());
  return Axes(axes.cast<std::vector<int64_t>>());
}

py::tuple shapeTuple(const Shape &shape) {
  py::tuple tuple(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    tuple[i] = shape[i];
  return tuple;
}
} // namespace

// Each op takes Python values and records at the caller's Python line.
#define KILN_BIND_BINARY(NAME)                                                 \
  m.def(#NAME, [](py::handle lhs, py::handle rhs) {                            \
    SourceLoc loc = callerLocation();                                          \
    return kiln::NAME(toOperand(lhs, loc), toOperand(rhs, loc), loc);          \
  })
#define KILN_BIND_UNARY(NAME)                                                  \
  m.def(#NAME, [](py::handle x) {                                              \
    SourceLoc loc = callerLocation();                                          \
    return kiln::NAME(toTensor(x, loc), loc);                                  \
  })

void kiln::python::bindTracer(py::module_ &m) {
  py::class_<Tensor>(m, "Tensor", py::dynamic_attr(),
                     "A traced array: stands for a value of the program "
                     "being traced, with a static shape and dtype.")
      .def_property_readonly("shape",
                             [](const Tensor &t) { return shapeTuple(t.shape()); })
      .def_property_readonly("dtype_code",
                             [](const Tensor &t) {
                               return static_cast<int>(t.dtype());
                             })
      .def_property_readonly("ndim", &Tensor::rank)
      .def_property_readonly("size", &Tensor::numel);

  m.def("set_package_directory", &setPackageDirectory);
  m.def("is_tracing", &isTracing,
        "True while a function is being traced on this thread.");
  m.def(
      "caller_location",
      []() -> py::object {
        SourceLoc loc = callerLocation();
        if (!loc.known())
          return py::none();
        return py::make_tuple(std::string(loc.file), loc.line);
      },
      "(file, line) of the innermost frame outside the kiln package.");
  m.def("traced_dtypes", []() {
    py::list list;
    for (const ElementTypeInfo &info : kElementTypes)
      if (info.traced && DTypeTable::get().hasNumpyType(
                             static_cast<kiln_dtype_t>(info.type)))
        list.append(py::make_tuple(static_cast<int>(info.type),
                                   DTypeTable::get().numpy(
                                       static_cast<kiln_dtype_t>(info.type))));
    return list;
  });

  // Constants.
  m.def("constant", [](py::handle value) {
    return toTensor(value, callerLocation());
  });
  m.def("full", [](const Shape &shape, py::handle value, int code) {
    SourceLoc loc = callerLocation();
    Operand operand = toOperand(value, loc);
    if (operand.isTensor())
      throw py::type_error("the fill value must be a Python number");
    return full(shape, operand.scalar(), dtypeFromCode(code), loc);
  });
  m.def("iota", [](const Shape &shape, int64_t axis, int code) {
    return iota(shape, axis, dtypeFromCode(code), callerLocation());
  });

  // Elementwise.
  KILN_BIND_BINARY(add);
  KILN_BIND_BINARY(sub);
  KILN_BIND_BINARY(mul);
  KILN_BIND_BINARY(div);
  KILN_BIND_BINARY(maximum);
  KILN_BIND_BINARY(minimum);
  KILN_BIND_BINARY(pow);
  KILN_BIND_BINARY(equal);
  KILN_BIND_BINARY(not_equal);
  KILN_BIND_BINARY(less);
  KILN_BIND_BINARY(less_equal);
  KILN_BIND_BINARY(greater);
  KILN_BIND_BINARY(greater_equal);
  KILN_BIND_BINARY(logical_and);
  KILN_BIND_BINARY(logical_or);
  KILN_BIND_BINARY(rem);
  KILN_BIND_BINARY(bitwise_and);
  KILN_BIND_BINARY(bitwise_or);
  KILN_BIND_BINARY(bitwise_xor);
  KILN_BIND_BINARY(shift_left);
  KILN_BIND_BINARY(shift_right_logical);
  KILN_BIND_BINARY(shift_right_arithmetic);
  KILN_BIND_UNARY(bitwise_not);
  KILN_BIND_UNARY(erf_inv);
  KILN_BIND_UNARY(neg);
  KILN_BIND_UNARY(abs);
  KILN_BIND_UNARY(relu);
  KILN_BIND_UNARY(exp);
  KILN_BIND_UNARY(log);
  KILN_BIND_UNARY(sqrt);
  KILN_BIND_UNARY(rsqrt);
  KILN_BIND_UNARY(tanh);
  KILN_BIND_UNARY(sigmoid);
  KILN_BIND_UNARY(sin);
  KILN_BIND_UNARY(cos);
  KILN_BIND_UNARY(erf);
  KILN_BIND_UNARY(floor);
  KILN_BIND_UNARY(ceil);
  KILN_BIND_UNARY(round);
  KILN_BIND_UNARY(tan);
  KILN_BIND_UNARY(asin);
  KILN_BIND_UNARY(acos);
  KILN_BIND_UNARY(atan);
  KILN_BIND_UNARY(sinh);
  KILN_BIND_UNARY(cosh);
  KILN_BIND_UNARY(asinh);
  KILN_BIND_UNARY(acosh);
  KILN_BIND_UNARY(atanh);
  KILN_BIND_UNARY(sign);
  KILN_BIND_UNARY(logical_not);
  m.def("cast", [](py::handle x, int code) {
    SourceLoc loc = callerLocation();
    return cast(toTensor(x, loc), dtypeFromCode(code), loc);
  });
  m.def("bitcast_convert_type", [](py::handle x, int code) {
    SourceLoc loc = callerLocation();
    return bitcast_convert_type(toTensor(x, loc), dtypeFromCode(code), loc);
  });
  m.def("where", [](py::handle pred, py::handle onTrue, py::handle onFalse) {
    SourceLoc loc = callerLocation();
    return where(toTensor(pred, loc), toOperand(onTrue, loc),
                 toOperand(onFalse, loc), loc);
  });

  // Shapes.
  m.def("reshape", [](py::handle x, const Shape &shape) {
    SourceLoc loc = callerLocation();
    return reshape(toTensor(x, loc), shape, loc);
  });
  m.def("transpose", [](py::handle x, const std::vector<int64_t> &perm) {
    SourceLoc loc = callerLocation();
    return transpose(toTensor(x, loc), perm, loc);
  });
  m.def("slice", [](py::handle x, const std::vector<int64_t> &start,
                    const std::vector<int64_t> &limit,
                    const std::vector<int64_t> &stride) {
    SourceLoc loc = callerLocation();
    return slice(toTensor(x, loc), start, limit, stride, loc);
  });
  m.def("concat", [](py::handle xs, int64_t axis) {
    SourceLoc loc = callerLocation();
    return concat(toTensors(xs, loc), axis, loc);
  });
  m.def("broadcast_to", [](py::handle x, const Shape &shape) {
    SourceLoc loc = callerLocation();
    return broadcast_to(toTensor(x, loc), shape, loc);
  });
  using Ints = std::vector<int64_t>;
  m.def("conv", [](py::handle input, py::handle weight, Ints strides,
                   Ints low, Ints high, Ints lhsDilation, Ints rhsDilation,
                   int64_t groups) {
    SourceLoc loc = callerLocation();
    ConvOptions options{strides, low, high, lhsDilation, rhsDilation, groups};
    return conv_general_dilated(toTensor(input, loc), toTensor(weight, loc),
                                options, loc);
  });
  m.def("reduce_window", [](py::handle x, bool max, Ints window, Ints strides,
                            Ints low, Ints high, Ints dilations) {
    SourceLoc loc = callerLocation();
    WindowOptions options{strides, low, high, dilations};
    return reduce_window(toTensor(x, loc),
                         max ? WindowKind::Max : WindowKind::Sum, window,
                         options, loc);
  });
  m.def("gather", [](py::handle table, py::handle indices) {
    SourceLoc loc = callerLocation();
    return gather(toTensor(table, loc), toTensor(indices, loc), loc);
  });
  m.def("scatter_add",
        [](py::handle table, py::handle indices, py::handle updates) {
          SourceLoc loc = callerLocation();
          return scatter_add(toTensor(table, loc), toTensor(indices, loc),
                             toTensor(updates, loc), loc);
        });

  // Reductions and contractions.
  m.def("sum", [](py::handle x, py::handle axes, bool keepdims) {
    SourceLoc loc = callerLocation();
    return sum(toTensor(x, loc), axesFrom(axes), keepdims, loc);
  });
  m.def("max", [](py::handle x, py::handle axes, bool keepdims) {
    SourceLoc loc = callerLocation();
    return max(toTensor(x, loc), axesFrom(axes), keepdims, loc);
  });
  m.def("mean", [](py::handle x, py::handle axes, bool keepdims) {
    SourceLoc loc = callerLocation();
    return mean(toTensor(x, loc), axesFrom(axes), keepdims, loc);
  });
  m.def("argmax", [](py::handle x, int64_t axis, bool last) {
    SourceLoc loc = callerLocation();
    return argmax(toTensor(x, loc), axis, last, loc);
  });
  m.def("argmin", [](py::handle x, int64_t axis, bool last) {
    SourceLoc loc = callerLocation();
    return argmin(toTensor(x, loc), axis, last, loc);
  });
  m.def("sort", [](py::handle x, int64_t axis, bool descending) {
    SourceLoc loc = callerLocation();
    auto [values, indices] = sort(toTensor(x, loc), axis, descending, loc);
    return py::make_tuple(values, indices);
  });
  // Collectives (kiln/Tracer/Collectives.h); kiln.distributed wraps them.
  auto reductionOf = [](const std::string &name) {
    if (name == "sum")
      return Reduction::Sum;
    if (name == "max")
      return Reduction::Max;
    if (name == "min")
      return Reduction::Min;
    if (name == "mean")
      return Reduction::Mean;
    throw py::value_error("a collective reduction is 'sum', 'max', 'min' or "
                          "'mean', not '" + name + "'");
  };
  using Rows = std::vector<std::vector<int64_t>>;
  m.def("all_reduce", [=](py::handle x, const std::string &op, Rows groups) {
    SourceLoc loc = callerLocation();
    return all_reduce(toTensor(x, loc), reductionOf(op), ReplicaGroups(groups),
                      loc);
  });
  m.def("all_gather", [](py::handle x, int64_t axis, Rows groups) {
    SourceLoc loc = callerLocation();
    return all_gather(toTensor(x, loc), axis, ReplicaGroups(groups), loc);
  });
  m.def("reduce_scatter",
        [=](py::handle x, const std::string &op, int64_t axis, Rows groups) {
          SourceLoc loc = callerLocation();
          return reduce_scatter(toTensor(x, loc), reductionOf(op), axis,
                                ReplicaGroups(groups), loc);
        });
  m.def("broadcast_from", [](py::handle x, int64_t root, Rows groups) {
    SourceLoc loc = callerLocation();
    return broadcast_from(toTensor(x, loc), root, ReplicaGroups(groups), loc);
  });
  m.def("all_to_all", [](py::handle x, int64_t splitAxis, int64_t concatAxis,
                         Rows groups) {
    SourceLoc loc = callerLocation();
    return all_to_all(toTensor(x, loc), splitAxis, concatAxis,
                      ReplicaGroups(groups), loc);
  });
  m.def("collective_permute",
        [](py::handle x, std::vector<std::pair<int64_t, int64_t>> pairs,
           int64_t ranks) {
          SourceLoc loc = callerLocation();
          return collective_permute(toTensor(x, loc), pairs, ranks, loc);
        });
  m.def("rank_index", [] { return rank_index(callerLocation()); });

  m.def("cumsum", [](py::handle x, int64_t axis, bool exclusive,
                     bool reverse) {
    SourceLoc loc = callerLocation();
    return cumsum(toTensor(x, loc), axis, exclusive, reverse, loc);
  });
  m.def("matmul", [](py::handle lhs, py::handle rhs) {
    SourceLoc loc = callerLocation();
    return matmul(toTensor(lhs, loc), toTensor(rhs, loc), loc);
  });
  m.def("softmax", [](py::handle x, int64_t axis) {
    SourceLoc loc = callerLocation();
    return softmax(toTensor(x, loc), axis, loc);
  });
  m.def("log_softmax", [](py::handle x, int64_t axis) {
    SourceLoc loc = callerLocation();
    return log_softmax(toTensor(x, loc), axis, loc);
  });
  m.def("scaled_dot_product_attention",
        [](py::handle query, py::handle key, py::handle value,
           py::handle mask, bool causal, std::optional<double> scale) {
          SourceLoc loc = callerLocation();
          return scaled_dot_product_attention(
              toTensor(query, loc), toTensor(key, loc), toTensor(value, loc),
              mask.is_none() ? Tensor() : toTensor(mask, loc), causal, scale,
              loc);
        });

  // Control flow: regions are Python callables on lists of tensors.
  m.def("cond", [](py::handle pred, py::function thenFn, py::function elseFn,
                   py::handle operands) {
    SourceLoc loc = callerLocation();
    return toList(detail::condImpl(toTensor(pred, loc), regionFn(thenFn),
                                   regionFn(elseFn), toTensors(operands, loc),
                                   loc));
  });
  m.def("while_loop", [](py::function condFn, py::function bodyFn,
                         py::handle init) {
    SourceLoc loc = callerLocation();
    detail::PredicateFn predicate = [condFn](const Tensors &args) {
      SourceLoc inner = callerLocation();
      return toTensor(condFn(toList(args)), inner);
    };
    return toList(detail::whileImpl(predicate, regionFn(bodyFn),
                                    toTensors(init, loc), loc));
  });
  m.def("fori_loop", [](int64_t lo, int64_t hi, py::function bodyFn,
                        py::handle init) {
    SourceLoc loc = callerLocation();
    detail::LoopBodyFn body = [bodyFn](const Tensor &index,
                                       const Tensors &carry) {
      py::object result = bodyFn(py::cast(index), toList(carry));
      return toTensors(result, callerLocation());
    };
    return toList(detail::foriImpl(lo, hi, body, toTensors(init, loc), loc));
  });
  m.def("scan", [](py::function fn, py::handle init, py::handle xs,
                   int64_t length) {
    SourceLoc loc = callerLocation();
    detail::ScanFn step = [fn](const Tensors &carry, const Tensors &x) {
      py::tuple result = fn(toList(carry), toList(x));
      SourceLoc inner = callerLocation();
      return std::make_pair(toTensors(result[0], inner),
                            toTensors(result[1], inner));
    };
    ScanResult result =
        detail::scanImpl(step, toTensors(init, loc), toTensors(xs, loc),
                         length, loc);
    return py::make_tuple(toList(result.carry), toList(result.ys));
  });

  // kiln::checkpoint: fn recorded so that a gradient recomputes it.
  m.def("checkpoint", [](py::function fn, py::handle args) {
    SourceLoc loc = callerLocation();
    CheckpointFunction transform(regionFn(fn), loc);
    return toList(transform(toTensors(args, loc)));
  });
  // kiln::vmap: one axis per argument (None: not mapped) and one per
  // output, or a single one for every output.
  m.def("vmap", [](py::function fn, BatchAxes inAxes, BatchAxes outAxes,
                   py::handle args) {
    SourceLoc loc = callerLocation();
    VmapFunction transform(regionFn(fn), std::move(inAxes),
                           std::move(outAxes), loc);
    return toList(transform(toTensors(args, loc)));
  });
  // Transforms: kind 0 grad, 1 value_and_grad, 2 vjp, 3 jvp
  // (kiln::GradKind); `second` holds vjp's cotangents or jvp's tangents.
  m.def("transform", [](int kind, py::function fn, std::vector<int> argnums,
                        py::handle args, py::handle second) {
    SourceLoc loc = callerLocation();
    if (kind < 0 || kind > 3)
      throw py::value_error("unknown transform kind");
    GradFunction transform(static_cast<GradKind>(kind), regionFn(fn),
                           std::move(argnums), loc);
    Tensors primals = toTensors(args, loc);
    if (transform.kind() == GradKind::Vjp || transform.kind() == GradKind::Jvp)
      return toList(transform(primals, toTensors(second, loc)));
    return toList(transform(primals));
  });
}
