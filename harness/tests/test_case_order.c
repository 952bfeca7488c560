/*
** test_case_order.c: the order a run hands its cases to workers in
** (harness/case_order.h): the suite's order with no run before; heaviest
** first by the latest ended run of the same suite, new cases first, ties in
** suite order; another suite's run, a run still running and the run itself
** do not count.
*/
#include "cases/case_spec.h"
#include "harness/case_order.h"
#include "harness/store.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64], path[128];

static void dir_make(void) {
  snprintf(dir, sizeof dir, "/tmp/bitgate-order-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/order.db", dir);
}

static void dir_remove(void) {
  unlink(path);
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

/* The order as suite indexes, e.g. "2 0 1 3 4". */
static const char *order_of(store *s, const char *suite, long long run_id, long long *from) {
  static char text[64];
  char *ordered[N_SPECS];
  int i, j, n = 0;
  cr_assert_eq(case_order_heaviest_first(s, suite, run_id, specs, N_SPECS, ordered, from), 0, "%s", store_errmsg(s));
  for (i = 0; i < N_SPECS; i++)
    for (j = 0; j < N_SPECS; j++)
      if (ordered[i] == specs[j]) n += snprintf(text + n, sizeof text - (size_t)n, i ? " %d" : "%d", j);
  return text;
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
