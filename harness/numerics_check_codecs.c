/*
** numerics_check_codecs.c: checks of the narrow formats, the block quantizers
** and the total order (DESIGN.md "Quantization"; issue "Foundation" item 6).
**
** References are independent of numerics.h: MPFR for every rounding, plain
** ldexp arithmetic for decoding, and a reference quantizer written from the
** DESIGN.md rules (reference amax, a ceiling found by search over powers of
** two, MPFR rounding of each element).  The format rules applied before
** rounding (saturation, the NaN codes) come from DESIGN.md.
*/
#include "harness/numerics_check.h"
#include "harness/numerics_ref.h"
#include "oracle/numerics/numerics.h"

#include <math.h>
#include <string.h>

#define CODEC_STRATA 512
#define CODEC_PER_STRATUM 32768

static int same_bits(float a, float b) { return nx_f32_bits(a) == nx_f32_bits(b); }

/* ---- bf16 / f16 conversions, 2^24 stratified inputs each ------------------ */

static void check_half_unit(long long unit, check_tally *t) {
  long long i;
  for (i = 0; i < CODEC_PER_STRATUM; i++) {
    float x = check_stratum_sample(11, (int)unit, i);
    int nan = nx_f32_is_nan(x);
    float want_bf16 = ref_round_bf16(x), want_f16 = ref_round_f16(x);
    t->checked += 3;
    if (!nan && !same_bits(nx_bf16_round(x), want_bf16)) {
      t->incorrect++;
      check_report("bf16 (seed formula)", "x=%a: got %a, MPFR %a", x, nx_bf16_round(x), want_bf16);
    }
    if (nan ? nx_bf16_from_f32(x) != NX_HALF_CANONICAL_NAN
            : !same_bits(nx_bf16_to_f32(nx_bf16_from_f32(x)), want_bf16)) {
      t->incorrect++;
      check_report("bf16 storage", "x=%a (0x%08x): got 0x%04x", x, nx_f32_bits(x), nx_bf16_from_f32(x));
    }
    if (nan ? nx_f16_from_f32(x) != NX_HALF_CANONICAL_NAN
            : !same_bits(nx_f16_to_f32(nx_f16_from_f32(x)), want_f16)) {
      t->incorrect++;
      check_report("f16 storage", "x=%a (0x%08x): got 0x%04x, MPFR %a", x, nx_f32_bits(x),
                   nx_f16_from_f32(x), want_f16);
    }
  }
}

/* ---- E4M3 and E2M1 encoders ----------------------------------------------- */

static float clampf(float x, float limit) { return x > limit ? limit : x < -limit ? -limit : x; }

static void check_narrow_one(float x, check_tally *t) {
  int nan = nx_f32_is_nan(x);
  nx_u8 c8 = nx_e4m3_encode(x), c4 = nx_e2m1_encode(x);
  t->checked += 2;
  if (nan ? c8 != NX_E4M3_NAN : !same_bits(nx_e4m3_decode(c8), ref_round_e4m3(clampf(x, 448.0f)))) {
    t->incorrect++;
    check_report("e4m3 encode", "x=%a: got code 0x%02x (%a), MPFR %a", x, c8, nx_e4m3_decode(c8),
                 nan ? 0.0f : ref_round_e4m3(clampf(x, 448.0f)));
  }
  if (nan ? c4 != 0 : !same_bits(nx_e2m1_decode(c4), ref_round_e2m1(clampf(x, 6.0f)))) {
    t->incorrect++;
    check_report("e2m1 encode", "x=%a: got code 0x%x (%a), MPFR %a", x, c4, nx_e2m1_decode(c4),
                 nan ? 0.0f : ref_round_e2m1(clampf(x, 6.0f)));
  }
}

/*
** Units 0..511: one stratum each (2048 samples).  Units 512..555: one binade
** of one sign in [2^-12, 2^10), every float whose low 7 mantissa bits are
** zero, which includes every grid point and midpoint of both formats.
*/
static void check_narrow_unit(long long unit, check_tally *t) {
  long long i;
  if (unit < CODEC_STRATA) {
    for (i = 0; i < 2048; i++) check_narrow_one(check_stratum_sample(12, (int)unit, i), t);
    return;
  }
  unit -= CODEC_STRATA;
  for (i = 0; i < 65536; i++) {
    nx_u32 sign = (nx_u32)(unit & 1) << 31, e = 127 - 12 + (nx_u32)(unit >> 1);
    check_narrow_one(nx_f32_from_bits(sign | e << 23 | (nx_u32)i << 7), t);
  }
}

/* ---- every code, round-tripped and decoded independently ------------------- */

static float ref_decode(int sign, int mant, int exp2) {
  float v = ldexpf((float)mant, exp2);
  return sign ? -v : v;
}

static void expect(check_tally *t, int ok, const char *what, unsigned code) {
  t->checked++;
  if (!ok) {
    t->incorrect++;
    check_report("round trip", "%s, code 0x%x", what, code);
  }
}

static void check_roundtrip_unit(long long unit, check_tally *t) {
  unsigned c;
  (void)unit;
  for (c = 0; c < 256; c++) { /* E4M3FN */
    int e = (c >> 3) & 15, m = c & 7, nan = (c & 0x7f) == 0x7f;
    float v = nx_e4m3_decode((nx_u8)c);
    expect(t, nan ? nx_f32_is_nan(v) : same_bits(v, ref_decode(c >> 7, e ? 8 + m : m, e ? e - 10 : -9)),
           "e4m3 decode", c);
    expect(t, nx_e4m3_encode(v) == (nan ? NX_E4M3_NAN : c), "e4m3 encode(decode)", c);
  }
  for (c = 0; c < 16; c++) { /* E2M1 */
    static const int mant[8] = {0, 1, 2, 3, 4, 6, 8, 12}; /* in units of 0.5 */
    float v = nx_e2m1_decode((nx_u8)c);
    expect(t, same_bits(v, ref_decode(c >> 3, mant[c & 7], -1)), "e2m1 decode", c);
    expect(t, nx_e2m1_encode(v) == c, "e2m1 encode(decode)", c);
  }
  for (c = 0; c < 65536; c++) { /* bf16 and f16 */
    float b = nx_bf16_to_f32((nx_u16)c), h = nx_f16_to_f32((nx_u16)c);
    int e = (c >> 10) & 31, m = c & 1023, hnan = e == 31 && m;
    expect(t, nx_bf16_round_bits(b) == c, "bf16 seed round(widen)", c);
    expect(t, nx_bf16_from_f32(b) == (nx_f32_is_nan(b) ? NX_HALF_CANONICAL_NAN : c), "bf16 storage(widen)", c);
    expect(t, nx_f32_bits(b) == c << 16, "bf16 widen", c);
    expect(t, nx_f16_from_f32(h) == (hnan ? NX_HALF_CANONICAL_NAN : c), "f16 storage(widen)", c);
    if (e == 31)
      expect(t, hnan ? nx_f32_is_nan(h) : same_bits(h, (c >> 15) ? -INFINITY : INFINITY), "f16 widen", c);
    else
      expect(t, same_bits(h, ref_decode(c >> 15, e ? 1024 + m : m, e ? e - 25 : -24)), "f16 widen", c);
  }
  for (c = 0; c < 256; c++) { /* UE8M0 */
    float v = nx_ue8m0_decode((nx_u8)c);
    expect(t, c == 255 ? nx_f32_is_nan(v) : same_bits(v, ldexpf(1.0f, (int)c - 127)), "ue8m0 decode", c);
  }
}

/* ---- ceil_log2 ----------------------------------------------------------- */

static int ref_ceil_log2(float t) { /* smallest k with 2^k >= t, t > 0 finite */
  int k = -149;
  while (ldexp(1.0, k) < (double)t) k++;
  return k;
}

static void check_ceil_log2_unit(long long unit, check_tally *t) {
  long long i;
  if (unit == 0 || unit == 255) return; /* finite positive normals; subnormals below */
  for (i = 0; i < 4096; i++) {
    float x = check_stratum_sample(13, (int)unit, i);
    float s = nx_f32_from_bits((nx_u32)(check_hash(14, (unsigned long long)unit, (unsigned long long)i) & 0x7fffffu) | 1u);
    t->checked += 2;
    if (nx_ceil_log2(x) != ref_ceil_log2(x)) {
      t->incorrect++;
      check_report("ceil_log2", "t=%a: got %d, want %d", x, nx_ceil_log2(x), ref_ceil_log2(x));
    }
    if (nx_ceil_log2(s) != ref_ceil_log2(s)) {
      t->incorrect++;
      check_report("ceil_log2", "t=%a: got %d, want %d", s, nx_ceil_log2(s), ref_ceil_log2(s));
    }
  }
}

/* ---- block quantizers ---------------------------------------------------- */

typedef struct block_format {
  const char *name;
  int n;               /* elements per block */
  float limit, floor;  /* largest code magnitude; amax floor */
  nx_u8 nan_code;      /* code for a NaN element */
  float (*ref_round)(float);
  float (*decode)(nx_u8);
} block_format;

static const block_format fp8 = {"fp8 block64", 64, 448.0f, 1e-4f, NX_E4M3_NAN, ref_round_e4m3, nx_e4m3_decode};
static const block_format fp4 = {"fp4 block32", 32, 6.0f, 0x1.8p-124f, 0x0, ref_round_e2m1, nx_e2m1_decode};

/* The reference quantizer, straight from DESIGN.md; codes are compared by value. */
static void check_block(const block_format *f, const float *x, check_tally *t) {
  nx_u8 out[65], codes[64];
  float amax = 0.0f, scale;
  int i, k, e;
  for (i = 0; i < f->n; i++)
    if (!isnan(x[i]) && fabsf(x[i]) > amax) amax = fabsf(x[i]);
  if (amax < f->floor) amax = f->floor;
  k = ref_ceil_log2(amax / f->limit);
  e = k + 127 < 1 ? 1 : k + 127 > 254 ? 254 : k + 127;
  scale = ldexpf(1.0f, e - 127);
  if (f->n == 64) {
    nx_fp8_block64_quantize(x, out);
    memcpy(codes, out + 1, 64);
  } else {
    nx_fp4_block32_quantize(x, out);
    for (i = 0; i < 16; i++) codes[2 * i] = out[1 + i] & 15, codes[2 * i + 1] = out[1 + i] >> 4;
  }
  t->checked++;
  if (out[0] != e) {
    t->incorrect++;
    check_report(f->name, "scale byte %d, want %d (amax %a)", out[0], e, amax);
  }
  for (i = 0; i < f->n; i++) {
    int ok;
    t->checked++;
    if (isnan(x[i])) ok = codes[i] == f->nan_code;
    else ok = same_bits(f->decode(codes[i]), f->ref_round(clampf((float)((double)x[i] / scale), f->limit)));
    if (!ok) {
      t->incorrect++;
      check_report(f->name, "element %d = %a, scale 2^%d: got code 0x%02x", i, x[i], e - 127, codes[i]);
    }
  }
}

/* Hand-made edge blocks: each fills x[0..n) from a pattern id. */
static void fill_edge_block(int id, int n, float limit, float *x) {
  int i;
  for (i = 0; i < n; i++) {
    float mid = limit == 448.0f ? 1.0625f + 0.125f * (float)(i % 8) /* E4M3 midpoints near 1 */
                                : 0.25f + 0.5f * (float)(i % 4);  /* E2M1 midpoints 0.25..1.75 */
    switch (id) {
    case 0: x[i] = 0.0f; break;                                     /* all-zero block */
    case 1: x[i] = -0.0f; break;                                    /* all -0 */
    case 2: x[i] = 1e-6f * (float)(i + 1); break;                   /* below the amax floor */
    case 3: x[i] = i == 0 ? limit * 1e-4f : 0.0f; break;            /* near the floors */
    case 4: x[i] = i == 0 ? limit : mid; break;                     /* midpoints, scale 1 */
    case 5: x[i] = i == 0 ? -limit : -mid * 8.0f; break;            /* negative midpoints, scale 1 */
    case 6: x[i] = i == 0 ? limit * 2.0f : mid * 2.0f; break;       /* t an exact power of two */
    case 7: x[i] = i == 0 ? nx_f32_from_bits(nx_f32_bits(limit) + 1) : mid; break; /* ceiling bump */
    case 8: x[i] = i == 1 ? INFINITY : i == 2 ? -INFINITY : mid; break;           /* inf: saturate */
    case 9: x[i] = (i % 3) ? NAN : mid * (float)i; break;          /* NaN elements */
    case 10: x[i] = NAN; break;                                     /* all NaN */
    case 11: x[i] = i == 0 ? limit : ldexpf(3.0f, -12 - i); break; /* subnormal results */
    case 12: x[i] = i == 0 ? limit : ldexpf(1.0f, -10 + (i % 3) - (limit == 6.0f ? -8 : 0)); break; /* ties to zero */
    case 13: x[i] = i == 0 ? 0x1.fffffep127f : 1e30f * (float)i; break; /* huge amax */
    case 14: x[i] = i == 0 ? 1e-30f : 1e-38f * (float)i; break;    /* tiny amax above no floor */
    default: x[i] = (i & 1) ? limit * 0.999f : -limit * 1.001f; break; /* just around the limit */
    }
  }
}

#define EDGE_BLOCKS 16
#define RANDOM_BLOCKS 4096

static void random_block(long long id, int n, float *x) {
  int i, base = (int)(check_hash(21, (unsigned long long)id, 0) % 80) - 40; /* block magnitude 2^base */
  for (i = 0; i < n; i++) {
    unsigned long long h = check_hash(22, (unsigned long long)id, (unsigned long long)i);
    int spread = (int)(h % 24);
    x[i] = ldexpf((float)(h >> 40 & 0xffffff) * 0x1p-24f, base - spread) * ((h >> 8 & 1) ? -1.0f : 1.0f);
    if ((h >> 16 & 255) == 0) x[i] = NAN;
    if ((h >> 16 & 255) == 1) x[i] = 0.0f;
  }
}

static void check_quant_unit(long long unit, check_tally *t) {
  const block_format *f = unit & 1 ? &fp4 : &fp8;
  long long id = unit >> 1;
  float x[64];
  if (id < EDGE_BLOCKS) fill_edge_block((int)id, f->n, f->limit, x);
  else random_block(id, f->n, x);
  check_block(f, x, t);
}

/* ---- total order and max -------------------------------------------------- */

static int ref_total_cmp(float a, float b) {
  nx_u32 ua = nx_f32_bits(a), ub = nx_f32_bits(b);
  int na = ua >> 31, nb = ub >> 31;
  if (na != nb) return na ? -1 : 1;
  if (ua == ub) return 0;
  return ((ua < ub) != na) ? -1 : 1; /* negatives compare reversed */
}

static float ref_max(float a, float b) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a == 0.0f && b == 0.0f) return (signbit(a) && signbit(b)) ? -0.0f : 0.0f;
  return a > b ? a : b;
}

static void check_order_unit(long long unit, check_tally *t) {
  long long i;
  for (i = 0; i < 8192; i++) {
    float a = check_stratum_sample(31, (int)unit, i);
    float b = check_stratum_sample(32, (int)(check_hash(33, (unsigned long long)unit, (unsigned long long)i) % 512), i);
    if (i % 7 == 0) b = a;
    if (i % 11 == 0) b = -a;
    t->checked += 2;
    if (nx_f32_total_cmp(a, b) != ref_total_cmp(a, b)) {
      t->incorrect++;
      check_report("total order", "%a vs %a: got %d", a, b, nx_f32_total_cmp(a, b));
    }
    if (!(isnan(a) && isnan(b)) && !same_bits(nx_maxf(a, b), ref_max(a, b))) {
      t->incorrect++;
      check_report("max", "max(%a, %a): got %a", a, b, nx_maxf(a, b));
    }
  }
}

const check_def codec_checks[] = {
    {"bf16+f16", CODEC_STRATA, check_half_unit},
    {"e4m3+e2m1", CODEC_STRATA + 44, check_narrow_unit},
    {"round trips", 1, check_roundtrip_unit},
    {"ceil_log2", 256, check_ceil_log2_unit},
    {"quantizers", 2 * (EDGE_BLOCKS + RANDOM_BLOCKS), check_quant_unit},
    {"total order", CODEC_STRATA, check_order_unit},
};
const int codec_check_count = (int)(sizeof codec_checks / sizeof codec_checks[0]);
