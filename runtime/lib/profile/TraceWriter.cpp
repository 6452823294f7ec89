//===- TraceWriter.cpp - Chrome trace / Perfetto JSON ---------------------===//

#include "profile/TraceWriter.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <tuple>

using namespace kiln::runtime::profile;

std::string kiln::runtime::profile::jsonString(const std::string &text) {
  std::string result = "\"";
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      result += "\\\"";
      break;
    case '\\':
      result += "\\\\";
      break;
    case '\n':
      result += "\\n";
      break;
    case '\t':
      result += "\\t";
      break;
    default:
      if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
        result += escaped;
      } else {
        result += static_cast<char>(c);
      }
    }
  }
  return result + "\"";
}

/// Nanoseconds as microseconds with three decimals, exactly (no rounding
/// through a double, which loses nanoseconds after about 100 days).
static std::string micros(int64_t ns) {
  char text[32];
  const char *sign = ns < 0 ? "-" : "";
  uint64_t magnitude = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  std::snprintf(text, sizeof(text), "%s%" PRIu64 ".%03" PRIu64, sign,
                magnitude / 1000, magnitude % 1000);
  return text;
}

void kiln::runtime::profile::writeChromeTrace(
    std::ostream &os, std::vector<TraceEvent> events,
    const std::vector<std::string> &names, int64_t originNs, int64_t processId,
    uint64_t droppedEvents) {
  // Viewers nest an event inside the one before it on its thread that
  // covers it, so the enclosing one must come first: by start, then
  // longest first.
  std::sort(events.begin(), events.end(),
            [](const TraceEvent &a, const TraceEvent &b) {
              return std::make_tuple(a.thread, a.beginNs, b.endNs) <
                     std::make_tuple(b.thread, b.beginNs, a.endNs);
            });
  os << "{\"traceEvents\":[";
  const char *separator = "\n";
  for (const TraceEvent &event : events) {
    std::string name = event.region >= 0 && size_t(event.region) < names.size()
                           ? names[event.region]
                           : "region " + std::to_string(event.region);
    os << separator << "{\"name\":" << jsonString(name)
       << ",\"cat\":\"kiln\",\"ph\":\"X\",\"ts\":"
       << micros(event.beginNs - originNs)
       << ",\"dur\":" << micros(event.endNs - event.beginNs)
       << ",\"pid\":" << processId << ",\"tid\":" << event.thread << "}";
    separator = ",\n";
  }
  os << "\n],\"displayTimeUnit\":\"ns\"";
  if (droppedEvents)
    os << ",\"otherData\":{\"dropped_events\":" << droppedEvents << "}";
  os << "}\n";
}
