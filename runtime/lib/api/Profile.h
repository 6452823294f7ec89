//===- Profile.h - Binding a profiled module to the profiler ----*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_API_PROFILE_H
#define KILN_RUNTIME_LIB_API_PROFILE_H

#include "kiln/runtime.h"

struct kiln_module;

namespace kiln {
namespace runtime {

/// For a module whose code exports the region table of kiln/ProfileAbi.h:
/// checks the table, registers a region per function ("call @name") and
/// the code's regions with the profiler, and fills the code's slots. Sets
/// the module's region count and its functions' regions; a module without
/// the table is left alone. Fails with KILN_STATUS_INVALID_MODULE for a
/// table that is not well formed.
kiln_status_t bindProfileRegions(kiln_module &module);

} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_API_PROFILE_H
