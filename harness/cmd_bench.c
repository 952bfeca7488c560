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
**
** With a GPU the figures are also recorded (issue 8 item 2): a run of suite
** 'bench' with its provenance, one bench row per printed line (schema 4),
** then the run's end with the exit code.  Without a GPU there is no device
** figure, so nothing is recorded and the database is not opened.  A row
** that cannot be stored ends the run as 'error', exit code ENV.
*/
#include "cases/csa128_cases.h"
#include "device/csa128_device.h"
#include "harness/bench.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/device_io.h"
#include "harness/diff.h"
#include "harness/exit_codes.h"
#include "harness/provenance.h"
#include "harness/session.h"
#include "harness/store.h"
#include "oracle/csa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char bench_help[] =
    "usage: bitgate bench [--runs N] [--db PATH]\n\n"
    "Times a ratio-128 CSA decode step (64 heads, FP8 cache) at positions 4096\n"
    "and 65536: oracle (median of 3 runs) and device (median and min of N\n"
    "CUDA-event-timed graph replays, default 30), per step and per emitted\n"
    "record.  Then a ratio-4 decode step (64 heads, 64 index heads, topk 512,\n"
    "selected_indices output) at the same positions: the same figures, plus\n"
    "the device's median time per stage over N eager runs.  Needs a GPU for\n"
    "the device figures.\n\n"
    "With a GPU the figures are recorded in the results store (--db, default\n"
    "bitgate.db): a run of suite 'bench' and one row of table bench per line.\n"
    "Without one nothing is recorded.\n\n" EXIT_CODES_HELP;

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

void bench_record_put(bench_record *rec, const char *kernel, const char *shape, double median_us, double min_us,
                      int runs, double oracle_ms) {
  store_bench_row row = {.kernel = kernel, .variant = device_variant_name(DEVICE_VARIANT_FAST), .shape = shape,
                         .median_us = median_us, .min_us = min_us, .runs = runs, .oracle_ms = oracle_ms,
                         .floor_fraction = -1}; /* the floors are not modelled yet (issue 8 item 2) */
  if (!rec->db) return;
  if (store_bench_put(rec->db, rec->run_id, &row) != 0) {
    fprintf(stderr, "bitgate bench: recording '%s' (%s) failed: %s\n", kernel, shape, store_errmsg(rec->db));
    rec->failed = 1;
  }
}

/*
** Opens db and begins the bench run in rec (provenance as `bitgate run`
** records it); EXIT_CODE_PASS, or EXIT_CODE_ENV with the reason printed.
*/
static int bench_record_begin(bench_record *rec, const char *db, int argc, char **argv) {
  provenance pv;
  char err[1024];
  provenance_collect(&pv, "bench", "1/1", argc, argv);
  if (store_open(db, &rec->db, err, sizeof err) != 0) return cli_env_error("bench", "%s", err);
  if (store_run_begin(rec->db, &pv.p, &rec->run_id) != 0) {
    cli_env_error("bench", "cannot record the run: %s", store_errmsg(rec->db));
    store_close(rec->db);
    rec->db = NULL;
    return EXIT_CODE_ENV;
  }
  return EXIT_CODE_PASS;
}

/* Ends the run with status's verdict (a failed row makes it 'error', ENV) and closes db; the exit code. */
static int bench_record_end(bench_record *rec, const char *db, int status) {
  if (!rec->db) return status;
  if (rec->failed) status = EXIT_CODE_ENV;
  if (store_run_end(rec->db, rec->run_id,
                    status == EXIT_CODE_PASS ? "passed" : status == EXIT_CODE_FAIL ? "failed" : "error", status) != 0) {
    fprintf(stderr, "bitgate bench: cannot end run %lld: %s\n", rec->run_id, store_errmsg(rec->db));
    status = EXIT_CODE_ENV;
  }
  if (!rec->failed) printf("figures recorded in %s, run %lld\n", db, rec->run_id);
  store_close(rec->db);
  rec->db = NULL;
  return status;
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
  bench_record rec = {NULL, 0, 0};
  const char *v, *db = "bitgate.db";
  char err[1024], spec[512], shape[96];
  int i, r, status = EXIT_CODE_PASS;
  for (i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) return fputs(bench_help, stdout), EXIT_CODE_PASS;
    if ((r = cli_option_value("bench", argc, argv, &i, "--runs", &v)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
      if (cli_parse_u64(v, &runs) || runs < 20 || runs > 100000)
        return cli_usage_error("bench", "--runs '%s' is not a number from 20 to 100000", v);
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--db", &db)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error("bench", "unknown argument '%s'", argv[i]);
    }
  }
  session_open(&ses, LANE_ALL, 0);
  if (ses.have_device && bench_record_begin(&rec, db, argc, argv) != EXIT_CODE_PASS) {
    session_close(&ses);
    return EXIT_CODE_ENV;
  }
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
      snprintf(shape, sizeof shape, "b=1 heads=64 window=128 cache=fp8 pos=%lld", positions[i]);
      bench_record_put(&rec, "csa128 decode step", shape, med, mn, (int)runs, oracle_ms);
    }
    cases_csa_release(b.in, b.out);
  }
  r = bench_csa4_lines(&ses, (int)runs, &rec);
  if (r != EXIT_CODE_PASS && status != EXIT_CODE_FAIL) status = r; /* a wrong kernel outranks a missing resource */
  if (!ses.have_device) printf("device figures need a GPU: %s\n", ses.device_reason);
  else printf("device: median and min of %llu CUDA-event-timed replays of the captured step; a stage: the median "
              "of %llu eager runs\n", runs, runs);
  status = bench_record_end(&rec, db, status);
  session_close(&ses);
  return status;
}
