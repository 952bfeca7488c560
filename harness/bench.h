/*
** bench.h: what the lines of `bitgate bench` share (cmd_bench.c, the
** command; bench.c, these helpers; bench_csa.c, both CSA ratios;
** bench_index_share.c, IndexShare): CUDA-event timing of graph replays,
** medians, the check that a device's outputs equal the oracle's before any
** figure is posted (a fast wrong kernel posts none), the H200 floor, and
** the table's lines with both kernel variants side by side.
*/
#ifndef HARNESS_BENCH_H
#define HARNESS_BENCH_H

#include "device/device_variant.h"
#include "device/runtime.h"
#include "reports/report_targets.h"
#include "harness/device_io.h"
#include "harness/session.h"
#include "harness/store.h"
#include "oracle/tensor.h"

#include <stddef.h>

/*
** The H200 floor a line's fraction is taken against (issue 8): plain
** (non-FMA) FP32 instructions at 33.5 T/s, HBM at 4.8 TB/s.  A kernel's
** floor is the larger of its FP32 work and its bytes at those rates.
*/
#define BENCH_FP32_PER_S 33.5e12
#define BENCH_BYTES_PER_S 4.8e12

/* The host bytes a bench case may take (the cases' own default budget is 256 MiB). */
#define BENCH_CASE_BUDGET ((size_t)8 << 30)

/*
** Where the figures go (issue 8 item 2): one bench row per line and
** variant, in run run_id of db.  db NULL: nothing is recorded (no device,
** so no device figure).  A row that cannot be stored is reported on stderr
** and sets failed; later rows are still tried.
*/
typedef struct bench_record {
  store *db;
  long long run_id;
  int failed;
} bench_record;

/*
** How a replay is timed (device_graph_time): held, the default, brackets
** the GPU's run of the graph alone; submit also counts the host's
** cudaGraphLaunch (0.5-1 us on the H200 hosts).  Each bench row records
** which (column timing; rows before schema 5 read 'sync': their stop event
** was recorded after the host had synchronised on the replay, about 5 us
** later than the graph's end).
*/
typedef enum bench_timing { BENCH_TIMING_HELD, BENCH_TIMING_SUBMIT } bench_timing;

/* "held" or "submit"; and back: 0, or -1 for another name. */
const char *bench_timing_name(bench_timing t);
int bench_timing_parse(const char *name, bench_timing *t);

/* What a bench command was asked for. */
/*
** --oracle-threads: instead of the table, the oracle's time of each shape's
** decode step at n thread counts (the first the baseline), `runs` timed runs
** of each after one untimed, the counts alternated run by run (bench_scaling.c).
*/
#define BENCH_SCALING_MAX 4
#define BENCH_SCALING_RUNS 5
#define BENCH_SCALING_RUNS_MAX 1000
typedef struct bench_scaling {
  int threads[BENCH_SCALING_MAX], n;
  int runs;
  int calls; /* --oracle-calls: each shape's time by parallel call site under its row */
  /*
  ** What the rows found, for the verdicts: shapes timed; for each later
  ** count k, the lowest best-time speedup over the first count, its shape,
  ** and how many shapes reached the count's target (report_targets.h).
  */
  int shapes;
  double lowest[BENCH_SCALING_MAX];
  char lowest_shape[BENCH_SCALING_MAX][64];
  int reached[BENCH_SCALING_MAX];
} bench_scaling;

/* Parses LIST ("1,2", "1,16"): 2 to BENCH_SCALING_MAX counts from 1 to ORACLE_THREADS_MAX; runs set to the default. */
int bench_scaling_parse(const char *list, bench_scaling *sc, char *err, size_t len);

/* Prints the scaling table's header. */
void bench_scaling_header(const bench_scaling *sc);

/*
** Times run(ctx) as bench_scaling says and prints label's row: each count's
** best and median ms, each later count's speedup over the first.  Leaves the
** thread count at its default.  0, or -1 when a run failed.
*/
int bench_scaling_row(bench_scaling *sc, const char *label, int (*run)(void *ctx), void *ctx);

/*
** --oracle-calls (bench_scaling_calls.c), driven by bench_scaling_row: reset
** before a shape's timed runs; each timed run between run_begin and
** run_end (count index k, run index, the step's ms); print after the row.
*/
void bench_calls_reset(void);
void bench_calls_run_begin(void);
void bench_calls_run_end(int k, int run, double step_ms);
void bench_calls_print(const bench_scaling *sc);

/*
** Prints the verdicts of issue 8's oracle targets (report_target_oracle_verdict)
** of every count that has one, under the rows; nothing when none has.
*/
void bench_scaling_verdicts(const bench_scaling *sc);

typedef struct bench_opts {
  int runs;             /* CUDA-event-timed replays a figure, >= 20 */
  bench_timing timing;
  unsigned variants;    /* bit (1u << device_variant) for each variant timed */
  const char *filter;   /* --filter GLOB over bench_shape_label's text, NULL: every shape */
  session *ses;         /* ses->have_device: device figures at all */
  bench_record *rec;
  report_target_log *targets; /* each line's verdict against issue 8's targets, NULL: none kept */
  bench_scaling *scaling; /* --oracle-threads: the scaling table alone, NULL: the bench table */
  /*
  ** An exploration run (--skip-kernels, --no-check; rec and targets are then
  ** NULL: nothing recorded, no verdicts).  no_check: a variant whose eager
  ** outputs differ from the oracle's is timed anyway (bench_outputs_checked).
  */
  int no_check;
} bench_opts;

/* One variant's figure for a line: median and minimum replay, in microseconds. */
typedef struct bench_time {
  int have;
  float median_us, min_us;
} bench_time;

/* One printed line: a kernel (or stage) at one shape, each variant's time. */
typedef struct bench_line {
  char kernel[64], shape[192];
  bench_time t[DEVICE_VARIANT_COUNT];
  double bytes, fp32; /* the work the floor counts: HBM bytes moved, FP32 instructions */
  double oracle_ms;   /* the oracle's time for the same work, < 0 when not measured */
} bench_line;

/*
** Whether the shape named label ("csa4 pos 65536, B=64", "IndexShare K=2048,
** heads 64, B=1") is selected by o->filter.
*/
int bench_shape_selected(const bench_opts *o, const char *label);

/* The line's H200 floor in microseconds (BENCH_*_PER_S above). */
double bench_floor_us(const bench_line *l);

/* Prints the table's header. */
void bench_print_header(void);

/*
** Prints l (fast and reference medians and minima, the speedup of fast
** over reference, the floor and fast's fraction of it; "-" for what was not
** measured), records one bench row per variant with a time, and adds its
** verdict to o->targets when a target applies (report_targets.h).
*/
void bench_line_emit(const bench_opts *o, const bench_line *l);

/* CLOCK_MONOTONIC in milliseconds. */
double bench_now_ms(void);

/* The median of t[0..n) (sorts t). */
double bench_median_ms(double *t, int n);

/* The least of t[0..n) (n >= 1). */
double bench_min_ms(const double *t, int n);

/*
** The oracle's time in ms: one untimed run first (it touches the outputs'
** pages: a first run's page faults serialise its threads and hid half the
** speedup on 16 cores), then the median of up to BENCH_ORACLE_RUNS timed
** runs, fewer once they add up to 2 s.  run(ctx) returns 0 on success; 0 or
** -1 (the first failing run's).
*/
#define BENCH_ORACLE_RUNS 3
int bench_oracle_ms(int (*run)(void *ctx), void *ctx, double *ms);

/* 0 when every output in io equals ref[0..n_out); else -1 with err naming the output. */
int bench_outputs_match(device_io *io, const tensor *ref, int n_out, char *err, size_t len);

/*
** bench_outputs_match before a variant is timed: 0 when the outputs match,
** or when they differ and o->no_check (then the difference is printed, with
** `what` naming the line's shape and variant, and the variant is timed
** anyway); else -1 with err.
*/
int bench_outputs_checked(const bench_opts *o, device_io *io, const tensor *ref, int n_out, const char *what,
                          char *err, size_t len);

/*
** Times o->runs replays of g with CUDA events as o->timing says, after one
** untimed: median and minimum in microseconds.  A held replay whose hold
** gave up before the host released it is timed again, up to
** BENCH_HOLD_RETRIES times in all.  0 or -1 with err.
*/
#define BENCH_HOLD_RETRIES 8
int bench_replays(const bench_opts *o, device_runtime *rt, device_graph *g, float *median_us, float *min_us,
                  char *err, size_t len);

/* Opens db and begins a run of suite 'bench' in rec (provenance as `bitgate run`); an exit code. */
int bench_record_begin(bench_record *rec, const char *db, int argc, char **argv);

/* Ends rec's run with status's verdict (a failed row makes it ENV) and closes db; the exit code. */
int bench_record_end(bench_record *rec, const char *db, int status);

/*
** The CSA lines (bench_csa.c): ratio-128 and ratio-4 decode steps at the
** issue's shapes, a line per stage and one for the whole step.  The
** IndexShare lines (bench_index_share.c).  Each returns an exit code: FAIL
** when a device's outputs differ from the oracle's, ENV when a case cannot
** be made or a device call fails.
*/
int bench_csa_lines(const bench_opts *o);
int bench_index_share_lines(const bench_opts *o);

/*
** The launch floor lines (bench_launch_floor.c): graphs of kernels that do
** nothing, one empty kernel and the B = 1 attention's three passes, timed
** on the GPU at hand, in the fast columns under the kernel "launch floor"
** (REPORT_LAUNCH_FLOOR_KERNEL), recorded like every line.  No line without
** a device.  An exit code: ENV when a device call fails.
*/
int bench_launch_floor_lines(const bench_opts *o);

/*
** Shape i's label ("csa4 pos 65536, B=64", "IndexShare K=2048, heads 64,
** B=1"), the text --filter matches, into label; 0 when there is no shape i.
** The line functions name their shapes with these too.
*/
int bench_csa_shape_label(int i, char *label, size_t len);
int bench_index_share_shape_label(int i, char *label, size_t len);

/*
** 0 when filter (NULL: no filter) keeps at least one shape; else -1 with err
** naming the filter and every shape's label.  Checked before anything is
** timed or recorded: a filter with a typo would otherwise record an empty run.
*/
int bench_filter_check(const char *filter, char *err, size_t err_len);

#endif
