/*
** nx_e2m1.h: FP4 E2M1 codes and the block-32 quantizer
** (DESIGN.md "FP4 E2M1, blocks of 32").
**
** E2M1: 1 sign, 2 exponent, 1 mantissa bit.  The eight magnitudes, codes 0..7,
** are {0, 0.5, 1, 1.5, 2, 3, 4, 6}.  Encoding saturates to +-6 (inf too) and
** rounds to nearest, ties to the even code: 0.25->0, 0.75->1, 1.25->1,
** 1.75->2, 2.5->2, 3.5->4, 5->4.  The sign is kept (-0 -> 0x8).
** E2M1 has no NaN: a NaN element encodes as +0 (code 0x0), a choice recorded in
** NUMERICS.md.  Exact: comparisons against exact thresholds.
**
** Block of 32: amax (NaN ignored) floored at 6 * 2^-126; e = ue8m0(amax / 6);
** q_i = x_i / 2^(e-127).  Element 2i goes in the low nibble of byte i,
** element 2i+1 in the high nibble.  Layout: the scale byte, then 16 bytes.
*/
#ifndef NX_E2M1_H
#define NX_E2M1_H

#include "nx_base.h"
#include "nx_ue8m0.h"

#define NX_FP4_BLOCK 32
#define NX_FP4_BLOCK_BYTES (1 + NX_FP4_BLOCK / 2)

NX_FN nx_u8 nx_e2m1_encode(float x) {
  nx_u8 sign = (nx_f32_bits(x) >> 31) ? 0x8u : 0x0u;
  float a = nx_f32_abs(x);
  nx_u8 code;
  if (nx_f32_is_nan(x)) return 0x0u;
  if (a <= 0.25f) code = 0;
  else if (a < 0.75f) code = 1;
  else if (a <= 1.25f) code = 2;
  else if (a < 1.75f) code = 3;
  else if (a <= 2.5f) code = 4;
  else if (a < 3.5f) code = 5;
  else if (a <= 5.0f) code = 6;
  else code = 7;
  return (nx_u8)(sign | code);
}

/*
** nx_e2m1_encode's codes, by counting the thresholds |x| has passed instead
** of branching to its bucket: compares and adds, no branch.  For SIMT code,
** where the lanes of a warp fall into different buckets and the if-chain
** ran each bucket in turn (about 900 cycles for the index transform's four
** encodes, docs/SPEED.md, tenth round).  A NaN passes no threshold and
** loses its sign, the +0 the chain returns.  test_numerics compares the
** two on every float near the thresholds and a spread of the rest.
*/
NX_FN nx_u8 nx_e2m1_encode_select(float x) {
  const float a = nx_f32_abs(x);
  const int passed = (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) + (a >= 3.5f) + (a > 5.0f);
  const nx_u32 sign = nx_f32_is_nan(x) ? 0u : (nx_f32_bits(x) >> 28) & 0x8u;
  return (nx_u8)(sign | (nx_u32)passed);
}

NX_FN float nx_e2m1_decode(nx_u8 code) {
  /* magnitudes of codes 0..7 as binary32 bit patterns */
  nx_u32 mag;
  switch (code & 7u) {
  case 0: mag = 0x00000000u; break; /* 0   */
  case 1: mag = 0x3f000000u; break; /* 0.5 */
  case 2: mag = 0x3f800000u; break; /* 1   */
  case 3: mag = 0x3fc00000u; break; /* 1.5 */
  case 4: mag = 0x40000000u; break; /* 2   */
  case 5: mag = 0x40400000u; break; /* 3   */
  case 6: mag = 0x40800000u; break; /* 4   */
  default: mag = 0x40c00000u; break; /* 6  */
  }
  return nx_f32_from_bits(((nx_u32)(code & 0x8u) << 28) | mag);
}

NX_FN nx_u8 nx_fp4_block_scale(const float *x, int n) {
  float amax = nx_block_amax(x, n);
  const float floor = 0x1.8p-124f; /* 6 * 2^-126 */
  if (amax < floor) amax = floor;
  return nx_ue8m0_from_ratio(amax / 6.0f);
}

/* x[0..31] -> out[0] = scale byte, out[1..16] = packed nibbles. */
NX_FN void nx_fp4_block32_quantize(const float *x, nx_u8 *out) {
  nx_u8 e = nx_fp4_block_scale(x, NX_FP4_BLOCK);
  float scale = nx_ue8m0_decode(e);
  int i;
  out[0] = e;
  for (i = 0; i < NX_FP4_BLOCK / 2; i++) {
    nx_u8 lo = nx_e2m1_encode(x[2 * i] / scale);
    nx_u8 hi = nx_e2m1_encode(x[2 * i + 1] / scale);
    out[1 + i] = (nx_u8)(lo | (hi << 4));
  }
}

NX_FN void nx_fp4_block32_dequantize(const nx_u8 *in, float *x) {
  float scale = nx_ue8m0_decode(in[0]);
  int i;
  for (i = 0; i < NX_FP4_BLOCK / 2; i++) {
    x[2 * i] = nx_e2m1_decode(in[1 + i] & 0xfu) * scale;
    x[2 * i + 1] = nx_e2m1_decode(in[1 + i] >> 4) * scale;
  }
}

#endif /* NX_E2M1_H */
