/*
** bench_index_share.c: the IndexShare lines of `bitgate bench` (bench.h).
**
** One decode step (sq = sc = 1) with K = 2048 selected keys a row, head
** size 128, bf16 storage, i32 indices, one index row shared by the heads
** (ih = 1), 8 kv heads, a past of 2,048 tokens (present = past ++ current,
** 2,049 rows), for heads 64 and 128 and batch 1 and 64.  Each variant runs
** the step eagerly once (outputs equal to the oracle's, else no figure),
** then the captured step is timed as bench_replays: validation, the two
** present builds and the attention rows together.
**
** The floor counts the present builds' bytes (past read, present written,
** key and value), the gathered key and value rows (bf16; the heads that
** share a kv head gather the same rows, counted once), q and y, and the
** FP32 work of each selected key: the scaled dot (q * s) * (k * s) summed
** over 128 dims, and p * v over 128 dims (estimates, to the leading terms).
*/
#include "cases/index_share_cases.h"
#include "device/index_share_device.h"
#include "harness/bench.h"
#include "harness/exit_codes.h"
#include "oracle/index_share.h"

#include <stdio.h>
#include <string.h>

#define IS_BENCH_K 2048
#define IS_BENCH_DIM 128
#define IS_BENCH_KV_HEADS 8
#define IS_BENCH_PAST 2048

typedef struct is_bench {
  tensor in[IS_CASE_MAX_INPUTS], out[IS_OUTPUT_COUNT];
  int n_in, n_out;
  index_share_attrs attrs;
} is_bench;

static void is_work(long long batch, long long heads, double *bytes, double *fp32) {
  const double b = (double)batch, h = (double)heads, k = IS_BENCH_K, dim = IS_BENCH_DIM;
  /*
  ** The step's one output is Y; its present is scratch, which a step need
  ** not build (the fast kernels gather from past and current), so the
  ** bytes are the gathered K and V rows, q, Y and the indices.  The heads
  ** of one kv head gather the same rows (one index row for all heads):
  ** they count once.
  */
  *bytes = b * IS_BENCH_KV_HEADS * 2 * k * dim * 2 + b * h * 2 * dim * 2 + b * k * 4;
  *fp32 = b * h * k * (4 * dim + 2 * dim + 4);
}

static int is_load(long long batch, long long heads, is_bench *x, char *err, size_t len) {
  char spec[512];
  is_case c;
  snprintf(spec, sizeof spec,
           "family=is.valid op=IndexShare dtype=bf16 idx=i32 b=%lld n=%lld nkv=%d sq=1 sc=1 sp=%d h=%d ih=1 k=%d "
           "out=1 present=grow vlen=none bias=none scale=none seed=1 steps=1",
           batch, heads, IS_BENCH_KV_HEADS, IS_BENCH_PAST, IS_BENCH_DIM, IS_BENCH_K);
  memset(x, 0, sizeof *x);
  if (cases_is_parse(spec, &c, err, len) != 0) return -1;
  c.budget_bytes = BENCH_CASE_BUDGET;
  return cases_is_materialize(&c, 0, x->in, &x->n_in, x->out, &x->n_out, &x->attrs, err, len);
}

typedef struct is_oracle_run {
  is_bench *x;
  op_error *err;
} is_oracle_run;

static int is_oracle_once(void *ctx) {
  const is_oracle_run *o = ctx;
  const tensor *in[IS_CASE_MAX_INPUTS];
  tensor *out[IS_OUTPUT_COUNT];
  int i;
  for (i = 0; i < o->x->n_in; i++) in[i] = o->x->in[i].dt == DTYPE_NONE ? NULL : &o->x->in[i];
  for (i = 0; i < o->x->n_out; i++) out[i] = &o->x->out[i];
  return oracle_index_share_run(&o->x->attrs, in, o->x->n_in, out, o->x->n_out, NULL, o->err) != 0 ? -1 : 0;
}

/* The oracle's time (bench_oracle_ms); 0 or -1 (err). */
static int is_oracle(is_bench *x, double *ms, op_error *err) {
  is_oracle_run o;
  o.x = x, o.err = err;
  return bench_oracle_ms(is_oracle_once, &o, ms);
}

/* --oracle-threads: the shape's scaling row instead (bench_scaling_row). */
static int is_scale(bench_scaling *sc, const char *label, is_bench *x, op_error *err) {
  is_oracle_run o;
  o.x = x, o.err = err;
  return bench_scaling_row(sc, label, is_oracle_once, &o);
}

/* One variant's eager check and captured step into *t; an exit code. */
static int is_time(const bench_opts *o, is_bench *x, const char *label, device_variant v, bench_time *t, char *err,
                   size_t len) {
  char what[320];
  device_runtime *rt = o->ses->env.rt;
  device_index_share *k = NULL;
  device_graph *g = NULL;
  device_io io;
  op_error derr;
  int status = EXIT_CODE_ENV;
  if (device_io_open(&io, rt, x->in, x->n_in, x->out, x->n_out, err, len) != 0) return EXIT_CODE_ENV;
  op_error_clear(&derr);
  snprintf(what, sizeof what, "%s, %s variant", label, device_variant_name(v));
  if (device_index_share_create_variant(rt, &x->attrs, v, &k, err, len) != 0) {
    /* err says why */
  } else if (device_index_share_execute(k, io.in_p, io.n_in, io.out_p, io.n_out, &derr) != 0) {
    snprintf(err, len, "eager warm-up: %s", derr.message);
  } else if (bench_outputs_checked(o, &io, x->out, x->n_out, what, err, len) != 0) {
    status = EXIT_CODE_FAIL;
  } else if (device_runtime_capture_begin(rt) != 0 ||
             device_index_share_execute(k, io.in_p, io.n_in, io.out_p, io.n_out, &derr) != 0 ||
             device_runtime_capture_end(rt, &g) != 0) {
    snprintf(err, len, "capture: %s %s", derr.message, device_runtime_error(rt));
    if (device_runtime_is_capturing(rt)) device_runtime_capture_end(rt, &g);
  } else if (bench_replays(o, rt, g, &t->median_us, &t->min_us, err, len) == 0) {
    t->have = 1;
    status = EXIT_CODE_PASS;
  }
  if (g) device_graph_destroy(g);
  if (k) device_index_share_destroy(k);
  device_io_close(&io);
  return status;
}

/* The shapes, in the table's order: heads, then the batch. */
static const struct is_shape {
  long long heads, batch;
} is_shapes[] = {{64, 1}, {64, 64}, {128, 1}, {128, 64}};

int bench_index_share_shape_label(int i, char *label, size_t len) {
  if (i < 0 || (size_t)i >= sizeof is_shapes / sizeof is_shapes[0]) return 0;
  snprintf(label, len, "IndexShare K=%d, heads %lld, B=%lld", IS_BENCH_K, is_shapes[i].heads, is_shapes[i].batch);
  return 1;
}

int bench_index_share_lines(const bench_opts *o) {
  int i, v, status = EXIT_CODE_PASS;
  char label[256];
  for (i = 0; bench_index_share_shape_label(i, label, sizeof label); i++) {
    const long long heads = is_shapes[i].heads, batch = is_shapes[i].batch;
    static is_bench x;
    bench_line l;
    op_error oerr;
    char err[1024] = "";
    int rc = EXIT_CODE_PASS;
    if (!bench_shape_selected(o, label)) continue;
    memset(&l, 0, sizeof l);
    op_error_clear(&oerr);
    snprintf(l.kernel, sizeof l.kernel, "IndexShare decode step");
    snprintf(l.shape, sizeof l.shape, "K=%d, heads %lld, B=%lld", IS_BENCH_K, heads, batch); /* the label's tail */
    is_work(batch, heads, &l.bytes, &l.fp32);
    if (is_load(batch, heads, &x, err, sizeof err) != 0 ||
        (o->scaling ? is_scale(o->scaling, label, &x, &oerr) : is_oracle(&x, &l.oracle_ms, &oerr)) != 0) {
      fprintf(stderr, "bitgate bench: IndexShare %s: %s%s\n", l.shape, err, oerr.message);
      cases_is_release(x.in, x.out);
      if (status != EXIT_CODE_FAIL) status = EXIT_CODE_ENV;
      continue;
    }
    if (o->scaling) { /* the scaling row is the shape's whole output */
      cases_is_release(x.in, x.out);
      continue;
    }
    for (v = 0; v < DEVICE_VARIANT_COUNT && o->ses->have_device; v++)
      if (o->variants & 1u << v) {
        const int vr = is_time(o, &x, label, (device_variant)v, &l.t[v], err, sizeof err);
        if (vr != EXIT_CODE_PASS) {
          fprintf(stderr, "bitgate bench: IndexShare %s, %s variant: %s\n", l.shape,
                  device_variant_name((device_variant)v), err);
          if (rc != EXIT_CODE_FAIL) rc = vr;
        }
      }
    bench_line_emit(o, &l);
    cases_is_release(x.in, x.out);
    if (rc != EXIT_CODE_PASS && status != EXIT_CODE_FAIL) status = rc;
  }
  return status;
}
