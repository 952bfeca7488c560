/*
** store_bench.c: the figures of `bitgate bench` (store.h, schema 4 table
** bench; its timing column is schema 5's).  A row is checked here before
** SQLite sees it, so that a bad one is refused with a message naming the
** field rather than a bare CHECK or NOT NULL failure; the schema's
** constraints stay as the backstop.
*/
#include "harness/store.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>

/* An optional figure: bound as NULL when negative or NaN (not measured). */
static int store_bind_optional(sqlite3_stmt *st, int i, double v) {
  return isnan(v) || v < 0 ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

/* 0 when row keeps store_bench_row's contract; else store_fail's -1 naming the field. */
static int store_bench_check(store *s, long long run_id, const store_bench_row *row) {
  const char *kernel;
  if (!row) return store_fail(s, "bench row of run %lld: no row", run_id);
  if (!row->kernel || !*row->kernel) return store_fail(s, "bench row of run %lld: kernel is required", run_id);
  kernel = row->kernel;
  if (!row->variant || !*row->variant)
    return store_fail(s, "bench row of run %lld, kernel '%s': variant is required", run_id, kernel);
  if (!row->shape || !*row->shape)
    return store_fail(s, "bench row of run %lld, kernel '%s': shape is required", run_id, kernel);
  if (!row->timing || (strcmp(row->timing, "held") && strcmp(row->timing, "submit")))
    return store_fail(s, "bench row of run %lld, kernel '%s': timing '%s' is not 'held' or 'submit'", run_id,
                      kernel, row->timing ? row->timing : "(none)");
  if (!isfinite(row->median_us) || row->median_us < 0)
    return store_fail(s, "bench row of run %lld, kernel '%s': median_us %g is not a time", run_id, kernel,
                      row->median_us);
  if (isinf(row->min_us) || isinf(row->oracle_ms) || isinf(row->floor_fraction))
    return store_fail(s, "bench row of run %lld, kernel '%s': an infinite figure", run_id, kernel);
  if (row->runs <= 0)
    return store_fail(s, "bench row of run %lld, kernel '%s': runs %d is not a count", run_id, kernel, row->runs);
  return 0;
}

int store_bench_put(store *s, long long run_id, const store_bench_row *row) {
  static const char zSql[] =
    "INSERT INTO bench (run_id, kernel, variant, shape, median_us, min_us, runs, oracle_ms,"
    " floor_fraction, timing, recorded_at) SELECT id, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, " STORE_NOW_SQL
    " FROM runs WHERE id = ?1";
  sqlite3_stmt *st = NULL;
  int rc = store_bench_check(s, run_id, row);
  if (!rc) rc = store_prepare(s, zSql, &st);
  if (!rc) rc = sqlite3_bind_int64(st, 1, run_id);
  if (!rc) rc = sqlite3_bind_text(st, 2, row->kernel, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 3, row->variant, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_text(st, 4, row->shape, -1, SQLITE_STATIC);
  if (!rc) rc = sqlite3_bind_double(st, 5, row->median_us);
  if (!rc) rc = store_bind_optional(st, 6, row->min_us);
  if (!rc) rc = sqlite3_bind_int(st, 7, row->runs);
  if (!rc) rc = store_bind_optional(st, 8, row->oracle_ms);
  if (!rc) rc = store_bind_optional(st, 9, row->floor_fraction);
  if (!rc) rc = sqlite3_bind_text(st, 10, row->timing, -1, SQLITE_STATIC);
  if (!rc) rc = store_step_done(st);
  if (!rc && sqlite3_changes(store_sqlite(s)) == 0)
    rc = store_fail(s, "bench row, kernel '%s': no run with id %lld", row->kernel, run_id);
  if (rc > 0) store_fail_sqlite(s, rc, "cannot store bench row");
  sqlite3_finalize(st);
  return rc;
}
