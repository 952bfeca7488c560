/*
** test_report_compare.c: `bitgate bench --compare` (reports/report_compare.h)
** over an A/B round written through the store API: the builds and where
** their kernels came from, each line's medians per build, the ratio and
** whether the ranges meet, the options that narrow it, and the command's
** errors.  Needs no GPU.
*/
#include "harness/store.h"
#include "harness/tests/bitgate_process.h"
#include "reports/report_compare.h"
#include "reports/tests/bench_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char g_db[512];

#define COMP "csa4 index-key compression"
#define ATTN "csa4 sink attention"
#define SHAPE "pos 4096, B=1"
#define TREE_CMD "BITGATE_KERNEL_TREE='/work/wip' bitgate bench --variant fast"

/* One round: main's build and a kernel tree's, alternated three times; the tree wins apart on one line only. */
static void fixture_setup(void) {
  static const double main_comp[3] = {5.3, 5.4, 5.3}, tree_comp[3] = {5.0, 5.1, 5.0};
  static const double main_attn[3] = {26.7, 26.9, 26.8}, tree_attn[3] = {26.8, 26.6, 26.9};
  char err[1024];
  store *s = NULL;
  int i;
  make_tmp();
  snprintf(g_db, sizeof g_db, "%s/ab.db", tmp);
  cr_assert_eq(store_open(g_db, &s, err, sizeof err), 0, "%s", err);
  for (i = 0; i < 3; i++) {
    bench_fixture_run(s, "aaaa1111", "kh-main",
                      (store_bench_row[]){bench_fixture_figure(COMP, SHAPE, "fast", "held", main_comp[i]),
                                          bench_fixture_figure(ATTN, SHAPE, "fast", "held", main_attn[i])},
                      2);
    bench_fixture_run_as(s, "aaaa1111", "kh-tree", TREE_CMD,
                         (store_bench_row[]){bench_fixture_figure(COMP, SHAPE, "fast", "held", tree_comp[i]),
                                             bench_fixture_figure(ATTN, SHAPE, "fast", "held", tree_attn[i])},
                         2);
  }
  store_close(s);
}

TestSuite(compare, .init = fixture_setup, .fini = remove_tmp);

/* The comparison with o, malloc'd; asserts it was written. */
static char *compare(const report_trend_opts *o) {
  char *text = NULL, err[1024] = "";
  size_t n = 0;
  FILE *out = open_memstream(&text, &n);
  int rc;
  cr_assert_not_null(out);
  rc = report_compare_write(g_db, o, out, err, sizeof err);
  cr_assert_eq(fclose(out), 0);
  cr_assert_eq(rc, 0, "report_compare_write: %s", err);
  return text;
}

Test(compare, builds_are_lettered_with_their_runs_and_origin) {
  char *t = compare(&(report_trend_opts){0});
  const char *a = strstr(t, "  A  aaaa1111  kh-main  embedded kernels  runs 1, 3, 5");
  const char *b = strstr(t, "  B  aaaa1111  kh-tree  BITGATE_KERNEL_TREE='/work/wip'  runs 2, 4, 6");
  cr_expect(a && b && a < b, "the two builds, A first:\n%s", t);
  cr_expect(strstr(t, "2 builds, 2 series"), "the summary:\n%s", t);
  free(t);
}

Test(compare, each_line_gives_each_builds_median_range_ratio_and_verdict) {
  char *t = compare(&(report_trend_opts){0});
  const char *comp = strstr(t, COMP ", " SHAPE " [fast, held]"), *attn = strstr(t, ATTN ", " SHAPE " [fast, held]");
  cr_assert(comp && attn && comp < attn, "both lines, in the bench's order:\n%s", t);
  cr_expect(strstr(comp, "  A        5.3 us  (5.3-5.4, 3 runs)\n"), "A's medians of the compressor:\n%s", t);
  cr_expect(strstr(comp, "  B        5.0 us  (5.0-5.1, 3 runs)  0.943x A, apart\n"),
            "B's below A's, the ranges apart:\n%s", t);
  cr_expect(strstr(attn, "  A       26.8 us  (26.7-26.9, 3 runs)\n"), "A's attention:\n%s", t);
  cr_expect(strstr(attn, "  B       26.8 us  (26.6-26.9, 3 runs)  1.000x A, overlap\n"),
            "B's attention within A's range:\n%s", t);
  free(t);
}

Test(compare, the_filter_and_variant_narrow_it) {
  char *t = compare(&(report_trend_opts){.filter = "*attention*"});
  cr_expect(!strstr(t, COMP) && strstr(t, ATTN) && strstr(t, "2 builds, 1 series"), "%s", t);
  free(t);
  t = compare(&(report_trend_opts){.variant = "reference"});
  cr_expect(strstr(t, "no bench figures in") && strstr(t, "match"), "%s", t);
  free(t);
}

/* An even count's median is the mean of the middle two; a build without the line shows a dash. */
Test(compare, an_even_count_and_a_missing_line) {
  char err[1024];
  store *s = NULL;
  char *t;
  cr_assert_eq(store_open(g_db, &s, err, sizeof err), 0, "%s", err);
  bench_fixture_run(s, "aaaa1111", "kh-main",
                    (store_bench_row[]){bench_fixture_figure(COMP, SHAPE, "fast", "held", 5.6)}, 1);
  bench_fixture_run(s, "cccc3333", "kh-main",
                    (store_bench_row[]){bench_fixture_figure(COMP, SHAPE, "fast", "held", 5.2)}, 1);
  store_close(s);
  t = compare(&(report_trend_opts){0});
  cr_expect(strstr(t, "  A        5.3 us  (5.3-5.6, 4 runs)\n"), "(5.3 + 5.4) / 2 rounds to 5.3:\n%s", t);
  cr_expect(strstr(t, "  C  cccc3333  kh-main"), "another revision is another build:\n%s", t);
  cr_expect(strstr(strstr(t, ATTN), "  C  -\n"), "C has no attention figure:\n%s", t);
  free(t);
}

Test(compare, through_the_command) {
  outcome *o = RUN(NULL, "bench", "--compare", "--db", g_db, "--filter", COMP "*");
  cr_expect_eq(o->status, 0, "%s", o->err);
  cr_expect(strstr(o->out, "0.943x A, apart"), "%s", o->out);
  o = RUN(NULL, "bench", "--compare", "--trend", "--db", g_db);
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "--trend is another view"), "%s", o->err);
  o = RUN(NULL, "bench", "--compare", "--last", "3", "--db", g_db);
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "--compare takes every recorded figure"), "%s", o->err);
  o = RUN(NULL, "bench", "--compare", "--runs", "30", "--db", g_db);
  cr_expect_eq(o->status, 2);
  cr_expect(strstr(o->err, "--compare times nothing"), "%s", o->err);
  o = RUN(tmp, "bench", "--compare", "--db", "missing.db");
  cr_expect_eq(o->status, 3, "%s", o->err);
}
