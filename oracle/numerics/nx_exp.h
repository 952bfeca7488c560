/*
** nx_exp.h: correctly rounded binary32 exp (round to nearest, ties to even).
**
** Algorithm: t = k*ln2 + r with k = nearest integer to t/ln2 and |r| <= ~0.35,
** r computed in double-double against a three-part ln2 whose first two parts
** have 44 bits (so k*part is exact for |k| < 2^9); exp(r) by its Taylor series
** to r^23/23! in double-double Horner form (truncation below 2^-108); then
** exp(t) = 2^k * exp(r) exactly scaled, and rounded once with nx_dd_to_f32.
** The relative error before that last rounding is below 2^-95, far under what
** the hardest binary32 inputs need; `bitgate numerics check --exhaustive`
** checks all 2^32 inputs against MPFR.
**
** Fast path (nx_exp_float, plain double, for a float x in [-104, 89]): x =
** k*ln2/8 + r, k the nearest integer to x*8/ln2 (by the 1.5*2^52 rounding
** trick; a tie may go either way, |r| <= ln2/16 + 2^-60 still); r = (x -
** k*L1) - k*L2 with L1 + L2 = ln2/8 and L1 of 40 bits, so k*L1 is exact and
** x - k*L1 is exact by Sterbenz (k*L1 lies within a factor 2 of x whenever
** k != 0); exp(r) to r^7/7! (truncation below 2^-51.5) by Estrin's scheme,
** (c0 + c1 r + (c2 + c3 r) r^2) + (c4 + c5 r + (c6 + c7 r) r^2) r^4, six
** dependent operations where Horner's takes fourteen; 2^(j/8), j = k mod 8,
** as a product of up to three rounded constants, scaled exactly by
** 2^((k - j)/8) and applied in one product.  Relative error: about 10
** roundings of 2^-53 plus the truncation, below 2^-49.  nx_round_within
** accepts it when the whole 2^-46 interval around it rounds to one float;
** only inputs within about 2^-22 ulp of a midpoint take the double-double
** path.  This path replaced one with the double-double reduction and a
** degree-13 Horner sum (2026-12-03, for the kernels' latency), and its
** Horner sum gave way to Estrin's (2026-12-04, the same reason); each
** returns the same bits on all 2^32 inputs (oracle/numerics/NUMERICS.md),
** as any correctly rounded path must.
**
** Special cases: NaN returns its input bits; +inf -> +inf; -inf -> +0;
** x > 89 -> +inf (exp(89) > FLT_MAX); x < -104 -> +0 (exp(-104) is below half
** the smallest subnormal); exp(+-0) = 1 exactly.
**
** Hard inputs named in DESIGN.md: 0x1.04845ep+5, -0x1.d2259ap+3.
*/
#ifndef NX_EXP_H
#define NX_EXP_H

#include "nx_base.h"
#include "nx_dd.h"

/*
** 1/n! for n = 0..27 as (hi, lo) pairs, each hi + lo the 106-bit rounding;
** checked against MPFR in the unit tests.  exp uses n <= 23, sin/cos all.
*/
NX_TABLE double nx_inv_factorial[28 * 2] = {
    0x1p+0, 0x0p+0,
    0x1p+0, 0x0p+0,
    0x1p-1, 0x0p+0,
    0x1.5555555555555p-3, 0x1.5555555555555p-57,
    0x1.5555555555555p-5, 0x1.5555555555555p-59,
    0x1.1111111111111p-7, 0x1.1111111111111p-63,
    0x1.6c16c16c16c17p-10, -0x1.f49f49f49f49fp-65,
    0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-73,
    0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76,
    0x1.71de3a556c734p-19, -0x1.c154f8ddc6cp-73,
    0x1.27e4fb7789f5cp-22, 0x1.cbbc05b4fa99ap-76,
    0x1.ae64567f544e4p-26, -0x1.c062e06d1f209p-80,
    0x1.1eed8eff8d898p-29, -0x1.2aec959e14c06p-83,
    0x1.6124613a86d09p-33, 0x1.f28e0cc748ebep-87,
    0x1.93974a8c07c9dp-37, 0x1.05d6f8a2efd1fp-92,
    0x1.ae7f3e733b81fp-41, 0x1.1d8656b0ee8cbp-97,
    0x1.ae7f3e733b81fp-45, 0x1.1d8656b0ee8cbp-101,
    0x1.952c77030ad4ap-49, 0x1.ac981465ddc6cp-103,
    0x1.6827863b97d97p-53, 0x1.eec01221a8b0bp-107,
    0x1.2f49b46814157p-57, 0x1.2650f61dbdcb4p-112,
    0x1.e542ba4020225p-62, 0x1.ea72b4afe3c2fp-120,
    0x1.71b8ef6dcf572p-66, -0x1.d043ae40c4647p-120,
    0x1.0ce396db7f853p-70, -0x1.aebcdbd20331cp-124,
    0x1.761b41316381ap-75, -0x1.3423c7d91404fp-130,
    0x1.f2cf01972f578p-80, -0x1.9ada5fcc1ab14p-135,
    0x1.3f3ccdd165fa9p-84, -0x1.58ddadf344487p-139,
    0x1.88e85fc6a4e5ap-89, -0x1.71c37ebd1654p-143,
    0x1.d1ab1c2dccea3p-94, 0x1.054d0c78aea14p-149,
};

/* 1/n! rounded to a double. */
NX_FN double nx_inv_fact(int n) { return nx_inv_factorial[2 * n]; }

/* ln2 = NX_LN2_1 + NX_LN2_2 + NX_LN2_3 (the first two with 44 bits). */
#define NX_LN2_1 0x1.62e42fefa3ap-1
#define NX_LN2_2 (-0x1.0ca86c3898cp-49)
#define NX_LN2_3 (-0x1.ff0342542fc33p-94)
#define NX_INV_LN2 0x1.71547652b82fep+0

/* t - k*ln2 in double-double, for integer-valued k with |k| < 2^9. */
NX_FN nx_dd nx_reduce_ln2(nx_dd t, double k) {
  nx_dd r = nx_dd_add_d(t, -(k * NX_LN2_1));
  r = nx_dd_add_d(r, -(k * NX_LN2_2));
  return nx_dd_add_d(r, -(k * NX_LN2_3));
}

/* Nearest integer (ties away) as a double, for |x| < 2^30. */
NX_FN double nx_round_half_away(double x) {
  return (double)(nx_i32)(x < 0 ? x - 0.5 : x + 0.5);
}

/* exp(t) in double-double, for |t.hi| <= 110. */
NX_FN nx_dd nx_exp_dd(nx_dd t) {
  double k = nx_round_half_away(t.hi * NX_INV_LN2);
  nx_dd r = nx_reduce_ln2(t, k);
  nx_dd e = nx_dd_horner(nx_inv_factorial, 24, r);
  double scale = nx_f64_pow2((int)k);
  return nx_dd_make(e.hi * scale, e.lo * scale);
}

/* exp(t) in plain double for |t| <= 110: relative error below 2^-48. */
NX_FN double nx_exp_fast(nx_dd t) {
  double k = nx_round_half_away(t.hi * NX_INV_LN2);
  nx_dd r = nx_reduce_ln2(t, k);
  double p = nx_inv_factorial[2 * 13];
  int n;
  for (n = 12; n >= 0; n--) p = p * r.hi + nx_inv_factorial[2 * n];
  p = p + p * r.lo; /* exp(hi + lo) = exp(hi) (1 + lo), |lo| < 2^-53 */
  return p * nx_f64_pow2((int)k);
}

/* ln2/8 = NX_LN2_8_1 + NX_LN2_8_2 (+ below 2^-97), the first part of 40 bits. */
#define NX_LN2_8_1 0x1.62e42fefa2p-4
#define NX_LN2_8_2 0x1.9ef35793c7673p-44
#define NX_8_INV_LN2 0x1.71547652b82fep+3
#define NX_ROUND_MAGIC 0x1.8p52 /* s + it - it is s rounded to an integer, for |s| < 2^51 */
/* 2^(1/8), 2^(2/8), 2^(4/8), each the nearest double. */
#define NX_EXP2_1_8 0x1.172b83c7d517bp+0
#define NX_EXP2_2_8 0x1.306fe0a31b715p+0
#define NX_EXP2_4_8 0x1.6a09e667f3bcdp+0

/* exp(x) in plain double for a float x in [-104, 89]: relative error below 2^-49 (see the top). */
NX_FN double nx_exp_float(float x) {
  const double xd = (double)x, s = xd * NX_8_INV_LN2 + NX_ROUND_MAGIC;
  const double kd = s - NX_ROUND_MAGIC;
  const int k = (int)(nx_u32)nx_f64_bits(s); /* s's low mantissa bits hold k in two's complement */
  const int j = k & 7;
  const double r = (xd - kd * NX_LN2_8_1) - kd * NX_LN2_8_2;
  const double r2 = r * r, r4 = r2 * r2;
  const double c01 = nx_inv_fact(0) + nx_inv_fact(1) * r, c23 = nx_inv_fact(2) + nx_inv_fact(3) * r;
  const double c45 = nx_inv_fact(4) + nx_inv_fact(5) * r, c67 = nx_inv_fact(6) + nx_inv_fact(7) * r;
  const double p = (c01 + c23 * r2) + (c45 + c67 * r2) * r4;
  /* independent of the polynomial, so it costs no latency; times 2^((k - j)/8) it stays exact */
  double scale = ((j & 1) ? NX_EXP2_1_8 : 1.0) * ((j & 2) ? NX_EXP2_2_8 : 1.0);
  scale = scale * ((j & 4) ? NX_EXP2_4_8 : 1.0);
  return p * (scale * nx_f64_pow2((k - j) / 8));
}

/*
** The double-double path, out of line in kernels: it runs for 186 of the
** 2^32 inputs, and inlined it put about 400 instructions into every exp's
** call site (the csa4 index compressor's PTX: 3,630 lines inlined, 2,584
** out of line; the csa4 decode step 85.5 -> 84.6 us on an H200:
** docs/SPEED.md, twenty-second round).
*/
NX_COLD float nx_expf_hard(float x) { return nx_dd_to_f32(nx_exp_dd(nx_dd_make((double)x, 0.0))); }

/*
** The fast path runs on x clamped into its domain and the special cases are
** selected after it, so that a kernel's exp takes one branch, the rare one
** to the double-double path (each branch cost an H200 warp about 30
** cycles; docs/SPEED.md, twenty-second round).
*/
NX_FN float nx_expf(float x) {
  const int inside = x >= -104.0f && x <= 89.0f; /* not for a NaN */
  const double y = nx_exp_float(inside ? x : 0.0f); /* positive */
  float r;
  if (!nx_round_within(y, y * 0x1p-46, &r) && inside) r = nx_expf_hard(x);
  return nx_f32_is_nan(x) ? x : x > 89.0f ? nx_f32_from_bits(0x7f800000u) : x < -104.0f ? 0.0f : r;
}

#endif /* NX_EXP_H */
