/*
** test_store.c: the SQLite results store (harness/store.h).
**
** Every test works in its own mkdtemp directory under /tmp, removed by the
** fini hook.  Files the store must refuse are compared byte for byte before
** and after, and the kill test really SIGKILLs a writer mid-transaction.
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdtemp, fork, setuid */
#endif
#include "harness/store.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- Fixture: a temporary directory --------------------------------- */

static char g_dir[64];

static void tmpdir_make(void) {
  strcpy(g_dir, "/tmp/bitgate-store-XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir), "mkdtemp failed");
}

/* Removes path and, for a directory, everything under it. */
static void tree_remove(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *e;
    chmod(path, 0700);
    while (d && (e = readdir(d)) != NULL) {
      char sub[512];
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
      tree_remove(sub);
    }
    if (d) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static void tmpdir_remove(void) { tree_remove(g_dir); }

TestSuite(store, .init = tmpdir_make, .fini = tmpdir_remove);

/* A path inside the test's directory (static: valid until the next call with the same slot). */
static const char *tmp_path(int slot, const char *name) {
  static char paths[4][512];
  snprintf(paths[slot], sizeof paths[slot], "%s/%s", g_dir, name);
  return paths[slot];
}

/* ---- Helpers ---------------------------------------------------------- */

static void file_write(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot create %s", path);
  cr_assert_eq(fwrite(data, 1, n, f), n);
  cr_assert_eq(fclose(f), 0);
}

/* The whole file, malloc'd; *n its size. */
static unsigned char *file_read(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  size_t cap = 0;
  *n = 0;
  cr_assert_not_null(f, "cannot read %s", path);
  for (;;) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 4096;
      buf = realloc(buf, cap);
      cr_assert_not_null(buf);
    }
    size_t got = fread(buf + *n, 1, cap - *n, f);
    *n += got;
    if (got == 0) break;
  }
  fclose(f);
  return buf;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Runs a constant script on a fresh raw SQLite file (to build test inputs). */
static void raw_sqlite_make(const char *path, const char *script) {
  sqlite3 *db = NULL;
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(db, script, NULL, NULL, NULL), SQLITE_OK, "%s: %s", script,
               sqlite3_errmsg(db));
  sqlite3_close(db);
}

/* One integer from a one-row query. */
static long long sql_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  long long v;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
               sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
  v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* One text value from a one-row query, copied into buf. */
static const char *sql_text(sqlite3 *db, const char *sql, char *buf, size_t n) {
  sqlite3_stmt *st = NULL;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
               sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
  snprintf(buf, n, "%s", sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0)
                                                    : "(null)");
  sqlite3_finalize(st);
  return buf;
}

static store *store_open_ok(const char *path) {
  char err[512];
  store *s = NULL;
  int rc = store_open(path, &s, err, sizeof err);
  cr_assert_eq(rc, 0, "store_open(%s): %s", path, err);
  cr_assert_not_null(s);
  return s;
}

/*
** Opens path expecting a refusal: checks *out is NULL, the message names the
** path and contains `needle`, and the file's bytes did not change.
*/
static void store_open_refused(const char *path, const char *needle) {
  char err[512];
  store *s = (store *)&s; /* must be reset to NULL */
  size_t nBefore = 0, nAfter = 0;
  unsigned char *before = file_read(path, &nBefore);
  int rc = store_open(path, &s, err, sizeof err);
  unsigned char *after = file_read(path, &nAfter);
  cr_assert_neq(rc, 0, "store_open(%s) accepted a file it must refuse", path);
  cr_assert_null(s);
  cr_assert_not_null(strstr(err, path), "message does not name the path: %s", err);
  cr_assert_not_null(strstr(err, needle), "message lacks '%s': %s", needle, err);
  cr_assert_eq(nAfter, nBefore, "%s changed size: %zu -> %zu", path, nBefore, nAfter);
  cr_assert(memcmp(before, after, nBefore) == 0, "%s changed bytes", path);
  free(before);
  free(after);
}

static const store_provenance k_prov = {
  .git_rev = "0123abcd", .bitgate_version = "0.1.0", .oracle_version = 1,
  .numerics_version = 1, .kernel_hash = "k-hash", .nvrtc_version = "13.0",
  .nvrtc_options = "--fmad=false", .driver_version = 13000, .device_name = "NVIDIA H200",
  .compute_capability = "9.0", .host = "ci-1", .suite = "gate", .shard = "1/4",
  .command_line = "bitgate run --suite gate",
};

/* A passing row of one lane and step. */
static store_result result_pass(const char *case_id, const char *lane, int step) {
  store_result r = {.case_id = case_id, .lane = lane, .step = step, .status = "pass",
                    .oracle_ms = 1.5, .device_ms = 0.25, .ulp_distance = -1};
  return r;
}

/* ---- Opening and the schema ------------------------------------------ */

Test(store, fresh_create) {
  static const char *const names[] = {"absent.db", "empty.db"};
  file_write(tmp_path(1, "empty.db"), "", 0);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char buf[64];
    store *s = store_open_ok(tmp_path(0, names[i]));
    sqlite3 *db = store_sqlite(s);
    cr_assert_eq(store_schema_version(s), STORE_SCHEMA_VERSION, "%s", names[i]);
    cr_assert_eq(sql_int(db, "PRAGMA application_id"), STORE_APPLICATION_ID);
    cr_assert_eq(sql_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    cr_assert_str_eq(sql_text(db, "PRAGMA journal_mode", buf, sizeof buf), "wal");
    cr_assert_eq(sql_int(db, "PRAGMA busy_timeout"), 5000);
    cr_assert_eq(sql_int(db, "PRAGMA synchronous"), 1, "synchronous is not NORMAL");
    cr_assert_eq(sql_int(db, "PRAGMA foreign_keys"), 1);
    cr_assert_eq(sql_int(db, "SELECT count(*) FROM sqlite_schema WHERE name IN ('runs',"
                             "'cases','results','golden_payloads','results_by_case',"
                             "'results_by_run_status')"), 6);
    cr_assert_str_eq(store_errmsg(s), "");
    store_close(s);
  }
}

Test(store, reopen_keeps_data) {
  const char *path = tmp_path(0, "keep.db");
  long long run_id = 0, passed = -1, failed = -1, total = -1;
  store_result r = result_pass("is.valid.00000001", "device", 0);
  char buf[128];
  store *s = store_open_ok(path);
  cr_assert_eq(store_run_begin(s, &k_prov, &run_id), 0, "%s", store_errmsg(s));
  cr_assert_eq(store_case_put(s, r.case_id, "IndexShare", "valid", "op=is seed=1", run_id), 0);
  cr_assert_eq(store_results_commit(s, run_id, &r, 1), 0, "%s", store_errmsg(s));
  cr_assert_eq(store_run_end(s, run_id, "passed", 0), 0, "%s", store_errmsg(s));
  store_close(s);

  s = store_open_ok(path);
  sqlite3 *db = store_sqlite(s);
  cr_assert_eq(store_schema_version(s), STORE_SCHEMA_VERSION);
  cr_assert_eq(store_run_counts(s, run_id, &passed, &failed, &total), 0);
  cr_assert_eq(passed, 1);
  cr_assert_eq(failed, 0);
  cr_assert_eq(total, 1);
  cr_assert_str_eq(sql_text(db, "SELECT status FROM runs", buf, sizeof buf), "passed");
  cr_assert_str_eq(sql_text(db, "SELECT git_rev || '|' || bitgate_version || '|' ||"
                                " oracle_version || '|' || numerics_version || '|' ||"
                                " kernel_hash || '|' || nvrtc_version || '|' || nvrtc_options"
                                " || '|' || driver_version || '|' || device_name || '|' ||"
                                " compute_capability || '|' || host || '|' || suite || '|' ||"
                                " shard || '|' || command_line || '|' || exit_code FROM runs",
                            buf, sizeof buf),
                   "0123abcd|0.1.0|1|1|k-hash|13.0|--fmad=false|13000|NVIDIA H200|9.0|ci-1|"
                   "gate|1/4|bitgate run --suite gate|0");
  /* ISO-8601 UTC with milliseconds, and an end no earlier than the start. */
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM runs WHERE started_at GLOB"
                           " '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:"
                           "[0-9][0-9].[0-9][0-9][0-9]Z' AND ended_at >= started_at"),
               1);
  cr_assert_str_eq(sql_text(db, "SELECT spec FROM cases", buf, sizeof buf), "op=is seed=1");
  store_close(s);
}

Test(store, migrates_from_version_0) {
  const char *path = tmp_path(0, "v0.db");
  raw_sqlite_make(path, "PRAGMA application_id = 1650947121");
  store *s = store_open_ok(path);
  cr_assert_eq(store_schema_version(s), STORE_SCHEMA_VERSION);
  cr_assert_eq(sql_int(store_sqlite(s), "SELECT count(*) FROM sqlite_schema WHERE type ="
                                        " 'table' AND name IN ('runs','cases','results',"
                                        "'golden_payloads')"), 4);
  store_close(s);
}

Test(store, migrates_from_version_1_keeping_results) {
  /* A version-1 file with a result gains the frozen-oracle statuses (schema 2). */
  const char *path = tmp_path(0, "v1.db");
  store_result r = result_pass("is.valid.00000001", "oracle", 0);
  long long run_id = 0;
  raw_sqlite_make(path, store_schema_migrations[0]);
  raw_sqlite_make(path, "INSERT INTO runs (id, started_at) VALUES (1, 'then');"
                        "INSERT INTO cases (id, op, family, spec) VALUES ('is.valid.00000001', 'IndexShare', "
                        "'valid', 'op=is seed=1');"
                        "INSERT INTO results (run_id, case_id, lane, step, status, recorded_at) VALUES (1, "
                        "'is.valid.00000001', 'oracle', 0, 'pass', 'then')");
  store *s = store_open_ok(path);
  cr_assert_eq(store_schema_version(s), STORE_SCHEMA_VERSION);
  cr_assert_eq(sql_int(store_sqlite(s), "SELECT count(*) FROM results WHERE run_id = 1 AND status = 'pass'"), 1);
  cr_assert_eq(sql_int(store_sqlite(s), "SELECT count(*) FROM sqlite_schema WHERE name IN ('results_by_case',"
                                        "'results_by_run_status')"), 2);
  cr_assert_eq(store_run_begin(s, &k_prov, &run_id), 0, "%s", store_errmsg(s));
  r.status = "unpinned";
  cr_assert_eq(store_results_commit(s, run_id, &r, 1), 0, "%s", store_errmsg(s));
  r.status = "frozen_changed";
  r.step = 1;
  cr_assert_eq(store_results_commit(s, run_id, &r, 1), 0, "%s", store_errmsg(s));
  /* schema 3: the localised stage, NULL on the migrated row */
  r.status = "mismatch";
  r.step = 2;
  r.stage = "IndexScoring";
  cr_assert_eq(store_results_commit(s, run_id, &r, 1), 0, "%s", store_errmsg(s));
  cr_assert_eq(sql_int(store_sqlite(s), "SELECT count(*) FROM results WHERE stage = 'IndexScoring' AND step = 2"), 1);
  cr_assert_eq(sql_int(store_sqlite(s), "SELECT count(*) FROM results WHERE run_id = 1 AND stage IS NULL"), 1);
  store_close(s);
}

Test(store, failed_migration_changes_nothing) {
  /* Ours at version 0, but a table in the way: migration 1 fails midway. */
  const char *path = tmp_path(0, "v0-blocked.db");
  char err[512];
  store *s = NULL;
  raw_sqlite_make(path, "PRAGMA application_id = 1650947121; CREATE TABLE results (x)");
  cr_assert_neq(store_open(path, &s, err, sizeof err), 0);
  cr_assert_null(s);
  cr_assert_not_null(strstr(err, "migration to schema version 1 failed"), "%s", err);
  cr_assert_not_null(strstr(err, path), "%s", err);

  sqlite3 *db = NULL;
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
  cr_assert_eq(sql_int(db, "PRAGMA user_version"), 0);
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM sqlite_schema"), 1, "rollback was partial");
  sqlite3_close(db);
}

Test(store, newer_schema_refused) {
  const char *path = tmp_path(0, "v99.db");
  raw_sqlite_make(path, "PRAGMA application_id = 1650947121; PRAGMA user_version = 99;"
                        " CREATE TABLE future (x)");
  char needle[128];
  snprintf(needle, sizeof needle, "schema version 99 is newer than this bitgate knows (%d)", STORE_SCHEMA_VERSION);
  store_open_refused(path, needle);
}

Test(store, foreign_database_refused) {
  static const char *const scripts[] = {
    "CREATE TABLE t (x); INSERT INTO t VALUES (1)",         /* someone's data, id 0 */
    "PRAGMA application_id = 305419896",                    /* another app, no tables */
    "PRAGMA user_version = 7; CREATE TABLE u (y)",          /* versioned, id 0 */
    "PRAGMA application_id = 305419896; CREATE TABLE runs (id)",
    "PRAGMA journal_mode = WAL; CREATE TABLE w (z)",        /* foreign and in WAL mode */
  };
  for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
    char name[32];
    snprintf(name, sizeof name, "foreign-%zu.db", i);
    raw_sqlite_make(tmp_path(0, name), scripts[i]);
    store_open_refused(tmp_path(0, name), "not a bitgate database");
  }
  /* A refused rollback-journal file gains no WAL beside it. */
  cr_assert(!file_exists(tmp_path(1, "foreign-0.db-wal")));
}

Test(store, corrupt_file_refused) {
  unsigned char bytes[4096];
  memset(bytes, 0xA5, sizeof bytes);
  file_write(tmp_path(0, "a5.db"), bytes, sizeof bytes);
  store_open_refused(tmp_path(0, "a5.db"), "not a SQLite database");

  static const char text[] = "run,case,status\n1,is.valid.1f3c9a02,pass\n";
  file_write(tmp_path(0, "text.db"), text, sizeof text - 1);
  store_open_refused(tmp_path(0, "text.db"), "not a SQLite database");

  memcpy(bytes, "SQLite format 3", 16); /* the right magic, then garbage */
  file_write(tmp_path(0, "magic.db"), bytes, sizeof bytes);
  store_open_refused(tmp_path(0, "magic.db"), "not a SQLite database");
  cr_assert(!file_exists(tmp_path(1, "a5.db-wal")));
}

Test(store, unopenable_path_named) {
  const char *paths[] = {g_dir, tmp_path(0, "missing-dir/x.db")};
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
    char err[512];
    store *s = (store *)&s;
    cr_assert_neq(store_open(paths[i], &s, err, sizeof err), 0, "%s", paths[i]);
    cr_assert_null(s);
    cr_assert_not_null(strstr(err, paths[i]), "message does not name the path: %s", err);
    cr_assert_not_null(strstr(err, "unable to open database file"), "%s", err);
  }
  char err[8];
  store *s = NULL;
  cr_assert_neq(store_open("", &s, err, sizeof err), 0);
  cr_assert_neq(store_open(g_dir, &s, err, sizeof err), 0, "a short buffer is fine");
}

/*
** A read-only file.  Root ignores file modes, so the open runs in a child
** that drops to nobody when needed; the message comes back through a pipe.
*/
Test(store, readonly_file_named) {
  const char *path = tmp_path(0, "ro.db");
  char err[512] = "";
  int fds[2], status = 0;
  file_write(path, "", 0);
  cr_assert_eq(chmod(path, 0444), 0);
  cr_assert_eq(chmod(g_dir, 0755), 0);
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    store *s = NULL;
    char msg[512] = "";
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(2);
    int rc = store_open(path, &s, msg, sizeof msg);
    if (write(fds[1], msg, strlen(msg) + 1) < 0) _exit(3);
    store_close(s);
    _exit(rc != 0 ? 0 : 1);
  }
  close(fds[1]);
  cr_assert(read(fds[0], err, sizeof err - 1) >= 0);
  close(fds[0]);
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a read-only file was opened: %s",
            err);
  cr_assert_not_null(strstr(err, path), "%s", err);
  cr_assert_not_null(strstr(err, "readonly"), "%s", err);
}

/* ---- Results ---------------------------------------------------------- */

Test(store, results_round_trip) {
  store *s = store_open_ok(tmp_path(0, "results.db"));
  sqlite3 *db = store_sqlite(s);
  long long run_id = 0;
  const char *cid = "is.valid.1f3c9a02";
  store_result rows[3] = {
    result_pass(cid, "eager", 0),
    {.case_id = cid, .lane = "eager", .step = 1, .status = "mismatch", .tensor = "output",
     .flat_offset = 109, .coords = "[0,3,1,7]", .expected_hex = "0x3f800000",
     .actual_hex = "0x3f800001", .ulp_distance = 1, .has_mismatch = 1, .mismatch_count = 12,
     .nan_equivalent_count = 3, .oracle_ms = 2.0, .device_ms = 0.5, .message = "first of 12"},
    {.case_id = cid, .lane = "graph", .step = 0, .status = "mismatch", .tensor = "indices",
     .flat_offset = 4, .coords = "[0,4]", .expected_hex = "0x00000002",
     .actual_hex = "0x00000003", .ulp_distance = -1, .has_mismatch = 1, .mismatch_count = 1,
     .oracle_ms = -1.0, .device_ms = NAN},
  };
  cr_assert_eq(store_run_begin(s, &k_prov, &run_id), 0);
  cr_assert_eq(store_case_put(s, cid, "IndexShare", "valid", "op=is seed=7", run_id), 0);
  cr_assert_eq(store_results_commit(s, run_id, rows, 3), 0, "%s", store_errmsg(s));

  sqlite3_stmt *st = NULL;
  cr_assert_eq(sqlite3_prepare_v2(db, "SELECT lane, step, status, tensor, flat_offset, coords,"
                                      " expected_hex, actual_hex, ulp_distance, mismatch_count,"
                                      " nan_equivalent_count, oracle_ms, device_ms, message,"
                                      " recorded_at, run_id FROM results ORDER BY lane, step",
                                  -1, &st, NULL),
               SQLITE_OK);
  /* eager/0: a pass, so no first-mismatch columns. */
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 2), "pass");
  for (int c = 3; c <= 8; c++) cr_assert_eq(sqlite3_column_type(st, c), SQLITE_NULL, "col %d", c);
  cr_assert_eq(sqlite3_column_double(st, 11), 1.5);
  cr_assert_eq(sqlite3_column_double(st, 12), 0.25);
  cr_assert_eq(sqlite3_column_type(st, 13), SQLITE_NULL);
  cr_assert_eq(sqlite3_column_bytes(st, 14), 24, "recorded_at is ISO-8601 with ms");
  cr_assert_eq(sqlite3_column_int64(st, 15), run_id);
  /* eager/1: every mismatch detail. */
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  cr_assert_eq(sqlite3_column_int(st, 1), 1);
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 2), "mismatch");
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 3), "output");
  cr_assert_eq(sqlite3_column_int64(st, 4), 109);
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 5), "[0,3,1,7]");
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 6), "0x3f800000");
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 7), "0x3f800001");
  cr_assert_eq(sqlite3_column_type(st, 8), SQLITE_INTEGER);
  cr_assert_eq(sqlite3_column_int64(st, 8), 1);
  cr_assert_eq(sqlite3_column_int64(st, 9), 12);
  cr_assert_eq(sqlite3_column_int64(st, 10), 3);
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 13), "first of 12");
  /* graph/0: no ULP distance for an index tensor, untimed lanes are NULL. */
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "graph");
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 3), "indices");
  cr_assert_eq(sqlite3_column_type(st, 8), SQLITE_NULL, "ulp_distance must be NULL");
  cr_assert_eq(sqlite3_column_type(st, 11), SQLITE_NULL);
  cr_assert_eq(sqlite3_column_type(st, 12), SQLITE_NULL);
  cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  store_close(s);
}

Test(store, results_key_is_unique) {
  store *s = store_open_ok(tmp_path(0, "unique.db"));
  sqlite3 *db = store_sqlite(s);
  long long run_id = 0, other_run = 0;
  store_result dup[2] = {result_pass("is.a.1", "eager", 2), result_pass("is.a.1", "eager", 2)};
  store_result one = result_pass("is.a.1", "eager", 0);
  cr_assert_eq(store_run_begin(s, NULL, &run_id), 0);
  cr_assert_eq(store_run_begin(s, NULL, &other_run), 0);
  cr_assert_eq(store_case_put(s, "is.a.1", "IndexShare", "a", "spec-a", run_id), 0);

  /* Twice within one case's commit: the whole commit is refused. */
  cr_assert_neq(store_results_commit(s, run_id, dup, 2), 0);
  cr_assert_not_null(strstr(store_errmsg(s), "UNIQUE constraint failed"), "%s", store_errmsg(s));
  cr_assert_not_null(strstr(store_errmsg(s), "case is.a.1, lane eager, step 2"), "%s",
                     store_errmsg(s));
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM results"), 0, "a refused commit left rows");

  /* Twice across commits of one run; the same key in another run is fine. */
  cr_assert_eq(store_results_commit(s, run_id, &one, 1), 0);
  cr_assert_neq(store_results_commit(s, run_id, &one, 1), 0);
  cr_assert_eq(store_results_commit(s, other_run, &one, 1), 0, "%s", store_errmsg(s));
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM results"), 2);

  /* Other rows the schema refuses: an unknown status, an unknown case, no lane. */
  store_result bad_status = result_pass("is.a.1", "eager", 5);
  store_result bad_case = result_pass("is.nope.0", "eager", 0);
  store_result no_lane = result_pass("is.a.1", NULL, 6);
  bad_status.status = "passed";
  cr_assert_neq(store_results_commit(s, run_id, &bad_status, 1), 0);
  cr_assert_not_null(strstr(store_errmsg(s), "CHECK constraint failed"), "%s", store_errmsg(s));
  cr_assert_neq(store_results_commit(s, run_id, &bad_case, 1), 0);
  cr_assert_not_null(strstr(store_errmsg(s), "FOREIGN KEY"), "%s", store_errmsg(s));
  cr_assert_neq(store_results_commit(s, run_id, &no_lane, 1), 0);
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM results"), 2);
  cr_assert_eq(store_results_commit(s, run_id, NULL, 0), 0, "nothing to commit is fine");
  store_close(s);
}

Test(store, run_counts_and_end) {
  static const char *const statuses[] = {"pass", "pass", "mismatch", "skipped",
                                         "crash", "unavailable", "waived", "nondeterministic"};
  enum { N = sizeof statuses / sizeof *statuses };
  store *s = store_open_ok(tmp_path(0, "counts.db"));
  store_result rows[N];
  long long run_id = 0, passed = 0, failed = 0, total = 0;
  cr_assert_eq(store_run_begin(s, &k_prov, &run_id), 0);
  cr_assert_eq(store_case_put(s, "csa.r4.0000beef", "CompressedSparseAttention", "r4", "csa",
                              run_id), 0);
  for (int i = 0; i < N; i++) {
    rows[i] = result_pass("csa.r4.0000beef", "eager", i);
    rows[i].status = statuses[i];
  }
  cr_assert_eq(store_results_commit(s, run_id, rows, N), 0, "%s", store_errmsg(s));
  cr_assert_eq(store_run_counts(s, run_id, &passed, &failed, &total), 0);
  cr_assert_eq(passed, 2);
  cr_assert_eq(failed, 3);
  cr_assert_eq(total, N);
  cr_assert_eq(store_run_counts(s, run_id + 100, &passed, NULL, &total), 0);
  cr_assert_eq(passed + total, 0);

  cr_assert_neq(store_run_end(s, run_id + 100, "failed", 1), 0);
  cr_assert_not_null(strstr(store_errmsg(s), "no run with id"), "%s", store_errmsg(s));
  cr_assert_neq(store_run_end(s, run_id, "running", 0), 0);
  cr_assert_neq(store_run_end(s, run_id, "bogus", 0), 0);
  cr_assert_eq(store_run_end(s, run_id, "failed", 1), 0, "%s", store_errmsg(s));
  cr_assert_eq(sql_int(store_sqlite(s), "SELECT exit_code FROM runs WHERE status = 'failed'"),
               1);
  store_close(s);
}

Test(store, case_put_checks_spec) {
  store *s = store_open_ok(tmp_path(0, "cases.db"));
  sqlite3 *db = store_sqlite(s);
  long long run1 = 0, run2 = 0;
  const char *tricky = "is.x'); DROP TABLE runs; --.00000000"; /* bound, never spliced */
  cr_assert_eq(store_run_begin(s, NULL, &run1), 0);
  cr_assert_eq(store_run_begin(s, NULL, &run2), 0);
  cr_assert_eq(store_case_put(s, tricky, "IndexShare", "x", "spec 'one'", run1), 0);
  cr_assert_eq(store_case_put(s, tricky, "IndexShare", "x", "spec 'one'", run2), 0);
  cr_assert_neq(store_case_put(s, tricky, "IndexShare", "x", "spec two", run2), 0);
  cr_assert_not_null(strstr(store_errmsg(s), "already stored with another spec"), "%s",
                     store_errmsg(s));
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM cases"), 1);
  cr_assert_eq(sql_int(db, "SELECT first_run_id FROM cases"), run1, "first run is kept");
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'runs'"), 1);
  store_close(s);
}

/* ---- Golden payloads --------------------------------------------------- */

Test(store, golden_round_trip) {
  enum { N = 64 * 1024 };
  store *s = store_open_ok(tmp_path(0, "golden.db"));
  sqlite3 *db = store_sqlite(s);
  unsigned char *smooth = malloc(N), *noise = malloc(N);
  void *got = NULL;
  size_t n = 0;
  unsigned x = 2463534242u;
  long long run_id = 0;
  cr_assert(smooth && noise);
  for (int i = 0; i < N; i++) {
    smooth[i] = (unsigned char)((i / 4) % 7); /* compressible */
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;  /* xorshift32: incompressible */
    noise[i] = (unsigned char)x;
  }
  cr_assert_eq(store_run_begin(s, NULL, &run_id), 0);
  cr_assert_eq(store_case_put(s, "csa.r128.00c0ffee", "CompressedSparseAttention", "r128",
                              "csa r128", run_id), 0);
  cr_assert_eq(store_golden_put(s, "csa.r128.00c0ffee", 0, "Selection", "topk", "oracle", 1,
                                "u8", "[65536]", smooth, N, "d-smooth", run_id), 0,
               "%s", store_errmsg(s));
  cr_assert_eq(store_golden_put(s, "csa.r128.00c0ffee", 0, "Writeback", "out", "oracle", 1,
                                "u8", "[65536]", noise, N, "d-noise", run_id), 0);
  cr_assert_eq(store_golden_put(s, "csa.r128.00c0ffee", 1, "Writeback", "out", "oracle", 1,
                                "u8", "[0]", NULL, 0, "d-empty", run_id), 0);
  cr_assert_eq(sql_int(db, "SELECT raw_bytes FROM golden_payloads WHERE stage = 'Selection'"), N);
  long long nBlob = sql_int(db, "SELECT length(payload) FROM golden_payloads"
                                " WHERE stage = 'Selection'");
  cr_assert(nBlob > 0 && nBlob < N / 20, "compressible payload stored in %lld bytes", nBlob);

  cr_assert_eq(store_golden_get(s, "csa.r128.00c0ffee", 0, "Selection", "topk", "oracle", 1,
                                &got, &n), 0, "%s", store_errmsg(s));
  cr_assert_eq(n, (size_t)N);
  cr_assert(memcmp(got, smooth, N) == 0, "decompressed bytes differ");
  free(got);
  cr_assert_eq(store_golden_get(s, "csa.r128.00c0ffee", 0, "Writeback", "out", "oracle", 1,
                                &got, &n), 0);
  cr_assert(n == N && memcmp(got, noise, N) == 0);
  free(got);
  cr_assert_eq(store_golden_get(s, "csa.r128.00c0ffee", 1, "Writeback", "out", "oracle", 1,
                                &got, &n), 0);
  cr_assert_eq(n, 0);
  free(got);
  /* Absent: another oracle version, source or stage. */
  cr_assert_eq(store_golden_get(s, "csa.r128.00c0ffee", 0, "Selection", "topk", "oracle", 2,
                                &got, &n), 1);
  cr_assert_null(got);
  cr_assert_eq(store_golden_get(s, "csa.r128.00c0ffee", 0, "Selection", "topk", "device", 1,
                                &got, &n), 1);
  free(smooth);
  free(noise);
  store_close(s);
}

/*
** Payloads above the sampling size (store_golden.c): a noisy one is deflated
** with Huffman coding alone, a smooth one at level 1, and one whose start is
** smooth and whose rest is noise by what its start says.  Each reads back
** byte for byte, and none grows much beyond its raw size.
*/
Test(store, large_golden_payloads_read_back_whatever_their_deflate) {
  enum { N = 3 * 1024 * 1024 + 5 };
  store *s = store_open_ok(tmp_path(0, "golden-large.db"));
  sqlite3 *db = store_sqlite(s);
  unsigned char *pay[3];
  static const char *const stage[3] = {"Noise", "Smooth", "Mixed"};
  unsigned x = 88675123u;
  long long run_id = 0;
  int k, i;
  for (k = 0; k < 3; k++) cr_assert_not_null(pay[k] = malloc(N));
  for (i = 0; i < N; i++) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    pay[0][i] = (unsigned char)x;
    pay[1][i] = (unsigned char)((i / 8) % 11);
    pay[2][i] = i < 128 * 1024 ? pay[1][i] : pay[0][i];
  }
  cr_assert_eq(store_run_begin(s, NULL, &run_id), 0);
  cr_assert_eq(store_case_put(s, "csa.r4.0badcafe", "CompressedSparseAttention", "r4", "csa r4", run_id), 0);
  for (k = 0; k < 3; k++)
    cr_assert_eq(store_golden_put(s, "csa.r4.0badcafe", 0, stage[k], "t", "oracle", 1, "u8", "[3145733]", pay[k], N,
                                  stage[k], run_id), 0, "%s: %s", stage[k], store_errmsg(s));
  cr_assert_lt(sql_int(db, "SELECT length(payload) FROM golden_payloads WHERE stage = 'Noise'"), N + N / 100);
  cr_assert_lt(sql_int(db, "SELECT length(payload) FROM golden_payloads WHERE stage = 'Smooth'"), N / 20);
  cr_assert_lt(sql_int(db, "SELECT length(payload) FROM golden_payloads WHERE stage = 'Mixed'"), N + N / 100);
  for (k = 0; k < 3; k++) {
    void *got = NULL;
    size_t n = 0;
    cr_assert_eq(store_golden_get(s, "csa.r4.0badcafe", 0, stage[k], "t", "oracle", 1, &got, &n), 0, "%s: %s",
                 stage[k], store_errmsg(s));
    cr_assert(n == (size_t)N && memcmp(got, pay[k], N) == 0, "%s: the bytes read back differ", stage[k]);
    free(got);
    free(pay[k]);
  }
  store_close(s);
}

Test(store, golden_replace_rules) {
  store *s = store_open_ok(tmp_path(0, "golden-rules.db"));
  const char *cid = "csa.r4.00000042";
  const unsigned char a[] = {1, 2, 3, 4}, b[] = {9, 9, 9};
  void *got = NULL;
  size_t n = 0;
  cr_assert_eq(store_case_put(s, cid, "CompressedSparseAttention", "r4", "csa r4", 0), 0);
  for (int i = 0; i < 2; i++) {
    const char *source = i ? "device" : "oracle";
    cr_assert_eq(store_golden_put(s, cid, 0, "IndexScoring", "scores", source, 1, "f32", "[1]",
                                  a, sizeof a, "d-a", 0), 0, "%s", store_errmsg(s));
    cr_assert_eq(store_golden_put(s, cid, 0, "IndexScoring", "scores", source, 1, "f32", "[1]",
                                  a, sizeof a, "d-a", 0), 0, "same digest again is a no-op");
  }
  /* A frozen oracle golden is never silently replaced... */
  cr_assert_neq(store_golden_put(s, cid, 0, "IndexScoring", "scores", "oracle", 1, "u8", "[3]",
                                 b, sizeof b, "d-b", 0), 0);
  cr_assert_not_null(strstr(store_errmsg(s), "refusing to replace it"), "%s", store_errmsg(s));
  cr_assert_eq(store_golden_get(s, cid, 0, "IndexScoring", "scores", "oracle", 1, &got, &n), 0);
  cr_assert(n == sizeof a && memcmp(got, a, n) == 0);
  free(got);
  /* ...but the latest device capture wins. */
  cr_assert_eq(store_golden_put(s, cid, 0, "IndexScoring", "scores", "device", 1, "u8", "[3]",
                                b, sizeof b, "d-b", 0), 0, "%s", store_errmsg(s));
  cr_assert_eq(store_golden_get(s, cid, 0, "IndexScoring", "scores", "device", 1, &got, &n), 0);
  cr_assert(n == sizeof b && memcmp(got, b, n) == 0);
  free(got);
  cr_assert_neq(store_golden_put(s, cid, 0, "IndexScoring", "scores", "gpu", 1, "u8", "[3]", b,
                                 sizeof b, "d-b", 0), 0, "source must be oracle or device");
  store_close(s);
}

/* ---- Kill safety ------------------------------------------------------- */

static void kill_self(void) { raise(SIGKILL); }

/*
** A child commits five cases one by one and is SIGKILLed inside the sixth
** case's transaction (every row inserted, COMMIT not yet run).  The five
** must survive, the sixth must vanish, and the file must be intact.
*/
Test(store, killed_run_keeps_finished_cases) {
  const char *path = tmp_path(0, "killed.db");
  int status = 0;
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    char err[512], cid[32];
    store *s = NULL;
    long long run_id = 0;
    if (store_open(path, &s, err, sizeof err) || store_run_begin(s, &k_prov, &run_id)) _exit(3);
    for (int i = 0; i < 6; i++) {
      snprintf(cid, sizeof cid, "is.kill.%08d", i);
      store_result rows[2] = {result_pass(cid, "eager", 0), result_pass(cid, "graph", 0)};
      if (store_case_put(s, cid, "IndexShare", "kill", cid, run_id)) _exit(4);
      if (i == 5) store_test_hook_before_commit = kill_self;
      if (store_results_commit(s, run_id, rows, 2)) _exit(5);
    }
    _exit(6); /* the hook did not fire */
  }
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status 0x%x", status);

  char buf[64];
  store *s = store_open_ok(path);
  sqlite3 *db = store_sqlite(s);
  cr_assert_str_eq(sql_text(db, "PRAGMA integrity_check", buf, sizeof buf), "ok");
  cr_assert_eq(sql_int(db, "SELECT count(DISTINCT case_id) FROM results"), 5);
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM results"), 10);
  cr_assert_eq(sql_int(db, "SELECT count(*) FROM results WHERE case_id = 'is.kill.00000005'"),
               0);
  cr_assert_str_eq(sql_text(db, "SELECT status FROM runs", buf, sizeof buf), "running");
  store_close(s);
}
