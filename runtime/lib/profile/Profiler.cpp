//===- Profiler.cpp - Timing the regions of profiled modules --------------===//

#include "profile/Profiler.h"

#include <chrono>
#include <sys/syscall.h>
#include <unistd.h>

using namespace kiln::runtime::profile;

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// A region that began on this thread and has not ended.
struct OpenRegion {
  int32_t region;
  uint64_t generation;
  int64_t beginNs;
  /// The time of the regions it holds that have ended.
  int64_t childNs;
};

thread_local std::vector<OpenRegion> openRegions;

int64_t threadId() {
  thread_local int64_t id = static_cast<int64_t>(::syscall(SYS_gettid));
  return id;
}

} // namespace

Profiler &Profiler::get() {
  // Never destroyed: module code may still call the marks while the
  // process exits.
  static Profiler *profiler = new Profiler();
  return *profiler;
}

int32_t Profiler::addRegions(const std::vector<std::string> &list) {
  std::string key;
  for (const std::string &name : list)
    key += name + '\0';
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, added] = lists.try_emplace(key, int32_t(names.size()));
  if (added)
    names.insert(names.end(), list.begin(), list.end());
  return it->second;
}

const char *Profiler::name(int32_t region) const {
  std::lock_guard<std::mutex> lock(mutex);
  return region >= 0 && size_t(region) < names.size() ? names[region].c_str()
                                                      : nullptr;
}

void Profiler::setEnabled(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex);
  if (enabled && !originNs)
    originNs = nowNs();
  on.store(enabled, std::memory_order_relaxed);
}

void Profiler::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  ++generation;
  events.clear();
  dropped = 0;
  regionTotals.clear();
  originNs = nowNs();
}

void Profiler::begin(int32_t region) {
  Profiler &profiler = get();
  if (!profiler.enabled())
    return;
  openRegions.push_back({region,
                         profiler.generation.load(std::memory_order_relaxed),
                         nowNs(), 0});
}

void Profiler::end(int32_t region) {
  // Not gated on enabled(): a region that began while profiling was on is
  // closed whatever happened since.
  if (openRegions.empty() || openRegions.back().region != region)
    return;
  int64_t endNs = nowNs();
  OpenRegion open = openRegions.back();
  openRegions.pop_back();
  int64_t duration = endNs - open.beginNs;
  if (!openRegions.empty())
    openRegions.back().childNs += duration;
  Profiler &profiler = get();
  if (open.generation == profiler.generation.load(std::memory_order_relaxed))
    profiler.record(region, open.beginNs, endNs, duration - open.childNs);
}

void Profiler::record(int32_t region, int64_t beginNs, int64_t endNs,
                      int64_t selfNs) {
  std::lock_guard<std::mutex> lock(mutex);
  RegionTotals &totals = regionTotals[region];
  ++totals.count;
  totals.totalNs += endNs - beginNs;
  totals.selfNs += selfNs;
  if (events.size() < kMaxEvents)
    events.push_back({region, threadId(), beginNs, endNs});
  else
    ++dropped;
}

std::map<int32_t, RegionTotals> Profiler::totals() const {
  std::lock_guard<std::mutex> lock(mutex);
  return regionTotals;
}

void Profiler::writeTrace(std::ostream &os) const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::string> table(names.begin(), names.end());
  writeChromeTrace(os, events, table, originNs,
                   static_cast<int64_t>(::getpid()), dropped);
}
