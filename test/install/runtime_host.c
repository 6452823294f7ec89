/*===- runtime_host.c - A C host built against the installed runtime ------===*
 *
 * runtime_host NEWTON.kmod
 *
 * Loads a module compiled from examples/models/newton_sqrt.mlir, calls
 * newton_sqrt on fixed inputs and checks the roots against sqrtf. Exits 0
 * when every root is within 1e-5 relative of sqrtf, 1 otherwise.
 *
 *===----------------------------------------------------------------------===*/

#include <kiln/runtime.h>

#include <math.h>
#include <stdio.h>

static int failed(kiln_status_t status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "runtime_host: %s: %s\n", what, kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: runtime_host NEWTON.kmod\n");
    return 2;
  }
  static const float x[4] = {2.0f, 9.0f, 10.0f, 1.0e6f};
  const int64_t shape[1] = {4};
  kiln_module_t *module = NULL;
  const kiln_function_t *function = NULL;
  kiln_tensor_t *input = NULL;
  kiln_tensor_t *outputs[2] = {NULL, NULL};
  if (failed(kiln_module_load_file(argv[1], &module), argv[1]) ||
      failed(kiln_module_function_lookup(module, "newton_sqrt", &function),
             "newton_sqrt") ||
      failed(kiln_tensor_create(KILN_DTYPE_F32, 1, shape, x, &input),
             "creating the input") ||
      failed(kiln_function_call(function, &input, 1, outputs, 2), "calling"))
    return 1;
  const float *root = (const float *)kiln_tensor_data(outputs[0]);
  int bad = 0;
  for (int i = 0; i < 4; ++i) {
    float expected = sqrtf(x[i]);
    printf("sqrt(%g) = %.7g (sqrtf: %.7g)\n", x[i], root[i], expected);
    if (!(fabsf(root[i] - expected) <= 1e-5f * expected))
      bad = 1;
  }
  printf("iterations: %lld\n",
         (long long)*(const int64_t *)kiln_tensor_data(outputs[1]));
  kiln_tensor_release(input);
  kiln_tensor_release(outputs[0]);
  kiln_tensor_release(outputs[1]);
  kiln_module_release(module);
  return bad;
}
