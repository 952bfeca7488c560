/*
** report_bench.c: a bench run's lines from table bench (report.h
** report_bench_read), for the reports of a bench run and for `bitgate bench
** --targets`.  A line is a (kernel, shape) of the run, its rows' variants
** folded together in the order the bench recorded them; each gets its
** target verdict and the history of its fast median, so a report can chart
** the trend up to the run it shows.
*/
#include "reports/report_build.h"
#include "reports/report_targets.h"

#include <sqlite3.h>
#include <string.h>

static const char *text_or_empty(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? (const char *)t : "";
}

/* The line of (kernel, shape) in list[0..n), or NULL. */
static report_bench_line *line_find(report_bench_line *list, int n, const char *kernel, const char *shape) {
  int i;
  for (i = 0; i < n; i++)
    if (!strcmp(list[i].kernel, kernel) && !strcmp(list[i].shape, shape)) return &list[i];
  return NULL;
}

/* l's fast medians of runs up to run_id, same timing, the latest REPORT_BENCH_HISTORY, oldest first. */
static int history_read(sqlite3 *db, int schema, long long run_id, report_bench_line *l) {
  char sql[512];
  double newest_first[REPORT_BENCH_HISTORY];
  sqlite3_stmt *st = NULL;
  int rc, n = 0, i;
  snprintf(sql, sizeof sql,
           "SELECT median_us FROM bench WHERE kernel = ?1 AND shape = ?2 AND variant = 'fast' AND %s = ?3"
           " AND run_id <= ?4 ORDER BY id DESC LIMIT %d",
           schema >= 5 ? "timing" : "'sync'", REPORT_BENCH_HISTORY);
  rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, l->kernel, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, l->shape, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, l->timing, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, run_id);
  }
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW && n < REPORT_BENCH_HISTORY) {
    newest_first[n++] = sqlite3_column_double(st, 0);
    rc = SQLITE_OK;
  }
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) rc = SQLITE_OK;
  sqlite3_finalize(st);
  for (i = 0; i < n; i++) l->history[i] = newest_first[n - 1 - i];
  l->history_count = n;
  return rc;
}

int report_bench_read(sqlite3 *db, int schema, long long run_id, report_pool *p, report_bench_line **lines,
                      int *n) {
  char sql[256];
  sqlite3_stmt *st = NULL;
  report_bench_line *list = NULL;
  int rc, i, cap = 0;
  *lines = NULL, *n = 0;
  if (schema < 4) return SQLITE_OK; /* table bench came with schema 4 */
  snprintf(sql, sizeof sql,
           "SELECT kernel, shape, variant, %s, median_us, min_us FROM bench WHERE run_id = ?1 ORDER BY id",
           schema >= 5 ? "timing" : "'sync'");
  rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) sqlite3_bind_int64(st, 1, run_id);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *kernel = text_or_empty(st, 0), *shape = text_or_empty(st, 1), *variant = text_or_empty(st, 2);
    report_bench_line *l = line_find(list, *n, kernel, shape);
    const int fast = !strcmp(variant, "fast");
    rc = SQLITE_OK;
    if (!l) {
      if (*n == cap) {
        report_bench_line *grown = report_pool_alloc(p, sizeof *grown * (size_t)(cap = cap ? cap * 2 : 64));
        if (*n) memcpy(grown, list, sizeof *grown * (size_t)*n); /* the old array stays in the pool */
        list = grown;
      }
      l = &list[(*n)++];
      l->kernel = report_pool_strdup(p, kernel);
      l->shape = report_pool_strdup(p, shape);
      l->timing = report_pool_strdup(p, text_or_empty(st, 3));
    }
    if (fast) l->have_fast = 1, l->fast_us = sqlite3_column_double(st, 4), l->fast_min_us = sqlite3_column_double(st, 5);
    else if (!strcmp(variant, "reference"))
      l->have_ref = 1, l->ref_us = sqlite3_column_double(st, 4), l->ref_min_us = sqlite3_column_double(st, 5);
  }
  if (rc == SQLITE_DONE) rc = SQLITE_OK;
  sqlite3_finalize(st);
  for (i = 0; rc == SQLITE_OK && i < *n; i++) {
    report_bench_line *l = &list[i];
    char goal[32], status[256];
    const char *why = NULL;
    report_target_judge(l->kernel, l->shape, l->have_fast, l->fast_us, l->have_ref, l->ref_us, goal, sizeof goal,
                        status, sizeof status, &why);
    l->goal = report_pool_strdup(p, goal);
    l->status = report_pool_strdup(p, status);
    l->why = report_pool_strdup(p, why);
    rc = history_read(db, schema, run_id, l);
  }
  *lines = list;
  return rc;
}
