/*
** report_targets.c: issue 8's targets as bench lines name them, the
** verdicts report_targets.h describes, and the same verdicts from a results
** database's recorded figures.
*/
#include "reports/report_targets.h"
#include "reports/report_build.h"

#include <fnmatch.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPRESSOR_WHY                                                                                 \
  "one record's latency chain (index stream, decode step) on a launch floor: an empty kernel reads "    \
  "2.8-3.0 us on an H100, the decode step returning at once 3.1-3.5 (its first loads, which a block "   \
  "waits for before it may exit) and with only its loads 3.4-3.6; with no pool, RMS chain or "          \
  "transform (angles, barriers and stores kept) 4.6-4.8, the 50x line's 4.6; on an H200 an empty "      \
  "kernel 2.4-2.7, the early return 2.9 and no compute 4.4, so 50x leaves the pool, the 128-add RMS "   \
  "chain and the FP4 transform 0.2 us where they take 0.8; the reference shares the numerics, so "      \
  "faster exps cut its time too (docs/SPEED.md, twenty-second, thirty-eighth, forty-second and "        \
  "forty-third rounds; ci/floor_trees.py)"
#define ATTENTION_WHY                                                                                  \
  "three dependent passes, chained: with every pass only waiting and exiting the B = 1 line reads "     \
  "4.5-4.8 us on an H100 and 4.5 on an H200 (launch and hand-overs), the scores pass adds about 7.9 "   \
  "(decoding its own rows and 640 x 64 chains of 512 terms), the softmax 3.9 (a 640-add ordered sum "   \
  "a row) and the values 6.0 (640-term ordered chains, held by the SM's shared-memory pipe), about "    \
  "18 us on either card; fewer candidates add a gather pass (docs/SPEED.md, nineteenth, "               \
  "thirty-seventh, thirty-eighth and forty-third rounds; ci/floor_trees.py)"

/*
** The numbers ("Numbers it must reach"), at the shapes it names:
** scoring + top-k at 64K, attention at B = 1 and 64 for both ratios, every
** compressor line, IndexShare at K = 2048.
*/
static const report_target targets[] = {
    {"csa4 scoring + top-k", "pos 65536, B=1", REPORT_TARGET_MAX_US, 60.0,
     "the index scoring's FP32 chains and the selection's cluster barriers (docs/SPEED.md)"},
    {"csa4 scoring + top-k", "pos 65536, B=64", REPORT_TARGET_MAX_US, 2000.0,
     "the index scoring's FP32 work, 4.5x its floor (docs/SPEED.md)"},
    {"csa4 sink attention", "*, B=1", REPORT_TARGET_MAX_US, 20.0, ATTENTION_WHY},
    {"csa128 sink attention", "*, B=1", REPORT_TARGET_MAX_US, 20.0, ATTENTION_WHY},
    {"csa4 sink attention", "*, B=64", REPORT_TARGET_MAX_US, 600.0,
     "the gather and the softmax's serial sums beside the wide tiles (docs/SPEED.md)"},
    {"csa128 sink attention", "*, B=64", REPORT_TARGET_MAX_US, 600.0,
     "the gather and the softmax's serial sums beside the wide tiles (docs/SPEED.md)"},
    {"csa128 compression", "*", REPORT_TARGET_MIN_SPEEDUP, 50.0, COMPRESSOR_WHY},
    {"csa4 main compression", "*", REPORT_TARGET_MIN_SPEEDUP, 50.0, COMPRESSOR_WHY},
    {"csa4 index-key compression", "*", REPORT_TARGET_MIN_SPEEDUP, 50.0, COMPRESSOR_WHY},
    {"IndexShare decode step", "K=2048, *", REPORT_TARGET_MIN_SPEEDUP, 10.0,
     "the rows kernel's gathers and ordered chains (docs/SPEED.md, eleventh round)"},
};

int report_target_count(void) { return (int)(sizeof targets / sizeof targets[0]); }

const report_target *report_target_at(int i) { return i >= 0 && i < report_target_count() ? &targets[i] : NULL; }

const report_target *report_target_find(const char *kernel, const char *shape) {
  size_t i;
  for (i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (!strcmp(targets[i].kernel, kernel) && fnmatch(targets[i].shape_glob, shape, 0) == 0) return &targets[i];
  return NULL;
}

int report_target_judge(const char *kernel, const char *shape, int have_fast, double fast_us, int have_ref,
                        double ref_us, char *goal, size_t goal_len, char *status, size_t status_len,
                        const char **why) {
  const report_target *t = report_target_find(kernel, shape);
  const int ceiling = t && t->kind == REPORT_TARGET_MAX_US;
  double figure, off;
  goal[0] = status[0] = '\0';
  *why = NULL;
  if (!t) return 0;
  snprintf(goal, goal_len, ceiling ? "<= %g us" : ">= %gx", t->value);
  if (!have_fast || fast_us <= 0 || (!ceiling && !have_ref)) {
    snprintf(status, status_len, ceiling ? "not measured (needs the fast variant's figure)"
                                         : "not measured (needs both variants: --variant both)");
    return 1;
  }
  figure = ceiling ? fast_us : ref_us / fast_us;
  off = ceiling ? fast_us / t->value : t->value / figure;
  if (off <= 1.0)
    snprintf(status, status_len, "%.1f%s, reached", figure, ceiling ? " us" : "x");
  else if (ceiling)
    snprintf(status, status_len, "%.1f us, %.1f us over (%.2fx)", figure, figure - t->value, off);
  else /* the fast time the speedup needs, from this call's reference figure */
    snprintf(status, status_len, "%.1fx, short by %.2fx (%gx is %.1f us)", figure, off, t->value,
             ref_us / t->value);
  if (off > 1.0) *why = t->why_short;
  return 1;
}

double report_target_oracle_speedup(int cores) { return cores == 2 ? 1.8 : cores == 16 ? 10.0 : 0.0; }

int report_target_oracle_verdict(int cores, int first, long online, int shapes, double lowest,
                                 const char *lowest_shape, int reached, char *buf, size_t len) {
  const double target = report_target_oracle_speedup(cores);
  char goal[32], head[64];
  buf[0] = '\0';
  if (target <= 0) return 0;
  snprintf(goal, sizeof goal, ">= %gx", target);
  snprintf(head, sizeof head, "%-10s oracle on %d cores", goal, cores); /* the kernels' verdicts' columns */
  if (first != 1)
    snprintf(buf, len, "%s: not judged: the target is over one thread, and the first count is %d", head, first);
  else if (online < cores)
    snprintf(buf, len, "%s: not judged: %ld processors online, fewer than %d", head, online, cores);
  else if (shapes < 1)
    snprintf(buf, len, "%s: not measured: no shape was timed", head);
  else if (shapes == 1 && reached)
    snprintf(buf, len, "%s: %.2fx (%s), reached", head, lowest, lowest_shape);
  else if (shapes == 1)
    snprintf(buf, len, "%s: %.2fx (%s), short by %.2fx", head, lowest, lowest_shape, target / lowest);
  else if (reached == shapes)
    snprintf(buf, len, "%s: lowest %.2fx (%s), reached on all %d shapes", head, lowest, lowest_shape, shapes);
  else
    snprintf(buf, len, "%s: lowest %.2fx (%s), short by %.2fx; reached on %d of %d shapes", head, lowest,
             lowest_shape, target / lowest, reached, shapes);
  return 1;
}

int report_target_verdict(const char *kernel, const char *shape, int have_fast, double fast_us, int have_ref,
                          double ref_us, char *buf, size_t len, const char **why) {
  char goal[32], status[256];
  buf[0] = '\0';
  if (!report_target_judge(kernel, shape, have_fast, fast_us, have_ref, ref_us, goal, sizeof goal, status,
                           sizeof status, why))
    return 0;
  snprintf(buf, len, "%-10s %s, %s: %s", goal, kernel, shape, status);
  return 1;
}

void report_target_log_add(report_target_log *log, const char *kernel, const char *shape, int have_fast,
                           double fast_us, int have_ref, double ref_us) {
  char line[sizeof log->line[0] - 8];
  const char *why;
  int k;
  if (!strcmp(kernel, REPORT_LAUNCH_FLOOR_KERNEL) && have_fast) {
    const size_t used = strlen(log->floors);
    if (used < sizeof log->floors)
      snprintf(log->floors + used, sizeof log->floors - used, "%s%s %.1f us", used ? "; " : "", shape, fast_us);
    return;
  }
  if (!report_target_verdict(kernel, shape, have_fast, fast_us, have_ref, ref_us, line, sizeof line, &why)) return;
  if (log->n == REPORT_TARGET_LOG_MAX) {
    log->dropped++;
    return;
  }
  if (!why) {
    snprintf(log->line[log->n++], sizeof log->line[0], "%s", line);
    return;
  }
  for (k = 0; k < log->n_why && log->why[k] != why; k++) continue; /* each reason printed once, numbered */
  if (k == log->n_why) log->why[log->n_why++] = why;
  snprintf(log->line[log->n++], sizeof log->line[0], "%s [%d]", line, k + 1);
}

void report_target_log_print(const report_target_log *log, FILE *out) {
  int i;
  if (!log->n) return;
  fprintf(out, "targets (issue 8, an H200, the fast variant):\n");
  for (i = 0; i < log->n; i++) fprintf(out, "  %s\n", log->line[i]);
  if (log->dropped) fprintf(out, "  (%d more lines had targets; the first %d are shown)\n", log->dropped, log->n);
  if (log->n_why) fprintf(out, "why short:\n");
  for (i = 0; i < log->n_why; i++) fprintf(out, "  [%d] %s\n", i + 1, log->why[i]);
  if (log->n_why && log->floors[0]) /* the reasons quote one card's floors; these are this GPU's */
    fprintf(out, "  this GPU's launch floors (the launch floor lines): %s\n", log->floors);
}

/* ---- from a results database ---------------------------------------------------------- */

/* The bench run run_spec names (a decimal id with bench rows, or latest/NULL): 0, or -1 with err. */
static int bench_run_resolve(sqlite3 *db, const char *db_path, const char *run_spec, long long *run,
                             char *err, size_t err_len) {
  const int latest = !run_spec || !strcmp(run_spec, "latest");
  sqlite3_stmt *st = NULL;
  char *end = NULL;
  long long id = 0;
  int rc;
  if (!latest) {
    id = strtoll(run_spec, &end, 10);
    if (!*run_spec || *end || id < 1)
      return report_fail(err, err_len, "--run '%s' is not a run id or latest", run_spec);
  }
  rc = sqlite3_prepare_v2(
      db, latest ? "SELECT max(run_id) FROM bench" : "SELECT run_id FROM bench WHERE run_id = ?1 LIMIT 1", -1, &st,
      NULL);
  if (rc == SQLITE_OK && !latest) sqlite3_bind_int64(st, 1, id);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    report_fail(err, err_len, "database '%s': reading bench: %s", db_path, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return -1;
  }
  *run = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  if (!*run && !latest) return report_fail(err, err_len, "--run %lld recorded no bench figures in '%s'", id, db_path);
  return 0;
}

int report_targets_write(const char *db_path, const char *run_spec, FILE *out, char *err, size_t err_len) {
  static report_target_log log; /* 32 KB: kept off the stack */
  sqlite3 *db = NULL;
  report_pool *pool = report_pool_new();
  report_bench_line *lines = NULL;
  long long run = 0;
  int schema = 0, n = 0, i, rc = -1;
  memset(&log, 0, sizeof log);
  if ((rc = report_bench_db_open(db_path, &db, &schema, out, err, err_len)) != 1) goto done;
  rc = -1;
  if (bench_run_resolve(db, db_path, run_spec, &run, err, err_len) != 0) goto done;
  if (!run) {
    fprintf(out, "no bench figures in %s (bitgate bench records them when it runs on a GPU)\n", db_path);
    rc = 0;
    goto done;
  }
  if (report_bench_read(db, schema, run, pool, &lines, &n) != SQLITE_OK) {
    report_fail(err, err_len, "database '%s': reading bench: %s", db_path, sqlite3_errmsg(db));
    goto done;
  }
  for (i = 0; i < n; i++)
    report_target_log_add(&log, lines[i].kernel, lines[i].shape, lines[i].have_fast, lines[i].fast_us,
                          lines[i].have_ref, lines[i].ref_us);
  fprintf(out, "bench run %lld of %s: %d lines, %d with a target\n", run, db_path, n, log.n + log.dropped);
  report_target_log_print(&log, out);
  rc = 0;
done:
  report_pool_free(pool);
  sqlite3_close(db); /* NULL is a no-op */
  return rc;
}
