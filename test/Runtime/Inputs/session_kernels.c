/* Stand-ins for generated kernels, with their calling convention
 * (include/lmopt/Target/CPU/KernelCodegen.h): args holds the operands' then
 * the results' data pointers. SessionTest puts the shared object's bytes in a
 * bundle's kernels section. Built twice: with LMOPT_TEST_KERNELS_ALT the same
 * entry points compute something else, so a test can tell two loaded
 * libraries apart. */

#include <stdint.h>

/* out[6] = max(a + b, 0); the alternative computes a - b. */
void add_relu_6(void **args) {
  const float *a = (const float *)args[0];
  const float *b = (const float *)args[1];
  float *out = (float *)args[2];
  for (int i = 0; i < 6; ++i) {
#ifdef LMOPT_TEST_KERNELS_ALT
    out[i] = a[i] - b[i];
#else
    float sum = a[i] + b[i];
    out[i] = sum > 0 ? sum : 0;
#endif
  }
}

/* Two results: doubled[4] = 2 a, total[1] = sum(a). */
void double_and_sum_4(void **args) {
  const float *a = (const float *)args[0];
  float *doubled = (float *)args[1];
  float *total = (float *)args[2];
  float sum = 0;
  for (int i = 0; i < 4; ++i) {
    doubled[i] = 2 * a[i];
    sum += a[i];
  }
  total[0] = sum;
}

/* address_mod_64[1] (i64) = the operand's address modulo 64. */
void address_mod_64(void **args) {
  int64_t *out = (int64_t *)args[1];
  out[0] = (int64_t)((uintptr_t)args[0] % 64);
}

/* A kernel over symbolic dims: out[n, 2] = a[n, 2] * 3 + 1, where args[2]
 * points at the sizes of the symbolic dims of the operand then the result
 * ({n, n}). */
void affine_rows_dyn(void **args) {
  const float *a = (const float *)args[0];
  float *out = (float *)args[1];
  const int64_t *sizes = (const int64_t *)args[2];
  int64_t n = sizes[0];
  if (sizes[1] != n)
    return; /* the test then sees the result untouched */
  for (int64_t i = 0; i < n * 2; ++i)
    out[i] = a[i] * 3 + 1;
}

/* A partitioned kernel over 131072 rows (512 KiB per result, 1 MiB in all:
 * enough for the runtime to split it): doubled[i] = 2 a[i], and part[i] = the share that
 * computed row i, so a test can see how the rows were split. The whole
 * kernel is share 0 of 1. */
#define PARTITIONED_ROWS 131072
void __lmopt_part_double_rows(void **args, int64_t part, int64_t parts) {
  const float *a = (const float *)args[0];
  float *doubled = (float *)args[1];
  float *who = (float *)args[2];
  int64_t begin = PARTITIONED_ROWS * part / parts;
  int64_t end = PARTITIONED_ROWS * (part + 1) / parts;
  for (int64_t i = begin; i < end; ++i) {
    doubled[i] = 2 * a[i];
    who[i] = (float)part;
  }
}

void double_rows(void **args) { __lmopt_part_double_rows(args, 0, 1); }
