/*
** bench_csa4.c: the ratio-4 lines of `bitgate bench` (see bench.h).
**
** One decode step of the csa4.state family (cases/csa4_cases.h makes the
** synthetic past: both caches full up to the position, a reachable carry)
** with B = 1, 64 heads, 64 index heads, topk 512, the FP8 cache and the
** 6-output configuration, at positions 4,096 and 65,536.  The step's token
** completes a 4-token block, so it emits one record into each cache.
**
** Lines: the oracle's time for the step (median of 3, as for ratio 128: the
** oracle is the reference, not the subject), the device's step time (median
** and min of N CUDA-event-timed replays of the captured step), then the
** device's time per stage group from device_csa4_time_stages (each the
** median of N eager runs).  No device figure is posted unless the device's
** six outputs equal the oracle's.  Every line with device figures is also
** recorded (bench_record_put): the step with its min and the oracle's
** time, each stage with its median only.
*/
#include "cases/csa4_cases.h"
#include "device/csa4_device.h"
#include "harness/bench.h"
#include "harness/exit_codes.h"
#include "oracle/csa.h"

#include <stdio.h>
#include <string.h>

#define BENCH_CSA4_ORACLE_RUNS 3

/* device_csa4_time_stages' groups, in its order. */
static const char *const stage_groups[4] = {"index-key compression", "main compression", "scoring + selection",
                                            "attention"};

typedef struct csa4_bench {
  tensor in[CSA_INPUT_COUNT], out[CSA_OUTPUT_MAX];
  int n_in, n_out;
  csa_attrs attrs;
} csa4_bench;

typedef struct csa4_figures {
  double oracle_ms;
  float step_us, step_min_us;
  double stage_us[4];
} csa4_figures;

static int bench_oracle(csa4_bench *b, double *median_ms, op_error *err) {
  const tensor *in[CSA_INPUT_COUNT];
  tensor *out[CSA_OUTPUT_MAX];
  double t[BENCH_CSA4_ORACLE_RUNS];
  int i, r;
  for (i = 0; i < b->n_in; i++) in[i] = b->in[i].dt == DTYPE_NONE ? NULL : &b->in[i];
  for (i = 0; i < b->n_out; i++) out[i] = &b->out[i];
  for (r = 0; r < BENCH_CSA4_ORACLE_RUNS; r++) {
    double t0 = bench_now_ms();
    if (oracle_csa4_run(&b->attrs, in, b->n_in, out, b->n_out, NULL, err) != 0) return -1;
    t[r] = bench_now_ms() - t0;
  }
  *median_ms = bench_median_ms(t, BENCH_CSA4_ORACLE_RUNS);
  return 0;
}

/*
** An eager warm-up whose outputs must equal the oracle's, then the captured
** step's replays, then the per-stage timing (eager, on the same buffers).
*/
static int bench_device(device_runtime *rt, csa4_bench *b, int runs, csa4_figures *f, char *err, size_t len) {
  device_io io;
  device_csa4 *k = NULL;
  device_graph *g = NULL;
  op_error derr;
  int rc = -1;
  op_error_clear(&derr);
  if (device_io_open(&io, rt, b->in, b->n_in, b->out, b->n_out, err, len) != 0) return -1;
  if (device_csa4_create(rt, &b->attrs, &k, err, len) != 0) goto done;
  if (device_csa4_execute(k, io.in_p, io.n_in, io.out_p, io.n_out, &derr) != DEVICE_CSA_OK) {
    snprintf(err, len, "eager warm-up: %s", derr.message);
    goto done;
  }
  if (bench_outputs_match(&io, b->out, b->n_out, err, len) != 0) goto done;
  if (device_runtime_capture_begin(rt) != 0 ||
      device_csa4_execute(k, io.in_p, io.n_in, io.out_p, io.n_out, &derr) != DEVICE_CSA_OK ||
      device_runtime_capture_end(rt, &g) != 0) {
    snprintf(err, len, "capture: %s %s", derr.message, device_runtime_error(rt));
    goto done;
  }
  if (bench_replays(rt, g, runs, &f->step_us, &f->step_min_us, err, len) != 0) goto done;
  if (device_csa4_time_stages(k, io.in_p, io.n_in, io.out_p, io.n_out, runs, f->stage_us, &derr) != 0) {
    snprintf(err, len, "stage timing: %s", derr.message);
    goto done;
  }
  rc = 0;
done:
  if (g) device_graph_destroy(g);
  if (k) device_csa4_destroy(k);
  device_io_close(&io);
  return rc;
}

/* Materializes the step at `position` (the cursor after it); 0 or -1 with err. */
static int bench_load(long long position, csa4_bench *b, char *err, size_t len) {
  char spec[CSA4_CASE_SPEC_MAX];
  csa4_case c;
  snprintf(spec, sizeof spec,
           "family=csa4.state op=CompressedSparseAttention ratio=4 b=1 heads=64 iheads=64 topk=512 window=128 "
           "start=%lld prefill=1 decode=0 cap=%lld outputs=6 bias=none sink=zero scale=none seed=1",
           position - 1, position / CSA4_RATIO);
  if (cases_csa4_parse(spec, &c, err, len) != 0) return -1;
  return cases_csa4_materialize(&c, 0, b->in, &b->n_in, b->out, &b->n_out, &b->attrs, err, len);
}

static void print_figures(long long position, const csa4_figures *f, int have_device, int runs,
                          bench_record *rec) {
  char kernel[64], shape[160];
  int st;
  if (!have_device) {
    printf("csa4 decode, 64 heads, pos %-8lld %10.2f %12s %12s %14s\n", position, f->oracle_ms, "-", "-", "-");
    return;
  }
  printf("csa4 decode, 64 heads, pos %-8lld %10.2f %12.1f %12.1f %14.1f\n", position, f->oracle_ms, f->step_us,
         f->step_min_us, f->step_us); /* the step emits one record per cache */
  snprintf(shape, sizeof shape, "b=1 heads=64 iheads=64 topk=512 window=128 cache=fp8 outputs=6 pos=%lld", position);
  bench_record_put(rec, "csa4 decode step", shape, f->step_us, f->step_min_us, runs, f->oracle_ms);
  for (st = 0; st < 4; st++) {
    printf("  stage %-27s %10s %12.1f %12s %14s\n", stage_groups[st], "-", f->stage_us[st], "-", "-");
    snprintf(kernel, sizeof kernel, "csa4 stage %s", stage_groups[st]);
    bench_record_put(rec, kernel, shape, f->stage_us[st], -1, runs, -1); /* a stage: median only, no oracle */
  }
}

int bench_csa4_lines(session *ses, int runs, bench_record *rec) {
  static const long long positions[] = {4096, 65536};
  char err[1024];
  int i, status = EXIT_CODE_PASS;
  for (i = 0; i < 2; i++) {
    csa4_bench b;
    csa4_figures f;
    op_error oerr;
    memset(&b, 0, sizeof b);
    memset(&f, 0, sizeof f);
    op_error_clear(&oerr);
    err[0] = '\0';
    if (bench_load(positions[i], &b, err, sizeof err) != 0 || bench_oracle(&b, &f.oracle_ms, &oerr) != 0) {
      fprintf(stderr, "bitgate bench: csa4 position %lld: %s%s\n", positions[i], err, oerr.message);
      if (status != EXIT_CODE_FAIL) status = EXIT_CODE_ENV;
    } else if (ses->have_device && bench_device(ses->env.rt, &b, runs, &f, err, sizeof err) != 0) {
      fprintf(stderr, "bitgate bench: csa4 position %lld: %s\n", positions[i], err);
      status = EXIT_CODE_FAIL;
    } else {
      print_figures(positions[i], &f, ses->have_device, runs, rec);
    }
    cases_csa4_release(b.in, b.out);
  }
  return status;
}
