//===- GradErrorTest.cpp - Mistakes in using kiln::grad are TraceErrors ---===//

#include "kiln/Grad.h"
#include "kiln/Vmap.h"
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <string>

using namespace kiln;

namespace {

Tensor loss(const Tensor &w, const Tensor &x) { return sum(tanh(w * x)); }

/// Traces `fn` on two f32[3] inputs and returns the TraceError message.
template <typename F> std::string traceError(F &&fn) {
  try {
    trace("f", {f32({3}), f32({3})}, std::forward<F>(fn));
  } catch (const TraceError &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a TraceError";
  return "";
}

TEST(GradError, ArgnumOutOfRange) {
  std::string m = traceError(grad(loss, {2}));
  EXPECT_NE(m.find("argnum 2 is out of range; the function has 2 inputs"),
            std::string::npos)
      << m;
  m = traceError(grad(loss, {-1}));
  EXPECT_NE(m.find("argnum -1 is out of range"), std::string::npos) << m;
}

TEST(GradError, ArgnumRepeatedOrMissing) {
  std::string m = traceError(value_and_grad(loss, {1, 1}));
  EXPECT_NE(m.find("kiln::value_and_grad: argnum 1 is given twice"),
            std::string::npos)
      << m;
  m = traceError(grad(loss, {}));
  EXPECT_NE(m.find("needs at least one argnum"), std::string::npos) << m;
}

TEST(GradError, IntegerInputHasNoGradient) {
  try {
    trace("f", {f32({3}), TensorSpec{DType::I32, {3}, "n"}},
          grad([](const Tensor &w, const Tensor &n) {
            return sum(w * cast(n, DType::F32));
          }, {1}));
    FAIL() << "expected a TraceError";
  } catch (const TraceError &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "argnum 1 is input arg1: i32[3], which is not a float tensor"),
              std::string::npos)
        << e.what();
  }
}

TEST(GradError, LossMustBeARank0Float) {
  std::string m = traceError(
      grad([](const Tensor &w, const Tensor &x) { return tanh(w * x); }));
  EXPECT_NE(m.find("kiln::grad needs a function returning one rank-0 float "
                   "tensor (a loss); this one returns out0: f32[3]"),
            std::string::npos)
      << m;
  m = traceError(grad([](const Tensor &w, const Tensor &x) {
    return cast(sum(w * x), DType::I32);
  }));
  EXPECT_NE(m.find("this one returns out0: i32[]"), std::string::npos) << m;
  m = traceError(value_and_grad([](const Tensor &w, const Tensor &x) {
    return Tensors{sum(w), sum(x)};
  }));
  EXPECT_NE(m.find("kiln::value_and_grad needs a function returning one "
                   "rank-0 float"),
            std::string::npos)
      << m;
}

TEST(GradError, VjpChecksCotangents) {
  auto f = [](const Tensor &w, const Tensor &x) { return tanh(w * x); };
  std::string m = traceError([&](const Tensor &w, const Tensor &x) {
    return vjp(f)({w, x}, {sum(x)});
  });
  EXPECT_NE(m.find("kiln::vjp: the cotangent of output 'out0' must be "
                   "f32[3], got f32[]"),
            std::string::npos)
      << m;
  m = traceError([&](const Tensor &w, const Tensor &x) {
    return vjp(f)({w, x}, {});
  });
  EXPECT_NE(m.find("kiln::vjp: expected 3 arguments, got 2"),
            std::string::npos)
      << m;
  m = traceError([&](const Tensor &w, const Tensor &x) {
    return vjp([](const Tensor &a, const Tensor &) {
      return cast(a, DType::I32);
    })({w, x}, {});
  });
  EXPECT_NE(m.find("the function has no float output"), std::string::npos)
      << m;
  m = traceError([&](const Tensor &w, const Tensor &x) {
    return vjp(f)({w, x});
  });
  EXPECT_NE(m.find("called with two lists, (primals, cotangents)"),
            std::string::npos)
      << m;
}

TEST(GradError, JvpChecksTangents) {
  auto f = [](const Tensor &w, const Tensor &x) { return tanh(w * x); };
  std::string m = traceError([&](const Tensor &w, const Tensor &x) {
    return jvp(f, {1})({w, x}, {sum(x)});
  });
  EXPECT_NE(m.find("kiln::jvp: the tangent of input 1 ('arg1') must be "
                   "f32[3], got "
                   "f32[]"),
            std::string::npos)
      << m;
  m = traceError([&](const Tensor &w, const Tensor &x) {
    return jvp(f, {0, 1})({w, x}, {x});
  });
  EXPECT_NE(m.find("kiln::jvp: expected 4 arguments, got 3"),
            std::string::npos)
      << m;
  m = traceError([&](const Tensor &w, const Tensor &x) {
    return jvp(f)({w, x});
  });
  EXPECT_NE(m.find("called with two lists, (primals, tangents)"),
            std::string::npos)
      << m;
}

TEST(GradError, VmapChecksAxesAndSizes) {
  auto f = [](const Tensor &w, const Tensor &x) { return w * x; };
  std::string m = traceError([&](const Tensor &w, const Tensor &x) {
    return vmap(f, {0, 1})({w, x});
  });
  EXPECT_NE(m.find("kiln::vmap: in axis 1 of argument 1 (shape [3]) is out "
                   "of range"),
            std::string::npos)
      << m;
  m = traceError([&](const Tensor &w, const Tensor &x) {
    return vmap(f, {std::nullopt, std::nullopt})({w, x});
  });
  EXPECT_NE(m.find("no argument is mapped"), std::string::npos) << m;
  m = traceError([&](const Tensor &w, const Tensor &x) {
    return vmap(f, {0})({w, x});
  });
  EXPECT_NE(m.find("kiln::vmap: 1 in axes for 2 arguments"),
            std::string::npos)
      << m;
  m = traceError([&](const Tensor &w, const Tensor &x) {
    return vmap(f, {0, 0})({w, slice(x, {0}, {2}, {})});
  });
  EXPECT_NE(m.find("kiln::vmap: the mapped arguments have batch sizes"),
            std::string::npos)
      << m;
}

TEST(GradError, OutsideATrace) {
  try {
    grad(loss)({});
    FAIL() << "expected a TraceError";
  } catch (const TraceError &e) {
    EXPECT_NE(std::string(e.what()).find("kiln::grad was called outside "
                                         "kiln::trace"),
              std::string::npos)
        << e.what();
  }
}

TEST(GradError, TensorOfAFinishedTraceIsRejected) {
  // Closures over the enclosing trace are captured; a tensor kept from a
  // trace that has finished is not.
  Tensor stale;
  trace("first", {f64({3})}, [&](const Tensor &x) {
    stale = x;
    return x;
  });
  std::string m = traceError([&](const Tensor &w, const Tensor &) {
    return grad([&](const Tensor &v) { return sum(v * stale); })({w});
  });
  EXPECT_NE(m.find("already finished"), std::string::npos) << m;
}

TEST(GradError, WrongArityOfTheWrappedFunction) {
  std::string m = traceError([](const Tensor &w, const Tensor &) {
    return grad(loss)({w});
  });
  EXPECT_NE(m.find("the traced function takes 2"), std::string::npos) << m;
}

} // namespace
