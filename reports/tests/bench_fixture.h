/*
** bench_fixture.h: bench runs written through the store API (harness/store.h)
** as `bitgate bench` records them, for the tests of the readers of table
** bench (test_report_trend.c, test_report_targets.c,
** test_report_compare.c).  Criterion asserts
** that each write succeeds.
*/
#ifndef BENCH_FIXTURE_H
#define BENCH_FIXTURE_H

#include "harness/store.h"

/* A finished run of suite 'bench' by build (rev, hash), holding rows[0..n). */
void bench_fixture_run(store *s, const char *rev, const char *hash, const store_bench_row *rows, int n);

/* The same, recorded with this command line (e.g. led by BITGATE_KERNEL_TREE='DIR'). */
void bench_fixture_run_as(store *s, const char *rev, const char *hash, const char *command_line,
                          const store_bench_row *rows, int n);

/* A bench row: median_us, its minimum 0.1 us lower, 20 replays. */
store_bench_row bench_fixture_figure(const char *kernel, const char *shape, const char *variant, const char *timing,
                                     double median_us);

#endif
