/*
** test_bench_store.c: the bench figures in the store (store.h
** store_bench_put, schema 4, its timing column schema 5) and in `db merge`
** (store_merge.h).  No GPU:
** rows are written through the API as cmd_bench.c writes them.
**
** Each test works in its own mkdtemp directory, removed by the fini hook.
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include "harness/store.h"
#include "harness/store_merge.h"

#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[64];

static void tmpdir_make(void) {
  strcpy(g_dir, "/tmp/bitgate-bench-store-XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir), "mkdtemp failed");
}

/* The files a test makes: *.db and SQLite's -wal and -shm beside them. */
static void tmpdir_remove(void) {
  static const char *const names[] = {"v3.db", "v4.db", "a.db", "in.db", "out.db"};
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
  char path[160];
  size_t i, j;
  for (i = 0; i < sizeof names / sizeof *names; i++)
    for (j = 0; j < sizeof suffixes / sizeof *suffixes; j++) {
      snprintf(path, sizeof path, "%s/%s%s", g_dir, names[i], suffixes[j]);
      unlink(path);
    }
  rmdir(g_dir);
}

TestSuite(bench_store, .init = tmpdir_make, .fini = tmpdir_remove);

static const char *tmp_path(int slot, const char *name) {
  static char paths[4][160];
  snprintf(paths[slot], sizeof paths[slot], "%s/%s", g_dir, name);
  return paths[slot];
}

static store *store_open_ok(const char *path) {
  char err[512];
  store *s = NULL;
  cr_assert_eq(store_open(path, &s, err, sizeof err), 0, "store_open(%s): %s", path, err);
  return s;
}

/* One integer from a one-row query on s's connection. */
static long long sql_int(store *s, const char *sql) {
  sqlite3_stmt *st = NULL;
  long long v;
  cr_assert_eq(sqlite3_prepare_v2(store_sqlite(s), sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
               sqlite3_errmsg(store_sqlite(s)));
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
  v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static long long run_begin_ok(store *s, const char *host) {
  store_provenance p = {.suite = "bench", .shard = "1/1", .host = host, .command_line = "bitgate bench"};
  long long id = 0;
  cr_assert_eq(store_run_begin(s, &p, &id), 0, "%s", store_errmsg(s));
  return id;
}

/* A step line as cmd_bench.c records it. */
static store_bench_row row_step(const char *shape) {
  store_bench_row r = {.kernel = "csa4 decode step", .variant = "fast", .shape = shape, .timing = "held",
                       .median_us = 61.5,
                       .min_us = 58.25, .runs = 30, .oracle_ms = 812.75, .floor_fraction = -1};
  return r;
}

/* A file at schema version `version` (its first migrations run by hand), then seed_sql. */
static void file_at_version(const char *path, int version, const char *seed_sql) {
  sqlite3 *raw = NULL;
  int i;
  cr_assert_eq(sqlite3_open(path, &raw), SQLITE_OK);
  for (i = 0; i < version; i++)
    cr_assert_eq(sqlite3_exec(raw, store_schema_migrations[i], NULL, NULL, NULL), SQLITE_OK, "migration %d: %s", i,
                 sqlite3_errmsg(raw));
  cr_assert_eq(sqlite3_exec(raw, seed_sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(raw));
  sqlite3_close(raw);
}

Test(bench_store, migrates_from_version_3_keeping_data) {
  /* A version-3 file with a run, a case and a result: kept, and bench rows can join the old run. */
  const char *path = tmp_path(0, "v3.db");
  store_bench_row r = row_step("b=1 pos=4096");
  file_at_version(path, 3,
                  "INSERT INTO runs (id, started_at, suite) VALUES (7, 'then', 'gate');"
                  "INSERT INTO cases (id, op, family, spec) VALUES ('is.valid.00000001', 'IndexShare',"
                  " 'valid', 'op=is seed=1');"
                  "INSERT INTO results (run_id, case_id, lane, step, status, recorded_at, stage) VALUES"
                  " (7, 'is.valid.00000001', 'eager', 0, 'mismatch', 'then', 'Scores')");

  store *s = store_open_ok(path);
  cr_assert_eq(store_schema_version(s), STORE_SCHEMA_VERSION);
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM runs WHERE id = 7 AND suite = 'gate'"), 1);
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM cases WHERE spec = 'op=is seed=1'"), 1);
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM results WHERE run_id = 7 AND status = 'mismatch'"
                          " AND stage = 'Scores'"), 1);
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'bench_by_series'"
                          " AND tbl_name = 'bench'"), 1);
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM bench"), 0);
  cr_assert_eq(store_bench_put(s, 7, &r), 0, "%s", store_errmsg(s));
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM bench WHERE run_id = 7"), 1);
  store_close(s);
}

Test(bench_store, migrates_from_version_4_old_rows_timed_after_the_sync) {
  /* Every figure before schema 5 stopped its clock after the host's sync: they read 'sync'. */
  const char *path = tmp_path(0, "v4.db");
  store_bench_row r = row_step("b=1 pos=4096");
  file_at_version(path, 4,
                  "INSERT INTO runs (id, started_at, suite) VALUES (3, 'then', 'bench');"
                  "INSERT INTO bench (run_id, kernel, variant, shape, median_us, runs, recorded_at)"
                  " VALUES (3, 'csa4 decode step', 'fast', 'b=1 pos=4096', 110.5, 20, 'then')");

  store *s = store_open_ok(path);
  cr_assert_eq(store_schema_version(s), 5);
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM bench WHERE run_id = 3 AND timing = 'sync'"), 1);
  cr_assert_eq(store_bench_put(s, 3, &r), 0, "%s", store_errmsg(s));
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM bench WHERE run_id = 3 AND timing = 'held'"), 1);
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM pragma_index_info('bench_by_series') WHERE name = 'timing'"), 1,
               "a series is (kernel, variant, shape, timing)");
  cr_assert_neq(sqlite3_exec(store_sqlite(s),
                             "INSERT INTO bench (run_id, kernel, variant, shape, median_us, runs, recorded_at,"
                             " timing) VALUES (3, 'k', 'fast', 'b=1', 1, 20, 'now', 'wall')",
                             NULL, NULL, NULL),
                SQLITE_OK, "the schema's CHECK refuses an unknown timing");
  store_close(s);
}

Test(bench_store, put_round_trip) {
  store *s = store_open_ok(tmp_path(0, "a.db"));
  long long run = run_begin_ok(s, "h1");
  store_bench_row step = row_step("b=1 pos=65536");
  store_bench_row stage = {.kernel = "csa4 stage attention", .variant = "fast", .shape = "b=1 pos=65536",
                           .timing = "submit", .median_us = 12.5, .min_us = -1, .runs = 30, .oracle_ms = NAN, .floor_fraction = -1};
  sqlite3_stmt *st = NULL;
  step.floor_fraction = 0.125;
  cr_assert_eq(store_bench_put(s, run, &step), 0, "%s", store_errmsg(s));
  cr_assert_eq(store_bench_put(s, run, &stage), 0, "%s", store_errmsg(s));
  cr_assert_eq(sqlite3_prepare_v2(store_sqlite(s),
                                  "SELECT run_id, kernel, variant, shape, median_us, min_us, runs, oracle_ms,"
                                  " floor_fraction, recorded_at, timing FROM bench ORDER BY id",
                                  -1, &st, NULL),
               SQLITE_OK);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  cr_assert_eq(sqlite3_column_int64(st, 0), run);
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 1), "csa4 decode step");
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 2), "fast");
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 3), "b=1 pos=65536");
  cr_assert_eq(sqlite3_column_double(st, 4), 61.5); /* binary fractions: exact */
  cr_assert_eq(sqlite3_column_double(st, 5), 58.25);
  cr_assert_eq(sqlite3_column_int(st, 6), 30);
  cr_assert_eq(sqlite3_column_double(st, 7), 812.75);
  cr_assert_eq(sqlite3_column_double(st, 8), 0.125);
  cr_assert_eq(strlen((const char *)sqlite3_column_text(st, 9)), strlen("2024-05-01T12:00:00.123Z"));
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 10), "held");
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW); /* the stage: not measured is NULL */
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 10), "submit");
  cr_assert_eq(sqlite3_column_double(st, 4), 12.5);
  cr_assert_eq(sqlite3_column_type(st, 5), SQLITE_NULL);
  cr_assert_eq(sqlite3_column_type(st, 7), SQLITE_NULL);
  cr_assert_eq(sqlite3_column_type(st, 8), SQLITE_NULL);
  cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  store_close(s);
}

/* A row that breaks the contract, and what the message must say. */
static const struct {
  const char *id, *needle;
  const char *kernel, *variant, *shape, *timing;
  double median_us;
  int runs;
  long long run_delta; /* added to the real run id: 1 names no run */
} k_bad[] = {
  {"bench-bad-1.1", "kernel is required", NULL, "fast", "b=1", "held", 1, 30, 0},
  {"bench-bad-1.2", "kernel is required", "", "fast", "b=1", "held", 1, 30, 0},
  {"bench-bad-1.3", "kernel 'k': variant is required", "k", NULL, "b=1", "held", 1, 30, 0},
  {"bench-bad-1.4", "kernel 'k': shape is required", "k", "fast", "", "held", 1, 30, 0},
  {"bench-bad-1.5", "median_us -1 is not a time", "k", "fast", "b=1", "held", -1, 30, 0},
  {"bench-bad-1.6", "median_us nan is not a time", "k", "fast", "b=1", "held", NAN, 30, 0},
  {"bench-bad-1.7", "runs 0 is not a count", "k", "fast", "b=1", "held", 1, 0, 0},
  {"bench-bad-1.8", "no run with id", "k", "fast", "b=1", "held", 1, 30, 1},
  {"bench-bad-1.9", "kernel 'k': timing '(none)' is not 'held' or 'submit'", "k", "fast", "b=1", NULL, 1, 30, 0},
  {"bench-bad-1.10", "kernel 'k': timing 'wall' is not 'held' or 'submit'", "k", "fast", "b=1", "wall", 1, 30, 0},
};

Test(bench_store, bad_rows_refused_with_a_message) {
  const char *path = tmp_path(0, "a.db");
  store *s = store_open_ok(path);
  long long run = run_begin_ok(s, "h1");
  size_t i;
  cr_assert_neq(store_bench_put(s, run, NULL), 0);
  for (i = 0; i < sizeof k_bad / sizeof *k_bad; i++) {
    store_bench_row r = {.kernel = k_bad[i].kernel, .variant = k_bad[i].variant, .shape = k_bad[i].shape,
                         .timing = k_bad[i].timing, .median_us = k_bad[i].median_us, .min_us = -1, .runs = k_bad[i].runs, .oracle_ms = -1,
                         .floor_fraction = -1};
    cr_assert_neq(store_bench_put(s, run + k_bad[i].run_delta, &r), 0, "%s: accepted", k_bad[i].id);
    cr_assert_not_null(strstr(store_errmsg(s), k_bad[i].needle), "%s: message lacks '%s': %s", k_bad[i].id,
                       k_bad[i].needle, store_errmsg(s));
    cr_assert_not_null(strstr(store_errmsg(s), path), "%s: message does not name the file: %s", k_bad[i].id,
                       store_errmsg(s));
  }
  cr_assert_eq(sql_int(s, "SELECT count(*) FROM bench"), 0, "a refused row was stored");
  store_close(s);
}

Test(bench_store, db_merge_carries_bench_rows) {
  /* OUT already holds a run and a figure, so the input's run id and row ids must move. */
  const char *in_path = tmp_path(0, "in.db"), *out_path = tmp_path(1, "out.db");
  store *in = store_open_ok(in_path), *out = store_open_ok(out_path);
  store_merge_stats ms;
  store_bench_row r = row_step("b=1 pos=4096");
  long long in_run = run_begin_ok(in, "h-in"), out_run;
  cr_assert_eq(store_bench_put(in, in_run, &r), 0, "%s", store_errmsg(in));
  r.shape = "b=1 pos=65536";
  cr_assert_eq(store_bench_put(in, in_run, &r), 0, "%s", store_errmsg(in));
  store_close(in);
  out_run = run_begin_ok(out, "h-out");
  cr_assert_eq(store_bench_put(out, out_run, &r), 0, "%s", store_errmsg(out));

  cr_assert_eq(store_merge_check(out, in_path), 0, "%s", store_errmsg(out));
  cr_assert_eq(store_merge_copy(out, in_path, &ms), 0, "%s", store_errmsg(out));
  cr_assert_eq(ms.runs_new, 1);
  cr_assert_eq(ms.bench, 2);
  cr_assert_eq(sql_int(out, "SELECT count(*) FROM bench"), 3);
  cr_assert_eq(sql_int(out, "SELECT count(*) FROM bench b JOIN runs r ON r.id = b.run_id"
                            " WHERE r.host = 'h-in' AND r.id <> 1"), 2, "run_id not mapped");
  cr_assert_eq(sql_int(out, "SELECT count(*) FROM bench b JOIN runs r ON r.id = b.run_id WHERE r.host = 'h-in'"
                            " AND b.shape = 'b=1 pos=4096' AND b.id < (SELECT id FROM bench WHERE run_id = r.id"
                            " AND shape = 'b=1 pos=65536')"), 1, "input order not kept");
  cr_assert_eq(sql_int(out, "SELECT count(*) FROM bench b JOIN runs r ON r.id = b.run_id"
                            " WHERE r.host = 'h-in' AND b.timing = 'held'"), 2, "timing not carried");

  cr_assert_eq(store_merge_check(out, in_path), 0, "%s", store_errmsg(out));
  cr_assert_eq(store_merge_copy(out, in_path, &ms), 0, "%s", store_errmsg(out));
  cr_assert_eq(ms.bench, 0, "merging again copied bench rows");
  cr_assert_eq(sql_int(out, "SELECT count(*) FROM bench"), 3);
  store_close(out);
}
