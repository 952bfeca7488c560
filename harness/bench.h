/*
** bench.h: what the lines of `bitgate bench` share (cmd_bench.c for ratio
** 128, bench_csa4.c for ratio 4): wall-clock and CUDA-event timing, medians,
** and the check that a device's outputs equal the oracle's before any figure
** is posted (a fast wrong kernel posts none).
*/
#ifndef HARNESS_BENCH_H
#define HARNESS_BENCH_H

#include "device/runtime.h"
#include "harness/device_io.h"
#include "harness/session.h"
#include "harness/store.h"
#include "oracle/tensor.h"

#include <stddef.h>

/*
** Where the figures go (issue 8 item 2): one bench row per printed line,
** in run run_id of db.  db NULL: nothing is recorded (no device, so no
** device figure).  A row that cannot be stored is reported on stderr and
** sets failed; later rows are still tried.
*/
typedef struct bench_record {
  store *db;
  long long run_id;
  int failed;
} bench_record;

/* Records one line's figures (variant "fast": bench's launchers are the default ones); see store_bench_row. */
void bench_record_put(bench_record *rec, const char *kernel, const char *shape, double median_us, double min_us,
                      int runs, double oracle_ms);

/* The bench table's header and the column layout every line follows. */
#define BENCH_HEADER_FORMAT "%-34s %10s %12s %12s %14s\n"

/* CLOCK_MONOTONIC in milliseconds. */
double bench_now_ms(void);

/* The median of t[0..n) (sorts t). */
double bench_median_ms(double *t, int n);

/* 0 when every output in io equals ref[0..n_out); else -1 with err naming the output. */
int bench_outputs_match(device_io *io, const tensor *ref, int n_out, char *err, size_t len);

/* Times `runs` replays of g with CUDA events: median and minimum in microseconds.  0 or -1. */
int bench_replays(device_runtime *rt, device_graph *g, int runs, float *median_us, float *min_us, char *err,
                  size_t len);

/*
** The ratio-4 lines (bench_csa4.c): a decode step at positions 4,096 and
** 65,536; the device figures need ses->have_device.  Each printed line
** with device figures is recorded in rec.  Returns an exit code.
*/
int bench_csa4_lines(session *ses, int runs, bench_record *rec);

#endif
