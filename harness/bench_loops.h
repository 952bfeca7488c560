/*
** bench_loops.h: `bitgate bench --loops`, the B = 1 attention's inner loops
** timed alone on a GPU (device/kernels/loop_probe.cu says what each probe
** kernel runs).  For kernel work: a loop's cycles a term with nothing around
** it, next to the pass that runs it, tell whether the loop or what the pass
** does around it holds the pass (docs/SPEED.md).
**
** Each probe runs its kernel `runs` times on made-up operands.  Before any
** figure, the sums of its first launch are compared bit for bit with the
** same sums taken here in C, in the oracle's order; a probe whose sums differ
** prints the first difference and posts no figure.  Nothing is recorded.
*/
#ifndef HARNESS_BENCH_LOOPS_H
#define HARNESS_BENCH_LOOPS_H

#include "device/runtime.h"

#include <stddef.h>

/* One probe's figures: thread 0's loop cycles a term, over its blocks, the median over runs. */
typedef struct bench_loop_figure {
  char name[48];
  unsigned grid, block;
  long long terms;          /* terms of one chain a launch: n x reps */
  double median_block;      /* the median block's cycles a term */
  double slowest_block;     /* the slowest block's */
  int checked;              /* 1: the sums matched the C sums; 0: they differed (no figure) */
  char mismatch[160];       /* the first difference, when checked is 0 */
} bench_loop_figure;

#define BENCH_LOOP_PROBES 10

/*
** Runs every probe `runs` times (>= 1) on rt and fills fig[0..BENCH_LOOP_PROBES).
** 0, or -1 on a CUDA or NVRTC error, with the message in err.
*/
int bench_loops_measure(device_runtime *rt, int runs, bench_loop_figure *fig, char *err, size_t err_len);

/* Prints the figures as a table, the mismatches under it; 1 when every probe's sums matched. */
int bench_loops_print(const bench_loop_figure *fig, int runs);

#endif
