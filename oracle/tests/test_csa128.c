/*
** test_csa128.c: unit tests of the CSA ratio-128 oracle (oracle/SPEC.md,
** "CompressedSparseAttention, ratio 128").
**
** Expected values are worked out here, apart from the oracle: the pooling,
** RMSNorm and RoPE of hand-built carries are recomputed in this file (exp,
** pow, sin and cos through libm in binary64, rounded once to binary32; bf16
** by the seeds' formula written out again), byte layouts are read back with
** explicit loops, and the attention cases are small enough to write out
** term by term.  Every table row carries its own source line.
*/
#include "oracle/csa.h"
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define D CSA_HEAD_DIM
#define NEG_INF (-INFINITY)

/* ---- fixture ------------------------------------------------------------- */

typedef struct geometry {
  csa_cache_format fmt;
  long long B, S, H, L, Rp, Rc, total;
  int bias_rank; /* -1: no bias */
  long long bias_shape[4];
} geometry;

typedef struct fixture {
  geometry g;
  csa_attrs a;
  tensor t_in[CSA_INPUT_COUNT], t_out[CSA_OUTPUT_COUNT];
  const tensor *in[CSA_INPUT_COUNT];
  tensor *out[CSA_OUTPUT_COUNT];
  int n_in, n_out;
  op_error err;
  csa_trace trace;
} fixture;

static void make(tensor *t, dtype dt, int rank, const long long *shape) {
  tensor_free(t);
  memset(t, 0, sizeof *t);
  t->dt = dt;
  t->rank = rank;
  if (rank) memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
  cr_assert(tensor_alloc(t) == 0);
}

static float *f32(const tensor *t) { return (float *)t->data; }

static long long width_of(csa_cache_format fmt) { return fmt == CSA_CACHE_FP8 ? CSA_FP8_RECORD_BYTES : D; }

/* Carry of every batch row: kv +0, score -inf (the reset state). */
static void carry_clear(tensor *t) {
  long long i, n = tensor_numel(t);
  for (i = 0; i < n; i++) f32(t)[i] = ((i / D) % 2) ? NEG_INF : 0.0f;
}

static void fx_init(fixture *f, const geometry *g) {
  long long W = width_of(g->fmt), i;
  long long s_q[4] = {g->B, g->S, g->H, D}, s_kv[3] = {g->B, g->L, D}, s_tok[3] = {g->B, g->S, D};
  long long s_ape[2] = {128, D}, s_norm[1] = {D}, s_past[3] = {g->B, g->Rp, W}, s_carry[4] = {g->B, 128, 2, D};
  long long s_b[1] = {g->B}, s_h[1] = {g->H}, s_pres[3] = {g->B, g->Rc, W};
  dtype cdt = g->fmt == CSA_CACHE_F32 ? DTYPE_F32 : DTYPE_U8;
  memset(f, 0, sizeof *f);
  f->g = *g;
  f->a.compression_ratio = 128;
  f->a.cache_format = g->fmt == CSA_CACHE_FP8 ? "fp8_e4m3_block64" : "f32";
  f->a.num_heads = g->H;
  f->a.head_dim = D;
  f->a.qk_rope_head_dim = 64;
  make(&f->t_in[CSA_IN_QUERY], DTYPE_F32, 4, s_q);
  make(&f->t_in[CSA_IN_CURRENT_KV], DTYPE_F32, 3, s_kv);
  make(&f->t_in[CSA_IN_COMPRESSOR_KV], DTYPE_F32, 3, s_tok);
  make(&f->t_in[CSA_IN_COMPRESSOR_GATE], DTYPE_F32, 3, s_tok);
  make(&f->t_in[CSA_IN_COMPRESSOR_APE], DTYPE_F32, 2, s_ape);
  make(&f->t_in[CSA_IN_COMPRESSOR_NORM], DTYPE_F32, 1, s_norm);
  make(&f->t_in[CSA_IN_PAST_COMPRESSED_KV], cdt, 3, s_past);
  make(&f->t_in[CSA_IN_PAST_CARRY], DTYPE_F32, 4, s_carry);
  make(&f->t_in[CSA_IN_SEQLENS_K], DTYPE_I32, 1, s_b);
  make(&f->t_in[CSA_IN_TOTAL_SEQ], DTYPE_I64, 0, NULL);
  make(&f->t_in[CSA_IN_HEAD_SINK], DTYPE_F32, 1, s_h);
  if (g->bias_rank >= 0) make(&f->t_in[CSA_IN_BIAS], DTYPE_F32, g->bias_rank, g->bias_shape);
  for (i = 0; i < D; i++) f32(&f->t_in[CSA_IN_COMPRESSOR_NORM])[i] = 1.0f;
  carry_clear(&f->t_in[CSA_IN_PAST_CARRY]);
  ((int64_t *)f->t_in[CSA_IN_TOTAL_SEQ].data)[0] = g->total;
  make(&f->t_out[CSA_OUT_Y], DTYPE_F32, 4, s_q);
  make(&f->t_out[CSA_OUT_PRESENT_COMPRESSED_KV], cdt, 3, s_pres);
  make(&f->t_out[CSA_OUT_PRESENT_CARRY], DTYPE_F32, 4, s_carry);
  for (i = 0; i < CSA_OUTPUT_COUNT; i++) memset(f->t_out[i].data, 0xa5, tensor_bytes(&f->t_out[i]));
  for (i = 0; i < CSA_INPUT_COUNT; i++) f->in[i] = &f->t_in[i];
  for (i = 0; i < CSA_OUTPUT_COUNT; i++) f->out[i] = &f->t_out[i];
  f->n_in = g->bias_rank >= 0 ? 20 : 11;
  f->n_out = 3;
  f->trace.records = calloc((size_t)(g->B * (g->Rc ? g->Rc : 1) * D), sizeof(float));
  f->trace.scores = calloc((size_t)(g->B * g->S * g->H * (128 + g->Rc)), sizeof(float));
  f->trace.output = calloc((size_t)(g->B * g->S * g->H * D), sizeof(float));
}

static void fx_free(fixture *f) {
  int i;
  for (i = 0; i < CSA_INPUT_COUNT; i++) tensor_free(&f->t_in[i]);
  for (i = 0; i < CSA_OUTPUT_COUNT; i++) tensor_free(&f->t_out[i]);
  free(f->trace.records);
  free(f->trace.scores);
  free(f->trace.output);
}

static int fx_run(fixture *f) {
  return oracle_csa128_run(&f->a, f->in, f->n_in, f->out, f->n_out, &f->trace, &f->err);
}

static void fx_run_ok(fixture *f, int line) {
  int rc = fx_run(f);
  cr_assert(rc == 0, "line %d: run failed: code %d (%s) input %d axis %d: %s", line, f->err.rule,
            csa_contract_name(f->err.rule), f->err.input, f->err.axis, f->err.message);
}

static void expect_bits(const char *what, long long i, float got, float want, int line) {
  cr_expect(nx_f32_bits(got) == nx_f32_bits(want), "line %d: %s[%lld]: got %a (0x%08x), want %a (0x%08x)", line,
            what, i, (double)got, nx_f32_bits(got), (double)want, nx_f32_bits(want));
}

/* Token data as a function of the absolute position, so that steps can be split. */
static float tok_kv(long long pos, int d) { return (float)((pos * 3 + d * 7) % 17 - 8) / 8.0f; }
static float tok_gate(long long pos, int d) { return (float)((pos * 5 + d * 3) % 11 - 5) / 4.0f; }

static void fill_tokens(fixture *f) {
  long long b, s, start = f->g.total - f->g.S;
  int d;
  for (b = 0; b < f->g.B; b++)
    for (s = 0; s < f->g.S; s++)
      for (d = 0; d < D; d++) {
        long long i = (b * f->g.S + s) * D + d;
        f32(&f->t_in[CSA_IN_COMPRESSOR_KV])[i] = tok_kv(start + s + b, d);
        f32(&f->t_in[CSA_IN_COMPRESSOR_GATE])[i] = tok_gate(start + s + b, d);
      }
}

static float *carry_slot(const fixture *f, long long b, int slot, int state) {
  return f32(&f->t_out[CSA_OUT_PRESENT_CARRY]) + ((b * 128 + slot) * 2 + state) * D;
}

static int record_is_zero(const fixture *f, long long b, long long rec) {
  long long W = width_of(f->g.fmt), esz = f->g.fmt == CSA_CACHE_FP8 ? 1 : 4, i;
  const unsigned char *p = (const unsigned char *)f->t_out[CSA_OUT_PRESENT_COMPRESSED_KV].data +
                           (b * f->g.Rc + rec) * W * esz;
  for (i = 0; i < W * esz; i++)
    if (p[i]) return 0;
  return 1;
}

static const float *view_record(const fixture *f, long long b, long long rec) {
  return f32(&f->t_out[CSA_OUT_PRESENT_COMPRESSED_KV]) + (b * f->g.Rc + rec) * D;
}

/* ---- independent references ---------------------------------------------- */

/* The seeds' bf16 rounding, written out again. */
static float ref_bf16(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  u = ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16;
  memcpy(&x, &u, 4);
  return x;
}

static float ref_exp(float x) { return (float)exp((double)x); }

/* RMSNorm (eps 1e-6), weight, bf16; r[] in place. */
static void ref_norm(float *r, const float *w) {
  float sq = 0.0f, inv;
  int d;
  for (d = 0; d < D; d++) sq += r[d] * r[d];
  inv = 1.0f / sqrtf(sq / 512.0f + 1e-6f);
  for (d = 0; d < D; d++) r[d] = ref_bf16((r[d] * inv) * w[d]);
}

/* The RoPE tail at block start p0, transcendentals in binary64. */
static void ref_rope(float *r, long long p0) {
  int k;
  for (k = 0; k < 32; k++) {
    float ramp = fminf(1.0f, fmaxf(0.0f, ((float)k - 15.0f) / 10.0f));
    float base = (float)pow(160000.0, (double)(-(float)(2 * k) / 64.0f));
    float freq = base * (1.0f - ramp) + (base / 16.0f) * ramp;
    float ang = (float)p0 * freq, sn = (float)sin((double)ang), cs = (float)cos((double)ang);
    float re = r[448 + 2 * k], im = r[449 + 2 * k];
    r[448 + 2 * k] = ref_bf16(re * cs - im * sn);
    r[449 + 2 * k] = ref_bf16(re * sn + im * cs);
  }
}

/* ---- record emission and the carry --------------------------------------- */

/* Prefill of S tokens from position 0, f32 cache of capacity 2. */
static void prefill(fixture *f, long long S, csa_cache_format fmt) {
  geometry g = {fmt, 1, S, 1, S, 0, 2, S, -1, {0}};
  fx_init(f, &g);
  fill_tokens(f);
}

Test(csa128, emission_at_the_128th_position) {
  static const struct {
    long long S, records;
    int line;
  } rows[] = {{127, 0, __LINE__}, {128, 1, __LINE__}, {129, 1, __LINE__}};
  fixture f128;
  size_t k;
  prefill(&f128, 128, CSA_CACHE_F32);
  fx_run_ok(&f128, __LINE__);
  for (k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    fixture f;
    int d, j;
    prefill(&f, rows[k].S, CSA_CACHE_F32);
    fx_run_ok(&f, rows[k].line);
    cr_expect(record_is_zero(&f, 0, 0) == (rows[k].records == 0), "line %d: record 0", rows[k].line);
    cr_expect(record_is_zero(&f, 0, 1), "line %d: record 1 must stay zero", rows[k].line);
    if (rows[k].records)
      cr_expect(!memcmp(view_record(&f, 0, 0), view_record(&f128, 0, 0), D * 4),
                "line %d: record 0 must not depend on later tokens", rows[k].line);
    /* the carry: tokens after the last emission sit in their slots, the rest is reset */
    for (j = 0; j < 128; j++) {
      long long pos = rows[k].S >= 128 ? 128 + j : j;
      int live = pos < rows[k].S;
      for (d = 0; d < D; d += 37) {
        float want_kv = live ? tok_kv(pos, d) : 0.0f, want_sc = live ? tok_gate(pos, d) : NEG_INF;
        expect_bits("carry kv", j, carry_slot(&f, 0, j, 0)[d], want_kv, rows[k].line);
        expect_bits("carry score", j, carry_slot(&f, 0, j, 1)[d], want_sc, rows[k].line);
      }
    }
    fx_free(&f);
  }
  fx_free(&f128);
}

/* 127 tokens, then one decode step fed the present state, equals a 128-token prefill. */
Test(csa128, decode_step_threads_the_state) {
  fixture a, b, ref;
  geometry g = {CSA_CACHE_F32, 1, 1, 1, 1, 2, 2, 128, -1, {0}};
  prefill(&a, 127, CSA_CACHE_F32);
  fx_run_ok(&a, __LINE__);
  fx_init(&b, &g);
  fill_tokens(&b);
  memcpy(b.t_in[CSA_IN_PAST_CARRY].data, a.t_out[CSA_OUT_PRESENT_CARRY].data, tensor_bytes(&a.t_out[2]));
  memcpy(b.t_in[CSA_IN_PAST_COMPRESSED_KV].data, a.t_out[1].data, tensor_bytes(&a.t_out[1]));
  fx_run_ok(&b, __LINE__);
  prefill(&ref, 128, CSA_CACHE_F32);
  fx_run_ok(&ref, __LINE__);
  cr_expect(!memcmp(view_record(&b, 0, 0), view_record(&ref, 0, 0), D * 4), "decode record differs from prefill");
  cr_expect(!memcmp(b.t_out[2].data, ref.t_out[2].data, tensor_bytes(&b.t_out[2])), "carries differ");
  fx_free(&a);
  fx_free(&b);
  fx_free(&ref);
}

/* start == 0 ignores the past carry; start > 0 uses it. */
Test(csa128, carry_reset_at_start_zero) {
  fixture clean, junk, cont;
  geometry g = {CSA_CACHE_F32, 1, 128, 1, 128, 0, 2, 129, -1, {0}};
  long long i, n;
  /* 127 tokens: slot 127 is never written, so it shows whether the reset ran */
  prefill(&clean, 127, CSA_CACHE_F32);
  fx_run_ok(&clean, __LINE__);
  prefill(&junk, 127, CSA_CACHE_F32);
  n = tensor_numel(&junk.t_in[CSA_IN_PAST_CARRY]);
  for (i = 0; i < n; i++) f32(&junk.t_in[CSA_IN_PAST_CARRY])[i] = 50.0f; /* would dominate every pool */
  fx_run_ok(&junk, __LINE__);
  cr_expect(!memcmp(junk.t_out[2].data, clean.t_out[2].data, tensor_bytes(&clean.t_out[2])),
            "past carry leaked at start 0");
  fx_free(&clean);
  prefill(&clean, 128, CSA_CACHE_F32);
  fx_run_ok(&clean, __LINE__);
  /* start = 1: slot 0 of the record comes from the junk past carry */
  fx_init(&cont, &g);
  fill_tokens(&cont);
  for (i = 0; i < n; i++) f32(&cont.t_in[CSA_IN_PAST_CARRY])[i] = 50.0f;
  fx_run_ok(&cont, __LINE__);
  /* every dim's pool is dominated by slot 0 (score 50): kv 50, so the record is far from clean's */
  cr_expect(memcmp(view_record(&cont, 0, 0), view_record(&clean, 0, 0), D * 4), "start 1 must use the past carry");
  fx_free(&clean);
  fx_free(&junk);
  fx_free(&cont);
}

/* ---- the record: pooling, norm, RoPE, formats ---------------------------- */

static float hand_v0(int d) { return (float)(d % 13 - 6) / 4.0f; }
static float hand_v1(int d) { return (float)(d % 7 - 3) / 2.0f; }
static float hand_g1(int d) { return -(float)(d % 5) / 4.0f; }
static float hand_a1(int d) { return (float)(d % 3) * 0.5f; }
static float hand_w(int d) { return 1.0f + (float)(d % 5) / 8.0f; }

/*
** Blocks of 128 tokens where only slots 0 and 1 have finite scores: slot 0
** score 0 (gate 0, ape 0), slot 1 score g1 + a1; slots 2..127 score -inf
** with kv = +inf, which poisons the pool unless -inf slots are skipped.
*/
static float hand_scale = 1.0f; /* multiplies v0 and v1: small values make eps matter */

static void hand_pool_fixture(fixture *f, long long S, csa_cache_format fmt) {
  geometry g = {fmt, 1, S, 1, S, 0, 2, S, -1, {0}};
  long long s;
  int d;
  fx_init(f, &g);
  for (d = 0; d < D; d++) {
    f32(&f->t_in[CSA_IN_COMPRESSOR_APE])[1 * D + d] = hand_a1(d);
    f32(&f->t_in[CSA_IN_COMPRESSOR_NORM])[d] = hand_w(d);
  }
  for (s = 0; s < S; s++)
    for (d = 0; d < D; d++) {
      int slot = (int)(s % 128);
      float kv = slot == 0 ? hand_v0(d) * hand_scale : slot == 1 ? hand_v1(d) * hand_scale : INFINITY;
      float gate = slot == 0 ? 0.0f : slot == 1 ? hand_g1(d) : NEG_INF;
      f32(&f->t_in[CSA_IN_COMPRESSOR_KV])[s * D + d] = kv;
      f32(&f->t_in[CSA_IN_COMPRESSOR_GATE])[s * D + d] = gate;
    }
}

/* The record of the hand carry before RoPE: pool, bf16, norm. */
static void hand_record(float *r) {
  int d;
  float w[D];
  for (d = 0; d < D; d++) {
    float s1 = hand_g1(d) + hand_a1(d), m = s1 > 0.0f ? s1 : 0.0f;
    float w0 = ref_exp(0.0f - m), w1 = ref_exp(s1 - m);
    float den = 0.0f + w0, num = 0.0f + w0 * (hand_v0(d) * hand_scale);
    den = den + w1;
    num = num + w1 * (hand_v1(d) * hand_scale);
    r[d] = ref_bf16(num / den);
    w[d] = hand_w(d);
  }
  ref_norm(r, w);
}

Test(csa128, pooling_norm_and_first_dims_by_hand) {
  fixture f;
  float want[D];
  int d;
  /* dim 0: slots (v 0 -> -1.5, score 0) and (v 1 -> -1.5, score 0): pool = -1.5 */
  cr_assert(hand_v0(0) == -1.5f && hand_v1(0) == -1.5f && hand_g1(0) + hand_a1(0) == 0.0f);
  hand_pool_fixture(&f, 128, CSA_CACHE_F32);
  fx_run_ok(&f, __LINE__);
  hand_record(want); /* RoPE at block start 0 is the identity: angle 0 */
  for (d = 0; d < D; d++) expect_bits("record", d, f.trace.records[d], want[d], __LINE__);
  {
    double sq = 0.0;
    float pool[D];
    for (d = 0; d < D; d++) {
      double s1 = (double)hand_g1(d) + hand_a1(d), m = s1 > 0 ? s1 : 0;
      double w0 = exp(-m), w1 = exp(s1 - m);
      pool[d] = ref_bf16((float)((w0 * hand_v0(d) + w1 * hand_v1(d)) / (w0 + w1)));
      sq += (double)pool[d] * pool[d];
    }
    for (d = 0; d < 4; d++) { /* binary64 reference, within 2 bf16 ulps */
      double r = pool[d] / sqrt(sq / 512.0 + 1e-6) * hand_w(d);
      cr_expect(fabs(f.trace.records[d] - r) <= fabs(r) * 0x1p-7, "dim %d: %a vs %a", d,
                (double)f.trace.records[d], r);
    }
  }
  /* the f32 view: tail exactly the record, low 16 bits zero */
  for (d = 448; d < D; d++) {
    expect_bits("view tail", d, view_record(&f, 0, 0)[d], want[d], __LINE__);
    cr_expect((nx_f32_bits(view_record(&f, 0, 0)[d]) & 0xffffu) == 0);
  }
  fx_free(&f);
}

/* Pool values near 2^-10: mean square ~1e-6, the size of eps, so eps shows. */
Test(csa128, rmsnorm_eps_on_small_records) {
  fixture f;
  float want[D];
  int d;
  hand_scale = 0x1p-10f;
  hand_pool_fixture(&f, 128, CSA_CACHE_F32);
  fx_run_ok(&f, __LINE__);
  hand_record(want);
  hand_scale = 1.0f;
  for (d = 0; d < D; d++) expect_bits("small record", d, f.trace.records[d], want[d], __LINE__);
  fx_free(&f);
}

/* Second block: same carry contents, so the same pre-RoPE record, rotated at 128. */
Test(csa128, rope_tail_at_block_start_128) {
  fixture f;
  float want[D];
  int d;
  hand_pool_fixture(&f, 256, CSA_CACHE_F32);
  fx_run_ok(&f, __LINE__);
  hand_record(want);
  ref_rope(want, 128);
  for (d = 0; d < D; d++) expect_bits("record 1", d, f.trace.records[D + d], want[d], __LINE__);
  for (d = 448; d < D; d++) expect_bits("view 1 tail", d, view_record(&f, 0, 1)[d], want[d], __LINE__);
  /* and a rotation really happened: the tail differs from record 0's */
  cr_expect(memcmp(f.trace.records + 448, f.trace.records + D + 448, 64 * 4));
  fx_free(&f);
}

/* The 583-byte record read back by hand equals the f32 view; Y is equal too. */
Test(csa128, fp8_record_layout_matches_f32_view) {
  fixture a, b;
  int blk, i, t;
  hand_pool_fixture(&a, 256, CSA_CACHE_FP8);
  hand_pool_fixture(&b, 256, CSA_CACHE_F32);
  for (i = 0; i < D; i++) { /* a query so that row 255 reads both records */
    f32(&a.t_in[CSA_IN_QUERY])[255 * D + i] = f32(&b.t_in[CSA_IN_QUERY])[255 * D + i] = (float)(i % 9 - 4) / 16.0f;
    f32(&a.t_in[CSA_IN_CURRENT_KV])[255 * D + i] = f32(&b.t_in[CSA_IN_CURRENT_KV])[255 * D + i] = 0.25f;
  }
  fx_run_ok(&a, __LINE__);
  fx_run_ok(&b, __LINE__);
  for (t = 0; t < 2; t++) {
    const unsigned char *p = (const unsigned char *)a.t_out[1].data + t * 583;
    const float *v = view_record(&b, 0, t);
    for (blk = 0; blk < 7; blk++) {
      float scale = ldexpf(1.0f, (int)p[65 * blk] - 127);
      cr_expect(p[65 * blk] >= 1 && p[65 * blk] <= 254);
      for (i = 0; i < 64; i++)
        expect_bits("fp8 dequant", blk * 64 + i, nx_e4m3_decode(p[65 * blk + 1 + i]) * scale, v[blk * 64 + i],
                    __LINE__);
    }
    for (i = 0; i < 64; i++) {
      uint32_t lo = p[455 + 2 * i], hi = p[456 + 2 * i];
      cr_expect(((hi << 8 | lo) << 16) == nx_f32_bits(v[448 + i]), "record %d tail %d", t, i);
    }
  }
  cr_expect(!memcmp(a.t_out[0].data, b.t_out[0].data, tensor_bytes(&a.t_out[0])), "Y differs between formats");
  cr_expect(!record_is_zero(&a, 0, 0) && !record_is_zero(&a, 0, 1));
  fx_free(&a);
  fx_free(&b);
}

/* ---- sink attention ------------------------------------------------------ */

/*
** Decode at position 4 (total 5), current_kv rows for positions 2, 3, 4,
** scale 1, q = e0.  Row r: kv[0] = score s_r, kv[1], kv[2] values.
*/
static const float att_s[3] = {1.0f, 2.0f, 0.5f}, att_v1[3] = {10.0f, 20.0f, 40.0f}, att_v2[3] = {1.0f, 0.0f, -1.0f};

static void attention_fixture(fixture *f, int with_bias) {
  geometry g = {CSA_CACHE_F32, 1, 1, 1, 3, 0, 1, 5, with_bias ? 4 : -1, {1, 1, 1, 129}};
  int r;
  fx_init(f, &g);
  f->a.has_scale = 1;
  f->a.scale = 1.0f;
  f32(&f->t_in[CSA_IN_QUERY])[0] = 1.0f;
  f32(&f->t_in[CSA_IN_HEAD_SINK])[0] = 3.0f; /* above the max score 2 */
  for (r = 0; r < 3; r++) {
    f32(&f->t_in[CSA_IN_CURRENT_KV])[r * D + 0] = att_s[r];
    f32(&f->t_in[CSA_IN_CURRENT_KV])[r * D + 1] = att_v1[r];
    f32(&f->t_in[CSA_IN_CURRENT_KV])[r * D + 2] = att_v2[r];
  }
}

/* Y[0..2] for the candidates in use[], by hand; sink after the max. */
static void attention_expect(const int *use, float *y) {
  float m = NEG_INF, den = 0.0f, p;
  int r, k;
  for (r = 0; r < 3; r++)
    if (use[r] && att_s[r] > m) m = att_s[r];
  for (r = 0; r < 3; r++)
    if (use[r]) den = den + ref_exp(att_s[r] - m);
  den = den + ref_exp(3.0f - m);
  for (k = 0; k < 3; k++) y[k] = 0.0f;
  for (r = 0; r < 3; r++) {
    if (!use[r]) continue;
    p = ref_exp(att_s[r] - m) / den;
    y[0] = y[0] + p * att_s[r];
    y[1] = y[1] + p * att_v1[r];
    y[2] = y[2] + p * att_v2[r];
  }
}

Test(csa128, sink_enters_the_denominator_after_the_max) {
  fixture f;
  const int all[3] = {1, 1, 1};
  float want[3];
  int k;
  attention_fixture(&f, 0);
  fx_run_ok(&f, __LINE__);
  attention_expect(all, want);
  for (k = 0; k < 3; k++) expect_bits("Y", k, f32(&f.t_out[0])[k], want[k], __LINE__);
  for (k = 3; k < D; k++) expect_bits("Y", k, f32(&f.t_out[0])[k], 0.0f, __LINE__);
  /* had the sink joined the max (m = 3), Y[1] would differ */
  {
    float e0 = ref_exp(-2.0f), e1 = ref_exp(-1.0f), e2 = ref_exp(-2.5f), den = ((e0 + e1) + e2) + 1.0f;
    float alt = ((e0 / den) * 10.0f + (e1 / den) * 20.0f) + (e2 / den) * 40.0f;
    cr_expect(nx_f32_bits(alt) != nx_f32_bits(want[1]));
  }
  /* trace: dense columns 0..2 hold the scores, the rest -inf */
  for (k = 0; k < 129; k++) expect_bits("score", k, f.trace.scores[k], k < 3 ? att_s[k] : NEG_INF, __LINE__);
  fx_free(&f);
}

Test(csa128, neg_inf_candidates_are_skipped) {
  fixture f;
  const int use[3] = {1, 0, 1};
  float want[3];
  int k;
  attention_fixture(&f, 1);
  f32(&f.t_in[CSA_IN_BIAS])[1] = NEG_INF; /* candidate 1: position 3, the max */
  fx_run_ok(&f, __LINE__);
  attention_expect(use, want);
  for (k = 0; k < 3; k++) expect_bits("Y", k, f32(&f.t_out[0])[k], want[k], __LINE__);
  expect_bits("score", 1, f.trace.scores[1], NEG_INF, __LINE__);
  fx_free(&f);
}

Test(csa128, all_masked_row_is_zero) {
  fixture f;
  int k;
  attention_fixture(&f, 1);
  for (k = 0; k < 129; k++) f32(&f.t_in[CSA_IN_BIAS])[k] = NEG_INF;
  fx_run_ok(&f, __LINE__);
  for (k = 0; k < D; k++) expect_bits("Y", k, f32(&f.t_out[0])[k], 0.0f, __LINE__);
  fx_free(&f);
  /* NaN scores are ignored by the max too: still all masked, still +0 (not NaN) */
  attention_fixture(&f, 1);
  for (k = 0; k < 129; k++) f32(&f.t_in[CSA_IN_BIAS])[k] = k < 3 ? NAN : NEG_INF;
  fx_run_ok(&f, __LINE__);
  for (k = 0; k < D; k++) expect_bits("Y (NaN scores)", k, f32(&f.t_out[0])[k], 0.0f, __LINE__);
  fx_free(&f);
}

/*
** Prefill of 130 tokens, capacity 3: row p reads (p + 1) / 128 records;
** records 1 and 2 are beyond the cursor and stay zero.
*/
Test(csa128, records_used_up_to_position_and_capacity) {
  fixture f;
  geometry g = {CSA_CACHE_F32, 1, 130, 1, 130, 0, 3, 130, -1, {0}};
  static const struct {
    long long row;
    int records;
    int line;
  } rows[] = {{0, 0, __LINE__}, {126, 0, __LINE__}, {127, 1, __LINE__}, {129, 1, __LINE__}};
  long long i, stride = 131;
  size_t k;
  fx_init(&f, &g);
  fill_tokens(&f);
  for (i = 0; i < tensor_numel(&f.t_in[CSA_IN_QUERY]); i++) f32(&f.t_in[CSA_IN_QUERY])[i] = (float)(i % 5 - 2) / 8.0f;
  for (i = 0; i < tensor_numel(&f.t_in[CSA_IN_CURRENT_KV]); i++)
    f32(&f.t_in[CSA_IN_CURRENT_KV])[i] = (float)(i % 7 - 3) / 8.0f;
  fx_run_ok(&f, __LINE__);
  cr_expect(!record_is_zero(&f, 0, 0) && record_is_zero(&f, 0, 1) && record_is_zero(&f, 0, 2));
  for (k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    const float *sc = f.trace.scores + rows[k].row * stride, *q = f32(&f.t_in[0]) + rows[k].row * D;
    float want = 0.0f, scale = 1.0f / sqrtf(512.0f);
    long long first = rows[k].row + 1 > 128 ? rows[k].row + 1 - 128 : 0, c;
    int d;
    /* dense: column c is position first + c, live up to the row's own position */
    for (c = 0; c < 128; c++) {
      int live = first + c <= rows[k].row;
      cr_expect((nx_f32_bits(sc[c]) != 0xff800000u) == live, "line %d: column %lld", rows[k].line, c);
    }
    for (d = 0; d < D; d++) want += q[d] * f32(&f.t_in[1])[first * D + d];
    expect_bits("dense score 0", rows[k].row, sc[0], want * scale, rows[k].line);
    /* records: column 128 live iff the row reads record 0; 129, 130 never */
    cr_expect((nx_f32_bits(sc[128]) != 0xff800000u) == rows[k].records, "line %d: record column", rows[k].line);
    expect_bits("record col 129", rows[k].row, sc[129], NEG_INF, rows[k].line);
    expect_bits("record col 130", rows[k].row, sc[130], NEG_INF, rows[k].line);
    if (rows[k].records) {
      want = 0.0f;
      for (d = 0; d < D; d++) want += q[d] * view_record(&f, 0, 0)[d];
      expect_bits("record score", rows[k].row, sc[128], want * scale, rows[k].line);
    }
  }
  fx_free(&f);
}

/* A prefill with fewer current_kv rows than 128 has that many dense columns. */
Test(csa128, prefill_dense_count_is_current_kv_length) {
  fixture f;
  geometry g = {CSA_CACHE_F32, 1, 3, 1, 3, 0, 0, 3, -1, {0}};
  int k;
  fx_init(&f, &g);
  f32(&f.t_in[CSA_IN_QUERY])[2 * D] = 1.0f;
  f32(&f.t_in[CSA_IN_CURRENT_KV])[0] = 0.5f;
  fx_run_ok(&f, __LINE__);
  /* row 2 (position 2) sees positions 0, 1, 2; scale 1/sqrt(512) */
  expect_bits("score", 0, f.trace.scores[2 * 128 + 0], 0.5f * (1.0f / sqrtf(512.0f)), __LINE__);
  for (k = 3; k < 128; k++) expect_bits("score", k, f.trace.scores[2 * 128 + k], NEG_INF, __LINE__);
  for (k = 1; k < 128; k++) expect_bits("row 0 score", k, f.trace.scores[k], NEG_INF, __LINE__);
  fx_free(&f);
}

/* ---- contracts ----------------------------------------------------------- */

enum mutation {
  MUT_RATIO, MUT_RATIO4, MUT_FORMAT, MUT_HEADS, MUT_SCALE, MUT_ARITY_IN, MUT_NO_SINK, MUT_INDEX_INPUT,
  MUT_ARITY_OUT, MUT_FP4, MUT_HEAD_DIM, MUT_ROPE, MUT_SEQLENS_DT, MUT_PAST_DT, MUT_TOTAL_RANK, MUT_EMPTY_Q,
  MUT_APE_SHAPE, MUT_CARRY_SHAPE, MUT_KV_BATCH, MUT_FP8_WIDTH, MUT_BIAS_BCAST, MUT_BIAS_CAND, MUT_OUT_DT,
  MUT_Y_SHAPE, MUT_TOTAL_NEG, MUT_TOTAL_SHORT, MUT_PAST_CAP, MUT_PRESENT_CAP
};

static void mutate(fixture *f, int m) {
  long long s3[3], s4[4];
  switch (m) {
  case MUT_RATIO: f->a.compression_ratio = 64; break;
  case MUT_RATIO4: f->a.compression_ratio = 4; break;
  case MUT_FORMAT: f->a.cache_format = "bf16"; break;
  case MUT_HEADS: f->a.num_heads = 0; break;
  case MUT_SCALE: f->a.has_scale = 1, f->a.scale = NAN; break;
  case MUT_ARITY_IN: f->n_in = 10; break;
  case MUT_NO_SINK: f->in[CSA_IN_HEAD_SINK] = NULL; break;
  case MUT_INDEX_INPUT: f->n_in = 20, f->in[12] = &f->t_in[CSA_IN_HEAD_SINK]; break;
  case MUT_ARITY_OUT: f->n_out = 2; break;
  case MUT_FP4: f->a.cache_format = "fp4_e2m1_block32"; break;
  case MUT_HEAD_DIM: f->a.head_dim = 256; break;
  case MUT_ROPE: f->a.qk_rope_head_dim = 0; break;
  case MUT_SEQLENS_DT: f->t_in[CSA_IN_SEQLENS_K].dt = DTYPE_I64; break;
  case MUT_PAST_DT: f->t_in[CSA_IN_PAST_COMPRESSED_KV].dt = DTYPE_U8; break;
  case MUT_TOTAL_RANK: f->t_in[CSA_IN_TOTAL_SEQ].rank = 1, f->t_in[CSA_IN_TOTAL_SEQ].shape[0] = 1; break;
  case MUT_EMPTY_Q: f->t_in[CSA_IN_QUERY].shape[1] = 0; break;
  case MUT_APE_SHAPE: f->t_in[CSA_IN_COMPRESSOR_APE].shape[0] = 64; break;
  case MUT_CARRY_SHAPE: f->t_in[CSA_IN_PAST_CARRY].shape[3] = 256; break;
  case MUT_KV_BATCH: f->t_in[CSA_IN_CURRENT_KV].shape[0] = 2; break;
  case MUT_FP8_WIDTH: f->a.cache_format = "fp8_e4m3_block64", f->t_in[CSA_IN_PAST_COMPRESSED_KV].dt = DTYPE_U8; break;
  case MUT_BIAS_BCAST:
    s4[0] = 1, s4[1] = 3, s4[2] = 1, s4[3] = 1;
    make(&f->t_in[CSA_IN_BIAS], DTYPE_F32, 4, s4), f->n_in = 20;
    break;
  case MUT_BIAS_CAND:
    s3[0] = 1, s3[1] = 1, s3[2] = 7;
    make(&f->t_in[CSA_IN_BIAS], DTYPE_F32, 3, s3), f->n_in = 20;
    break;
  case MUT_OUT_DT: f->t_out[CSA_OUT_PRESENT_CARRY].dt = DTYPE_BF16; break;
  case MUT_Y_SHAPE: f->t_out[CSA_OUT_Y].shape[3] = 256; break;
  case MUT_TOTAL_NEG: ((int64_t *)f->t_in[CSA_IN_TOTAL_SEQ].data)[0] = -1; break;
  case MUT_TOTAL_SHORT: ((int64_t *)f->t_in[CSA_IN_TOTAL_SEQ].data)[0] = 1; break;
  case MUT_PAST_CAP: ((int64_t *)f->t_in[CSA_IN_TOTAL_SEQ].data)[0] = 2 + 256; break; /* start 256: 2 past records */
  case MUT_PRESENT_CAP: ((int64_t *)f->t_in[CSA_IN_TOTAL_SEQ].data)[0] = 2 + 127 + 128; break; /* Rp ok, Rc 1 < 2 */
  }
}

Test(csa128, contracts) {
  static const struct {
    int mutation, code, input, axis, line;
  } rows[] = {
      {MUT_RATIO, CSA_CONTRACT_RATIO, -1, -1, __LINE__},
      {MUT_RATIO4, CSA_CONTRACT_ARITY_INPUTS, -1, -1, __LINE__}, /* ratio 4 needs inputs 11..18 */
      {MUT_FORMAT, CSA_CONTRACT_CACHE_FORMAT, -1, -1, __LINE__},
      {MUT_HEADS, CSA_CONTRACT_NUM_HEADS, -1, -1, __LINE__},
      {MUT_SCALE, CSA_CONTRACT_SCALE, -1, -1, __LINE__},
      {MUT_ARITY_IN, CSA_CONTRACT_ARITY_INPUTS, -1, -1, __LINE__},
      {MUT_NO_SINK, CSA_CONTRACT_REQUIRED_INPUT, 10, -1, __LINE__},
      {MUT_INDEX_INPUT, CSA_CONTRACT_RATIO4_INPUT, 12, -1, __LINE__},
      {MUT_ARITY_OUT, CSA_CONTRACT_ARITY_OUTPUTS, -1, -1, __LINE__},
      {MUT_FP4, CSA_CONTRACT_FP4_FORMAT, -1, -1, __LINE__},
      {MUT_HEAD_DIM, CSA_CONTRACT_HEAD_DIM, -1, -1, __LINE__},
      {MUT_ROPE, CSA_CONTRACT_ROPE_DIM, -1, -1, __LINE__},
      {MUT_SEQLENS_DT, CSA_CONTRACT_DTYPE, 8, -1, __LINE__},
      {MUT_PAST_DT, CSA_CONTRACT_DTYPE, 6, -1, __LINE__},
      {MUT_TOTAL_RANK, CSA_CONTRACT_RANK, 9, -1, __LINE__},
      {MUT_EMPTY_Q, CSA_CONTRACT_EMPTY_QUERY, 0, 1, __LINE__},
      {MUT_APE_SHAPE, CSA_CONTRACT_SHAPE, 4, 0, __LINE__},
      {MUT_CARRY_SHAPE, CSA_CONTRACT_SHAPE, 7, 3, __LINE__},
      {MUT_KV_BATCH, CSA_CONTRACT_SHAPE, 1, 0, __LINE__},
      {MUT_FP8_WIDTH, CSA_CONTRACT_SHAPE, 6, 2, __LINE__},
      {MUT_BIAS_BCAST, CSA_CONTRACT_BIAS_BROADCAST, 19, 1, __LINE__},
      {MUT_BIAS_CAND, CSA_CONTRACT_BIAS_CANDIDATES, 19, 2, __LINE__},
      {MUT_OUT_DT, CSA_CONTRACT_OUTPUT_DTYPE, 102, -1, __LINE__},
      {MUT_Y_SHAPE, CSA_CONTRACT_OUTPUT_SHAPE, 100, 3, __LINE__},
      {MUT_TOTAL_NEG, CSA_CONTRACT_TOTAL_NEGATIVE, 9, -1, __LINE__},
      {MUT_TOTAL_SHORT, CSA_CONTRACT_TOTAL_SHORT, 9, -1, __LINE__},
      {MUT_PAST_CAP, CSA_CONTRACT_PAST_CAPACITY, 6, 1, __LINE__},
      {MUT_PRESENT_CAP, CSA_CONTRACT_PRESENT_CAPACITY, 101, 1, __LINE__},
  };
  /* base: B 1, S 2, heads 1, L 2, Rp 1, Rc 1, total 2 (start 0): valid */
  geometry g = {CSA_CACHE_F32, 1, 2, 1, 2, 1, 1, 2, -1, {0}};
  size_t k;
  for (k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    fixture f;
    int rc;
    fx_init(&f, &g);
    cr_assert(fx_run(&f) == 0, "line %d: the base case must pass: %s", rows[k].line, f.err.message);
    memset(f.t_out[0].data, 0xa5, tensor_bytes(&f.t_out[0]));
    mutate(&f, rows[k].mutation);
    rc = fx_run(&f);
    cr_expect(rc == -1 && f.err.cls == OP_ERR_CONTRACT && f.err.rule == rows[k].code && f.err.input == rows[k].input &&
                  f.err.axis == rows[k].axis,
              "line %d: got rc %d class %d code %d (%s) input %d axis %d, want code %d (%s) input %d axis %d: %s",
              rows[k].line, rc, f.err.cls, f.err.rule, csa_contract_name(f.err.rule), f.err.input, f.err.axis,
              rows[k].code, csa_contract_name(rows[k].code), rows[k].input, rows[k].axis, f.err.message);
    cr_expect(((unsigned char *)f.t_out[0].data)[0] == 0xa5, "line %d: Y touched on error", rows[k].line);
    if (rows[k].mutation == MUT_TOTAL_RANK) f.t_in[CSA_IN_TOTAL_SEQ].rank = 0;
    if (rows[k].mutation == MUT_EMPTY_Q) f.t_in[CSA_IN_QUERY].shape[1] = 2;
    fx_free(&f);
  }
  /* the boundary of the capacities: exactly enough is accepted */
  {
    fixture f;
    geometry h = {CSA_CACHE_F32, 1, 2, 1, 2, 1, 2, 2 + 127 + 128, -1, {0}}; /* start 255: Rp 1, total 257: Rc 2 */
    fx_init(&f, &h);
    fx_run_ok(&f, __LINE__);
    fx_free(&f);
  }
}

/*
** Prefill of 130 with only 100 current_kv rows (positions 30..129): at
** query_start == 0 the dense count is 100, so record 0 is column 100.
*/
Test(csa128, prefill_short_current_kv_shifts_record_column) {
  fixture f;
  geometry g = {CSA_CACHE_F32, 1, 130, 1, 100, 0, 1, 130, -1, {0}};
  const float *sc;
  float want = 0.0f, scale = 1.0f / sqrtf(512.0f);
  long long i;
  int d;
  fx_init(&f, &g);
  fill_tokens(&f);
  for (i = 0; i < tensor_numel(&f.t_in[CSA_IN_QUERY]); i++) f32(&f.t_in[CSA_IN_QUERY])[i] = (float)(i % 5 - 2) / 8.0f;
  for (i = 0; i < tensor_numel(&f.t_in[CSA_IN_CURRENT_KV]); i++)
    f32(&f.t_in[CSA_IN_CURRENT_KV])[i] = (float)(i % 7 - 3) / 8.0f;
  fx_run_ok(&f, __LINE__);
  sc = f.trace.scores + 129 * 129; /* row 129, stride 128 + 1 */
  for (d = 0; d < D; d++) want += f32(&f.t_in[0])[129 * D + d] * view_record(&f, 0, 0)[d];
  expect_bits("record column 100", 129, sc[100], want * scale, __LINE__);
  expect_bits("column 128", 129, sc[128], NEG_INF, __LINE__);
  /* column 0 is position 30 = current_kv row 0 */
  want = 0.0f;
  for (d = 0; d < D; d++) want += f32(&f.t_in[0])[129 * D + d] * f32(&f.t_in[1])[d];
  expect_bits("dense column 0", 129, sc[0], want * scale, __LINE__);
  /* row 29 (position 29) has no dense position yet: all -inf */
  for (d = 0; d < 129; d++) expect_bits("row 29", d, f.trace.scores[29 * 129 + d], NEG_INF, __LINE__);
  fx_free(&f);
}

/* current_kv longer than total: only its first total rows are used (SPEC.md decision). */
Test(csa128, current_kv_beyond_total_is_trimmed) {
  fixture f;
  geometry g = {CSA_CACHE_F32, 1, 2, 1, 5, 0, 0, 2, -1, {0}};
  int k;
  fx_init(&f, &g);
  f32(&f.t_in[CSA_IN_QUERY])[0] = 1.0f;
  for (k = 0; k < 5; k++) f32(&f.t_in[CSA_IN_CURRENT_KV])[k * D] = (float)(k + 1);
  fx_run_ok(&f, __LINE__);
  expect_bits("row 0 column 0", 0, f.trace.scores[0], 1.0f * (1.0f / sqrtf(512.0f)), __LINE__);
  expect_bits("row 0 column 1", 1, f.trace.scores[1], NEG_INF, __LINE__);
  expect_bits("row 0 column 2", 2, f.trace.scores[2], NEG_INF, __LINE__);
  fx_free(&f);
}
