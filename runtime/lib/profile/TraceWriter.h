//===- TraceWriter.h - Chrome trace / Perfetto JSON -------------*- C++ -*-===//
//
// Writes timed regions in the Chrome trace event format (the JSON that
// chrome://tracing, ui.perfetto.dev and torch.profiler's exports share):
//
//   {"traceEvents":[{"name":"...","ph":"X","ts":12.345,"dur":0.250,
//                    "pid":1,"tid":2}, ...], "displayTimeUnit":"ns", ...}
//
// one complete ("X") event per region, times in microseconds with
// nanosecond digits. Kept apart from collection so that it can be tested on
// events made by hand.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_PROFILE_TRACEWRITER_H
#define KILN_RUNTIME_LIB_PROFILE_TRACEWRITER_H

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace kiln {
namespace runtime {
namespace profile {

/// One run of a region on one thread.
struct TraceEvent {
  /// Index into the name table given to writeChromeTrace.
  int32_t region = 0;
  /// Thread id (the kernel's).
  int64_t thread = 0;
  /// Steady-clock nanoseconds.
  int64_t beginNs = 0;
  int64_t endNs = 0;
};

/// `text` as a JSON string literal, quotes included.
std::string jsonString(const std::string &text);

/// Writes `events` as a Chrome trace: times relative to `originNs`, sorted
/// by thread and start, an enclosing region before the regions it holds
/// (so that viewers nest them), each named by `names[region]` (an event
/// whose region has no name is named "region <n>"). `droppedEvents`, the
/// events not recorded, is written as metadata when non-zero.
void writeChromeTrace(std::ostream &os, std::vector<TraceEvent> events,
                      const std::vector<std::string> &names, int64_t originNs,
                      int64_t processId, uint64_t droppedEvents);

} // namespace profile
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_PROFILE_TRACEWRITER_H
