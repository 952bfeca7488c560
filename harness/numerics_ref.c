/*
** numerics_ref.c: MPFR references (see numerics_ref.h).
**
** Each reference follows MPFR's documented recipe for emulating a binary
** format: set the format's exponent range (emin is the exponent of the
** smallest subnormal, in MPFR's [0.5, 1) convention), compute or round into a
** variable of the format's precision, then mpfr_subnormalize.  The ranges are
** restored afterwards so references can be mixed in one thread.
*/
#include "harness/numerics_ref.h"

#include <mpfr.h>

typedef struct format_range {
  mpfr_exp_t emin, emax;
} format_range;

static const format_range binary32 = {-148, 128};
static const format_range bf16 = {-132, 128};
static const format_range binary16 = {-23, 16};
static const format_range e4m3 = {-8, 9};
static const format_range e2m1 = {0, 3};

static format_range range_enter(format_range r) {
  format_range old = {mpfr_get_emin(), mpfr_get_emax()};
  mpfr_set_emin(r.emin);
  mpfr_set_emax(r.emax);
  return old;
}

static float finish_f32(mpfr_t y, int inex) {
  mpfr_subnormalize(y, inex, MPFR_RNDN);
  return mpfr_get_flt(y, MPFR_RNDN);
}

float ref_expf(float x) {
  MPFR_DECL_INIT(mx, 24);
  MPFR_DECL_INIT(y, 24);
  format_range old = range_enter(binary32);
  float r;
  mpfr_set_flt(mx, x, MPFR_RNDN);
  r = finish_f32(y, mpfr_exp(y, mx, MPFR_RNDN));
  range_enter(old);
  return r;
}

/* mpfr_sin_cos packs both ternary values: code 0 exact, 1 above, 2 below. */
static int ternary_of(int code) { return code == 0 ? 0 : code == 1 ? 1 : -1; }

void ref_sincosf(float x, float *s, float *c) {
  MPFR_DECL_INIT(mx, 24);
  MPFR_DECL_INIT(ms, 24);
  MPFR_DECL_INIT(mc, 24);
  format_range old = range_enter(binary32);
  int packed;
  mpfr_set_flt(mx, x, MPFR_RNDN);
  packed = mpfr_sin_cos(ms, mc, mx, MPFR_RNDN);
  *s = finish_f32(ms, ternary_of(packed & 3));
  *c = finish_f32(mc, ternary_of(packed >> 2));
  range_enter(old);
}

float ref_powf(float x, float y) {
  MPFR_DECL_INIT(mx, 24);
  MPFR_DECL_INIT(my, 24);
  MPFR_DECL_INIT(r, 24);
  format_range old = range_enter(binary32);
  float out;
  mpfr_set_flt(mx, x, MPFR_RNDN);
  mpfr_set_flt(my, y, MPFR_RNDN);
  out = finish_f32(r, mpfr_pow(r, mx, my, MPFR_RNDN));
  range_enter(old);
  return out;
}

/* Rounds x into r (declared with the format's precision) under the format's range. */
static float round_into(mpfr_t r, float x, format_range range) {
  format_range old = range_enter(range);
  int inex = mpfr_set_flt(r, x, MPFR_RNDN);
  float out;
  inex = mpfr_check_range(r, inex, MPFR_RNDN);
  mpfr_subnormalize(r, inex, MPFR_RNDN);
  range_enter(old);
  out = mpfr_get_flt(r, MPFR_RNDN); /* exact: the value has at most 11 bits */
  return out;
}

float ref_round_bf16(float x) {
  MPFR_DECL_INIT(r, 8);
  return round_into(r, x, bf16);
}

float ref_round_f16(float x) {
  MPFR_DECL_INIT(r, 11);
  return round_into(r, x, binary16);
}

float ref_round_e4m3(float x) {
  MPFR_DECL_INIT(r, 4);
  return round_into(r, x, e4m3);
}

float ref_round_e2m1(float x) {
  MPFR_DECL_INIT(r, 2);
  return round_into(r, x, e2m1);
}

void numerics_ref_thread_done(void) { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
