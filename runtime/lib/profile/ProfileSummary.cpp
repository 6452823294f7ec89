//===- ProfileSummary.cpp - The profiler's totals as a table --------------===//

#include "kiln/ProfileSummary.h"

#include <algorithm>

#include <cstdio>

namespace {

std::string row(double selfMs, double share, const std::string &count,
                const std::string &totalMs, const std::string &name) {
  char text[96];
  std::snprintf(text, sizeof(text), "%12.3f %6.1f%% %8s %12s  ", selfMs, share,
                count.c_str(), totalMs.c_str());
  return text + name + "\n";
}

std::string millis(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", ns / 1e6);
  return text;
}

} // namespace

std::string
kiln::profile::formatSummary(const std::vector<kiln_profile_region_t> &regions,
                             size_t top) {
  uint64_t totalNs = 0;
  for (const kiln_profile_region_t &region : regions)
    totalNs += region.self_ns;
  auto share = [&](uint64_t ns) {
    return totalNs ? 100.0 * double(ns) / double(totalNs) : 0.0;
  };
  std::string text = "profile: " + millis(totalNs) + " ms in " +
                     std::to_string(regions.size()) + " regions\n";
  char heading[96];
  std::snprintf(heading, sizeof(heading), "%12s %7s %8s %12s  %s\n", "self ms",
                "share", "count", "total ms", "region");
  text += heading;
  size_t shown = std::min(top, regions.size());
  for (size_t i = 0; i < shown; ++i) {
    const kiln_profile_region_t &region = regions[i];
    text += row(region.self_ns / 1e6, share(region.self_ns),
                std::to_string(region.count), millis(region.total_ns),
                region.name ? region.name : "?");
  }
  if (shown < regions.size()) {
    uint64_t restNs = 0;
    for (size_t i = shown; i < regions.size(); ++i)
      restNs += regions[i].self_ns;
    text +=
        row(restNs / 1e6, share(restNs), "", "",
            "(" + std::to_string(regions.size() - shown) + " other regions)");
  }
  return text;
}

std::vector<kiln_profile_region_t> kiln::profile::collectedRegions() {
  std::vector<kiln_profile_region_t> regions(kiln_profile_regions(nullptr, 0));
  // Regions that ran between the two calls are left for the next one.
  regions.resize(std::min(regions.size(),
                          kiln_profile_regions(regions.data(), regions.size())));
  return regions;
}
