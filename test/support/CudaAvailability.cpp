//===- CudaAvailability.cpp - Tests: run, skip or fail without CUDA -------===//

#include "CudaAvailability.h"

#include <cstdlib>
#include <cstring>

kiln::test::CudaDecision kiln::test::decideCudaTest(kiln_status_code_t code,
                                                    const std::string &message,
                                                    bool requireCuda) {
  if (code == KILN_STATUS_OK)
    return {CudaVerdict::Run, ""};
  if (code != KILN_STATUS_DEVICE_UNAVAILABLE)
    return {CudaVerdict::Fail, "the CUDA device cannot be opened: " + message};
  if (requireCuda)
    return {CudaVerdict::Fail,
            "KILN_REQUIRE_CUDA is set but CUDA is unavailable: " + message};
  return {CudaVerdict::Skip, message};
}

bool kiln::test::cudaRequiredByEnvironment() {
  const char *value = std::getenv("KILN_REQUIRE_CUDA");
  return value && *value && std::strcmp(value, "0") != 0;
}

kiln::test::CudaDecision kiln::test::checkCudaForTest() {
  kiln_status_t status = kiln_device_check(KILN_DEVICE_CUDA);
  kiln_status_code_t code = kiln_status_code(status);
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  return decideCudaTest(code, message, cudaRequiredByEnvironment());
}
