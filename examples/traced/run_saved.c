/*===- run_saved.c - A host that links only the kiln runtime --------------===*
 *
 * run_saved MODULE.kmod FUNCTION OUT_PREFIX INPUT.bin...
 *
 * Loads a module that kiln::jit (or kiln-compile) saved, fills the
 * function's inputs from raw little-endian files (their sizes come from the
 * signature), calls it and writes each output to OUT_PREFIX.out<i>.bin.
 * Plain C against kiln/runtime.h: no compiler, no LLVM, no MLIR.
 *
 *===----------------------------------------------------------------------===*/

#include "kiln/runtime.h"

#include <stdio.h>
#include <stdlib.h>

static int check(kiln_status_t status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "run_saved: %s: %s\n", what, kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

static int readInput(const char *path, kiln_tensor_t *tensor) {
  FILE *file = fopen(path, "rb");
  size_t size = kiln_tensor_byte_size(tensor);
  size_t got = 0;
  int extra = 0;
  if (file) {
    got = fread(kiln_tensor_data(tensor), 1, size, file);
    extra = fgetc(file) != EOF;
    fclose(file);
  }
  if (!file || got != size || extra) {
    fprintf(stderr, "run_saved: %s: expected exactly %zu bytes\n", path, size);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: run_saved MODULE.kmod FUNCTION OUT_PREFIX INPUT.bin...\n");
    return 2;
  }
  kiln_module_t *module = NULL;
  const kiln_function_t *function = NULL;
  if (check(kiln_module_load_file(argv[1], &module), argv[1]) ||
      check(kiln_module_function_lookup(module, argv[2], &function), argv[2]))
    return 1;
  size_t inputCount = kiln_function_input_count(function);
  size_t outputCount = kiln_function_output_count(function);
  if ((size_t)(argc - 4) != inputCount) {
    fprintf(stderr, "run_saved: %s takes %zu inputs, got %d files\n", argv[2],
            inputCount, argc - 4);
    return 1;
  }
  kiln_tensor_t **inputs = calloc(inputCount + 1, sizeof(*inputs));
  kiln_tensor_t **outputs = calloc(outputCount + 1, sizeof(*outputs));
  int failed = 0;
  for (size_t i = 0; i < inputCount && !failed; ++i) {
    const kiln_tensor_signature_t *sig = kiln_function_input(function, i);
    failed = check(kiln_tensor_create(sig->dtype, sig->rank, sig->shape, NULL,
                                      &inputs[i]),
                   "creating an input") ||
             readInput(argv[4 + i], inputs[i]);
  }
  if (!failed)
    failed = check(kiln_function_call(function, inputs, inputCount, outputs,
                                      outputCount),
                   "calling the function");
  for (size_t i = 0; i < outputCount && !failed; ++i) {
    char path[4096];
    snprintf(path, sizeof(path), "%s.out%zu.bin", argv[3], i);
    FILE *file = fopen(path, "wb");
    size_t size = kiln_tensor_byte_size(outputs[i]);
    if (!file || fwrite(kiln_tensor_data(outputs[i]), 1, size, file) != size) {
      fprintf(stderr, "run_saved: cannot write %s\n", path);
      failed = 1;
    }
    if (file)
      fclose(file);
  }
  for (size_t i = 0; i < inputCount; ++i)
    kiln_tensor_release(inputs[i]);
  for (size_t i = 0; i < outputCount; ++i)
    kiln_tensor_release(outputs[i]);
  free(inputs);
  free(outputs);
  kiln_module_release(module);
  return failed;
}
