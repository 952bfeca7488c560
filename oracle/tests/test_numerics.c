/*
** test_numerics.c: unit tests of the transcendental part of numerics.h:
** the constant tables against MPFR, the hard inputs, special values, and
** the sin/cos pair.  The wide sweeps are `bitgate numerics check`.
*/
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>

/* hi + lo must be the 106-bit rounding of exact, and hi its 53-bit rounding. */
static void expect_dd(const char *what, int index, double hi, double lo, mpfr_t exact) {
  mpfr_t h, l;
  mpfr_inits2(400, h, l, (mpfr_ptr)0);
  cr_expect(hi == mpfr_get_d(exact, MPFR_RNDN), "%s[%d]: hi %a is not RN53", what, index, hi);
  mpfr_sub_d(l, exact, hi, MPFR_RNDN);
  cr_expect(lo == mpfr_get_d(l, MPFR_RNDN), "%s[%d]: lo %a is not RN53 of the rest", what, index, lo);
  mpfr_clears(h, l, (mpfr_ptr)0);
}

Test(numerics_tables, inverse_factorials) {
  mpfr_t x;
  int n;
  mpfr_init2(x, 400);
  mpfr_set_ui(x, 1, MPFR_RNDN);
  for (n = 0; n < 28; n++) {
    if (n) mpfr_div_ui(x, x, (unsigned long)n, MPFR_RNDN);
    expect_dd("1/n!", n, nx_inv_factorial[2 * n], nx_inv_factorial[2 * n + 1], x);
  }
  mpfr_clear(x);
  mpfr_free_cache();
}

Test(numerics_tables, inverse_odd) {
  mpfr_t x;
  int k;
  mpfr_init2(x, 400);
  for (k = 0; k < 20; k++) {
    mpfr_set_ui(x, 1, MPFR_RNDN);
    mpfr_div_ui(x, x, (unsigned long)(2 * k + 1), MPFR_RNDN);
    expect_dd("1/(2k+1)", k, nx_inv_odd[2 * k], nx_inv_odd[2 * k + 1], x);
  }
  mpfr_clear(x);
}

Test(numerics_tables, ln2_pi_and_two_over_pi) {
  mpfr_t x, t;
  int w;
  mpfr_inits2(600, x, t, (mpfr_ptr)0);
  mpfr_const_log2(x, MPFR_RNDN); /* the three parts sum to ln2 within 2^-147 */
  mpfr_sub_d(x, x, NX_LN2_1, MPFR_RNDN);
  mpfr_sub_d(x, x, NX_LN2_2, MPFR_RNDN);
  mpfr_sub_d(x, x, NX_LN2_3, MPFR_RNDN);
  cr_expect(mpfr_zero_p(x) || mpfr_get_exp(x) < -146, "ln2 parts are off");
  cr_expect(fmod(NX_LN2_1 * 0x1p44, 1.0) == 0.0 && fmod(NX_LN2_2 * 0x1p92, 1.0) == 0.0,
            "ln2 parts 1-2 must have 44 bits so k * part is exact");
  mpfr_const_pi(x, MPFR_RNDN);
  mpfr_div_ui(x, x, 2, MPFR_RNDN);
  expect_dd("pi/2", 0, NX_PIO2_HI, NX_PIO2_LO, x);
  mpfr_const_pi(t, MPFR_RNDN);
  mpfr_ui_div(x, 2, t, MPFR_RNDN);
  for (w = 0; w < 12; w++) {
    mpfr_mul_2ui(x, x, 32, MPFR_RNDN);
    cr_expect(mpfr_get_ui(x, MPFR_RNDZ) == nx_two_over_pi_bits[w], "2/pi word %d", w);
    mpfr_sub_ui(x, x, mpfr_get_ui(x, MPFR_RNDZ), MPFR_RNDN);
  }
  mpfr_clears(x, t, (mpfr_ptr)0);
  mpfr_free_cache();
}

/* nx_exp_float's constants: ln2/8 in two parts (the first of 40 bits), and the three eighth roots of 2. */
Test(numerics_tables, exp_float_constants) {
  static const double root[3] = {NX_EXP2_1_8, NX_EXP2_2_8, NX_EXP2_4_8};
  mpfr_t x;
  int i;
  mpfr_init2(x, 600);
  mpfr_const_log2(x, MPFR_RNDN);
  mpfr_div_ui(x, x, 8, MPFR_RNDN);
  mpfr_sub_d(x, x, NX_LN2_8_1, MPFR_RNDN);
  mpfr_sub_d(x, x, NX_LN2_8_2, MPFR_RNDN);
  cr_expect(mpfr_zero_p(x) || mpfr_get_exp(x) < -96, "ln2/8's parts are off by more than 2^-97");
  cr_expect(fmod(NX_LN2_8_1 * 0x1p43, 1.0) == 0.0, "ln2/8's first part must have 40 bits so k * part is exact");
  for (i = 0; i < 3; i++) {
    mpfr_set_ui(x, 1u << i, MPFR_RNDN);
    mpfr_div_ui(x, x, 8, MPFR_RNDN);
    mpfr_exp2(x, x, MPFR_RNDN);
    cr_expect(root[i] == mpfr_get_d(x, MPFR_RNDN), "2^(%d/8) is not RN53", 1 << i);
  }
  mpfr_clear(x);
  mpfr_free_cache();
}

/*
** nx_expf trusts nx_exp_float's double whenever the interval of 2^-46 around
** it rounds to one float, so the fast path's relative error must stay below
** 2^-46; its analysis (nx_exp.h) gives 2^-49.5.  Checked against MPFR where
** the reduced argument is largest (|r| near ln2/16, at every k of the
** domain, a few floats either side) and on a stride over all the domain's
** floats; a shorter polynomial or a wrong constant fails here long before
** it would turn one of the 2^32 results.
*/
static double exp_float_rel_error(float xf, mpfr_t exact, mpfr_t diff) {
  mpfr_set_flt(exact, xf, MPFR_RNDN);
  mpfr_exp(exact, exact, MPFR_RNDN);
  mpfr_set_d(diff, nx_exp_float(xf), MPFR_RNDN);
  mpfr_sub(diff, diff, exact, MPFR_RNDN);
  mpfr_div(diff, diff, exact, MPFR_RNDN);
  return fabs(mpfr_get_d(diff, MPFR_RNDN));
}

Test(numerics_transcendental, exp_fast_path_error_bound) {
  const double bound = 0x1p-49;
  double worst = 0.0, e;
  float worst_x = 0.0f;
  mpfr_t exact, diff;
  long long k, n = 0;
  nx_u32 u;
  int d;
  mpfr_inits2(160, exact, diff, (mpfr_ptr)0);
  for (k = -1202; k <= 1028; k++) { /* x = (k + 1/2) ln2/8, where |r| peaks */
    const nx_u32 mid = nx_f32_bits((float)(((double)k + 0.5) * (NX_LN2_8_1 + NX_LN2_8_2)));
    for (d = -3; d <= 3; d++) {
      const float xf = nx_f32_from_bits(mid + (nx_u32)d);
      if (!(xf >= -104.0f && xf <= 89.0f)) continue;
      e = exp_float_rel_error(xf, exact, diff), n++;
      if (e > worst) worst = e, worst_x = xf;
    }
  }
  for (u = 0; u < 0xffffffffu - 16381u; u += 16381u) { /* a stride over every sign and exponent */
    const float xf = nx_f32_from_bits(u);
    if (!(xf >= -104.0f && xf <= 89.0f)) continue;
    e = exp_float_rel_error(xf, exact, diff), n++;
    if (e > worst) worst = e, worst_x = xf;
  }
  cr_log_info("worst %a at %a, %lld inputs", worst, worst_x, n);
  cr_expect(worst < bound, "nx_exp_float errs by %a (relative) at %a; nx_expf needs below 2^-46", worst, worst_x);
  cr_expect(n > 100000, "only %lld inputs checked", n);
  mpfr_clears(exact, diff, (mpfr_ptr)0);
  mpfr_free_cache();
}

/* Results MPFR gives for the hard inputs of DESIGN.md (binary32, RN). */
Test(numerics_transcendental, hard_inputs) {
  cr_expect(nx_f32_bits(nx_expf(0x1.04845ep+5f)) == nx_f32_bits(0x1.f93e36p+46f));
  cr_expect(nx_f32_bits(nx_expf(-0x1.d2259ap+3f)) == nx_f32_bits(0x1.fa6636p-22f));
  cr_expect(nx_f32_bits(nx_sinf(0x1.33333p+13f)) == nx_f32_bits(-0x1.63f4bap-2f));
  cr_expect(nx_f32_bits(nx_cosf(0x1.3170fp+63f)) == nx_f32_bits(0x1.fe2976p-1f));
  cr_expect(nx_f32_bits(nx_cosf(0x1.2b9622p+67f)) == nx_f32_bits(0x1.f0285ep-1f));
}

static int same(float a, float b) { return nx_f32_bits(a) == nx_f32_bits(b); }

Test(numerics_transcendental, special_values) {
  float inf = INFINITY;
  cr_expect(same(nx_expf(0.0f), 1.0f) && same(nx_expf(-0.0f), 1.0f));
  cr_expect(same(nx_expf(inf), inf) && same(nx_expf(-inf), 0.0f));
  /* the edges, as MPFR rounds them */
  cr_expect(same(nx_expf(0x1.62e42ep+6f), 0x1.ffff08p+127f), "largest finite exp");
  cr_expect(same(nx_expf(0x1.62e430p+6f), inf), "first overflow");
  cr_expect(same(nx_expf(-0x1.9fe368p+6f), 0x1p-149f), "last input reaching a subnormal");
  cr_expect(same(nx_expf(-0x1.9fe36ap+6f), 0.0f), "first input rounding to zero");
  cr_expect(nx_f32_bits(nx_expf(nx_f32_from_bits(0x7fc12345u))) == 0x7fc12345u, "NaN keeps its bits");
  cr_expect(same(nx_sinf(0.0f), 0.0f) && same(nx_sinf(-0.0f), -0.0f), "sin keeps the zero's sign");
  cr_expect(same(nx_cosf(-0.0f), 1.0f));
  cr_expect(nx_f32_bits(nx_sinf(inf)) == NX_NAN_BITS && nx_f32_bits(nx_cosf(-inf)) == NX_NAN_BITS);
  cr_expect(same(nx_sinf(0x1p-149f), 0x1p-149f), "sin of the smallest subnormal");
}

Test(numerics_transcendental, sincos_pair_equals_halves) {
  nx_u32 u;
  for (u = 0; u < 0xffffffffu - 0x10001u; u += 0x10001u) {
    float x = nx_f32_from_bits(u), s, c;
    nx_sincosf(x, &s, &c);
    if (nx_f32_is_nan(x)) continue;
    cr_assert(same(nx_sinf(x), s) && same(nx_cosf(x), c), "x=%a", x);
  }
}

Test(numerics_transcendental, pow_special_cases) {
  float inf = INFINITY, nan = nx_f32_nan();
  cr_expect(same(nx_powf(nan, 0.0f), 1.0f) && same(nx_powf(1.0f, nan), 1.0f));
  cr_expect(nx_f32_is_nan(nx_powf(-2.0f, 0.5f)), "negative base, fractional exponent");
  cr_expect(same(nx_powf(-2.0f, 3.0f), -8.0f) && same(nx_powf(-2.0f, 2.0f), 4.0f));
  cr_expect(same(nx_powf(-0.0f, -3.0f), -inf) && same(nx_powf(-0.0f, -2.0f), inf));
  cr_expect(same(nx_powf(-0.0f, 3.0f), -0.0f) && same(nx_powf(0.0f, 3.0f), 0.0f));
  cr_expect(same(nx_powf(-1.0f, inf), 1.0f) && same(nx_powf(0.5f, -inf), inf));
  cr_expect(same(nx_powf(2.0f, inf), inf) && same(nx_powf(2.0f, -inf), 0.0f));
  cr_expect(same(nx_powf(-inf, -3.0f), -0.0f) && same(nx_powf(-inf, 3.0f), -inf));
  cr_expect(same(nx_powf(inf, -0.5f), 0.0f));
  /* an exact midpoint: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 ties to even, 1 + 2^-11 */
  cr_expect(same(nx_powf(1.0f + 0x1p-12f, 2.0f), 1.0f + 0x1p-11f));
  /* the RoPE frequency bases of the CSA seed: pow(160000, -2p/64) */
  cr_expect(same(nx_powf(160000.0f, -0.25f), 0.05f), "160000^-1/4 = 1/20 rounded");
  cr_expect(same(nx_powf(160000.0f, -0.5f), 0x1.47ae14p-9f), "1/400 rounded");
}

Test(numerics_transcendental, pow_rope_domain_matches_mpfr) {
  int dim, p;
  mpfr_t x, y, r;
  mpfr_inits2(24, x, y, r, (mpfr_ptr)0);
  for (dim = 2; dim <= 512; dim += 2)
    for (p = 0; p < dim / 2; p++) {
      float e = -((float)(2 * p)) / (float)dim, want;
      mpfr_set_flt(x, 160000.0f, MPFR_RNDN);
      mpfr_set_flt(y, e, MPFR_RNDN);
      mpfr_pow(r, x, y, MPFR_RNDN); /* results are normal: no subnormalize needed */
      want = mpfr_get_flt(r, MPFR_RNDN);
      cr_assert(same(nx_powf(160000.0f, e), want), "pow(160000, %a) dim %d", e, dim);
    }
  mpfr_clears(x, y, r, (mpfr_ptr)0);
  mpfr_free_cache();
}
