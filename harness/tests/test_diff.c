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
