//===- Tensor.cpp - Symbolic tensors and concretization errors ------------===//
//
// A traced Tensor has a shape and a dtype but no elements. Anything that
// needs the elements at trace time (a C++ `if` on a tensor, reading a value)
// is a concretization error, reported like JAX's ConcretizationTypeError
// with the primitives that express the intent inside the graph.
//
//===----------------------------------------------------------------------===//

#include "kiln/Tracer/Tensor.h"

#include <sstream>

namespace kiln {

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

Tensor Tensor::named(std::string name) const {
  Tensor copy = *this;
  copy.outputName = std::move(name);
  return copy;
}

/// `f32[3,4]`, or a note that the handle is empty.
static std::string describe(const Tensor &tensor) {
  if (!tensor.defined())
    return "an empty kiln::Tensor";
  return std::string("a traced ") + dtypeName(tensor.dtype()) +
         shapeString(tensor.shape()) + " tensor";
}

double Tensor::item(SourceLoc loc) const {
  throw TraceError(
      loc, "cannot read the value of " + describe(*this) +
               " while tracing: it is symbolic, its elements exist only when "
               "the compiled function runs. Compute with tensor ops instead "
               "(kiln::where, kiln::cond, kiln::while_loop for decisions), "
               "and return the tensor as an output to read it");
}

Tensor::operator bool() const {
  throw TraceError(
      SourceLoc(),
      "cannot convert " + describe(*this) +
          " to a C++ bool while tracing (e.g. `if (x > 0)`, `while (err > "
          "tol)`, `a && b`, `!a`): its value is not known until the compiled "
          "function runs. Use kiln::cond for a branch, kiln::where for an "
          "elementwise choice, kiln::while_loop for a loop whose trip count "
          "depends on tensor values, and kiln::logical_and/logical_or/"
          "logical_not (or `&`, `|`, `~`) to combine conditions");
}

Tensor::operator double() const {
  throw TraceError(SourceLoc(),
                   "cannot convert " + describe(*this) +
                       " to a C++ number while tracing: its value is not "
                       "known until the compiled function runs. Keep "
                       "computing with tensor ops and return it as an output");
}

std::string Scalar::str() const {
  switch (kind) {
  case Kind::Bool:
    return intValue ? "true" : "false";
  case Kind::Int:
    return std::to_string(intValue);
  case Kind::Float: {
    std::ostringstream os;
    os.precision(17);
    os << floatValue;
    return os.str();
  }
  }
  return "";
}

} // namespace kiln
