/*
** report_compare.c: builds side by side (report_compare.h).
**
** One query reads every kept figure in recording order; the grouping is done
** here, into builds (first seen first) and series (the bench's line order,
** as in report_trend.c), each (series, build) cell holding its medians.
*/
#include "reports/report_compare.h"
#include "reports/report.h"

#include <fnmatch.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define COMPARE_BUILDS_MAX 26 /* lettered A to Z */

/* The query, with TIMING standing for the timing column (schema 5) or 'sync' (schema 4). */
#define COMPARE_SQL(TIMING)                                                                                  \
  "SELECT b.kernel, b.shape, b.variant, " TIMING ", r.git_rev, r.kernel_hash, b.median_us, b.run_id,"      \
  " r.command_line"                                                                                          \
  " FROM bench b JOIN runs r ON r.id = b.run_id"                                                             \
  " WHERE (?1 IS NULL OR b.variant = ?1) AND (?2 IS NULL OR " TIMING " = ?2) ORDER BY b.id"

typedef struct build {
  char rev[48], hash[40], origin[400]; /* origin: the command line's leading VAR='...' settings */
  long long runs[8];                   /* the first runs that recorded it, for the header */
  int n_runs, more_runs;
} build;

typedef struct cell {
  double *medians;
  int n, cap;
} cell;

typedef struct series {
  char label[600], variant[16], timing[16];
  cell cells[COMPARE_BUILDS_MAX];
} series;

typedef struct compare {
  build builds[COMPARE_BUILDS_MAX];
  int n_builds;
  series *series;
  int n_series, cap_series;
} compare;

/* The leading VAR='value' settings of a recorded command line (provenance.c writes them), or "". */
static void origin_of(const char *command_line, char *out, size_t len) {
  const char *p = command_line, *end = command_line;
  while (!strncmp(p, "BITGATE_", 8)) {
    const char *eq = strchr(p, '='), *close;
    if (!eq || eq[1] != '\'' || !(close = strchr(eq + 2, '\''))) break;
    end = close + 1;
    p = *end == ' ' ? end + 1 : end;
  }
  snprintf(out, len, "%.*s", (int)(end - command_line), command_line);
}

/* The build of the row (columns 4, 5, 7, 8), added when new: its index, or -1 past COMPARE_BUILDS_MAX. */
static int build_of(compare *c, sqlite3_stmt *st) {
  const char *rev = report_text_or_dash(st, 4), *hash = report_text_or_dash(st, 5);
  long long run = sqlite3_column_int64(st, 7);
  build *b;
  int i;
  for (i = 0; i < c->n_builds; i++)
    if (!strcmp(c->builds[i].rev, rev) && !strcmp(c->builds[i].hash, hash)) break;
  if (i == c->n_builds) {
    if (i == COMPARE_BUILDS_MAX) return -1;
    b = &c->builds[c->n_builds++];
    snprintf(b->rev, sizeof b->rev, "%s", rev);
    snprintf(b->hash, sizeof b->hash, "%s", hash);
    origin_of(sqlite3_column_type(st, 8) == SQLITE_NULL ? "" : (const char *)sqlite3_column_text(st, 8), b->origin,
              sizeof b->origin);
  }
  b = &c->builds[i];
  if (b->n_runs && b->runs[b->n_runs - 1] == run) return i;
  if (b->n_runs < (int)(sizeof b->runs / sizeof b->runs[0])) b->runs[b->n_runs++] = run;
  else b->more_runs++;
  return i;
}

/* The series of the row (columns 0-3), added when new: its index, or -1 out of memory. */
static int series_of(compare *c, const char *label, const char *variant, const char *timing) {
  series *s;
  int i;
  for (i = 0; i < c->n_series; i++)
    if (!strcmp(c->series[i].label, label) && !strcmp(c->series[i].variant, variant) &&
        !strcmp(c->series[i].timing, timing))
      return i;
  if (c->n_series == c->cap_series) {
    int cap = c->cap_series ? 2 * c->cap_series : 16;
    series *grown = realloc(c->series, (size_t)cap * sizeof *grown);
    if (!grown) return -1;
    c->series = grown, c->cap_series = cap;
  }
  s = &c->series[c->n_series];
  memset(s, 0, sizeof *s);
  snprintf(s->label, sizeof s->label, "%s", label);
  snprintf(s->variant, sizeof s->variant, "%s", variant);
  snprintf(s->timing, sizeof s->timing, "%s", timing);
  return c->n_series++;
}

static int cell_push(cell *k, double median) {
  if (k->n == k->cap) {
    int cap = k->cap ? 2 * k->cap : 8;
    double *grown = realloc(k->medians, (size_t)cap * sizeof *grown);
    if (!grown) return -1;
    k->medians = grown, k->cap = cap;
  }
  k->medians[k->n++] = median;
  return 0;
}

static void compare_free(compare *c) {
  int i, j;
  for (i = 0; i < c->n_series; i++)
    for (j = 0; j < COMPARE_BUILDS_MAX; j++) free(c->series[i].cells[j].medians);
  free(c->series);
}

/* Reads the kept figures into c: 0, or -1 with err. */
static int compare_read(compare *c, sqlite3 *db, sqlite3_stmt *st, const report_trend_opts *o, const char *db_path,
                        char *err, size_t err_len) {
  int rc, dropped = 0;
  sqlite3_bind_text(st, 1, o->variant, -1, SQLITE_STATIC); /* NULL binds NULL: every variant */
  sqlite3_bind_text(st, 2, o->timing, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    char label[600];
    int s, b;
    snprintf(label, sizeof label, "%s, %s", report_text_or_dash(st, 0), report_text_or_dash(st, 1));
    if (o->filter && fnmatch(o->filter, label, 0) != 0) continue;
    if ((b = build_of(c, st)) < 0) {
      dropped++;
      continue;
    }
    if ((s = series_of(c, label, report_text_or_dash(st, 2), report_text_or_dash(st, 3))) < 0 ||
        cell_push(&c->series[s].cells[b], sqlite3_column_double(st, 6)) != 0)
      return report_fail(err, err_len, "database '%s': out of memory reading bench", db_path);
  }
  if (rc != SQLITE_DONE)
    return report_fail(err, err_len, "database '%s': reading bench: %s", db_path, sqlite3_errmsg(db));
  if (dropped)
    return report_fail(err, err_len, "database '%s': more than %d builds; narrow it with --filter or a fresh --db",
                        db_path, COMPARE_BUILDS_MAX);
  return 0;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts k's medians; their median (the mean of the middle two for an even count). */
static double cell_median(cell *k) {
  qsort(k->medians, (size_t)k->n, sizeof *k->medians, by_value);
  return k->n % 2 ? k->medians[k->n / 2] : 0.5 * (k->medians[k->n / 2 - 1] + k->medians[k->n / 2]);
}

static void print_builds(const compare *c, FILE *out) {
  int i, j;
  fprintf(out, "builds (git revision, kernel hash; in the order first recorded):\n");
  for (i = 0; i < c->n_builds; i++) {
    const build *b = &c->builds[i];
    fprintf(out, "  %c  %s  %.12s  %s  runs", 'A' + i, b->rev, b->hash, b->origin[0] ? b->origin : "embedded kernels");
    for (j = 0; j < b->n_runs; j++) fprintf(out, "%s%lld", j ? ", " : " ", b->runs[j]);
    if (b->more_runs) fprintf(out, " and %d more", b->more_runs);
    fputc('\n', out);
  }
}

static void print_series(series *s, int n_builds, FILE *out) {
  double first = 0, lo0 = 0, hi0 = 0;
  int b, first_build = -1;
  fprintf(out, "\n%s [%s, %s]\n", s->label, s->variant, s->timing);
  for (b = 0; b < n_builds; b++) {
    cell *k = &s->cells[b];
    double median, lo, hi;
    if (!k->n) {
      fprintf(out, "  %c  -\n", 'A' + b);
      continue;
    }
    median = cell_median(k);
    lo = k->medians[0], hi = k->medians[k->n - 1];
    fprintf(out, "  %c  %9.1f us  (%.1f-%.1f, %d run%s)", 'A' + b, median, lo, hi, k->n, k->n == 1 ? "" : "s");
    if (first_build < 0) {
      first = median, lo0 = lo, hi0 = hi, first_build = b;
    } else {
      fprintf(out, "  %.3fx %c, %s", median / first, 'A' + first_build, hi < lo0 || lo > hi0 ? "apart" : "overlap");
    }
    fputc('\n', out);
  }
}

int report_compare_write(const char *db_path, const report_trend_opts *o, FILE *out, char *err, size_t err_len) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  compare c;
  int schema = 0, rc, i;
  memset(&c, 0, sizeof c);
  if ((rc = report_bench_db_open(db_path, &db, &schema, out, err, err_len)) != 1) return rc;
  if (sqlite3_prepare_v2(db, schema >= 5 ? COMPARE_SQL("b.timing") : COMPARE_SQL("'sync'"), -1, &st, NULL) !=
      SQLITE_OK)
    rc = report_fail(err, err_len, "database '%s': querying bench: %s", db_path, sqlite3_errmsg(db));
  else
    rc = compare_read(&c, db, st, o, db_path, err, err_len);
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (rc == 0 && !c.n_series) {
    fprintf(out, "no bench figures in %s match (bitgate bench records them when it runs on a GPU)\n", db_path);
  } else if (rc == 0) {
    print_builds(&c, out);
    for (i = 0; i < c.n_series; i++) print_series(&c.series[i], c.n_builds, out);
    fprintf(out, "\n%d build%s, %d series from %s; 'apart': the builds' ranges do not meet\n", c.n_builds,
            c.n_builds == 1 ? "" : "s", c.n_series, db_path);
  }
  compare_free(&c);
  return rc;
}
