/*
** test_diff.c: the byte comparison: NaN equivalence, signed zeros, the first
** mismatch's coordinates, values and ULP distance.
*/
#include "harness/diff.h"
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <string.h>

static tensor make(dtype dt, void *data, long long d0, long long d1) {
  tensor t = {dt, 2, {d0, d1, 0, 0}, data};
  return t;
}

Test(diff, identical_and_nan_equivalent) {
  nx_u32 a[4] = {0x3f800000u, 0x7fc00000u, 0x80000000u, 0x12345678u};
  nx_u32 b[4] = {0x3f800000u, 0x7fffffffu, 0x80000000u, 0x12345678u};
  tensor ta = make(DTYPE_F32, a, 2, 2), tb = make(DTYPE_F32, b, 2, 2);
  tensor_diff d;
  cr_expect_eq(tensor_diff_run(&ta, &tb, &d), 0);
  cr_expect_eq(d.nan_equivalent, 1);
  cr_expect_eq(d.first_offset, -1);
}

Test(diff, signed_zero_is_a_mismatch_with_coordinates) {
  float a[6] = {1, 2, 3, 0.0f, 5, 6}, b[6] = {1, 2, 3, -0.0f, 5, 7};
  tensor ta = make(DTYPE_F32, a, 2, 3), tb = make(DTYPE_F32, b, 2, 3);
  tensor_diff d;
  char text[400];
  cr_expect_eq(tensor_diff_run(&ta, &tb, &d), 2);
  cr_expect_eq(d.first_offset, 3);
  cr_expect_str_eq(d.coords, "[1,0]");
  cr_expect_str_eq(d.expected_hex, "0x00000000");
  cr_expect_str_eq(d.actual_hex, "0x80000000");
  cr_expect_eq(d.ulp_distance, 1);
  tensor_diff_describe(&d, "Y", text, sizeof text);
  cr_expect(strstr(text, "first at offset 3 [1,0]") != NULL, "%s", text);
}

Test(diff, ulp_distance_in_the_element_format) {
  nx_u16 a[2] = {0x3c00, 0x3c00}, b[2] = {0x3c00, 0x3c03}; /* f16 1.0 and 3 ulp above */
  tensor ta = make(DTYPE_F16, a, 1, 2), tb = make(DTYPE_F16, b, 1, 2);
  tensor_diff d;
  cr_expect_eq(tensor_diff_run(&ta, &tb, &d), 1);
  cr_expect_eq(d.ulp_distance, 3);
  cr_expect_str_eq(d.expected_hex, "0x3c00");
}

Test(diff, nan_against_number_is_a_mismatch_without_ulp) {
  float a[1] = {1.0f}, b[1];
  tensor ta = make(DTYPE_F32, a, 1, 1), tb = make(DTYPE_F32, b, 1, 1);
  tensor_diff d;
  b[0] = nx_f32_nan();
  cr_expect_eq(tensor_diff_run(&ta, &tb, &d), 1);
  cr_expect_eq(d.ulp_distance, -1);
}

Test(diff, shape_mismatch) {
  float a[4] = {0}, b[4] = {0};
  tensor ta = make(DTYPE_F32, a, 2, 2), tb = make(DTYPE_F32, b, 1, 4);
  tensor_diff d;
  cr_expect(tensor_diff_run(&ta, &tb, &d) > 0);
  cr_expect_str_eq(d.coords, "shape");
}

/*
** Identical stretches are skipped a block at a time (diff.c): differences at
** every block edge, in the last partial block, and NaN pairs in a later
** block must still count, and the first one must still be reported.
*/
Test(diff, counts_and_first_mismatch_do_not_depend_on_the_block_walk) {
  enum { N = 3 * 4096 + 17 }; /* bytes: three whole blocks of u8 and a partial one */
  static const long long flips[] = {4095, 4096, 8191, 8192, 12288, N - 1};
  static unsigned char a[N], b[N];
  static nx_u16 ha[N / 2], hb[N / 2];
  tensor ta = make(DTYPE_U8, a, 1, N), tb = make(DTYPE_U8, b, 1, N);
  tensor_diff d;
  size_t i;
  memset(a, 0x5a, sizeof a);
  memcpy(b, a, sizeof b);
  for (i = 0; i < sizeof flips / sizeof flips[0]; i++) b[flips[i]] ^= 0x01;
  cr_expect_eq(tensor_diff_run(&ta, &tb, &d), 6);
  cr_expect_eq(d.first_offset, 4095);
  cr_expect_str_eq(d.coords, "[0,4095]");
  b[4095] = a[4095];
  cr_expect_eq(tensor_diff_run(&ta, &tb, &d), 5);
  cr_expect_eq(d.first_offset, 4096, "the first mismatch is the first of the second block");
  for (i = 0; i < N / 2; i++) ha[i] = hb[i] = 0x3f80; /* bf16 1.0 */
  ha[3000] = 0x7fc0, hb[3000] = 0x7fff; /* two NaNs: equivalent, in the second 4 KiB of the tensor */
  hb[N / 2 - 1] = 0x3f81;              /* one ulp, in the last partial block */
  ta = make(DTYPE_BF16, ha, 1, N / 2), tb = make(DTYPE_BF16, hb, 1, N / 2);
  cr_expect_eq(tensor_diff_run(&ta, &tb, &d), 1);
  cr_expect_eq(d.nan_equivalent, 1);
  cr_expect_eq(d.first_offset, N / 2 - 1);
  cr_expect_eq(d.ulp_distance, 1);
}
