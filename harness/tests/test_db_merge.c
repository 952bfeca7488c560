/*
** test_db_merge.c: `bitgate db merge` (harness/store_merge.h) as a user
** meets it.  Two real shard databases merge into an OUT that already holds
** a run, so every run id moves; every row arrives; --as-one-run unions
** them; merging again adds nothing; a case id with another spec, a file
** that is not bitgate's and a newer schema are refused, and the refused
** file and OUT are left byte for byte as they were.
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "harness/store.h"
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILTER "is.masked.*" /* 96 fast oracle cases */

static const char *path_in_tmp(int slot, const char *name) {
  static char paths[4][320];
  snprintf(paths[slot], sizeof paths[slot], "%s/%s", tmp, name);
  return paths[slot];
}

/* One integer from a read-only query of db. */
static long long query_int(const char *db, const char *sql) {
  sqlite3 *h = NULL;
  sqlite3_stmt *st = NULL;
  long long v = -1;
  cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", db);
  cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(h));
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

static void query_text(const char *db, const char *sql, char *out, size_t len) {
  sqlite3 *h = NULL;
  sqlite3_stmt *st = NULL;
  out[0] = '\0';
  cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s", db);
  cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(h));
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
}

/* The whole file, malloc'd (NULL when absent); *n its size. */
static char *file_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  char *buf;
  long len;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  rewind(f);
  buf = malloc((size_t)len + 1);
  *n = fread(buf, 1, (size_t)len, f);
  fclose(f);
  return buf;
}

static void expect_untouched(const char *path, const char *before, size_t n_before) {
  size_t n = 0;
  char *after = file_bytes(path, &n);
  cr_expect(after && n == n_before && !memcmp(after, before, n), "%s changed", path);
  free(after);
}

/* Runs shard K/2 of FILTER into name. */
static void run_shard(const char *k_of_2, const char *name) {
  outcome *o = RUN(tmp, "run", "--lanes", "oracle", "--filter", FILTER, "--shard", k_of_2, "--db", name);
  cr_assert_eq(o->status, 0, "%s%s", o->out, o->err);
}

static void setup(void) {
  make_tmp();
  run_shard("1/2", "s1.db");
  run_shard("2/2", "s2.db");
}

TestSuite(db_merge, .init = setup, .fini = remove_tmp);

Test(db_merge, two_shards_with_ids_remapped_and_as_one_run) {
  const char *out = path_in_tmp(0, "out.db"), *s1 = path_in_tmp(1, "s1.db"), *s2 = path_in_tmp(2, "s2.db");
  long long n1 = query_int(s1, "SELECT count(*) FROM results"), n2 = query_int(s2, "SELECT count(*) FROM results");
  long long cases1 = query_int(s1, "SELECT count(*) FROM cases"), cases2 = query_int(s2, "SELECT count(*) FROM cases");
  char text[256];
  outcome *o = RUN(tmp, "run", "--lanes", "oracle", "--filter", FILTER, "--db", "out.db"); /* OUT holds run 1 */
  cr_assert_eq(o->status, 0, "%s%s", o->out, o->err);
  o = RUN(tmp, "db", "merge", "out.db", "s1.db", "s2.db", "--as-one-run");
  cr_assert_eq(o->status, 0, "%s%s", o->out, o->err);
  cr_expect(strstr(o->out, "merged s1.db: 1 runs (ids 2-2)") && strstr(o->out, "merged s2.db: 1 runs (ids 3-3)"), "%s", o->out);
  cr_expect(strstr(o->out, "combined run 4: shards 1/2,2/2") != NULL, "%s", o->out);
  cr_expect_gt(n1, 0);
  cr_expect_gt(n2, 0);
  /* Every row of shard 1's run 1 is OUT's run 2, and shard 2's run 1 OUT's run 3. */
  cr_expect_eq(query_int(out, "SELECT count(*) FROM results WHERE run_id = 2"), n1);
  cr_expect_eq(query_int(out, "SELECT count(*) FROM results WHERE run_id = 3"), n2);
  query_text(out, "SELECT group_concat(shard, ' ') FROM (SELECT shard FROM runs ORDER BY id)", text, sizeof text);
  cr_expect_str_eq(text, "1/1 1/2 2/2 1/2,2/2");
  query_text(out, "SELECT group_concat(status || ':' || suite, ' ') FROM (SELECT * FROM runs ORDER BY id)", text, sizeof text);
  cr_expect_str_eq(text, "passed:gate passed:gate passed:gate passed:gate", "provenance kept");
  cr_expect_eq(query_int(out, "SELECT count(*) FROM cases"), cases1 + cases2, "the shards' cases are disjoint");
  /* The combined run is the union: row for row what the unsharded run 1 holds. */
  cr_expect_eq(query_int(out, "SELECT count(*) FROM results WHERE run_id = 4"), n1 + n2);
  cr_expect_eq(query_int(out, "SELECT count(*) FROM (SELECT case_id, lane, step, status FROM results WHERE run_id = 1"
                              " EXCEPT SELECT case_id, lane, step, status FROM results WHERE run_id = 4)"), 0);
  /* bitgate report's default run (latest) is the combined one. */
  o = RUN(tmp, "report", "--db", "out.db", "--format", "md");
  cr_expect_eq(o->status, 0, "%s", o->err);
  snprintf(text, sizeof text, "bitgate run 4: passed");
  cr_expect(strstr(o->out, text) != NULL, "%s", o->out);
  /* Merging the same inputs again adds no run and no row. */
  o = RUN(tmp, "db", "merge", "out.db", "s1.db", "s2.db");
  cr_expect_eq(o->status, 0, "%s", o->err);
  cr_expect(strstr(o->out, "0 runs, 1 already in out.db") != NULL, "%s", o->out);
  cr_expect_eq(query_int(out, "SELECT count(*) FROM runs"), 4);
  cr_expect_eq(query_int(out, "SELECT count(*) FROM results"), 2 * (n1 + n2) + n1 + n2);
}

Test(db_merge, as_one_run_notes_a_missing_shard) {
  outcome *o = RUN(tmp, "db", "merge", "out.db", "s2.db", "--as-one-run");
  cr_expect_eq(o->status, 0, "%s", o->err);
  cr_expect(strstr(o->out, "note: 1 of 2 shards missing: 1/2") != NULL, "%s", o->out);
}

Test(db_merge, conflicting_spec_refused_naming_the_case) {
  const char *conf = path_in_tmp(0, "conf.db"), *out = path_in_tmp(1, "out.db"), *s1 = path_in_tmp(2, "s1.db");
  char id[128], err[600], *before;
  size_t n_before = 0;
  store *s = NULL;
  outcome *o;
  query_text(s1, "SELECT min(id) FROM cases", id, sizeof id);
  cr_assert_eq(store_open(conf, &s, err, sizeof err), 0, "%s", err);
  cr_assert_eq(store_case_put(s, id, "csa", "state", "op=csa not-the-same-spec", 0), 0, "%s", store_errmsg(s));
  store_close(s);
  o = RUN(tmp, "db", "merge", "new.db", "s1.db", "conf.db");
  cr_expect_eq(o->status, 3, "%s%s", o->out, o->err);
  cr_expect(strstr(o->err, id) != NULL && strstr(o->err, "different spec") != NULL, "names %s: %s", id, o->err);
  cr_expect_eq(access(path_in_tmp(3, "new.db"), F_OK), -1, "a failed merge leaves no new OUT behind");
  /* An existing OUT is left as it was: the check runs before any copy. */
  o = RUN(tmp, "db", "merge", "out.db", "s2.db");
  cr_assert_eq(o->status, 0, "%s", o->err);
  before = file_bytes(out, &n_before);
  o = RUN(tmp, "db", "merge", "out.db", "s1.db", "conf.db");
  cr_expect_eq(o->status, 3, "%s", o->err);
  cr_expect(strncmp(o->out, "merged", 6) != 0, "nothing merged: %s", o->out);
  expect_untouched(out, before, n_before);
  free(before);
}

/* Files that are not bitgate databases (or too new) are refused and left byte for byte. */
Test(db_merge, foreign_files_refused_untouched) {
  static const struct { const char *name, *sql, *why; } rows[] = {
      {"junk.db", NULL, "not a SQLite database"},
      {"other.db", "CREATE TABLE t (x); INSERT INTO t VALUES (1);", "not a bitgate database"},
      {"newer.db", "PRAGMA application_id = 1650947121; PRAGMA user_version = 99; CREATE TABLE t (x);", "newer"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const char *path = path_in_tmp(0, rows[i].name);
    char *before;
    size_t n = 0;
    outcome *o;
    if (rows[i].sql) {
      sqlite3 *h = NULL;
      cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
      cr_assert_eq(sqlite3_exec(h, rows[i].sql, NULL, NULL, NULL), SQLITE_OK);
      sqlite3_close(h);
    } else {
      FILE *f = fopen(path, "wb");
      cr_assert_not_null(f);
      fputs("this is not a database, only some text long enough to look like a header......", f);
      fclose(f);
    }
    before = file_bytes(path, &n);
    o = RUN(tmp, "db", "merge", "out.db", "s1.db", rows[i].name);
    cr_expect_eq(o->status, 3, "%s: %s%s", rows[i].name, o->out, o->err);
    cr_expect(strstr(o->err, rows[i].why) && strstr(o->err, rows[i].name), "%s: %s", rows[i].name, o->err);
    expect_untouched(path, before, n);
    free(before);
  }
}

Test(db_merge, usage_errors) {
  const char *const *cases[] = {
      (const char *const[]){"db", NULL},
      (const char *const[]){"db", "split", NULL},
      (const char *const[]){"db", "merge", "out.db", NULL},
      (const char *const[]){"db", "merge", "s1.db", "s1.db", NULL},
      (const char *const[]){"db", "merge", "out.db", "s1.db", "--bogus", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    outcome *o = run_bitgate(tmp, cases[i]);
    cr_expect_eq(o->status, 2, "row %zu: %s", i, o->err);
    cr_expect_eq(line_count(o->err), 1, "row %zu: %s", i, o->err);
  }
}
