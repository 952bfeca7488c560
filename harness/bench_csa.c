/*
** bench_csa.c: the CompressedSparseAttention lines of `bitgate bench`
** (bench.h).
**
** One decode step (S = 1) of a synthetic state (cases/csa128_cases.h and
** csa4_cases.h make the past: caches full up to the position, a reachable
** carry), 64 heads x 512, FP8 cache, no bias, at the shapes:
**   ratio 128  positions 4,096 and 65,536, B = 1;
**   ratio 4    64 index heads x 128, topk 512, 6 outputs, positions 4,096
**              and 65,536 with B = 1, and 65,536 with B = 64.
** The step's token completes a block, so each compressor emits one record
** a batch row.  Ratio 4's scoring + top-k line is followed by a line for
** each of its three kernels (index query, index scoring, top-k selection),
** each captured alone on the state the eager run left.  Each variant's instance runs the step once eagerly (its
** outputs must equal the oracle's, else no figure), then every stage is
** captured alone as a graph (csa_chain_ratio.dev_capture_parts) and timed
** as bench_replays; the whole step too, for the fast variant only (the
** reference's step at 64K takes seconds a replay, and its stages are
** timed).  The case and device plumbing is the chain driver's descriptor
** (run_csa_chain.h), so the bench runs exactly what the gate runs.
**
** The floor counts, per stage, what the oracle's formulas need (estimates,
** to the leading terms): FP32 instructions (a multiply-add is two; an exp,
** a max or a compare one) and the HBM bytes read and written once.
*/
#include "cases/csa128_cases.h"
#include "cases/csa4_cases.h"
#include "device/csa128_device.h"
#include "device/csa4_device.h"
#include "harness/bench.h"
#include "harness/exit_codes.h"
#include "harness/run_csa128.h"
#include "harness/run_csa4.h"
#include "harness/run_csa_chain.h"
#include "oracle/csa.h"

#include <stdio.h>
#include <string.h>


/* Kinds after K_STEP are the kernels of a stage line before them, not in the step's sum. */
enum csa_stage_kind { K_STATE, K_MAIN, K_INDEX, K_SELECT, K_ATTENTION, K_STEP, K_QUERY, K_SCORE, K_TOPK, K_COUNT };

typedef struct csa_stage {
  const char *name;
  enum csa_stage_kind kind;
  unsigned parts;
} csa_stage;

#define P4(p) (1u << CSA4_PART_##p)
#define P128(p) (1u << CSA128_PART_##p)

static const csa_stage csa4_stages[] = {
    {"csa4 state copy", K_STATE, P4(STATE)},
    {"csa4 main compression", K_MAIN, P4(MAIN)},
    {"csa4 index-key compression", K_INDEX, P4(INDEX)},
    {"csa4 scoring + top-k", K_SELECT, P4(QUERY) | P4(SCORE) | P4(SELECT)},
    {"csa4 index query", K_QUERY, P4(QUERY)},
    {"csa4 index scoring", K_SCORE, P4(SCORE)},
    {"csa4 top-k selection", K_TOPK, P4(SELECT)},
    {"csa4 sink attention", K_ATTENTION, P4(ATTENTION)},
    {"csa4 decode step", K_STEP, CSA4_PARTS_ALL},
};

static const csa_stage csa128_stages[] = {
    {"csa128 state copy", K_STATE, P128(STATE)},
    {"csa128 compression", K_MAIN, P128(COMPRESS)},
    {"csa128 sink attention", K_ATTENTION, P128(ATTENTION)},
    {"csa128 decode step", K_STEP, CSA128_PARTS_ALL},
};

typedef struct csa_bench_shape {
  int ratio;
  long long position, batch;
} csa_bench_shape;

static const csa_bench_shape shapes[] = {
    {128, 4096, 1}, {128, 65536, 1}, {4, 4096, 1}, {4, 65536, 1}, {4, 65536, 64},
};

/* The work of one stage kind at the step's dims (see the file comment); K_STEP is the sum. */
static void stage_work(enum csa_stage_kind kind, const csa_dims *d, double *bytes, double *fp32) {
  const double b = (double)d->batch, h = (double)d->heads, rb = (double)d->record_width;
  const int r4 = d->ratio == CSA4_RATIO;
  const double width = r4 ? CSA4_SOURCE_WIDTH : CSA_HEAD_DIM, slots = r4 ? CSA4_SLOTS : CSA128_RATIO;
  const double records = (double)d->present_records; /* the live records a query scores or attends */
  const double cand = CSA_DENSE_WINDOW + (r4 ? (double)d->topk : records);
  int k;
  *bytes = *fp32 = 0;
  switch (kind) {
  case K_STATE: /* past caches and carries read, presents written */
    *bytes = 2 * b * ((double)d->present_capacity * rb + slots * 2 * width * 4);
    if (r4) *bytes += 2 * b * ((double)d->index_present_capacity * CSA4_INDEX_RECORD_BYTES + slots * 2 * 256 * 4);
    break;
  case K_MAIN: /* the carry row read and written, the token, one record; per dim a softmax pool over the slots */
    *bytes = b * (2 * slots * 2 * width * 4 + 2 * width * 4 + rb);
    *fp32 = b * CSA_HEAD_DIM * (slots * 5 + 8);
    break;
  case K_INDEX:
    *bytes = b * (2 * CSA4_SLOTS * 2 * CSA4_INDEX_SOURCE * 4 + 2 * CSA4_INDEX_SOURCE * 4 + CSA4_INDEX_RECORD_BYTES);
    *fp32 = b * CSA4_INDEX_DIM * (CSA4_SLOTS * 5 + 8 + 7);
    break;
  case K_SELECT: /* keys read, scores written and read, the queries; a dot a record and index head */
    *bytes = b * (records * CSA4_INDEX_RECORD_BYTES + 2 * records * 4 + (double)d->index_heads * CSA4_INDEX_DIM * 8);
    *fp32 = b * (records * (double)d->index_heads * (2 * CSA4_INDEX_DIM + 3) +
                 (double)d->index_heads * CSA4_INDEX_DIM * 10);
    break;
  case K_QUERY: /* the index queries read and written; RoPE, Hadamard and the FP4 round trip a dim */
    *bytes = b * (double)d->index_heads * CSA4_INDEX_DIM * 8;
    *fp32 = b * (double)d->index_heads * CSA4_INDEX_DIM * 10;
    break;
  case K_SCORE: /* keys and queries read, scores written; a dot a record and index head */
    *bytes = b * (records * CSA4_INDEX_RECORD_BYTES + records * 4 + (double)d->index_heads * CSA4_INDEX_DIM * 4);
    *fp32 = b * records * (double)d->index_heads * (2 * CSA4_INDEX_DIM + 3);
    break;
  case K_TOPK: /* scores read, the selection written; integer work only */
    *bytes = b * (records + (double)d->topk) * 4;
    break;
  case K_ATTENTION: /* records and window rows read once, q and y, scores and weights; two dots a candidate */
    *bytes = b * ((r4 ? (double)d->topk : records) * rb + CSA_DENSE_WINDOW * CSA_HEAD_DIM * 4 +
                  h * CSA_HEAD_DIM * 8 + h * cand * 16);
    *fp32 = b * h * cand * (4 * CSA_HEAD_DIM + 4);
    break;
  case K_STEP:
    for (k = 0; k < K_STEP; k++) {
      double kb, kf;
      if (!r4 && k == K_INDEX) continue;
      if (!r4 && k == K_SELECT) continue;
      stage_work((enum csa_stage_kind)k, d, &kb, &kf);
      *bytes += kb, *fp32 += kf;
    }
    break;
  default: break;
  }
}

/* A parsed case of either ratio, as the descriptor's materializer takes it. */
typedef union csa_any_case {
  csa_case c128;
  csa4_case c4;
} csa_any_case;

static int load_shape(const csa_bench_shape *sh, csa_any_case *c, const csa_chain_ratio **r, csa_step *s, char *err,
                      size_t len) {
  char spec[512];
  int rc;
  memset(s, 0, sizeof *s);
  if (sh->ratio == CSA4_RATIO) {
    snprintf(spec, sizeof spec,
             "family=csa4.state op=CompressedSparseAttention ratio=4 b=%lld heads=64 iheads=64 topk=512 window=128 "
             "start=%lld prefill=1 decode=0 cap=%lld outputs=6 bias=none sink=zero scale=none seed=1",
             sh->batch, sh->position - 1, sh->position / CSA4_RATIO);
    *r = run_csa4_ratio();
    rc = cases_csa4_parse(spec, &c->c4, err, len);
    c->c4.budget_bytes = BENCH_CASE_BUDGET; /* B = 64 at 64K holds 0.7 GB of caches */
  } else {
    snprintf(spec, sizeof spec,
             "family=csa128.state op=CompressedSparseAttention ratio=128 cache=fp8 b=%lld heads=64 window=128 "
             "start=%lld prefill=1 decode=0 cap=%lld bias=none sink=zero scale=none seed=1",
             sh->batch, sh->position - 1, sh->position / CSA128_RATIO);
    *r = run_csa128_ratio();
    rc = cases_csa_parse(spec, &c->c128, err, len);
    c->c128.budget_bytes = BENCH_CASE_BUDGET;
  }
  return rc ? -1 : (*r)->materialize(c, 0, s, err, len);
}

/* The oracle's time (bench_oracle_ms); 0 or -1 (s->err). */
typedef struct oracle_run {
  const csa_chain_ratio *r;
  csa_step *s;
} oracle_run;

static int run_oracle(void *ctx) {
  const oracle_run *o = ctx;
  return o->r->oracle(o->s, 0);
}

static int time_oracle(const csa_chain_ratio *r, csa_step *s, double *ms) {
  oracle_run o;
  o.r = r, o.s = s;
  return bench_oracle_ms(run_oracle, &o, ms);
}

/* --oracle-threads: the shape's scaling row instead (bench_scaling_row). */
static int scale_oracle(bench_scaling *sc, const char *label, const csa_chain_ratio *r, csa_step *s) {
  oracle_run o;
  o.r = r, o.s = s;
  return bench_scaling_row(sc, label, run_oracle, &o);
}

/* One variant: eager check, then each stage's graph timed into lines[i].t[v]; an exit code. */
static int time_variant(const bench_opts *o, const char *label, const csa_chain_ratio *r, csa_step *s,
                        device_variant v, const csa_stage *st, int n_st, bench_line *lines) {
  device_runtime *rt = o->ses->env.rt;
  char err[1024], what[320];
  device_io io;
  void *k = NULL;
  op_error derr;
  int i, status = EXIT_CODE_PASS;
  if (device_io_open(&io, rt, s->in, s->n_in, s->out, s->n_out, err, sizeof err) != 0) {
    fprintf(stderr, "bitgate bench: %s: %s\n", lines[0].shape, err);
    return EXIT_CODE_ENV;
  }
  op_error_clear(&derr);
  snprintf(what, sizeof what, "%s, %s variant", label, device_variant_name(v));
  if (r->dev_create(rt, &s->attrs, v, &k, err, sizeof err) != 0) {
    status = EXIT_CODE_ENV;
  } else if (r->dev_execute(k, io.in_p, io.n_in, io.out_p, io.n_out, &derr) != DEVICE_CSA_OK) {
    snprintf(err, sizeof err, "eager warm-up: %s", derr.message);
    status = EXIT_CODE_ENV;
  } else if (bench_outputs_checked(o, &io, s->out, s->n_out, what, err, sizeof err) != 0) {
    status = EXIT_CODE_FAIL;
  }
  for (i = 0; i < n_st && status == EXIT_CODE_PASS; i++) {
    device_graph *g = NULL;
    bench_time *t = &lines[i].t[v];
    if (st[i].kind == K_STEP && v != DEVICE_VARIANT_FAST) continue;
    if (r->dev_capture_parts(k, st[i].parts, io.in_p, io.n_in, io.out_p, io.n_out, &g, &derr) != DEVICE_CSA_OK) {
      snprintf(err, sizeof err, "%s: capture: %s", st[i].name, derr.message);
      status = EXIT_CODE_ENV;
    } else if (bench_replays(o, rt, g, &t->median_us, &t->min_us, err, sizeof err) != 0) {
      status = EXIT_CODE_ENV;
    } else {
      t->have = 1;
    }
    if (g) device_graph_destroy(g);
  }
  if (status != EXIT_CODE_PASS)
    fprintf(stderr, "bitgate bench: %s, %s variant: %s\n", lines[0].shape, device_variant_name(v), err);
  if (k) r->dev_destroy(k);
  device_io_close(&io);
  return status;
}

int bench_csa_shape_label(int i, char *label, size_t len) {
  if (i < 0 || (size_t)i >= sizeof shapes / sizeof shapes[0]) return 0;
  snprintf(label, len, "csa%d pos %lld, B=%lld", shapes[i].ratio, shapes[i].position, shapes[i].batch);
  return 1;
}

int bench_csa_lines(const bench_opts *o) {
  size_t i;
  int status = EXIT_CODE_PASS;
  for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const csa_bench_shape *sh = &shapes[i];
    const csa_stage *st = sh->ratio == CSA4_RATIO ? csa4_stages : csa128_stages;
    const int n_st = sh->ratio == CSA4_RATIO ? (int)(sizeof csa4_stages / sizeof csa4_stages[0])
                                             : (int)(sizeof csa128_stages / sizeof csa128_stages[0]);
    bench_line lines[K_COUNT];
    const csa_chain_ratio *r = NULL;
    static csa_any_case c;
    static csa_step s;
    const tensor *in[CSA_INPUT_COUNT], *cout[CSA_OUTPUT_MAX];
    csa_dims d;
    op_error verr;
    double oracle_ms = -1;
    char label[256], err[1024] = "";
    int j, v, rc = EXIT_CODE_PASS;
    bench_csa_shape_label((int)i, label, sizeof label);
    if (!bench_shape_selected(o, label)) continue;
    if (load_shape(sh, &c, &r, &s, err, sizeof err) != 0 ||
        (o->scaling ? scale_oracle(o->scaling, label, r, &s) : time_oracle(r, &s, &oracle_ms)) != 0) {
      fprintf(stderr, "bitgate bench: ratio %d position %lld B=%lld: %s%s\n", sh->ratio, sh->position, sh->batch,
              err, s.err.message);
      if (r) r->release(&s);
      if (status != EXIT_CODE_FAIL) status = EXIT_CODE_ENV;
      continue;
    }
    if (o->scaling) { /* the scaling row is the shape's whole output */
      r->release(&s);
      continue;
    }
    for (j = 0; j < s.n_in; j++) in[j] = s.in[j].dt == DTYPE_NONE ? NULL : &s.in[j];
    for (j = 0; j < s.n_out; j++) cout[j] = &s.out[j];
    memset(&d, 0, sizeof d);
    if (csa_validate(&s.attrs, in, s.n_in, cout, s.n_out, &d, &verr) == 0)
      csa_validate_cursor(&d, in[CSA_IN_TOTAL_SEQ], &verr);
    memset(lines, 0, sizeof lines);
    for (j = 0; j < n_st; j++) {
      snprintf(lines[j].kernel, sizeof lines[j].kernel, "%s", st[j].name);
      snprintf(lines[j].shape, sizeof lines[j].shape, "pos %lld, B=%lld", sh->position, sh->batch);
      stage_work(st[j].kind, &d, &lines[j].bytes, &lines[j].fp32);
      lines[j].oracle_ms = st[j].kind == K_STEP ? oracle_ms : -1;
    }
    for (v = 0; v < DEVICE_VARIANT_COUNT && o->ses->have_device; v++)
      if (o->variants & 1u << v) {
        const int vr = time_variant(o, label, r, &s, (device_variant)v, st, n_st, lines);
        if (vr != EXIT_CODE_PASS && rc != EXIT_CODE_FAIL) rc = vr;
      }
    for (j = 0; j < n_st; j++) bench_line_emit(o, &lines[j]);
    r->release(&s);
    if (rc != EXIT_CODE_PASS && status != EXIT_CODE_FAIL) status = rc;
  }
  return status;
}
