//===- Status.h - Construction of kiln_status_t values ----------*- C++ -*-===//
//
// Status objects cross the C API, so they are created only through these
// helpers, which never throw: running out of memory while reporting an error
// must still produce a status.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_API_STATUS_H
#define KILN_RUNTIME_LIB_API_STATUS_H

#include "kiln/runtime.h"

#include <string>

struct kiln_status {
  kiln_status_code_t code;
  std::string message;
};

namespace kiln {
namespace runtime {

/// Returns a new status with \p code and \p message, or the shared
/// out-of-memory status if the status itself cannot be allocated.
kiln_status_t makeStatus(kiln_status_code_t code, std::string message) noexcept;

/// Returns the statically allocated out-of-memory status. It is safe to pass
/// to kiln_status_free, which recognizes and keeps it.
kiln_status_t outOfMemoryStatus() noexcept;

} // namespace runtime
} // namespace kiln

#endif // KILN_RUNTIME_LIB_API_STATUS_H
