/*
** test_index_share_payloads.c: IndexShare's stage payloads without a GPU.
**
** payload_mask-N   device_index_share_payload_mask, the one rule both sides
**                  apply to the columns a row does not use: columns at and
**                  after the index row's first -1 become +0 (all of them when
**                  cache_seq is 0); used columns keep their bits, NaN too;
**                  one index row serves every head when index_heads is 1.
** oracle_lane-*    the oracle lane hands PresentKey, PresentValue, Scores,
**                  Probabilities, Y (source "oracle") for every accepted step,
**                  in that order, shaped as index_share_device.h says, with
**                  the rule applied; rejected steps hand over nothing.
*/
#include "cases/index_share_cases.h"
#include "device/index_share_device.h"
#include "harness/case_runner.h"
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define JUNK_BITS 0xa5a5a5a5u

/* ---- the mask rule ---------------------------------------------------------------- */

typedef struct mask_row {
  const char *id;
  long long index_heads, cache_seq;
  long long idx[2][4]; /* index rows for heads 0 and 1 (head 1 unused when index_heads is 1) */
  long long valid[2];  /* expected used columns of output heads 0 and 1 */
} mask_row;

static const mask_row mask_rows[] = {
    {"payload_mask-1", 2, 9, {{0, 3, -1, -1}, {1, 2, 5, 8}}, {2, 4}},
    {"payload_mask-2", 1, 9, {{4, -1, -1, -1}, {0, 0, 0, 0}}, {1, 1}}, /* one row for both heads */
    {"payload_mask-3", 2, 0, {{-1, -1, -1, -1}, {-1, -1, -1, -1}}, {0, 0}},
    {"payload_mask-4", 2, 0, {{0, 1, 2, 3}, {0, 1, 2, 3}}, {0, 0}}, /* an empty cache uses nothing */
    {"payload_mask-5", 2, 9, {{-1, 2, 3, 4}, {7, -1, 2, 3}}, {0, 1}}, /* only the first -1 counts */
};

Test(index_share_payloads, mask_rule_zeroes_exactly_the_unused_columns) {
  size_t t;
  for (t = 0; t < sizeof mask_rows / sizeof mask_rows[0]; t++) {
    const mask_row *m = &mask_rows[t];
    tensor rows = {DTYPE_F32, 4, {1, 2, 1, 4}, NULL}, idx = {DTYPE_I64, 4, {1, m->index_heads, 1, 4}, NULL};
    long long h, s;
    cr_assert_eq(tensor_alloc(&rows), 0);
    cr_assert_eq(tensor_alloc(&idx), 0);
    for (h = 0; h < m->index_heads; h++)
      for (s = 0; s < 4; s++) ((long long *)idx.data)[h * 4 + s] = m->idx[h][s];
    for (s = 0; s < 8; s++) ((float *)rows.data)[s] = nx_f32_from_bits(s == 1 ? 0x7fc00001u : JUNK_BITS);
    device_index_share_payload_mask(&rows, &idx, m->cache_seq);
    for (h = 0; h < 2; h++)
      for (s = 0; s < 4; s++) {
        unsigned bits = nx_f32_bits(((float *)rows.data)[h * 4 + s]);
        unsigned want = s >= m->valid[h] ? 0u : h * 4 + s == 1 ? 0x7fc00001u : JUNK_BITS;
        cr_expect_eq(bits, want, "%s: head %lld column %lld is 0x%08x, want 0x%08x", m->id, h, s, bits, want);
      }
    tensor_free(&rows);
    tensor_free(&idx);
  }
}

/* ---- the oracle lane's payloads ------------------------------------------------------ */

static const char *const stage_order[DEVICE_IS_STAGE_COUNT] = {"PresentKey", "PresentValue", "Scores",
                                                               "Probabilities", "Y"};

typedef struct counted {
  int calls, per_step[IS_CASE_MAX_STEPS], next_stage, order_ok;
  tensor meta[DEVICE_IS_STAGE_COUNT]; /* the last payload's dtype and shape per stage */
  long long nonzero_unused;           /* Scores/Probabilities values past a row's first -1 */
  long long masked_rows, masked_bad;  /* all-masked rows seen; their probabilities not +0 */
  tensor indices[IS_CASE_MAX_STEPS];
  tensor scores; /* the step's Scores, for the masked-row check of its Probabilities */
} counted;

/* Columns row r of a [B, N, Sq, K] payload uses: those before its index row's first -1. */
static long long used_columns(const tensor *ix, const tensor *t, long long r) {
  long long b = r / (t->shape[1] * t->shape[2]), h = r / t->shape[2] % t->shape[1], q = r % t->shape[2];
  long long width = t->shape[3], irow = ((b * ix->shape[1] + (ix->shape[1] == 1 ? 0 : h)) * t->shape[2] + q) * width;
  long long used = 0;
  while (used < width && tensor_load_index(ix, irow + used) != -1) used++;
  return used;
}

/*
** Checks a Scores or Probabilities payload: unused columns must be +0; for
** Probabilities, a row whose used scores are all -inf or NaN (the oracle's
** all-masked row) must be +0 throughout.
*/
static void check_rows_payload(counted *k, int step, int stage, const tensor *t) {
  long long r, s, rows = t->shape[0] * t->shape[1] * t->shape[2], width = t->shape[3];
  for (r = 0; r < rows; r++) {
    const float *v = (const float *)t->data + r * width;
    long long used = used_columns(&k->indices[step], t, r);
    int masked = 1;
    for (s = used; s < width; s++) k->nonzero_unused += nx_f32_bits(v[s]) != 0;
    if (stage != DEVICE_IS_STAGE_PROBABILITIES) continue;
    for (s = 0; s < used; s++) {
      float score = ((const float *)k->scores.data)[r * width + s];
      if (score == score && nx_f32_bits(score) != 0xff800000u) masked = 0; /* neither NaN nor -inf */
    }
    if (!masked) continue;
    k->masked_rows++;
    for (s = 0; s < width; s++) k->masked_bad += nx_f32_bits(v[s]) != 0;
  }
}

static void count_sink(void *ctx, const char *case_id, int step, const char *stage, const char *source,
                       const tensor *t) {
  counted *k = ctx;
  int p;
  (void)case_id;
  cr_assert_str_eq(source, "oracle");
  cr_assert(step >= 0 && step < IS_CASE_MAX_STEPS);
  for (p = 0; p < DEVICE_IS_STAGE_COUNT && strcmp(stage, stage_order[p]); p++) {}
  cr_assert_lt(p, DEVICE_IS_STAGE_COUNT, "unexpected stage %s", stage);
  if (p != k->next_stage) k->order_ok = 0;
  k->next_stage = (p + 1) % DEVICE_IS_STAGE_COUNT;
  k->calls++;
  k->per_step[step]++;
  k->meta[p] = *t;
  k->meta[p].data = NULL;
  if (p == DEVICE_IS_STAGE_SCORES) {
    tensor_free(&k->scores);
    k->scores = *t;
    k->scores.data = NULL;
    cr_assert_eq(tensor_alloc(&k->scores), 0);
    memcpy(k->scores.data, t->data, tensor_bytes(t));
  }
  if (p == DEVICE_IS_STAGE_SCORES || p == DEVICE_IS_STAGE_PROBABILITIES) check_rows_payload(k, step, p, t);
}

/* Runs spec's oracle lane with the counting sink; the case's indices are kept for the rule check. */
static void run_counted(const char *spec, is_case *c, counted *k) {
  static case_report r;
  tensor in[IS_CASE_MAX_INPUTS], out[IS_OUTPUT_COUNT];
  index_share_attrs attrs;
  runner_env env;
  char id[64], err[256];
  int step, n_in, n_out;
  cr_assert_eq(cases_is_parse(spec, c, err, sizeof err), 0, "%s: %s", spec, err);
  cr_assert_eq(cases_is_id(c, id, sizeof id), 0);
  memset(k, 0, sizeof *k);
  k->order_ok = 1;
  for (step = 0; step < c->steps; step++) {
    cr_assert_eq(cases_is_materialize(c, step, in, &n_in, out, &n_out, &attrs, err, sizeof err), 0, "%s", err);
    k->indices[step] = in[IS_IN_INDICES];
    in[IS_IN_INDICES].data = NULL; /* kept */
    cases_is_release(in, out);
  }
  memset(&env, 0, sizeof env);
  env.lanes = LANE_BIT(LANE_ORACLE);
  env.payload = count_sink;
  env.payload_ctx = k;
  cr_assert_eq(case_run(&env, id, spec, &r), 0, "%s", id);
  cr_expect_eq(r.failed, 0, "%s: %s", id, r.n ? r.rows[0].message : "no row");
  for (step = 0; step < c->steps; step++) tensor_free(&k->indices[step]);
  tensor_free(&k->scores);
}

static void expect_shape(const tensor *t, dtype dt, long long d0, long long d1, long long d2, long long d3,
                         const char *what) {
  cr_expect_eq(t->dt, dt, "%s: dtype %s", what, dtype_name(t->dt));
  cr_expect(t->rank == 4 && t->shape[0] == d0 && t->shape[1] == d1 && t->shape[2] == d2 && t->shape[3] == d3,
            "%s: shape [%lld,%lld,%lld,%lld], want [%lld,%lld,%lld,%lld]", what, t->shape[0], t->shape[1],
            t->shape[2], t->shape[3], d0, d1, d2, d3);
}

/* Five payloads per step, in order, shaped for c (growing present unless capacity). */
static void expect_five_per_step(const counted *k, const is_case *c) {
  long long kv = c->kv_num_heads ? c->kv_num_heads : c->num_heads;
  long long cache = c->capacity ? c->past_seq : c->past_seq + c->current_seq;
  int step;
  cr_expect_eq(k->calls, DEVICE_IS_STAGE_COUNT * c->steps, "%d payloads for %d steps", k->calls, c->steps);
  for (step = 0; step < c->steps; step++) cr_expect_eq(k->per_step[step], DEVICE_IS_STAGE_COUNT, "step %d", step);
  cr_expect(k->order_ok, "payloads not in pipeline order");
  expect_shape(&k->meta[0], c->dt, c->batch, kv, cache, c->head_size, "PresentKey");
  expect_shape(&k->meta[1], c->dt, c->batch, kv, cache, c->head_size, "PresentValue");
  expect_shape(&k->meta[2], DTYPE_F32, c->batch, c->num_heads, c->q_seq, c->selected_width, "Scores");
  expect_shape(&k->meta[3], DTYPE_F32, c->batch, c->num_heads, c->q_seq, c->selected_width, "Probabilities");
  expect_shape(&k->meta[4], c->dt, c->batch, c->num_heads, c->q_seq, c->head_size, "Y");
  cr_expect_eq(k->nonzero_unused, 0, "%lld unused columns are not +0", k->nonzero_unused);
}

Test(index_share_payloads, oracle_lane_hands_five_payloads_per_step_three_outputs) {
  is_case c;
  counted k;
  run_counted("family=is.valid op=IndexShare dtype=f16 idx=i32 b=2 n=4 nkv=2 sq=1 sc=1 sp=17 h=32 ih=1 k=8 out=3 "
              "present=grow vlen=none bias=2x1x1x18 scale=none seed=7 steps=4",
              &c, &k);
  expect_five_per_step(&k, &c);
}

/* One output: the oracle builds no present, so the lane asks it for the growing one. */
Test(index_share_payloads, oracle_lane_hands_five_payloads_per_step_one_output) {
  is_case c;
  counted k;
  run_counted("family=is.valid op=IndexShare dtype=bf16 idx=i64 b=2 n=2 nkv=none sq=2 sc=2 sp=5 h=8 ih=2 k=9 out=1 "
              "present=grow vlen=none bias=none scale=none seed=5 steps=3",
              &c, &k);
  expect_five_per_step(&k, &c);
}

Test(index_share_payloads, oracle_lane_hands_five_payloads_per_step_capacity) {
  is_case c;
  counted k;
  run_counted("family=is.capfront op=IndexShare dtype=bf16 idx=i64 b=3 n=2 nkv=none sq=2 sc=2 sp=12 h=16 ih=2 k=6 "
              "out=3 present=cap vlen=4,5,12 bias=3x1x2x12 scale=0x1p-2 gaps=2 tail=nan inner=posinf seed=99 steps=4",
              &c, &k);
  expect_five_per_step(&k, &c);
}

/* Every step rejected (a planted violation; a contract error): nothing is handed over. */
Test(index_share_payloads, oracle_lane_hands_nothing_for_rejected_steps) {
  static const char *const specs[] = {
      "family=is.indexviol op=IndexShare dtype=f32 idx=i32 b=2 n=2 nkv=none sq=1 sc=1 sp=6 h=8 ih=1 k=4 out=3 "
      "present=grow vlen=none bias=none scale=none viol=duplicate:1,0,0,1 seed=3 steps=2",
      "family=is.contract op=IndexShare dtype=f32 idx=i64 b=1 n=2 nkv=none sq=1 sc=1 sp=0 h=8 ih=1 k=4 out=1 "
      "present=grow vlen=none bias=none scale=none contract=dtype:key:f16 seed=3 steps=1"};
  size_t i;
  for (i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    is_case c;
    counted k;
    run_counted(specs[i], &c, &k);
    cr_expect_eq(k.calls, 0, "%s: %d payloads", specs[i], k.calls);
  }
}

static void keep_spec(const char *spec, void *ctx) {
  char(*specs)[IS_CASE_SPEC_MAX] = ctx;
  int i;
  for (i = 0; i < 3 && specs[i][0]; i++) {}
  if (i < 3) snprintf(specs[i], IS_CASE_SPEC_MAX, "%s", spec);
}

/* is.masked: an all-masked row's probabilities are +0, the columns it uses included. */
Test(index_share_payloads, masked_rows_have_zero_probabilities) {
  static char specs[3][IS_CASE_SPEC_MAX];
  long long masked = 0;
  int i;
  memset(specs, 0, sizeof specs);
  cr_assert_eq(cases_is_enumerate("is.masked", 3, 17, keep_spec, specs), 3);
  for (i = 0; i < 3; i++) {
    is_case c;
    counted k;
    run_counted(specs[i], &c, &k);
    expect_five_per_step(&k, &c);
    cr_expect_eq(k.masked_bad, 0, "%s: %lld probabilities of masked rows are not +0", specs[i], k.masked_bad);
    masked += k.masked_rows;
  }
  cr_expect_gt(masked, 0, "the is.masked cases had no all-masked row");
}
