/*
** bench_scaling.c: `bitgate bench --oracle-threads LIST` (bench.h): the
** oracle's decode step timed at several thread counts, the counts taking
** turns run by run so that a shared host's drift falls on all of them alike.
*/
#include "harness/bench.h"
#include "oracle/oracle_threads.h"
#include "reports/report_targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bench_scaling_parse(const char *list, bench_scaling *sc, char *err, size_t len) {
  const char *p = list;
  memset(sc, 0, sizeof *sc);
  sc->runs = BENCH_SCALING_RUNS;
  while (*p >= '0' && *p <= '9' && sc->n < BENCH_SCALING_MAX) { /* strtol alone would take a sign or blanks */
    char *end;
    const long n = strtol(p, &end, 10);
    if (n < 1 || n > ORACLE_THREADS_MAX) break;
    sc->threads[sc->n++] = (int)n;
    if (*end == '\0' && sc->n >= 2) return 0;
    if (*end != ',') break;
    p = end + 1;
  }
  return snprintf(err, len,
                  "--oracle-threads '%s': expected 2 to %d thread counts from 1 to %d, comma-separated (e.g. 1,2)",
                  list, BENCH_SCALING_MAX, ORACLE_THREADS_MAX),
         -1;
}

void bench_scaling_header(const bench_scaling *sc) {
  int i;
  printf("oracle time of one decode step, ms, best / median of %d runs a count, the counts alternated;\n"
         "speedup: the first count's time over each other's, best / median (%ld processors online)\n",
         sc->runs, sysconf(_SC_NPROCESSORS_ONLN));
  printf("%-36s", "shape");
  for (i = 0; i < sc->n; i++) {
    char head[32];
    snprintf(head, sizeof head, "%d thread%s", sc->threads[i], sc->threads[i] == 1 ? "" : "s");
    printf(" %19s", head);
  }
  for (i = 1; i < sc->n; i++) {
    char head[32];
    snprintf(head, sizeof head, "speedup %d", sc->threads[i]);
    printf(" %15s", head);
  }
  printf("\n");
}

int bench_scaling_row(bench_scaling *sc, const char *label, int (*run)(void *ctx), void *ctx) {
  static double t[BENCH_SCALING_MAX][BENCH_SCALING_RUNS_MAX];
  double best[BENCH_SCALING_MAX], median[BENCH_SCALING_MAX];
  int i, k, rc = 0;
  for (k = 0; k < sc->n && rc == 0; k++) { /* untimed: starts the helpers, touches the pages */
    oracle_threads_set(sc->threads[k]);
    rc = run(ctx);
  }
  if (sc->calls) bench_calls_reset();
  for (i = 0; i < sc->runs && rc == 0; i++)
    for (k = 0; k < sc->n && rc == 0; k++) {
      double t0;
      oracle_threads_set(sc->threads[k]);
      if (sc->calls) bench_calls_run_begin();
      t0 = bench_now_ms();
      rc = run(ctx);
      t[k][i] = bench_now_ms() - t0;
      if (sc->calls) bench_calls_run_end(k, i, t[k][i]);
    }
  oracle_threads_set(0);
  if (rc != 0) return -1;
  printf("%-36s", label);
  for (k = 0; k < sc->n; k++) {
    best[k] = bench_min_ms(t[k], sc->runs);
    median[k] = bench_median_ms(t[k], sc->runs);
    printf(" %9.2f / %-7.2f", best[k], median[k]);
  }
  for (k = 1; k < sc->n; k++) {
    const double speedup = best[0] / best[k], target = report_target_oracle_speedup(sc->threads[k]);
    printf("  %5.2fx / %5.2fx", speedup, median[0] / median[k]);
    if (!sc->shapes || speedup < sc->lowest[k]) {
      sc->lowest[k] = speedup;
      snprintf(sc->lowest_shape[k], sizeof sc->lowest_shape[k], "%s", label);
    }
    sc->reached[k] += target > 0 && speedup >= target;
  }
  sc->shapes++;
  printf("\n");
  if (sc->calls) bench_calls_print(sc);
  fflush(stdout);
  return 0;
}

void bench_scaling_verdicts(const bench_scaling *sc) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  char line[512];
  int k, printed = 0;
  for (k = 1; k < sc->n; k++) {
    if (!report_target_oracle_verdict(sc->threads[k], sc->threads[0], online, sc->shapes, sc->lowest[k],
                                      sc->lowest_shape[k], sc->reached[k], line, sizeof line))
      continue;
    if (!printed++) printf("targets (issue 8, judged on the best times; docs/SPEED.md \"Oracle threads\"):\n");
    printf("  %s\n", line);
  }
}
