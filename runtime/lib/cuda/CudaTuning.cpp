//===- CudaTuning.cpp - Call sites that run their fastest variant ---------===//
//
// Which of several kernels is fastest for a computation depends on the
// device (its multiprocessors' shared memory, registers and tensor cores),
// the shapes and the driver, and an ahead-of-time compiler that builds on
// a machine without the GPU cannot measure it. For such a call site the
// module carries every variant and the host code asks the runtime which to
// run (kiln/CudaLibraryAbi.h's KILN_CUDA_TUNE_* functions), as the
// convolutions' plug-in does for cuDNN's engines: at the site's first call
// outside a capture, each variant runs once to warm up (its kernels
// loaded, its shared memory allowed) and then kTimedRuns times between two
// CUDA events, one after the other on the stream; the call then waits for
// the last event, keeps the variant with the shortest time and runs it
// once more, so that its results are the call's. Later calls run the
// chosen variant alone, and a call captured into a CUDA graph (from the
// second on) captures it. A site first met inside a capture (a loop's body
// captured into a graph at the first call) runs variant 0 there and is
// tuned at its next call outside one; a loop holding sites is run on the
// host until they are decided (tunedSitesDecided, the host code's
// KILN_CUDA_GRAPH_LOOPS_TUNED_FUNCTION), so that its graph, captured at
// each run, holds the chosen variants. A variant whose work is refused
// before it is queued while it is timed (kiln's cuDNN attention where the
// plug-in or cuDNN is missing, or where no cuDNN engine takes the problem;
// a kernel needing more shared memory than this device gives, as a module
// built for sm_80 asks of an sm_86 device: CudaDevice::refuse) is dropped,
// its failure cleared, and never chosen;
// another failure fails the call, which decides nothing, and the site is
// timed again at its next call. KILN_CUDA_TUNE=0 decides for variant 0
// without timing, as does a driver without events; KILN_CUDA_TUNE_LOG=1
// prints each decision with the variants' times (or refusals) to stderr.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln {
namespace runtime {
namespace cuda {
namespace {

/// Timed runs of each variant, after one to warm up.
constexpr int64_t kTimedRuns = 3;
/// Runs of each variant while timing: the warm-up, then the timed ones.
constexpr int64_t kRunsPerVariant = 1 + kTimedRuns;

/// Whether undecided sites are timed (KILN_CUDA_TUNE unset, or anything
/// but "0").
bool tuningOn() {
  const char *value = std::getenv("KILN_CUDA_TUNE");
  return !value || std::strcmp(value, "0") != 0;
}

/// Whether decisions are printed (KILN_CUDA_TUNE_LOG=1).
bool tuningLogged() {
  const char *value = std::getenv("KILN_CUDA_TUNE_LOG");
  return value && std::strcmp(value, "1") == 0;
}

/// The name of `variant` in the comma-separated `names`, or its number.
std::string variantName(const std::string &names, int64_t variant) {
  size_t start = 0;
  for (int64_t i = 0; i < variant && start != std::string::npos; ++i) {
    start = names.find(',', start);
    if (start != std::string::npos)
      ++start;
  }
  if (start == std::string::npos || start >= names.size())
    return std::to_string(variant);
  return names.substr(start, names.find(',', start) - start);
}

} // namespace

void CudaDevice::dropEvents(TunedSite &site) {
  for (CUevent event : site.starts)
    if (event)
      driver->eventDestroy(event);
  for (CUevent event : site.stops)
    if (event)
      driver->eventDestroy(event);
  site.starts.clear();
  site.stops.clear();
}

int64_t CudaDevice::tuneRounds(int64_t siteNumber, int64_t variants,
                               const char *names) {
  TunedSite &site = tunedSites[siteNumber];
  site.timing = false;
  if (site.chosen >= 0 || !failure.empty() || variants < 2)
    return 1;
  site.variants = variants;
  site.names = names ? names : "";
  // A capture records work, it runs none: there is nothing to time.
  if (capturingCall || captureTarget)
    return 1;
  dropEvents(site);
  if (!tuningOn()) {
    site.chosen = 0;
    return 1;
  }
  site.starts.assign(variants, nullptr);
  site.stops.assign(variants, nullptr);
  site.refusals.assign(variants, std::string());
  for (int64_t v = 0; v < variants; ++v)
    if (driver->eventCreate(&site.starts[v], 0) != CUDA_SUCCESS ||
        driver->eventCreate(&site.stops[v], 0) != CUDA_SUCCESS) {
      // No events (or none left): the first variant, untimed.
      dropEvents(site);
      site.chosen = 0;
      return 1;
    }
  site.timing = true;
  return variants * kRunsPerVariant + 1;
}

int64_t CudaDevice::tuneBegin(int64_t siteNumber, int64_t round) {
  TunedSite &site = tunedSites[siteNumber];
  if (!site.timing)
    return site.chosen >= 0 ? site.chosen : 0;
  if (round >= site.variants * kRunsPerVariant) {
    decide(siteNumber, site);
    return site.chosen >= 0 ? site.chosen : 0;
  }
  int64_t variant = round / kRunsPerVariant;
  site.failedBeforeRound = !failure.empty();
  if (round % kRunsPerVariant == 1 && failure.empty() &&
      site.refusals[variant].empty())
    check(driver->eventRecord(site.starts[variant], streamHandle),
          "cuEventRecord (a tuned call site)");
  return variant;
}

void CudaDevice::tuneEnd(int64_t siteNumber, int64_t round) {
  TunedSite &site = tunedSites[siteNumber];
  if (!site.timing || round >= site.variants * kRunsPerVariant)
    return;
  int64_t variant = round / kRunsPerVariant;
  // Work of this round was refused before it was queued: the variant is
  // dropped (its later rounds run for nothing but are not timed), and the
  // call goes on; the chosen variant writes every result again.
  if (!site.failedBeforeRound && !failure.empty() && refused) {
    if (site.refusals[variant].empty())
      site.refusals[variant] = failure;
    failure.clear();
    refused = false;
  }
  if (round % kRunsPerVariant == kRunsPerVariant - 1 && failure.empty() &&
      site.refusals[variant].empty())
    check(driver->eventRecord(site.stops[variant], streamHandle),
          "cuEventRecord (a tuned call site)");
}

bool CudaDevice::tunedSitesDecided(int64_t count, const int64_t *numbers) {
  if (!tuningOn())
    return true;
  for (int64_t i = 0; i < count; ++i) {
    auto site = tunedSites.find(numbers[i]);
    if (site == tunedSites.end() || site->second.chosen < 0)
      return false;
  }
  return true;
}

void CudaDevice::decide(int64_t siteNumber, TunedSite &site) {
  site.timing = false;
  std::vector<float> times(site.variants, -1);
  // After a failure the call's work was skipped: nothing ran to time, and
  // the site is timed again at its next call.
  if (!failure.empty()) {
    dropEvents(site);
    return;
  }
  // The stops were recorded in order on the stream: the last recorded (of
  // the last variant not refused) is reached once they all are.
  CUevent last = nullptr;
  for (int64_t v = 0; v < site.variants; ++v)
    if (site.refusals[v].empty())
      last = site.stops[v];
  if (last && !check(driver->eventSynchronize(last),
                     "cuEventSynchronize (a tuned call site)")) {
    dropEvents(site);
    return;
  }
  // The fastest variant that ran; the first one not refused where no time
  // can be read.
  int64_t best = -1;
  for (int64_t v = 0; v < site.variants; ++v) {
    if (!site.refusals[v].empty())
      continue;
    if (best < 0)
      best = v;
    float milliseconds = 0;
    if (driver->eventElapsedTime(&milliseconds, site.starts[v],
                                 site.stops[v]) != CUDA_SUCCESS)
      continue;
    times[v] = milliseconds / kTimedRuns;
    if (times[best] < 0 || times[v] < times[best])
      best = v;
  }
  dropEvents(site);
  std::vector<std::string> refusals = std::move(site.refusals);
  site.refusals.clear();
  // Every variant refused: the last round runs variant 0, whose refusal
  // then fails the call, and the site is timed again at its next call.
  if (best < 0)
    return;
  site.chosen = best;
  ++counters.tunedSites;
  if (!tuningLogged())
    return;
  std::string line = "kiln: tuned call site " + std::to_string(siteNumber) +
                     ": " + variantName(site.names, best) + " (";
  for (int64_t v = 0; v < site.variants; ++v) {
    std::string time;
    if (!refusals[v].empty()) {
      time = "refused: " + refusals[v];
    } else if (times[v] < 0) {
      time = "untimed";
    } else {
      char milliseconds[32];
      std::snprintf(milliseconds, sizeof milliseconds, "%.4f ms", times[v]);
      time = milliseconds;
    }
    line += (v ? ", " : "") + variantName(site.names, v) + " " + time;
  }
  std::fprintf(stderr, "%s)\n", line.c_str());
}

} // namespace cuda
} // namespace runtime
} // namespace kiln
