//===- Status.cpp - The kiln_status_t object -------------------------------===//

#include "Status.h"

#include <new>

namespace {

/// Allocation failures are reported with a preallocated status so that
/// reporting them cannot fail in turn.
kiln_status outOfMemory = {KILN_STATUS_OUT_OF_MEMORY, "out of memory"};

} // namespace

namespace kiln {
namespace runtime {

kiln_status_t makeStatus(kiln_status_code_t code,
                         std::string message) noexcept {
  kiln_status *status = new (std::nothrow) kiln_status;
  if (!status)
    return &outOfMemory;
  status->code = code;
  status->message = std::move(message);
  return status;
}

kiln_status_t outOfMemoryStatus() noexcept { return &outOfMemory; }

} // namespace runtime
} // namespace kiln

extern "C" {

kiln_status_code_t kiln_status_code(kiln_status_t status) {
  return status ? status->code : KILN_STATUS_OK;
}

const char *kiln_status_message(kiln_status_t status) {
  return status ? status->message.c_str() : "OK";
}

void kiln_status_free(kiln_status_t status) {
  if (status != &outOfMemory)
    delete status;
}

} // extern "C"
