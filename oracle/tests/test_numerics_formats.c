/*
** test_numerics_formats.c: unit tests of the narrow formats, the block
** quantizers, the total order and max in numerics.h, case by case from
** DESIGN.md "Quantization" and "Top-k ties".  Each row of a table carries its
** own line number so a failure points at it.
*/
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

typedef struct code_case {
  int line;
  float x;
  unsigned code;
} code_case;

#define ROW(x, code) {__LINE__, x, code}

Test(formats, e4m3_encode) {
  static const code_case rows[] = {
      ROW(0.0f, 0x00), ROW(-0.0f, 0x80), ROW(1.0f, 0x38), ROW(-1.0f, 0xb8),
      ROW(1.0625f, 0x38),      /* midpoint 1 | 1.125: ties to even mantissa 0 */
      ROW(1.1875f, 0x3a),      /* midpoint 1.125 | 1.25: to 1.25 */
      ROW(448.0f, 0x7e), ROW(464.0f, 0x7e), ROW(1e30f, 0x7e), /* saturation */
      ROW(INFINITY, 0x7e), ROW(-INFINITY, 0xfe),
      ROW(0x1p-6f, 0x08),      /* smallest normal */
      ROW(0x1p-9f, 0x01),      /* smallest subnormal */
      ROW(0x1p-10f, 0x00),     /* half of it: ties to zero */
      ROW(0x1.8p-10f, 0x01),   /* 0.75 of it: up */
      ROW(0x1.4p-8f, 0x02),    /* 2.5 steps: ties to even 2 */
      ROW(0x1.ep-7f, 0x08),    /* 7.5 steps: rounds up into the normals */
      ROW(NAN, 0x7f), ROW(-NAN, 0x7f),
  };
  size_t i;
  for (i = 0; i < sizeof rows / sizeof *rows; i++)
    cr_expect(nx_e4m3_encode(rows[i].x) == rows[i].code, "line %d: %a -> 0x%02x, want 0x%02x", rows[i].line,
              rows[i].x, nx_e4m3_encode(rows[i].x), rows[i].code);
}

Test(formats, e2m1_encode_design_examples) {
  static const code_case rows[] = {
      ROW(0.25f, 0x0), ROW(0.75f, 0x2), ROW(1.25f, 0x2), ROW(1.75f, 0x4), ROW(2.5f, 0x4),
      ROW(3.5f, 0x6), ROW(5.0f, 0x6), ROW(6.0f, 0x7), ROW(7.0f, 0x7), ROW(INFINITY, 0x7),
      ROW(-0.0f, 0x8), ROW(-5.5f, 0xf), ROW(0.26f, 0x1), ROW(NAN, 0x0),
  };
  size_t i;
  for (i = 0; i < sizeof rows / sizeof *rows; i++)
    cr_expect(nx_e2m1_encode(rows[i].x) == rows[i].code, "line %d: %a -> 0x%x, want 0x%x", rows[i].line,
              rows[i].x, nx_e2m1_encode(rows[i].x), rows[i].code);
}

Test(formats, half_precision_storage) {
  cr_expect(nx_f16_from_f32(65504.0f) == 0x7bff);
  cr_expect(nx_f16_from_f32(65519.996f) == 0x7bff && nx_f16_from_f32(65520.0f) == 0x7c00, "overflow edge");
  cr_expect(nx_f16_from_f32(0x1p-24f) == 0x0001 && nx_f16_from_f32(0x1p-25f) == 0x0000, "subnormal tie");
  cr_expect(nx_f16_from_f32(0x1.8p-25f) == 0x0001 && nx_f16_from_f32(-0.0f) == 0x8000);
  cr_expect(nx_f16_from_f32(NAN) == 0x7fff && nx_bf16_from_f32(-NAN) == 0x7fff, "canonical NaN");
  cr_expect(nx_bf16_from_f32(1.0f + 0x1p-8f) == 0x3f80 && nx_bf16_from_f32(1.0f + 0x1.8p-8f) == 0x3f81);
  cr_expect(nx_bf16_round_bits(0x1.fffffep127f) == 0x7f80, "seed formula: overflow to inf");
}

/* The IndexShare oracle reads a same-type half back without the store: it relies on this. */
Test(formats, half_storage_round_trip_is_the_identity_but_for_nan) {
  unsigned u;
  for (u = 0; u <= 0xffffu; u++) {
    const float b = nx_bf16_to_f32((nx_u16)u), h = nx_f16_to_f32((nx_u16)u);
    cr_assert_eq(nx_bf16_from_f32(b), b != b ? 0x7fff : u, "bf16 0x%04x", u);
    cr_assert_eq(nx_f16_from_f32(h), h != h ? 0x7fff : u, "f16 0x%04x", u);
  }
}

/* The device's packed present copy: both halves of every word as the round trip leaves them. */
static unsigned half_round_trip(unsigned u, int is_f16) {
  if (is_f16) return nx_f16_from_f32(nx_f16_to_f32((nx_u16)u));
  return nx_bf16_from_f32(nx_bf16_to_f32((nx_u16)u));
}

Test(formats, half2_canonical_is_the_round_trip_of_both_halves) {
  static const unsigned partners[] = {0x0000u, 0x8000u, 0x7c00u, 0x7c01u, 0x7f80u, 0x7f81u, 0x7fffu, 0xffffu};
  unsigned u, k;
  int f16;
  for (f16 = 0; f16 < 2; f16++)
    for (u = 0; u <= 0xffffu; u++)
      for (k = 0; k <= sizeof partners / sizeof partners[0]; k++) {
        const unsigned v = k < sizeof partners / sizeof partners[0] ? partners[k] : (u * 40503u) & 0xffffu;
        const nx_u32 lo_first = nx_half2_canonical(u | (v << 16), f16);
        const nx_u32 hi_first = nx_half2_canonical(v | (u << 16), f16);
        const nx_u32 want_uv = half_round_trip(u, f16) | (half_round_trip(v, f16) << 16);
        const nx_u32 want_vu = half_round_trip(v, f16) | (half_round_trip(u, f16) << 16);
        cr_assert_eq(lo_first, want_uv, "%s 0x%04x | 0x%04x << 16", f16 ? "f16" : "bf16", u, v);
        cr_assert_eq(hi_first, want_vu, "%s 0x%04x | 0x%04x << 16", f16 ? "f16" : "bf16", v, u);
      }
}

/* What lets the kernels multiply by a block scale's reciprocal where the oracle divides. */
Test(formats, ue8m0_reciprocal_multiplies_as_the_scale_divides) {
  static const nx_u32 mantissas[] = {0x000000u, 0x000001u, 0x000002u, 0x1fffffu, 0x400000u, 0x400001u,
                                     0x555555u, 0x7ffffeu, 0x7fffffu};
  nx_u32 seed = 12345u, exponent, k, e, sign, n;
  for (e = 1; e <= 254; e++) {
    const float scale = nx_ue8m0_decode((nx_u8)e), inverse = nx_ue8m0_reciprocal((nx_u8)e);
    cr_assert_eq(scale * inverse, 1.0f, "e %u", e);
    for (n = 0; n < 256 * 9 * 2 + 4096; n++) {
      nx_u32 bits;
      float x, by_division, by_product;
      if (n < 256 * 9 * 2) {
        exponent = n % 256, k = (n / 256) % 9, sign = n / (256 * 9);
        bits = (sign << 31) | (exponent << 23) | mantissas[k];
      } else {
        seed = seed * 1664525u + 1013904223u;
        bits = seed;
      }
      x = nx_f32_from_bits(bits);
      by_division = x / scale, by_product = x * inverse;
      if (by_division != by_division) {
        cr_assert(by_product != by_product, "e %u x 0x%08x: NaN against 0x%08x", e, bits, nx_f32_bits(by_product));
        continue;
      }
      cr_assert_eq(nx_f32_bits(by_division), nx_f32_bits(by_product), "e %u x 0x%08x", e, bits);
    }
  }
}

/* The kernels' branch-free encode: every float of exponents 2^-4 .. 2^5 (the thresholds lie inside), a spread of the rest. */
Test(formats, e2m1_encode_select_is_the_encode) {
  nx_u32 bits, seed = 777u, n;
  for (bits = 123u << 23; bits < 131u << 23; bits++) {
    const float pos = nx_f32_from_bits(bits), neg = nx_f32_from_bits(bits | 0x80000000u);
    if (nx_e2m1_encode_select(pos) != nx_e2m1_encode(pos) || nx_e2m1_encode_select(neg) != nx_e2m1_encode(neg))
      cr_assert_fail("0x%08x: %u against %u", bits, nx_e2m1_encode_select(pos), nx_e2m1_encode(pos));
  }
  for (n = 0; n < 4000000u; n++) {
    seed = seed * 1664525u + 1013904223u;
    bits = n < 512u ? (n / 2) << 23 | (n & 1u) : n < 1024u ? ((n - 512u) / 2) << 23 | 0x7fffffu : seed;
    cr_assert_eq(nx_e2m1_encode_select(nx_f32_from_bits(bits)), nx_e2m1_encode(nx_f32_from_bits(bits)),
                 "0x%08x", bits);
    cr_assert_eq(nx_e2m1_encode_select(nx_f32_from_bits(bits | 0x80000000u)),
                 nx_e2m1_encode(nx_f32_from_bits(bits | 0x80000000u)), "0x%08x", bits | 0x80000000u);
  }
}

Test(formats, bf16_seed_formula_does_not_preserve_nan) {
  /* documented in nx_half.h: the carry can leave the NaN range or wrap 2^32 */
  cr_expect(nx_bf16_round_bits(nx_f32_from_bits(0x7fffffffu)) == 0x8000);
  cr_expect(nx_bf16_round_bits(nx_f32_from_bits(0xffffffffu)) == 0x0000);
  cr_expect(nx_bf16_round_bits(nx_f32_from_bits(0x7fc00000u)) == 0x7fc0);
}

/* Reference scale byte: smallest k with 2^k >= amax/limit, from DESIGN.md. */
static int ref_scale_byte(float amax, float limit) {
  int k = -149;
  while (ldexp(1.0, k) < (double)(amax / limit)) k++;
  k += 127;
  return k < 1 ? 1 : k > 254 ? 254 : k;
}

Test(quantizers, fp8_block_edges) {
  float x[64];
  nx_u8 q[65];
  float back[64];
  int i;
  memset(x, 0, sizeof x); /* all zero: amax floored at 1e-4 */
  nx_fp8_block64_quantize(x, q);
  cr_expect(q[0] == ref_scale_byte(1e-4f, 448.0f) && q[0] == 105);
  for (i = 0; i < 64; i++) cr_expect(q[1 + i] == 0x00);
  for (i = 0; i < 64; i++) x[i] = (i % 2) ? NAN : (float)i; /* NaN ignored by amax */
  x[0] = 448.0f * 4.0f;                                      /* t = 4 exactly: e = 129 */
  nx_fp8_block64_quantize(x, q);
  cr_expect(q[0] == 129 && q[1] == 0x7e && q[2] == NX_E4M3_NAN);
  x[0] = nx_f32_from_bits(nx_f32_bits(448.0f * 4.0f) + 1); /* one ulp more: e = 130 */
  nx_fp8_block64_quantize(x, q);
  cr_expect(q[0] == 130);
  x[3] = INFINITY; /* amax inf: e clamps at 254, inf saturates */
  nx_fp8_block64_quantize(x, q);
  cr_expect(q[0] == 254 && q[4] == 0x7e);
  for (i = 0; i < 63; i++) x[i] = nx_e4m3_decode((nx_u8)(i + (i & 1) * 0x80)); /* grid values */
  x[63] = 448.0f; /* amax 448: scale 1, so grid values survive exactly */
  nx_fp8_block64_quantize(x, q);
  nx_fp8_block64_dequantize(q, back);
  cr_expect(q[0] == 127);
  for (i = 0; i < 64; i++) cr_expect(nx_f32_bits(back[i]) == nx_f32_bits(x[i]), "grid value %d", i);
}

Test(quantizers, fp4_block_layout_and_floor) {
  float x[32];
  nx_u8 q[17];
  float back[32];
  int i;
  memset(x, 0, sizeof x);
  nx_fp4_block32_quantize(x, q);
  cr_expect(q[0] == 1, "floor 6*2^-126 gives the smallest scale byte");
  for (i = 0; i < 32; i++) x[i] = (i & 1) ? -6.0f : 0.5f;
  nx_fp4_block32_quantize(x, q);
  cr_expect(q[0] == 127);
  for (i = 0; i < 16; i++) cr_expect(q[1 + i] == 0xf1, "element 2i low nibble, 2i+1 high: 0x%02x", q[1 + i]);
  nx_fp4_block32_dequantize(q, back);
  for (i = 0; i < 32; i++) cr_expect(back[i] == x[i]);
}

Test(order, total_order_sequence) {
  const float seq[] = {nx_f32_from_bits(0xffc00000u), -INFINITY, -1.0f, -0x1p-149f, -0.0f,
                       0.0f, 0x1p-149f, 1.0f, INFINITY, nx_f32_from_bits(0x7fc00000u)};
  size_t i, j;
  for (i = 0; i < sizeof seq / sizeof *seq; i++)
    for (j = 0; j < sizeof seq / sizeof *seq; j++)
      cr_expect(nx_f32_total_cmp(seq[i], seq[j]) == (i > j) - (i < j), "%zu vs %zu", i, j);
}

/* The kernels' max (selects) against the host's (early returns), on special and random pairs. */
Test(order, max_selects_match_the_returns) {
  const nx_u32 special[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x3f800000u,
                            0xbf800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                            0xffc00000u, 0x7f800001u, 0xffbfffffu, 0x7fc00001u};
  const size_t n = sizeof special / sizeof *special;
  nx_u32 state = 0x9e3779b9u;
  size_t i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      const float a = nx_f32_from_bits(special[i]), b = nx_f32_from_bits(special[j]);
      cr_expect(nx_f32_bits(nx_maxf_selects(a, b)) == nx_f32_bits(nx_maxf(a, b)), "%08x, %08x", special[i], special[j]);
    }
  for (i = 0; i < 200000; i++) { /* random bit patterns, and pairs that share their top bits */
    nx_u32 u, v;
    state ^= state << 13, state ^= state >> 17, state ^= state << 5;
    u = state;
    state ^= state << 13, state ^= state >> 17, state ^= state << 5;
    v = (i & 1) ? state : (u & 0xffff0000u) | (state & 0xffffu);
    cr_expect(nx_f32_bits(nx_maxf_selects(nx_f32_from_bits(u), nx_f32_from_bits(v))) ==
                  nx_f32_bits(nx_maxf(nx_f32_from_bits(u), nx_f32_from_bits(v))),
              "%08x, %08x", u, v);
  }
}

Test(order, max_is_symmetric) {
  cr_expect(nx_f32_bits(nx_maxf(-0.0f, 0.0f)) == 0 && nx_f32_bits(nx_maxf(0.0f, -0.0f)) == 0);
  cr_expect(nx_f32_bits(nx_maxf(-0.0f, -0.0f)) == 0x80000000u);
  cr_expect(nx_maxf(NAN, 1.0f) == 1.0f && nx_maxf(1.0f, NAN) == 1.0f && nx_maxf(-INFINITY, -3.0f) == -3.0f);
}
