//===- TraceError.h - Errors raised while tracing ---------------*- C++ -*-===//
//
// Tracing reports mistakes in the traced program (shape mismatches, a tensor
// used as a C++ bool, a tensor from a finished trace, ...) by throwing
// kiln::TraceError. Exceptions suit a tracing API: the error surfaces at the
// line of user code that made it, with a stack the user recognises, and the
// user's own RAII state unwinds normally.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_TRACEERROR_H
#define KILN_TRACER_TRACEERROR_H

#include "kiln/Tracer/SourceLoc.h"

#include <stdexcept>
#include <string>

namespace kiln {

/// An error in the program being traced. what() is
/// `file:line: error: message` when the location is known.
class TraceError : public std::runtime_error {
public:
  TraceError(SourceLoc loc, const std::string &message);

  /// The message without the location prefix.
  const std::string &message() const { return msg; }

  /// The user's source position that caused the error (may be unknown).
  SourceLoc location() const { return loc; }

private:
  SourceLoc loc;
  std::string msg;
};

namespace detail {
/// Throws TraceError at `loc`: how the tracer and the transforms built on it
/// report a mistake in the traced program.
[[noreturn]] void fail(SourceLoc loc, const std::string &message);
} // namespace detail

} // namespace kiln

#endif // KILN_TRACER_TRACEERROR_H
