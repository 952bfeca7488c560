/*
** cmd_bench.c: `bitgate bench`, speed figures (never a pass/fail test).
**
** A ratio-128 CSA decode step with 64 heads at the positions 4,096 and
** 65,536 (a synthetic state, so no long prefill is computed); the step
** completes a 128-token block, so it emits one record.  It prints the
** oracle's time (median of 3), and the device's time as the median and
** minimum of N CUDA-event-timed replays of the captured step, per step and
** per emitted record.  Then the ratio-4 lines (bench_csa4.c): the same step
** with the indexer, and the device's time per stage.  The device's outputs
** are checked against the oracle's once, so a fast wrong kernel cannot post
** a figure.
*/
#include "cases/csa128_cases.h"
#include "device/csa128_device.h"
#include "harness/bench.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/device_io.h"
#include "harness/diff.h"
#include "harness/exit_codes.h"
#include "harness/session.h"
#include "oracle/csa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char bench_help[] =
    "usage: bitgate bench [--runs N]\n\n"
    "Times a ratio-128 CSA decode step (64 heads, FP8 cache) at positions 4096\n"
    "and 65536: oracle (median of 3 runs) and device (median and min of N\n"
    "CUDA-event-timed graph replays, default 30), per step and per emitted\n"
    "record.  Then a ratio-4 decode step (64 heads, 64 index heads, topk 512,\n"
    "selected_indices output) at the same positions: the same figures, plus\n"
    "the device's median time per stage over N eager runs.  Needs a GPU for\n"
    "the device figures.\n\n" EXIT_CODES_HELP;

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

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

int bench_outputs_match(device_io *io, const tensor *ref, int n_out, char *err, size_t len) {
  int o;
  for (o = 0; o < n_out; o++) {
    tensor got;
    tensor_diff d;
    memset(&got, 0, sizeof got);
    if (device_io_download(io, o, &got) != 0 || tensor_diff_run(&ref[o], &got, &d) != 0) {
      tensor_free(&got);
      return snprintf(err, len, "device output %d differs from the oracle's: no figure", o), -1;
    }
    tensor_free(&got);
  }
  return 0;
}

int bench_replays(device_runtime *rt, device_graph *g, int runs, float *median_us, float *min_us, char *err,
                  size_t len) {
  float *ms = calloc((size_t)runs, sizeof *ms);
  int r;
  if (!ms) return snprintf(err, len, "out of memory"), -1;
  for (r = 0; r < runs; r++)
    if (device_runtime_timer_start(rt) != 0 || device_graph_replay(rt, g) != 0 ||
        device_runtime_timer_stop(rt, &ms[r]) != 0) {
      snprintf(err, len, "timing: %s", device_runtime_error(rt));
      free(ms);
      return -1;
    }
  qsort(ms, (size_t)runs, sizeof *ms, cmp_float);
  *median_us = ms[runs / 2] * 1e3f;
  *min_us = ms[0] * 1e3f;
  free(ms);
  return 0;
}

typedef struct bench_case {
  tensor in[CSA_INPUT_COUNT], out[CSA_OUTPUT_COUNT];
  int n_in, n_out;
  csa_attrs attrs;
} bench_case;

static int bench_oracle(bench_case *b, double *median_ms, op_error *err) {
  const tensor *in[CSA_INPUT_COUNT];
  tensor *out[CSA_OUTPUT_COUNT];
  double t[3];
  int i, r;
  for (i = 0; i < b->n_in; i++) in[i] = b->in[i].dt == DTYPE_NONE ? NULL : &b->in[i];
  for (i = 0; i < b->n_out; i++) out[i] = &b->out[i];
  for (r = 0; r < 3; r++) {
    double t0 = bench_now_ms();
    if (oracle_csa128_run(&b->attrs, in, b->n_in, out, b->n_out, NULL, err) != 0) return -1;
    t[r] = bench_now_ms() - t0;
  }
  *median_ms = bench_median_ms(t, 3);
  return 0;
}

/* Captures the step and times `runs` replays; checks the outputs once. */
static int bench_device(device_runtime *rt, bench_case *b, int runs, float *median_us, float *min_us, char *err,
                        size_t len) {
  device_io io;
  device_csa128 *k = NULL;
  device_graph *g = NULL;
  op_error derr;
  int rc = -1;
  if (device_io_open(&io, rt, b->in, b->n_in, b->out, b->n_out, err, len) != 0) return -1;
  if (device_csa128_create(rt, &b->attrs, &k, err, len) != 0) goto done;
  if (device_csa128_execute(k, io.in_p, io.n_in, io.out_p, io.n_out, &derr) != DEVICE_CSA_OK) {
    snprintf(err, len, "eager warm-up: %s", derr.message);
    goto done;
  }
  if (bench_outputs_match(&io, b->out, b->n_out, err, len) != 0) goto done;
  if (device_runtime_capture_begin(rt) != 0 ||
      device_csa128_execute(k, io.in_p, io.n_in, io.out_p, io.n_out, &derr) != DEVICE_CSA_OK ||
      device_runtime_capture_end(rt, &g) != 0) {
    snprintf(err, len, "capture: %s %s", derr.message, device_runtime_error(rt));
    goto done;
  }
  rc = bench_replays(rt, g, runs, median_us, min_us, err, len);
done:
  if (g) device_graph_destroy(g);
  if (k) device_csa128_destroy(k);
  device_io_close(&io);
  return rc;
}

int cmd_bench(int argc, char **argv) {
  static const long long positions[] = {4096, 65536};
  unsigned long long runs = 30;
  session ses;
  const char *v;
  char err[1024], spec[512];
  int i, r, status = EXIT_CODE_PASS;
  for (i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) return fputs(bench_help, stdout), EXIT_CODE_PASS;
    if ((r = cli_option_value("bench", argc, argv, &i, "--runs", &v)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
      if (cli_parse_u64(v, &runs) || runs < 20 || runs > 100000)
        return cli_usage_error("bench", "--runs '%s' is not a number from 20 to 100000", v);
    } else {
      return cli_usage_error("bench", "unknown argument '%s'", argv[i]);
    }
  }
  session_open(&ses, LANE_ALL, 0);
  printf(BENCH_HEADER_FORMAT, "kernel", "oracle ms", "device us", "device min", "us per record");
  for (i = 0; i < 2; i++) {
    bench_case b;
    csa_case c;
    op_error oerr;
    double oracle_ms = 0;
    float med = 0, mn = 0;
    memset(&b, 0, sizeof b);
    op_error_clear(&oerr);
    snprintf(spec, sizeof spec,
             "family=csa128.state op=CompressedSparseAttention ratio=128 cache=fp8 b=1 heads=64 window=128 "
             "start=%lld prefill=1 decode=0 cap=%lld bias=none sink=zero scale=none seed=1",
             positions[i] - 1, positions[i] / 128);
    if (cases_csa_parse(spec, &c, err, sizeof err) != 0 ||
        cases_csa_materialize(&c, 0, b.in, &b.n_in, b.out, &b.n_out, &b.attrs, err, sizeof err) != 0 ||
        bench_oracle(&b, &oracle_ms, &oerr) != 0) {
      fprintf(stderr, "bitgate bench: position %lld: %s%s\n", positions[i], err, oerr.message);
      cases_csa_release(b.in, b.out);
      status = EXIT_CODE_ENV;
      continue;
    }
    if (!ses.have_device) {
      printf("csa128 decode, 64 heads, pos %-6lld %10.2f %12s %12s %14s\n", positions[i], oracle_ms, "-", "-", "-");
    } else if (bench_device(ses.env.rt, &b, (int)runs, &med, &mn, err, sizeof err) != 0) {
      fprintf(stderr, "bitgate bench: position %lld: %s\n", positions[i], err);
      status = EXIT_CODE_FAIL;
    } else {
      printf("csa128 decode, 64 heads, pos %-6lld %10.2f %12.1f %12.1f %14.1f\n", positions[i], oracle_ms, med, mn,
             med); /* the step emits exactly one record */
    }
    cases_csa_release(b.in, b.out);
  }
  r = bench_csa4_lines(&ses, (int)runs);
  if (r != EXIT_CODE_PASS && status != EXIT_CODE_FAIL) status = r; /* a wrong kernel outranks a missing resource */
  if (!ses.have_device) printf("device figures need a GPU: %s\n", ses.device_reason);
  else printf("device: median and min of %llu CUDA-event-timed replays of the captured step; a stage: the median "
              "of %llu eager runs\n", runs, runs);
  session_close(&ses);
  return status;
}
