/*
** bench_scaling_calls.c: `bitgate bench --oracle-threads LIST --oracle-calls`
** (bench.h): under each shape's scaling row, where its step's time goes, by
** the oracle's parallel call sites (oracle_threads.h's profile), at each
** thread count.  A site whose speedup trails the row's is where the row
** loses; "between calls" is the step's work that no call spreads, and the
** lines under it place that work: before the first call, or after a site's
** calls (up to the next call), where it is a tenth of it or more.
*/
#include "harness/bench.h"
#include "oracle/oracle_threads.h"

#include <stdio.h>
#include <string.h>

#define SITES_MAX ORACLE_CALL_SITES_MAX

/* One shape's timed runs, by site: the sites in the order first seen at any count. */
static struct {
  const char *name[SITES_MAX];
  long long calls[SITES_MAX], items[SITES_MAX]; /* a step's, from the last run logged */
  double ms[BENCH_SCALING_MAX][SITES_MAX + 1][BENCH_SCALING_RUNS_MAX]; /* [k][SITES_MAX]: between calls */
  unsigned char seen[BENCH_SCALING_MAX][SITES_MAX + 1]; /* a count may take another path: a site of its own */
  double gap_ms[BENCH_SCALING_MAX][SITES_MAX + 1][BENCH_SCALING_RUNS_MAX]; /* after site s; [SITES_MAX]: before */
  unsigned char gap_seen[BENCH_SCALING_MAX][SITES_MAX + 1]; /* a site whose calls all ran nested has no gap */
  int n, dropped;
} shape;

static oracle_call_log run_log;

void bench_calls_reset(void) { memset(&shape, 0, sizeof shape); }

void bench_calls_run_begin(void) {
  memset(&run_log, 0, sizeof run_log);
  oracle_call_log_set(&run_log);
}

/* The shape's index of site name, added when new; -1 past SITES_MAX. */
static int site_of(const char *name) {
  int i;
  for (i = 0; i < shape.n && strcmp(shape.name[i], name); i++) continue;
  if (i < shape.n) return i;
  if (shape.n == SITES_MAX) return -1;
  shape.name[shape.n] = name;
  return shape.n++;
}

void bench_calls_run_end(int k, int run, double step_ms) {
  double in_calls = 0;
  int i, s;
  oracle_call_log_set(NULL);
  for (i = 0; i < run_log.n; i++) {
    const oracle_call_site *c = &run_log.site[i];
    if ((s = site_of(c->name)) < 0) {
      shape.dropped++;
      continue;
    }
    shape.ms[k][s][run] = (double)c->ns * 1e-6;
    shape.gap_ms[k][s][run] = (double)c->after_ns * 1e-6;
    shape.gap_seen[k][s] |= c->after_ns > 0; /* a top-level call is followed by some time, if only the return */
    shape.seen[k][s] = 1;
    shape.calls[s] = c->calls, shape.items[s] = c->items;
    in_calls += shape.ms[k][s][run];
  }
  shape.dropped += run_log.dropped;
  shape.ms[k][SITES_MAX][run] = step_ms - in_calls;
  shape.gap_ms[k][SITES_MAX][run] = (double)run_log.before_ns * 1e-6;
  shape.gap_seen[k][SITES_MAX] = 1;
  shape.seen[k][SITES_MAX] = 1;
}

/*
** One line: a site (or between calls, s == SITES_MAX), each count's best and
** median, the speedups; "-" where a count made no such call (at one thread
** a call over one item runs inline and its inner calls show; at more, they
** run inside the workers' items and are its time).
*/
typedef double site_runs[SITES_MAX + 1][BENCH_SCALING_RUNS_MAX]; /* one count's ms or gap_ms */

/* The median of site s's runs at count k in ms (shape.ms or shape.gap_ms). */
static double site_median(const bench_scaling *sc, site_runs *ms, int k, int s) {
  static double t[BENCH_SCALING_RUNS_MAX];
  memcpy(t, ms[k][s], (size_t)sc->runs * sizeof t[0]); /* bench_median_ms sorts its copy */
  return bench_median_ms(t, sc->runs);
}

static void print_site(const bench_scaling *sc, site_runs *ms, unsigned char (*seen)[SITES_MAX + 1], int s,
                       const char *head) {
  double best[BENCH_SCALING_MAX], median[BENCH_SCALING_MAX];
  int k;
  printf("%s", head);
  for (k = 0; k < sc->n; k++) {
    if (!seen[k][s]) {
      printf(" %19s", "-");
      continue;
    }
    best[k] = bench_min_ms(ms[k][s], sc->runs);
    median[k] = site_median(sc, ms, k, s);
    printf(" %9.3f / %-7.3f", best[k], median[k]);
  }
  for (k = 1; k < sc->n; k++)
    if (seen[0][s] && seen[k][s] && best[k] > 0 && median[k] > 0)
      printf("  %5.2fx / %5.2fx", best[0] / best[k], median[0] / median[k]);
    else
      printf("  %15s", "-");
  printf("\n");
}

/* A gap is shown where, at some count, its median is a tenth of that count's between calls or more. */
static int gap_is_shown(const bench_scaling *sc, int s) {
  int k;
  if (s >= shape.n && s != SITES_MAX) return 0;
  for (k = 0; k < sc->n; k++)
    if (shape.gap_seen[k][s] && shape.seen[k][SITES_MAX]) {
      const double gap = site_median(sc, shape.gap_ms, k, s), between = site_median(sc, shape.ms, k, SITES_MAX);
      if (gap > 0 && gap >= 0.1 * between) return 1;
    }
  return 0;
}

void bench_calls_print(const bench_scaling *sc) {
  char head[64];
  int s;
  printf("  %-20s%6s%8s  ms a step, best / median, as the row (--oracle-calls)\n", "parallel call", "calls", "items");
  for (s = 0; s < shape.n; s++) {
    snprintf(head, sizeof head, "  %-20.20s%6lld%8lld", shape.name[s], shape.calls[s], shape.items[s]);
    print_site(sc, shape.ms, shape.seen, s, head);
  }
  snprintf(head, sizeof head, "  %-34s", "between calls");
  print_site(sc, shape.ms, shape.seen, SITES_MAX, head);
  for (s = SITES_MAX; s >= 0; s = s == SITES_MAX ? 0 : s + 1 < shape.n ? s + 1 : -1) /* before, then the sites */
    if (gap_is_shown(sc, s)) {
      if (s == SITES_MAX) snprintf(head, sizeof head, "    %-32s", "before the first call");
      else snprintf(head, sizeof head, "    after %-26.26s", shape.name[s]);
      print_site(sc, shape.gap_ms, shape.gap_seen, s, head);
    }
  if (shape.dropped) printf("  (%d calls of sites past the first %d are in 'between calls')\n", shape.dropped, SITES_MAX);
}
