/*
** store.c: opening, verifying and migrating a store, and writing runs, cases
** and results.  The schema is in store_schema.c, golden payloads in
** store_golden.c; the contracts are in store.h.
**
** Opening is ordered so that a file which is not ours is never written:
**   1. verify through a read-only connection (application_id, user_version,
**      schema objects);
**   2. open read-write, set the busy timeout, then WAL (which writes the
**      header), synchronous=NORMAL and foreign keys;
**   3. BEGIN IMMEDIATE, verify again (another process may have migrated in
**      between), apply the missing migrations, COMMIT.
*/
#include "harness/store.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store {
  sqlite3 *db;
  char *zPath;
  char zErr[512];
};

void (*store_test_hook_before_commit)(void) = NULL;

/* ---- Errors and small helpers ----------------------------------------- */

/* Formats "store 'PATH': MESSAGE" into zBuf, with newlines turned to spaces. */
static void store_format(char *zBuf, size_t nBuf, const char *zPath, const char *fmt,
                         va_list ap) {
  int n = snprintf(zBuf, nBuf, "store '%s': ", zPath);
  if (n >= 0 && (size_t)n < nBuf) vsnprintf(zBuf + n, nBuf - (size_t)n, fmt, ap);
  for (char *z = zBuf; *z; z++) {
    if (*z == '\n' || *z == '\r') *z = ' '; /* keep it one line */
  }
}

int store_fail(store *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  store_format(s->zErr, sizeof s->zErr, s->zPath, fmt, ap);
  va_end(ap);
  return -1;
}

int store_fail_sqlite(store *s, int rc, const char *what) {
  const char *zMsg = s->db && sqlite3_errcode(s->db) != SQLITE_OK ? sqlite3_errmsg(s->db)
                                                                   : sqlite3_errstr(rc);
  store_fail(s, "%s: %s", what, zMsg);
  return rc;
}

int store_prepare(store *s, const char *sql, sqlite3_stmt **stmt) {
  return sqlite3_prepare_v2(s->db, sql, -1, stmt, NULL);
}

int store_step_done(sqlite3_stmt *stmt) {
  int rc = sqlite3_step(stmt);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int store_tx_begin(store *s) { return sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL); }

int store_tx_commit(store *s) { return sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL); }

void store_tx_rollback(store *s) {
  if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Runs a constant one-row, one-column query (a PRAGMA) into *pVal. */
static int store_query_int(sqlite3 *db, const char *zSql, long long *pVal) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &st, NULL);
  if (rc) goto cleanup;
  rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) goto cleanup;
  *pVal = sqlite3_column_int64(st, 0);
  rc = SQLITE_OK;
cleanup:
  sqlite3_finalize(st);
  return rc;
}

/* ---- Opening ---------------------------------------------------------- */

/*
** Decides from what db shows, without writing, whether the file may be used.
** Accepts a bitgate file no newer than this binary (*pVersion = its schema
** version) and a blank one: no schema objects, application_id and
** user_version 0 (*pVersion = 0).  Refuses anything else with -1 and a
** message.  Reading a file that is not SQLite at all fails here too.
*/
static int store_verify(store *s, sqlite3 *db, int *pVersion) {
  long long appId = 0, version = 0, nObject = 0;
  int rc = store_query_int(db, "PRAGMA application_id", &appId);
  if (!rc) rc = store_query_int(db, "PRAGMA user_version", &version);
  if (!rc) rc = store_query_int(db, "SELECT count(*) FROM sqlite_schema", &nObject);
  if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT) {
    return store_fail(s, "refused: not a SQLite database, or a corrupt one (%s); "
                      "the file was left untouched", sqlite3_errmsg(db));
  }
  if (rc) return store_fail(s, "cannot read: %s", sqlite3_errmsg(db));
  if (appId == STORE_APPLICATION_ID && version > STORE_SCHEMA_VERSION) {
    return store_fail(s, "refused: its schema version %lld is newer than this bitgate "
                      "knows (%d); use a newer bitgate. The file was left untouched",
                      version, STORE_SCHEMA_VERSION);
  }
  if (appId == STORE_APPLICATION_ID && version >= 0) {
    *pVersion = (int)version;
    return 0;
  }
  if (appId == 0 && version == 0 && nObject == 0) { /* blank: empty or new file */
    *pVersion = 0;
    return 0;
  }
  return store_fail(s, "refused: not a bitgate database (application_id 0x%08llx, "
                    "user_version %lld, %lld schema objects); the file was left untouched",
                    (unsigned long long)appId & 0xffffffffu, version, nObject);
}

/*
** Step 1: verification through a read-only connection, so that nothing,
** not even a hot-journal rollback, can touch a file we have not accepted.
** A path that cannot be opened read-only (absent, a directory, ...) passes
** here: the read-write open creates it or reports the error.
*/
static int store_open_verify(store *s) {
  sqlite3 *db = NULL;
  int version = 0;
  int rc = sqlite3_open_v2(s->zPath, &db, SQLITE_OPEN_READONLY, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(db, STORE_BUSY_TIMEOUT_MS);
    rc = store_verify(s, db, &version);
  } else {
    rc = SQLITE_OK;
  }
  sqlite3_close(db);
  return rc;
}

/* Step 2: the read-write connection and its settings. */
static int store_open_connect(store *s) {
  sqlite3_stmt *st = NULL;
  const char *zWhat = "cannot open";
  int rc = sqlite3_open_v2(s->zPath, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc) goto cleanup;
  if (sqlite3_db_readonly(s->db, "main") == 1) { /* SQLite fell back to read-only */
    rc = store_fail(s, "cannot write: %s", sqlite3_errstr(SQLITE_READONLY));
    goto cleanup;
  }
  rc = sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
  if (rc) goto cleanup;
  zWhat = "cannot enable WAL";
  rc = store_prepare(s, "PRAGMA journal_mode = WAL", &st);
  if (rc) goto cleanup;
  rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) goto cleanup;
  if (strcmp((const char *)sqlite3_column_text(st, 0), "wal") != 0) {
    rc = store_fail(s, "cannot enable WAL: journal mode stayed '%s'",
                    (const char *)sqlite3_column_text(st, 0));
    goto cleanup;
  }
  zWhat = "cannot configure";
  rc = sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", NULL,
                    NULL, NULL);
cleanup:
  if (rc > 0) store_fail_sqlite(s, rc, zWhat);
  sqlite3_finalize(st);
  return rc;
}

/* Step 3: verify again under the write lock and apply missing migrations. */
static int store_open_migrate(store *s) {
  int version = 0, v = 0;
  long long got = 0;
  int rc = store_tx_begin(s);
  if (rc) goto cleanup;
  rc = store_verify(s, s->db, &version);
  if (rc) goto cleanup;
  for (v = version; v < STORE_SCHEMA_VERSION; v++) {
    rc = sqlite3_exec(s->db, store_schema_migrations[v], NULL, NULL, NULL);
    if (rc) goto cleanup;
    rc = store_query_int(s->db, "PRAGMA user_version", &got);
    if (rc) goto cleanup;
    if (got != v + 1) { /* a migration must end by setting its version */
      fprintf(stderr, "%s:%d: store migration %d left user_version %lld\n", __FILE__,
              __LINE__, v, got);
      abort();
    }
  }
  rc = store_tx_commit(s);
cleanup:
  if (rc > 0) {
    char zWhat[64];
    snprintf(zWhat, sizeof zWhat, "migration to schema version %d failed", v + 1);
    store_fail_sqlite(s, rc, zWhat);
  }
  if (rc) store_tx_rollback(s);
  return rc;
}

int store_open(const char *path, store **out, char *err, size_t err_len) {
  store *s = NULL;
  int rc = -1;
  *out = NULL;
  if (err_len) err[0] = '\0';
  if (!path || !path[0]) {
    snprintf(err, err_len, "store: empty database path");
    return -1;
  }
  s = calloc(1, sizeof *s);
  if (s) s->zPath = malloc(strlen(path) + 1);
  if (!s || !s->zPath) {
    snprintf(err, err_len, "store '%s': out of memory", path);
    goto cleanup;
  }
  memcpy(s->zPath, path, strlen(path) + 1);
  rc = store_open_verify(s);
  if (!rc) rc = store_open_connect(s);
  if (!rc) rc = store_open_migrate(s);
  if (rc) snprintf(err, err_len, "%s", s->zErr);
cleanup:
  if (rc) {
    store_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

void store_close(store *s) {
  if (!s) return;
  sqlite3_close(s->db); /* every statement is finalized where it was prepared */
  free(s->zPath);
  free(s);
}

const char *store_errmsg(const store *s) { return s ? s->zErr : "store: no store"; }

int store_schema_version(store *s) {
  long long version = -1;
  return store_query_int(s->db, "PRAGMA user_version", &version) ? -1 : (int)version;
}

struct sqlite3 *store_sqlite(store *s) { return s->db; }

/* ---- Runs and cases --------------------------------------------------- */

/* Binds run_id, or NULL when it is not positive (no run). */
static int store_bind_run(sqlite3_stmt *st, int i, long long run_id) {
  return run_id > 0 ? sqlite3_bind_int64(st, i, run_id) : sqlite3_bind_null(st, i);
}

int store_run_begin(store *s, const store_provenance *p, long long *run_id) {
  static const store_provenance unknown;
  static const char zSql[] =
    "INSERT INTO runs (started_at, status, git_rev, bitgate_version, oracle_version,"
    " numerics_version, kernel_hash, nvrtc_version, nvrtc_options, driver_version,"
    " device_name, compute_capability, host, suite, shard, command_line)"
    " VALUES (" STORE_NOW_SQL ", 'running', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
    " ?11, ?12, ?13, ?14)";
  sqlite3_stmt *st = NULL;
  int rc;
  if (!p) p = &unknown;
  rc = store_prepare(s, zSql, &st);
  if (!rc) rc = sqlite3_bind_text(st, 1, p->git_rev, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 2, p->bitgate_version, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_int(st, 3, p->oracle_version);
  if (!rc) rc = sqlite3_bind_int(st, 4, p->numerics_version);
  if (!rc) rc = sqlite3_bind_text(st, 5, p->kernel_hash, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 6, p->nvrtc_version, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 7, p->nvrtc_options, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_int(st, 8, p->driver_version);
  if (!rc) rc = sqlite3_bind_text(st, 9, p->device_name, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 10, p->compute_capability, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 11, p->host, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 12, p->suite, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 13, p->shard, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 14, p->command_line, -1, SQLITE_STATIC);
  if (!rc) rc = store_step_done(st);
  if (!rc) *run_id = sqlite3_last_insert_rowid(s->db);
  if (rc > 0) store_fail_sqlite(s, rc, "cannot begin run");
  sqlite3_finalize(st);
  return rc;
}

int store_run_end(store *s, long long run_id, const char *status, int exit_code) {
  static const char zSql[] =
    "UPDATE runs SET ended_at = " STORE_NOW_SQL ", status = ?2, exit_code = ?3 WHERE id = ?1";
  sqlite3_stmt *st = NULL;
  int rc = 0;
  if (status && strcmp(status, "running") == 0) { /* the schema allows it; an end does not */
    rc = store_fail(s, "cannot end run %lld with status 'running'", run_id);
  }
  if (!rc) rc = store_prepare(s, zSql, &st);
  if (!rc) rc = sqlite3_bind_int64(st, 1, run_id);
  if (!rc) rc = sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_int(st, 3, exit_code);
  if (!rc) rc = store_step_done(st);
  if (!rc && sqlite3_changes(s->db) == 0) rc = store_fail(s, "no run with id %lld", run_id);
  if (rc > 0) store_fail_sqlite(s, rc, "cannot end run");
  sqlite3_finalize(st);
  return rc;
}

/* The text columns of runs that store_run_read copies, and where they go in store_provenance. */
static const struct {
  const char *zCol;
  size_t off;
} store_run_texts[] = {
  {"git_rev", offsetof(store_provenance, git_rev)},
  {"bitgate_version", offsetof(store_provenance, bitgate_version)},
  {"kernel_hash", offsetof(store_provenance, kernel_hash)},
  {"nvrtc_version", offsetof(store_provenance, nvrtc_version)},
  {"nvrtc_options", offsetof(store_provenance, nvrtc_options)},
  {"device_name", offsetof(store_provenance, device_name)},
  {"compute_capability", offsetof(store_provenance, compute_capability)},
  {"host", offsetof(store_provenance, host)},
  {"suite", offsetof(store_provenance, suite)},
  {"shard", offsetof(store_provenance, shard)},
  {"command_line", offsetof(store_provenance, command_line)},
};
#define STORE_RUN_TEXT_COUNT ((int)(sizeof store_run_texts / sizeof store_run_texts[0]))

/* Copies the text columns 4.. of st into out->text, pointing out->p's strings at them. */
static void store_run_copy_texts(sqlite3_stmt *st, store_run_record *out) {
  size_t used = 0;
  for (int i = 0; i < STORE_RUN_TEXT_COUNT; i++) {
    const char *z = (const char *)sqlite3_column_text(st, 4 + i), **pDst;
    pDst = (const char **)(void *)((char *)&out->p + store_run_texts[i].off);
    *pDst = NULL;
    if (!z) continue; /* NULL stays NULL */
    *pDst = out->text + used;
    used += (size_t)snprintf(out->text + used, sizeof out->text - used, "%s", z) + 1;
    if (used > sizeof out->text) used = sizeof out->text - 1; /* truncated: the last byte is the NUL */
  }
}

int store_run_read(store *s, long long run_id, store_run_record *out) {
  char zSql[512] = "SELECT status, oracle_version, numerics_version, driver_version";
  sqlite3_stmt *st = NULL;
  int rc, found = 0;
  for (int i = 0; i < STORE_RUN_TEXT_COUNT; i++) /* column names are constants above, not input */
    snprintf(zSql + strlen(zSql), sizeof zSql - strlen(zSql), ", %s", store_run_texts[i].zCol);
  snprintf(zSql + strlen(zSql), sizeof zSql - strlen(zSql), " FROM runs WHERE id = ?1");
  memset(out, 0, sizeof *out);
  rc = store_prepare(s, zSql, &st);
  if (!rc) rc = sqlite3_bind_int64(st, 1, run_id);
  if (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    snprintf(out->status, sizeof out->status, "%s", (const char *)sqlite3_column_text(st, 0));
    out->p.oracle_version = sqlite3_column_int(st, 1);
    out->p.numerics_version = sqlite3_column_int(st, 2);
    out->p.driver_version = sqlite3_column_int(st, 3);
    store_run_copy_texts(st, out);
    found = 1;
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  }
  if (rc) store_fail_sqlite(s, rc, "cannot read run");
  sqlite3_finalize(st);
  return rc ? -1 : found ? 0 : 1;
}

int store_run_reopen(store *s, long long run_id) {
  static const char zSql[] = "UPDATE runs SET status = 'running', ended_at = NULL, exit_code = NULL"
                             " WHERE id = ?1 AND status IN ('running', 'error')";
  sqlite3_stmt *st = NULL;
  int rc = store_prepare(s, zSql, &st);
  if (!rc) rc = sqlite3_bind_int64(st, 1, run_id);
  if (!rc) rc = store_step_done(st);
  if (!rc && sqlite3_changes(s->db) == 0) /* in one statement: no other process slips in between */
    rc = store_fail(s, "run %lld cannot be reopened: no such run, or it has finished", run_id);
  if (rc > 0) store_fail_sqlite(s, rc, "cannot reopen run");
  sqlite3_finalize(st);
  return rc;
}

int store_run_case_count(store *s, long long run_id, long long *n) {
  sqlite3_stmt *st = NULL;
  int rc = store_prepare(s, "SELECT count(DISTINCT case_id) FROM results WHERE run_id = ?1", &st);
  if (!rc) rc = sqlite3_bind_int64(st, 1, run_id);
  if (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    *n = sqlite3_column_int64(st, 0);
    rc = SQLITE_OK;
  }
  if (rc) store_fail_sqlite(s, rc, "cannot count cases");
  sqlite3_finalize(st);
  return rc;
}

/*
** Inserts the case unless its id is known.  A known id must carry the same
** spec: the id is a hash of the spec, so a difference means a collision or a
** generator that is no longer deterministic, and both must stop the run.
*/
int store_case_put(store *s, const char *case_id, const char *op, const char *family,
                   const char *spec, long long run_id) {
  static const char zInsert[] =
    "INSERT INTO cases (id, op, family, spec, first_run_id) VALUES (?1, ?2, ?3, ?4, ?5)"
    " ON CONFLICT (id) DO NOTHING";
  static const char zSelect[] = "SELECT spec FROM cases WHERE id = ?1";
  sqlite3_stmt *st = NULL;
  int rc = store_prepare(s, zInsert, &st);
  if (!rc) rc = sqlite3_bind_text(st, 1, case_id, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 3, family, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 4, spec, -1, SQLITE_STATIC);
  if (!rc) rc = store_bind_run(st, 5, run_id);
  if (!rc) rc = store_step_done(st);
  if (rc || sqlite3_changes(s->db) == 1) goto cleanup; /* error, or a new case */
  sqlite3_finalize(st);
  st = NULL;
  rc = store_prepare(s, zSelect, &st);
  if (!rc) rc = sqlite3_bind_text(st, 1, case_id, -1, SQLITE_STATIC);
  if (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *zStored = (const char *)sqlite3_column_text(st, 0);
    rc = strcmp(zStored, spec) == 0
             ? SQLITE_OK
             : store_fail(s, "case %s is already stored with another spec (stored: %s; new: %s)",
                          case_id, zStored, spec);
  }
cleanup:
  if (rc > 0) store_fail_sqlite(s, rc, "cannot record case");
  sqlite3_finalize(st);
  return rc;
}

int store_case_spec(store *s, const char *case_id, char *spec, size_t spec_len) {
  sqlite3_stmt *st = NULL;
  int rc = store_prepare(s, "SELECT spec FROM cases WHERE id = ?1", &st), found = 0;
  if (!rc) rc = sqlite3_bind_text(st, 1, case_id, -1, SQLITE_STATIC);
  if (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    snprintf(spec, spec_len, "%s", (const char *)sqlite3_column_text(st, 0));
    found = 1;
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  }
  if (rc) store_fail_sqlite(s, rc, "cannot read case");
  sqlite3_finalize(st);
  return rc ? -1 : found ? 0 : 1;
}

/* ---- Results ---------------------------------------------------------- */

/* Binds a timing, or NULL for a negative or NaN one (lane not timed). */
static int store_bind_ms(sqlite3_stmt *st, int i, double ms) {
  return ms >= 0.0 ? sqlite3_bind_double(st, i, ms) : sqlite3_bind_null(st, i);
}

/* Binds the fields of one result row to the insert statement of store_results_commit. */
static int store_bind_result(sqlite3_stmt *st, long long run_id, const store_result *r) {
  int m = r->has_mismatch != 0; /* first-mismatch columns are NULL without one */
  int rc = sqlite3_bind_int64(st, 1, run_id);
  if (!rc) rc = sqlite3_bind_text(st, 2, r->case_id, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 3, r->lane, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_int(st, 4, r->step);
  if (!rc) rc = sqlite3_bind_text(st, 5, r->status, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 6, m ? r->tensor : NULL, -1, SQLITE_STATIC);
  if (!rc) rc = m ? sqlite3_bind_int64(st, 7, r->flat_offset) : sqlite3_bind_null(st, 7);
  if (!rc) rc = sqlite3_bind_text(st, 8, m ? r->coords : NULL, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 9, m ? r->expected_hex : NULL, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 10, m ? r->actual_hex : NULL, -1, SQLITE_STATIC);
  if (!rc) {
    rc = m && r->ulp_distance >= 0 ? sqlite3_bind_int64(st, 11, r->ulp_distance)
                                   : sqlite3_bind_null(st, 11);
  }
  if (!rc) rc = sqlite3_bind_int64(st, 12, r->mismatch_count);
  if (!rc) rc = sqlite3_bind_int64(st, 13, r->nan_equivalent_count);
  if (!rc) rc = store_bind_ms(st, 14, r->oracle_ms);
  if (!rc) rc = store_bind_ms(st, 15, r->device_ms);
  if (!rc) rc = sqlite3_bind_text(st, 16, r->message, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 17, r->stage && r->stage[0] ? r->stage : NULL, -1, SQLITE_STATIC);
  return rc;
}

/*
** One transaction per finished case, committed before the next case runs:
** this is what makes a killed run keep every case that had finished.
*/
int store_results_commit(store *s, long long run_id, const store_result *rows, int n) {
  static const char zSql[] =
    "INSERT INTO results (run_id, case_id, lane, step, status, tensor, flat_offset, coords,"
    " expected_hex, actual_hex, ulp_distance, mismatch_count, nan_equivalent_count,"
    " oracle_ms, device_ms, message, stage, recorded_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
    STORE_NOW_SQL ")";
  sqlite3_stmt *st = NULL;
  int rc = 0, iRow = -1; /* iRow: the row being inserted, named in a failure */
  if (n < 0 || (n > 0 && !rows)) return store_fail(s, "results: bad row array (n = %d)", n);
  if (n == 0) return 0;
  rc = store_tx_begin(s);
  if (!rc) rc = store_prepare(s, zSql, &st);
  for (int i = 0; !rc && i < n; i++) {
    iRow = i;
    rc = store_bind_result(st, run_id, &rows[i]);
    if (!rc) rc = store_step_done(st);
    if (!rc) rc = sqlite3_reset(st);
  }
  if (rc) goto cleanup;
  iRow = -1;
  if (store_test_hook_before_commit) store_test_hook_before_commit();
  rc = store_tx_commit(s);
cleanup:
  if (rc > 0 && iRow >= 0) {
    const store_result *r = &rows[iRow];
    store_fail(s, "cannot store result (run %lld, case %s, lane %s, step %d): %s", run_id,
               r->case_id ? r->case_id : "(null)", r->lane ? r->lane : "(null)", r->step,
               sqlite3_errmsg(s->db));
  } else if (rc > 0) {
    store_fail_sqlite(s, rc, "cannot commit results");
  }
  sqlite3_finalize(st);
  if (rc) store_tx_rollback(s);
  return rc;
}

#define store_column_text(st, i) ((const char *)sqlite3_column_text(st, i))
#define store_column_null(st, i) (sqlite3_column_type(st, i) == SQLITE_NULL)

int store_results_each(store *s, long long run_id, const char *case_id,
                       void (*each)(void *ctx, const store_result *row), void *ctx) {
  static const char zSql[] =
    "SELECT lane, step, status, tensor, flat_offset, coords, expected_hex, actual_hex, ulp_distance,"
    " mismatch_count, nan_equivalent_count, oracle_ms, device_ms, message, stage"
    " FROM results WHERE run_id = ?1 AND case_id = ?2 ORDER BY rowid";
  sqlite3_stmt *st = NULL;
  store_result r;
  int rc = store_prepare(s, zSql, &st);
  if (!rc) rc = sqlite3_bind_int64(st, 1, run_id);
  if (!rc) rc = sqlite3_bind_text(st, 2, case_id, -1, SQLITE_STATIC);
  while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    memset(&r, 0, sizeof r);
    r.case_id = case_id;
    r.lane = store_column_text(st, 0);
    r.step = sqlite3_column_int(st, 1);
    r.status = store_column_text(st, 2);
    r.has_mismatch = !store_column_null(st, 4); /* bound only with a mismatch */
    r.tensor = store_column_text(st, 3);
    r.flat_offset = sqlite3_column_int64(st, 4);
    r.coords = store_column_text(st, 5);
    r.expected_hex = store_column_text(st, 6);
    r.actual_hex = store_column_text(st, 7);
    r.ulp_distance = store_column_null(st, 8) ? -1 : sqlite3_column_int64(st, 8);
    r.mismatch_count = sqlite3_column_int64(st, 9);
    r.nan_equivalent_count = sqlite3_column_int64(st, 10);
    r.oracle_ms = store_column_null(st, 11) ? -1.0 : sqlite3_column_double(st, 11);
    r.device_ms = store_column_null(st, 12) ? -1.0 : sqlite3_column_double(st, 12);
    r.message = store_column_text(st, 13);
    r.stage = store_column_text(st, 14);
    each(ctx, &r);
    rc = SQLITE_OK;
  }
  if (rc == SQLITE_DONE) rc = SQLITE_OK;
  if (rc) store_fail_sqlite(s, rc, "cannot read results");
  sqlite3_finalize(st);
  return rc;
}

int store_run_counts(store *s, long long run_id, long long *passed, long long *failed,
                     long long *total) {
  static const char zSql[] =
    "SELECT count(*) FILTER (WHERE status = 'pass'),"
    " count(*) FILTER (WHERE status IN ('mismatch','error_parity','crash','timeout',"
    "'nondeterministic','fail','frozen_changed','unpinned')), count(*) FROM results WHERE run_id = ?1";
  sqlite3_stmt *st = NULL;
  int rc = store_prepare(s, zSql, &st);
  if (!rc) rc = sqlite3_bind_int64(st, 1, run_id);
  if (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (passed) *passed = sqlite3_column_int64(st, 0);
    if (failed) *failed = sqlite3_column_int64(st, 1);
    if (total) *total = sqlite3_column_int64(st, 2);
    rc = SQLITE_OK;
  }
  if (rc > 0) store_fail_sqlite(s, rc, "cannot count results");
  sqlite3_finalize(st);
  return rc;
}
