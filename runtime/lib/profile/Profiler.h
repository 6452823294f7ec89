//===- Profiler.h - Timing the regions of profiled modules ------*- C++ -*-===//
//
// The process's one profile. Every loaded module compiled with --profile
// registers its region names (kiln/ProfileAbi.h) and gets a range of
// region numbers; its code then calls begin/end around each region, and
// the runtime around each call of its functions. While collection is on,
// each end records the region's run as an event (steady clock, ns, thread
// id) and adds it to the region's totals: its count, its total time and
// its self time (the total less the time of the regions it holds on the
// same thread), so that the self times of all regions add up to the time
// profiled, with nothing counted twice.
//
// Events beyond a limit are counted but not kept (a loop of a million
// iterations would otherwise hold the memory of a million events per
// region); the totals stay exact.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_PROFILE_PROFILER_H
#define KILN_RUNTIME_LIB_PROFILE_PROFILER_H

#include "profile/TraceWriter.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace kiln {
namespace runtime {
namespace profile {

struct RegionTotals {
  uint64_t count = 0;
  int64_t totalNs = 0;
  int64_t selfNs = 0;
};

class Profiler {
public:
  /// The process's profiler.
  static Profiler &get();

  /// Gives `names` consecutive region numbers and returns the first; a list
  /// registered before (the same module loaded again) gets its numbers
  /// again.
  int32_t addRegions(const std::vector<std::string> &names);
  /// The name of region `region`; valid as long as the process runs.
  const char *name(int32_t region) const;

  void setEnabled(bool enabled);
  bool enabled() const { return on.load(std::memory_order_relaxed); }
  /// Forgets the events and totals recorded so far; regions open on any
  /// thread are not recorded when they end.
  void clear();

  /// The two marks of kiln/ProfileAbi.h.
  static void begin(int32_t region);
  static void end(int32_t region);

  /// The totals of every region that ran, by region number.
  std::map<int32_t, RegionTotals> totals() const;
  /// Writes the recorded events as a Chrome trace (TraceWriter.h).
  void writeTrace(std::ostream &os) const;

  /// At most this many events are kept.
  static constexpr size_t kMaxEvents = size_t(1) << 21;

private:
  Profiler() = default;
  void record(int32_t region, int64_t beginNs, int64_t endNs, int64_t selfNs);

  std::atomic<bool> on{false};
  /// Bumped by clear(): regions opened before end unrecorded.
  std::atomic<uint64_t> generation{0};

  mutable std::mutex mutex;
  /// A deque, so that name() pointers stay valid as names are added.
  std::deque<std::string> names;
  /// Each registered list, joined with NULs, and its first number.
  std::map<std::string, int32_t> lists;
  std::vector<TraceEvent> events;
  uint64_t dropped = 0;
  std::map<int32_t, RegionTotals> regionTotals;
  /// Trace times count from here: the first enabling or clearing.
  int64_t originNs = 0;
};

} // namespace profile
} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_PROFILE_PROFILER_H
