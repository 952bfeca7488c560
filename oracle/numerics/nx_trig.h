/*
** nx_trig.h: correctly rounded binary32 sin and cos (round to nearest, ties to
** even), computed as one pair so that nx_sinf and nx_cosf equal the two halves
** of nx_sincosf by construction.
**
** Argument reduction: |x| < pi/4 is used as is.  Otherwise x = m * 2^E (m a
** 24-bit integer) is multiplied by a 192-bit window of the bits of 2/pi that
** starts where earlier bits would only add multiples of 4 (Payne-Hanek).  The
** integer product gives the quadrant q (mod 4) and a 128-bit fraction f in
** [-1/2, 1/2); r = f * pi/2 in double-double.  Truncating 2/pi after the window
** costs below 2^-160 in f; the smallest |r| any binary32 reaches is far above
** 2^-64, so r is known to better than 2^-95 relative.
**
** Kernels: sin(r) = r * sum (-1)^k r^2k / (2k+1)!, cos(r) = sum (-1)^k r^2k /
** (2k)!, k = 0..13, in double-double Horner form (truncation below 2^-90 at
** |r| = pi/4).  Quadrant q selects (+-sin, +-cos); sin is odd, cos even.  One
** rounding at the end, with nx_dd_to_f32.
**
** Fast path: the same reduction, then both series in plain double to r^19 and
** r^18 (relative error below 2^-49 on |r| <= pi/4), corrected by the low part
** of r; nx_round_if_certain accepts each result when its 2^-45 interval rounds
** to one float, else the double-double series decide.
**
** Special cases: NaN returns its input bits; +-inf gives NaN (NX_NAN_BITS);
** sin(+-0) = +-0, cos(+-0) = 1.  `bitgate numerics check --exhaustive` checks
** all 2^32 inputs of both against MPFR.  Hard inputs named in DESIGN.md:
** sinf 0x1.33333p+13; cosf 0x1.3170fp+63 and 0x1.2b9622p+67.
*/
#ifndef NX_TRIG_H
#define NX_TRIG_H

#include "nx_base.h"
#include "nx_dd.h"
#include "nx_exp.h" /* nx_inv_factorial */

/* Bits 1..384 of 2/pi (bit 1 is the 2^-1 digit), most significant first. */
NX_TABLE nx_u32 nx_two_over_pi_bits[12] = {
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041,
    0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c,
};

#define NX_PIO2_HI 0x1.921fb54442d18p+0
#define NX_PIO2_LO 0x1.1a62633145c07p-54
#define NX_PIO4 0x1.921fb54442d18p-1 /* below pi/4 by < 2^-54 */

/* 64 bits of 2/pi starting at bit position pos (1-based), pos <= 289. */
NX_FN nx_u64 nx_two_over_pi_window(int pos) {
  int j = (pos - 1) / 32, s = (pos - 1) % 32;
  nx_u64 v = ((nx_u64)nx_two_over_pi_bits[j] << 32) | nx_two_over_pi_bits[j + 1];
  if (s) v = (v << s) | (nx_two_over_pi_bits[j + 2] >> (32 - s));
  return v;
}

/* 32 bits of a little-endian array of 32-bit limbs, starting at bit lo. */
NX_FN nx_u32 nx_limbs_bits32(const nx_u32 *p, int lo) {
  int limb = lo / 32, s = lo % 32;
  return s ? (p[limb] >> s) | (p[limb + 1] << (32 - s)) : p[limb];
}

/*
** Reduce a = |x| >= pi/4: returns r in double-double with |r| <= pi/4 and sets
** *quadrant to q mod 4, where a = (4n + q) * pi/2 + r for some integer n.
*/
NX_FN nx_dd nx_reduce_pio2(float a, int *quadrant) {
  nx_u32 u = nx_f32_bits(a), w[6], prod[8], frac[4];
  nx_u64 m = (u & 0x7fffffu) | 0x800000u, carry = 0, top;
  int e = (int)(u >> 23) - 150; /* a = m * 2^e */
  int start = e >= 2 ? e - 1 : 1, point = start + 191 - e, i, negate;
  nx_dd f;
  for (i = 0; i < 3; i++) { /* the window, least significant limb first */
    nx_u64 v = nx_two_over_pi_window(start + 64 * (2 - i));
    w[2 * i] = (nx_u32)v;
    w[2 * i + 1] = (nx_u32)(v >> 32);
  }
  for (i = 0; i < 6; i++) {
    nx_u64 acc = m * w[i] + carry;
    prod[i] = (nx_u32)acc;
    carry = acc >> 32;
  }
  prod[6] = (nx_u32)carry;
  prod[7] = 0;
  /* prod * 2^-point = a * 2/pi (mod 4): q above the point, f below it */
  *quadrant = (int)(nx_limbs_bits32(prod, point) & 3u);
  for (i = 0; i < 4; i++) frac[i] = nx_limbs_bits32(prod, point - 32 * (i + 1));
  negate = (frac[0] >> 31) != 0; /* f >= 1/2: use f - 1 and the next quadrant */
  if (negate) {
    for (i = 3, top = 1; i >= 0; i--) { /* frac = 2^128 - frac */
      top += (nx_u64)(nx_u32)~frac[i];
      frac[i] = (nx_u32)top;
      top >>= 32;
    }
    *quadrant = (*quadrant + 1) & 3;
  }
  f = nx_dd_two_sum((double)frac[0] * 0x1p-32, (double)frac[1] * 0x1p-64);
  f = nx_dd_add_d(f, (double)frac[2] * 0x1p-96);
  f = nx_dd_add_d(f, (double)frac[3] * 0x1p-128);
  f = nx_dd_mul(f, nx_dd_make(NX_PIO2_HI, NX_PIO2_LO));
  return negate ? nx_dd_neg(f) : f;
}

/* sum_{k=0..13} (-1)^k z^k / (2k + odd)!  (odd = 1: sin(r)/r; odd = 0: cos r) */
NX_FN nx_dd nx_trig_series(nx_dd z, int odd) {
  int k = 13;
  nx_dd acc = nx_dd_make(-nx_inv_factorial[2 * (2 * k + odd)],
                         -nx_inv_factorial[2 * (2 * k + odd) + 1]);
  for (k = 12; k >= 0; k--) {
    double hi = nx_inv_factorial[2 * (2 * k + odd)];
    double lo = nx_inv_factorial[2 * (2 * k + odd) + 1];
    if (k & 1) hi = -hi, lo = -lo;
    acc = nx_dd_add(nx_dd_mul(acc, z), nx_dd_make(hi, lo));
  }
  return acc;
}

/* sum_{k=0..9} (-1)^k z^k / (2k + odd)!  in plain double. */
NX_FN double nx_trig_series_fast(double z, int odd) {
  double acc = -nx_inv_factorial[2 * (18 + odd)];
  int k;
  for (k = 8; k >= 0; k--) {
    double c = nx_inv_factorial[2 * (2 * k + odd)];
    acc = acc * z + ((k & 1) ? -c : c);
  }
  return acc;
}

/* Applies quadrant q and the sign of x to (sin r, cos r). */
NX_FN void nx_trig_quadrant(int q, int negative, double s, double c, double *sin_v, double *cos_v) {
  switch (q) {
  case 0: *sin_v = s; *cos_v = c; break;
  case 1: *sin_v = c; *cos_v = -s; break;
  case 2: *sin_v = -s; *cos_v = -c; break;
  default: *sin_v = -c; *cos_v = s; break;
  }
  if (negative) *sin_v = -*sin_v;
}

NX_FN void nx_sincosf(float x, float *sin_out, float *cos_out) {
  float a = nx_f32_abs(x);
  int q = 0, sin_done, cos_done;
  nx_dd r, z, s, c, sin_v, cos_v;
  double fs, fc, fsin, fcos;
  if (nx_f32_is_nan(x)) {
    *sin_out = *cos_out = x;
    return;
  }
  if (nx_f32_bits(a) == 0x7f800000u) {
    *sin_out = *cos_out = nx_f32_nan();
    return;
  }
  r = (double)a < NX_PIO4 ? nx_dd_make((double)a, 0.0) : nx_reduce_pio2(a, &q);
  fs = r.hi * nx_trig_series_fast(r.hi * r.hi, 1);
  fc = nx_trig_series_fast(r.hi * r.hi, 0);
  /* sin(hi + lo) = sin hi + lo cos hi, cos(hi + lo) = cos hi - lo sin hi */
  nx_trig_quadrant(q, (int)(nx_f32_bits(x) >> 31), fs + r.lo * fc, fc - r.lo * fs, &fsin, &fcos);
  sin_done = nx_round_if_certain(fsin, 0x1p-45, sin_out);
  cos_done = nx_round_if_certain(fcos, 0x1p-45, cos_out);
  if (sin_done && cos_done) return;
  z = nx_dd_mul(r, r);
  s = nx_dd_mul(r, nx_trig_series(z, 1));
  c = nx_trig_series(z, 0);
  switch (q) {
  case 0: sin_v = s; cos_v = c; break;
  case 1: sin_v = c; cos_v = nx_dd_neg(s); break;
  case 2: sin_v = nx_dd_neg(s); cos_v = nx_dd_neg(c); break;
  default: sin_v = nx_dd_neg(c); cos_v = s; break;
  }
  if (nx_f32_bits(x) >> 31) sin_v = nx_dd_neg(sin_v);
  if (!sin_done) *sin_out = nx_dd_to_f32(sin_v);
  if (!cos_done) *cos_out = nx_dd_to_f32(cos_v);
}

NX_FN float nx_sinf(float x) {
  float s, c;
  nx_sincosf(x, &s, &c);
  return s;
}

NX_FN float nx_cosf(float x) {
  float s, c;
  nx_sincosf(x, &s, &c);
  return c;
}

#endif /* NX_TRIG_H */
