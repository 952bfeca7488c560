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

#include <pthread.h>
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

/* nx_e4m3_decode of every code, filled once (e4m3_table_fill) */
static float e4m3_table[256];
static pthread_once_t e4m3_table_once = PTHREAD_ONCE_INIT;

static void e4m3_table_fill(void) {
  int code;
  for (code = 0; code < 256; code++) e4m3_table[code] = nx_e4m3_decode((nx_u8)code);
}

/*
** Each element is nx_csa_fp8_record_value(rec, d): the FP8 blocks' code
** value times the block's scale, the tail's bf16 widened.  Taken a block at
** a time, with the codes' values from a table, since every step decodes
** hundreds of records (the same two factors, so the same products).
*/
void csa_fp8_record_decode(const unsigned char *rec, float *out) {
  int blk, i;
  pthread_once(&e4m3_table_once, e4m3_table_fill);
  for (blk = 0; blk < NX_CSA_NOPE / NX_FP8_BLOCK; blk++) {
    const unsigned char *b = rec + blk * NX_FP8_BLOCK_BYTES;
    const float scale = nx_ue8m0_decode(b[0]);
    for (i = 0; i < NX_FP8_BLOCK; i++) out[blk * NX_FP8_BLOCK + i] = e4m3_table[b[1 + i]] * scale;
  }
  for (i = NX_CSA_NOPE; i < CSA_HEAD_DIM; i++) out[i] = nx_csa_fp8_record_value(rec, i);
}

/*
** A row's live candidates in blocks of up to DOT_LANES, ascending:
** lanes[d * DOT_LANES + k] = candidate c[k]'s d (0 for k >= n), so that the
** DOT_LANES sums of one d are one contiguous vector operation.  Planned once
** a row (csa_attend_heads), filled and read by the scores phase for every
** head.
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

/*
** Block i's interleaved lanes.  Why not once for all heads of the call
** before the scores: the phase that reads a block fills it, so that the
** lanes a worker reads are the ones it has just written, in its own cache.
*/
static void lane_block_fill(const float *const *values, lane_block *blk) {
  int k, dd;
  for (dd = 0; dd < CSA_HEAD_DIM; dd++)
    for (k = 0; k < DOT_LANES; k++) blk->lanes[dd * DOT_LANES + k] = k < blk->n ? values[blk->c[k]][dd] : 0.0f;
}

/*
** Heads are taken HEAD_GROUP at a time wherever their sums run side by
** side: the lanes of a block, or the values of a candidate, are read once
** for all of them, and each head's sums keep their own order.
*/
#define HEAD_GROUP 4
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

/*
** One csa_attend_heads call, in three phases, each a parallel call over
** the whole row: the scores (items: lane blocks, every head), the softmax
** (items: heads), y (items: blocks of Y_BLOCK dims, every head).  Why this
** split and not a worker a few heads: a worker then reads a few candidates'
** keys or a few dims of the values, where with whole heads every worker
** streamed every candidate's 4 KiB (keys and values) through its cache;
** on 16 cores that traffic, not the arithmetic, held the row (docs/SPEED.md,
** "The attention in three phases").
*/
#define Y_BLOCK 8      /* dims of y a values item sums: two f4s a head */
#define SCORE_BLOCKS 4 /* lane blocks (64 KiB) a scores item takes a head group at a time over */

typedef struct row_job {
  const csa_dims *d;
  const tensor *const *in;
  tensor *const *out;
  long long b, s, count;
  const float *const *values;
  lane_block *blocks; /* the row's live candidates; lanes filled by the scores phase */
  long long n_blocks;
  long long stride;          /* a score / prob row: score_stride on whole cache lines */
  float *score, *prob;       /* [heads][stride] each */
  unsigned char *masked;     /* [heads]: every score -inf, y = +0 */
  float *columns;            /* worker w's: count x Y_BLOCK floats from w * column_stride */
  long long column_stride;
  float *trace_scores, *trace_output;
} row_job;

/* Output row (b, s, h) of the call's tensors: its index into [B, S, heads]. */
static long long row_index(const row_job *j, long long h) { return (j->b * j->d->seq + j->s) * j->d->heads + h; }

static const float *row_query(const row_job *j, long long h) {
  return (const float *)j->in[CSA_IN_QUERY]->data + row_index(j, h) * CSA_HEAD_DIM;
}

/* Phase 1, lane blocks [i0, i1): fill them, then every head's scores of their candidates. */
static void scores_items(void *ctx, long long i0, long long i1, int worker) {
  const row_job *j = ctx;
  const csa_dims *d = j->d;
  float acc[HEAD_GROUP][DOT_LANES];
  long long i, first, h0;
  int g, k;
  (void)worker;
  for (i = i0; i < i1; i++) lane_block_fill(j->values, &j->blocks[i]);
  for (first = i0; first < i1; first += SCORE_BLOCKS) { /* the sub-range's lanes stay in cache over the heads */
    const long long last = first + SCORE_BLOCKS < i1 ? first + SCORE_BLOCKS : i1;
    for (h0 = 0; h0 < d->heads; h0 += HEAD_GROUP) {
      const int n = (int)(d->heads - h0 < HEAD_GROUP ? d->heads - h0 : HEAD_GROUP);
      const float *q[HEAD_GROUP], *bias[HEAD_GROUP];
      long long bias_step[HEAD_GROUP];
      for (g = 0; g < HEAD_GROUP; g++) q[g] = row_query(j, h0 + (g < n ? g : 0)); /* a short group repeats, unstored */
      for (g = 0; g < n; g++) bias[g] = csa_bias_row(d, j->in, j->b, h0 + g, j->s, &bias_step[g]);
      for (i = first; i < last; i++) {
        const lane_block *blk = &j->blocks[i];
        dot_lanes_group(q, blk->lanes, acc);
        for (g = 0; g < n; g++)
          for (k = 0; k < blk->n; k++) {
            float sc = acc[g][k] * d->scale;
            if (bias[g]) sc = sc + bias[g][blk->c[k] * bias_step[g]];
            j->score[(h0 + g) * j->stride + blk->c[k]] = sc;
          }
      }
    }
  }
}

/*
** Phase 2, heads [h0, h1): the scores of dead candidates and past count to
** -inf, the max over the live ones, then each candidate's probability:
** its exp taken once, kept, and divided by den once den is whole.  A
** candidate whose score is -inf gets probability -inf (no probability is
** otherwise), so that phase 3 tests the probability rows alone and does
** not stream the score rows too.
*/
static void softmax_items(void *ctx, long long h0, long long h1, int worker) {
  const row_job *j = ctx;
  const csa_dims *d = j->d;
  long long h, c;
  (void)worker;
  for (h = h0; h < h1; h++) {
    float *score = j->score + h * j->stride, *w = j->prob + h * j->stride;
    float m = nx_f32_from_bits(NX_CSA_NEG_INF_BITS), den = 0.0f;
    for (c = 0; c < d->score_stride; c++)
      if (c >= j->count || !j->values[c]) score[c] = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
    for (c = 0; c < j->count; c++) /* ascending, though the max of non-NaN floats is order-free */
      if (j->values[c]) m = nx_maxf(m, score[c]);
    if (j->trace_scores)
      memcpy(j->trace_scores + row_index(j, h) * d->score_stride, score, (size_t)d->score_stride * sizeof(float));
    j->masked[h] = (unsigned char)nx_csa_is_neg_inf(m);
    if (j->masked[h]) continue; /* all masked: +0, though NaN scores remain */
    for (c = 0; c < j->count; c++) {
      w[c] = nx_csa_is_neg_inf(score[c]) ? 0.0f : nx_expf(score[c] - m);
      if (!nx_csa_is_neg_inf(score[c])) den = den + w[c];
    }
    den = den + nx_expf(((const float *)j->in[CSA_IN_HEAD_SINK]->data)[h] - m); /* after the max: a logit-only mass */
    for (c = 0; c < j->count; c++) w[c] = nx_csa_is_neg_inf(score[c]) ? score[c] : w[c] / den;
  }
}

/*
** Y_BLOCK dims of y for heads [h0, h0 + n): each y[d] summed over the
** candidates ascending from +0, skipping the -inf ones (not live, or masked
** by a bias); cols holds the live candidates' Y_BLOCK values, ascending.
** The sums stay in registers over all the candidates.
*/
static void values_group(const row_job *j, long long h0, int n, const float *cols, float (*y)[Y_BLOCK]) {
  f4 a[HEAD_GROUP][2] = {{{0.0f}}};
  const float *prob[HEAD_GROUP];
  int live[HEAD_GROUP];
  long long c;
  int g;
  for (g = 0; g < HEAD_GROUP; g++) {
    const long long h = h0 + (g < n ? g : 0);
    live[g] = g < n && !j->masked[h];
    prob[g] = j->prob + h * j->stride;
  }
  for (c = 0; c < j->count; c++) {
    f4 lo, hi;
    if (!j->values[c]) continue; /* a dead candidate's score is -inf for every head */
    lo = f4_load(cols), hi = f4_load(cols + 4);
    cols += Y_BLOCK;
#pragma GCC unroll 4 /* unrolled, the accumulators stay in registers */
    for (g = 0; g < HEAD_GROUP; g++) {
      f4 p;
      if (!live[g] || nx_csa_is_neg_inf(prob[g][c])) continue;
      p = f4_splat(prob[g][c]);
      a[g][0] = a[g][0] + p * lo;
      a[g][1] = a[g][1] + p * hi;
    }
  }
  for (g = 0; g < n; g++) memcpy(y[g], a[g], sizeof a[g]);
}

/* Phase 3, dim blocks [i0, i1): every head's y over those dims (and the trace's copy). */
static void values_items(void *ctx, long long i0, long long i1, int worker) {
  const row_job *j = ctx;
  float *cols = j->columns + worker * j->column_stride, y[HEAD_GROUP][Y_BLOCK];
  long long i, c, h0;
  int g;
  for (i = i0; i < i1; i++) {
    const long long d0 = i * Y_BLOCK;
    float *col = cols;
    for (c = 0; c < j->count; c++) /* the live candidates' dims, contiguous: every head group reads them */
      if (j->values[c]) memcpy(col, j->values[c] + d0, sizeof y[0]), col += Y_BLOCK;
    for (h0 = 0; h0 < j->d->heads; h0 += HEAD_GROUP) {
      const int n = (int)(j->d->heads - h0 < HEAD_GROUP ? j->d->heads - h0 : HEAD_GROUP);
      values_group(j, h0, n, cols, y);
      for (g = 0; g < n; g++) {
        const long long at = row_index(j, h0 + g) * CSA_HEAD_DIM + d0;
        memcpy((float *)j->out[CSA_OUT_Y]->data + at, y[g], sizeof y[g]);
        if (j->trace_output) memcpy(j->trace_output + at, y[g], sizeof y[g]);
      }
    }
  }
}

int csa_split_rows(long long rows, long long heads) {
  const long long avail = oracle_threads_available();
  return (rows < avail ? rows : avail) >= (heads < avail ? heads : avail);
}

void csa_attend_heads(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                      const float *const *values, long long count, float *trace_scores, float *trace_output) {
  /* kept from row to row (fresh memory each row would fault): 16 KiB a block, the score and prob rows */
  static _Thread_local oracle_kept kept_blocks, kept_rows, kept_columns;
  const int value_workers = oracle_parallel_workers(CSA_HEAD_DIM / Y_BLOCK, 1);
  row_job j;
  j.d = d, j.in = in, j.out = out, j.b = b, j.s = s, j.count = count, j.values = values;
  j.trace_scores = trace_scores, j.trace_output = trace_output;
  j.blocks = oracle_kept_or_die(&kept_blocks, (size_t)((count + DOT_LANES - 1) / DOT_LANES), sizeof *j.blocks,
                                __FILE__, __LINE__);
  j.n_blocks = lane_blocks_plan(values, count, j.blocks);
  j.stride = oracle_worker_stride(d->score_stride, sizeof(float));
  j.score = oracle_kept_or_die(&kept_rows, (size_t)(2 * d->heads * j.stride + d->heads), sizeof(float), __FILE__,
                               __LINE__);
  j.prob = j.score + d->heads * j.stride;
  j.masked = (unsigned char *)(j.prob + d->heads * j.stride);
  j.column_stride = oracle_worker_stride((count > 0 ? count : 1) * Y_BLOCK, sizeof(float));
  j.columns = oracle_kept_or_die(&kept_columns, (size_t)(value_workers * j.column_stride), sizeof(float), __FILE__,
                                 __LINE__);
  oracle_parallel_for(j.n_blocks, oracle_parallel_workers(j.n_blocks, 1), scores_items, &j);
  oracle_parallel_for(d->heads, oracle_parallel_workers(d->heads, 1), softmax_items, &j);
  oracle_parallel_for(CSA_HEAD_DIM / Y_BLOCK, value_workers, values_items, &j);
}
