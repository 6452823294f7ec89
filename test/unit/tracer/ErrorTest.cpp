//===- ErrorTest.cpp - Trace-time errors and exception safety -------------===//
//
// Mistakes a trace can detect throw kiln::TraceError naming the user's line;
// tensors cannot be used as C++ values, outside their trace, or outside the
// region that created them; and a trace that throws, in the middle of a
// region or not, leaves either a usable trace (if the user catches inside
// the traced function) or nothing at all.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include <stdexcept>

using kiln::DType;
using kiln::Tensor;
using kiln::Tensors;
using namespace tracertest;

namespace {

/// `file:line` of a line in this file, as it appears in error messages.
std::string here(int line) { return std::string(__FILE__) + ":" + std::to_string(line) + ":"; }

/// Traces a function of one f32[2,3] and one f32[4] input whose body is
/// `body`, expecting a TraceError; returns its message.
std::string traceError(const std::function<void(const Tensor &, const Tensor &)> &body) {
  return expectTraceError([&] {
    kiln::trace("bad", {kiln::f32({2, 3}), kiln::f32({4})},
                [&](const Tensor &x, const Tensor &y) {
                  body(x, y);
                  return x;
                });
  });
}

TEST(Concretization, IfOnTensorThrows) {
  std::string message = traceError([](const Tensor &x, const Tensor &) {
    if (kiln::sum(x) > 0) // a C++ branch on a traced value
      (void)kiln::exp(x);
  });
  EXPECT_NE(message.find("C++ bool"), std::string::npos) << message;
  EXPECT_NE(message.find("kiln::cond"), std::string::npos) << message;
  EXPECT_NE(message.find("kiln::where"), std::string::npos) << message;
  EXPECT_NE(message.find("kiln::while_loop"), std::string::npos) << message;
}

TEST(Concretization, ReadingAValueThrows) {
  int line = 0;
  std::string message = traceError([&](const Tensor &x, const Tensor &) {
    line = __LINE__ + 1;
    (void)kiln::sum(x).item();
  });
  EXPECT_NE(message.find(here(line)), std::string::npos) << message;
  EXPECT_NE(message.find("symbolic"), std::string::npos) << message;

  message = traceError([](const Tensor &x, const Tensor &) {
    (void)static_cast<double>(kiln::sum(x));
  });
  EXPECT_NE(message.find("C++ number"), std::string::npos) << message;

  message = traceError([](const Tensor &x, const Tensor &) {
    Tensor a = kiln::sum(x) > 0, b = kiln::sum(x) < 5;
    (void)(a && b);
  });
  EXPECT_NE(message.find("logical_and"), std::string::npos) << message;
}

TEST(ShapeErrors, BroadcastMismatchNamesTheUsersLine) {
  int line = 0;
  std::string message = traceError([&](const Tensor &x, const Tensor &y) {
    line = __LINE__ + 1;
    Tensor z = x + y; // [2,3] + [4]
    (void)z;
  });
  EXPECT_NE(message.find(here(line)), std::string::npos) << message;
  EXPECT_NE(message.find("cannot broadcast shapes [2,3] and [4]"),
            std::string::npos)
      << message;
}

TEST(ShapeErrors, EveryOpReportsTheCallSite) {
  struct Case {
    const char *expect;
    std::function<void(const Tensor &, const Tensor &, int &)> body;
  };
  std::vector<Case> cases = {
      {"contracting dimensions differ",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::matmul(x, x);
       }},
      {"axis 5 is out of range",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::sum(x, 5);
       }},
      {"name the same dimension twice",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::mean(x, {1, -1});
       }},
      {"cannot reshape [2,3] (6 elements) into [4,2]",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::reshape(x, {4, 2});
       }},
      {"is not a permutation",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::transpose(x, {0, 0});
       }},
      {"need 0 <= start (1) <= limit (5) <= size",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::slice(x, {0, 1}, {2, 5});
       }},
      {"incompatible with tensor #0",
       [](const Tensor &x, const Tensor &y, int &line) {
         line = __LINE__ + 1;
         (void)kiln::concat({x, y}, 0);
       }},
      {"needs integer indices",
       [](const Tensor &x, const Tensor &y, int &line) {
         line = __LINE__ + 1;
         (void)kiln::gather(x, y);
       }},
      {"kiln::scatter_add needs updates of shape [4,3] (the indices' shape, "
       "then the table's past its rows) and dtype f32, got shape [2,3]",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::scatter_add(x, kiln::iota({4}, 0, DType::I32), x);
       }},
      {"kiln::scatter_add needs integer indices, got f32",
       [](const Tensor &x, const Tensor &y, int &line) {
         line = __LINE__ + 1;
         (void)kiln::scatter_add(y, y, y);
       }},
      {"cannot broadcast [2,3] to [3]",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::broadcast_to(x, {3});
       }},
      {"not defined for bool",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)((x > 0) + (x < 1));
       }},
      {"kiln::bitwise_and needs bool or integer operands, got f32",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)(x & (x > 0));
       }},
      {"needs bool (i1) operands",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::logical_and(x, x > 0);
       }},
      {"needs a bool (i1) predicate",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::where(x, x, 0);
       }},
      {"does not fit in i32",
       [](const Tensor &x, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)(kiln::cast(x, DType::I32) + (int64_t(1) << 40));
       }},
      {"3 values given for shape [2,2]",
       [](const Tensor &, const Tensor &, int &line) {
         line = __LINE__ + 1;
         (void)kiln::constant(std::vector<float>{1, 2, 3}, {2, 2});
       }},
  };
  for (const Case &c : cases) {
    int line = 0;
    std::string message = traceError(
        [&](const Tensor &x, const Tensor &y) { c.body(x, y, line); });
    EXPECT_NE(message.find(c.expect), std::string::npos) << message;
    EXPECT_NE(message.find(here(line)), std::string::npos) << message;
  }
}

TEST(ControlFlowErrors, CondBranchesMustAgree) {
  int line = 0;
  std::string message = traceError([&](const Tensor &x, const Tensor &) {
    line = __LINE__ + 1;
    kiln::cond(kiln::sum(x) > 0, [&] { return x; },
               [&] { return kiln::cast(x, DType::I32); });
  });
  EXPECT_NE(message.find("result #0 is f32[2,3] in the then branch but "
                         "i32[2,3] in the else branch"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(here(line)), std::string::npos) << message;

  message = traceError([&](const Tensor &x, const Tensor &) {
    kiln::cond(kiln::sum(x) > 0, [&] { return Tensors{x, x}; },
               [&] { return x; });
  });
  EXPECT_NE(message.find("returns 2 values but the else branch returns 1"),
            std::string::npos)
      << message;
}

TEST(ControlFlowErrors, PredicatesMustBeRankZeroBool) {
  std::string message = traceError([](const Tensor &x, const Tensor &) {
    kiln::cond(x > 0, [&] { return x; }, [&] { return x; });
  });
  EXPECT_NE(message.find("rank-0 bool (i1) predicate, got i1[2,3]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("kiln::where"), std::string::npos) << message;

  message = traceError([](const Tensor &x, const Tensor &) {
    kiln::while_loop([](const Tensor &v) { return kiln::sum(v); },
                     [](const Tensor &v) { return v; }, {x});
  });
  EXPECT_NE(message.find("the condition must return a rank-0 bool"),
            std::string::npos)
      << message;
}

TEST(ControlFlowErrors, LoopsMustKeepCarriedTypes) {
  std::string message = traceError([](const Tensor &x, const Tensor &) {
    kiln::while_loop([](const Tensor &v) { return kiln::sum(v) < 10; },
                     [](const Tensor &v) { return kiln::sum(v, 0); }, {x});
  });
  EXPECT_NE(message.find("carried value #0 enters the loop as f32[2,3] but "
                         "the body returns f32[3]"),
            std::string::npos)
      << message;

  message = traceError([](const Tensor &x, const Tensor &) {
    kiln::fori_loop(
        0, 3, [&](const Tensor &, const Tensors &) { return Tensors{x, x}; },
        {x});
  });
  EXPECT_NE(message.find("the body returns 2 values but the loop carries 1"),
            std::string::npos)
      << message;

  message = traceError([](const Tensor &, const Tensor &) {
    kiln::while_loop([](const Tensors &) { return kiln::constant(true); },
                     [](const Tensors &s) { return s; }, {});
  });
  EXPECT_NE(message.find("at least one loop-carried value"), std::string::npos)
      << message;
}

TEST(StaleTensors, TensorFromAFinishedTrace) {
  Tensor leaked;
  auto first = kiln::trace("first", {kiln::f32({2})}, [&](const Tensor &x) {
    leaked = x * 2;
    return leaked;
  });
  expectVerifies(first);
  // The shape is still readable, but the tensor cannot be used.
  EXPECT_EQ(leaked.shape(), kiln::Shape({2}));
  int line = 0;
  std::string message = expectTraceError([&] {
    kiln::trace("second", {kiln::f32({2})}, [&](const Tensor &x) {
      line = __LINE__ + 1;
      return x + leaked;
    });
  });
  EXPECT_NE(message.find("already finished"), std::string::npos) << message;
  EXPECT_NE(message.find(here(line)), std::string::npos) << message;
  // Outside any trace too.
  message = expectTraceError([&] { (void)kiln::exp(leaked); });
  EXPECT_NE(message.find("already finished"), std::string::npos) << message;
}

TEST(StaleTensors, TensorFromAnotherTraceAndOutsideTraces) {
  std::string message = expectTraceError([] {
    kiln::trace("outer", {kiln::f32({2})}, [](const Tensor &outer) {
      kiln::trace("inner", {kiln::f32({2})},
                  [&](const Tensor &x) { return x + outer; });
      return outer;
    });
  });
  EXPECT_NE(message.find("different trace"), std::string::npos) << message;

  message = expectTraceError([] { (void)kiln::constant(1.0f); });
  EXPECT_NE(message.find("outside kiln::trace"), std::string::npos) << message;

  message = traceError([](const Tensor &x, const Tensor &) {
    Tensor empty;
    (void)(x + empty);
  });
  EXPECT_NE(message.find("empty kiln::Tensor"), std::string::npos) << message;
}

TEST(StaleTensors, TensorEscapingItsRegion) {
  std::string message = traceError([](const Tensor &x, const Tensor &) {
    Tensor escaped;
    kiln::cond(
        kiln::sum(x) > 0,
        [&] {
          escaped = x * 3;
          return x;
        },
        [&] { return x; });
    (void)(escaped + 1); // used after its region closed
  });
  EXPECT_NE(message.find("region that is closed"), std::string::npos)
      << message;

  // Nor can the else branch use a value of the then branch.
  message = traceError([](const Tensor &x, const Tensor &) {
    Tensor fromThen;
    kiln::cond(
        kiln::sum(x) > 0,
        [&] {
          fromThen = x * 3;
          return fromThen;
        },
        [&] { return fromThen; });
  });
  EXPECT_NE(message.find("other branch of a cond"), std::string::npos)
      << message;
}

TEST(ExceptionSafety, UserExceptionDiscardsTheTrace) {
  Tensor leaked;
  EXPECT_THROW(kiln::trace("throws", {kiln::f32({2})},
                           [&](const Tensor &x) {
                             return kiln::while_loop(
                                 [](const Tensor &v) {
                                   return kiln::sum(v) < 10;
                                 },
                                 [&](const Tensor &v) -> Tensor {
                                   leaked = v * 2;
                                   throw std::runtime_error("model bug");
                                 },
                                 {x});
                           }),
               std::runtime_error);
  std::string message = expectTraceError([&] { (void)(leaked + 1); });
  EXPECT_NE(message.find("already finished"), std::string::npos) << message;
}

TEST(ExceptionSafety, CaughtErrorInsideRegionsLeavesAValidTrace) {
  auto f = kiln::trace(
      "recovers", {kiln::f32({2}, "x")}, [](const Tensor &x) {
        // A failed cond (branch types differ) thrown from inside a loop
        // body is caught by the user; the loop and the function go on.
        Tensors r = kiln::fori_loop(
            0, 3,
            [&](const Tensor &, const Tensor &v) {
              try {
                kiln::cond(kiln::sum(v) > 0, [&] { return v; },
                           [&] { return kiln::sum(v); });
              } catch (const kiln::TraceError &) {
              }
              try {
                (void)(v + kiln::constant(std::vector<float>{1, 2, 3}));
              } catch (const kiln::TraceError &) {
              }
              return v + 1;
            },
            {x});
        return r[0];
      });
  EXPECT_EQ(countOps(f, "kiln.cond"), 0);
  auto out = run(f, {f32Data({2}, {0.5, -4})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], DType::F32, {2}, {3.5, -1});
}

TEST(ExceptionSafety, ThrowInNestedRegionCaughtOutsideTheLoop) {
  auto f = kiln::trace("nestedthrow", {kiln::f32({2}, "x"), kiln::f32({2}, "w")},
                       [](const Tensor &x, const Tensor &w) {
                         try {
                           kiln::while_loop(
                               [](const Tensor &v) { return kiln::sum(v) < 10; },
                               [&](const Tensor &v) {
                                 return kiln::cond(
                                     kiln::sum(v) > 0,
                                     [&]() -> Tensor {
                                       Tensor captured = v * w;
                                       (void)captured;
                                       throw std::runtime_error("model bug");
                                     },
                                     [&] { return v; })[0];
                               },
                               {x});
                         } catch (const std::runtime_error &) {
                         }
                         return x + w;
                       });
  EXPECT_EQ(countOps(f, "kiln.while"), 0);
  EXPECT_EQ(countOps(f, "kiln.cond"), 0);
  auto out = run(f, {f32Data({2}, {1, 2}), f32Data({2}, {3, 4})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], DType::F32, {2}, {4, 6});
}

TEST(ExceptionSafety, FailedInnerRegionKeepsOuterCaptureConsistent) {
  // The failed cond captured w through the loop body before failing; the
  // loop keeps carrying w (unused), and stays valid and correct.
  auto f = kiln::trace(
      "innerfail", {kiln::f32({2}, "x"), kiln::f32({2}, "w")},
      [](const Tensor &x, const Tensor &w) {
        return kiln::fori_loop(
            0, 3,
            [&](const Tensor &, const Tensor &v) {
              try {
                kiln::cond(kiln::sum(v) > 0, [&] { return v + w; },
                           [&] { return kiln::sum(w); });
              } catch (const kiln::TraceError &) {
              }
              return v * 2;
            },
            {x})[0];
      });
  EXPECT_EQ(countOps(f, "kiln.cond"), 0);
  auto out = run(f, {f32Data({2}, {1, -2}), f32Data({2}, {3, 4})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], DType::F32, {2}, {8, -16});
}

TEST(TraceErrors, SignatureProblems) {
  std::string message = expectTraceError([] {
    kiln::trace("dup", {kiln::f32({1}, "a"), kiln::f32({1}, "a")},
                [](const Tensor &a, const Tensor &) { return a; });
  });
  EXPECT_NE(message.find("two inputs are named 'a'"), std::string::npos)
      << message;

  message = expectTraceError([] {
    kiln::trace("arity", {kiln::f32({1})},
                [](const Tensor &a, const Tensor &) { return a; });
  });
  EXPECT_NE(message.find("takes 2 tensor(s) but is called with 1"),
            std::string::npos)
      << message;

  message = expectTraceError([] {
    kiln::trace("none", {kiln::f32({1})},
                [](const Tensors &) { return Tensors{}; });
  });
  EXPECT_NE(message.find("returns no outputs"), std::string::npos) << message;
}

} // namespace
