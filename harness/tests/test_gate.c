/*
** test_gate.c: the gate's rules without a GPU (issue 7, items 2 and 3):
** --repeat with a stand-in runner that scripts what each pass reports,
** corpus/known-failures parsing and waiving, and the baseline verdict on a
** small results database made with the store API.
*/
#include "harness/gate.h"
#include "harness/store.h"
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

/* ---- --repeat ---------------------------------------------------------- */

/* What the eager lane reports on one pass; status NULL: no eager row at all. */
typedef struct pass_script {
  const char *status, *actual_hex;
  long long mismatch_count;
} pass_script;

static const pass_script *script;
static int calls, oracle_calls;

/* The stand-in for case_run: an oracle row, an eager row from the script, a passing capture row. */
static int scripted_runner(runner_env *env, const char *case_id, const char *spec, case_report *out) {
  const pass_script *p = &script[calls++];
  result_row *row;
  (void)spec;
  memset(out, 0, sizeof *out);
  if (env->lanes & LANE_BIT(LANE_ORACLE)) oracle_calls++, case_report_add(out, LANE_ORACLE, 0, "pass");
  if ((env->lanes & LANE_BIT(LANE_EAGER)) && p->status) {
    row = case_report_add(out, LANE_EAGER, 0, p->status);
    row->device_ms = 1.0 + calls; /* timings differ on every pass and must not count */
    if (strcmp(p->status, "pass")) {
      row->has_mismatch = 1;
      snprintf(row->tensor, sizeof row->tensor, "Y");
      snprintf(row->actual_hex, sizeof row->actual_hex, "%s", p->actual_hex);
      row->mismatch_count = p->mismatch_count;
      snprintf(row->message, sizeof row->message, "Y[3] differs; repro: bitgate repro %s --lanes eager", case_id);
      out->failed++;
    }
  }
  if (env->lanes & LANE_BIT(LANE_CAPTURE)) case_report_add(out, LANE_CAPTURE, 0, "pass");
  return 0;
}

static void dummy_sink(void *ctx, const char *case_id, int step, const char *stage, const char *source,
                       const struct tensor *payload) {
  (void)ctx, (void)case_id, (void)step, (void)stage, (void)source, (void)payload;
}

static const result_row *eager_row(const case_report *r) {
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->rows[i].lane, "eager")) return &r->rows[i];
  return NULL;
}

static const struct repeat_case {
  const char *name;
  int repeats;
  pass_script passes[4];
  const char *status, *message_has; /* the eager row's final status, and a part of its message */
} repeat_cases[] = {
    {"same passes", 3, {{"pass", "", 0}, {"pass", "", 0}, {"pass", "", 0}}, "pass", ""},
    {"pass then mismatch: no pass on retry", 3,
     {{"pass", "", 0}, {"pass", "", 0}, {"mismatch", "0x3f800001", 1}}, "nondeterministic",
     "repeat 3 of 3 differs from repeat 1: status (pass vs mismatch)"},
    {"mismatch then pass", 2, {{"mismatch", "0x3f800001", 1}, {"pass", "", 0}}, "nondeterministic", "status (mismatch vs pass)"},
    {"same failure every time stays a mismatch", 3,
     {{"mismatch", "0x3f800001", 4}, {"mismatch", "0x3f800001", 4}, {"mismatch", "0x3f800001", 4}}, "mismatch", "Y[3]"},
    {"different first bytes", 2, {{"mismatch", "0x3f800001", 4}, {"mismatch", "0x3f800002", 4}}, "nondeterministic",
     "actual_hex (0x3f800001 vs 0x3f800002)"},
    {"different counts", 2, {{"mismatch", "0x3f800001", 4}, {"mismatch", "0x3f800001", 5}}, "nondeterministic",
     "mismatch_count (4 vs 5)"},
    {"a row missing in a repeat", 3, {{"pass", "", 0}, {"pass", "", 0}, {NULL, "", 0}}, "nondeterministic",
     "no row for this lane and step"},
    {"a row only a repeat has", 2, {{NULL, "", 0}, {"pass", "", 0}}, "nondeterministic", "a row repeat 1 did not have"},
    {"one run", 1, {{"pass", "", 0}}, "pass", ""},
};

Test(repeat, rows_held_to_the_first_run) {
  static case_report r;
  for (size_t k = 0; k < sizeof repeat_cases / sizeof *repeat_cases; k++) {
    const struct repeat_case *c = &repeat_cases[k];
    runner_env env = {0};
    const result_row *row;
    int payload_ctx = 0;
    env.lanes = LANE_ALL;
    env.payload = dummy_sink;
    env.payload_ctx = &payload_ctx;
    script = c->passes, calls = oracle_calls = 0;
    cr_assert_eq(case_run_repeated(&env, "is.valid.0000abcd", "spec", c->repeats, scripted_runner, &r), 0, "%s",
                 c->name);
    cr_expect_eq(calls, c->repeats, "%s: %d passes", c->name, calls);
    cr_expect_eq(oracle_calls, 1, "%s: the oracle lane runs once", c->name);
    cr_expect(env.lanes == LANE_ALL && env.payload == dummy_sink && env.payload_ctx == &payload_ctx,
              "%s: env restored", c->name);
    row = eager_row(&r);
    cr_assert(row, "%s: no eager row", c->name);
    cr_expect_str_eq(row->status, c->status, "%s", c->name);
    cr_expect(strstr(row->message, c->message_has), "%s: message '%s'", c->name, row->message);
    cr_expect_eq(r.failed, strcmp(c->status, "pass") != 0, "%s: failed %d", c->name, r.failed);
    if (!strcmp(c->status, "nondeterministic"))
      cr_expect(strstr(row->message, "; repro: bitgate repro is.valid.0000abcd --lanes eager"), "%s: %s", c->name,
                row->message);
  }
}

Test(repeat, oracle_only_runs_once) {
  static case_report r;
  static const pass_script passes[] = {{"pass", "", 0}};
  runner_env env = {0};
  env.lanes = LANE_BIT(LANE_ORACLE);
  script = passes, calls = oracle_calls = 0;
  cr_assert_eq(case_run_repeated(&env, "is.valid.0000abcd", "spec", 5, scripted_runner, &r), 0);
  cr_expect_eq(calls, 1, "no device lane: nothing to repeat");
}

/* ---- known failures ---------------------------------------------------- */

static const struct bad_list {
  const char *text, *error;
} bad_lists[] = {
    {"zz.bogus.0a39cb3f eager alice\n", "kf:1: entry zz.bogus.0a39cb3f eager has no reason"},
    {"zz.bogus.0a39cb3f eager\n", "kf:1: expected CASE_ID LANE OWNER REASON..."},
    {"# comment\n\nzz.bogus.0a39cb3f eagr alice why\n", "kf:3: unknown lane 'eagr'"},
    {"zz.bogus eager alice why\n", "kf:1: 'zz.bogus' is not a case id"},
    {"ZZ.bogus.0A39CB3F eager alice why\n", "kf:1: 'ZZ.bogus.0A39CB3F' is not a case id"},
    {"zz.bogus.0a39cb3f eager a why\n  zz.bogus.0a39cb3f eager b again\n", "kf:2: zz.bogus.0a39cb3f eager is already listed at line 1"},
};

Test(known_failures, bad_lines_name_file_and_line) {
  for (size_t k = 0; k < sizeof bad_lists / sizeof *bad_lists; k++) {
    known_failures kf;
    char err[512] = "";
    cr_expect_eq(known_failures_parse(&kf, "kf", bad_lists[k].text, err, sizeof err), -1, "%s", bad_lists[k].text);
    cr_expect(strstr(err, bad_lists[k].error), "got '%s', want '%s'", err, bad_lists[k].error);
    cr_expect_eq(kf.n, 0);
  }
}

Test(known_failures, missing_file) {
  known_failures kf;
  char err[512] = "";
  cr_expect_eq(known_failures_load(&kf, "/nonexistent/known-failures", 1, err, sizeof err), 0);
  cr_expect_eq(kf.n, 0);
  cr_expect_eq(known_failures_load(&kf, "/nonexistent/known-failures", 0, err, sizeof err), -1);
  cr_expect(strstr(err, "/nonexistent/known-failures"), "%s", err);
}

static const char list_text[] = "# waivers\r\n"
                                "  zz.bogus.0a39cb3f eager alice wrong Y on sm_90 (see #12)\r\n"
                                "zz.bogus.0a39cb3f capture bob capture too\n"
                                "zz.bogus.0a39cb3f poison carol poison lane\n"
                                "zz.other.11111111 eager dave nondeterministic scores\n";

Test(known_failures, waived_is_not_pass_and_stale_is_reported) {
  static case_report r;
  known_failures kf;
  char err[512] = "", out[4096] = "";
  result_row *row;
  FILE *f;
  cr_assert_eq(known_failures_parse(&kf, "corpus/known-failures", list_text, err, sizeof err), 0, "%s", err);
  cr_assert_eq(kf.n, 4);
  cr_expect_str_eq(kf.entries[0].reason, "wrong Y on sm_90 (see #12)");
  memset(&r, 0, sizeof r);
  case_report_add(&r, LANE_ORACLE, 0, "pass");
  row = case_report_add(&r, LANE_EAGER, 1, "mismatch");
  snprintf(row->message, sizeof row->message, "Y[3] differs; repro: bitgate repro zz.bogus.0a39cb3f --lanes eager");
  case_report_add(&r, LANE_CAPTURE, 0, "pass");
  r.failed = 1;
  cr_expect_eq(known_failures_apply(&kf, "zz.bogus.0a39cb3f", &r), 1);
  cr_expect_eq(r.failed, 0);
  cr_expect_str_eq(r.rows[1].status, "waived");
  cr_expect(strstr(r.rows[1].message, "waived mismatch (known failure, owner alice: wrong Y on sm_90 (see #12); "
                                      "corpus/known-failures:2): Y[3] differs; repro: bitgate repro"),
            "%s", r.rows[1].message);
  cr_expect_str_eq(r.rows[0].status, "pass");
  cr_expect_str_eq(r.rows[2].status, "pass");

  memset(&r, 0, sizeof r); /* nondeterminism is never waived */
  case_report_add(&r, LANE_EAGER, 0, "nondeterministic");
  r.failed = 1;
  cr_expect_eq(known_failures_apply(&kf, "zz.other.11111111", &r), 0);
  cr_expect_eq(r.failed, 1);
  cr_expect_str_eq(r.rows[0].status, "nondeterministic");

  f = fmemopen(out, sizeof out, "w");
  cr_expect_eq(known_failures_print(&kf, f), 1);
  fclose(f);
  cr_expect(strstr(out, "stale waiver: zz.bogus.0a39cb3f capture (owner bob, corpus/known-failures:3)"), "%s", out);
  cr_expect(!strstr(out, "stale waiver: zz.other"), "a nondeterministic lane is not stale: %s", out);
  cr_expect(strstr(out, "4 listed, 1 results waived in 1 cases, 1 stale, 1 not run"), "%s", out);
  known_failures_free(&kf);
}

/* ---- baseline ---------------------------------------------------------- */

TestSuite(baseline, .init = make_tmp, .fini = remove_tmp);

/* Records one run of (case, lane, status) triples; returns its id. */
static long long record_run(store *db, const char *const (*rows)[3], int n) {
  store_provenance pv = {0};
  store_result x[16];
  long long run_id;
  pv.suite = "gate";
  cr_assert_eq(store_run_begin(db, &pv, &run_id), 0, "%s", store_errmsg(db));
  for (int i = 0; i < n; i++) {
    memset(&x[i], 0, sizeof x[i]);
    cr_assert_eq(store_case_put(db, rows[i][0], "IndexShare", "is.valid", rows[i][0], run_id), 0, "%s",
                 store_errmsg(db));
    x[i].case_id = rows[i][0], x[i].lane = rows[i][1], x[i].status = rows[i][2];
    x[i].oracle_ms = x[i].device_ms = -1;
    cr_assert_eq(store_results_commit(db, run_id, &x[i], 1), 0, "%s", store_errmsg(db));
  }
  return run_id;
}

static void note(baseline *b, const char *case_id, lane l, const char *status) {
  static case_report r;
  memset(&r, 0, sizeof r);
  case_report_add(&r, LANE_ORACLE, 0, "pass");
  case_report_add(&r, l, 0, status);
  baseline_note_case(b, case_id, &r);
}

Test(baseline, only_new_failures_count) {
  static const char *const then[][3] = {
      {"is.a.00000001", "eager", "mismatch"},  {"is.b.00000002", "eager", "pass"},
      {"is.c.00000003", "capture", "nondeterministic"}, {"is.e.00000005", "eager", "mismatch"},
      {"is.f.00000006", "eager", "crash"},     {"is.g.00000007", "poison", "waived"},
  };
  char path[512], err[512], out[4096] = "";
  store *db;
  baseline b;
  long long run_id;
  FILE *f;
  snprintf(path, sizeof path, "%s/results.db", tmp);
  cr_assert_eq(store_open(path, &db, err, sizeof err), 0, "%s", err);
  run_id = record_run(db, then, 6);
  cr_expect_eq(baseline_open(&b, db, run_id + 5, err, sizeof err), 1);
  cr_expect(strstr(err, "no run"), "%s", err);
  cr_assert_eq(baseline_open(&b, db, run_id, err, sizeof err), 0, "%s", err);
  note(&b, "is.a.00000001", LANE_EAGER, "mismatch");           /* known */
  note(&b, "is.b.00000002", LANE_EAGER, "mismatch");           /* new: passed then */
  note(&b, "is.c.00000003", LANE_CAPTURE, "mismatch");         /* known: failed then */
  note(&b, "is.d.00000004", LANE_EAGER, "fail");               /* new: absent then */
  note(&b, "is.e.00000005", LANE_EAGER, "nondeterministic");   /* new: newly nondeterministic */
  note(&b, "is.f.00000006", LANE_EAGER, "pass");               /* fixed */
  note(&b, "is.g.00000007", LANE_POISON, "mismatch");          /* known: waived then */
  cr_expect_eq(b.new_failures, 3);
  cr_expect_eq(b.still_failing, 3);
  cr_expect_eq(b.fixed, 1);
  f = fmemopen(out, sizeof out, "w");
  baseline_print(&b, "gate", f);
  fclose(f);
  cr_expect(strstr(out, "known from baseline: is.a.00000001 eager (mismatch)"), "%s", out);
  cr_expect(strstr(out, "new failure: is.b.00000002 eager (mismatch; baseline: passed)"), "%s", out);
  cr_expect(strstr(out, "new failure: is.d.00000004 eager (fail; baseline: absent)"), "%s", out);
  cr_expect(strstr(out, "new failure: is.e.00000005 eager (nondeterministic; baseline: failed, but was not"), "%s", out);
  cr_expect(strstr(out, "3 new failures, 3 still failing (known from baseline), 1 fixed"), "%s", out);
  baseline_close(&b);
  store_close(db);
}
