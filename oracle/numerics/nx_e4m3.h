/*
** nx_e4m3.h: FP8 E4M3FN codes and the block-64 quantizer
** (DESIGN.md "FP8 E4M3FN, blocks of 64").
**
** E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; 0x7f
** and 0xff are NaN; the largest finite is 448 (0x7e).  Normals start at 2^-6,
** subnormals step by 2^-9.
**
** Encoding saturates to +-448 (inf too), rounds to nearest even on the grid,
** keeps the sign (-0 -> 0x80), and maps every NaN to 0x7f.  Exact: integer
** rounding on the float's bits.
**
** Block of 64: amax (NaN ignored) floored at 1e-4f; e = ue8m0(amax / 448);
** q_i = x_i / 2^(e-127), an exact division by a power of two; code_i =
** encode(q_i).  Layout: the scale byte, then the 64 codes (65 bytes).
*/
#ifndef NX_E4M3_H
#define NX_E4M3_H

#include "nx_base.h"
#include "nx_half.h"
#include "nx_ue8m0.h"

#define NX_E4M3_NAN 0x7fu
#define NX_FP8_BLOCK 64
#define NX_FP8_BLOCK_BYTES (1 + NX_FP8_BLOCK)

NX_FN nx_u8 nx_e4m3_encode(float x) {
  nx_u32 bits = nx_f32_bits(x);
  nx_u32 sign = (bits >> 24) & 0x80u;
  nx_u32 a = bits & 0x7fffffffu;
  int e;
  if (a > 0x7f800000u) return NX_E4M3_NAN;
  if (a > 0x43e00000u) a = 0x43e00000u; /* saturate to 448 */
  if (a >= 0x3c800000u) {               /* normal: >= 2^-6 */
    nx_u32 r = a - 0x3c000000u;         /* rebias exponent 127 -> 7 */
    r = (r + 0x7ffffu + ((r >> 20) & 1u)) >> 20;
    return (nx_u8)(sign | r);
  }
  /* subnormal: units of 2^-9; value = m * 2^(e - 150) */
  e = (int)(a >> 23);
  if (e < 116) return (nx_u8)sign; /* below 2^-11: rounds to zero */
  return (nx_u8)(sign | nx_round_shift_rne(nx_f32_significand(a), 141 - e));
}

NX_FN float nx_e4m3_decode(nx_u8 code) {
  nx_u32 sign = ((nx_u32)code & 0x80u) << 24;
  nx_u32 e = ((nx_u32)code >> 3) & 0xfu;
  nx_u32 m = (nx_u32)code & 7u;
  if ((code & 0x7fu) == 0x7fu) return nx_f32_nan();
  if (e == 0) return nx_f32_from_bits(sign | nx_f32_bits((float)m * 0x1p-9f));
  return nx_f32_from_bits(sign | ((e + 120u) << 23) | (m << 20));
}

NX_FN nx_u8 nx_fp8_block_scale(const float *x, int n) {
  float amax = nx_block_amax(x, n);
  if (amax < 1e-4f) amax = 1e-4f;
  return nx_ue8m0_from_ratio(amax / 448.0f);
}

/* x[0..63] -> out[0] = scale byte, out[1..64] = codes. */
NX_FN void nx_fp8_block64_quantize(const float *x, nx_u8 *out) {
  nx_u8 e = nx_fp8_block_scale(x, NX_FP8_BLOCK);
  float scale = nx_ue8m0_decode(e);
  int i;
  out[0] = e;
  for (i = 0; i < NX_FP8_BLOCK; i++) out[1 + i] = nx_e4m3_encode(x[i] / scale);
}

/* in[0] = scale byte, in[1..64] = codes -> x[0..63] = code * scale. */
NX_FN void nx_fp8_block64_dequantize(const nx_u8 *in, float *x) {
  float scale = nx_ue8m0_decode(in[0]);
  int i;
  for (i = 0; i < NX_FP8_BLOCK; i++) x[i] = nx_e4m3_decode(in[1 + i]) * scale;
}

#endif /* NX_E4M3_H */
