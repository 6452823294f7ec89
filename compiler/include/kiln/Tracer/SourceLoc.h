//===- SourceLoc.h - The user's source position -----------------*- C++ -*-===//
//
// Every tracing entry point takes a trailing `SourceLoc loc =
// SourceLoc::current()` argument. Because the compiler evaluates a default
// argument at the call site, `loc` names the line of *user* code that called
// the function, not a line inside the tracer. That position is attached to
// every op the call records (as an mlir::FileLineColLoc) and to every
// TraceError it throws, so both IR dumps and error messages point at the
// model, not at kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_SOURCELOC_H
#define KILN_TRACER_SOURCELOC_H

#include <string>

// __builtin_FILE and __builtin_LINE exist in GCC and clang; __builtin_COLUMN
// only in clang (GCC 12 has none), so columns are 0 with GCC.
#if defined(__has_builtin)
#if __has_builtin(__builtin_COLUMN)
#define KILN_BUILTIN_COLUMN() __builtin_COLUMN()
#endif
#endif
#ifndef KILN_BUILTIN_COLUMN
#define KILN_BUILTIN_COLUMN() 0u
#endif

namespace kiln {

/// A position in the user's C++ source. `file` is null when unknown (for
/// example in errors raised from a conversion operator, which cannot take a
/// location argument).
struct SourceLoc {
  const char *file = nullptr;
  unsigned line = 0;
  unsigned column = 0;

  /// The position of the call that evaluates this default argument (C++17
  /// stand-in for std::source_location::current()).
  static SourceLoc current(const char *file = __builtin_FILE(),
                           unsigned line = __builtin_LINE(),
                           unsigned column = KILN_BUILTIN_COLUMN()) {
    SourceLoc loc;
    loc.file = file;
    loc.line = line;
    loc.column = column;
    return loc;
  }

  bool known() const { return file != nullptr; }

  /// `file:line` (with `:column` when known), or an empty string.
  std::string str() const;
};

} // namespace kiln

#endif // KILN_TRACER_SOURCELOC_H
