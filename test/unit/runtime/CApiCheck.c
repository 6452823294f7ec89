/*===- CApiCheck.c - The runtime header used from C ----------------------===*\
|*                                                                            *|
|* Compiled as C so that the build fails if runtime.h stops being C.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kiln/runtime.h"

#include <string.h>

/* Returns 0 if a tensor can be created and inspected through the C API. */
int kilnCApiCheck(void) {
  int64_t shape[2] = {2, 2};
  float values[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  kiln_tensor_t *tensor = NULL;
  kiln_status_t status =
      kiln_tensor_create(KILN_DTYPE_F32, 2, shape, values, &tensor);
  if (status != NULL) {
    kiln_status_free(status);
    return 1;
  }
  int result = 0;
  if (kiln_tensor_byte_size(tensor) != sizeof(values) ||
      memcmp(kiln_tensor_data(tensor), values, sizeof(values)) != 0)
    result = 2;
  kiln_tensor_release(tensor);

  kiln_module_t *module = NULL;
  status = kiln_module_load_memory("nope", 4, &module);
  if (kiln_status_code(status) != KILN_STATUS_INVALID_MODULE || module != NULL)
    result = 3;
  kiln_status_free(status);
  return result;
}
