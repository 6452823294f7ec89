//===- Profile.cpp - The profiling part of the C API ----------------------===//
//
// A module compiled with --profile exports the region table and slots of
// kiln/ProfileAbi.h; loading it registers its regions with the process's
// Profiler (profile/Profiler.h), and the functions below read what the
// profiler collected.
//
//===----------------------------------------------------------------------===//

#include "Profile.h"
#include "Module.h"
#include "Status.h"

#include "profile/Profiler.h"

#include "kiln/ProfileAbi.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <new>

using kiln::runtime::makeStatus;
using kiln::runtime::profile::Profiler;

kiln_status_t kiln::runtime::bindProfileRegions(kiln_module &module) {
  std::string error;
  const NativeLibrary &library = *module.library;
  auto *count = static_cast<const int32_t *>(
      library.lookupObject(KILN_PROFILE_REGION_COUNT, error));
  if (!count)
    return nullptr;
  size_t size = 0;
  auto *table = static_cast<const char *>(
      library.lookupObject(KILN_PROFILE_REGION_NAMES, error, &size));
  auto *base = static_cast<int32_t *>(
      library.lookupObject(KILN_PROFILE_REGION_BASE, error));
  auto invalid = [](const std::string &why) {
    return makeStatus(KILN_STATUS_INVALID_MODULE,
                      "the module's profiling regions (kiln/ProfileAbi.h): " +
                          why);
  };
  if (!table || !base)
    return invalid("it exports " KILN_PROFILE_REGION_COUNT
                   " but not " KILN_PROFILE_REGION_NAMES
                   " and " KILN_PROFILE_REGION_BASE);
  if (*count < 0)
    return invalid("a negative region count");
  // The functions' regions first, then the code's, in table order.
  std::vector<std::string> names;
  for (const auto &function : module.functions)
    names.push_back("call @" + function->signature.name);
  const char *next = table, *stop = table + size;
  for (int32_t i = 0; i < *count; ++i) {
    const char *nul =
        static_cast<const char *>(std::memchr(next, '\0', size_t(stop - next)));
    if (!nul)
      return invalid("region " + std::to_string(i) + " of " +
                     std::to_string(*count) + " has no name in the name table");
    names.emplace_back(next, nul);
    next = nul + 1;
  }
  int32_t first = Profiler::get().addRegions(names);
  for (size_t i = 0; i < module.functions.size(); ++i)
    module.functions[i]->profileRegion = first + int32_t(i);
  *base = first + int32_t(module.functions.size());
  for (auto [slot, mark] : {std::make_pair("begin", &Profiler::begin),
                            std::make_pair("end", &Profiler::end)}) {
    auto *address = static_cast<kiln_profile_mark_fn *>(library.lookupObject(
        std::string(KILN_PROFILE_SLOT_PREFIX) + slot, error));
    if (!address)
      return invalid(std::string("it has no slot " KILN_PROFILE_SLOT_PREFIX) +
                     slot);
    *address = mark;
  }
  module.profileRegionCount = names.size();
  return nullptr;
}

extern "C" {

size_t kiln_module_profile_region_count(const kiln_module_t *module) {
  return module ? module->profileRegionCount : 0;
}

void kiln_profile_set_enabled(int enabled) {
  Profiler::get().setEnabled(enabled != 0);
}

int kiln_profile_enabled(void) { return Profiler::get().enabled() ? 1 : 0; }

void kiln_profile_clear(void) { Profiler::get().clear(); }

size_t kiln_profile_regions(kiln_profile_region_t *regions, size_t capacity) {
  try {
    Profiler &profiler = Profiler::get();
    std::vector<kiln_profile_region_t> rows;
    for (const auto &[region, totals] : profiler.totals())
      rows.push_back({profiler.name(region), totals.count,
                      uint64_t(std::max<int64_t>(totals.totalNs, 0)),
                      uint64_t(std::max<int64_t>(totals.selfNs, 0))});
    std::stable_sort(
        rows.begin(), rows.end(),
        [](const kiln_profile_region_t &a, const kiln_profile_region_t &b) {
          return a.self_ns > b.self_ns;
        });
    if (regions)
      std::copy_n(rows.begin(), std::min(capacity, rows.size()), regions);
    return rows.size();
  } catch (const std::bad_alloc &) {
    return 0;
  }
}

kiln_status_t kiln_profile_write_trace(const char *path) {
  if (!path)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      "kiln_profile_write_trace: path is NULL");
  try {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (file)
      Profiler::get().writeTrace(file);
    file.close();
    if (!file)
      return makeStatus(KILN_STATUS_IO_ERROR,
                        "cannot write the profile trace '" + std::string(path) +
                            "': " + std::strerror(errno));
    return nullptr;
  } catch (const std::bad_alloc &) {
    return kiln::runtime::outOfMemoryStatus();
  }
}

} // extern "C"
