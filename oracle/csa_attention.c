/*
** csa_attention.c: the sink-softmax attention row of both CSA ratios (see
** csa_attention.h; oracle/SPEC.md C3 and R7; seed:691-859 and 862-990).
**
** Exactness: one IEEE binary32 operation at a time, rounded to nearest,
** nothing fused (-ffp-contract=off); the dot products and the three softmax
** sums start at +0.0f and run in ascending index order, as the seed kernels'
** single-thread loops do.  nx_expf (correctly rounded) stands in for the
** seed's (float)exp((double)x) and nx_maxf for fmaxf (DESIGN.md).  Work is
** reordered only across independent sums: several heads' and candidates'
** dot products advance together, each head's exps are taken once and kept
** for the division, and y is accumulated in blocks of dims and candidates,
** so each single sum keeps its order and its bits.  Threads: the heads of a row (or,
** in the callers, the rows of a step) are independent outputs and may run on
** different workers (oracle_threads.h); no sum is split between them.
** NaN / inf: a NaN score is skipped by the max but enters the sums (y NaN);
** -inf scores are no candidates; a row whose scores are all -inf or NaN is
** all-masked and stores +0 (the sink alone gives no row, seed:816-820).
*/
#include "oracle/csa_attention.h"

#include "oracle/f4.h"
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

/*
** A row's live candidates in blocks of up to DOT_LANES, ascending:
** lanes[d * DOT_LANES + k] = candidate c[k]'s d (0 for k >= n), so that the
** DOT_LANES sums of one d are one contiguous vector operation.  Built once a
** row (csa_attend_heads) and read by every head.
*/
typedef struct lane_block {
  float lanes[CSA_HEAD_DIM * DOT_LANES];
  long long c[DOT_LANES];
  int n;
} lane_block;

/* The blocks' candidates, DOT_LANES live ones a block in ascending order; returns the block count. */
static long long lane_blocks_plan(const float *const *values, long long count, lane_block *blocks) {
  long long nb = 0, c;
  for (c = 0; c < count; c++) {
    if (!values[c]) continue;
    if (nb == 0 || blocks[nb - 1].n == DOT_LANES) blocks[nb++].n = 0;
    blocks[nb - 1].c[blocks[nb - 1].n++] = c;
  }
  return nb;
}

typedef struct lanes_job {
  const float *const *values;
  lane_block *blocks;
} lanes_job;

/* Blocks [i0, i1): their interleaved lanes. */
static void lane_blocks_fill(void *ctx, long long i0, long long i1, int worker) {
  const lanes_job *j = ctx;
  long long i;
  int k, dd;
  (void)worker;
  for (i = i0; i < i1; i++) {
    lane_block *blk = &j->blocks[i];
    for (dd = 0; dd < CSA_HEAD_DIM; dd++)
      for (k = 0; k < DOT_LANES; k++) blk->lanes[dd * DOT_LANES + k] = k < blk->n ? j->values[blk->c[k]][dd] : 0.0f;
  }
}

/*
** The rows of n <= HEAD_GROUP heads of one query row over the same
** candidates.  Taken together so that each block of interleaved candidates
** (lane_block) and each value vector is read once for all of them while it
** is in cache; each head's sums are its own and keep their order.
*/
#define HEAD_GROUP 4

typedef struct head_rows {
  int n;
  const float *q[HEAD_GROUP], *bias[HEAD_GROUP];
  long long bias_step[HEAD_GROUP];
  float sink[HEAD_GROUP];
  float *prob[HEAD_GROUP], *score[HEAD_GROUP], *y[HEAD_GROUP]; /* prob, score: [score_len] scratch each */
} head_rows;

_Static_assert(DOT_LANES == 8, "a lane block's candidates are two f4s");

/*
** acc[g][k] = sum_d q[g][d] * lane k's d for HEAD_GROUP heads at once, each
** sum ascending in d from +0.  Why four heads together: one head's
** DOT_LANES chains are two vectors, and each add waits for the one before
** it; four heads' eight independent vectors keep the adder busy.
*/
static void dot_lanes_group(const float *const *q, const float *lanes, float acc[HEAD_GROUP][DOT_LANES]) {
  f4 a[HEAD_GROUP][2] = {{{0.0f}}};
  int g, dd;
  for (dd = 0; dd < CSA_HEAD_DIM; dd++) {
    const f4 lo = f4_load(lanes + dd * DOT_LANES), hi = f4_load(lanes + dd * DOT_LANES + 4);
#pragma GCC unroll 4 /* unrolled, the accumulators stay in registers */
    for (g = 0; g < HEAD_GROUP; g++) {
      const f4 qg = f4_splat(q[g][dd]);
      a[g][0] = a[g][0] + qg * lo;
      a[g][1] = a[g][1] + qg * hi;
    }
  }
  memcpy(acc, a, sizeof a);
}

/* score[g][c] for every head and candidate (-inf where none), and each head's max into m[g]. */
static void group_scores(const head_rows *r, const float *const *values, long long count, const lane_block *blocks,
                         long long n_blocks, float scale, long long score_len, float *m) {
  const float *q[HEAD_GROUP];
  float acc[HEAD_GROUP][DOT_LANES];
  long long c, i;
  int k, g;
  for (g = 0; g < HEAD_GROUP; g++) q[g] = r->q[g < r->n ? g : 0]; /* a short group repeats head 0, unstored */
  for (g = 0; g < r->n; g++) {
    m[g] = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
    for (c = 0; c < score_len; c++) r->score[g][c] = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
  }
  for (i = 0; i < n_blocks; i++) {
    const lane_block *blk = &blocks[i];
    dot_lanes_group(q, blk->lanes, acc); /* the interleaved lanes serve every head of the group */
    for (g = 0; g < r->n; g++)
      for (k = 0; k < blk->n; k++) {
        float sc = acc[g][k] * scale;
        if (r->bias[g]) sc = sc + r->bias[g][blk->c[k] * r->bias_step[g]];
        r->score[g][blk->c[k]] = sc;
      }
  }
  for (g = 0; g < r->n; g++)
    for (c = 0; c < count; c++) /* ascending, though the max of non-NaN floats is order-free */
      if (values[c]) m[g] = nx_maxf(m[g], r->score[g][c]);
}

/*
** Candidates [c0, c1) added into y's dims [d0, d0 + Y_BLOCK) of every head
** of the group, acc[g] holding each head's sums so far: each y[d] runs
** over the candidates ascending, skipping the -inf ones (not live, or
** masked by a bias).  Why in blocks: the block's sums stay in registers
** over C_BLOCK candidates, and those candidates' value rows stay in cache
** over all the dim blocks, where a whole 512-float y row would be loaded
** and stored again for each candidate.
*/
#define Y_BLOCK 8   /* two f4s a head */
#define C_BLOCK 64  /* 128 KiB of value rows */

static void group_values_block(const head_rows *r, const int *masked, const float *const *values, long long c0,
                               long long c1, int d0, float acc[HEAD_GROUP][CSA_HEAD_DIM]) {
  f4 a[HEAD_GROUP][2];
  long long c;
  int g;
  for (g = 0; g < HEAD_GROUP; g++) a[g][0] = f4_load(acc[g] + d0), a[g][1] = f4_load(acc[g] + d0 + 4);
  for (c = c0; c < c1; c++) {
    f4 lo, hi;
    if (!values[c]) continue; /* a dead candidate's score is -inf for every head */
    lo = f4_load(values[c] + d0), hi = f4_load(values[c] + d0 + 4);
#pragma GCC unroll 4 /* unrolled, the accumulators stay in registers */
    for (g = 0; g < HEAD_GROUP; g++) {
      f4 p;
      if (g >= r->n || masked[g] || nx_csa_is_neg_inf(r->score[g][c])) continue;
      p = f4_splat(r->prob[g][c]);
      a[g][0] = a[g][0] + p * lo;
      a[g][1] = a[g][1] + p * hi;
    }
  }
  for (g = 0; g < HEAD_GROUP; g++) memcpy(acc[g] + d0, a[g], sizeof a[g]);
}

static void attend_group(const head_rows *r, const float *const *values, long long count, const lane_block *blocks,
                         long long n_blocks, float scale, long long score_len) {
  float m[HEAD_GROUP], acc[HEAD_GROUP][CSA_HEAD_DIM] = {{0.0f}};
  int masked[HEAD_GROUP];
  long long c;
  int g, d0;
  group_scores(r, values, count, blocks, n_blocks, scale, score_len, m);
  for (g = 0; g < r->n; g++) {
    const float *score = r->score[g];
    float den = 0.0f, *w = r->prob[g];
    masked[g] = nx_csa_is_neg_inf(m[g]);
    if (masked[g]) continue; /* all masked: +0, though NaN scores remain */
    for (c = 0; c < count; c++) { /* each exp once: kept, then divided by den below */
      w[c] = nx_csa_is_neg_inf(score[c]) ? 0.0f : nx_expf(score[c] - m[g]);
      if (!nx_csa_is_neg_inf(score[c])) den = den + w[c];
    }
    den = den + nx_expf(r->sink[g] - m[g]); /* after the max: a logit-only mass */
    for (c = 0; c < count; c++) /* prob[c]: the same for every dim */
      w[c] = nx_csa_is_neg_inf(score[c]) ? 0.0f : w[c] / den;
  }
  for (c = 0; c < count; c += C_BLOCK)
    for (d0 = 0; d0 < CSA_HEAD_DIM; d0 += Y_BLOCK)
      group_values_block(r, masked, values, c, c + C_BLOCK < count ? c + C_BLOCK : count, d0, acc);
  for (g = 0; g < r->n && g < HEAD_GROUP; g++) memcpy(r->y[g], acc[g], sizeof acc[g]); /* r->n <= HEAD_GROUP */
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
  const lane_block *blocks; /* the row's live candidates, interleaved */
  long long n_blocks;
  float *scratch;   /* worker w's: HEAD_GROUP prob rows, then HEAD_GROUP score rows, from w * 2 * HEAD_GROUP * stride */
  long long stride; /* score_stride on whole cache lines */
  float *trace_scores, *trace_output;
} heads_job;

/* Heads [h0, h1) of row (b, s), HEAD_GROUP at a time, on one worker's scratch. */
static void heads_range(void *ctx, long long h0, long long h1, int worker) {
  const heads_job *j = ctx;
  const csa_dims *d = j->d;
  float *scratch = j->scratch + (long long)worker * 2 * HEAD_GROUP * j->stride;
  long long first;
  int g;
  for (first = h0; first < h1; first += HEAD_GROUP) {
    head_rows r;
    r.n = (int)(h1 - first < HEAD_GROUP ? h1 - first : HEAD_GROUP);
    for (g = 0; g < r.n; g++) {
      const long long row = (j->b * d->seq + j->s) * d->heads + first + g;
      r.q[g] = (const float *)j->in[CSA_IN_QUERY]->data + row * CSA_HEAD_DIM;
      r.y[g] = (float *)j->out[CSA_OUT_Y]->data + row * CSA_HEAD_DIM;
      r.bias[g] = csa_bias_row(d, j->in, j->b, first + g, j->s, &r.bias_step[g]);
      r.sink[g] = ((const float *)j->in[CSA_IN_HEAD_SINK]->data)[first + g];
      r.prob[g] = scratch + g * j->stride;
      r.score[g] = scratch + (HEAD_GROUP + g) * j->stride;
    }
    attend_group(&r, j->values, j->count, j->blocks, j->n_blocks, d->scale, d->score_stride);
    for (g = 0; g < r.n; g++) {
      const long long row = (j->b * d->seq + j->s) * d->heads + first + g;
      if (j->trace_scores)
        memcpy(j->trace_scores + row * d->score_stride, r.score[g], (size_t)d->score_stride * sizeof(float));
      if (j->trace_output) memcpy(j->trace_output + row * CSA_HEAD_DIM, r.y[g], CSA_HEAD_DIM * sizeof(float));
    }
  }
}

void csa_attend_heads(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                      const float *const *values, long long count, float *trace_scores, float *trace_output) {
  static _Thread_local oracle_kept kept_blocks; /* 16 KiB a block: fresh memory each row would fault */
  const int workers = oracle_parallel_workers(d->heads, 1);
  lane_block *blocks = oracle_kept_or_die(&kept_blocks, (size_t)((count + DOT_LANES - 1) / DOT_LANES),
                                          sizeof *blocks, __FILE__, __LINE__);
  lanes_job lj;
  heads_job j;
  j.n_blocks = lane_blocks_plan(values, count, blocks);
  lj.values = values, lj.blocks = blocks;
  oracle_parallel_for(j.n_blocks, oracle_parallel_workers(j.n_blocks, 4), lane_blocks_fill, &lj);
  j.d = d, j.in = in, j.out = out, j.b = b, j.s = s, j.count = count, j.values = values, j.blocks = blocks;
  j.trace_scores = trace_scores, j.trace_output = trace_output;
  j.stride = oracle_worker_stride(d->score_stride, sizeof *j.scratch);
  j.scratch = oracle_alloc_or_die((size_t)(2 * HEAD_GROUP * workers * j.stride), sizeof *j.scratch, __FILE__,
                                  __LINE__);
  oracle_parallel_for(d->heads, workers, heads_range, &j);
  free(j.scratch);
}
