//===- Inline.h - Inlining IR into the trace being recorded -----*- C++ -*-===//
//
// Transforms of traced functions (kiln/Grad.h) build IR outside the tracer,
// such as a gradient derived by the autodiff pass, and splice it into the
// function being traced. IR can only be cloned within one MLIRContext, so
// the tracer keeps a traced function and everything derived from it in one
// context:
//
//   - a trace started while another is recording on the same thread
//     records into the outer trace's context (so a function traced inside
//     a traced function, e.g. the primal of kiln::grad, shares it);
//   - detail::traceImpl can be given the context to record into (the
//     transforms of a TracedFunction record into that function's context).
//
// IR built in activeTraceContext() is then cloned into the trace by
// inlineIntoTrace, with its attributes and locations (the user's file:line)
// as they are.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_INLINE_H
#define KILN_TRACER_INLINE_H

#include "kiln/Tracer/SourceLoc.h"
#include "kiln/Tracer/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

namespace kiln {

/// The MLIRContext of the trace being recorded on this thread: IR meant for
/// inlineIntoTrace must be built in it. Throws TraceError if no trace is
/// recording; `what` names the caller in that message.
mlir::MLIRContext *activeTraceContext(const char *what,
                                      SourceLoc loc = SourceLoc::current());

/// Clones the body of `function` into the block being traced, with its
/// arguments bound to `args`, and returns the values it returns as Tensors
/// of the active trace. `function` must live in activeTraceContext(), have
/// a body of one block ending in func.return and refer to no other symbol
/// (no func.call); `args` must be tensors of the active trace, one per
/// argument and of its type. Tensors of enclosing scopes are captured into
/// the control-flow regions being traced, as for any other op. Throws
/// TraceError, naming `loc`, when any of this does not hold.
Tensors inlineIntoTrace(mlir::func::FuncOp function, const Tensors &args,
                        SourceLoc loc = SourceLoc::current());

} // namespace kiln

#endif // KILN_TRACER_INLINE_H
