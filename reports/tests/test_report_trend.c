/*
** test_report_trend.c: `bitgate bench --trend` (reports/report_trend.h),
** from bench rows written through the store API, as report_trend_write
** renders them and as a user meets the command: its series, their order,
** the changes, the options that narrow them, and the errors (no database,
** one that is not bitgate's, bad options).  Needs no GPU.
*/
#include "harness/store.h"
#include "harness/tests/bitgate_process.h"
#include "reports/tests/bench_fixture.h"
#include "reports/report_trend.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_db[512];

#define ATTN "csa4 sink attention"
#define ATTN_SHAPE "pos 65536, B=1"
#define IS "IndexShare decode step"
#define IS_SHAPE "K=2048, heads 64, B=64"

/* Two builds' runs: the attention line first, then IndexShare; a submit-timed figure in the second. */
static void fixture_setup(void) {
  char err[1024];
  store *s = NULL;
  make_tmp();
  snprintf(g_db, sizeof g_db, "%s/bench.db", tmp);
  cr_assert_eq(store_open(g_db, &s, err, sizeof err), 0, "%s", err);
  bench_fixture_run(s, "aaaa1111", "kh-first-build",
                    (store_bench_row[]){bench_fixture_figure(ATTN, ATTN_SHAPE, "fast", "held", 30.4),
                                        bench_fixture_figure(ATTN, ATTN_SHAPE, "reference", "held", 28960.7),
                                        bench_fixture_figure(IS, IS_SHAPE, "fast", "held", 727.7)},
                    3);
  bench_fixture_run(s, "bbbb2222", "kh-second-build",
                    (store_bench_row[]){bench_fixture_figure(ATTN, ATTN_SHAPE, "fast", "held", 29.6),
                                        bench_fixture_figure(IS, IS_SHAPE, "fast", "held", 727.7),
                                        bench_fixture_figure(ATTN, ATTN_SHAPE, "fast", "submit", 31.2)},
                    3);
  store_close(s);
}

TestSuite(trend, .init = fixture_setup, .fini = remove_tmp);

/* The trend with o, malloc'd; asserts it was written. */
static char *trend(const report_trend_opts *o) {
  char *text = NULL, err[1024] = "";
  size_t n = 0;
  FILE *out = open_memstream(&text, &n);
  int rc;
  cr_assert_not_null(out);
  rc = report_trend_write(g_db, o, out, err, sizeof err);
  cr_assert_eq(fclose(out), 0);
  cr_assert_eq(rc, 0, "report_trend_write: %s", err);
  return text;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

Test(trend, series_in_line_order_with_each_build_and_change) {
  char *t = trend(&(report_trend_opts){.last = 10});
  const char *attn = strstr(t, ATTN ", " ATTN_SHAPE " [fast, held]");
  const char *ref = strstr(t, ATTN ", " ATTN_SHAPE " [reference, held]");
  const char *is = strstr(t, IS ", " IS_SHAPE " [fast, held]");
  const char *submit = strstr(t, ATTN ", " ATTN_SHAPE " [fast, submit]");
  cr_assert(attn && ref && is && submit, "a series is missing:\n%s", t);
  cr_expect(attn < ref && ref < is && is < submit, "series out of the bench's order:\n%s", t);
  cr_expect(count(t, "kh-first-bui") == 3 && count(t, "kh-second-bu") == 3, "each figure names its build:\n%s", t);
  cr_expect(count(t, "aaaa1111") == 3 && count(t, "bbbb2222") == 3, "each figure names its revision:\n%s", t);
  cr_expect(strstr(t, "30.4") && strstr(t, "29.6") && strstr(t, "-2.6%"), "30.4 -> 29.6 is -2.6%%:\n%s", t);
  cr_expect(strstr(t, "+0.0%"), "an unchanged median reads +0.0%%:\n%s", t);
  cr_expect(strstr(t, "4 series, 6 figures"), "the summary line:\n%s", t);
  free(t);
}

Test(trend, last_keeps_the_latest_figures) {
  char *t = trend(&(report_trend_opts){.last = 1});
  cr_expect(!strstr(t, "30.4") && strstr(t, "29.6"), "--last 1 keeps run 2's attention figure:\n%s", t);
  cr_expect(strstr(t, "28960.7"), "a series of one figure keeps it:\n%s", t);
  cr_expect(strstr(t, "4 series, 4 figures"), "%s", t);
  free(t);
}

Test(trend, variant_timing_and_filter_narrow_the_series) {
  char *t = trend(&(report_trend_opts){.variant = "reference", .last = 10});
  cr_expect(strstr(t, "[reference, held]") && !strstr(t, "[fast,"), "--variant reference:\n%s", t);
  free(t);
  t = trend(&(report_trend_opts){.timing = "submit", .last = 10});
  cr_expect(strstr(t, "[fast, submit]") && !strstr(t, "held]") && strstr(t, "1 series, 1 figures"), "%s", t);
  free(t);
  t = trend(&(report_trend_opts){.filter = "IndexShare*heads 64*", .last = 10});
  cr_expect(strstr(t, IS ", " IS_SHAPE) && !strstr(t, ATTN), "the glob matches 'KERNEL, SHAPE':\n%s", t);
  free(t);
  t = trend(&(report_trend_opts){.filter = "*no such kernel*", .last = 10});
  cr_expect(strstr(t, "no bench figures in") && strstr(t, g_db), "no match says so, naming the db:\n%s", t);
  free(t);
}

Test(trend, refuses_a_missing_database_without_creating_it) {
  char path[600], err[1024] = "";
  FILE *out = fopen("/dev/null", "w");
  snprintf(path, sizeof path, "%s/absent.db", tmp);
  cr_assert_eq(report_trend_write(path, &(report_trend_opts){.last = 10}, out, err, sizeof err), -1);
  fclose(out);
  cr_expect(strstr(err, path) != NULL, "the error names the path: %s", err);
  cr_expect(access(path, F_OK) != 0, "the trend created %s", path);
}

Test(trend, refuses_a_file_that_is_not_bitgates) {
  char path[600], err[1024] = "";
  FILE *f, *out = fopen("/dev/null", "w");
  snprintf(path, sizeof path, "%s/notes.db", tmp);
  cr_assert_not_null(f = fopen(path, "w"));
  fputs("not a database\n", f);
  fclose(f);
  cr_assert_eq(report_trend_write(path, &(report_trend_opts){.last = 10}, out, err, sizeof err), -1);
  fclose(out);
  cr_expect(strstr(err, path) && strstr(err, "SQLite"), "%s", err);
}

Test(trend, the_command_prints_it_and_checks_its_options) {
  outcome *o = RUN(NULL, "bench", "--trend", "--db", g_db, "--filter", "*sink attention*", "--variant", "fast");
  cr_assert_eq(o->status, 0, "stderr: %s", o->err);
  cr_expect(strstr(o->out, "[fast, held]") && strstr(o->out, "[fast, submit]") && !strstr(o->out, IS), "%s",
            o->out);
  o = RUN(NULL, "bench", "--trend", "--db", g_db, "--last", "0");
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "--last '0'"), "%s", o->err);
  o = RUN(NULL, "bench", "--trend", "--runs", "30", "--db", g_db);
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "--trend times nothing"), "%s", o->err);
  o = RUN(NULL, "bench", "--last", "3", "--db", g_db);
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "needs --trend"), "%s", o->err);
  o = RUN(NULL, "bench", "--trend", "--timing", "later", "--db", g_db);
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "--timing 'later'"), "%s", o->err);
  o = RUN(tmp, "bench", "--trend", "--db", "missing.db");
  cr_expect_eq(o->status, 3);
  cr_expect(strstr(o->err, "missing.db"), "%s", o->err);
}
