/*
** bench_stats.c: the clock and the order statistics of bench.h, apart
** from bench.c's table and store so that what needs only these (the loop
** probes, bench_loops.c, and their test) links without the rest.
*/
#include "harness/bench.h"

#include <stdlib.h>
#include <time.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

double bench_median_ms(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return t[n / 2];
}

double bench_min_ms(const double *t, int n) {
  double m = t[0];
  int i;
  for (i = 1; i < n; i++)
    if (t[i] < m) m = t[i];
  return m;
}
