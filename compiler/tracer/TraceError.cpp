//===- TraceError.cpp - Errors raised while tracing -----------------------===//

#include "kiln/Tracer/TraceError.h"

namespace kiln {

std::string SourceLoc::str() const {
  if (!known())
    return "";
  std::string s = std::string(file) + ":" + std::to_string(line);
  if (column)
    s += ":" + std::to_string(column);
  return s;
}

/// The what() text: the location first, in the `file:line: error:` form
/// that editors and IDEs turn into a link to the user's code.
static std::string formatError(SourceLoc loc, const std::string &message) {
  if (!loc.known())
    return "error: " + message;
  return loc.str() + ": error: " + message;
}

TraceError::TraceError(SourceLoc loc, const std::string &message)
    : std::runtime_error(formatError(loc, message)), loc(loc), msg(message) {}

void detail::fail(SourceLoc loc, const std::string &message) {
  throw TraceError(loc, message);
}

} // namespace kiln
