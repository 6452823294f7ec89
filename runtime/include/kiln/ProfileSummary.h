//===- ProfileSummary.h - The profiler's totals as a table ------*- C++ -*-===//
//
// What kiln-run --profile-summary prints and the Python profilers'
// summary() returns, from the C API's region totals.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PROFILESUMMARY_H
#define KILN_PROFILESUMMARY_H

#include "kiln/runtime.h"

#include <string>
#include <vector>

namespace kiln {
namespace profile {

/// The table: a heading with the time profiled (the self times of
/// `regions` summed), then the first `top` of `regions` (most self time
/// first, as kiln_profile_regions gives them), one line each with its self
/// time, its share of the total, its count and its total time, and one line
/// summing the rest, so that the shares printed add up to 100%.
std::string formatSummary(const std::vector<kiln_profile_region_t> &regions,
                          size_t top);

/// The totals of the regions that ran so far (kiln_profile_regions), most
/// self time first.
std::vector<kiln_profile_region_t> collectedRegions();

} // namespace profile
} // namespace kiln

#endif // KILN_PROFILESUMMARY_H
