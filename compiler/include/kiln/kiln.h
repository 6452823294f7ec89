//===- kiln.h - The kiln C++ tracing front end ------------------*- C++ -*-===//
//
// Write a model as an ordinary C++ function over kiln::Tensor; kiln::trace
// records it as a static graph of kiln ops:
//
//   kiln::TracedFunction f = kiln::trace(
//       "mlp", {kiln::f32({8, 4}, "x"), kiln::f32({4, 2}, "w")},
//       [](const kiln::Tensor &x, const kiln::Tensor &w) {
//         return kiln::relu(kiln::matmul(x, w) + 1.0f);
//       });
//   std::cout << f.str();
//
// Control flow on tensor values goes through kiln::cond, kiln::while_loop,
// kiln::fori_loop and kiln::scan. docs/tracer.md describes the API, the
// broadcasting and promotion rules and the errors. kiln::grad,
// kiln::value_and_grad and kiln::vjp (kiln/Grad.h, library KilnGrad) derive
// gradients of such functions.
//
// Note: under `using namespace mlir`, `kiln` also names the dialect
// namespace mlir::kiln; spell this API `::kiln::` there.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_KILN_H
#define KILN_KILN_H

#include "kiln/Grad.h"
#include "kiln/Vmap.h"
#include "kiln/Tracer/Collectives.h"
#include "kiln/Tracer/ControlFlow.h"
#include "kiln/Tracer/DType.h"
#include "kiln/Tracer/Ops.h"
#include "kiln/Tracer/Random.h"
#include "kiln/Tracer/SourceLoc.h"
#include "kiln/Tracer/Tensor.h"
#include "kiln/Tracer/Trace.h"
#include "kiln/Tracer/TraceError.h"

#endif // KILN_KILN_H
