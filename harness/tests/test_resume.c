/*
** test_resume.c: bitgate run --resume RUN (issue 7, item 4; harness/resume.h),
** through the binary, oracle lane only (no GPU).  A run over ~300 gate cases
** of every family is SIGKILLed once some cases are committed, then resumed:
** every case ends with its rows exactly once, the rows committed before the
** kill are untouched (same recorded_at, no row added), the run ends
** 'passed', exit 0.  Also: a missing run and a finished run are refused
** (exit 2), a changed option is refused naming it, a run stopped by an
** error resumes.
*/
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

TestSuite(resume, .init = make_tmp, .fini = remove_tmp);

#define KILL_AFTER_CASES 20 /* committed before the SIGKILL: enough to skip, few enough to leave most */

/* tmp/NAME.suite: every `every`-th spec of corpus/gate.suite, at most max; returns how many. */
static int write_suite(const char *name, int every, int max) {
  char path[512], line[4096];
  FILE *in, *out;
  int n = 0, k = 0;
  snprintf(path, sizeof path, "%s/%s.suite", tmp, name);
  cr_assert((in = fopen(BITGATE_SOURCE_DIR "/corpus/gate.suite", "r")));
  cr_assert((out = fopen(path, "w")), "%s", path);
  while (n < max && fgets(line, sizeof line, in))
    if (line[0] != '#' && line[0] != '\n' && k++ % every == 0) fputs(line, out), n++;
  fclose(in);
  fclose(out);
  return n;
}

static sqlite3 *open_db(void) {
  char path[512];
  sqlite3 *db = NULL;
  snprintf(path, sizeof path, "%s/r.db", tmp);
  cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK, "%s", path);
  sqlite3_busy_timeout(db, 5000);
  return db;
}

/* One integer from sql with ?1 bound to text (NULL: nothing bound); -1 when there is no row or no db yet. */
static long long query_int(sqlite3 *db, const char *sql, const char *text) {
  sqlite3_stmt *st = NULL;
  long long v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1; /* e.g. no schema yet */
  if (text) sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static void exec(sqlite3 *db, const char *sql) {
  cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
}

/* Starts bitgate in tmp with its output thrown away; the pid. */
static pid_t spawn_bitgate(const char *const *args) {
  const char *argv[32];
  int i, null_fd;
  pid_t pid;
  argv[0] = BITGATE_BINARY;
  for (i = 0; args[i]; i++) argv[i + 1] = args[i];
  argv[i + 1] = NULL;
  cr_assert((pid = fork()) >= 0);
  if (pid == 0) {
    null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    if (chdir(tmp) != 0) _exit(126);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* Polls r.db until run 1 holds at least n cases, then SIGKILLs pid (a few more may commit meanwhile). */
static void kill_after(pid_t pid, long long n) {
  char path[512];
  sqlite3 *db = NULL;
  long long got = 0;
  int status;
  const struct timespec pause = {0, 2000000}; /* 2 ms */
  snprintf(path, sizeof path, "%s/r.db", tmp);
  while (got < n) {
    cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "bitgate ended before %lld cases were committed", n);
    if (!db && access(path, F_OK) == 0 && sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
      sqlite3_close(db);
      db = NULL;
    }
    if (db) got = query_int(db, "SELECT count(DISTINCT case_id) FROM results WHERE run_id = 1", NULL);
    nanosleep(&pause, NULL);
  }
  cr_assert_eq(kill(pid, SIGKILL), 0);
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "bitgate finished before the kill");
  sqlite3_close(db);
}

/* The cases committed before the kill, with their rows' recorded_at, kept in a table of their own. */
static void snapshot(sqlite3 *db) {
  exec(db, "CREATE TEMP TABLE before AS SELECT case_id, lane, step, recorded_at FROM results WHERE run_id = 1");
}

Test(resume, killed_run_resumes_without_losing_or_repeating_a_case, .timeout = 600) {
  const int total = write_suite("resume", 6, 400); /* ~300 cases, every family */
  const char *const start[] = {"run", "--suite", "resume", "--corpus", tmp, "--lanes", "oracle", "--db", "r.db", NULL};
  char expect[160], *id, *save = NULL;
  long long killed_cases, before_rows, listed = 0;
  sqlite3 *db;
  outcome *o;
  kill_after(spawn_bitgate(start), KILL_AFTER_CASES);
  db = open_db();
  snapshot(db);
  before_rows = query_int(db, "SELECT count(*) FROM temp.before", NULL);
  killed_cases = query_int(db, "SELECT count(DISTINCT case_id) FROM temp.before", NULL);
  cr_assert_geq(killed_cases, KILL_AFTER_CASES);
  cr_assert_lt(killed_cases, total, "the kill came after the last case");
  cr_assert_eq(query_int(db, "SELECT count(*) FROM runs WHERE id = 1 AND status = 'running'", NULL), 1);

  o = RUN(tmp, "run", "--resume", "1", "--db", "r.db"); /* the options are run 1's */
  cr_assert_eq(o->status, 0, "%s\n%s", o->out, o->err);
  snprintf(expect, sizeof expect, "run 1: suite resume, %d cases, %d passed, 0 failed", total, total);
  cr_expect(strstr(o->out, expect), "%s", o->out);
  snprintf(expect, sizeof expect, "resumed: %lld cases recorded before, %lld run now", killed_cases,
           total - killed_cases);
  cr_expect(strstr(o->out, expect), "%s", o->out);

  /* The rows committed before the kill: all there, untouched, and none added to their cases. */
  cr_expect_eq(query_int(db, "SELECT count(*) FROM temp.before b JOIN results r ON r.run_id = 1 AND"
                             " r.case_id = b.case_id AND r.lane = b.lane AND r.step = b.step AND"
                             " r.recorded_at = b.recorded_at", NULL), before_rows);
  cr_expect_eq(query_int(db, "SELECT count(*) FROM results WHERE run_id = 1 AND case_id IN"
                             " (SELECT case_id FROM temp.before)", NULL), before_rows);
  /* Every case of the suite has rows, each (case, lane, step) once, and nothing else is in the run. */
  o = RUN(tmp, "list", "--suite", "resume", "--corpus", tmp);
  cr_assert_eq(o->status, 0, "%s", o->err);
  for (id = strtok_r(o->out, "\n", &save); id; id = strtok_r(NULL, "\n", &save), listed++)
    cr_expect_gt(query_int(db, "SELECT count(*) FROM results WHERE run_id = 1 AND case_id = ?1", id), 0, "%s", id);
  cr_expect_eq(listed, total);
  cr_expect_eq(query_int(db, "SELECT count(DISTINCT case_id) FROM results WHERE run_id = 1", NULL), total);
  cr_expect_eq(query_int(db, "SELECT count(*) - count(DISTINCT case_id || '/' || lane || '/' || step)"
                             " FROM results WHERE run_id = 1", NULL), 0);
  /* One run, ended with the whole run's verdict. */
  cr_expect_eq(query_int(db, "SELECT count(*) FROM runs", NULL), 1);
  cr_expect_eq(query_int(db, "SELECT count(*) FROM runs WHERE id = 1 AND status = 'passed' AND exit_code = 0"
                             " AND ended_at IS NOT NULL", NULL), 1);
  sqlite3_close(db);
}

/* A finished three-case run 1 in r.db. */
static void finished_run(void) {
  outcome *o;
  write_suite("tiny", 1, 3);
  o = RUN(tmp, "run", "--suite", "tiny", "--corpus", tmp, "--lanes", "oracle", "--db", "r.db");
  cr_assert_eq(o->status, 0, "%s\n%s", o->out, o->err);
}

Test(resume, missing_and_finished_runs_are_refused) {
  char path[512];
  outcome *o = RUN(tmp, "run", "--resume", "1", "--db", "r.db");
  cr_expect_eq(o->status, 2, "%s", o->err);
  cr_expect(strstr(o->err, "--resume 1: no database r.db"), "%s", o->err);
  snprintf(path, sizeof path, "%s/r.db", tmp);
  cr_expect_neq(access(path, F_OK), 0, "the database is not created");
  finished_run();
  o = RUN(tmp, "run", "--resume", "9", "--db", "r.db");
  cr_expect_eq(o->status, 2, "%s", o->err);
  cr_expect(strstr(o->err, "--resume 9: no run 9 in r.db"), "%s", o->err);
  o = RUN(tmp, "run", "--resume", "1", "--db", "r.db");
  cr_expect_eq(o->status, 2, "%s", o->err);
  cr_expect(strstr(o->err, "--resume 1: run 1 has finished (status passed)"), "%s", o->err);
  o = RUN(tmp, "run", "--resume", "0", "--db", "r.db");
  cr_expect_eq(o->status, 2, "%s", o->err);
}

Test(resume, changed_options_are_refused_and_an_errored_run_resumes) {
  static const struct {
    const char *option, *value, *message;
  } changed[] = {
    {"--lanes", "oracle,eager", "--lanes oracle,eager differs from run 1's oracle"},
    {"--suite", "gate", "--suite gate differs from run 1's tiny"},
    {"--filter", "is.*", "--filter is.* differs from run 1's (none)"},
    {"--shard", "1/2", "--shard 1/2 differs from run 1's 1/1"},
    {"--repeat", "2", "--repeat 2 differs from run 1's 1"},
  };
  sqlite3 *db;
  outcome *o;
  size_t i;
  finished_run();
  db = open_db();
  exec(db, "UPDATE runs SET status = 'error', exit_code = 3"); /* as a store failure leaves it */
  for (i = 0; i < sizeof changed / sizeof changed[0]; i++) {
    o = RUN(tmp, "run", "--resume", "1", "--db", "r.db", changed[i].option, changed[i].value);
    cr_expect_eq(o->status, 2, "%s: %s", changed[i].option, o->err);
    cr_expect(strstr(o->err, changed[i].message), "%s", o->err);
  }
  o = RUN(tmp, "nightly", "--resume", "1", "--db", "r.db");
  cr_expect_eq(o->status, 2, "%s", o->err);
  cr_expect(strstr(o->err, "was not started by bitgate nightly"), "%s", o->err);
  /* The same options given again are fine; the three cases are recalled, none run. */
  o = RUN(tmp, "run", "--resume", "1", "--db", "r.db", "--suite", "tiny", "--lanes", "oracle");
  cr_assert_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "run 1: suite tiny, 3 cases, 3 passed, 0 failed"), "%s", o->out);
  cr_expect(strstr(o->out, "resumed: 3 cases recorded before, 0 run now"), "%s", o->out);
  cr_expect_eq(query_int(db, "SELECT count(*) FROM runs WHERE status = 'passed' AND exit_code = 0", NULL), 1);
  sqlite3_close(db);
}

/*
** A run made with a kernel tree (BITGATE_KERNEL_TREE, recorded ahead of its
** command line) resumes only under that tree: the rest of its rows must come
** from the same kernels.  The tree here is the source tree itself.
*/
Test(resume, a_kernel_tree_run_resumes_under_its_tree_only) {
  const char *src = BITGATE_SOURCE_DIR;
  char other[600];
  sqlite3 *db;
  outcome *o;
  setenv("BITGATE_KERNEL_TREE", src, 1);
  finished_run();
  db = open_db();
  exec(db, "UPDATE runs SET status = 'error', exit_code = 3");
  unsetenv("BITGATE_KERNEL_TREE");
  o = RUN(tmp, "run", "--resume", "1", "--db", "r.db");
  cr_expect_eq(o->status, 2, "%s", o->err);
  cr_expect(strstr(o->err, "--resume 1: BITGATE_KERNEL_TREE differs from run 1's"), "%s", o->err);
  snprintf(other, sizeof other, "%s/.", src);
  setenv("BITGATE_KERNEL_TREE", other, 1);
  o = RUN(tmp, "run", "--resume", "1", "--db", "r.db");
  cr_expect_eq(o->status, 2, "another path: %s", o->err);
  setenv("BITGATE_KERNEL_TREE", src, 1);
  setenv("BITGATE_PLANT", "csa4.cu:include=>include", 1); /* a plant that changes nothing, but is not the run's */
  o = RUN(tmp, "run", "--resume", "1", "--db", "r.db");
  cr_expect_eq(o->status, 2, "%s", o->err);
  cr_expect(strstr(o->err, "--resume 1: BITGATE_PLANT differs from run 1's"), "%s", o->err);
  unsetenv("BITGATE_PLANT");
  o = RUN(tmp, "run", "--resume", "1", "--db", "r.db");
  cr_assert_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "resumed: 3 cases recorded before, 0 run now"), "%s", o->out);
  sqlite3_close(db);
}
