/*===- CudaCApiCheck.c - The device selection API used from C ------------===*\
|*                                                                            *|
|* Compiled as C so that the build fails if the device additions to          *|
|* runtime.h stop being C.                                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kiln/runtime.h"

#include <string.h>

/* Returns 0 if the device API behaves as documented on bad input. */
int kilnCudaCApiCheck(void) {
  if (strcmp(kiln_device_name(KILN_DEVICE_CPU), "cpu") != 0 ||
      strcmp(kiln_device_name(KILN_DEVICE_CUDA), "cuda") != 0)
    return 1;
  if (kiln_device_check(KILN_DEVICE_CPU) != NULL)
    return 2;
  if (kiln_module_device(NULL) != KILN_DEVICE_CPU)
    return 3;
  kiln_module_t *module = NULL;
  kiln_status_t status =
      kiln_module_load_memory_on(KILN_DEVICE_CUDA, "nope", 4, &module);
  int result = 0;
  if (kiln_status_code(status) != KILN_STATUS_INVALID_MODULE || module != NULL)
    result = 4;
  kiln_status_free(status);
  status = kiln_module_load_file_on(KILN_DEVICE_CPU, NULL, &module);
  if (kiln_status_code(status) != KILN_STATUS_INVALID_ARGUMENT)
    result = 5;
  kiln_status_free(status);
  kiln_cuda_stats_t stats;
  status = kiln_module_cuda_stats(NULL, &stats, sizeof(stats));
  if (kiln_status_code(status) != KILN_STATUS_INVALID_ARGUMENT)
    result = 6;
  kiln_status_free(status);
  int64_t count = 0;
  status = kiln_device_count(KILN_DEVICE_CPU, &count);
  if (status != NULL || count != 1)
    result = 7;
  kiln_status_free(status);
  status = kiln_device_count(KILN_DEVICE_CUDA, NULL);
  if (kiln_status_code(status) != KILN_STATUS_INVALID_ARGUMENT)
    result = 8;
  kiln_status_free(status);
  status = kiln_device_count((kiln_device_t)7, &count);
  if (kiln_status_code(status) != KILN_STATUS_INVALID_ARGUMENT)
    result = 9;
  kiln_status_free(status);
  /* Device tensors. */
  kiln_tensor_t *tensor = NULL;
  if (kiln_tensor_memory(NULL) != KILN_MEMORY_HOST)
    result = 10;
  status = kiln_tensor_to_device(NULL, NULL, &tensor);
  if (kiln_status_code(status) != KILN_STATUS_INVALID_ARGUMENT || tensor)
    result = 11;
  kiln_status_free(status);
  status = kiln_tensor_to_host(NULL, &tensor);
  if (kiln_status_code(status) != KILN_STATUS_INVALID_ARGUMENT || tensor)
    result = 12;
  kiln_status_free(status);
  status = kiln_function_call_on_device(NULL, NULL, 0, NULL, 0);
  if (kiln_status_code(status) != KILN_STATUS_INVALID_ARGUMENT)
    result = 13;
  kiln_status_free(status);
  return result;
}
