/*
** csa_attention.c: the sink-softmax attention row of both CSA ratios (see
** csa_attention.h; oracle/SPEC.md C3 and R7; seed:691-859 and 862-990).
**
** Exactness: one IEEE binary32 operation at a time, rounded to nearest,
** nothing fused (-ffp-contract=off); the dot products and the three softmax
** sums start at +0.0f and run in ascending index order, as the seed kernels'
** single-thread loops do.  nx_expf (correctly rounded) stands in for the
** seed's (float)exp((double)x) and nx_maxf for fmaxf (DESIGN.md).  Work is
** reordered only across independent sums: several candidates' dot products
** advance together, and y is accumulated candidate by candidate, so each
** single sum keeps its order and its bits.  Threads: the heads of a row (or,
** in the callers, the rows of a step) are independent outputs and may run on
** different workers (oracle_threads.h); no sum is split between them.
** NaN / inf: a NaN score is skipped by the max but enters the sums (y NaN);
** -inf scores are no candidates; a row whose scores are all -inf or NaN is
** all-masked and stores +0 (the sink alone gives no row, seed:816-820).
*/
#include "oracle/csa_attention.h"

#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"
#include "oracle/oracle_threads.h"

#include <stdlib.h>
#include <string.h>

#define DOT_LANES 8 /* candidates whose dot products advance together */

csa_window csa_window_of(const csa_dims *d, long long s) {
  csa_window w;
  long long first;
  w.dense = CSA_DENSE_WINDOW;
  if (d->start == 0) w.dense = d->kv_used < CSA_DENSE_WINDOW ? d->kv_used : CSA_DENSE_WINDOW;
  w.position = d->start + s;
  first = w.position + 1 - CSA_DENSE_WINDOW;
  if (first < 0) first = 0;
  w.dense_start = d->kv_base > first ? d->kv_base : first;
  return w;
}

const float *csa_dense_value(const csa_dims *d, const tensor *current_kv, long long b, const csa_window *w,
                             long long c) {
  const long long abs_pos = w->dense_start + c, rel = abs_pos - d->kv_base;
  if (abs_pos > w->position || rel >= d->kv_used) return NULL; /* future, or beyond the prefix? */
  return (const float *)current_kv->data + (b * d->kv_len + rel) * CSA_HEAD_DIM;
}

const float *csa_bias_row(const csa_dims *d, const tensor *const *in, long long b, long long h, long long s,
                          long long *step) {
  const long long logical[3] = {b, h, s};
  long long off = 0;
  int axis;
  *step = 0;
  if (!d->has_bias) return NULL;
  for (axis = 0; axis < 3; axis++) off = off * d->bias_dims[axis] + (d->bias_dims[axis] == 1 ? 0 : logical[axis]);
  off *= d->bias_dims[3]; /* the candidate axis is last and contiguous */
  *step = d->bias_dims[3] == 1 ? 0 : 1;
  return (const float *)in[CSA_IN_BIAS]->data + off;
}

void csa_fp8_record_decode(const unsigned char *rec, float *out) {
  int dd;
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) out[dd] = nx_csa_fp8_record_value(rec, dd);
}

/* acc[k] = sum_d q[d] * v[k][d] for n <= DOT_LANES vectors, each sum ascending in d. */
static void dot_lanes(const float *q, const float *const *v, int n, float *acc) {
  int k, dd;
  for (k = 0; k < n; k++) acc[k] = 0.0f;
  for (dd = 0; dd < CSA_HEAD_DIM; dd++)
    for (k = 0; k < n; k++) acc[k] = acc[k] + q[dd] * v[k][dd];
}

/* score[c] for every candidate (-inf where none) and their max. */
static float row_scores(const float *q, const float *const *values, long long count, const float *bias_row,
                        long long bias_step, float scale, float *score, long long score_len) {
  const float *lane_v[DOT_LANES];
  long long lane_c[DOT_LANES], c;
  float acc[DOT_LANES], m = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
  int n = 0, k;
  for (c = 0; c < score_len; c++) score[c] = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
  for (c = 0; c <= count; c++) {
    if (c < count && values[c]) lane_v[n] = values[c], lane_c[n++] = c;
    if (n < DOT_LANES && c < count) continue; /* gather more lanes first? */
    dot_lanes(q, lane_v, n, acc);
    for (k = 0; k < n; k++) {
      float sc = acc[k] * scale;
      if (bias_row) sc = sc + bias_row[lane_c[k] * bias_step];
      score[lane_c[k]] = sc;
    }
    n = 0;
  }
  for (c = 0; c < count; c++) /* ascending, though the max of non-NaN floats is order-free */
    if (values[c]) m = nx_maxf(m, score[c]);
  return m;
}

void csa_attend_row(const float *q, const float *const *values, long long count, const float *bias_row,
                    long long bias_step, float scale, float sink, float *prob, float *score, long long score_len,
                    float *y) {
  const float m = row_scores(q, values, count, bias_row, bias_step, scale, score, score_len);
  float den = 0.0f, acc[CSA_HEAD_DIM];
  long long c;
  int dd;
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) y[dd] = 0.0f;
  if (nx_csa_is_neg_inf(m)) return; /* all masked: +0 */
  for (c = 0; c < count; c++)
    if (!nx_csa_is_neg_inf(score[c])) den = den + nx_expf(score[c] - m);
  den = den + nx_expf(sink - m); /* after the max: a logit-only mass */
  /* prob[c] is the same for every dim, so it is computed once per candidate */
  for (c = 0; c < count; c++) prob[c] = nx_csa_is_neg_inf(score[c]) ? 0.0f : nx_expf(score[c] - m) / den;
  /* y's sums in a local array, which no value vector can alias: the dims then advance as vectors */
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) acc[dd] = 0.0f;
  for (c = 0; c < count; c++) {
    const float *v = values[c], p = prob[c];
    if (nx_csa_is_neg_inf(score[c])) continue; /* -inf: not live, or masked by its bias */
    for (dd = 0; dd < CSA_HEAD_DIM; dd++) acc[dd] = acc[dd] + p * v[dd];
  }
  memcpy(y, acc, sizeof acc);
}

int csa_split_rows(long long rows, long long heads) {
  const long long avail = oracle_threads_available();
  return (rows < avail ? rows : avail) >= (heads < avail ? heads : avail);
}

/* One csa_attend_heads call, shared by the workers that split its heads. */
typedef struct heads_job {
  const csa_dims *d;
  const tensor *const *in;
  tensor *const *out;
  long long b, s, count;
  const float *const *values;
  float *prob, *score; /* worker w's scratch starts at w * stride */
  long long stride;    /* score_stride on whole cache lines */
  float *trace_scores, *trace_output;
} heads_job;

/* Heads [h0, h1) of row (b, s) on one worker's prob and score scratch. */
static void heads_range(void *ctx, long long h0, long long h1, int worker) {
  const heads_job *j = ctx;
  const csa_dims *d = j->d;
  float *prob = j->prob + worker * j->stride, *score = j->score + worker * j->stride;
  long long h;
  for (h = h0; h < h1; h++) {
    const long long row = (j->b * d->seq + j->s) * d->heads + h;
    const float *q = (const float *)j->in[CSA_IN_QUERY]->data + row * CSA_HEAD_DIM;
    float *y = (float *)j->out[CSA_OUT_Y]->data + row * CSA_HEAD_DIM;
    long long step;
    const float *bias = csa_bias_row(d, j->in, j->b, h, j->s, &step);
    csa_attend_row(q, j->values, j->count, bias, step, d->scale, ((const float *)j->in[CSA_IN_HEAD_SINK]->data)[h],
                   prob, score, d->score_stride, y);
    if (j->trace_scores)
      memcpy(j->trace_scores + row * d->score_stride, score, (size_t)d->score_stride * sizeof(float));
    if (j->trace_output) memcpy(j->trace_output + row * CSA_HEAD_DIM, y, CSA_HEAD_DIM * sizeof(float));
  }
}

void csa_attend_heads(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                      const float *const *values, long long count, float *prob, float *score, float *trace_scores,
                      float *trace_output) {
  const int workers = oracle_parallel_workers(d->heads, 1);
  float *own = NULL;
  heads_job j;
  j.d = d, j.in = in, j.out = out, j.b = b, j.s = s, j.count = count, j.values = values;
  j.prob = prob, j.score = score, j.stride = 0, j.trace_scores = trace_scores, j.trace_output = trace_output;
  if (workers > 1) { /* the caller's scratch serves one worker; the split needs one each */
    j.stride = oracle_worker_stride(d->score_stride, sizeof *own);
    own = oracle_alloc_or_die((size_t)(2 * workers * j.stride), sizeof *own, __FILE__, __LINE__);
    j.prob = own, j.score = own + workers * j.stride;
  }
  oracle_parallel_for(d->heads, workers, heads_range, &j);
  free(own);
}
