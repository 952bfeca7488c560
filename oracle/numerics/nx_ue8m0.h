/*
** nx_ue8m0.h: power-of-two block scales (DESIGN.md "UE8M0 and the ceiling").
**
** A scale byte e stands for 2^(e-127).  Block quantizers pick
**   e = clamp(ceil_log2(amax / format_max) + 127, 1, 254)
** where ceil_log2 reads the exponent and "is the mantissa non-zero" straight
** from the bits; log2f and ceilf are never used.  amax ignores NaN elements
** and is floored by the caller.  Exact: everything here is integer or a
** power-of-two bit pattern.
*/
#ifndef NX_UE8M0_H
#define NX_UE8M0_H

#include "nx_base.h"
#include "nx_order.h"

/*
** ceil(log2(t)) for t > 0.  Normal t: (biased exponent - 127) + (mantissa != 0).
** Subnormal t = m * 2^-149: -149 + ceil(log2(m)).  +inf reads as 128 by the
** same bit rule, which the clamp then turns into 254.
*/
NX_FN int nx_ceil_log2(float t) {
  nx_u32 u = nx_f32_bits(t) & 0x7fffffffu;
  nx_u32 e = u >> 23, m = u & 0x7fffffu;
  int c;
  if (e != 0) return (int)e - 127 + (m != 0);
  for (c = 0; (1u << c) < m; c++) {}
  return -149 + c;
}

NX_FN nx_u8 nx_ue8m0_from_ratio(float t) {
  int e = nx_ceil_log2(t) + 127;
  if (e < 1) e = 1;
  if (e > 254) e = 254;
  return (nx_u8)e;
}

/* 2^(e-127) for any byte: 0 gives 2^-127 (subnormal), 255 gives NaN. */
NX_FN float nx_ue8m0_decode(nx_u8 e) {
  if (e == 255) return nx_f32_nan();
  if (e == 0) return nx_f32_from_bits(0x00400000u);
  return nx_f32_from_bits((nx_u32)e << 23);
}

/*
** 1 / nx_ue8m0_decode(e) for e in [1, 254], the scales a block quantizer
** picks (nx_ue8m0_from_ratio's clamp): 2^(127 - e), itself a float, so x *
** nx_ue8m0_reciprocal(e) and x / nx_ue8m0_decode(e) round one real number
** and give the same bits for every x (a NaN x gives a NaN either way, and
** the encoders read every NaN alike).  The kernels multiply: a division
** costs a chain of instructions and, on the compressors' critical path,
** four of them cost about 1,000 cycles (docs/SPEED.md, tenth round).
** test_numerics checks the identity on every e and a spread of x.
*/
NX_FN float nx_ue8m0_reciprocal(nx_u8 e) { return nx_ue8m0_decode((nx_u8)(254 - e)); }

/* max |x_i| over n elements, NaN elements ignored; 0 for an empty or all-NaN block. */
NX_FN float nx_block_amax(const float *x, int n) {
  float amax = 0.0f;
  int i;
  for (i = 0; i < n; i++)
    if (!nx_f32_is_nan(x[i])) amax = nx_maxf(amax, nx_f32_abs(x[i]));
  return amax;
}

#endif /* NX_UE8M0_H */
