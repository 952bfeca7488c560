/*
** test_index_share.c: unit tests of the IndexShare oracle (oracle/SPEC.md).
**
** Expected values are worked out here, not by calling the oracle's own
** helpers: hand-computed scores and softmax (hex constants computed apart,
** in binary64 and rounded once), byte layouts written out with explicit
** loops, a double-precision reference with libm exp, and exact cases (one
** key per row gives p = 1 exactly, two equal scores give p = 0.5).
** Every table row carries its own source line, printed on failure.
*/
#include "oracle/index_share.h"
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define NEG_INF (-INFINITY)

/* ---- fixture: a full set of tensors built from a geometry ---------------- */

typedef struct geometry {
  dtype dt, idt;
  long long B, N, Nkv, Sq, Sc, Sp, H, IH, K;
  int n_out;     /* 1 or 3 */
  int capacity;  /* present [B, Nkv, Sp, H] instead of [B, Nkv, Sp + Sc, H] */
  int bias_rank; /* -1: no bias */
  long long bias_shape[4];
} geometry;

typedef struct fixture {
  index_share_attrs a;
  tensor t_in[IS_INPUT_COUNT], t_out[IS_OUTPUT_COUNT];
  const tensor *in[IS_INPUT_COUNT];
  tensor *out[IS_OUTPUT_COUNT];
  int n_in, n_out;
  long long cache;
  op_error err;
} fixture;

static void make(tensor *t, dtype dt, int rank, const long long *shape) {
  memset(t, 0, sizeof *t);
  t->dt = dt;
  t->rank = rank;
  memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
  cr_assert(tensor_alloc(t) == 0);
}

/* Multiples of 1/8 in [-1, 1]: exact in f16 and bf16, never -0. */
static float pattern(int which, long long i) { return (float)((i * 7 + which * 5) % 17 - 8) / 8.0f; }

static void fill_pattern(tensor *t, int which) {
  long long i, n = tensor_numel(t);
  for (i = 0; i < n; i++) tensor_store_f32(t, i, pattern(which, i));
}

/* Indices rows [0, 1, ..., min(K, cache) - 1, -1, ...]; bias zero; Y junk. */
static void fx_init(fixture *f, const geometry *g) {
  long long cache = g->capacity ? g->Sp : g->Sp + g->Sc, i, n;
  long long s_q[4] = {g->B, g->N, g->Sq, g->H}, s_kv[4] = {g->B, g->Nkv, g->Sc, g->H};
  long long s_past[4] = {g->B, g->Nkv, g->Sp, g->H}, s_ix[4] = {g->B, g->IH, g->Sq, g->K};
  long long s_pres[4] = {g->B, g->Nkv, cache, g->H};
  memset(f, 0, sizeof *f);
  f->a.num_heads = g->N;
  f->a.kv_num_heads = g->Nkv;
  f->cache = cache;
  make(&f->t_in[IS_IN_QUERY], g->dt, 4, s_q);
  make(&f->t_in[IS_IN_KEY], g->dt, 4, s_kv);
  make(&f->t_in[IS_IN_VALUE], g->dt, 4, s_kv);
  if (g->Sp > 0) {
    make(&f->t_in[IS_IN_PAST_KEY], g->dt, 4, s_past);
    make(&f->t_in[IS_IN_PAST_VALUE], g->dt, 4, s_past);
  }
  make(&f->t_in[IS_IN_INDICES], g->idt, 4, s_ix);
  if (g->bias_rank >= 0) make(&f->t_in[IS_IN_BIAS], g->dt, g->bias_rank, g->bias_shape);
  for (i = 0; i < IS_IN_BIAS; i++)
    if (f->t_in[i].dt != DTYPE_NONE && i != IS_IN_INDICES) fill_pattern(&f->t_in[i], (int)i);
  n = tensor_numel(&f->t_in[IS_IN_INDICES]);
  for (i = 0; i < n; i++) {
    long long s = i % g->K, v = s < cache ? s : -1;
    if (g->idt == DTYPE_I64)
      ((int64_t *)f->t_in[IS_IN_INDICES].data)[i] = v;
    else
      ((int32_t *)f->t_in[IS_IN_INDICES].data)[i] = (int32_t)v;
  }
  make(&f->t_out[IS_OUT_Y], g->dt, 4, s_q);
  memset(f->t_out[IS_OUT_Y].data, 0xa5, tensor_bytes(&f->t_out[IS_OUT_Y]));
  if (g->n_out == 3) {
    make(&f->t_out[IS_OUT_PRESENT_KEY], g->dt, 4, s_pres);
    make(&f->t_out[IS_OUT_PRESENT_VALUE], g->dt, 4, s_pres);
  }
  for (i = 0; i < IS_INPUT_COUNT; i++) f->in[i] = &f->t_in[i];
  for (i = 0; i < IS_OUTPUT_COUNT; i++) f->out[i] = &f->t_out[i];
  f->n_in = g->bias_rank >= 0 ? 7 : 6;
  f->n_out = g->n_out;
}

static void fx_free(fixture *f) {
  int i;
  for (i = 0; i < IS_INPUT_COUNT; i++) tensor_free(&f->t_in[i]);
  for (i = 0; i < IS_OUTPUT_COUNT; i++) tensor_free(&f->t_out[i]);
}

static int fx_run(fixture *f, index_share_trace *trace) {
  return oracle_index_share_run(&f->a, f->in, f->n_in, f->out, f->n_out, trace, &f->err);
}

static void set_index(tensor *t, long long i, long long v) {
  if (t->dt == DTYPE_I64)
    ((int64_t *)t->data)[i] = v;
  else
    ((int32_t *)t->data)[i] = (int32_t)v;
}

/* Sets row (b, h, q) of the indices to vals[0..K). */
static void set_row(fixture *f, long long b, long long h, long long q, const long long *vals) {
  tensor *ix = &f->t_in[IS_IN_INDICES];
  long long K = ix->shape[3], s, base = ((b * ix->shape[1] + h) * ix->shape[2] + q) * K;
  for (s = 0; s < K; s++) set_index(ix, base + s, vals[s]);
}

static void set4(tensor *t, long long a, long long b, long long c, long long d, float v) {
  tensor_store_f32(t, ((a * t->shape[1] + b) * t->shape[2] + c) * t->shape[3] + d, v);
}

static float get4(const tensor *t, long long a, long long b, long long c, long long d) {
  return tensor_load_f32(t, ((a * t->shape[1] + b) * t->shape[2] + c) * t->shape[3] + d);
}

static void expect_bits(const char *what, long long i, float got, float want, int line) {
  cr_expect(nx_f32_bits(got) == nx_f32_bits(want), "line %d: %s[%lld]: got %a (0x%08x), want %a (0x%08x)",
            line, what, i, (double)got, nx_f32_bits(got), (double)want, nx_f32_bits(want));
}

static uint16_t u16_at(const tensor *t, long long i) { return ((const uint16_t *)t->data)[i]; }

/* ---- hand-computed ------------------------------------------------------- */

/*
** H = 2, scale = 4 (sqrt_scale = 2, exact).  Present = past row 0, current
** rows 0, 1; the row selects keys 0 and 2.  q = [0.5, 0.25]:
**   key 0 = past [1, 2]:       (1)(2) + (0.5)(4) = 4
**   key 2 = current 1 [-1, .5]: (1)(-2) + (0.5)(1) = -1.5
** m = 4; e = [1, RN(e^-5.5)]; V rows [1, 0] and [0, 1] make Y = [p0, p1].
** The hex constants were computed in binary64 and rounded once to binary32
** (e^-5.5 sits 0.16 ulp from its binary32 neighbour, far from a midpoint).
*/
static void hand_fixture(fixture *f, int with_bias) {
  geometry g = {DTYPE_F32, DTYPE_I32, 1, 1, 1, 1, 2, 1, 2, 1, 3, 1, 0, -1, {0}};
  static const long long row[3] = {0, 2, -1};
  if (with_bias) g.bias_rank = 1, g.bias_shape[0] = 3;
  fx_init(f, &g);
  f->a.has_scale = 1;
  f->a.scale = 4.0f;
  set4(&f->t_in[IS_IN_QUERY], 0, 0, 0, 0, 0.5f), set4(&f->t_in[IS_IN_QUERY], 0, 0, 0, 1, 0.25f);
  set4(&f->t_in[IS_IN_PAST_KEY], 0, 0, 0, 0, 1.0f), set4(&f->t_in[IS_IN_PAST_KEY], 0, 0, 0, 1, 2.0f);
  set4(&f->t_in[IS_IN_KEY], 0, 0, 0, 0, 100.0f), set4(&f->t_in[IS_IN_KEY], 0, 0, 0, 1, 100.0f);
  set4(&f->t_in[IS_IN_KEY], 0, 0, 1, 0, -1.0f), set4(&f->t_in[IS_IN_KEY], 0, 0, 1, 1, 0.5f);
  set4(&f->t_in[IS_IN_PAST_VALUE], 0, 0, 0, 0, 1.0f), set4(&f->t_in[IS_IN_PAST_VALUE], 0, 0, 0, 1, 0.0f);
  set4(&f->t_in[IS_IN_VALUE], 0, 0, 0, 0, 7.0f), set4(&f->t_in[IS_IN_VALUE], 0, 0, 0, 1, 7.0f);
  set4(&f->t_in[IS_IN_VALUE], 0, 0, 1, 0, 0.0f), set4(&f->t_in[IS_IN_VALUE], 0, 0, 1, 1, 1.0f);
  set_row(f, 0, 0, 0, row);
}

Test(index_share_hand, two_keys_softmax) {
  fixture f;
  float scores[3] = {-12345.0f, -12345.0f, -12345.0f}, probs[3] = {-12345.0f, -12345.0f, -12345.0f};
  index_share_trace tr = {scores, probs};
  const float e1 = 0x1.0bd4a6p-8f, p0 = 0x1.fdea86p-1f, p1 = 0x1.0abd96p-8f;
  hand_fixture(&f, 0);
  cr_assert(fx_run(&f, &tr) == 0, "%s", f.err.message);
  expect_bits("nx_expf(-5.5)", 0, nx_expf(-5.5f), e1, __LINE__);
  expect_bits("scores", 0, scores[0], 4.0f, __LINE__);
  expect_bits("scores", 1, scores[1], -1.5f, __LINE__);
  expect_bits("scores", 2, scores[2], -12345.0f, __LINE__); /* beyond the valid count: untouched */
  expect_bits("probs", 0, probs[0], p0, __LINE__);
  expect_bits("probs", 1, probs[1], p1, __LINE__);
  expect_bits("probs", 2, probs[2], -12345.0f, __LINE__);
  expect_bits("Y", 0, get4(&f.t_out[0], 0, 0, 0, 0), p0, __LINE__);
  expect_bits("Y", 1, get4(&f.t_out[0], 0, 0, 0, 1), p1, __LINE__);
  /* the same within float error of the exact softmax */
  cr_expect(fabs((double)p0 - 1.0 / (1.0 + exp(-5.5))) < 1e-7 &&
            fabs((double)p1 - exp(-5.5) / (1.0 + exp(-5.5))) < 1e-9);
  fx_free(&f);
}

/* A rank-1 bias [0, 99, 5.5] over the 3 cache columns: scores 4 and 4, p = 0.5. */
Test(index_share_hand, bias_equalises_scores) {
  fixture f;
  float scores[3], probs[3];
  index_share_trace tr = {scores, probs};
  hand_fixture(&f, 1);
  tensor_store_f32(&f.t_in[IS_IN_BIAS], 0, 0.0f);
  tensor_store_f32(&f.t_in[IS_IN_BIAS], 1, 99.0f);
  tensor_store_f32(&f.t_in[IS_IN_BIAS], 2, 5.5f);
  cr_assert(fx_run(&f, &tr) == 0, "%s", f.err.message);
  expect_bits("scores", 1, scores[1], 4.0f, __LINE__);
  expect_bits("probs", 0, probs[0], 0.5f, __LINE__);
  expect_bits("Y", 0, get4(&f.t_out[0], 0, 0, 0, 0), 0.5f, __LINE__);
  expect_bits("Y", 1, get4(&f.t_out[0], 0, 0, 0, 1), 0.5f, __LINE__);
  fx_free(&f);
}

/*
** Three keys with scores 0, -0.25, -2 (scale 1, H 1, q 1): a case where
** p = e * (1 / sum) differs from e / sum in the last bit (for p1 and p2),
** so the order of operations is pinned.  Constants: binary64, rounded
** once per step (each e^x is at least 0.05 ulp from a midpoint).  V = [1,
** 2, 4] makes every product exact, so Y checks the ascending sum.
*/
Test(index_share_hand, three_keys_multiply_by_inverse) {
  geometry g = {DTYPE_F32, DTYPE_I32, 1, 1, 1, 1, 3, 0, 1, 1, 3, 1, 0, -1, {0}};
  static const float key[3] = {0.0f, -0.25f, -2.0f}, val[3] = {1.0f, 2.0f, 4.0f};
  static const float want_p[3] = {0x1.0b7bcep-1f, 0x1.a0a206p-2f, 0x1.21998ap-4f};
  float probs[3];
  index_share_trace tr = {NULL, probs};
  fixture f;
  int i;
  fx_init(&f, &g);
  f.a.has_scale = 1;
  f.a.scale = 1.0f;
  tensor_store_f32(&f.t_in[IS_IN_QUERY], 0, 1.0f);
  for (i = 0; i < 3; i++) {
    tensor_store_f32(&f.t_in[IS_IN_KEY], i, key[i]);
    tensor_store_f32(&f.t_in[IS_IN_VALUE], i, val[i]);
  }
  cr_assert(fx_run(&f, &tr) == 0, "%s", f.err.message);
  for (i = 0; i < 3; i++) expect_bits("probs", i, probs[i], want_p[i], __LINE__);
  expect_bits("Y", 0, tensor_load_f32(&f.t_out[0], 0), 0x1.9e754cp+0f, __LINE__);
  fx_free(&f);
}

/*
** Every sum runs in ascending order, each step rounded.  H = 3, scale 1,
** q = [1, 1, 1]:
**  - dot product, K = [2^24, 1, -2^24]: (2^24 + 1) ties to 2^24, minus 2^24
**    gives +0 (descending would give 1);
**  - softmax sum, scores [0, -1/8, -1/4]: 1 + e^-1/8 + e^-1/4 rounds to
**    0x1.54a566p+1 ascending (0x1.54a568p+1 descending), hence p below;
**  - P.V, three equal scores (p = RN(1/3)), V = [1, 2^24, -2^24]: p + X
**    rounds up by half an ulp of X = p * 2^24, so Y = 0.5 (descending: p).
** Constants: binary64, rounded once per binary32 step.
*/
static const struct {
  float key[3][3], val[3], want_score0, want_p[3], want_y;
  int line;
} order_cases[] = {
    {{{0x1p24f, 1.0f, -0x1p24f}, {0, 0, 0}, {0, 0, 0}}, {1, 1, 1}, 0.0f, {0, 0, 0}, -1, __LINE__},
    {{{0, 0, 0}, {-0.125f, 0, 0}, {0, -0.125f, -0.125f}},
     {0, 0, 0},
     0.0f,
     {0x1.80c654p-2f, 0x1.5390p-2f, 0x1.2ba9b0p-2f},
     -1,
     __LINE__},
    {{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, {1.0f, 0x1p24f, -0x1p24f}, 0.0f, {0, 0, 0}, 0.5f, __LINE__},
};

Test(index_share_hand, sums_run_in_ascending_order) {
  size_t i;
  int s, d;
  for (i = 0; i < sizeof order_cases / sizeof order_cases[0]; i++) {
    geometry g = {DTYPE_F32, DTYPE_I32, 1, 1, 1, 1, 3, 0, 3, 1, 3, 1, 0, -1, {0}};
    float scores[3], probs[3];
    index_share_trace tr = {scores, probs};
    fixture f;
    fx_init(&f, &g);
    f.a.has_scale = 1;
    f.a.scale = 1.0f;
    for (d = 0; d < 3; d++) tensor_store_f32(&f.t_in[IS_IN_QUERY], d, 1.0f);
    for (s = 0; s < 3; s++) {
      for (d = 0; d < 3; d++) set4(&f.t_in[IS_IN_KEY], 0, 0, s, d, order_cases[i].key[s][d]);
      for (d = 0; d < 3; d++) set4(&f.t_in[IS_IN_VALUE], 0, 0, s, d, order_cases[i].val[s]);
    }
    cr_assert(fx_run(&f, &tr) == 0, "%s", f.err.message);
    expect_bits("score", 0, scores[0], order_cases[i].want_score0, order_cases[i].line);
    if (order_cases[i].want_p[0] != 0)
      for (s = 0; s < 3; s++)
        expect_bits("probs", s, probs[s], order_cases[i].want_p[s], order_cases[i].line);
    if (order_cases[i].want_y >= 0)
      expect_bits("Y", 0, tensor_load_f32(&f.t_out[0], 0), order_cases[i].want_y, order_cases[i].line);
    fx_free(&f);
  }
}

/*
** Both accumulators start at +0: q = 0 against a negative key makes every
** product -0, and V = -0 makes every p * V -0; +0 + -0 = +0, where a -0
** start would keep -0.
*/
Test(index_share_hand, sums_start_at_plus_zero) {
  geometry g = {DTYPE_F32, DTYPE_I32, 1, 1, 1, 1, 1, 0, 2, 1, 1, 1, 0, -1, {0}};
  float scores[1];
  index_share_trace tr = {scores, NULL};
  fixture f;
  int i;
  fx_init(&f, &g);
  for (i = 0; i < 2; i++) {
    tensor_store_f32(&f.t_in[IS_IN_QUERY], i, 0.0f);
    tensor_store_f32(&f.t_in[IS_IN_KEY], i, -1.0f);
    tensor_store_f32(&f.t_in[IS_IN_VALUE], i, -0.0f);
  }
  cr_assert(fx_run(&f, &tr) == 0, "%s", f.err.message);
  expect_bits("scores", 0, scores[0], 0.0f, __LINE__);
  expect_bits("Y", 0, tensor_load_f32(&f.t_out[0], 0), 0.0f, __LINE__);
  expect_bits("Y", 1, tensor_load_f32(&f.t_out[0], 1), 0.0f, __LINE__);
  fx_free(&f);
}

/*
** scale = 1.0f / sqrtf((float)H), each step rounded in binary32; then
** sqrt_scale = sqrtf(scale).  For H = 6 and 96 that differs by one ulp from
** rounding 1/sqrt(H) once (0x1.47238ep-1 and -2).  Constants: binary64.
*/
Test(index_share_hand, default_scale_in_float_steps) {
  static const struct {
    long long H;
    float want;
  } cases[] = {{4, 0x1.6a09e6p-1f}, {6, 0x1.47238cp-1f}, {96, 0x1.47238cp-2f}};
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    geometry g = {DTYPE_F32, DTYPE_I64, 1, 1, 1, 1, 1, 0, cases[i].H, 1, 1, 1, 0, -1, {0}};
    fixture f;
    index_share_dims d;
    fx_init(&f, &g);
    cr_assert(index_share_validate(&f.a, f.in, f.n_in, (const tensor *const *)f.out, f.n_out, &d, &f.err) ==
              0);
    expect_bits("sqrt_scale(H)", cases[i].H, d.sqrt_scale, cases[i].want, __LINE__);
    fx_free(&f);
  }
}

/* ---- a double-precision reference over a larger case --------------------- */

/*
** GQA, per-head indices, a past, and a rank-3 bias [N, 1, cache] that
** broadcasts over batch and query.  Y must be within 1e-5 of the softmax
** computed in binary64 with libm exp, indexing written out independently.
*/
Test(index_share_reference, double_precision_agreement) {
  geometry g = {DTYPE_F32, DTYPE_I32, 2, 4, 2, 3, 3, 2, 8, 4, 4, 3, 0, 3, {4, 1, 5}};
  fixture f;
  long long b, h, q, s, d, cache = 5;
  static const long long rows[3][4] = {{0, 2, 4, -1}, {1, -1, -1, -1}, {0, 1, 3, 4}};
  float scores[2 * 4 * 3 * 4], probs[2 * 4 * 3 * 4];
  index_share_trace tr = {scores, probs};
  fx_init(&f, &g);
  for (s = 0; s < 20; s++) tensor_store_f32(&f.t_in[IS_IN_BIAS], s, pattern(9, s) * 3.0f);
  for (b = 0; b < 2; b++)
    for (h = 0; h < 4; h++)
      for (q = 0; q < 3; q++) set_row(&f, b, h, q, rows[(b + h + q) % 3]);
  cr_assert(fx_run(&f, &tr) == 0, "%s", f.err.message);
  for (b = 0; b < 2; b++)
    for (h = 0; h < 4; h++)
      for (q = 0; q < 3; q++) {
        const long long *row = rows[(b + h + q) % 3], trace_row = ((b * 4 + h) * 3 + q) * 4;
        double sc[4], m = -INFINITY, sum = 0, ss = 1.0 / sqrt(sqrt(8.0));
        int n = 0;
        for (n = 0; n < 4 && row[n] >= 0; n++) {
          long long k = row[n], kv = h / 2;
          const tensor *src = k < 2 ? &f.t_in[IS_IN_PAST_KEY] : &f.t_in[IS_IN_KEY];
          long long t = k < 2 ? k : k - 2;
          sc[n] = (double)tensor_load_f32(&f.t_in[IS_IN_BIAS], h * cache + k);
          for (d = 0; d < 8; d++)
            sc[n] +=
                (double)get4(&f.t_in[IS_IN_QUERY], b, h, q, d) * ss * (double)get4(src, b, kv, t, d) * ss;
          m = sc[n] > m ? sc[n] : m;
        }
        for (s = 0; s < n; s++) sum += exp(sc[s] - m);
        for (s = 0; s < n; s++)
          cr_expect(fabs((double)scores[trace_row + s] - sc[s]) < 1e-5 &&
                        fabs((double)probs[trace_row + s] - exp(sc[s] - m) / sum) < 1e-6,
                    "trace [%lld,%lld,%lld,%lld]: score %a prob %a", b, h, q, s,
                    (double)scores[trace_row + s], (double)probs[trace_row + s]);
        for (d = 0; d < 8; d++) {
          double y = 0;
          for (s = 0; s < n; s++) {
            long long k = row[s];
            const tensor *src = k < 2 ? &f.t_in[IS_IN_PAST_VALUE] : &f.t_in[IS_IN_VALUE];
            y += exp(sc[s] - m) / sum * (double)get4(src, b, h / 2, k < 2 ? k : k - 2, d);
          }
          cr_expect(fabs((double)get4(&f.t_out[0], b, h, q, d) - y) < 1e-5,
                    "Y[%lld,%lld,%lld,%lld] = %a, want ~%a", b, h, q, d,
                    (double)get4(&f.t_out[0], b, h, q, d), y);
        }
      }
  fx_free(&f);
}

/* ---- GQA and index heads: one key per row makes Y exactly V[kvh][key] ---- */

static void check_gqa(dtype dt, long long IH) {
  geometry g = {dt, DTYPE_I64, 2, 4, 2, 2, 3, 0, 2, IH, 2, 1, 0, -1, {0}};
  fixture f;
  long long b, h, q, d;
  fx_init(&f, &g);
  for (b = 0; b < 2; b++)
    for (h = 0; h < IH; h++)
      for (q = 0; q < 2; q++) {
        long long row[2] = {(b + 2 * h + q) % 3, -1};
        set_row(&f, b, h, q, row);
      }
  cr_assert(fx_run(&f, NULL) == 0, "%s", f.err.message);
  for (b = 0; b < 2; b++)
    for (h = 0; h < 4; h++)
      for (q = 0; q < 2; q++) {
        long long ih = IH == 1 ? 0 : h, key = (b + 2 * ih + q) % 3;
        for (d = 0; d < 2; d++)
          expect_bits(dtype_name(dt), ((b * 4 + h) * 2 + q) * 2 + d, get4(&f.t_out[0], b, h, q, d),
                      get4(&f.t_in[IS_IN_VALUE], b, h / 2, key, d), __LINE__);
      }
  fx_free(&f);
}

Test(index_share_heads, gqa_group2_per_head_indices) {
  check_gqa(DTYPE_F32, 4);
  check_gqa(DTYPE_BF16, 4);
}

Test(index_share_heads, gqa_group2_shared_index_head) {
  check_gqa(DTYPE_F32, 1);
  check_gqa(DTYPE_F16, 1);
}

/* ---- f16/bf16 storage rounding: equal scores make Y the exact average ---- */

Test(index_share_storage, y_rounds_to_nearest_even) {
  static const struct {
    dtype dt;
    float v0, v1;
    uint16_t want;
    int line;
  } cases[] = {
      {DTYPE_F16, 1.0f, 1.0f + 0x1p-10f, 0x3c00, __LINE__},   /* 1 + 2^-11: tie to even (down) */
      {DTYPE_F16, 1.0f, 1.0f + 0x3p-10f, 0x3c02, __LINE__},   /* 1 + 1.5*2^-10: tie to even (up) */
      {DTYPE_F16, -1.0f, -1.0f - 0x3p-10f, 0xbc02, __LINE__}, /* sign kept */
      {DTYPE_BF16, 1.0f, 1.0f + 0x1p-7f, 0x3f80, __LINE__},   /* 1 + 2^-8: tie down */
      {DTYPE_BF16, 1.0f, 1.0f + 0x3p-7f, 0x3f82, __LINE__},   /* tie up */
      {DTYPE_BF16, 0x1p-126f, 0x1p-126f, 0x0080, __LINE__},   /* smallest normal */
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    geometry g = {cases[i].dt, DTYPE_I32, 1, 1, 1, 1, 2, 0, 1, 1, 2, 1, 0, -1, {0}};
    fixture f;
    fx_init(&f, &g);
    tensor_store_f32(&f.t_in[IS_IN_QUERY], 0, 0.0f); /* both scores 0: p = 0.5 each */
    tensor_store_f32(&f.t_in[IS_IN_VALUE], 0, cases[i].v0);
    tensor_store_f32(&f.t_in[IS_IN_VALUE], 1, cases[i].v1);
    cr_assert(fx_run(&f, NULL) == 0, "%s", f.err.message);
    cr_expect(u16_at(&f.t_out[0], 0) == cases[i].want, "line %d: Y = 0x%04x, want 0x%04x", cases[i].line,
              u16_at(&f.t_out[0], 0), cases[i].want);
    fx_free(&f);
  }
}

Test(index_share_storage, f32_y_is_not_rounded) {
  geometry g = {DTYPE_F32, DTYPE_I32, 1, 1, 1, 1, 2, 0, 1, 1, 2, 1, 0, -1, {0}};
  fixture f;
  fx_init(&f, &g);
  tensor_store_f32(&f.t_in[IS_IN_QUERY], 0, 0.0f);
  tensor_store_f32(&f.t_in[IS_IN_VALUE], 0, 1.0f);
  tensor_store_f32(&f.t_in[IS_IN_VALUE], 1, 1.0f + 0x1p-10f);
  cr_assert(fx_run(&f, NULL) == 0, "%s", f.err.message);
  expect_bits("Y", 0, tensor_load_f32(&f.t_out[0], 0), 1.0f + 0x1p-11f, __LINE__);
  fx_free(&f);
}

/* ---- all-masked rows ------------------------------------------------------ */

/*
** Rows (h, q) of a [1, 2, 2, 3] bias: (1, 0) all -inf at its selected keys,
** (1, 1) all NaN (the max ignores NaN, so it stays -inf), (0, 1) one NaN
** among finite scores (the sum is NaN, so Y is NaN), (0, 0) ordinary.
*/
static void check_all_masked(dtype dt) {
  geometry g = {dt, DTYPE_I32, 1, 2, 1, 2, 3, 0, 2, 2, 3, 1, 0, 4, {1, 2, 2, 3}};
  fixture f;
  float probs[12];
  index_share_trace tr = {NULL, probs};
  long long k, d;
  fx_init(&f, &g);
  memset(probs, 0x5a, sizeof probs);
  for (k = 0; k < 2; k++) {
    set4(&f.t_in[IS_IN_BIAS], 0, 1, 0, k, NEG_INF);
    set4(&f.t_in[IS_IN_BIAS], 0, 1, 1, k, NAN);
  }
  set4(&f.t_in[IS_IN_BIAS], 0, 1, 0, 2, 0.0f); /* not selected (row is [0, 1, -1]) */
  set4(&f.t_in[IS_IN_BIAS], 0, 0, 1, 1, NAN);
  {
    static const long long row[3] = {0, 1, -1};
    set_row(&f, 0, 1, 0, row);
    set_row(&f, 0, 1, 1, row);
  }
  cr_assert(fx_run(&f, &tr) == 0, "%s", f.err.message);
  for (d = 0; d < 2; d++) {
    long long y_masked = (1 * 2 + 0) * 2 + d, y_nan_masked = (1 * 2 + 1) * 2 + d;
    cr_expect(dt == DTYPE_F32 ? nx_f32_bits(tensor_load_f32(&f.t_out[0], y_masked)) == 0
                              : u16_at(&f.t_out[0], y_masked) == 0,
              "%s: -inf row must store +0", dtype_name(dt));
    cr_expect(dt == DTYPE_F32 ? nx_f32_bits(tensor_load_f32(&f.t_out[0], y_nan_masked)) == 0
                              : u16_at(&f.t_out[0], y_nan_masked) == 0,
              "%s: NaN row must store +0", dtype_name(dt));
    cr_expect(nx_f32_is_nan(get4(&f.t_out[0], 0, 0, 1, d)), "%s: one NaN score poisons the row",
              dtype_name(dt));
    cr_expect(!nx_f32_is_nan(get4(&f.t_out[0], 0, 0, 0, d)) && get4(&f.t_out[0], 0, 0, 0, d) != 0.0f,
              "%s: ordinary row", dtype_name(dt));
  }
  if (dt != DTYPE_F32) cr_expect(u16_at(&f.t_out[0], 2) == 0x7fff, "NaN stored as 0x7fff");
  expect_bits("probs masked", 6, probs[6], 0.0f, __LINE__);
  expect_bits("probs masked", 7, probs[7], 0.0f, __LINE__);
  cr_expect(nx_f32_bits(probs[8]) == 0x5a5a5a5au, "column past the valid count untouched");
  fx_free(&f);
}

Test(index_share_masked, all_masked_rows_are_zero) {
  check_all_masked(DTYPE_F32);
  check_all_masked(DTYPE_F16);
  check_all_masked(DTYPE_BF16);
}

/* ---- capacity frontier ---------------------------------------------------- */

static void frontier_of(fixture *f, long long *valid, long long *wp) {
  index_share_dims d;
  cr_assert(
      index_share_validate(&f->a, f->in, f->n_in, (const tensor *const *)f->out, f->n_out, &d, &f->err) == 0,
      "%s", f->err.message);
  cr_assert(d.capacity_mode && d.cache_seq == 6);
  index_share_capacity_frontier(&d, f->in[IS_IN_BIAS], valid, wp);
}

Test(index_share_frontier, per_batch_with_gaps_nan_and_inf) {
  geometry g = {DTYPE_F32, DTYPE_I32, 3, 2, 1, 2, 2, 6, 1, 1, 1, 3, 1, 4, {3, 2, 2, 6}};
  fixture f;
  long long valid[3], wp[3], i;
  fx_init(&f, &g);
  for (i = 0; i < 72; i++) tensor_store_f32(&f.t_in[IS_IN_BIAS], i, NEG_INF);
  set4(&f.t_in[IS_IN_BIAS], 0, 1, 0, 2, 0.0f); /* batch 0: finite at k = 2 (h 1, q 0) and k = 0 */
  set4(&f.t_in[IS_IN_BIAS], 0, 0, 1, 0, 1.0f);
  set4(&f.t_in[IS_IN_BIAS], 1, 0, 0, 5, NAN); /* batch 1: only NaN and +inf: nothing finite */
  set4(&f.t_in[IS_IN_BIAS], 1, 1, 1, 4, INFINITY);
  for (i = 0; i < 24; i++) tensor_store_f32(&f.t_in[IS_IN_BIAS], 48 + i, NAN);
  set4(&f.t_in[IS_IN_BIAS], 2, 0, 0, 5, -1e30f); /* batch 2: the last column, finite */
  frontier_of(&f, valid, wp);
  cr_expect(valid[0] == 3 && wp[0] == 1, "batch 0: %lld %lld", valid[0], wp[0]);
  cr_expect(valid[1] == 0 && wp[1] == 0, "batch 1: %lld %lld", valid[1], wp[1]);
  cr_expect(valid[2] == 6 && wp[2] == 4, "batch 2: %lld %lld", valid[2], wp[2]);
  fx_free(&f);
}

Test(index_share_frontier, broadcast_bias_and_f16_extremes) {
  geometry g = {DTYPE_F16, DTYPE_I32, 2, 1, 1, 1, 2, 6, 1, 1, 1, 3, 1, 2, {1, 6}};
  fixture f;
  long long valid[2], wp[2], k;
  fx_init(&f, &g);
  for (k = 0; k < 6; k++) ((uint16_t *)f.t_in[IS_IN_BIAS].data)[k] = 0x7c00; /* +inf */
  ((uint16_t *)f.t_in[IS_IN_BIAS].data)[1] = 0x7bff;                         /* 65504, finite */
  ((uint16_t *)f.t_in[IS_IN_BIAS].data)[4] = 0x7e01;                         /* NaN */
  frontier_of(&f, valid, wp);
  cr_expect(valid[0] == 2 && valid[1] == 2 && wp[0] == 0 && wp[1] == 0, "%lld %lld %lld %lld", valid[0],
            valid[1], wp[0], wp[1]);
  fx_free(&f);
}

Test(index_share_frontier, size1_last_axis_covers_the_cache) {
  geometry g = {DTYPE_BF16, DTYPE_I32, 2, 1, 1, 1, 2, 6, 1, 1, 1, 3, 1, 1, {1}};
  fixture f;
  long long valid[2], wp[2];
  fx_init(&f, &g);
  tensor_store_f32(&f.t_in[IS_IN_BIAS], 0, -3.0f);
  frontier_of(&f, valid, wp);
  cr_expect(valid[0] == 6 && valid[1] == 6 && wp[0] == 4 && wp[1] == 4);
  fx_free(&f);
}

/* ---- present layout ------------------------------------------------------- */

/* Element bits of a tensor, of any float dtype, as an unsigned value. */
static uint32_t raw_at(const tensor *t, long long i) {
  return t->dt == DTYPE_F32 ? ((const uint32_t *)t->data)[i] : u16_at(t, i);
}

static void put_raw(tensor *t, long long i, uint32_t v) {
  if (t->dt == DTYPE_F32)
    ((uint32_t *)t->data)[i] = v;
  else
    ((uint16_t *)t->data)[i] = (uint16_t)v;
}

/* What a present element holds: the source's bits, with f16/bf16 NaN -> 0x7fff. */
static uint32_t expect_present_raw(const tensor *src, long long i) {
  uint32_t v = raw_at(src, i);
  if (src->dt == DTYPE_BF16 && (v & 0x7fff) > 0x7f80) return 0x7fff;
  if (src->dt == DTYPE_F16 && (v & 0x7fff) > 0x7c00) return 0x7fff;
  return v;
}

/*
** Present row t of (b, h): growing = past rows then current rows; capacity =
** past, with current rows at [wp[b], wp[b] + Sc) within the cache.
*/
static void check_present(fixture *f, const long long *wp, int capacity, int line) {
  long long Sc = f->t_in[IS_IN_KEY].shape[2], H = f->t_in[IS_IN_KEY].shape[3], b, h, t, d, n = 0;
  long long Sp = f->t_in[IS_IN_PAST_KEY].dt != DTYPE_NONE ? f->t_in[IS_IN_PAST_KEY].shape[2] : 0;
  int io;
  for (io = 0; io < 2; io++) {
    const tensor *cur = &f->t_in[IS_IN_KEY + io], *past = &f->t_in[IS_IN_PAST_KEY + io];
    const tensor *out = &f->t_out[IS_OUT_PRESENT_KEY + io];
    for (b = 0; b < out->shape[0]; b++)
      for (h = 0; h < out->shape[1]; h++)
        for (t = 0; t < f->cache; t++)
          for (d = 0; d < H; d++, n++) {
            long long bh = b * out->shape[1] + h, src_i;
            const tensor *src;
            if (capacity ? (t >= wp[b] && t < wp[b] + Sc) : t >= Sp)
              src = cur, src_i = (bh * Sc + (capacity ? t - wp[b] : t - Sp)) * H + d;
            else
              src = past, src_i = (bh * Sp + t) * H + d;
            cr_expect(raw_at(out, ((bh * f->cache) + t) * H + d) == expect_present_raw(src, src_i),
                      "line %d: present %d [%lld,%lld,%lld,%lld] = 0x%x, want 0x%x", line, io, b, h, t, d,
                      raw_at(out, ((bh * f->cache) + t) * H + d), expect_present_raw(src, src_i));
          }
  }
  cr_expect(n > 0);
}

/* NaN payloads in both K and V sources, and other special codes. */
static void plant_specials(fixture *f) {
  int io;
  for (io = 0; io < 2; io++) {
    tensor *past = &f->t_in[IS_IN_PAST_KEY + io], *cur = &f->t_in[IS_IN_KEY + io];
    if (past->dt == DTYPE_F32) {
      put_raw(past, 1, 0x7fa00001u); /* signalling NaN payload */
      put_raw(past, 2, 0xffc12345u);
      put_raw(cur, 0, 0x80000000u); /* -0 */
      put_raw(cur, 1, 0x00000001u); /* smallest subnormal */
    } else {
      put_raw(past, 1, past->dt == DTYPE_F16 ? 0x7e01u : 0x7f81u);
      put_raw(past, 2, 0xffc1u);
      put_raw(cur, 0, 0x8000u);
      put_raw(cur, 1, 0x0001u);
    }
  }
}

Test(index_share_present, growing_layout_and_nan_payloads) {
  static const dtype dts[3] = {DTYPE_F32, DTYPE_F16, DTYPE_BF16};
  static const long long zero[2] = {0, 0};
  int i;
  for (i = 0; i < 3; i++) {
    geometry g = {dts[i], DTYPE_I32, 2, 2, 2, 1, 3, 2, 3, 1, 2, 3, 0, -1, {0}};
    fixture f;
    fx_init(&f, &g);
    plant_specials(&f);
    cr_assert(fx_run(&f, NULL) == 0, "%s", f.err.message);
    check_present(&f, zero, 0, __LINE__);
    fx_free(&f);
  }
}

Test(index_share_present, growing_without_past) {
  geometry g = {DTYPE_BF16, DTYPE_I32, 1, 2, 1, 1, 3, 0, 2, 1, 2, 3, 0, -1, {0}};
  static const long long zero[1] = {0};
  fixture f;
  fx_init(&f, &g);
  cr_assert(fx_run(&f, NULL) == 0, "%s", f.err.message);
  check_present(&f, zero, 0, __LINE__);
  fx_free(&f);
}

/*
** Capacity Sp = 5, Sc = 2: batch 0's frontier is 4 (rows 2, 3 current),
** batch 1's is 1, below Sc, so wp = 0 (rows 0, 1 current).
*/
Test(index_share_present, capacity_layout) {
  static const dtype dts[3] = {DTYPE_F32, DTYPE_F16, DTYPE_BF16};
  static const long long wp[2] = {2, 0}, row_b1[2] = {0, -1};
  int i;
  long long k;
  for (i = 0; i < 3; i++) {
    geometry g = {dts[i], DTYPE_I64, 2, 1, 1, 1, 2, 5, 2, 1, 2, 3, 1, 4, {2, 1, 1, 5}};
    fixture f;
    fx_init(&f, &g);
    plant_specials(&f);
    for (k = 0; k < 5; k++) {
      set4(&f.t_in[IS_IN_BIAS], 0, 0, 0, k, k < 4 ? 0.0f : NEG_INF);
      set4(&f.t_in[IS_IN_BIAS], 1, 0, 0, k, k < 1 ? 0.0f : NEG_INF);
    }
    set_row(&f, 1, 0, 0, row_b1);
    cr_assert(fx_run(&f, NULL) == 0, "%s", f.err.message);
    check_present(&f, wp, 1, __LINE__);
    fx_free(&f);
  }
}

/* Sp = 2, Sc = 3, frontier 1: wp = 0 and the third current row falls off the cache. */
Test(index_share_present, capacity_clips_current_rows) {
  geometry g = {DTYPE_F32, DTYPE_I32, 1, 1, 1, 1, 3, 2, 2, 1, 1, 3, 1, 2, {1, 2}};
  static const long long wp[1] = {0};
  fixture f;
  fx_init(&f, &g);
  tensor_store_f32(&f.t_in[IS_IN_BIAS], 1, NEG_INF);
  cr_assert(fx_run(&f, NULL) == 0, "%s", f.err.message);
  check_present(&f, wp, 1, __LINE__);
  fx_free(&f);
}

/* ---- index rules ------------------------------------------------------------ */

#define BOUND 1000000 /* replaced by the batch's bound */
#define BOUND_M1 999999

/*
** Geometry: B = 2, N = IH = 2, Sq = 2, K = 4.  Growing: Sp = 2, Sc = 2, so
** the bound is 4.  Capacity: Sp = 6, Sc = 1, and batch 1's bias is -inf from
** column 3 on, so its bound is 3 (batch 0's is 6).  The row under test is
** (batch 1, head 1, query 0); every other row is [0, 1, 2, -1].
*/
static void index_fixture(fixture *f, dtype idt, int capacity) {
  geometry grow = {DTYPE_F32, idt, 2, 2, 1, 2, 2, 2, 2, 2, 4, 3, 0, -1, {0}};
  geometry cap = {DTYPE_F32, idt, 2, 2, 1, 2, 1, 6, 2, 2, 4, 3, 1, 4, {2, 1, 1, 6}};
  static const long long ok[4] = {0, 1, 2, -1};
  long long b, h, q, k;
  fx_init(f, capacity ? &cap : &grow);
  for (b = 0; b < 2; b++)
    for (h = 0; h < 2; h++)
      for (q = 0; q < 2; q++) set_row(f, b, h, q, ok);
  if (capacity)
    for (k = 3; k < 6; k++) set4(&f->t_in[IS_IN_BIAS], 1, 0, 0, k, NEG_INF);
}

Test(index_share_indices, six_rules_i32_i64_growing_capacity) {
  static const struct {
    const char *id;
    long long row[4];
    int rule;
    long long column;
    int line;
  } cases[] = {
      {"ok.full", {0, 1, 2, -1}, INDEX_RULE_NONE, -1, __LINE__},
      {"ok.last_valid", {0, BOUND_M1, -1, -1}, INDEX_RULE_NONE, -1, __LINE__},
      {"ok.single", {2, -1, -1, -1}, INDEX_RULE_NONE, -1, __LINE__},
      {"sentinel", {0, -2, -1, -1}, INDEX_RULE_SENTINEL, 1, __LINE__},
      {"sentinel.int_min", {0, 1, -2147483647 - 1, -1}, INDEX_RULE_SENTINEL, 2, __LINE__},
      {"sentinel.before_padding_rule", {-1, -5, -1, -1}, INDEX_RULE_SENTINEL, 1, __LINE__},
      {"after_padding", {0, -1, 2, -1}, INDEX_RULE_AFTER_PADDING, 2, __LINE__},
      {"after_padding.before_range", {0, -1, BOUND, -1}, INDEX_RULE_AFTER_PADDING, 2, __LINE__},
      {"after_padding.leading", {-1, 0, -1, -1}, INDEX_RULE_AFTER_PADDING, 1, __LINE__},
      {"out_of_range", {0, BOUND, -1, -1}, INDEX_RULE_OUT_OF_RANGE, 1, __LINE__},
      {"out_of_range.first", {BOUND, BOUND_M1, -1, -1}, INDEX_RULE_OUT_OF_RANGE, 0, __LINE__},
      {"order.columns_left_to_right", {2, 1, BOUND, -1}, INDEX_RULE_NOT_INCREASING, 1, __LINE__},
      {"duplicate", {1, 1, -1, -1}, INDEX_RULE_DUPLICATE, 1, __LINE__},
      {"duplicate.late", {0, 1, 2, 2}, INDEX_RULE_DUPLICATE, 3, __LINE__},
      {"not_increasing", {2, 1, -1, -1}, INDEX_RULE_NOT_INCREASING, 1, __LINE__},
      {"not_increasing.after_zero", {1, 0, -1, -1}, INDEX_RULE_NOT_INCREASING, 1, __LINE__},
      {"all_padding", {-1, -1, -1, -1}, INDEX_RULE_ALL_PADDING, -1, __LINE__},
  };
  static const dtype idts[2] = {DTYPE_I32, DTYPE_I64};
  size_t i;
  int t, cap, j;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (t = 0; t < 2; t++)
      for (cap = 0; cap < 2; cap++) {
        fixture f;
        long long bound = cap ? 3 : 4, row[4];
        int rc;
        index_fixture(&f, idts[t], cap);
        for (j = 0; j < 4; j++)
          row[j] = cases[i].row[j] == BOUND      ? bound
                   : cases[i].row[j] == BOUND_M1 ? bound - 1
                                                 : cases[i].row[j];
        set_row(&f, 1, 1, 0, row);
        rc = fx_run(&f, NULL);
        if (cases[i].rule == INDEX_RULE_NONE) {
          cr_expect(rc == 0, "line %d %s/%s/%s: unexpected error %s", cases[i].line, cases[i].id,
                    dtype_name(idts[t]), cap ? "capacity" : "growing", f.err.message);
        } else {
          cr_expect(rc == -1 && f.err.cls == OP_ERR_INDEX && f.err.rule == cases[i].rule &&
                        f.err.batch == 1 && f.err.head == 1 && f.err.query == 0 &&
                        f.err.column == cases[i].column && f.err.input == -1 && f.err.axis == -1,
                    "line %d %s/%s/%s: got rc %d cls %d %s at [%lld,%lld,%lld,%lld]", cases[i].line,
                    cases[i].id, dtype_name(idts[t]), cap ? "capacity" : "growing", rc, f.err.cls,
                    index_rule_name(f.err.rule), f.err.batch, f.err.head, f.err.query, f.err.column);
          /* outputs untouched on error */
          cr_expect(((const uint32_t *)f.t_out[0].data)[0] == 0xa5a5a5a5u, "line %d: Y written on error",
                    cases[i].line);
        }
        fx_free(&f);
      }
}

/* Capacity bounds are per batch: 5 is legal in batch 0 (bound 6), not in batch 1 (bound 3). */
Test(index_share_indices, capacity_bound_is_per_batch) {
  static const long long row[4] = {0, 3, 5, -1};
  fixture f;
  index_fixture(&f, DTYPE_I32, 1);
  set_row(&f, 0, 1, 1, row);
  cr_expect(fx_run(&f, NULL) == 0, "%s", f.err.message);
  set_row(&f, 1, 0, 1, row);
  cr_expect(fx_run(&f, NULL) == -1 && f.err.rule == INDEX_RULE_OUT_OF_RANGE && f.err.batch == 1 &&
            f.err.head == 0 && f.err.query == 1 && f.err.column == 1);
  fx_free(&f);
  index_fixture(&f, DTYPE_I32, 0); /* growing: bound 4 everywhere */
  set_row(&f, 0, 1, 1, row);
  cr_expect(fx_run(&f, NULL) == -1 && f.err.rule == INDEX_RULE_OUT_OF_RANGE && f.err.batch == 0 &&
            f.err.column == 2);
  fx_free(&f);
}

/* Rows are scanned in (batch, index head, query) order; i64 is not truncated. */
Test(index_share_indices, first_row_in_order_and_wide_i64) {
  static const long long dup[4] = {1, 1, -1, -1}, pad[4] = {-1, -1, -1, -1};
  long long wide[4] = {0, 1LL << 32, -1, -1};
  fixture f;
  index_fixture(&f, DTYPE_I64, 0);
  set_row(&f, 1, 0, 0, dup);
  set_row(&f, 0, 1, 1, pad);
  cr_expect(fx_run(&f, NULL) == -1 && f.err.rule == INDEX_RULE_ALL_PADDING && f.err.batch == 0 &&
            f.err.head == 1 && f.err.query == 1 && f.err.column == -1);
  set_row(&f, 0, 1, 1, wide); /* 2^32 would read as 0 if truncated to 32 bits */
  cr_expect(fx_run(&f, NULL) == -1 && f.err.rule == INDEX_RULE_OUT_OF_RANGE && f.err.batch == 0 &&
            f.err.column == 1);
  fx_free(&f);
}

/* ---- contracts ------------------------------------------------------------- */

enum mutation {
  M_NONE,
  M_CAPACITY,
  M_NUM_HEADS,
  M_KV_NEG,
  M_GROUP,
  M_SCALE_NAN,
  M_SCALE_ZERO,
  M_SCALE_INF,
  M_ATTR_AND_ARITY,
  M_IN5,
  M_IN8,
  M_OUT2,
  M_NO_VALUE,
  M_INDICES_NONE,
  M_NO_PAST_VALUE,
  M_NO_PAST_KEY,
  M_QUERY_I32,
  M_KEY_F16,
  M_PAST_VALUE_BF16,
  M_BIAS_BF16,
  M_INDICES_F32,
  M_OUT2_F16,
  M_RANK_INDICES,
  M_RANK_PAST_VALUE,
  M_NEG_DIM,
  M_QUERY_HEADS,
  M_VALUE_BATCH,
  M_KEY_HEADS,
  M_VALUE_SEQ,
  M_KEY_HEAD_SIZE,
  M_PAST_MISMATCH,
  M_PAST_HEADS,
  M_INDICES_HEADS,
  M_INDICES_SEQ,
  M_INDICES_K0,
  M_Y_SHAPE,
  M_Y_RANK,
  M_PRESENT_NEITHER,
  M_PRESENT_MIXED,
  M_CAPACITY_NO_PAST,
  M_BIAS_RANK5,
  M_BIAS_BROADCAST,
  M_BIAS_GROWING_ON_CAPACITY,
  M_CAPACITY_NO_BIAS
};

/* Baseline: B 2, N 4, Nkv 2, Sq 3, Sc 2, Sp 3, H 4, IH 4, K 3, growing 3 outputs, bias [1, 4, 3, 5]. */
static void mutate(fixture *f, int m) {
  tensor *in = f->t_in, *out = f->t_out;
  switch (m) {
  case M_CAPACITY: out[1].shape[2] = out[2].shape[2] = 3, in[6].shape[3] = 3; break;
  case M_NUM_HEADS: f->a.num_heads = 0; break;
  case M_KV_NEG: f->a.kv_num_heads = -2; break;
  case M_GROUP: f->a.kv_num_heads = 3; break;
  case M_SCALE_NAN: f->a.has_scale = 1, f->a.scale = NAN; break;
  case M_SCALE_ZERO: f->a.has_scale = 1, f->a.scale = 0.0f; break;
  case M_SCALE_INF: f->a.has_scale = 1, f->a.scale = INFINITY; break;
  case M_ATTR_AND_ARITY: f->a.num_heads = -1, f->n_in = 5; break;
  case M_IN5: f->n_in = 5; break;
  case M_IN8: f->n_in = 8; break;
  case M_OUT2: f->n_out = 2; break;
  case M_NO_VALUE: f->in[IS_IN_VALUE] = NULL; break;
  case M_INDICES_NONE: in[IS_IN_INDICES].dt = DTYPE_NONE; break;
  case M_NO_PAST_VALUE: f->in[IS_IN_PAST_VALUE] = NULL; break;
  case M_NO_PAST_KEY: in[IS_IN_PAST_KEY].dt = DTYPE_NONE; break;
  case M_QUERY_I32: in[IS_IN_QUERY].dt = DTYPE_I32; break;
  case M_KEY_F16: in[IS_IN_KEY].dt = DTYPE_F16; break;
  case M_PAST_VALUE_BF16: in[IS_IN_PAST_VALUE].dt = DTYPE_BF16; break;
  case M_BIAS_BF16: in[IS_IN_BIAS].dt = DTYPE_BF16; break;
  case M_INDICES_F32: in[IS_IN_INDICES].dt = DTYPE_F32; break;
  case M_OUT2_F16: out[2].dt = DTYPE_F16; break;
  case M_RANK_INDICES: in[IS_IN_INDICES].rank = 3; break;
  case M_RANK_PAST_VALUE: in[IS_IN_PAST_VALUE].rank = 5; break;
  case M_NEG_DIM: in[IS_IN_KEY].shape[2] = -1; break;
  case M_QUERY_HEADS: in[IS_IN_QUERY].shape[1] = 2; break;
  case M_VALUE_BATCH: in[IS_IN_VALUE].shape[0] = 1; break;
  case M_KEY_HEADS: in[IS_IN_KEY].shape[1] = 4; break;
  case M_VALUE_SEQ: in[IS_IN_VALUE].shape[2] = 3; break;
  case M_KEY_HEAD_SIZE: in[IS_IN_KEY].shape[3] = 2; break;
  case M_PAST_MISMATCH: in[IS_IN_PAST_VALUE].shape[2] = 4; break;
  case M_PAST_HEADS: in[IS_IN_PAST_KEY].shape[1] = in[IS_IN_PAST_VALUE].shape[1] = 1; break;
  case M_INDICES_HEADS: in[IS_IN_INDICES].shape[1] = 2; break;
  case M_INDICES_SEQ: in[IS_IN_INDICES].shape[2] = 1; break;
  case M_INDICES_K0: in[IS_IN_INDICES].shape[3] = 0; break;
  case M_Y_SHAPE: out[0].shape[3] = 5; break;
  case M_Y_RANK: out[0].rank = 3; break;
  case M_PRESENT_NEITHER: out[1].shape[2] = 4; break;
  case M_PRESENT_MIXED: out[2].shape[2] = 3; break;
  case M_CAPACITY_NO_PAST:
    f->in[IS_IN_PAST_KEY] = f->in[IS_IN_PAST_VALUE] = NULL, out[1].shape[2] = out[2].shape[2] = 0;
    break;
  case M_BIAS_RANK5: in[IS_IN_BIAS].rank = 5; break;
  case M_BIAS_BROADCAST: in[IS_IN_BIAS].shape[2] = 2; break;
  case M_BIAS_GROWING_ON_CAPACITY: out[1].shape[2] = out[2].shape[2] = 3; break;
  case M_CAPACITY_NO_BIAS: out[1].shape[2] = out[2].shape[2] = 3, f->n_in = 6; break;
  default: break;
  }
}

Test(index_share_contract, violations_name_code_input_axis) {
  static const struct {
    const char *id;
    int mutation, code, input, axis, line;
  } cases[] = {
      {"ok.growing", M_NONE, IS_CONTRACT_NONE, -1, -1, __LINE__},
      {"ok.capacity", M_CAPACITY, IS_CONTRACT_NONE, -1, -1, __LINE__},
      {"attr.num_heads", M_NUM_HEADS, IS_CONTRACT_NUM_HEADS, -1, -1, __LINE__},
      {"attr.kv_negative", M_KV_NEG, IS_CONTRACT_KV_NUM_HEADS, -1, -1, __LINE__},
      {"attr.group", M_GROUP, IS_CONTRACT_HEAD_GROUP, -1, -1, __LINE__},
      {"attr.scale_nan", M_SCALE_NAN, IS_CONTRACT_SCALE, -1, -1, __LINE__},
      {"attr.scale_zero", M_SCALE_ZERO, IS_CONTRACT_SCALE, -1, -1, __LINE__},
      {"attr.scale_inf", M_SCALE_INF, IS_CONTRACT_SCALE, -1, -1, __LINE__},
      {"order.attr_before_arity", M_ATTR_AND_ARITY, IS_CONTRACT_NUM_HEADS, -1, -1, __LINE__},
      {"arity.inputs5", M_IN5, IS_CONTRACT_ARITY_INPUTS, -1, -1, __LINE__},
      {"arity.inputs8", M_IN8, IS_CONTRACT_ARITY_INPUTS, -1, -1, __LINE__},
      {"arity.outputs2", M_OUT2, IS_CONTRACT_ARITY_OUTPUTS, -1, -1, __LINE__},
      {"required.value_null", M_NO_VALUE, IS_CONTRACT_REQUIRED_INPUT, 2, -1, __LINE__},
      {"required.indices_none", M_INDICES_NONE, IS_CONTRACT_REQUIRED_INPUT, 5, -1, __LINE__},
      {"past.value_absent", M_NO_PAST_VALUE, IS_CONTRACT_PAST_PAIR, 4, -1, __LINE__},
      {"past.key_absent", M_NO_PAST_KEY, IS_CONTRACT_PAST_PAIR, 3, -1, __LINE__},
      {"dtype.query_i32", M_QUERY_I32, IS_CONTRACT_QUERY_DTYPE, 0, -1, __LINE__},
      {"dtype.key_f16", M_KEY_F16, IS_CONTRACT_DTYPE_MISMATCH, 1, -1, __LINE__},
      {"dtype.past_value_bf16", M_PAST_VALUE_BF16, IS_CONTRACT_DTYPE_MISMATCH, 4, -1, __LINE__},
      {"dtype.bias_bf16", M_BIAS_BF16, IS_CONTRACT_DTYPE_MISMATCH, 6, -1, __LINE__},
      {"dtype.indices_f32", M_INDICES_F32, IS_CONTRACT_INDEX_DTYPE, 5, -1, __LINE__},
      {"dtype.output2_f16", M_OUT2_F16, IS_CONTRACT_OUTPUT_DTYPE, 102, -1, __LINE__},
      {"rank.indices", M_RANK_INDICES, IS_CONTRACT_RANK, 5, -1, __LINE__},
      {"rank.past_value", M_RANK_PAST_VALUE, IS_CONTRACT_RANK, 4, -1, __LINE__},
      {"dim.negative", M_NEG_DIM, IS_CONTRACT_NEGATIVE_DIM, 1, 2, __LINE__},
      {"shape.query_heads", M_QUERY_HEADS, IS_CONTRACT_QUERY_HEADS, 0, 1, __LINE__},
      {"shape.value_batch", M_VALUE_BATCH, IS_CONTRACT_KV_BATCH, 2, 0, __LINE__},
      {"shape.key_heads", M_KEY_HEADS, IS_CONTRACT_KV_HEADS, 1, 1, __LINE__},
      {"shape.value_seq", M_VALUE_SEQ, IS_CONTRACT_KV_SEQ, 2, 2, __LINE__},
      {"shape.key_head_size", M_KEY_HEAD_SIZE, IS_CONTRACT_KV_HEAD_SIZE, 1, 3, __LINE__},
      {"past.shapes_differ", M_PAST_MISMATCH, IS_CONTRACT_PAST_MISMATCH, 4, 2, __LINE__},
      {"past.heads", M_PAST_HEADS, IS_CONTRACT_PAST_SHAPE, 3, 1, __LINE__},
      {"indices.heads", M_INDICES_HEADS, IS_CONTRACT_INDICES_SHAPE, 5, 1, __LINE__},
      {"indices.seq", M_INDICES_SEQ, IS_CONTRACT_INDICES_SHAPE, 5, 2, __LINE__},
      {"indices.k_zero", M_INDICES_K0, IS_CONTRACT_INDICES_WIDTH, 5, 3, __LINE__},
      {"y.shape", M_Y_SHAPE, IS_CONTRACT_OUTPUT_SHAPE, 100, 3, __LINE__},
      {"y.rank", M_Y_RANK, IS_CONTRACT_OUTPUT_SHAPE, 100, -1, __LINE__},
      {"present.neither", M_PRESENT_NEITHER, IS_CONTRACT_PRESENT_SHAPE, 101, 2, __LINE__},
      {"present.mixed", M_PRESENT_MIXED, IS_CONTRACT_PRESENT_SHAPE, 102, 2, __LINE__},
      {"present.capacity_without_past", M_CAPACITY_NO_PAST, IS_CONTRACT_PRESENT_SHAPE, 101, 2, __LINE__},
      {"bias.rank5", M_BIAS_RANK5, IS_CONTRACT_BIAS_RANK, 6, -1, __LINE__},
      {"bias.broadcast", M_BIAS_BROADCAST, IS_CONTRACT_BIAS_BROADCAST, 6, 2, __LINE__},
      {"bias.growing_width_on_capacity", M_BIAS_GROWING_ON_CAPACITY, IS_CONTRACT_BIAS_BROADCAST, 6, 3,
       __LINE__},
      {"capacity.needs_bias", M_CAPACITY_NO_BIAS, IS_CONTRACT_CAPACITY_BIAS, 6, -1, __LINE__},
  };
  geometry g = {DTYPE_F32, DTYPE_I32, 2, 4, 2, 3, 2, 3, 4, 4, 3, 3, 0, 4, {1, 4, 3, 5}};
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fixture f;
    index_share_dims d;
    int rc;
    fx_init(&f, &g);
    mutate(&f, cases[i].mutation);
    rc = index_share_validate(&f.a, f.in, f.n_in, (const tensor *const *)f.out, f.n_out, &d, &f.err);
    cr_expect(rc == (cases[i].code ? -1 : 0) && f.err.cls == (cases[i].code ? OP_ERR_CONTRACT : OP_OK) &&
                  f.err.rule == cases[i].code && f.err.input == cases[i].input && f.err.axis == cases[i].axis,
              "line %d %s: got rc %d rule %s input %d axis %d (%s); want %s input %d axis %d", cases[i].line,
              cases[i].id, rc, index_share_contract_name(f.err.rule), f.err.input, f.err.axis, f.err.message,
              index_share_contract_name(cases[i].code), cases[i].input, cases[i].axis);
    if (!rc) cr_expect(d.capacity_mode == (cases[i].mutation == M_CAPACITY), "line %d: mode", cases[i].line);
    f.n_in = 7;
    fx_free(&f);
  }
}

/* Each code has a distinct name: report tables key on them. */
Test(index_share_contract, code_names_are_distinct) {
  int i, j;
  for (i = 0; i < IS_CONTRACT_COUNT; i++)
    for (j = i + 1; j < IS_CONTRACT_COUNT; j++)
      cr_expect(strcmp(index_share_contract_name(i), index_share_contract_name(j)) != 0, "codes %d and %d", i,
                j);
  cr_expect(strcmp(index_share_contract_name(IS_CONTRACT_COUNT), "?") == 0);
}
