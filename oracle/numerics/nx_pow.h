/*
** nx_pow.h: binary32 pow, correctly rounded over the domain the frozen
** pipeline uses, with the C99 Annex F special cases.
**
** Algorithm: log|x| in double-double (|x| = 2^e * m, m in [sqrt(1/2), sqrt(2)),
** log m = 2 atanh(s) with s = (m-1)/(m+1), series to s^39 in Horner form, plus
** e*ln2 from a three-part ln2), t = y * log|x|, then nx_exp_dd(t) and one final
** rounding.  Relative error before that rounding is below 2^-90.
**
** Fast path: log m by the same series to s^23 in plain double (relative error
** below 2^-50), t = y * log|x| with ln2 exact in its parts, and nx_exp_fast;
** the result is within 2^-47 + |y| 2^-50 of pow, and is accepted when the
** interval 2^-45 + |y| 2^-48 around it rounds to one float.
**
** Exact results: an exact binary32 result is rounded correctly by the error
** bound alone; an exact midpoint can only arise for integer y >= 2, so those
** are computed exactly in integers when m_odd^y fits in 63 bits.
**
** Proof of correct rounding: `bitgate numerics check --exhaustive` checks
** pow(160000, y) for all 2^32 y (the RoPE frequency base, DESIGN.md and the
** CSA seed's `base = pow(160000, -2p/rope_dim)`), and every check samples
** other bases.  Outside those it is a very accurate pow, not a proven one.
**
** Special cases (C99 F.9.4.4): pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN;
** other NaN arguments return the NaN argument (x first); zero, infinite and
** negative bases as the standard lists; a negative finite x with a finite
** non-integer y gives NaN (NX_NAN_BITS).
*/
#ifndef NX_POW_H
#define NX_POW_H

#include "nx_base.h"
#include "nx_dd.h"
#include "nx_exp.h"

/* 1/(2k+1) for k = 0..19 as (hi, lo) pairs; checked against MPFR in the tests. */
NX_TABLE double nx_inv_odd[20 * 2] = {
    0x1p+0, 0x0p+0,
    0x1.5555555555555p-2, 0x1.5555555555555p-56,
    0x1.999999999999ap-3, -0x1.999999999999ap-57,
    0x1.2492492492492p-3, 0x1.2492492492492p-57,
    0x1.c71c71c71c71cp-4, 0x1.c71c71c71c71cp-58,
    0x1.745d1745d1746p-4, -0x1.745d1745d1746p-59,
    0x1.3b13b13b13b14p-4, -0x1.3b13b13b13b14p-58,
    0x1.1111111111111p-4, 0x1.1111111111111p-60,
    0x1.e1e1e1e1e1e1ep-5, 0x1.e1e1e1e1e1e1ep-61,
    0x1.af286bca1af28p-5, 0x1.af286bca1af28p-59,
    0x1.8618618618618p-5, 0x1.8618618618618p-59,
    0x1.642c8590b2164p-5, 0x1.642c8590b2164p-60,
    0x1.47ae147ae147bp-5, -0x1.eb851eb851eb8p-61,
    0x1.2f684bda12f68p-5, 0x1.2f684bda12f68p-59,
    0x1.1a7b9611a7b96p-5, 0x1.1a7b9611a7b96p-61,
    0x1.0842108421084p-5, 0x1.0842108421084p-60,
    0x1.f07c1f07c1f08p-6, -0x1.f07c1f07c1f08p-61,
    0x1.d41d41d41d41dp-6, 0x1.075075075075p-60,
    0x1.bacf914c1badp-6, -0x1.bacf914c1badp-60,
    0x1.a41a41a41a41ap-6, 0x1.069069069069p-60,
};

#define NX_SQRT2 0x1.6a09e667f3bcdp+0

/* log(a) in double-double for finite a > 0 (subnormals included). */
NX_FN nx_dd nx_log_dd(float a) {
  nx_u64 bits = nx_f64_bits((double)a);
  double e = (double)((int)(bits >> 52) - 1023);
  double m = nx_f64_from_bits((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  nx_dd s, z, log_m, acc;
  if (m > NX_SQRT2) m *= 0.5, e += 1.0;
  /* m - 1 and m + 1 are exact: m has at most 24 significant bits */
  s = nx_dd_div(nx_dd_make(m - 1.0, 0.0), nx_dd_make(m + 1.0, 0.0));
  z = nx_dd_mul(s, s);
  log_m = nx_dd_mul(s, nx_dd_horner(nx_inv_odd, 20, z));
  log_m = nx_dd_make(2.0 * log_m.hi, 2.0 * log_m.lo);
  acc = nx_dd_two_sum(e * NX_LN2_1, e * NX_LN2_2); /* both products exact */
  acc = nx_dd_add(acc, log_m);
  return nx_dd_add_d(acc, e * NX_LN2_3);
}

/* log(a) as double-double whose low part carries e*ln2's tail; log m in plain
** double (relative error below 2^-50). */
NX_FN nx_dd nx_log_fast(float a) {
  nx_u64 bits = nx_f64_bits((double)a);
  double e = (double)((int)(bits >> 52) - 1023);
  double m = nx_f64_from_bits((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  double s, z, p;
  int k;
  if (m > NX_SQRT2) m *= 0.5, e += 1.0;
  s = (m - 1.0) / (m + 1.0);
  z = s * s;
  p = nx_inv_odd[2 * 11];
  for (k = 10; k >= 0; k--) p = p * z + nx_inv_odd[2 * k];
  return nx_dd_add_d(nx_dd_add_d(nx_dd_two_sum(e * NX_LN2_1, 2.0 * s * p), e * NX_LN2_2), e * NX_LN2_3);
}

/* 0: not an integer; 1: odd integer; 2: even integer.  y finite. */
NX_FN int nx_f32_integer_kind(float y) {
  nx_u32 u = nx_f32_bits(y) & 0x7fffffffu;
  int eb = (int)(u >> 23), frac_bits = 150 - eb;
  nx_u32 m = (u & 0x7fffffu) | 0x800000u;
  if (u == 0) return 2;
  if (eb < 127) return 0;
  if (frac_bits <= 0) return frac_bits == 0 && (m & 1u) ? 1 : 2;
  if (m & ((1u << frac_bits) - 1u)) return 0;
  return (m >> frac_bits) & 1u ? 1 : 2;
}

/*
** |x|^n exactly when n in [2, 64] and the odd part of |x| raised to n fits in
** 63 bits; sets *done and returns the correctly rounded magnitude.
*/
NX_FN float nx_pow_exact_int(float ax, float y, int *done) {
  nx_u32 u = nx_f32_bits(ax);
  nx_u64 odd = nx_f32_significand(u), v = 1;
  int ex = (int)(u >> 23) - 150, n = (int)y, i, scale;
  double hi;
  *done = 0;
  if (y < 2.0f || y > 64.0f || (u >> 23) == 0) return 0.0f;
  while ((odd & 1u) == 0) odd >>= 1, ex++;
  for (i = 0; i < n; i++) {
    if (v > (0x7fffffffffffffffull / odd)) return 0.0f;
    v *= odd;
  }
  scale = ex * n;
  if (scale < -1000 || scale > 1000) return 0.0f;
  hi = (double)v;
  *done = 1;
  return nx_dd_to_f32(nx_dd_make(hi * nx_f64_pow2(scale),
                                 (double)(nx_i64)(v - (nx_u64)hi) * nx_f64_pow2(scale)));
}

NX_FN float nx_powf(float x, float y) {
  const float inf = nx_f32_from_bits(0x7f800000u);
  float ax = nx_f32_abs(x), ay = nx_f32_abs(y), r;
  int kind, negative = 0, done;
  nx_dd t;
  if (ay == 0.0f || x == 1.0f) return 1.0f;
  if (nx_f32_is_nan(x)) return x;
  if (nx_f32_is_nan(y)) return y;
  kind = ay == inf ? 2 : nx_f32_integer_kind(y);
  if (ay == inf) {
    if (ax == 1.0f) return 1.0f;
    return (ax < 1.0f) == (y < 0.0f) ? inf : 0.0f;
  }
  if (x < 0.0f || (x == 0.0f && (nx_f32_bits(x) >> 31))) {
    if (kind == 0 && x != 0.0f && ax != inf) return nx_f32_nan();
    negative = kind == 1;
  }
  if (ax == 0.0f) r = y < 0.0f ? inf : 0.0f;
  else if (ax == inf) r = y < 0.0f ? 0.0f : inf;
  else {
    t = nx_dd_mul_d(nx_log_fast(ax), (double)y);
    done = t.hi > 89.5 || t.hi < -104.5;
    if (done) r = t.hi > 0 ? inf : 0.0f;
    else done = nx_round_if_certain(nx_exp_fast(t), 0x1p-45 + (double)ay * 0x1p-48, &r);
    if (!done && kind != 0) r = nx_pow_exact_int(ax, y, &done);
    if (!done) {
      t = nx_dd_mul_d(nx_log_dd(ax), (double)y);
      if (t.hi > 89.5) r = inf;
      else if (t.hi < -104.5) r = 0.0f;
      else r = nx_dd_to_f32(nx_exp_dd(t));
    }
  }
  return negative ? -r : r;
}

#endif /* NX_POW_H */
