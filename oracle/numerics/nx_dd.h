/*
** nx_dd.h: double-double arithmetic, the working precision of the correctly
** rounded transcendentals.
**
** A value is hi + lo with |lo| <= ulp(hi)/2.  Products use Dekker's split
** (no FMA: host builds use -ffp-contract=off, kernels --fmad=false), so every
** operation here is a fixed sequence of IEEE binary64 adds and multiplies and
** gives the same bits on any conforming machine.  Relative error per operation
** is about 2^-104, valid while no intermediate over- or underflows binary64;
** callers keep magnitudes well inside that range.
**
** nx_dd_to_f32 rounds hi + lo to the nearest binary32, ties to even, including
** the subnormal range and overflow to inf.  It is exact given the dd value: it
** only has to look at lo when hi sits exactly on a binary32 midpoint.
*/
#ifndef NX_DD_H
#define NX_DD_H

#include "nx_base.h"

typedef struct {
  double hi, lo;
} nx_dd;

NX_FN nx_dd nx_dd_make(double hi, double lo) {
  nx_dd r;
  r.hi = hi;
  r.lo = lo;
  return r;
}

/* a + b exactly, any magnitudes (Knuth). */
NX_FN nx_dd nx_dd_two_sum(double a, double b) {
  double s = a + b;
  double bb = s - a;
  return nx_dd_make(s, (a - (s - bb)) + (b - bb));
}

/* a + b exactly, for |a| >= |b| or a == 0 (Dekker). */
NX_FN nx_dd nx_dd_fast_two_sum(double a, double b) {
  double s = a + b;
  return nx_dd_make(s, b - (s - a));
}

/* a * b exactly (Dekker/Veltkamp split at 27 bits). */
NX_FN nx_dd nx_dd_two_prod(double a, double b) {
  const double splitter = 134217729.0; /* 2^27 + 1 */
  double p = a * b;
  double ca = splitter * a, cb = splitter * b;
  double ah = ca - (ca - a), al = a - ah;
  double bh = cb - (cb - b), bl = b - bh;
  double err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return nx_dd_make(p, err);
}

NX_FN nx_dd nx_dd_add(nx_dd x, nx_dd y) {
  nx_dd s = nx_dd_two_sum(x.hi, y.hi);
  nx_dd t = nx_dd_two_sum(x.lo, y.lo);
  s.lo += t.hi;
  s = nx_dd_fast_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return nx_dd_fast_two_sum(s.hi, s.lo);
}

NX_FN nx_dd nx_dd_add_d(nx_dd x, double y) {
  nx_dd s = nx_dd_two_sum(x.hi, y);
  s.lo += x.lo;
  return nx_dd_fast_two_sum(s.hi, s.lo);
}

NX_FN nx_dd nx_dd_mul(nx_dd x, nx_dd y) {
  nx_dd p = nx_dd_two_prod(x.hi, y.hi);
  p.lo += x.hi * y.lo + x.lo * y.hi;
  return nx_dd_fast_two_sum(p.hi, p.lo);
}

NX_FN nx_dd nx_dd_mul_d(nx_dd x, double y) {
  nx_dd p = nx_dd_two_prod(x.hi, y);
  p.lo += x.lo * y;
  return nx_dd_fast_two_sum(p.hi, p.lo);
}

NX_FN nx_dd nx_dd_neg(nx_dd x) { return nx_dd_make(-x.hi, -x.lo); }

/* x / y for double y != 0: one correction step, about 2^-104 relative. */
NX_FN nx_dd nx_dd_div(nx_dd x, nx_dd y) {
  double q1 = x.hi / y.hi;
  nx_dd r = nx_dd_add(x, nx_dd_neg(nx_dd_mul_d(y, q1)));
  double q2 = r.hi / y.hi;
  r = nx_dd_add(r, nx_dd_neg(nx_dd_mul_d(y, q2)));
  return nx_dd_add_d(nx_dd_fast_two_sum(q1, q2), r.hi / y.hi);
}

/*
** Horner evaluation of sum c[k] z^k, k = 0..n-1, all in double-double.
** c holds n (hi, lo) pairs.
*/
NX_FN nx_dd nx_dd_horner(const double *c, int n, nx_dd z) {
  nx_dd acc = nx_dd_make(c[2 * (n - 1)], c[2 * (n - 1) + 1]);
  int k;
  for (k = n - 2; k >= 0; k--)
    acc = nx_dd_add(nx_dd_mul(acc, z), nx_dd_make(c[2 * k], c[2 * k + 1]));
  return acc;
}

/*
** The fast-path rounding test.  y approximates a real v != 0 with
** |y - v| <= |y| * rel_err (the caller's proven bound, at least 2^-50 so that
** the rounding of the two operations below cannot matter).  If every value in
** that interval rounds to the same binary32, that float is the correctly
** rounded v: store it and return 1.  Otherwise return 0 and let the caller
** take its double-double path.  Rounding is monotone, so the two ends decide.
** nx_round_within is given the slack |y| * rel_err instead: a caller whose
** y is positive (exp's) keeps the absolute value's select off its path.  It
** stores the interval's low end either way, so that a caller can select
** instead of branch.
*/
NX_FN int nx_round_within(double y, double slack, float *out) {
  float lo = (float)(y - slack), hi = (float)(y + slack);
  *out = lo;
  return nx_f32_bits(lo) == nx_f32_bits(hi);
}

NX_FN int nx_round_if_certain(double y, double rel_err, float *out) {
  return nx_round_within(y, (y < 0 ? -y : y) * rel_err, out);
}

/* A binary32 magnitude's neighbour as a double; one past FLT_MAX is 2^128. */
NX_FN double nx_f32_bits_as_f64(nx_u32 u) {
  return u >= 0x7f800000u ? 0x1p128 : (double)nx_f32_from_bits(u);
}

NX_FN float nx_dd_to_f32(nx_dd v) {
  double a, mid;
  nx_u32 fa, below, above;
  float r;
  int negative;
  v = nx_dd_fast_two_sum(v.hi, v.lo);
  negative = (int)(nx_f64_bits(v.hi) >> 63); /* the sign bit, so -0 stays -0 */
  a = negative ? -v.hi : v.hi;
  fa = nx_f32_bits((float)a);
  if ((double)nx_f32_from_bits(fa) == a) {
    r = nx_f32_from_bits(fa); /* hi is a float: lo cannot move it */
  } else {
    below = (double)nx_f32_from_bits(fa) < a ? fa : fa - 1u;
    above = below + 1u;
    mid = (nx_f32_bits_as_f64(below) + nx_f32_bits_as_f64(above)) * 0.5;
    if (a != mid || v.lo == 0.0) {
      r = nx_f32_from_bits(fa); /* hi and hi + lo lie on the same side */
    } else {
      int lo_away = (v.lo > 0) == (v.hi > 0); /* magnitude above the midpoint? */
      r = nx_f32_from_bits(lo_away ? above : below);
    }
  }
  return negative ? -r : r;
}

#endif /* NX_DD_H */
