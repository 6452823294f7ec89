//===- ProfileSummary.h - kiln-run --profile-summary ------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_RUN_PROFILESUMMARY_H
#define KILN_TOOLS_KILN_RUN_PROFILESUMMARY_H

#include "kiln/runtime.h"

#include <string>
#include <vector>

namespace kiln {
namespace run {

/// The table --profile-summary prints: a heading with the time profiled
/// (the self times of `regions` summed), then the first `top` of `regions`
/// (most self time first, as kiln_profile_regions gives them), one line
/// each with its self time, its share of the total, its count and its
/// total time, and one line summing the rest, so that the shares printed
/// add up to 100%.
std::string
formatProfileSummary(const std::vector<kiln_profile_region_t> &regions,
                     size_t top);

} // namespace run
} // namespace kiln

#endif // KILN_TOOLS_KILN_RUN_PROFILESUMMARY_H
