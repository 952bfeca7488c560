/*
** test_nightly.c: `bitgate nightly` as CI meets it (issue "Corpus and
** goldens", item 3 and "Bad input"), no GPU: on a tiny suite of gate cases
** (IndexShare, csa128, csa4; oracle lane) the first nightly pins the golden
** payloads, the second over unchanged code compares every one and finds no
** divergence; a stored payload replaced by another (valid) one is named as
** the first divergence of exactly its case and stage; a garbled blob is
** "golden corrupt" naming the case and stage, exit 3, no crash.
*/
#include "harness/frozen_oracle.h"
#include "harness/store.h"
#include "harness/tests/bitgate_process.h"
#include "oracle/oracle_version.h"
#include "oracle/tensor.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(nightly, .init = make_tmp, .fini = remove_tmp);

/* tmp/tiny.suite: the first case of each of three gate families. */
static void write_tiny_suite(void) {
  static const char *const families[] = {"family=is.valid ", "family=csa128.chain ", "family=csa4.chain "};
  char path[512], line[8192];
  int want[3] = {1, 1, 1}, i;
  FILE *in, *out;
  snprintf(path, sizeof path, "%s/corpus/gate.suite", getenv("BITGATE_SOURCE_DIR"));
  cr_assert((in = fopen(path, "r")), "%s", path);
  snprintf(path, sizeof path, "%s/tiny.suite", tmp);
  cr_assert((out = fopen(path, "w")), "%s", path);
  while (fgets(line, sizeof line, in))
    for (i = 0; i < 3; i++)
      if (want[i] && !strncmp(line, families[i], strlen(families[i]))) {
        fputs(line, out);
        want[i] = 0;
      }
  fclose(in);
  fclose(out);
}

static outcome *nightly(void) {
  return RUN(tmp, "nightly", "--suite", "tiny", "--corpus", tmp, "--lanes", "oracle", "--db", "r.db", "--golden",
             "g.db", "--report", "rep.md");
}

/* The payload count stored in the summary line "golden: N payloads stored, ... M compared". */
static void golden_counts(const outcome *o, long long *stored, long long *compared, long long *diverged) {
  const char *p = strstr(o->out, "golden: ");
  cr_assert(p, "no golden summary in:\n%s", o->out);
  cr_assert(sscanf(p, "golden: %lld payloads stored, %*[^,], %lld compared, %lld cases diverged",
                   stored, compared, diverged) == 3, "%s", p);
}

typedef struct golden_row {
  char case_id[96], stage[64], dtype[16], shape[256];
  int step;
} golden_row;

/* The third stored payload of the csa4 case. */
static void pick_row(store *s, golden_row *r) {
  sqlite3_stmt *st;
  cr_assert(sqlite3_prepare_v2(store_sqlite(s),
                               "SELECT case_id, step, stage, dtype, shape FROM golden_payloads"
                               " WHERE case_id LIKE 'csa4.%' ORDER BY id LIMIT 1 OFFSET 2", -1, &st, NULL) == 0);
  cr_assert(sqlite3_step(st) == SQLITE_ROW);
  snprintf(r->case_id, sizeof r->case_id, "%s", (const char *)sqlite3_column_text(st, 0));
  r->step = sqlite3_column_int(st, 1);
  snprintf(r->stage, sizeof r->stage, "%s", (const char *)sqlite3_column_text(st, 2));
  snprintf(r->dtype, sizeof r->dtype, "%s", (const char *)sqlite3_column_text(st, 3));
  snprintf(r->shape, sizeof r->shape, "%s", (const char *)sqlite3_column_text(st, 4));
  sqlite3_finalize(st);
}

static store *open_golden(void) {
  char path[512], err[512];
  store *s;
  snprintf(path, sizeof path, "%s/g.db", tmp);
  cr_assert(store_open(path, &s, err, sizeof err) == 0, "%s", err);
  return s;
}

static void pin_twice(void) {
  long long stored, compared, diverged;
  outcome *o;
  write_tiny_suite();
  o = nightly();
  cr_assert_eq(o->status, 0, "first nightly:\n%s\n%s", o->out, o->err);
  golden_counts(o, &stored, &compared, &diverged);
  cr_assert(stored > 0 && compared == 0, "%s", o->out);
  o = nightly();
  cr_assert_eq(o->status, 0, "second nightly:\n%s\n%s", o->out, o->err);
  {
    long long stored2;
    golden_counts(o, &stored2, &compared, &diverged);
    cr_assert(stored2 == 0, "%s", o->out);
  }
  cr_assert(compared == stored && diverged == 0, "every boundary identical: %s", o->out);
}

Test(nightly, pins_then_identical) { pin_twice(); }

/* Replaces one stored payload by the same with one byte flipped and its own (correct) digest. */
Test(nightly, tampered_payload_names_case_and_stage) {
  golden_row r;
  store *s;
  void *data;
  size_t n;
  char digest[128], want[256], sql[512];
  tensor t;
  outcome *o;
  pin_twice();
  s = open_golden();
  pick_row(s, &r);
  cr_assert(store_golden_get(s, r.case_id, r.step, r.stage, r.stage, "oracle", ORACLE_VERSION, &data, &n) == 0);
  cr_assert(n > 0);
  ((unsigned char *)data)[0] ^= 0x01;
  memset(&t, 0, sizeof t);
  t.dt = dtype_parse(r.dtype);
  t.rank = sscanf(r.shape, "%lld,%lld,%lld,%lld", &t.shape[0], &t.shape[1], &t.shape[2], &t.shape[3]);
  cr_assert(t.rank > 0 && tensor_bytes(&t) == n, "shape %s", r.shape);
  t.data = data;
  frozen_oracle_tensor_value(&t, digest, sizeof digest);
  snprintf(sql, sizeof sql, "DELETE FROM golden_payloads WHERE case_id = '%s' AND step = %d AND stage = '%s'",
           r.case_id, r.step, r.stage);
  cr_assert(sqlite3_exec(store_sqlite(s), sql, NULL, NULL, NULL) == 0);
  cr_assert(store_golden_put(s, r.case_id, r.step, r.stage, r.stage, "oracle", ORACLE_VERSION, r.dtype, r.shape,
                             data, n, digest, 0) == 0, "%s", store_errmsg(s));
  free(data);
  store_close(s);
  o = nightly();
  cr_assert_eq(o->status, 1, "%s\n%s", o->out, o->err);
  snprintf(want, sizeof want, "FAIL %s oracle step %d (mismatch): golden boundary: first divergence at stage %s ",
           r.case_id, r.step, r.stage);
  cr_assert(strstr(o->out, want), "want '%s' in:\n%s", want, o->out);
  cr_assert(strstr(o->out, "1 cases diverged"), "%s", o->out);
}

Test(nightly, garbled_blob_is_golden_corrupt) {
  golden_row r;
  store *s;
  char want[256], sql[512];
  outcome *o;
  pin_twice();
  s = open_golden();
  pick_row(s, &r);
  snprintf(sql, sizeof sql, "UPDATE golden_payloads SET payload = x'789c0badc0ffee' WHERE case_id = '%s'"
           " AND step = %d AND stage = '%s'", r.case_id, r.step, r.stage);
  cr_assert(sqlite3_exec(store_sqlite(s), sql, NULL, NULL, NULL) == 0);
  store_close(s);
  o = nightly();
  cr_assert_eq(o->status, 3, "%s\n%s", o->out, o->err);
  snprintf(want, sizeof want, "golden corrupt: case %s stage %s step %d", r.case_id, r.stage, r.step);
  cr_assert(strstr(o->out, want), "want '%s' in:\n%s", want, o->out);
  cr_assert(strstr(o->out, "0 cases diverged, 1 golden corrupt"), "%s", o->out);
}

/* Runs one SQL statement on tmp/r.db. */
static void exec_results(const char *sql) {
  char path[512];
  sqlite3 *db;
  snprintf(path, sizeof path, "%s/r.db", tmp);
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK, "%s", path);
  cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
  sqlite3_close(db);
}

/*
** A nightly that was killed after two of its three cases, then resumed: the
** report's case counts cover the whole run, and it says that its golden
** figures cover only the case run now (they were counted in this process).
*/
Test(nightly, resumed_run_reports_what_its_golden_figures_cover) {
  long long stored, compared, diverged;
  char report[8192];
  size_t n;
  FILE *f;
  outcome *o;
  pin_twice();
  exec_results("UPDATE runs SET status = 'running', ended_at = NULL WHERE id = 2;"
               "DELETE FROM results WHERE run_id = 2 AND case_id LIKE 'csa4.%'");
  o = RUN(tmp, "nightly", "--resume", "2", "--db", "r.db");
  cr_assert_eq(o->status, 0, "%s\n%s", o->out, o->err);
  cr_expect(strstr(o->out, "resumed: 2 cases recorded before, 1 run now"), "%s", o->out);
  golden_counts(o, &stored, &compared, &diverged);
  cr_expect(stored == 0 && compared > 0 && diverged == 0, "the csa4 case compared again: %s", o->out);
  snprintf(report, sizeof report, "%s/rep.md", tmp);
  cr_assert((f = fopen(report, "r")), "%s", report);
  n = fread(report, 1, sizeof report - 1, f);
  report[n] = '\0';
  fclose(f);
  cr_expect(strstr(report, "- cases: 3, passed 3, failed 0"), "%s", report);
  cr_expect(strstr(report, "- resumed: 2 cases were recorded by earlier invocations of this run; the golden figures "
                           "and the table below cover the 1 run now"), "%s", report);
}
