/*
** test_shrink.c: the parts of `bitgate shrink` (issue "Corpus and goldens",
** item 5) one at a time: the signature's kind of difference from a failing
** row, the choice of the first failing row, every family's reducer (each
** candidate canonical, parsed, smaller, couplings carried), csa4's optional
** mag= token, the greedy search against a stand-in probe, and suite gate
** taking in corpus/regressions.  The planted-bug shrink is
** test_shrink_planted.c.
*/
#include "cases/case_spec.h"
#include "cases/csa4_cases.h"
#include "cases/shrink_reduce.h"
#include "harness/case_lookup.h"
#include "harness/shrink.h"
#include "harness/suite.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- signature kinds ----------------------------------------------------- */

#define ROW(status, coords, e, a, ulp, msg) {status, coords, e, a, ulp, msg, __LINE__}
static const struct kind_row {
  const char *status, *coords, *expected_hex, *actual_hex;
  long long ulp;
  const char *message, *kind;
  int line;
} kinds[] = {
#undef ROW
#define ROW(status, coords, e, a, ulp, msg, kind) {status, coords, e, a, ulp, msg, kind, __LINE__}
    ROW("mismatch", "[0,0,0,1]", "0x3f800000", "0x3f800001", 1,
        "step 3: Y: 1 mismatches (nan_equivalent 0); first at offset 1 [0,0,0,1]: expected 0x3f800000 (0x1p+0), got "
        "0x3f800001 (0x1.000002p+0), 1 ulp",
        "value"),
    ROW("mismatch", "[1]", "0x3f800000", "0x7fc00000", -1,
        "Y: 1 mismatches (nan_equivalent 0); first at offset 1 [1]: expected 0x3f800000 (0x1p+0), got 0x7fc00000 (nan)",
        "nan"),
    ROW("mismatch", "[1]", "0xffc00000", "0x00000000", -1,
        "Y: 1 mismatches (nan_equivalent 2); first at offset 1 [1]: expected 0xffc00000 (-nan), got 0x00000000 (0x0p+0)",
        "nan"),
    ROW("mismatch", "[2]", "0x3c00", "0xfc00", 40000,
        "Y: 1 mismatches (nan_equivalent 0); first at offset 2 [2]: expected 0x3c00 (0x1p+0), got 0xfc00 (-inf), 40000 ulp",
        "inf"),
    ROW("mismatch", "[0,0,3]", "0x00000007", "0x00000009", -1,
        "Selection: 1 mismatches (nan_equivalent 0); first at offset 3 [0,0,3]: expected 0x00000007 (7), got 0x00000009 (9)",
        "index"),
    ROW("mismatch", "[0,0]", "0x3f800000", "0xa5a5a5a5", 12345,
        "Y: 1 mismatches (nan_equivalent 0); first at offset 0 [0,0]: expected 0x3f800000 (0x1p+0), got 0xa5a5a5a5 "
        "(-0x1.4b4b4ap-52), 12345 ulp (device value is the junk fill: never written?)",
        "junk"),
    ROW("mismatch", "[0]", "0xa5", "0xa5", -1, "bytes", "index"),
    ROW("mismatch", "shape", "", "", -1, "Y: dtype or shape differs", "shape"),
    ROW("error_parity", "", "", "", -1, "step 0: oracle accepts; device index error", "error_parity"),
    ROW("fail", "", "", "", -1, "step 2: device failure: launch", "fail"),
    ROW("frozen_changed", "", "", "", -1, "frozen oracle changed", "frozen_changed"),
};

Test(shrink, kind_of_each_failing_row) {
  size_t i;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    result_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.status, sizeof row.status, "%s", kinds[i].status);
    snprintf(row.coords, sizeof row.coords, "%s", kinds[i].coords);
    snprintf(row.expected_hex, sizeof row.expected_hex, "%s", kinds[i].expected_hex);
    snprintf(row.actual_hex, sizeof row.actual_hex, "%s", kinds[i].actual_hex);
    snprintf(row.message, sizeof row.message, "%s", kinds[i].message);
    row.ulp_distance = kinds[i].ulp;
    cr_expect_str_eq(shrink_sig_kind(&row), kinds[i].kind, "test_shrink.c:%d", kinds[i].line);
  }
}

Test(shrink, first_failing_row_is_the_lowest_lanes) {
  static case_report r;
  shrink_sig s, t;
  result_row *row;
  char text[200];
  memset(&r, 0, sizeof r);
  case_report_add(&r, LANE_ORACLE, 9, "pass");
  row = case_report_add(&r, LANE_CAPTURE, 2, "mismatch"); /* earlier step, later lane */
  snprintf(row->tensor, sizeof row->tensor, "Y");
  row = case_report_add(&r, LANE_EAGER, 5, "mismatch");
  snprintf(row->tensor, sizeof row->tensor, "IndexScoring");
  snprintf(row->stage, sizeof row->stage, "IndexQueryFinalize"); /* localised */
  row->ulp_distance = 3;
  shrink_sig_of_report(&r, &s);
  shrink_sig_text(&s, text, sizeof text);
  cr_expect_str_eq(text, "eager/IndexQueryFinalize/IndexScoring/value");
  cr_expect_eq(shrink_sig_lanes(&s), LANE_BIT(LANE_EAGER));
  memset(&r, 0, sizeof r);
  case_report_add(&r, LANE_EAGER, 0, "pass");
  shrink_sig_of_report(&r, &t);
  cr_expect(!t.failed && !shrink_sig_equal(&s, &t));
  shrink_sig_text(&t, text, sizeof text);
  cr_expect_str_eq(text, "pass");
}

/* ---- reducers ------------------------------------------------------------ */

/* Every candidate of every knob of spec: canonical, parsed, and different. */
static int check_candidates(const char *spec) {
  const shrink_family *f = shrink_family_of(spec);
  char cand[4096], canon[4096], err[512];
  int k, how, n = 0;
  cr_assert(f, "%s", spec);
  for (k = 0; k < f->n_knobs; k++)
    for (how = 0; how < SHRINK_HOW_COUNT; how++) {
      int rc = shrink_reduce(spec, k, (shrink_how)how, cand, sizeof cand);
      cr_assert(rc == 0 || rc == 1, "%s knob %s: %d", spec, f->knob_names[k], rc);
      if (rc) continue;
      n++;
      cr_assert_eq(case_check_spec(cand, err, sizeof err), 0, "%s: %s", cand, err);
      cr_assert_eq(shrink_canonical(cand, canon, sizeof canon, err, sizeof err), 0, "%s", err);
      cr_assert_str_eq(canon, cand, "candidates are canonical");
      cr_assert_str_neq(cand, spec);
    }
  return n;
}

Test(shrink, every_gate_case_reduces_to_canonical_candidates, .timeout = 120) {
  char dir[4096], err[512];
  suite s;
  int i, n = 0;
  snprintf(dir, sizeof dir, "%s/corpus", BITGATE_SOURCE_DIR);
  cr_assert_eq(suite_load(dir, "gate", &s, err, sizeof err), 0, "%s", err);
  for (i = 0; i < s.count; i++) n += check_candidates(s.specs[i]);
  cr_expect_gt(n, s.count, "%d candidates from %d cases", n, s.count);
  suite_free(&s);
}

static const struct reduce_row {
  const char *spec, *knob;
  shrink_how how;
  const char *want; /* substrings of the candidate, space-separated groups joined by '|' */
  int line;
} reductions[] = {
#define RED(spec, knob, how, want) {spec, knob, how, want, __LINE__}
    RED("family=csa4.chain op=CompressedSparseAttention ratio=4 b=4 heads=2 iheads=2 topk=16 window=128 start=0 "
        "prefill=8 decode=299 cap=80 outputs=6 bias=4x1x1x144 sink=large scale=none seed=7",
        "b", SHRINK_HOW_MIN, " b=1 | bias=1x1x1x144 "),
    RED("family=csa4.chain op=CompressedSparseAttention ratio=4 b=4 heads=2 iheads=2 topk=16 window=128 start=0 "
        "prefill=8 decode=299 cap=80 outputs=6 bias=4x1x1x144 sink=large scale=none seed=7",
        "topk", SHRINK_HOW_HALF, " topk=8 | bias=4x1x1x136 "),
    RED("family=csa4.chain op=CompressedSparseAttention ratio=4 b=4 heads=2 iheads=2 topk=16 window=128 start=0 "
        "prefill=8 decode=299 cap=80 outputs=6 bias=4x1x1x144 sink=large scale=none seed=7",
        "decode", SHRINK_HOW_DEC, " decode=298 | cap=80 "),
    RED("family=csa4.chain op=CompressedSparseAttention ratio=4 b=4 heads=2 iheads=2 topk=16 window=128 start=0 "
        "prefill=8 decode=299 cap=80 outputs=6 bias=4x1x1x144 sink=large scale=none seed=7",
        "mag", SHRINK_HOW_DEC, " scale=none mag=1 seed=7"),
    RED("family=csa4.chain op=CompressedSparseAttention ratio=4 b=4 heads=2 iheads=2 topk=16 window=128 start=0 "
        "prefill=8 decode=299 cap=80 outputs=6 bias=4x1x1x144 sink=large scale=none seed=7",
        "bias", SHRINK_HOW_DEC, " bias=1x1x144 "),
    RED("family=csa128.chain op=CompressedSparseAttention ratio=128 cache=fp8 b=2 heads=1 window=128 start=0 "
        "prefill=129 decode=130 cap=3 bias=1x1x1x131 sink=large scale=none seed=7",
        "cap", SHRINK_HOW_MIN, " cap=2 | bias=1x1x1x130 "),
    RED("family=csa128.chain op=CompressedSparseAttention ratio=128 cache=fp8 b=2 heads=1 window=128 start=0 "
        "prefill=129 decode=130 cap=3 bias=1x1x1x131 sink=large scale=none seed=7",
        "decode", SHRINK_HOW_MIN, " decode=0 "),
    RED("family=is.valid op=IndexShare dtype=f16 idx=i32 b=3 n=1 nkv=none sq=2 sc=2 sp=0 h=8 ih=1 k=32 out=1 "
        "present=grow vlen=none bias=3x1x1x2 scale=0x1.b036cp-1 seed=3344714500 steps=4",
        "b", SHRINK_HOW_MIN, " b=1 | bias=1x1x1x2 "),
    RED("family=is.valid op=IndexShare dtype=f16 idx=i32 b=3 n=1 nkv=none sq=2 sc=2 sp=0 h=8 ih=1 k=32 out=1 "
        "present=grow vlen=none bias=3x1x1x2 scale=0x1.b036cp-1 seed=3344714500 steps=4",
        "steps", SHRINK_HOW_HALF, " steps=2"),
};

static int knob_index(const shrink_family *f, const char *name) {
  int k;
  for (k = 0; k < f->n_knobs; k++)
    if (!strcmp(f->knob_names[k], name)) return k;
  return -1;
}

Test(shrink, reducers_move_one_knob_and_carry_couplings) {
  size_t i;
  for (i = 0; i < sizeof reductions / sizeof reductions[0]; i++) {
    const struct reduce_row *t = &reductions[i];
    const shrink_family *f = shrink_family_of(t->spec);
    char cand[4096], want[256], *part, *save = NULL;
    cr_assert(f && knob_index(f, t->knob) >= 0, "test_shrink.c:%d", t->line);
    cr_assert_eq(shrink_reduce(t->spec, knob_index(f, t->knob), t->how, cand, sizeof cand), 0, "test_shrink.c:%d",
                 t->line);
    snprintf(want, sizeof want, "%s", t->want);
    for (part = strtok_r(want, "|", &save); part; part = strtok_r(NULL, "|", &save))
      cr_expect(strstr(cand, part) != NULL, "test_shrink.c:%d: '%s' not in %s", t->line, part, cand);
  }
}

Test(shrink, reducer_stops_at_the_floor) {
  static const char minimal[] = "family=csa4.chain op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=1 topk=1 "
                                "window=1 start=0 prefill=1 decode=0 cap=0 outputs=5 bias=none sink=zero scale=none "
                                "mag=24 seed=1";
  const shrink_family *f = shrink_family_of(minimal);
  char cand[4096];
  int k, how;
  for (k = 0; k < f->n_knobs; k++)
    for (how = 0; how < SHRINK_HOW_COUNT; how++)
      cr_expect_eq(shrink_reduce(minimal, k, (shrink_how)how, cand, sizeof cand), 1, "%s", f->knob_names[k]);
}

/* mag= is optional: absent keeps the old text and id; present is canonical before seed; 0 is refused. */
Test(shrink, csa4_mag_token_is_optional) {
  static const char plain[] = "family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=1 iheads=4 topk=7 "
                              "window=128 start=0 prefill=5 decode=40 cap=12 outputs=6 bias=1x1x1x135 sink=large "
                              "scale=none seed=7";
  char out[1024], err[256];
  csa4_case c;
  cr_assert_eq(cases_csa4_parse(plain, &c, err, sizeof err), 0, "%s", err);
  cr_assert_eq(c.mag, 0);
  cr_assert_eq(cases_csa4_format(&c, out, sizeof out), 0);
  cr_expect_str_eq(out, plain);
  cr_expect_eq(cases_csa4_parse("family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=1 iheads=4 topk=7 "
                                "window=128 start=0 prefill=5 decode=40 cap=12 outputs=6 bias=none sink=large "
                                "scale=none mag=0 seed=7", &c, err, sizeof err), -1);
  cr_expect(strstr(err, "mag=0") != NULL, "%s", err);
  cr_assert_eq(cases_csa4_parse("seed=7 mag=3 family=csa4.chain op=CompressedSparseAttention ratio=4 b=2 heads=1 "
                                "iheads=4 topk=7 window=128 start=0 prefill=5 decode=40 cap=12 outputs=6 bias=none "
                                "sink=large scale=none", &c, err, sizeof err), 0, "%s", err);
  cr_assert_eq(cases_csa4_format(&c, out, sizeof out), 0);
  cr_expect(strstr(out, " scale=none mag=3 seed=7") != NULL, "%s", out);
}

/* ---- the greedy search ---------------------------------------------------- */

/* A stand-in bug: fails (eager, Y, value) while b >= 2 and decode >= 10; index error when heads >= 3. */
static int fake_probe(void *ctx, const char *id, const char *spec, lane_mask lanes, shrink_sig *out) {
  char v[32];
  long long b, decode, heads;
  (void)id, (void)lanes;
  ++*(int *)ctx;
  memset(out, 0, sizeof *out);
  case_spec_get(spec, "b", v, sizeof v), b = atoll(v);
  case_spec_get(spec, "decode", v, sizeof v), decode = atoll(v);
  case_spec_get(spec, "heads", v, sizeof v), heads = atoll(v);
  if (b < 2 || decode < 10) return 0;
  out->failed = 1;
  snprintf(out->lane, sizeof out->lane, "eager");
  snprintf(out->stage, sizeof out->stage, "Y");
  snprintf(out->tensor, sizeof out->tensor, "Y");
  snprintf(out->kind, sizeof out->kind, "%s", heads >= 3 ? "index" : "value");
  return 0;
}

Test(shrink, greedy_reaches_the_fixpoint_and_respects_max_tries) {
  static const char spec[] = "family=csa4.chain op=CompressedSparseAttention ratio=4 b=4 heads=2 iheads=2 topk=16 "
                             "window=128 start=0 prefill=8 decode=299 cap=80 outputs=6 bias=4x1x1x144 sink=large "
                             "scale=none seed=7";
  static shrink_result r;
  shrink_opts o = {500, LANE_ALL, NULL};
  char err[256];
  int calls = 0;
  cr_assert_eq(shrink_run(spec, fake_probe, &calls, &o, &r, err, sizeof err), SHRINK_OK, "%s", err);
  cr_expect(strstr(r.spec, " b=2 ") && strstr(r.spec, " decode=10 ") && strstr(r.spec, " heads=1 "), "%s", r.spec);
  cr_expect(!r.exhausted && r.tries == calls - 1, "%d tries, %d calls", r.tries, calls);
  cr_expect_lt(r.size_after * 10, r.size_before);
  o.max_tries = 3;
  cr_assert_eq(shrink_run(spec, fake_probe, &calls, &o, &r, err, sizeof err), SHRINK_OK);
  cr_expect(r.exhausted && r.tries == 3);
  cr_expect_eq(shrink_run("family=csa4.chain op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=1 topk=1 "
                          "window=1 start=0 prefill=1 decode=0 cap=0 outputs=5 bias=none sink=zero scale=none seed=1",
                          fake_probe, &calls, &o, &r, err, sizeof err),
               SHRINK_NOT_FAILING);
}

/* ---- corpus/regressions is part of gate ------------------------------------ */

Test(shrink, regressions_join_gate_only) {
  char dir[] = "/tmp/bitgate-regress-XXXXXX", path[256], spec[4096], id[CASE_ID_MAX], got[CASE_ID_MAX], where[128];
  char err[512], cmd[300];
  static const char a[] = "family=csa4.chain op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=1 topk=1 "
                          "window=1 start=0 prefill=1 decode=0 cap=0 outputs=5 bias=none sink=zero scale=none seed=1";
  static const char b[] = "family=csa4.chain op=CompressedSparseAttention ratio=4 b=1 heads=1 iheads=1 topk=1 "
                          "window=1 start=0 prefill=1 decode=0 cap=0 outputs=5 bias=none sink=zero scale=none seed=2";
  FILE *f;
  suite s;
  cr_assert(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/gate.suite", dir);
  cr_assert(f = fopen(path, "w"));
  fprintf(f, "%s\n", a);
  fclose(f);
  cr_assert_eq(suite_load(dir, "gate", &s, err, sizeof err), 0, "%s", err); /* no regressions file yet */
  cr_expect_eq(s.count, 1);
  suite_free(&s);
  snprintf(path, sizeof path, "%s/regressions", dir);
  cr_assert(f = fopen(path, "w"));
  fprintf(f, "# shrunk from x\n%s\n", b);
  fclose(f);
  cr_assert_eq(suite_load(dir, "gate", &s, err, sizeof err), 0, "%s", err);
  cr_expect_eq(s.count, 2);
  cr_expect_str_eq(s.specs[1], b);
  suite_free(&s);
  snprintf(path, sizeof path, "%s/other.suite", dir);
  cr_assert(f = fopen(path, "w"));
  fprintf(f, "%s\n", a);
  fclose(f);
  cr_assert_eq(suite_load(dir, "other", &s, err, sizeof err), 0, "%s", err);
  cr_expect_eq(s.count, 1, "only gate takes the regressions");
  suite_free(&s);
  cr_assert_eq(case_id_from_spec(b, id, sizeof id), 0);
  cr_assert_eq(case_lookup(id, dir, NULL, spec, sizeof spec, got, sizeof got, where, sizeof where, err, sizeof err), 0);
  cr_expect_str_eq(where, "suite gate");
  cr_expect_str_eq(spec, b);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}
