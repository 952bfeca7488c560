/*
** test_worker.c: crash and hang isolation without a GPU (issue 7, item 4;
** harness/worker.h, harness/worker_pool.h), through the binary as CI meets
** it.  The oracle lane runs in workers (--workers) over 26 committed gate
** cases; the test-only hooks make one worker die of SIGSEGV and another
** hang.  The run must go to the end: the crashing case has one 'crash' row,
** the hanging one a 'timeout' row, each with the repro command, every other
** case passes exactly once, and the exit code is 1.  The kernel-fault
** version of this (an out-of-bounds store planted in a kernel) needs a GPU:
** test_worker_gpu.c.
*/
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(worker, .init = make_tmp, .fini = remove_tmp, .timeout = 120);

#define FILTER "is.valid.1*" /* 26 cases of the committed gate suite */
#define CASES 26
#define CRASH_ID "is.valid.12746277"
#define HANG_ID "is.valid.1c209a74"

#define RUN_WORKERS(...) RUN(tmp, "run", "--lanes", "oracle", "--filter", FILTER, "--db", "r.db", __VA_ARGS__)

/* One integer from a query on tmp/r.db. */
static long long query(const char *sql) {
  char path[512];
  sqlite3 *db;
  sqlite3_stmt *st;
  long long v = -1;
  snprintf(path, sizeof path, "%s/r.db", tmp);
  cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", path);
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

/* Every case of the run has exactly one row, and all but `failing` of them pass. */
static void expect_each_case_once(int failing) {
  cr_expect_eq(query("SELECT count(*) FROM results"), CASES);
  cr_expect_eq(query("SELECT count(DISTINCT case_id) FROM results"), CASES, "no case ran twice");
  cr_expect_eq(query("SELECT count(*) FROM results WHERE status = 'pass'"), CASES - failing);
}

Test(worker, crash_and_hang_cost_one_case_each) {
  outcome *o;
  cr_assert_eq(setenv("BITGATE_TEST_CRASH_CASE", CRASH_ID, 1), 0);
  cr_assert_eq(setenv("BITGATE_TEST_HANG_CASE", HANG_ID, 1), 0);
  o = RUN_WORKERS("--workers", "--timeout", "2");
  cr_expect_eq(o->status, 1, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "FAIL " CRASH_ID " oracle step 0 (crash): worker "), "%s", o->out);
  cr_expect(strstr(o->out, "running this case (CUDA_VISIBLE_DEVICES=0); its last output: "), "%s", o->out);
  cr_expect(strstr(o->out, "; repro: bitgate repro " CRASH_ID "\n"), "%s", o->out);
  cr_expect(strstr(o->out, "FAIL " HANG_ID " oracle step 0 (timeout): no answer within --timeout 2 s, worker killed "
                           "(SIGKILL)"), "%s", o->out);
  cr_expect(strstr(o->out, "; repro: bitgate repro " HANG_ID "\n"), "%s", o->out);
  cr_expect(strstr(o->out, "26 cases, 24 passed, 2 failed"), "%s", o->out);
  cr_expect(strstr(o->out, "workers: 1, 1 cases crashed their worker, 1 timed out"), "%s", o->out);
  expect_each_case_once(2);
  cr_expect_eq(query("SELECT count(*) FROM results WHERE case_id = '" CRASH_ID "' AND status = 'crash' AND "
                     "message LIKE '%repro: bitgate repro " CRASH_ID "'"), 1);
  cr_expect_eq(query("SELECT count(*) FROM results WHERE case_id = '" HANG_ID "' AND status = 'timeout'"), 1);
}

Test(worker, the_hooks_act_only_in_a_worker) {
  outcome *o;
  cr_assert_eq(setenv("BITGATE_TEST_CRASH_CASE", CRASH_ID, 1), 0);
  cr_assert_eq(setenv("BITGATE_TEST_HANG_CASE", HANG_ID, 1), 0);
  o = RUN_WORKERS("--in-process");
  cr_expect_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(!strstr(o->out, "workers:"), "%s", o->out);
  expect_each_case_once(0);
}

Test(worker, two_workers_share_the_suite_and_rows_match_in_process) {
  outcome *o = RUN_WORKERS("--in-process");
  cr_assert_eq(o->status, 0, "%s\n%s", o->out, o->err);
  o = RUN_WORKERS("--workers", "--devices", "0,1");
  cr_expect_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "workers: 2, 0 cases crashed their worker, 0 timed out"), "%s", o->out);
  cr_expect(strstr(o->out, "frozen oracle: all 26 cases match"), "the workers' digest checks count: %s", o->out);
  cr_expect_eq(query("SELECT count(*) FROM results WHERE run_id = 2"), CASES);
  cr_expect_eq(query("SELECT count(*) FROM (SELECT case_id, lane, step, status, message FROM results WHERE run_id = 1 "
                     "EXCEPT SELECT case_id, lane, step, status, message FROM results WHERE run_id = 2)"), 0,
               "workers and in-process record the same rows");
}

Test(worker, jobs_put_several_workers_on_one_gpu_and_rows_match_in_process) {
  outcome *o = RUN_WORKERS("--in-process");
  cr_assert_eq(o->status, 0, "%s\n%s", o->out, o->err);
  o = RUN_WORKERS("--workers", "--jobs", "3");
  cr_expect_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "workers: 3, 0 cases crashed their worker, 0 timed out"), "%s", o->out);
  cr_expect_eq(query("SELECT count(*) FROM (SELECT case_id, lane, step, status, message FROM results WHERE run_id = 1 "
                     "EXCEPT SELECT case_id, lane, step, status, message FROM results WHERE run_id = 2)"), 0,
               "three workers on device 0 and in-process record the same rows");
  o = RUN_WORKERS("--workers", "--devices", "0,1", "--jobs", "2");
  cr_expect_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "workers: 4, "), "two GPUs x two jobs: %s", o->out);
  o = RUN_WORKERS("--workers", "--devices", "0,1,2,3,4", "--jobs", "16");
  cr_expect_eq(o->status, 3, "80 workers are more than the pool holds: %s\n%s", o->out, o->err);
  cr_expect(strstr(o->err, "more than 64 workers"), "%s", o->err);
}

Test(worker, bad_options_are_usage_errors) {
  static const char *const bad[][2] = {{"--devices", "0,,1"}, {"--devices", "gpu0"}, {"--devices", "0,"},
                                       {"--timeout", "soon"}, {"--timeout", "-1"}, {"--jobs", "0"},
                                       {"--jobs", "17"},      {"--jobs", "two"}};
  size_t i;
  outcome *o;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o = RUN_WORKERS(bad[i][0], bad[i][1]);
    cr_expect_eq(o->status, 2, "%s %s: %s", bad[i][0], bad[i][1], o->err);
    cr_expect(strstr(o->err, bad[i][0]), "the message names %s: %s", bad[i][0], o->err);
  }
  o = RUN(tmp, "nightly", "--workers", "--filter", "none", "--db", "r.db");
  cr_expect_eq(o->status, 2, "nightly keeps its golden check in-process: %s", o->err);
  o = RUN(tmp, "nightly", "--jobs", "2", "--filter", "none", "--db", "r.db");
  cr_expect_eq(o->status, 2, "so it takes no --jobs either: %s", o->err);
  cr_expect(strstr(o->err, "--jobs"), "%s", o->err);
  o = RUN(tmp, "--help");
  cr_expect(!strstr(o->out, "worker"), "the worker subcommand is hidden: %s", o->out);
}
