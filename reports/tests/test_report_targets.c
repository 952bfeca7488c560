/*
** test_report_targets.c: the verdicts `bitgate bench` prints under its table
** against issue 8's targets (reports/report_targets.h), on made-up figures
** at the shapes the bench measures; and `bitgate bench --targets`, the same
** verdicts from bench rows written through the store API.  No GPU.
*/
#include "harness/store.h"
#include "harness/tests/bitgate_process.h"
#include "reports/tests/bench_fixture.h"
#include "reports/report.h"
#include "reports/report_targets.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char g_buf[512];
static const char *g_why;

static int verdict(const char *kernel, const char *shape, int have_fast, double fast_us, int have_ref,
                   double ref_us) {
  return report_target_verdict(kernel, shape, have_fast, fast_us, have_ref, ref_us, g_buf, sizeof g_buf, &g_why);
}

#define expect_has(text) cr_expect_not_null(strstr(g_buf, text), "'%s' lacks '%s'", g_buf, text)
#define expect_lacks(text) cr_expect_null(strstr(g_buf, text), "'%s' has '%s'", g_buf, text)
#define expect_why(text) \
  cr_expect(g_why && strstr(g_why, text), "why '%s' lacks '%s'", g_why ? g_why : "(none)", text)

Test(report_targets, attention_at_b1_is_held_to_20_us_and_says_how_far_off_and_why) {
  cr_assert_eq(verdict("csa4 sink attention", "pos 65536, B=1", 1, 30.4, 0, 0), 1);
  expect_has("<= 20 us");
  expect_has("30.4 us, 10.4 us over (1.52x)");
  expect_why("chained");
  expect_lacks("reached");
  cr_assert_eq(verdict("csa128 sink attention", "pos 4096, B=1", 1, 19.9, 1, 25000.0), 1);
  expect_has("19.9 us, reached");
  expect_lacks("over");
  cr_expect_null(g_why, "a reached target has no reason: %s", g_why);
}

Test(report_targets, attention_at_b64_is_held_to_600_us) {
  cr_assert_eq(verdict("csa4 sink attention", "pos 65536, B=64", 1, 453.5, 0, 0), 1);
  expect_has("<= 600 us");
  expect_has("453.5 us, reached");
  cr_assert_eq(verdict("csa4 sink attention", "pos 65536, B=64", 1, 900.0, 0, 0), 1);
  expect_has("300.0 us over (1.50x)");
}

Test(report_targets, scoring_targets_apply_at_64k_only) {
  cr_assert_eq(verdict("csa4 scoring + top-k", "pos 65536, B=1", 1, 54.7, 0, 0), 1);
  expect_has("<= 60 us");
  expect_has("reached");
  cr_assert_eq(verdict("csa4 scoring + top-k", "pos 65536, B=64", 1, 2100.0, 0, 0), 1);
  expect_has("<= 2000 us");
  expect_has("100.0 us over (1.05x)");
  cr_expect_eq(verdict("csa4 scoring + top-k", "pos 4096, B=1", 1, 44.3, 0, 0), 0, "the issue sets no 4K target");
  cr_expect_str_empty(g_buf);
}

Test(report_targets, compressor_speedup_needs_both_variants) {
  cr_assert_eq(verdict("csa4 index-key compression", "pos 65536, B=1", 1, 6.5, 1, 295.2), 1);
  expect_has(">= 50x");
  expect_has("45.4x, short by 1.10x (50x is 5.9 us)");
  expect_why("RMS chain");
  cr_assert_eq(verdict("csa4 main compression", "pos 4096, B=1", 1, 7.2, 0, 0), 1);
  expect_has("not measured");
  expect_has("--variant both");
  cr_assert_eq(verdict("csa128 compression", "pos 65536, B=1", 1, 18.3, 1, 6467.0), 1);
  expect_has("353.4x, reached");
}

Test(report_targets, index_share_speedup_at_k2048) {
  cr_assert_eq(verdict("IndexShare decode step", "K=2048, heads 64, B=64", 1, 421.8, 1, 5947.3), 1);
  expect_has(">= 10x");
  expect_has("14.1x, reached");
  cr_assert_eq(verdict("IndexShare decode step", "K=2048, heads 128, B=1", 1, 200.0, 1, 1320.9), 1);
  expect_has("6.6x, short by 1.51x (10x is 132.1 us)");
}

Test(report_targets, lines_without_a_target_and_missing_figures) {
  cr_expect_eq(verdict("csa4 state copy", "pos 65536, B=1", 1, 88.9, 0, 0), 0);
  cr_expect_eq(verdict("csa4 decode step", "pos 65536, B=1", 1, 179.4, 0, 0), 0);
  cr_assert_eq(verdict("csa4 sink attention", "pos 4096, B=1", 0, 0, 1, 24600.0), 1);
  expect_has("not measured (needs the fast variant's figure)");
  cr_expect_null(g_why);
}

/* The oracle's targets: >= 1.8x on 2 cores and >= 10x on 16, over one thread, on the lowest shape. */
Test(report_targets, the_oracle_is_held_to_its_lowest_shape_on_enough_cores) {
  static const struct {
    int cores, first;
    long online;
    int shapes;
    double lowest;
    const char *shape;
    int reached;
    const char *has, *lacks;
  } rows[] = {
      {2, 1, 2, 9, 1.72, "csa4 pos 4096, B=1", 7,
       ">= 1.8x    oracle on 2 cores: lowest 1.72x (csa4 pos 4096, B=1), short by 1.05x; reached on 7 of 9", NULL},
      {2, 1, 2, 9, 1.90, "csa128 pos 4096, B=1", 9, "lowest 1.90x (csa128 pos 4096, B=1), reached on all 9 shapes",
       "short"},
      {16, 1, 16, 9, 6.8, "csa128 pos 4096, B=1", 4,
       ">= 10x     oracle on 16 cores: lowest 6.80x (csa128 pos 4096, B=1), short by 1.47x; reached on 4 of 9", NULL},
      {16, 1, 2, 9, 0.97, "csa128 pos 4096, B=1", 0, "on 16 cores: not judged: 2 processors online, fewer than 16",
       "lowest"},
      {2, 4, 16, 9, 0.5, "csa4 pos 4096, B=1", 0, "not judged: the target is over one thread, and the first count is 4",
       NULL},
      {2, 1, 2, 1, 1.72, "csa4 pos 4096, B=1", 0, "on 2 cores: 1.72x (csa4 pos 4096, B=1), short by 1.05x", "of 1"},
      {2, 1, 2, 1, 1.9, "csa4 pos 4096, B=1", 1, "on 2 cores: 1.90x (csa4 pos 4096, B=1), reached", "all"},
      {2, 1, 2, 0, 0, "", 0, "not measured: no shape was timed", NULL},
  };
  size_t i;
  for (i = 0; i < sizeof rows / sizeof *rows; i++) {
    cr_assert_eq(report_target_oracle_verdict(rows[i].cores, rows[i].first, rows[i].online, rows[i].shapes,
                                              rows[i].lowest, rows[i].shape, rows[i].reached, g_buf, sizeof g_buf),
                 1, "row %zu", i);
    expect_has(rows[i].has);
    if (rows[i].lacks) expect_lacks(rows[i].lacks);
  }
  cr_expect_eq(report_target_oracle_verdict(4, 1, 16, 9, 3.5, "csa4 pos 4096, B=1", 0, g_buf, sizeof g_buf), 0,
               "no target on 4 cores");
  cr_expect_str_eq(g_buf, "");
  cr_expect_eq(report_target_oracle_verdict(1, 2, 16, 9, 0.5, "csa4 pos 4096, B=1", 0, g_buf, sizeof g_buf), 0,
               "none on 1");
}

Test(report_targets, the_log_keeps_verdicts_in_line_order_and_counts_what_it_drops) {
  static report_target_log log;
  int i;
  memset(&log, 0, sizeof log);
  report_target_log_add(&log, "csa4 state copy", "pos 4096, B=1", 1, 9.0, 0, 0); /* no target: not kept */
  report_target_log_add(&log, "csa4 sink attention", "pos 4096, B=1", 1, 30.6, 0, 0);
  report_target_log_add(&log, "csa128 sink attention", "pos 4096, B=1", 1, 20.1, 0, 0);
  cr_assert_eq(log.n, 2);
  cr_expect_not_null(strstr(log.line[0], "csa4 sink attention, pos 4096, B=1: 30.6 us, 10.6 us over (1.53x) [1]"),
                     "%s", log.line[0]);
  cr_expect_not_null(strstr(log.line[1], "csa128 sink attention, pos 4096, B=1: 20.1 us, 0.1 us over (1.01x) [1]"),
                     "20.1 is over 20 however close, and shares the attention's reason: %s", log.line[1]);
  cr_expect_eq(log.n_why, 1, "one reason for both attention lines");
  for (i = 0; i < REPORT_TARGET_LOG_MAX; i++)
    report_target_log_add(&log, "csa4 sink attention", "pos 65536, B=1", 1, 30.4, 0, 0);
  cr_expect_eq(log.n, REPORT_TARGET_LOG_MAX);
  cr_expect_eq(log.dropped, 2);
}

/* The log's text as report_target_log_print writes it, malloc'd. */
static char *log_text(const report_target_log *log) {
  char *text = NULL;
  size_t n = 0;
  FILE *out = open_memstream(&text, &n);
  cr_assert_not_null(out);
  report_target_log_print(log, out);
  cr_assert_eq(fclose(out), 0);
  return text;
}

Test(report_targets, launch_floor_lines_print_under_the_reasons_and_get_no_verdict) {
  static report_target_log log;
  char *t;
  memset(&log, 0, sizeof log);
  report_target_log_add(&log, REPORT_LAUNCH_FLOOR_KERNEL, "one empty kernel", 1, 2.98, 0, 0);
  report_target_log_add(&log, REPORT_LAUNCH_FLOOR_KERNEL, "attention passes, B=1", 1, 4.31, 0, 0);
  report_target_log_add(&log, REPORT_LAUNCH_FLOOR_KERNEL, "not measured", 0, 0, 0, 0);
  cr_expect_eq(log.n, 0, "a floor line has no target");
  t = log_text(&log);
  cr_expect_str_empty(t, "no verdict, so nothing prints: %s", t);
  free(t);
  report_target_log_add(&log, "csa4 sink attention", "pos 4096, B=1", 1, 19.5, 0, 0);
  t = log_text(&log);
  cr_expect_null(strstr(t, "launch floors"), "every target reached: no reasons, no floors: %s", t);
  free(t);
  report_target_log_add(&log, "csa4 sink attention", "pos 65536, B=1", 1, 22.5, 0, 0);
  t = log_text(&log);
  cr_expect_not_null(
      strstr(t, "why short:\n  [1] three dependent passes"), "%s", t);
  cr_expect_not_null(strstr(t, "\n  this GPU's launch floors (the launch floor lines): one empty kernel 3.0 us; "
                               "attention passes, B=1 4.3 us\n"),
                     "after the reasons, the floors measured, in line order: %s", t);
  cr_expect_null(strstr(t, "not measured"), "a floor line without a figure is left out: %s", t);
  free(t);
}

/* ---- bitgate bench --targets: from a results database -------------------------------- */

static char g_db[512];

/* A held fast or reference figure of one line. */
static store_bench_row figure(const char *kernel, const char *shape, const char *variant, double median_us) {
  return bench_fixture_figure(kernel, shape, variant, "held", median_us);
}

/* Run 1: an older build; run 2, the latest: a launch floor, both variants of the index compressor, the attention fast only. */
static void targets_db_setup(void) {
  char err[1024];
  store *s = NULL;
  make_tmp();
  snprintf(g_db, sizeof g_db, "%s/bench.db", tmp);
  cr_assert_eq(store_open(g_db, &s, err, sizeof err), 0, "%s", err);
  bench_fixture_run(s, "aaaa1111", "kh",
                    (store_bench_row[]){figure("csa4 sink attention", "pos 65536, B=1", "fast", 42.4)}, 1);
  bench_fixture_run(s, "bbbb2222", "kh",
                    (store_bench_row[]){figure(REPORT_LAUNCH_FLOOR_KERNEL, "one empty kernel", "fast", 3.04),
                                        figure("csa4 state copy", "pos 65536, B=1", "fast", 88.9),
                                        figure("csa4 index-key compression", "pos 65536, B=1", "fast", 6.5),
                                        figure("csa4 index-key compression", "pos 65536, B=1", "reference", 295.2),
                                        figure("csa4 sink attention", "pos 65536, B=1", "fast", 30.4)},
                    5);
  store_close(s);
}

TestSuite(targets_db, .init = targets_db_setup, .fini = remove_tmp);

/* report_targets_write's text for run_spec, malloc'd; asserts it was written. */
static char *targets_text(const char *run_spec) {
  char *text = NULL, err[1024] = "";
  size_t n = 0;
  FILE *out = open_memstream(&text, &n);
  int rc;
  cr_assert_not_null(out);
  rc = report_targets_write(g_db, run_spec, out, err, sizeof err);
  cr_assert_eq(fclose(out), 0);
  cr_assert_eq(rc, 0, "report_targets_write: %s", err);
  return text;
}

Test(targets_db, the_latest_run_pairs_both_variants_of_a_line) {
  char *t = targets_text(NULL);
  cr_expect_not_null(strstr(t, "bench run 2 of "), "%s", t);
  cr_expect_not_null(strstr(t, "4 lines, 2 with a target"), "%s", t);
  cr_expect_not_null(strstr(t, "this GPU's launch floors (the launch floor lines): one empty kernel 3.0 us\n"),
                     "the recorded floor under the reasons: %s", t);
  cr_expect_not_null(strstr(t, "csa4 index-key compression, pos 65536, B=1: 45.4x, short by 1.10x (50x is 5.9 us) [1]"),
                     "%s", t);
  cr_expect_not_null(strstr(t, "csa4 sink attention, pos 65536, B=1: 30.4 us, 10.4 us over (1.52x) [2]"), "%s", t);
  cr_expect_not_null(strstr(t, "[1] one record's latency chain"), "%s", t);
  cr_expect_null(strstr(t, "state copy"), "a line without a target prints no verdict: %s", t);
  free(t);
}

Test(targets_db, an_older_run_by_id) {
  char *t = targets_text("1");
  cr_expect_not_null(strstr(t, "csa4 sink attention, pos 65536, B=1: 42.4 us, 22.4 us over"), "%s", t);
  free(t);
}

Test(targets_db, the_cli_names_what_is_wrong) {
  outcome *r = RUN(tmp, "bench", "--targets", "--db", g_db, "--run", "latest");
  cr_expect_eq(r->status, 0, "%s", r->err);
  cr_expect_not_null(strstr(r->out, "why short:"), "%s", r->out);
  r = RUN(tmp, "bench", "--targets", "--db", g_db, "--run", "7");
  cr_expect_eq(r->status, 3, "a run without bench figures is an environment error: %s", r->err);
  cr_expect_not_null(strstr(r->err, "--run 7 recorded no bench figures"), "%s", r->err);
  r = RUN(tmp, "bench", "--targets", "--db", g_db, "--run", "x1");
  cr_expect_not_null(strstr(r->err, "--run 'x1' is not a run id or latest"), "%s", r->err);
  r = RUN(tmp, "bench", "--targets", "--runs", "20", "--db", g_db);
  cr_expect_eq(r->status, 2, "%s", r->err);
  cr_expect_not_null(strstr(r->err, "--runs: --targets reads one recorded run"), "%s", r->err);
  r = RUN(tmp, "bench", "--run", "1", "--db", g_db);
  cr_expect_eq(r->status, 2, "%s", r->err);
  cr_expect_not_null(strstr(r->err, "--run '1' needs --targets"), "%s", r->err);
  r = RUN(tmp, "bench", "--targets", "--db", "missing.db");
  cr_expect_eq(r->status, 3, "%s", r->err);
  cr_expect_not_null(strstr(r->err, "missing.db"), "%s", r->err);
}

/* ---- the reports of a bench run: HTML, Markdown, JSON ---------------------------------- */

/* Writer w's output for run_spec of the fixture, malloc'd. */
static char *render(const char *run_spec, char format) {
  char *text = NULL, err[1024] = "";
  size_t n = 0;
  report *r = NULL;
  FILE *out = open_memstream(&text, &n);
  cr_assert_not_null(out);
  cr_assert_eq(report_load(g_db, run_spec, NULL, &r, err, sizeof err), REPORT_LOAD_OK, "report_load: %s", err);
  cr_assert_eq(format == 'h' ? report_html_write(r, out) : format == 'm' ? report_md_write(r, 20, out)
                                                                          : report_json_write(r, out),
               0);
  report_free(r);
  cr_assert_eq(fclose(out), 0);
  return text;
}

Test(targets_db, the_html_report_of_a_bench_run_shows_figures_verdicts_and_trend) {
  char *t = render("latest", 'h');
  cr_expect_not_null(strstr(t, "<a href=\"#bench\">Bench</a>"), "the nav links the section");
  cr_expect_not_null(strstr(t, "<h2>Bench figures (4 lines, timing held)</h2>"), "%.2000s", t);
  cr_expect_not_null(strstr(t, "<td class=\"n\">6.5 / 6.4</td><td class=\"n\">295.2 / 295.1</td>"
                               "<td class=\"n\">45.4x</td>"),
                     "both variants of the compressor, min 0.1 below");
  cr_expect_not_null(strstr(t, "45.4x, short by 1.10x (50x is 5.9 us) <a href=\"#why-1\">[1]</a>"), "%s",
                     strstr(t, "<section id=\"bench\">"));
  cr_expect_not_null(strstr(t, "30.4 us, 10.4 us over (1.52x) <a href=\"#why-2\">[2]</a>"));
  cr_expect_not_null(strstr(t, "<li id=\"why-2\">three dependent passes, chained"));
  /* the attention's trend: 42.4 in run 1, then 30.4; the maximum at the top (y 3), the newest marked */
  cr_expect_not_null(strstr(t, "fast median over 2 runs, oldest first: 42.4, 30.4</title>"
                               "<polyline points=\"3.0,3.0 117.0,21.0\"/><circle cx=\"117.0\" cy=\"21.0\""),
                     "%s", strstr(t, "<section id=\"bench\">"));
  cr_expect_not_null(strstr(t, "<br><span class=\"muted\">30.4-42.4 us</span>"), "the sparkline's range, in words");
  cr_expect_not_null(strstr(t, "No case results: a bench run"), "no empty summary tables for a bench run");
  free(t);
  t = render("1", 'h');
  cr_expect_not_null(strstr(t, "fast median over 1 runs, oldest first: 42.4</title><circle"),
                     "an older run's trend stops at that run");
  free(t);
}

Test(targets_db, the_markdown_and_json_reports_of_a_bench_run) {
  char *t = render("latest", 'm');
  cr_expect_not_null(strstr(t, "### Bench"), "%s", t);
  /* Markdown-escaped as the report escapes all database text: &lt; and \( */
  cr_expect_not_null(strstr(t, "| csa4 sink attention | pos 65536, B=1 | 30.4 | - | &lt;= 20 us | 30.4 us, 10.4 us "
                               "over \\(1.52x\\) |"),
                     "%s", t);
  free(t);
  t = render("latest", 'j');
  cr_expect_not_null(strstr(t, "\"bench\":["), "%s", t);
  cr_expect_not_null(strstr(t, "\"kernel\":\"csa4 state copy\",\"shape\":\"pos 65536, B=1\",\"timing\":\"held\","
                               "\"fast_us\":88.900,\"fast_min_us\":88.800,\"reference_us\":null,"
                               "\"reference_min_us\":null,\"target\":null,\"verdict\":null,\"why_short\":null,"
                               "\"fast_history_us\":[88.900]}"),
                     "%s", t);
  cr_expect_not_null(strstr(t, "\"fast_history_us\":[42.400,30.400]"), "%s", t);
  free(t);
}
