/*
** test_index_share_stages.c: IndexShare's device stage payloads and stage
** localisation on a GPU (harness/run_index_share.c, device/index_share_device.h).
**
** payloads    specs of every family that accepts inputs (is.valid, is.bias,
**             is.capfront, is.masked, is.numeric: f32/f16/bf16, i32/i64,
**             1 or 3 outputs, growing and capacity, 1 or N index heads) run
**             in the eager lane with a payload sink: the device hands over
**             PresentKey, PresentValue, Scores, Probabilities, Y for step 0,
**             in that order, each byte-identical to the oracle's (same
**             dtype and shape; unused columns +0 on both sides), and the row
**             passes.  A step the oracle rejects gets no payload from either.
** stage_copy  the launcher's debug API directly: Scores needs the trace;
**             after run_present only the presents are readable; run_rows on
**             the oracle's present gives the oracle's Scores..Y; a fed
**             present of the wrong size is refused; stage runs refuse to be
**             captured.
** localise-*  a bug planted in one stage of index_share.cu (BITGATE_PLANT,
**             read once per process: Criterion runs each test in its own)
**             fails the case; every mismatch row of the eager and capture
**             lanes names the planted stage in row->stage, also where the
**             row's own first differing tensor is a later one (the capture
**             lane compares outputs only, Y first).
** Without a GPU every test skips ("skipped: no GPU") and the binary exits 77.
*/
#include "cases/index_share_cases.h"
#include "device/index_share_device.h"
#include "device/kernel_sources.h"
#include "device/tests/gpu_test_support.h"
#include "harness/case_runner.h"
#include "harness/device_io.h"
#include "harness/diff.h"

#include "harness/tests/kernel_plants.h"
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* f16, 3 outputs, growing, past 17, bias: the header's example. */
static const char spec_grow3[] =
    "family=is.valid op=IndexShare dtype=f16 idx=i32 b=2 n=4 nkv=2 sq=1 sc=1 sp=17 h=32 ih=1 k=8 out=3 "
    "present=grow vlen=none bias=2x1x1x18 scale=none seed=7 steps=4";
/* bf16, 1 output (the present lives in pooled scratch), i64, N index heads. */
static const char spec_grow1[] =
    "family=is.valid op=IndexShare dtype=bf16 idx=i64 b=2 n=2 nkv=none sq=2 sc=2 sp=5 h=8 ih=2 k=9 out=1 "
    "present=grow vlen=none bias=none scale=none seed=5 steps=3";
/* bf16, fixed capacity, non-finite bias tail and specials inside. */
static const char spec_cap[] =
    "family=is.capfront op=IndexShare dtype=bf16 idx=i64 b=3 n=2 nkv=none sq=2 sc=2 sp=12 h=16 ih=2 k=6 out=3 "
    "present=cap vlen=4,5,12 bias=3x1x2x12 scale=0x1p-2 gaps=2 tail=nan inner=posinf seed=99 steps=4";

/* ---- payloads --------------------------------------------------------------------- */

typedef struct collected {
  tensor got[2][DEVICE_IS_STAGE_COUNT]; /* [0] oracle, [1] device: owned copies of step 0's payloads */
  int n[2], order_ok;
} collected;

static void collect_sink(void *ctx, const char *case_id, int step, const char *stage, const char *source,
                         const tensor *t) {
  collected *c = ctx;
  int src = !strcmp(source, "device"), p;
  (void)case_id;
  if (step != 0) return;
  for (p = 0; p < DEVICE_IS_STAGE_COUNT && strcmp(stage, device_index_share_stage_name(p)); p++) {}
  cr_assert_lt(p, DEVICE_IS_STAGE_COUNT, "unexpected stage %s", stage);
  if (p != c->n[src]) c->order_ok = 0;
  c->n[src]++;
  tensor_free(&c->got[src][p]);
  c->got[src][p] = *t;
  c->got[src][p].data = NULL;
  cr_assert_eq(tensor_alloc(&c->got[src][p]), 0);
  memcpy(c->got[src][p].data, t->data, tensor_bytes(t));
}

/* Runs spec in the eager lane; the device's step-0 payloads must be the oracle's. */
static void expect_device_payloads(device_runtime *rt, const char *spec) {
  static case_report r;
  collected c;
  runner_env env;
  is_case ic;
  char id[64], err[256], text[300];
  int p, i;
  cr_assert_eq(cases_is_parse(spec, &ic, err, sizeof err), 0, "%s: %s", spec, err);
  cr_assert_eq(cases_is_id(&ic, id, sizeof id), 0);
  memset(&c, 0, sizeof c);
  c.order_ok = 1;
  memset(&env, 0, sizeof env);
  env.rt = rt;
  env.lanes = LANE_BIT(LANE_EAGER);
  env.payload = collect_sink;
  env.payload_ctx = &c;
  cr_assert_eq(case_run(&env, id, spec, &r), 0, "%s", id);
  for (i = 0; i < r.n; i++)
    cr_expect(!strcmp(r.rows[i].status, "pass") || !strcmp(r.rows[i].status, "skipped"), "%s %s row: %s %s", id,
              r.rows[i].lane, r.rows[i].status, r.rows[i].message);
  cr_expect(c.n[1] == c.n[0] && (c.n[0] == 0 || c.n[0] == DEVICE_IS_STAGE_COUNT),
            "%s: %d oracle and %d device payloads (want 0 or 5 of each)", id, c.n[0], c.n[1]);
  cr_expect(c.order_ok, "%s: payloads not in pipeline order", id);
  for (p = 0; p < DEVICE_IS_STAGE_COUNT && c.n[1] == DEVICE_IS_STAGE_COUNT; p++) {
    tensor_diff d;
    if (tensor_diff_run(&c.got[0][p], &c.got[1][p], &d)) {
      tensor_diff_describe(&d, device_index_share_stage_name(p), text, sizeof text);
      cr_expect_fail("%s: %s", id, text);
    }
  }
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++) tensor_free(&c.got[0][p]), tensor_free(&c.got[1][p]);
}

static void keep_spec(const char *spec, void *ctx) {
  char(*specs)[IS_CASE_SPEC_MAX] = ctx;
  int i;
  for (i = 0; i < 6 && specs[i][0]; i++) {}
  if (i < 6) snprintf(specs[i], IS_CASE_SPEC_MAX, "%s", spec);
}

Test(index_share_stages, device_payloads_equal_the_oracles) {
  static const char *const families[] = {"is.valid", "is.bias", "is.capfront", "is.masked", "is.numeric"};
  static char specs[6][IS_CASE_SPEC_MAX];
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t f;
  int i;
  expect_device_payloads(rt, spec_grow3);
  expect_device_payloads(rt, spec_grow1);
  expect_device_payloads(rt, spec_cap);
  for (f = 0; f < sizeof families / sizeof families[0]; f++) {
    memset(specs, 0, sizeof specs);
    cr_assert_eq(cases_is_enumerate(families[f], 6, 23, keep_spec, specs), 6, "%s", families[f]);
    for (i = 0; i < 6; i++) expect_device_payloads(rt, specs[i]);
  }
  device_runtime_destroy(rt);
}

/* ---- the launcher's stage API ------------------------------------------------------ */

Test(index_share_stages, stage_copy_and_stage_runs_keep_their_contract) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  tensor in[IS_CASE_MAX_INPUTS], out[IS_OUTPUT_COUNT], got, eager[DEVICE_IS_STAGE_COUNT], half;
  device_index_share *k;
  index_share_attrs attrs;
  device_io io;
  is_case c;
  op_error e;
  char err[512];
  int n_in, n_out, p;
  tensor_diff d;
  cr_assert_eq(cases_is_parse(spec_grow1, &c, err, sizeof err), 0, "%s", err);
  cr_assert_eq(cases_is_materialize(&c, 0, in, &n_in, out, &n_out, &attrs, err, sizeof err), 0, "%s", err);
  cr_assert_eq(device_io_open(&io, rt, in, n_in, out, n_out, err, sizeof err), 0, "%s", err);
  cr_assert_eq(device_index_share_create(rt, &attrs, &k, err, sizeof err), 0, "%s", err);

  /*
  ** trace off: Probabilities and Y; not Scores, nor (one output, growing)
  ** the presents, which the production launch does not build
  */
  cr_assert_eq(device_index_share_execute(k, io.in_p, n_in, io.out_p, n_out, &e), DEVICE_IS_OK, "%s", e.message);
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++) {
    const int readable = p == DEVICE_IS_STAGE_PROBABILITIES || p == DEVICE_IS_STAGE_Y;
    int rc = device_index_share_stage_copy(k, p, &got, err, sizeof err);
    cr_expect_eq(rc == 0, readable, "stage %s untraced: rc %d (%s)", device_index_share_stage_name(p), rc, err);
    if (!readable) {
      cr_expect(strstr(err, "trace") != NULL, "the refusal names the trace: %s", err);
      cr_expect_null(got.data, "a refused stage leaves out empty");
    }
    tensor_free(&got);
  }

  /* trace on: all five, kept as the reference for the stage runs */
  device_index_share_set_trace(k, 1);
  cr_assert_eq(device_index_share_execute(k, io.in_p, n_in, io.out_p, n_out, &e), DEVICE_IS_OK, "%s", e.message);
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++)
    cr_assert_eq(device_index_share_stage_copy(k, p, &eager[p], err, sizeof err), 0, "%s", err);

  /* run_present: only the presents are readable, and they are the eager pass's */
  GPU_RT_OK(rt, device_index_share_scratch_fill(k, DEVICE_JUNK_BYTE));
  cr_assert_eq(device_index_share_run_present(k, io.in_p, n_in, io.out_p, n_out, &e), DEVICE_IS_OK, "%s", e.message);
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++) {
    int rc = device_index_share_stage_copy(k, p, &got, err, sizeof err);
    cr_expect_eq(rc != 0, p > DEVICE_IS_STAGE_PRESENT_VALUE, "stage %s after run_present: rc %d (%s)",
                 device_index_share_stage_name(p), rc, err);
    if (rc == 0) cr_expect_eq(tensor_diff_run(&eager[p], &got, &d), 0, "%s", device_index_share_stage_name(p));
    tensor_free(&got);
  }

  /* run_rows on the eager pass's own present reproduces Scores, Probabilities, Y */
  GPU_RT_OK(rt, device_index_share_scratch_fill(k, DEVICE_JUNK_BYTE));
  GPU_RT_OK(rt, device_io_junk_outputs(&io));
  cr_assert_eq(device_index_share_run_rows(k, io.in_p, n_in, io.out_p, n_out, &eager[0], &eager[1], &e),
               DEVICE_IS_OK, "%s", e.message);
  for (p = DEVICE_IS_STAGE_SCORES; p < DEVICE_IS_STAGE_COUNT; p++) {
    cr_assert_eq(device_index_share_stage_copy(k, p, &got, err, sizeof err), 0, "%s", err);
    cr_expect_eq(tensor_diff_run(&eager[p], &got, &d), 0, "%s after run_rows", device_index_share_stage_name(p));
    tensor_free(&got);
  }

  /* a fed present of the wrong size is refused before anything runs */
  half = eager[0];
  half.shape[2] -= 1;
  cr_expect_eq(device_index_share_run_rows(k, io.in_p, n_in, io.out_p, n_out, &half, &eager[1], &e),
               DEVICE_IS_FAILED);
  cr_expect(strstr(e.message, "fed present") != NULL, "%s", e.message);

  /* stage runs are eager only */
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  cr_expect_eq(device_index_share_run_present(k, io.in_p, n_in, io.out_p, n_out, &e), DEVICE_IS_FAILED);
  gpu_test_capture_end_any(rt);

  cr_expect_eq(device_index_share_scratch_check(k, err, sizeof err), 0, "%s", err);
  cr_expect_eq(device_io_check(&io, err, sizeof err), 0, "%s", err);
  for (p = 0; p < DEVICE_IS_STAGE_COUNT; p++) tensor_free(&eager[p]);
  device_index_share_destroy(k);
  device_io_close(&io);
  cases_is_release(in, out);
  device_runtime_destroy(rt);
}

/* ---- localisation on planted bugs -------------------------------------------------- */

/*
** Runs spec in the eager and capture lanes with the planted bug; every
** mismatch row must name stage.  The eager lane must have one; the capture
** lane must have one when `captured`, and none otherwise (its production
** launch does not run the stage the bug is in).
*/
static void expect_localised_in(const char *plant, const char *spec, const char *stage, int captured) {
  static case_report r;
  runner_env env;
  int i, eager = 0, capture = 0;
  cr_assert_eq(setenv("BITGATE_PLANT", plant, 1), 0);
  memset(&env, 0, sizeof env);
  env.rt = gpu_test_runtime_or_skip();
  cr_assert_null(kernel_plant_error(), "%s", kernel_plant_error());
  cr_assert_not_null(kernel_plant_description(), "the plant was not applied");
  env.lanes = LANE_BIT(LANE_EAGER) | LANE_BIT(LANE_CAPTURE);
  case_run(&env, "is.test.localise", spec, &r);
  cr_assert(r.failed > 0, "the planted bug (%s) must fail the case", plant);
  for (i = 0; i < r.n; i++) {
    const result_row *row = &r.rows[i];
    if (strcmp(row->status, "mismatch")) continue;
    cr_expect_str_eq(row->stage, stage, "%s row step %d (tensor %s): %s", row->lane, row->step, row->tensor,
                     row->message);
    cr_expect(strstr(row->message, "localised: stage ") != NULL, "%s", row->message);
    cr_expect(strstr(row->message, "; repro: bitgate repro is.test.localise") != NULL, "the repro stays last: %s",
              row->message);
    eager |= !strcmp(row->lane, "eager");
    capture |= !strcmp(row->lane, "capture");
  }
  cr_expect(eager, "an eager mismatch row");
  cr_expect_eq(capture, captured, "capture mismatch rows: %d, expected %d", capture, captured);
  device_runtime_destroy(env.rt);
}

static void expect_localised(const char *plant, const char *spec, const char *stage) {
  expect_localised_in(plant, spec, stage, 1);
}


Test(index_share_stages, localise_present_bug_three_outputs) {
  expect_localised(PLANT_IS_PRESENT, spec_grow3, "PresentKey");
}

/*
** The present is pooled scratch there.  The fast rows gather a growing
** present's rows from past and current, so only the traced (eager) launch
** builds it, for its stage payloads; a replay's Y cannot see the bug.
*/
Test(index_share_stages, localise_present_bug_one_output) {
  expect_localised_in(PLANT_IS_PRESENT, spec_grow1, "PresentKey", 0);
}

Test(index_share_stages, localise_score_bug) { /* q.k subtracted: Scores, then everything after */
  expect_localised(PLANT_IS_SCORE, spec_grow3, "Scores");
}

Test(index_share_stages, localise_normalisation_bug) { /* 0.5 / sum: Scores agree, Probabilities do not */
  expect_localised(PLANT_IS_NORMALISATION, spec_cap, "Probabilities");
}

Test(index_share_stages, localise_value_sum_bug) { /* p.v subtracted: only Y */
  expect_localised(PLANT_IS_VALUE_SUM, spec_grow1, "Y");
}
