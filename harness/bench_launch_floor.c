/*
** bench_launch_floor.c: the launch floor lines of `bitgate bench` (bench.h):
** graphs of kernels that do nothing (device/kernels/bench_floor.cu), timed
** as every line is, on the GPU at hand.
**
** Why: a line's time is what its launches cost on this card and host plus
** what its kernels do, and only the second part is the kernels'.  The first
** part moves between machines: a graph of one empty kernel read 2.46-2.56
** us held on the H200 of the seventeenth and twenty-second rounds and
** 2.85-3.07 us on the H100s of the thirty-ninth (docs/SPEED.md), so a
** target missed by less than that difference is read against these lines,
** not against another card's figures.
**
** Two lines, each in the fast columns (neither is a variant):
**   "one empty kernel"      one block of 32 threads;
**   "attention passes, B=1" three passes that release the next and wait
**                           for the one before, launched as
**                           csa_device_attention_plan launches the B = 1
**                           attention at 640 candidates (its grids, chained
**                           launches and reserved shared memory), so the
**                           line is that attention with its work left out.
*/
#include "device/csa_device_common.h"
#include "harness/bench.h"
#include "harness/exit_codes.h"
#include "reports/report_targets.h"

#include <stdio.h>
#include <string.h>

#define FLOOR_HEADS 64       /* the bench's CSA steps: 64 heads */
#define FLOOR_CANDIDATES 640 /* 128 window rows + 512 records or selected ones */

/* Captures the launches `launch` makes into *g; the capture is always closed. 0, or -1 with err. */
static int capture(device_runtime *rt, int (*launch)(device_runtime *rt, void *kernel), void *kernel,
                   device_graph **g, char *err, size_t len) {
  int failed;
  *g = NULL;
  if (device_runtime_capture_begin(rt) != 0) return snprintf(err, len, "%s", device_runtime_error(rt)), -1;
  failed = launch(rt, kernel) != 0;
  if (failed) snprintf(err, len, "%s", device_runtime_error(rt)); /* before capture_end's own message */
  if (device_runtime_capture_end(rt, g) != 0) {
    if (!failed) snprintf(err, len, "%s", device_runtime_error(rt));
    failed = 1;
  }
  if (!failed) return 0;
  device_graph_destroy(*g);
  *g = NULL;
  return -1;
}

static void *no_args[1]; /* the floor kernels take no parameters */

static int launch_empty(device_runtime *rt, void *kernel) {
  return device_runtime_launch(rt, kernel, "bench_floor_empty", 1, 32, no_args);
}

/*
** The B = 1 attention's passes, each bench_floor_pass, through the launcher
** the attention itself uses (its plan's grids, chaining and reserved shared
** memory).  Its early-release mask is an argument the floor kernel does not
** take: at B = 1 the plan releases the scores and softmax passes early, as
** bench_floor_pass always does, and nothing follows the values pass.
*/
static int launch_passes(device_runtime *rt, void *kernel) {
  static const int one_kernel[CSA_ATTN_PASSES][CSA_TILINGS]; /* every pass and tiling: kernels[0] */
  void *const kernels[] = {kernel};
  const char *const names[] = {"bench_floor_pass"};
  unsigned early = 0;
  void *args[] = {&early}; /* the passes' last argument, by the launcher's convention; unread here */
  return csa_device_launch_attention(rt, kernels, names, one_kernel, 1, FLOOR_HEADS, FLOOR_CANDIDATES, args, &early);
}

/* One line: the kernel found, the graph captured and timed, the line emitted. 0, or -1 with err. */
static int floor_line(const bench_opts *o, const char *kernel_name, const char *shape,
                      int (*launch)(device_runtime *rt, void *kernel), char *err, size_t len) {
  device_runtime *rt = o->ses->env.rt;
  device_graph *g = NULL;
  void *kernel = NULL;
  bench_line l;
  int rc;
  memset(&l, 0, sizeof l);
  if (device_runtime_kernel(rt, "bench_floor.cu", kernel_name, &kernel) != 0)
    return snprintf(err, len, "%s", device_runtime_error(rt)), -1;
  if (capture(rt, launch, kernel, &g, err, len) != 0) return -1;
  rc = bench_replays(o, rt, g, &l.t[DEVICE_VARIANT_FAST].median_us, &l.t[DEVICE_VARIANT_FAST].min_us, err, len);
  device_graph_destroy(g);
  if (rc != 0) return -1;
  snprintf(l.kernel, sizeof l.kernel, "%s", REPORT_LAUNCH_FLOOR_KERNEL);
  snprintf(l.shape, sizeof l.shape, "%s", shape);
  l.t[DEVICE_VARIANT_FAST].have = 1;
  l.oracle_ms = -1;
  bench_line_emit(o, &l);
  return 0;
}

int bench_launch_floor_lines(const bench_opts *o) {
  char err[1024];
  if (!o->ses->have_device) return EXIT_CODE_PASS;
  if (floor_line(o, "bench_floor_empty", "one empty kernel", launch_empty, err, sizeof err) != 0 ||
      floor_line(o, "bench_floor_pass", "attention passes, B=1", launch_passes, err, sizeof err) != 0) {
    fprintf(stderr, "bitgate bench: launch floor: %s\n", err);
    return EXIT_CODE_ENV;
  }
  return EXIT_CODE_PASS;
}
