/*
** report_trend.c: the trend of the recorded bench figures (report_trend.h).
**
** One query does the grouping: window functions number each series' rows
** from the latest (so `last` keeps the newest figures) and give each series
** the id of its first row (so series keep the bench's line order).  The
** filter is a glob over the series' label, applied here as rows arrive.
*/
#include "reports/report_trend.h"
#include "reports/report.h"

#include <fnmatch.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* The query, with TIMING standing for the timing column (schema 5) or 'sync' (schema 4). */
#define TREND_SQL(TIMING)                                                                                    \
  "SELECT kernel, shape, variant, timing, run_id, recorded_at, git_rev, kernel_hash, median_us, min_us,"    \
  " first_id"                                                                                                \
  " FROM (SELECT b.id, b.kernel, b.shape, b.variant, " TIMING " AS timing, b.run_id, b.recorded_at,"         \
  " r.git_rev, r.kernel_hash, b.median_us, b.min_us,"                                                        \
  " min(b.id) OVER (PARTITION BY b.kernel, b.shape, b.variant, " TIMING ") AS first_id,"                     \
  " row_number() OVER (PARTITION BY b.kernel, b.shape, b.variant, " TIMING " ORDER BY b.id DESC) AS age"     \
  " FROM bench b JOIN runs r ON r.id = b.run_id"                                                             \
  " WHERE (?1 IS NULL OR b.variant = ?1) AND (?2 IS NULL OR " TIMING " = ?2))"                               \
  " WHERE age <= ?3 ORDER BY first_id, id"

#define TREND_ROW "  %6s  %-16s  %-12s  %-12s  %9s  %9s  %11s  %9s\n"

/* "+1.2%" of now against before, or "-" without a before. */
static const char *change(char *buf, size_t len, double now, double before, int have_before) {
  if (!have_before || before <= 0) return "-";
  snprintf(buf, len, "%+.1f%%", 100.0 * (now - before) / before);
  return buf;
}

/* Prints one figure of the current series; first/previous track the series' medians. */
static void trend_row(FILE *out, sqlite3_stmt *st, int index, double *first, double *previous) {
  const double median = sqlite3_column_double(st, 8);
  char run[24], recorded[17], rev[13], hash[13], med[32], min[32], vs_prev[32], vs_first[32];
  char *t;
  snprintf(run, sizeof run, "%lld", (long long)sqlite3_column_int64(st, 4));
  snprintf(recorded, sizeof recorded, "%s", report_text_or_dash(st, 5)); /* ISO-8601, to the minute */
  if ((t = strchr(recorded, 'T')) != NULL) *t = ' ';
  snprintf(rev, sizeof rev, "%s", report_text_or_dash(st, 6));
  snprintf(hash, sizeof hash, "%s", report_text_or_dash(st, 7));
  snprintf(med, sizeof med, "%.1f", median);
  if (sqlite3_column_type(st, 9) == SQLITE_NULL) snprintf(min, sizeof min, "-");
  else snprintf(min, sizeof min, "%.1f", sqlite3_column_double(st, 9));
  fprintf(out, TREND_ROW, run, recorded, rev, hash, med, min,
          change(vs_prev, sizeof vs_prev, median, *previous, index > 0),
          change(vs_first, sizeof vs_first, median, *first, index > 0));
  if (index == 0) *first = median;
  *previous = median;
}

/* Binds the options, steps the query and prints every series the filter keeps. */
static int trend_print(sqlite3 *db, sqlite3_stmt *st, const report_trend_opts *o, const char *db_path, FILE *out,
                       char *err, size_t err_len) {
  long long series_id = 0; /* the current series' first row id (column 10); ids start at 1 */
  int rc, series = 0, figures = 0, index = 0, keep = 0;
  double first = 0, previous = 0;
  sqlite3_bind_text(st, 1, o->variant, -1, SQLITE_STATIC); /* NULL binds NULL: every variant */
  sqlite3_bind_text(st, 2, o->timing, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 3, o->last);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (sqlite3_column_int64(st, 10) != series_id) { /* a new series */
      char label[600];
      series_id = sqlite3_column_int64(st, 10);
      snprintf(label, sizeof label, "%s, %s", report_text_or_dash(st, 0), report_text_or_dash(st, 1));
      keep = !o->filter || fnmatch(o->filter, label, 0) == 0;
      index = 0;
      if (keep) {
        fprintf(out, "%s%s [%s, %s]\n", series ? "\n" : "", label, report_text_or_dash(st, 2),
                report_text_or_dash(st, 3));
        fprintf(out, TREND_ROW, "run", "recorded", "git rev", "kernel hash", "median us", "min us", "vs previous",
                "vs first");
        series++;
      }
    }
    if (!keep) continue;
    trend_row(out, st, index++, &first, &previous);
    figures++;
  }
  if (rc != SQLITE_DONE)
    return report_fail(err, err_len, "database '%s': reading bench: %s", db_path, sqlite3_errmsg(db));
  if (!series)
    fprintf(out, "no bench figures in %s match (bitgate bench records them when it runs on a GPU)\n", db_path);
  else
    fprintf(out, "\n%d series, %d figures (the last %d a series at most) from %s\n", series, figures, o->last,
            db_path);
  return 0;
}

int report_trend_write(const char *db_path, const report_trend_opts *o, FILE *out, char *err, size_t err_len) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int schema = 0, rc;
  if ((rc = report_bench_db_open(db_path, &db, &schema, out, err, err_len)) != 1) return rc;
  if (sqlite3_prepare_v2(db, schema >= 5 ? TREND_SQL("b.timing") : TREND_SQL("'sync'"), -1, &st, NULL) !=
      SQLITE_OK)
    rc = report_fail(err, err_len, "database '%s': querying bench: %s", db_path, sqlite3_errmsg(db));
  else
    rc = trend_print(db, st, o, db_path, out, err, err_len);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rc;
}
