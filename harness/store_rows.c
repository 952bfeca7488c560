/*
** store_rows.c: runs (begin, end, read back, reopen for --resume), cases and
** result rows of a store (store.h).  One finished case's rows go in one
** transaction, which is what lets a killed run keep every case it finished.
*/
#include "harness/store.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  if (!rc) *run_id = sqlite3_last_insert_rowid(store_sqlite(s));
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
  if (!rc && sqlite3_changes(store_sqlite(s)) == 0) rc = store_fail(s, "no run with id %lld", run_id);
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
  if (!rc && sqlite3_changes(store_sqlite(s)) == 0) /* in one statement: no other process slips in between */
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

int store_case_times(store *s, const char *suite, long long before, long long *run_id,
                     void (*each)(void *ctx, const char *case_id, double ms), void *ctx) {
  static const char zRun[] = "SELECT max(id) FROM runs WHERE suite = ?1 AND id < ?2 AND status IN ('passed', 'failed')";
  static const char zTimes[] =
    "SELECT case_id, sum(coalesce(oracle_ms, 0) + coalesce(device_ms, 0)) FROM results WHERE run_id = ?1"
    " GROUP BY case_id";
  sqlite3_stmt *st = NULL;
  int rc = store_prepare(s, zRun, &st);
  *run_id = 0;
  if (!rc) rc = sqlite3_bind_text(st, 1, suite, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_int64(st, 2, before);
  if (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) *run_id = sqlite3_column_int64(st, 0), rc = SQLITE_OK;
  sqlite3_finalize(st), st = NULL;
  if (!rc && *run_id) rc = store_prepare(s, zTimes, &st);
  if (!rc && *run_id) rc = sqlite3_bind_int64(st, 1, *run_id);
  while (!rc && *run_id && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    each(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_double(st, 1));
    rc = SQLITE_OK;
  }
  if (rc == SQLITE_DONE) rc = SQLITE_OK;
  if (rc) store_fail_sqlite(s, rc, "cannot read the case times of the run before");
  sqlite3_finalize(st);
  return rc ? -1 : 0;
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
  if (rc || sqlite3_changes(store_sqlite(s)) == 1) goto cleanup; /* error, or a new case */
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
               sqlite3_errmsg(store_sqlite(s)));
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
