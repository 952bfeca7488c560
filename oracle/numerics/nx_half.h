/*
** nx_half.h: the 16-bit formats, bf16 and IEEE binary16 (f16).
**
** Two different bf16 roundings exist on purpose:
**
**  - nx_bf16_round_bits: the seeds' formula, (bits + 0x7fff + lsb) >> 16 on the
**    raw unsigned bits (DESIGN.md "BF16 and f16").  It is round-to-nearest-even
**    for every finite input and for +-inf, but it does NOT preserve NaN: a NaN
**    whose low 16 bits are non-zero can carry into the exponent and, for
**    0xffff8000 and above, wrap around 2^32 to a small positive value.  The
**    CSA pipeline stages use this one, because the specification does.
**
**  - nx_bf16_from_f32 / nx_f16_from_f32: storage conversions for bf16/f16
**    tensors.  They must give the same bits as CUDA's __float2bfloat16_rn and
**    __float2half_rn for every float: IEEE round-to-nearest-even, overflow to
**    inf, subnormal results where the format has them, and every NaN becomes
**    the canonical 0x7fff.  `bitgate numerics check --device` proves the match
**    over all 2^32 inputs.
**
** Widening (nx_bf16_to_f32, nx_f16_to_f32) is exact; NaN payloads are kept.
*/
#ifndef NX_HALF_H
#define NX_HALF_H

#include "nx_base.h"

#define NX_HALF_CANONICAL_NAN 0x7fffu

NX_FN nx_u16 nx_bf16_round_bits(float x) {
  nx_u32 bits = nx_f32_bits(x);
  return (nx_u16)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

NX_FN float nx_bf16_to_f32(nx_u16 h) { return nx_f32_from_bits((nx_u32)h << 16); }

/* The seeds' bf16 rounding as a float -> float step. */
NX_FN float nx_bf16_round(float x) { return nx_bf16_to_f32(nx_bf16_round_bits(x)); }

NX_FN nx_u16 nx_bf16_from_f32(float x) {
  nx_u32 bits = nx_f32_bits(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return NX_HALF_CANONICAL_NAN;
  return nx_bf16_round_bits(x); /* safe: no carry can wrap for non-NaN */
}

/*
** Round a magnitude m * 2^-shift (m an integer below 2^25, 1 <= shift <= 31)
** to the nearest integer, ties to even.  Used for the subnormal ranges of the
** narrow formats, where the result is a code in units of the smallest step.
*/
NX_FN nx_u32 nx_round_shift_rne(nx_u32 m, int shift) {
  nx_u32 q = m >> shift;
  nx_u32 rem = m & ((1u << shift) - 1u);
  nx_u32 half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) q++;
  return q;
}

/* The float's significand with the implicit bit, and its biased exponent. */
NX_FN nx_u32 nx_f32_significand(nx_u32 abs_bits) {
  nx_u32 m = abs_bits & 0x7fffffu;
  return (abs_bits >> 23) ? (m | 0x800000u) : m;
}

NX_FN nx_u16 nx_f16_from_f32(float x) {
  nx_u32 bits = nx_f32_bits(x);
  nx_u32 sign = (bits >> 16) & 0x8000u;
  nx_u32 a = bits & 0x7fffffffu;
  int e = (int)(a >> 23);
  if (a > 0x7f800000u) return NX_HALF_CANONICAL_NAN;
  if (a >= 0x477ff000u) return (nx_u16)(sign | 0x7c00u); /* >= 65520: inf */
  if (a >= 0x38800000u) {                                /* f16 normal */
    nx_u32 r = a - 0x38000000u; /* rebias exponent 127 -> 15 */
    r = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
    return (nx_u16)(sign | r);
  }
  /* f16 subnormal or zero: units of 2^-24; value = m * 2^(e - 150) */
  if (e < 101) return (nx_u16)sign; /* below 2^-26: rounds to zero */
  return (nx_u16)(sign | nx_round_shift_rne(nx_f32_significand(a), 126 - e));
}

/*
** Two f16 (is_f16) or bf16 elements packed in a word, each as a widen and
** a round back (nx_*_to_f32, then nx_*_from_f32) leave it: unchanged, but
** that every NaN becomes NX_HALF_CANONICAL_NAN.  Integer work only, so a
** device copy moves eight elements at the cost of a few instructions.  A
** half is NaN when its magnitude exceeds infinity's (0x7c00 or 0x7f80);
** adding 0x7fff less that sets the half's bit 15 exactly then, and the sum
** stays below 0x10000, so no carry crosses into the other half.
*/
NX_FN nx_u32 nx_half2_canonical(nx_u32 w, int is_f16) {
  const nx_u32 to_sign = is_f16 ? 0x03ff03ffu : 0x007f007fu;
  const nx_u32 nan = ((w & 0x7fff7fffu) + to_sign) & 0x80008000u;
  const nx_u32 mask = (nan >> 15) * 0xffffu; /* 0xffff over each NaN half */
  return (w & ~mask) | (0x7fff7fffu & mask);
}

NX_FN float nx_f16_to_f32(nx_u16 h) {
  nx_u32 sign = ((nx_u32)h & 0x8000u) << 16;
  nx_u32 e = ((nx_u32)h >> 10) & 0x1fu;
  nx_u32 m = (nx_u32)h & 0x3ffu;
  if (e == 0x1fu) return nx_f32_from_bits(sign | 0x7f800000u | (m << 13));
  if (e != 0) return nx_f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return nx_f32_from_bits(sign);
  /* subnormal: m * 2^-24, exact in binary32 */
  return nx_f32_from_bits(sign | nx_f32_bits((float)m * 0x1p-24f));
}

#endif /* NX_HALF_H */
