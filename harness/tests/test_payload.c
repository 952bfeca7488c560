/*
** test_payload.c: the stage-payload hook of the lanes (golden boundaries):
** a ratio-128 chain hands over its three oracle stages at every step, a
** ratio-4 chain its seven, in pipeline order, with the shapes the stages have.
*/
#include "harness/case_runner.h"
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
  cr_expect_eq(s.calls, 4 * 3, "4 steps x 3 stages");
  cr_expect(s.per_stage[0] == 4 && s.per_stage[1] == 4 && s.per_stage[2] == 4);
  cr_expect_eq(s.last_step, 3);
  cr_expect_eq(s.records_rows, 2, "records payload spans the cache capacity");
  cr_expect_eq(s.score_cols, 128 + 2, "candidate axis is window + capacity");
}

/* ---- ratio 4: seven oracle stages a step, shaped as csa4_trace says -------- */

static const char *const csa4_stages[7] = {"CompressionUpdate", "IndexKeyUpdate", "IndexQueryFinalize", "IndexScoring",
                                           "Selection", "CandidateAssembly", "SparseSinkSoftmaxAttention"};

typedef struct seen4 {
  int calls, per_stage[7], order_ok, last_stage;
  tensor shape[7]; /* the last payload's metadata per stage */
} seen4;

static void sink4(void *ctx, const char *case_id, int step, const char *stage, const char *source,
                  const tensor *payload) {
  seen4 *s = ctx;
  int i;
  (void)step;
  cr_assert_str_eq(source, "oracle");
  cr_assert(strncmp(case_id, "csa4.chain.", 11) == 0);
  for (i = 0; i < 7 && strcmp(stage, csa4_stages[i]); i++) {}
  cr_assert(i < 7, "unexpected stage %s", stage);
  if (i != (s->last_stage + 1) % 7) s->order_ok = 0; /* pipeline order, every step */
  s->last_stage = i;
  s->calls++;
  s->per_stage[i]++;
  s->shape[i] = *payload;
  s->shape[i].data = NULL;
}

Test(payload, csa4_chain_hands_over_seven_stages_in_pipeline_order) {
  static case_report report;
  const char *spec = "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=3 iheads=4 topk=7 window=128 "
                     "start=0 prefill=5 decode=3 cap=3 outputs=6 bias=none sink=zero scale=none seed=7";
  static const long long want[7][4] = {{2, 3, 512, 0}, {2, 3, 128, 0}, {2, 1, 4, 128}, {2, 1, 3, 0},
                                       {2, 1, 7, 0},   {2, 1, 3, 135}, {2, 1, 3, 512}};
  runner_env env;
  seen4 s;
  int i, d;
  memset(&env, 0, sizeof env);
  memset(&s, 0, sizeof s);
  s.order_ok = 1;
  s.last_stage = 6;
  env.lanes = LANE_BIT(LANE_ORACLE);
  env.payload = sink4;
  env.payload_ctx = &s;
  cr_assert_eq(case_run(&env, "csa4.chain.00000000", spec, &report), 0);
  cr_assert_eq(report.failed, 0, "%s", report.n ? report.rows[0].message : "");
  cr_expect_eq(s.calls, 4 * 7, "4 steps x 7 stages");
  cr_expect(s.order_ok, "stages come in pipeline order");
  for (i = 0; i < 7; i++) {
    cr_expect_eq(s.per_stage[i], 4, "%s", csa4_stages[i]);
    cr_expect_eq(s.shape[i].dt, i == 4 ? DTYPE_I32 : DTYPE_F32, "%s", csa4_stages[i]);
    for (d = 0; d < s.shape[i].rank; d++)
      cr_expect_eq(s.shape[i].shape[d], want[i][d], "%s axis %d (last step, S = 1)", csa4_stages[i], d);
  }
}
