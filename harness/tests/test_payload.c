/*
** test_payload.c: the stage-payload hook of the lanes (golden boundaries):
** a ratio-128 chain hands over its three oracle stages at every step, with
** the shapes the stages have.
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
