/*
** store.c: opening, verifying and migrating a store, and the helpers every
** store file uses.  Runs, cases and results are in store_rows.c, the schema
** in store_schema.c, golden payloads in store_golden.c; the contracts are in
** store.h.
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
