/*
** bench.c: the helpers of bench.h: timing, the oracle check, the floor, the
** table's lines and their rows in the results store.
*/
#include "harness/bench.h"
#include "harness/cli.h"
#include "harness/diff.h"
#include "harness/exit_codes.h"
#include "harness/provenance.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}


int bench_oracle_ms(int (*run)(void *ctx), void *ctx, double *ms) {
  double t[BENCH_ORACLE_RUNS], spent = 0;
  int n;
  if (run(ctx) != 0) return -1;
  for (n = 0; n < BENCH_ORACLE_RUNS && spent < 2000.0; n++) {
    const double t0 = bench_now_ms();
    if (run(ctx) != 0) return -1;
    t[n] = bench_now_ms() - t0;
    spent += t[n];
  }
  *ms = bench_median_ms(t, n);
  return 0;
}

int bench_outputs_match(device_io *io, const tensor *ref, int n_out, char *err, size_t len) {
  int o;
  for (o = 0; o < n_out; o++) {
    tensor got;
    tensor_diff d;
    memset(&got, 0, sizeof got);
    if (device_io_download(io, o, &got) != 0 || tensor_diff_run(&ref[o], &got, &d) != 0) {
      tensor_free(&got);
      return snprintf(err, len, "device output %d differs from the oracle's", o), -1;
    }
    tensor_free(&got);
  }
  return 0;
}

int bench_outputs_checked(const bench_opts *o, device_io *io, const tensor *ref, int n_out, const char *what,
                          char *err, size_t len) {
  size_t used;
  if (bench_outputs_match(io, ref, n_out, err, len) == 0) return 0;
  if (!o->no_check) {
    used = strlen(err);
    if (used < len) snprintf(err + used, len - used, ": no figure");
    return -1;
  }
  printf("bitgate bench: %s: %s; timed anyway (--no-check)\n", what, err);
  return 0;
}

const char *bench_timing_name(bench_timing t) { return t == BENCH_TIMING_SUBMIT ? "submit" : "held"; }

int bench_timing_parse(const char *name, bench_timing *t) {
  if (!strcmp(name, "held")) return *t = BENCH_TIMING_HELD, 0;
  if (!strcmp(name, "submit")) return *t = BENCH_TIMING_SUBMIT, 0;
  return -1;
}

int bench_replays(const bench_opts *o, device_runtime *rt, device_graph *g, float *median_us, float *min_us,
                  char *err, size_t len) {
  const int held = o->timing == BENCH_TIMING_HELD;
  float *ms = calloc((size_t)o->runs, sizeof *ms);
  int r, gave_up = 0, retries = 0;
  if (!ms) return snprintf(err, len, "out of memory"), -1;
  if (device_graph_replay(rt, g) != 0) { /* a warm-up replay, untimed */
    snprintf(err, len, "replay: %s", device_runtime_error(rt));
    free(ms);
    return -1;
  }
  for (r = 0; r < o->runs; r += !gave_up) {
    if (device_graph_time(rt, g, held, &ms[r], &gave_up) != 0) {
      snprintf(err, len, "timing: %s", device_runtime_error(rt));
      free(ms);
      return -1;
    }
    if (gave_up && ++retries >= BENCH_HOLD_RETRIES) {
      snprintf(err, len, "timing: the stream's hold gave up %d times before the host released it", retries);
      free(ms);
      return -1;
    }
  }
  qsort(ms, (size_t)o->runs, sizeof *ms, cmp_float);
  *median_us = ms[o->runs / 2] * 1e3f;
  *min_us = ms[0] * 1e3f;
  free(ms);
  return 0;
}

int bench_shape_selected(const bench_opts *o, const char *label) {
  return !o->filter || fnmatch(o->filter, label, 0) == 0;
}

int bench_filter_check(const char *filter, char *err, size_t err_len) {
  int (*const label_of[])(int, char *, size_t) = {bench_csa_shape_label, bench_index_share_shape_label};
  char label[256];
  size_t f, used;
  int i;
  if (!filter) return 0;
  for (f = 0; f < sizeof label_of / sizeof label_of[0]; f++)
    for (i = 0; label_of[f](i, label, sizeof label); i++)
      if (fnmatch(filter, label, 0) == 0) return 0;
  used = (size_t)snprintf(err, err_len, "--filter '%s' keeps none of the shapes:", filter);
  for (f = 0; f < sizeof label_of / sizeof label_of[0]; f++)
    for (i = 0; label_of[f](i, label, sizeof label) && used < err_len; i++)
      used += (size_t)snprintf(err + used, err_len - used, "%s '%s'", f || i ? "," : "", label);
  return -1;
}

double bench_floor_us(const bench_line *l) {
  const double compute = l->fp32 / BENCH_FP32_PER_S, memory = l->bytes / BENCH_BYTES_PER_S;
  return 1e6 * (compute > memory ? compute : memory);
}

#define LINE_FORMAT "%-27s %-24s %9s %9s %11s %11s %9s %9s %8s %10s\n"

void bench_print_header(void) {
  printf(LINE_FORMAT, "kernel", "shape", "fast us", "fast min", "ref us", "ref min", "speedup", "floor us",
         "of floor", "oracle ms");
}

/* "%.1f" of v into buf, or "-" without it. */
static const char *cell(char *buf, size_t len, int have, double v, const char *fmt) {
  if (!have) return "-";
  snprintf(buf, len, fmt, v);
  return buf;
}

void bench_line_emit(const bench_opts *o, const bench_line *l) {
  const bench_time *f = &l->t[DEVICE_VARIANT_FAST], *r = &l->t[DEVICE_VARIANT_REFERENCE];
  const double floor_us = bench_floor_us(l);
  char c[8][32];
  int v;
  printf(LINE_FORMAT, l->kernel, l->shape, cell(c[0], 32, f->have, f->median_us, "%.1f"),
         cell(c[1], 32, f->have, f->min_us, "%.1f"), cell(c[2], 32, r->have, r->median_us, "%.1f"),
         cell(c[3], 32, r->have, r->min_us, "%.1f"),
         cell(c[4], 32, f->have && r->have && f->median_us > 0, r->median_us / f->median_us, "%.1fx"),
         cell(c[5], 32, floor_us > 0, floor_us, "%.2f"),
         cell(c[6], 32, f->have && f->median_us > 0 && floor_us > 0, floor_us / f->median_us, "%.3f"),
         cell(c[7], 32, l->oracle_ms >= 0, l->oracle_ms, "%.2f"));
  if (o->targets)
    report_target_log_add(o->targets, l->kernel, l->shape, f->have, f->median_us, r->have, r->median_us);
  for (v = 0; v < DEVICE_VARIANT_COUNT && o->rec && o->rec->db; v++) {
    const bench_time *t = &l->t[v];
    store_bench_row row = {.kernel = l->kernel, .variant = device_variant_name((device_variant)v),
                           .shape = l->shape, .timing = bench_timing_name(o->timing), .median_us = t->median_us,
                           .min_us = t->min_us, .runs = o->runs,
                           .oracle_ms = l->oracle_ms,
                           .floor_fraction = t->median_us > 0 && floor_us > 0 ? floor_us / t->median_us : -1};
    if (!t->have) continue;
    if (store_bench_put(o->rec->db, o->rec->run_id, &row) != 0) {
      fprintf(stderr, "bitgate bench: recording '%s' (%s, %s) failed: %s\n", l->kernel, l->shape, row.variant,
              store_errmsg(o->rec->db));
      o->rec->failed = 1;
    }
  }
}

int bench_record_begin(bench_record *rec, const char *db, int argc, char **argv) {
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

int bench_record_end(bench_record *rec, const char *db, int status) {
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
