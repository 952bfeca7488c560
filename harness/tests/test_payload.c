/*
** test_payload.c: the stage-payload hook of the lanes (golden boundaries):
** a ratio-128 chain hands over its three oracle stages at every step, a
** ratio-4 chain its seven, in pipeline order, with the shapes the stages have;
** the compression stages only at steps that emit a record, holding only the
** emitted records (not the whole cache capacity).
*/
#include "harness/case_runner.h"
#include "harness/run_csa_chain.h"
#include "oracle/tensor.h"

#include <criterion/criterion.h>
#include <string.h>

typedef struct seen {
  int calls, per_stage[3], last_step;
  long long records_rows, score_cols;
} seen;

static void sink(void *ctx, const char *case_id, int step, const char *stage, const char *source,
                 const tensor *payload) {
  seen *s = ctx;
  cr_assert_str_eq(source, "oracle");
  cr_assert(strncmp(case_id, "csa128.chain.", 13) == 0);
  s->calls++;
  s->last_step = step;
  if (!strcmp(stage, "CompressionUpdate")) s->per_stage[0]++, s->records_rows = payload->shape[1];
  else if (!strcmp(stage, "CandidateAssembly")) s->per_stage[1]++, s->score_cols = payload->shape[3];
  else if (!strcmp(stage, "SparseSinkSoftmaxAttention")) s->per_stage[2]++;
  else cr_assert_fail("unexpected stage %s", stage);
  cr_assert_eq(payload->dt, DTYPE_F32);
}

Test(payload, csa128_chain_hands_over_every_stage_of_every_step) {
  static case_report report;
  const char *spec = "family=csa128.chain op=CompressedSparseAttention ratio=128 cache=fp8 b=2 heads=1 window=128 "
                     "start=0 prefill=129 decode=3 cap=2 bias=none sink=zero scale=none seed=7";
  runner_env env;
  seen s;
  memset(&env, 0, sizeof env);
  memset(&s, 0, sizeof s);
  env.lanes = LANE_BIT(LANE_ORACLE);
  env.payload = sink;
  env.payload_ctx = &s;
  cr_assert_eq(case_run(&env, "csa128.chain.00000000", spec, &report), 0);
  cr_assert_eq(report.failed, 0, "%s", report.n ? report.rows[0].message : "");
  /* only the prefill (129 tokens from 0) finishes a record: record 0 */
  cr_expect_eq(s.calls, 4 * 2 + 1, "4 steps x 2 stages, CompressionUpdate once");
  cr_expect(s.per_stage[0] == 1 && s.per_stage[1] == 4 && s.per_stage[2] == 4);
  cr_expect_eq(s.last_step, 3);
  cr_expect_eq(s.records_rows, 1, "records payload holds the emitted record, not the capacity (2)");
  cr_expect_eq(s.score_cols, 128 + 2, "candidate axis is window + capacity");
}

/* ---- ratio 4: seven oracle stages a step, shaped as csa4_trace says -------- */

static const char *const csa4_stages[7] = {"CompressionUpdate", "IndexKeyUpdate", "IndexQueryFinalize", "IndexScoring",
                                           "Selection", "CandidateAssembly", "SparseSinkSoftmaxAttention"};

typedef struct seen4 {
  int calls, per_stage[7], order_ok, last_stage, last_step;
  tensor shape[7]; /* the last payload's metadata per stage */
} seen4;

static void sink4(void *ctx, const char *case_id, int step, const char *stage, const char *source,
                  const tensor *payload) {
  seen4 *s = ctx;
  int i;
  cr_assert_str_eq(source, "oracle");
  cr_assert(strncmp(case_id, "csa4.chain.", 11) == 0);
  for (i = 0; i < 7 && strcmp(stage, csa4_stages[i]); i++) {}
  cr_assert(i < 7, "unexpected stage %s", stage);
  if (step == s->last_step ? i <= s->last_stage : step != s->last_step + 1) s->order_ok = 0; /* pipeline order */
  s->last_stage = i;
  s->last_step = step;
  s->calls++;
  s->per_stage[i]++;
  s->shape[i] = *payload;
  s->shape[i].data = NULL;
}

Test(payload, csa4_chain_hands_over_seven_stages_in_pipeline_order) {
  static case_report report;
  const char *spec = "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=3 iheads=4 topk=7 window=128 "
                     "start=0 prefill=5 decode=3 cap=3 outputs=6 bias=none sink=zero scale=none seed=7";
  /* the last payload of each stage; the compression stages' is step 3's record 1 */
  static const long long want[7][4] = {{2, 1, 512, 0}, {2, 1, 128, 0}, {2, 1, 4, 128}, {2, 1, 3, 0},
                                       {2, 1, 7, 0},   {2, 1, 3, 135}, {2, 1, 3, 512}};
  runner_env env;
  seen4 s;
  int i, d;
  memset(&env, 0, sizeof env);
  memset(&s, 0, sizeof s);
  s.order_ok = 1;
  s.last_stage = 6;
  s.last_step = -1;
  env.lanes = LANE_BIT(LANE_ORACLE);
  env.payload = sink4;
  env.payload_ctx = &s;
  cr_assert_eq(case_run(&env, "csa4.chain.00000000", spec, &report), 0);
  cr_assert_eq(report.failed, 0, "%s", report.n ? report.rows[0].message : "");
  /* records finish at step 0 (positions 0..4: record 0) and step 3 (position 7: record 1) */
  cr_expect_eq(s.calls, 4 * 5 + 2 * 2, "4 steps x 5 stages, the 2 compression stages at 2 steps");
  cr_expect(s.order_ok, "stages come in pipeline order");
  for (i = 0; i < 7; i++) {
    cr_expect_eq(s.per_stage[i], i < 2 ? 2 : 4, "%s", csa4_stages[i]);
    cr_expect_eq(s.shape[i].dt, i == 4 ? DTYPE_I32 : DTYPE_F32, "%s", csa4_stages[i]);
    for (d = 0; d < s.shape[i].rank; d++)
      cr_expect_eq(s.shape[i].shape[d], want[i][d], "%s axis %d (last step, S = 1)", csa4_stages[i], d);
  }
}

/* ---- the cut itself ----------------------------------------------------------- */

Test(payload, keep_rows_keeps_the_emitted_records_of_every_batch_row) {
  tensor t;
  float *v;
  int b, r, d;
  cr_assert_eq(csa_chain_payload_alloc(&t, DTYPE_F32, 3, 2, 4, 3, 0), 0);
  v = t.data;
  for (b = 0; b < 2; b++)
    for (r = 0; r < 4; r++)
      for (d = 0; d < 3; d++) v[(b * 4 + r) * 3 + d] = (float)(100 * b + 10 * r + d);
  csa_chain_payload_keep_rows(&t, 1, 3);
  cr_assert_eq(t.dt, DTYPE_F32);
  cr_assert(t.rank == 3 && t.shape[0] == 2 && t.shape[1] == 2 && t.shape[2] == 3);
  v = t.data;
  for (b = 0; b < 2; b++)
    for (r = 0; r < 2; r++)
      for (d = 0; d < 3; d++)
        cr_expect_eq(v[(b * 2 + r) * 3 + d], (float)(100 * b + 10 * (r + 1) + d), "b %d row %d dim %d", b, r, d);
  csa_chain_payload_keep_rows(&t, 5, 9); /* past the capacity: nothing emitted */
  cr_expect_eq(t.dt, DTYPE_NONE);
  cr_expect_null(t.data);
  tensor_free(&t);
}
