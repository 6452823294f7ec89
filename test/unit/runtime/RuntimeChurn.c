/*===- RuntimeChurn.c - Load, call and unload a module many times --------===*\
|*                                                                            *|
|* kiln-runtime-churn MODULE.kmod CYCLES CALLS                                *|
|*                                                                            *|
|* Loads the module CYCLES times; each time calls every function CALLS times *|
|* on fixed inputs built from its signature (every output released), then    *|
|* unloads it. The memory the process holds must not grow with the calls or  *|
|* the cycles: the resident set after the first half of the cycles (when     *|
|* thread pools, the allocator's arenas and the libraries the module pulled  *|
|* in have settled) is compared with the one after the last, and more than   *|
|* --slack-kib more fails. Run under Valgrind (ctest runtime.churn.valgrind) it also shows    *|
|* every block the runtime loses; the exit status is 0 when the growth is    *|
|* within the slack and every call succeeded.                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kiln/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The process's resident set in KiB, from /proc/self/statm. */
static long residentKiB(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (!f)
    return -1;
  if (fscanf(f, "%ld %ld", &size, &resident) != 2)
    resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int fail(const char *what, kiln_status_t status) {
  fprintf(stderr, "kiln-runtime-churn: %s: %s\n", what,
          status ? kiln_status_message(status) : "failed");
  kiln_status_free(status);
  return 1;
}

/* Inputs of `function`: floats 0.01 * (i % 97) - 0.3, integers 5 + i % 3
 * (trip counts),
 * other dtypes zeros. */
static int makeInputs(const kiln_function_t *function, kiln_tensor_t **inputs) {
  size_t count = kiln_function_input_count(function);
  for (size_t k = 0; k < count; ++k) {
    const kiln_tensor_signature_t *sig = kiln_function_input(function, k);
    kiln_tensor_t *tensor = NULL;
    kiln_status_t status =
        kiln_tensor_create(sig->dtype, sig->rank, sig->shape, NULL, &tensor);
    if (status)
      return fail("creating an input", status);
    void *data = kiln_tensor_data(tensor);
    size_t n = kiln_tensor_element_count(tensor);
    for (size_t i = 0; i < n; ++i) {
      if (sig->dtype == KILN_DTYPE_F32)
        ((float *)data)[i] = 0.01f * (float)(i % 97) - 0.3f;
      else if (sig->dtype == KILN_DTYPE_F64)
        ((double *)data)[i] = 0.01 * (double)(i % 97) - 0.3;
      else if (sig->dtype == KILN_DTYPE_I32)
        ((int32_t *)data)[i] = (int32_t)(5 + i % 3);
      else if (sig->dtype == KILN_DTYPE_I64)
        ((int64_t *)data)[i] = (int64_t)(5 + i % 3);
      /* Other dtypes stay zero. */
    }
    inputs[k] = tensor;
  }
  return 0;
}

static int churn(const char *path, long calls) {
  kiln_module_t *module = NULL;
  kiln_status_t status = kiln_module_load_file(path, &module);
  if (status)
    return fail(path, status);
  int result = 0;
  for (size_t f = 0; f < kiln_module_function_count(module) && !result; ++f) {
    const kiln_function_t *function = kiln_module_function_at(module, f);
    size_t numInputs = kiln_function_input_count(function);
    size_t numOutputs = kiln_function_output_count(function);
    kiln_tensor_t **inputs = calloc(numInputs + 1, sizeof(*inputs));
    kiln_tensor_t **outputs = calloc(numOutputs + 1, sizeof(*outputs));
    result = makeInputs(function, inputs);
    for (long c = 0; c < calls && !result; ++c) {
      status = kiln_function_call(function, inputs, numInputs, outputs,
                                  numOutputs);
      if (status) {
        result = fail(kiln_function_name(function), status);
        break;
      }
      for (size_t k = 0; k < numOutputs; ++k)
        kiln_tensor_release(outputs[k]);
    }
    for (size_t k = 0; k < numInputs; ++k)
      kiln_tensor_release(inputs[k]);
    free(inputs);
    free(outputs);
  }
  kiln_module_release(module);
  return result;
}

int main(int argc, char **argv) {
  long slack = 1024;
  if (argc == 6 && strcmp(argv[4], "--slack-kib") == 0) {
    slack = atol(argv[5]);
    argc = 4;
  }
  if (argc != 4) {
    fprintf(stderr, "usage: kiln-runtime-churn MODULE.kmod CYCLES CALLS "
                    "[--slack-kib N]\n");
    return 2;
  }
  long cycles = atol(argv[2]), calls = atol(argv[3]);
  if (cycles < 2 || calls < 1) {
    fprintf(stderr,
            "kiln-runtime-churn: CYCLES must be >= 2 and CALLS >= 1\n");
    return 2;
  }
  /* The first half of the cycles warms up: the module's libraries, their
   * thread pools and the allocator's arenas settle over the first few (the
   * resident set of a 512 x 512 layer grows by about 2.6 MiB over four
   * cycles, then stays). The second half must not grow. */
  long first = 0, warm = (cycles + 1) / 2;
  printf("kiln-runtime-churn: resident KiB after each cycle:");
  for (long cycle = 0; cycle < cycles; ++cycle) {
    if (churn(argv[1], calls))
      return 1;
    long now = residentKiB();
    printf(" %ld", now);
    if (cycle + 1 == warm)
      first = now;
  }
  long last = residentKiB();
  printf("\nkiln-runtime-churn: %ld cycles of load, %ld calls of each "
         "function, unload: growth over the last %ld cycles %ld KiB (slack "
         "%ld KiB)\n",
         cycles, calls, cycles - warm, last - first, slack);
  if (first < 0 || last < 0) {
    fprintf(stderr, "kiln-runtime-churn: cannot read /proc/self/statm\n");
    return 1;
  }
  return last - first > slack ? 1 : 0;
}
