//===- RandomBindings.cpp - kiln/Tracer/Random.h for kiln.random ----------===//
//
// Binds the random functions of kiln/Tracer/Random.h as the module's
// random_* functions; kiln.random gives them JAX's signatures, checks
// shapes and dtypes in Python terms and runs them outside a trace. Keys
// arrive as anything toTensor takes (a numpy uint32 array outside a trace).
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "kiln/Tracer/Random.h"

#include <pybind11/stl.h>

using namespace kiln;
using namespace kiln::python;

void kiln::python::bindRandom(py::module_ &m) {
  m.def("random_key", [](py::handle seed) {
    SourceLoc loc = callerLocation();
    if (PyLong_CheckExact(seed.ptr())) {
      Operand operand = toOperand(seed, loc);
      return random::key(operand.scalar().asInt(), loc);
    }
    return random::key(toTensor(seed, loc), loc);
  });
  m.def("random_split", [](py::handle key, int64_t num) {
    SourceLoc loc = callerLocation();
    return random::split(toTensor(key, loc), num, loc);
  });
  m.def("random_fold_in", [](py::handle key, py::handle data) {
    SourceLoc loc = callerLocation();
    return random::fold_in(toTensor(key, loc), toOperand(data, loc), loc);
  });
  m.def("random_per_rank", [](py::handle key) {
    SourceLoc loc = callerLocation();
    return random::per_rank(toTensor(key, loc), loc);
  });
  m.def("random_bits", [](py::handle key, const Shape &shape) {
    SourceLoc loc = callerLocation();
    return random::bits(toTensor(key, loc), shape, loc);
  });
  m.def("random_uniform", [](py::handle key, const Shape &shape, int code,
                             py::handle minval, py::handle maxval) {
    SourceLoc loc = callerLocation();
    return random::uniform(toTensor(key, loc), shape, dtypeFromCode(code),
                           toOperand(minval, loc), toOperand(maxval, loc),
                           loc);
  });
  m.def("random_normal", [](py::handle key, const Shape &shape, int code) {
    SourceLoc loc = callerLocation();
    return random::normal(toTensor(key, loc), shape, dtypeFromCode(code), loc);
  });
  m.def("random_gumbel", [](py::handle key, const Shape &shape, int code) {
    SourceLoc loc = callerLocation();
    return random::gumbel(toTensor(key, loc), shape, dtypeFromCode(code), loc);
  });
  m.def("random_truncated_normal",
        [](py::handle key, py::handle lower, py::handle upper,
           std::optional<Shape> shape, int code) {
          SourceLoc loc = callerLocation();
          return random::truncated_normal(
              toTensor(key, loc), toOperand(lower, loc),
              toOperand(upper, loc), shape, dtypeFromCode(code), loc);
        });
  m.def("random_exponential", [](py::handle key, const Shape &shape,
                                 int code) {
    SourceLoc loc = callerLocation();
    return random::exponential(toTensor(key, loc), shape, dtypeFromCode(code),
                               loc);
  });
  m.def("random_gamma", [](py::handle key, py::handle a,
                           std::optional<Shape> shape, int code, bool log) {
    SourceLoc loc = callerLocation();
    auto draw = log ? random::loggamma : random::gamma;
    return draw(toTensor(key, loc), toOperand(a, loc), shape,
                dtypeFromCode(code), loc);
  });
  m.def("random_beta", [](py::handle key, py::handle a, py::handle b,
                          std::optional<Shape> shape, int code) {
    SourceLoc loc = callerLocation();
    return random::beta(toTensor(key, loc), toOperand(a, loc),
                        toOperand(b, loc), shape, dtypeFromCode(code), loc);
  });
  m.def("random_dirichlet", [](py::handle key, py::handle alpha,
                               std::optional<Shape> shape, int code) {
    SourceLoc loc = callerLocation();
    return random::dirichlet(toTensor(key, loc), toTensor(alpha, loc), shape,
                             dtypeFromCode(code), loc);
  });
  m.def("random_randint", [](py::handle key, const Shape &shape,
                             py::handle minval, py::handle maxval, int code) {
    SourceLoc loc = callerLocation();
    return random::randint(toTensor(key, loc), shape, toOperand(minval, loc),
                           toOperand(maxval, loc), dtypeFromCode(code), loc);
  });
  m.def("random_bernoulli", [](py::handle key, py::handle p,
                               std::optional<Shape> shape) {
    SourceLoc loc = callerLocation();
    return random::bernoulli(toTensor(key, loc), toOperand(p, loc), shape,
                             loc);
  });
  m.def("random_categorical", [](py::handle key, py::handle logits,
                                 int64_t axis, std::optional<Shape> shape) {
    SourceLoc loc = callerLocation();
    return random::categorical(toTensor(key, loc), toTensor(logits, loc), axis,
                               shape, loc);
  });
  m.def("random_permutation", [](py::handle key, py::handle x, int64_t axis) {
    SourceLoc loc = callerLocation();
    if (PyLong_CheckExact(x.ptr()))
      return random::permutation(toTensor(key, loc),
                                 toOperand(x, loc).scalar().asInt(), loc);
    return random::permutation(toTensor(key, loc), toTensor(x, loc), axis,
                               loc);
  });
}
