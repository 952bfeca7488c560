/*
** test_case_order.c: the order a run hands its cases to workers in
** (harness/case_order.h): the suite's order with no run before; heaviest
** first by the latest ended run of the same suite, new cases first, ties in
** suite order; another suite's run, a run still running and the run itself
** do not count.  With no run before, the suite's times file orders them
** (harness/case_times.h), and it weighs the cases a run before did not
** take; a malformed one is named with its line, and what `bitgate db
** times` writes reads back.  The committed times files
** parse and name only cases of their suites (a stale id means the suite
** changed: regenerate the file with `bitgate db times`).
*/
#include "cases/case_spec.h"
#include "harness/case_order.h"
#include "harness/case_times.h"
#include "harness/store.h"
#include "harness/suite.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64], path[128], times_path[128];

static void dir_make(void) {
  snprintf(dir, sizeof dir, "/tmp/bitgate-order-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/order.db", dir);
  snprintf(times_path, sizeof times_path, "%s/gate.times", dir);
}

static void dir_remove(void) {
  unlink(path);
  unlink(times_path);
  rmdir(dir);
}

TestSuite(case_order, .init = dir_make, .fini = dir_remove);

#define N_SPECS 5
static char *const specs[N_SPECS] = {
    "family=is.valid op=IndexShare seed=1", "family=is.valid op=IndexShare seed=2",
    "family=is.valid op=IndexShare seed=3", "family=is.valid op=IndexShare seed=4",
    "family=is.valid op=IndexShare seed=5",
};

/* A run of suite with the given case times (ms < 0: no row for that case), ended with status (NULL: running). */
static long long run_with_times(store *s, const char *suite, const double ms[N_SPECS], const char *status) {
  const store_provenance prov = {.suite = suite, .command_line = "bitgate run"};
  long long run_id = 0;
  int i;
  cr_assert_eq(store_run_begin(s, &prov, &run_id), 0, "%s", store_errmsg(s));
  for (i = 0; i < N_SPECS; i++) {
    char id[CASE_ID_MAX];
    store_result rows[2] = {{.lane = "oracle", .status = "pass", .ulp_distance = -1, .device_ms = -1},
                            {.lane = "eager", .status = "pass", .ulp_distance = -1, .oracle_ms = -1}};
    if (ms[i] < 0) continue;
    cr_assert_eq(case_id_from_spec(specs[i], id, sizeof id), 0, "%s", specs[i]);
    rows[0].case_id = rows[1].case_id = id;
    rows[0].oracle_ms = ms[i] / 4, rows[1].device_ms = ms[i] - ms[i] / 4; /* a case's time is its rows' sum */
    cr_assert_eq(store_case_put(s, id, "IndexShare", "is.valid", specs[i], run_id), 0, "%s", store_errmsg(s));
    cr_assert_eq(store_results_commit(s, run_id, rows, 2), 0, "%s", store_errmsg(s));
  }
  if (status) cr_assert_eq(store_run_end(s, run_id, status, 0), 0, "%s", store_errmsg(s));
  return run_id;
}

/* The order as suite indexes, e.g. "2 0 1 3 4", with times file tpath (NULL: none); *from the run that ordered. */
static const char *order_by(store *s, const char *suite, long long run_id, const char *tpath, case_order_source *src) {
  static char text[64];
  char *ordered[N_SPECS], err[512] = "";
  int i, j, n = 0;
  cr_assert_eq(case_order_heaviest_first(s, suite, run_id, tpath, specs, N_SPECS, ordered, src, err, sizeof err), 0,
               "%s %s", store_errmsg(s), err);
  for (i = 0; i < N_SPECS; i++)
    for (j = 0; j < N_SPECS; j++)
      if (ordered[i] == specs[j]) n += snprintf(text + n, sizeof text - (size_t)n, i ? " %d" : "%d", j);
  return text;
}

static const char *order_of(store *s, const char *suite, long long run_id, long long *from) {
  case_order_source src;
  const char *text = order_by(s, suite, run_id, NULL, &src);
  cr_expect_eq(src.file[0], '\0', "no times file was given");
  *from = src.run;
  return text;
}

/* Writes the times file: the lines given, verbatim. */
static void write_times(const char *text) {
  FILE *f = fopen(times_path, "w");
  cr_assert_not_null(f, "%s", times_path);
  fputs(text, f);
  fclose(f);
}

/* "<id of spec i> <ms>\n" */
static const char *times_line(int i, const char *ms) {
  static char line[N_SPECS][160];
  char id[CASE_ID_MAX];
  cr_assert_eq(case_id_from_spec(specs[i], id, sizeof id), 0, "%s", specs[i]);
  snprintf(line[i], sizeof line[i], "%s %s\n", id, ms);
  return line[i];
}

Test(case_order, heaviest_first_by_the_run_before) {
  static const double first[N_SPECS] = {5, 40, 1, 40, -1}, other[N_SPECS] = {100, 1, 1, 1, 1};
  store *s = NULL;
  char err[256];
  long long from = -1, r1, r2, now;
  cr_assert_eq(store_open(path, &s, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(order_of(s, "gate", 1, &from), "0 1 2 3 4", "no run before: the suite's order");
  cr_expect_eq(from, 0);
  r1 = run_with_times(s, "gate", first, "passed");
  r2 = run_with_times(s, "nightly", other, "failed"); /* another suite: not read */
  now = run_with_times(s, "gate", other, NULL);        /* this run, still running: not read */
  cr_expect_str_eq(order_of(s, "gate", now, &from), "4 1 3 0 2", "untimed first, then 40 40 5 1, ties in order");
  cr_expect_eq(from, r1);
  cr_expect_str_eq(order_of(s, "nightly", now + 1, &from), "0 1 2 3 4", "all ties: the suite's order");
  cr_expect_eq(from, r2);
  cr_expect_str_eq(order_of(s, "gate", r1, &from), "0 1 2 3 4", "a run sees only the runs before it");
  cr_expect_eq(from, 0);
  cr_expect_str_eq(order_of(s, "shrink", now + 1, &from), "0 1 2 3 4");
  store_close(s);
}

Test(case_order, a_times_file_orders_a_database_without_a_run_before) {
  static const double ran[N_SPECS] = {1, 2, 3, 4, 5};
  char text[1024];
  store *s = NULL;
  char err[256];
  case_order_source src;
  long long r1;
  snprintf(text, sizeof text, "# case times\n\n%s%s  %s%s# spec 1 is not named\n", times_line(0, "7.5"),
           times_line(2, "120"), times_line(3, "7.5"), times_line(4, "0"));
  write_times(text);
  cr_assert_eq(store_open(path, &s, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(order_by(s, "gate", 1, times_path, &src), "1 2 0 3 4",
                   "unnamed first, then 120, 7.5 7.5 (suite order), 0");
  cr_expect_str_eq(src.file, times_path);
  cr_expect_eq(src.run, 0);
  r1 = run_with_times(s, "gate", ran, "passed");
  cr_expect_str_eq(order_by(s, "gate", r1 + 1, times_path, &src), "4 3 2 1 0", "a run before wins over the file");
  cr_expect_eq(src.run, r1);
  cr_expect_eq(src.file[0], '\0');
  unlink(times_path);
  cr_expect_str_eq(order_by(s, "nightly", 99, times_path, &src), "0 1 2 3 4", "no file, no run: the suite's order");
  cr_expect(src.run == 0 && src.file[0] == '\0');
  store_close(s);
}

Test(case_order, the_file_weighs_the_cases_a_run_before_did_not_take) {
  static const double filtered[N_SPECS] = {5, -1, 1, -1, -1}; /* e.g. a --filter run: 1, 3 and 4 untimed */
  char text[1024], err[256];
  store *s = NULL;
  case_order_source src;
  long long r1;
  snprintf(text, sizeof text, "%s%s%s", times_line(1, "100"), times_line(3, "2"), times_line(0, "999"));
  write_times(text);
  cr_assert_eq(store_open(path, &s, err, sizeof err), 0, "%s", err);
  r1 = run_with_times(s, "gate", filtered, "passed");
  cr_expect_str_eq(order_by(s, "gate", r1 + 1, times_path, &src), "4 1 0 3 2",
                   "4 known to neither first; then 100 (file), 5 (run, not the file's 999), 2 (file), 1 (run)");
  cr_expect_eq(src.run, r1);
  cr_expect_str_eq(src.file, times_path);
  cr_expect_eq(src.file_cases, 2, "cases 1 and 3 took the file's weight");
  store_close(s);
}

Test(case_order, a_malformed_times_file_is_named_with_its_line) {
  static const struct {
    const char *line, *why;
  } bad[] = {
      {"is.valid.12345678\n", "no time"},        {"is.valid.12345678 -1\n", "a negative time"},
      {"is.valid.12345678 12 ms\n", "trailing words"}, {"is.valid.12345678 nan\n", "not a number"},
      {"is.valid.12345678 inf\n", "infinite"},   {"is.valid.12345678 0x\n", "half a number"},
      {"is.valid.12345678", "no time, and no newline at the end of the file"},
  };
  static const double ran[N_SPECS] = {1, 2, 3, 4, 5};
  store *s = NULL;
  char err[512], text[512], *ordered[N_SPECS];
  case_order_source src;
  size_t k;
  cr_assert_eq(store_open(path, &s, err, sizeof err), 0, "%s", err);
  run_with_times(s, "gate", ran, "passed"); /* a run orders, yet the file is still checked */
  for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char where[320];
    snprintf(text, sizeof text, "# header\n%s%s", times_line(0, "3"), bad[k].line);
    write_times(text);
    err[0] = '\0';
    cr_expect_eq(case_order_heaviest_first(s, "gate", 99, times_path, specs, N_SPECS, ordered, &src, err, sizeof err),
                 -2, "%s", bad[k].why);
    snprintf(where, sizeof where, "%s:3: expected '<case id> <milliseconds>'", times_path);
    cr_expect(strstr(err, where) != NULL, "%s: '%s' names the file and line", bad[k].why, err);
    cr_expect(strstr(err, "is.valid.12345678") != NULL, "%s: '%s' shows the line", bad[k].why, err);
    cr_expect_eq(ordered[0], specs[0], "%s: the suite's order left in place", bad[k].why);
  }
  store_close(s);
}

/* case_times_read's callback: appends "id=ms;" to the text at ctx. */
static void append_time(void *ctx, const char *case_id, double ms) {
  char *text = ctx;
  snprintf(text + strlen(text), 256 - strlen(text), "%s=%g;", case_id, ms);
}

Test(case_order, written_times_read_back_heaviest_first) {
  case_time times[4] = {{"is.valid.b", 2.5}, {"is.valid.a", 90}, {"is.valid.d", 2.5}, {"is.valid.c", 0}};
  char text[1024], err[256], seen[256] = "";
  size_t n;
  FILE *f = fopen(times_path, "w+");
  cr_assert_not_null(f);
  cr_assert_eq(case_times_write(f, "Case times of suite gate\nfrom run 3", times, 4), 0);
  rewind(f);
  n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  cr_expect_str_eq(text,
                   "# Case times of suite gate\n# from run 3\n"
                   "is.valid.a 90.0\nis.valid.b 2.5\nis.valid.d 2.5\nis.valid.c 0.0\n",
                   "heaviest first, ties by id, one decimal");
  cr_expect_eq(case_times_read(times_path, append_time, seen, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(seen, "is.valid.a=90;is.valid.b=2.5;is.valid.d=2.5;is.valid.c=0;");
}

/* The ids of a suite, sorted, and how many of them a times file names. */
typedef struct suite_ids {
  char (*id)[CASE_ID_MAX];
  int n, named, stale;
  char first_stale[CASE_ID_MAX];
} suite_ids;

static int by_id_text(const void *a, const void *b) { return strcmp(a, b); }

static void check_time(void *ctx, const char *case_id, double ms) {
  suite_ids *ids = ctx;
  (void)ms;
  if (bsearch(case_id, ids->id, (size_t)ids->n, sizeof *ids->id, by_id_text)) {
    ids->named++;
  } else if (!ids->stale++) {
    snprintf(ids->first_stale, sizeof ids->first_stale, "%s", case_id);
  }
}

Test(case_order, committed_times_files_name_only_their_suites_cases) {
  static const char *const suites[] = {"gate", "nightly"};
  char corpus[512], tpath[600], err[512];
  size_t k;
  snprintf(corpus, sizeof corpus, "%s/corpus", getenv("BITGATE_SOURCE_DIR"));
  for (k = 0; k < sizeof suites / sizeof suites[0]; k++) {
    suite s;
    suite_ids ids = {0};
    int i;
    cr_assert_eq(suite_load(corpus, suites[k], &s, err, sizeof err), 0, "%s", err);
    ids.id = calloc((size_t)s.count, sizeof *ids.id);
    cr_assert_not_null(ids.id);
    for (i = 0; i < s.count; i++) cr_assert_eq(case_id_from_spec(s.specs[i], ids.id[i], CASE_ID_MAX), 0);
    qsort(ids.id, (size_t)s.count, sizeof *ids.id, by_id_text);
    ids.n = s.count;
    case_times_path(corpus, suites[k], tpath, sizeof tpath);
    cr_expect_eq(case_times_read(tpath, check_time, &ids, err, sizeof err), 0, "%s: %s", tpath, err);
    cr_expect_eq(ids.stale, 0, "%s names %d cases its suite does not hold (first %s): regenerate it", tpath,
                 ids.stale, ids.first_stale);
    cr_expect_gt(ids.named, 0, "%s names no case", tpath);
    free(ids.id);
    suite_free(&s);
  }
}
