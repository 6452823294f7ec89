//===- Tensor.h - Symbolic tensors of a trace -------------------*- C++ -*-===//
//
// A kiln::Tensor is a symbolic value: during kiln::trace it stands for the
// result of an op in the function being recorded, not for numbers. Its shape
// and dtype are static and known at trace time; its elements are not, which
// is why converting a Tensor to a C++ bool or double throws.
//
// Scalar and Operand let C++ numbers appear wherever a tensor operand is
// expected (`x * 2.0`, `kiln::where(m, x, 0)`), and Axes lets reductions take
// one axis, a list, or all of them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_TENSOR_H
#define KILN_TRACER_TENSOR_H

#include "kiln/Tracer/DType.h"
#include "kiln/Tracer/SourceLoc.h"
#include "kiln/Tracer/TraceError.h"

#include "mlir/IR/Value.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {

namespace detail {
class TraceState;
} // namespace detail

/// A symbolic tensor of the trace being recorded.
///
/// Tensors are cheap handles (copying one copies a reference to its trace).
/// A Tensor is only usable while its trace is being recorded, on the thread
/// recording it, and (inside a control-flow region) while the region that
/// created it is still open; any other use throws TraceError.
class Tensor {
public:
  /// An empty handle; every operation on it throws TraceError. Exists so
  /// that Tensors can be declared before they are assigned.
  Tensor() = default;

  /// True unless default-constructed.
  bool defined() const { return state != nullptr; }

  /// The static shape. Stays readable after the trace has finished.
  const Shape &shape() const { return dims; }
  DType dtype() const { return elementType; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  /// Number of elements (1 for rank 0).
  int64_t numel() const;

  /// The SSA value this tensor stands for, in the region that created it.
  /// Only meaningful while the trace is being recorded.
  mlir::Value value() const { return handle; }

  /// A copy that names the function output it becomes, when returned from
  /// the traced function (the `kiln.name` result attribute). Unnamed
  /// outputs are called out0, out1, ...
  Tensor named(std::string outputName) const;
  const std::string &name() const { return outputName; }

  /// Always throws: a traced tensor has no value yet. Reading an element
  /// would need the program to have run, so the error suggests expressing
  /// the computation with tensor ops instead.
  [[noreturn]] double item(SourceLoc loc = SourceLoc::current()) const;

  /// Always throws, like item(). Catches `if (x > 0)` and `while (err > tol)`
  /// on tensors, which would otherwise silently bake one branch into the
  /// graph; the message points to kiln::cond, kiln::where and
  /// kiln::while_loop.
  [[noreturn]] explicit operator bool() const;
  /// Always throws, like item().
  [[noreturn]] explicit operator double() const;

private:
  friend class detail::TraceState;

  std::shared_ptr<detail::TraceState> state;
  mlir::Value handle;
  /// Identifies the block (function body or region) that defines `handle`.
  uint64_t frame = 0;
  Shape dims;
  DType elementType = DType::F32;
  std::string outputName;
};

/// The tensors a function or region takes or returns.
using Tensors = std::vector<Tensor>;

/// A C++ number used as an operand. Its dtype is weak: it adopts the dtype
/// of the tensor it is combined with (see docs/tracer.md, "Promotion").
class Scalar {
public:
  enum class Kind { Bool, Int, Float };

  template <typename T,
            std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T value) {
    if constexpr (std::is_same_v<T, bool>) {
      kind = Kind::Bool;
      cppType = DType::I1;
      intValue = value ? 1 : 0;
      floatValue = intValue;
    } else if constexpr (std::is_integral_v<T>) {
      kind = Kind::Int;
      cppType = sizeof(T) <= 4 ? DType::I32 : DType::I64;
      intValue = static_cast<int64_t>(value);
      floatValue = static_cast<double>(value);
    } else {
      kind = Kind::Float;
      cppType = sizeof(T) <= 4 ? DType::F32 : DType::F64;
      floatValue = static_cast<double>(value);
      intValue = 0;
    }
  }

  Kind getKind() const { return kind; }
  /// The dtype of the C++ type the scalar was written as: bool -> i1,
  /// integers of up to 32 bits -> i32, 64-bit integers -> i64, float ->
  /// f32, double -> f64. Used where a scalar stands alone (constant());
  /// in expressions with tensors, only getKind() matters.
  DType getCppDType() const { return cppType; }
  bool isFloat() const { return kind == Kind::Float; }
  double asDouble() const { return floatValue; }
  /// The integer value; only meaningful for Bool and Int scalars.
  int64_t asInt() const { return intValue; }

  /// E.g. `2.5`, `3`, `true`, for messages.
  std::string str() const;

private:
  Kind kind;
  DType cppType;
  double floatValue;
  int64_t intValue;
};

/// Either a Tensor or a Scalar, plus the source position of the expression
/// it appears in. Operators take Operands so that `x + 1`, `1 + x` and
/// `x + y` share one implementation; the position comes from the default
/// argument of the implicit conversion, which C++ evaluates at the
/// operator's call site (operators cannot have default arguments of their
/// own).
class Operand {
public:
  Operand(const Tensor &tensor, SourceLoc loc = SourceLoc::current())
      : tensorValue(tensor), scalarValue(0), isTensorValue(true), loc(loc) {}

  template <typename T,
            std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Operand(T value, SourceLoc loc = SourceLoc::current())
      : scalarValue(value), isTensorValue(false), loc(loc) {}

  bool isTensor() const { return isTensorValue; }
  const Tensor &tensor() const { return tensorValue; }
  const Scalar &scalar() const { return scalarValue; }
  SourceLoc location() const { return loc; }

private:
  Tensor tensorValue;
  Scalar scalarValue;
  bool isTensorValue;
  SourceLoc loc;
};

/// The axes a reduction or normalization works on: one axis (`1`, `-1`), a
/// list (`{0, 2}`), or all of them (`Axes::all()`, the default). Negative
/// axes count from the end.
class Axes {
public:
  Axes(int axis) : list{axis} {}
  Axes(int64_t axis) : list{axis} {}
  Axes(std::initializer_list<int64_t> axes) : list(axes) {}
  Axes(std::vector<int64_t> axes) : list(std::move(axes)) {}

  static Axes all() {
    Axes axes{std::vector<int64_t>{}};
    axes.everything = true;
    return axes;
  }

  bool isAll() const { return everything; }
  const std::vector<int64_t> &values() const { return list; }

private:
  std::vector<int64_t> list;
  bool everything = false;
};

} // namespace kiln

#endif // KILN_TRACER_TENSOR_H
