/*
** test_localise.c: stage localisation on the GPU (harness/csa_localise.c).
**
** Each test plants one bug in an embedded kernel (BITGATE_PLANT, read once
** per process: Criterion runs every test in its own process) and runs a
** chain in the eager and capture lanes.  The failing rows must name the
** planted stage in results.stage, also when the row's first differing
** tensor is a later one (the capture lane compares outputs only, so the
** scoring bug first shows in selected_indices or Y there).  Without a GPU
** every test skips (exit 77).
**
** The capture lane starts from the eager chain's state at its capture step,
** so it only runs when eager gets there: the capture test plants a bug that
** first bites at a later step (record 9 exists from 40 tokens on).
*/
#include "device/tests/gpu_test_support.h"
#include "harness/case_runner.h"

#include "harness/tests/kernel_plants.h"
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char csa4_spec[] =
    "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=1 iheads=4 topk=1 window=128 start=0 "
    "prefill=520 decode=40 cap=140 outputs=6 bias=1 sink=rand scale=0x1.8p-4 seed=3953392690";
static const char csa4_late_spec[] =
    "family=csa4.chain op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=4 topk=512 window=16 start=0 "
    "prefill=4 decode=46 cap=14 outputs=6 bias=none sink=neginf scale=none seed=2312490336";
/* a gate case's shape (csa4.chain.6d33eeef): cap=0, so no record exists and the record stages are empty */
static const char csa4_no_records_spec[] =
    "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=4 iheads=8 topk=16 window=100 start=0 "
    "prefill=3 decode=0 cap=0 outputs=6 bias=none sink=large scale=none seed=1135896756";
static const char csa128_spec[] =
    "family=csa128.chain op=CompressedSparseAttention ratio=128 cache=f32 b=2 heads=1 window=128 start=0 "
    "prefill=127 decode=140 cap=5 bias=1x1x1 sink=large scale=none seed=3228420866";

/* Runs spec in the eager and capture lanes with the planted bug; expects both rows localised to stage. */
static void expect_localised(const char *plant, const char *spec, const char *stage, int want_capture) {
  static case_report r;
  runner_env env;
  int i, eager = 0, capture = 0;
  cr_assert_eq(setenv("BITGATE_PLANT", plant, 1), 0);
  memset(&env, 0, sizeof env);
  env.rt = gpu_test_runtime_or_skip();
  env.lanes = LANE_BIT(LANE_EAGER) | LANE_BIT(LANE_CAPTURE);
  case_run(&env, "test.localise", spec, &r);
  cr_assert(r.failed > 0, "the planted bug (%s) must fail the case", plant);
  for (i = 0; i < r.n; i++) {
    const result_row *row = &r.rows[i];
    if (strcmp(row->status, "mismatch")) continue;
    cr_expect_str_eq(row->stage, stage, "%s row (tensor %s): %s", row->lane, row->tensor, row->message);
    cr_expect(strstr(row->message, "localised: stage") != NULL, "%s", row->message);
    cr_expect(strstr(row->message, "; repro: bitgate repro test.localise") != NULL, "the repro stays last: %s",
              row->message);
    eager |= !strcmp(row->lane, "eager");
    capture |= !strcmp(row->lane, "capture");
    if (!strcmp(row->lane, "capture")) /* outputs only there: the stage comes from localisation alone */
      cr_expect_str_neq(row->tensor, stage, "capture compares outputs, not %s", stage);
  }
  cr_expect(eager, "an eager mismatch row");
  if (want_capture) cr_expect(capture, "a capture mismatch row");
  device_runtime_destroy(env.rt);
}

Test(localise, csa4_scoring_bug) {
  expect_localised(PLANT_CSA4_SCORING, csa4_spec, "IndexScoring", 0);
}

Test(localise, csa4_late_scoring_bug_is_named_in_the_capture_lane_too) {
  expect_localised(PLANT_CSA4_LATE_SCORING, csa4_late_spec, "IndexScoring", 1);
}

Test(localise, csa4_query_bug_is_not_blamed_downstream) {
  expect_localised(PLANT_CSA4_QUERY, csa4_spec,
                   "IndexQueryFinalize", 0);
}

/* late spec: up to 14 records for topk 512, so every record is chosen and only the slots' order is wrong */
Test(localise, csa4_selection_order_bug) {
  expect_localised(PLANT_CSA4_SELECTION, csa4_late_spec, "Selection", 0);
}

Test(localise, csa4_candidate_scoring_bug) {
  expect_localised(PLANT_CSA_CANDIDATE_SCORE, csa4_spec,
                   "CandidateAssembly", 0);
}

/*
** With no records the index stages hold no bytes; loading such an empty
** payload used to fail ("could not replay the stages: load failed: ", an
** empty reason), so no stage was named (thirty-sixth session's planted gate).
*/
Test(localise, csa4_bug_in_a_step_without_records) {
  expect_localised(PLANT_CSA_CANDIDATE_SCORE, csa4_no_records_spec, "CandidateAssembly", 0);
}

Test(localise, csa128_compressor_bug) {
  expect_localised(PLANT_CSA128_COMPRESSOR,
                   csa128_spec, "CompressionUpdate", 0);
}

Test(localise, csa128_attention_bug) {
  expect_localised(PLANT_CSA_CANDIDATE_SCORE, csa128_spec,
                   "SparseSinkSoftmaxAttention", 0);
}
