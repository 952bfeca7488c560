/*
** csa4_index.c: the ratio-4 indexer for one query row: index-query
** finalize, record scoring and top-k selection.
**
** Source: seed 003_9308a65268dfd821.txt, csa_ratio4_index_select
** (seed:551-664), one thread per (batch, query) row, whose loop order is the
** order of every sum here; oracle/SPEC.md "CompressedSparseAttention, ratio
** 4", R4-R6:
**
**   q_h      bf16(index_query[b, s, h, :]), then csa4_index_rotate at the
**            row's position start + s, then each 32-block FP4 quantized and
**            dequantized (the round trip)
**   limit    min((start + s + 1) / 4, Rci): the causal records
**   dot_h(r) sum_d q_h[d] * key_r[d]   (d ascending; key_r the FP4 record r
**            of the present index key, e2m1 value * block scale)
**   score(r) sum_h (nx_maxf(dot_h(r), 0) * index_weight[b, s, h]) * ws
**            (h ascending), ws = (1 / sqrt(128)) / sqrt(IH)
**   select   the first topk records r < limit in nx_csa_rank_before order
**            (score descending by total order, then record ascending), -1
**            padded
**
** Exactness: one IEEE binary32 operation at a time, nothing fused; sums from
** +0.0f in the seed's order.  For speed each key record is dequantized once
** per row (not once per head) and the IH dot products of a record advance
** together, dim by dim: each one still sums its own dims in ascending order.
** Ties: legal (the seed's comment says the oracle rejects them; DESIGN.md
** decides they are legal): equal scores rank by ascending record.
** NaN: relu (nx_maxf) maps a NaN dot to +0; a NaN weight makes a NaN score,
** which the total order ranks above +inf (positive NaN) or below -inf.
** Threads (oracle_threads.h): with many query rows, whole rows (finalize,
** scoring, selection) go to the workers; with few rows over many records
** (long-context decode) the rows run in turn and each row's heads (the
** query finalize) and then its records are split between the workers.  A
** head's finalized query is computed by one worker as on one thread.  A
** record's score, its head sum included, is
** always computed by one worker in the order above, so bits do not depend
** on the split; selection ranks the finished scores of its row alone (by
** nx_csa_rank_key, whose descending order is nx_csa_rank_before's: the topk
** largest keys by a quickselect, then those sorted).  In record mode a long
** row's selection is split too: ranges of its records each sort their own
** largest keys, and a merge takes the topk largest of those; the keys are
** distinct, so any split selects and orders the same records.
*/
#include "oracle/csa4_stages.h"
#include "oracle/csa_attention.h"
#include "oracle/f4.h"

#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"
#include "oracle/oracle_threads.h"

#include <stdlib.h>
#include <string.h>

/*
** Multiply-adds a worker should get at least when one row's records are
** split (a record costs IH x 128 of them): well above a thread start.
*/
#define RECORD_WORK_MIN (1LL << 18)

/* What one query row's index stages work in; a worker that runs whole rows has its own. */
typedef struct row_scratch {
  float *query_h; /* [IH][128]: the finalized queries, head-major, as the heads are finalized */
  float *query_t; /* [128][IH]: the same, dim-major, for the scorer */
  float *dot;     /* [IH] */
  float *scores;  /* [Rci] */
  nx_u64 *keys;   /* [Rci]: nx_csa_rank_key of each causal record */
} row_scratch;

/* One step's indexer, shared by the workers of its parallel calls. */
typedef struct index_job {
  const csa_dims *d;
  const tensor *const *in;
  const tensor *key_cache; /* the present index key (output 3), already written */
  int *selection;          /* [B, S, topk] */
  float *query_trace, *scores_trace;
  row_scratch *rows;       /* row mode: one per worker; record mode: rows[0] */
  float *dots;             /* record mode: [IH] per worker, dot_stride apart */
  long long dot_stride;
  long long b, s;          /* record mode: the row being scored */
  long long limit, parts;  /* record mode: the row's causal records, and the ranges its selection is cut into */
  long long *part_taken;   /* record mode: [parts]: how many of its largest keys each range sorted to its front */
} index_job;

static void scratch_alloc(const csa_dims *d, row_scratch *x) {
  x->query_h = oracle_alloc_or_die((size_t)(CSA4_INDEX_DIM * d->index_heads), sizeof(float), __FILE__, __LINE__);
  x->query_t = oracle_alloc_or_die((size_t)(CSA4_INDEX_DIM * d->index_heads), sizeof(float), __FILE__, __LINE__);
  x->dot = oracle_alloc_or_die((size_t)d->index_heads, sizeof(float), __FILE__, __LINE__);
  x->scores = oracle_alloc_or_die((size_t)d->index_present_capacity, sizeof(float), __FILE__, __LINE__);
  x->keys = oracle_alloc_or_die((size_t)d->index_present_capacity, sizeof(nx_u64), __FILE__, __LINE__);
}

/*
** Record mode's one row scratch, on blocks the calling thread keeps from
** step to step (oracle_kept_or_die): fresh blocks were zeroed on the caller
** while the workers waited, and every element is written before it is read
** (the queries by the finalize, scores and keys below the limit by the
** scorer and the selection, the rest of the scores by scores_finish).
*/
static void scratch_kept(const csa_dims *d, row_scratch *x) {
  static _Thread_local oracle_kept query_h, query_t, dot, scores, keys;
  const size_t queries = (size_t)(CSA4_INDEX_DIM * d->index_heads);
  x->query_h = oracle_kept_or_die(&query_h, queries, sizeof(float), __FILE__, __LINE__);
  x->query_t = oracle_kept_or_die(&query_t, queries, sizeof(float), __FILE__, __LINE__);
  x->dot = oracle_kept_or_die(&dot, (size_t)d->index_heads, sizeof(float), __FILE__, __LINE__);
  x->scores = oracle_kept_or_die(&scores, (size_t)d->index_present_capacity, sizeof(float), __FILE__, __LINE__);
  x->keys = oracle_kept_or_die(&keys, (size_t)d->index_present_capacity, sizeof(nx_u64), __FILE__, __LINE__);
}

static void scratch_free(row_scratch *x) {
  free(x->query_h);
  free(x->query_t);
  free(x->dot);
  free(x->scores);
  free(x->keys);
}

/*
** Heads a worker should finalize at least when a row's heads are split: a
** head is a RoPE tail (by the row's angles, taken once), a Hadamard and an
** FP4 round trip; with its own 32 powf and sincosf it was about 11 us on
** the H200's host.  4, so that 64 heads reach 16 workers (with 8, 8 workers
** took 0.14 ms of a 1.9 ms step; docs/SPEED.md).
*/
#define FINALIZE_HEADS_MIN 4

/* One row's query finalize, shared by the workers that split its heads. */
typedef struct finalize_job {
  const index_job *j;
  long long b, s;
  row_scratch *x;
  csa4_rope rope; /* the row position's angles, taken once for all its heads */
} finalize_job;

/* Heads [h0, h1) of the row: each head's finalized query into its own row of x->query_h. */
static void finalize_heads(void *ctx, long long h0, long long h1, int worker) {
  const finalize_job *f = ctx;
  const csa_dims *d = f->j->d;
  const long long ih = d->index_heads, row = f->b * d->seq + f->s;
  const float *src = (const float *)f->j->in[CSA_IN_INDEX_QUERY]->data + row * ih * CSA4_INDEX_DIM;
  unsigned char packed[CSA4_INDEX_RECORD_BYTES];
  long long h;
  int dd;
  (void)worker;
  for (h = h0; h < h1; h++) {
    float *q = f->x->query_h + h * CSA4_INDEX_DIM;
    for (dd = 0; dd < CSA4_INDEX_DIM; dd++) q[dd] = nx_bf16_round(src[h * CSA4_INDEX_DIM + dd]);
    csa4_index_rotate_by(q, &f->rope);
    nx_csa_fp4_record_write(q, packed); /* the FP4 round trip, block by block */
    for (dd = 0; dd < CSA4_INDEX_DIM; dd++) q[dd] = nx_csa_fp4_record_value(packed, dd);
  }
}

/*
** R4 (seed:578-620): the row's IH finalized queries, its heads split over
** the workers (inline when called from a worker), then stored dim-major
** (query_t[d * IH + h]) for the scorer and copied head-major to the trace.
*/
static void finalize_queries(const index_job *j, long long b, long long s, row_scratch *x) {
  const csa_dims *d = j->d;
  const long long ih = d->index_heads, row = b * d->seq + s;
  finalize_job f;
  long long h;
  int dd;
  f.j = j, f.b = b, f.s = s, f.x = x;
  csa4_rope_angles(d->start + s, &f.rope);
  oracle_parallel_for(ih, oracle_parallel_workers(ih, FINALIZE_HEADS_MIN), finalize_heads, &f);
  for (h = 0; h < ih; h++)
    for (dd = 0; dd < CSA4_INDEX_DIM; dd++) x->query_t[dd * ih + h] = x->query_h[h * CSA4_INDEX_DIM + dd];
  if (j->query_trace)
    memcpy(j->query_trace + row * ih * CSA4_INDEX_DIM, x->query_h, (size_t)(ih * CSA4_INDEX_DIM) * sizeof(float));
}

/* R5's causal limit of row s: min((start + s + 1) / 4, Rci). */
static long long causal_limit(const csa_dims *d, long long s) {
  const long long limit = (d->start + s + 1) / CSA4_RATIO;
  return limit < d->index_present_capacity ? limit : d->index_present_capacity;
}

/*
** HEAD_LANES heads' dot products with one key: dot[k] = sum_d q[d * ih + k]
** * key[d], d ascending from +0.  The sums are independent, so they advance
** together in f4 accumulators (f4.h) kept in registers: eight of them, since
** one chain's adds each wait for the one before, and eight keep the adder
** busy (two, 8 heads a call, left it idle three cycles in four).
*/
#define HEAD_LANES 32

static void dot_heads(const float *q, long long ih, const float *key, float *dot) {
  f4 acc[HEAD_LANES / 4];
  int dd, k;
  for (k = 0; k < HEAD_LANES / 4; k++) acc[k] = f4_splat(0.0f);
  for (dd = 0; dd < CSA4_INDEX_DIM; dd++) {
    const f4 kd = f4_splat(key[dd]);
#pragma GCC unroll 8 /* unrolled, the accumulators stay in registers */
    for (k = 0; k < HEAD_LANES / 4; k++) acc[k] = acc[k] + f4_load(q + dd * ih + 4 * k) * kd;
  }
  for (k = 0; k < HEAD_LANES / 4; k++) f4_store(dot + 4 * k, acc[k]);
}

/* The FP4 record rec's 128 values: each e2m1 code times its block's scale (nx_csa_fp4_record_value). */
static void key_decode(const unsigned char *rec, float *key) {
  int k;
  for (k = 0; k < CSA4_INDEX_DIM / NX_FP4_BLOCK; k++)
    nx_fp4_block32_dequantize(rec + NX_FP4_BLOCK_BYTES * k, key + NX_FP4_BLOCK * k);
}

/*
** R5 (seed:621-644) for records [r0, r1) of row (b, s): scores[r].  Each
** record's score depends on that record alone, so record ranges may go to
** different workers; dot is the worker's [IH] scratch.
*/
static void score_records(const index_job *j, long long b, long long s, const float *query_t, float *dot,
                          float *scores, long long r0, long long r1) {
  const csa_dims *d = j->d;
  const long long ih = d->index_heads;
  const float *weight = (const float *)j->in[CSA_IN_INDEX_WEIGHT]->data + (b * d->seq + s) * ih;
  const float ws = nx_csa_weight_scale(CSA4_INDEX_DIM, (int)ih);
  long long r, h;
  float key[CSA4_INDEX_DIM];
  int dd;
  for (r = r0; r < r1; r++) {
    const unsigned char *rec =
        (const unsigned char *)j->key_cache->data + (b * d->index_present_capacity + r) * CSA4_INDEX_RECORD_BYTES;
    float score = 0.0f;
    key_decode(rec, key);
    for (h = 0; h + HEAD_LANES <= ih; h += HEAD_LANES) dot_heads(query_t + h, ih, key, dot + h);
    for (; h < ih; h++) { /* the heads after the last whole group, one at a time */
      float acc = 0.0f;
      for (dd = 0; dd < CSA4_INDEX_DIM; dd++) acc = acc + query_t[dd * ih + h] * key[dd];
      dot[h] = acc;
    }
    for (h = 0; h + 4 <= ih; h += 4) /* the terms are independent (the sum is not): four at a time */
      f4_store(dot + h, (f4_relu(f4_load(dot + h)) * f4_load(weight + h)) * f4_splat(ws));
    for (; h < ih; h++) dot[h] = (nx_maxf(dot[h], 0.0f) * weight[h]) * ws;
    for (h = 0; h < ih; h++) score = score + dot[h];
    scores[r] = score;
  }
}

static void swap_keys(nx_u64 *a, long long i, long long j) {
  const nx_u64 t = a[i];
  a[i] = a[j], a[j] = t;
}

/*
** Sorts the n distinct keys a[0..n) descending: median-of-three quicksort,
** the smaller side first (a stack of log n), insertion sort below 16 keys.
** Distinct keys have one descending order, so any correct sort gives the
** same selection.  Why not qsort: its comparator call a comparison made the
** sort of 512 keys about 25 us, a serial part of every decode step
** (docs/SPEED.md, eighteenth session); inline, about 10.
*/
static void keys_sort_descending(nx_u64 *a, long long n) {
  while (n > 16) {
    const long long mid = n / 2;
    long long i = 0, j = n - 1;
    nx_u64 pivot;
    if (a[mid] > a[0]) swap_keys(a, mid, 0);
    if (a[n - 1] > a[0]) swap_keys(a, n - 1, 0);
    if (a[n - 1] > a[mid]) swap_keys(a, n - 1, mid);
    pivot = a[mid];
    while (i <= j) { /* larger keys to the left */
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) swap_keys(a, i++, j--);
    }
    /* now a[0..j] >= pivot >= a[i..n), and j < i */
    if (j + 1 < n - i) {
      keys_sort_descending(a, j + 1);
      a += i, n -= i;
    } else {
      keys_sort_descending(a + i, n - i);
      n = j + 1;
    }
  }
  {
    long long i, j;
    for (i = 1; i < n; i++) {
      const nx_u64 key = a[i];
      for (j = i; j > 0 && a[j - 1] < key; j--) a[j] = a[j - 1];
      a[j] = key;
    }
  }
}

/*
** Moves the k largest of the n distinct keys a[0..n) into a[0..k), in no
** particular order (quickselect, median-of-three pivots; O(n) expected).
** Which keys end there does not depend on the pivots: they are the k largest.
*/
static void keys_select_largest(nx_u64 *a, long long n, long long k) {
  long long lo = 0, hi = n - 1;
  while (lo < hi) {
    const long long mid = lo + (hi - lo) / 2;
    long long i = lo, j = hi;
    nx_u64 pivot;
    if (a[mid] > a[lo]) swap_keys(a, mid, lo); /* a[lo] >= a[mid] */
    if (a[hi] > a[lo]) swap_keys(a, hi, lo);   /* a[lo] is the largest of the three */
    if (a[hi] > a[mid]) swap_keys(a, hi, mid); /* a[mid] the median */
    pivot = a[mid];
    while (i <= j) { /* larger keys to the left */
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) swap_keys(a, i++, j--);
    }
    /* now a[lo..j] >= pivot >= a[i..hi], and j < i */
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return;
  }
}

/* After scoring: -inf from the limit up to Rci, and the trace copy. */
static void scores_finish(const index_job *j, long long b, long long s, long long limit, row_scratch *x) {
  const csa_dims *d = j->d;
  long long r;
  for (r = limit; r < d->index_present_capacity; r++) x->scores[r] = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
  if (j->scores_trace)
    memcpy(j->scores_trace + (b * d->seq + s) * d->index_present_capacity, x->scores,
           (size_t)d->index_present_capacity * sizeof(float));
}

/*
** Records [r0, r1) of a row: their keys into keys[r0..r1), then the
** min(topk, r1 - r0) largest of them sorted descending to the front of that
** range.  Returns how many.  Whatever range a record falls in, the row's
** topk largest keys are among the fronts of the ranges.
*/
static long long keys_take_largest(const float *scores, nx_u64 *keys, long long r0, long long r1, long long topk) {
  const long long n = r1 - r0 < topk ? r1 - r0 : topk;
  long long r;
  /* nx_csa_rank_before order is the keys' descending order */
  for (r = r0; r < r1; r++) keys[r] = nx_csa_rank_key(scores[r], r);
  if (n < r1 - r0) keys_select_largest(keys + r0, r1 - r0, n);
  keys_sort_descending(keys + r0, n);
  return n;
}

/* The record of a key (its low word is the complemented record). */
static int key_record(nx_u64 key) { return (int)(0xffffffffu - (nx_u32)key); }

/* R6 (seed:646-663), row mode: the first topk of the limit causal records, -1 padded. */
static void select_topk(const index_job *j, long long b, long long s, long long limit, row_scratch *x) {
  const csa_dims *d = j->d;
  int *selection = j->selection + (b * d->seq + s) * d->topk;
  const long long n = keys_take_largest(x->scores, x->keys, 0, limit, d->topk);
  long long k;
  for (k = 0; k < d->topk; k++) selection[k] = k < n ? key_record(x->keys[k]) : -1;
}

/* Row mode: whole query rows [i0, i1) on one worker's scratch. */
static void index_rows(void *ctx, long long i0, long long i1, int worker) {
  const index_job *j = ctx;
  row_scratch *x = &j->rows[worker];
  long long i;
  for (i = i0; i < i1; i++) {
    const long long b = i / j->d->seq, s = i % j->d->seq, limit = causal_limit(j->d, s);
    finalize_queries(j, b, s, x);
    score_records(j, b, s, x->query_t, x->dot, x->scores, 0, limit);
    scores_finish(j, b, s, limit, x);
    select_topk(j, b, s, limit, x);
  }
}

/* Record mode: records [r0, r1) of the current row, on the worker's own dot scratch. */
static void index_records(void *ctx, long long r0, long long r1, int worker) {
  const index_job *j = ctx;
  score_records(j, j->b, j->s, j->rows[0].query_t, j->dots + worker * j->dot_stride, j->rows[0].scores, r0, r1);
}

/* Record range p of the current row's selection: [p * limit / parts, (p + 1) * limit / parts). */
static long long part_start(const index_job *j, long long p) { return p * j->limit / j->parts; }

/* Record mode: ranges [p0, p1) of the row's selection, each its largest keys sorted to its front. */
static void select_parts(void *ctx, long long p0, long long p1, int worker) {
  const index_job *j = ctx;
  long long p;
  (void)worker;
  for (p = p0; p < p1; p++)
    j->part_taken[p] = keys_take_largest(j->rows[0].scores, j->rows[0].keys, part_start(j, p), part_start(j, p + 1),
                                         j->d->topk);
}

/*
** Records a range of the selection gets at least when a long row's
** selection is split: a range's keys, quickselect and sort are about 0.1 us
** a record, and the merge after them takes one compare a range for each of
** the topk places.
*/
#define SELECT_RECORDS_MIN 1024

/*
** R6 in record mode: with one range, as in row mode; else the ranges'
** fronts in parallel, then merged: each place takes the largest key left at
** the head of any range.  Keys are distinct (the record is in the low word)
** and never 0 (that word is at least 1), so 0 marks a range used up.
*/
static void select_records(index_job *j, long long limit) {
  const csa_dims *d = j->d;
  int *selection = j->selection + (j->b * d->seq + j->s) * d->topk;
  const nx_u64 *keys = j->rows[0].keys;
  long long head[ORACLE_THREADS_MAX], end[ORACLE_THREADS_MAX], p, k; /* each range's next and past-last front */
  j->limit = limit;
  j->parts = oracle_parallel_workers(limit, SELECT_RECORDS_MIN);
  if (j->parts < 2) {
    select_topk(j, j->b, j->s, limit, &j->rows[0]);
    return;
  }
  oracle_parallel_for(j->parts, (int)j->parts, select_parts, j);
  for (p = 0; p < j->parts; p++) head[p] = part_start(j, p), end[p] = head[p] + j->part_taken[p];
  for (k = 0; k < d->topk; k++) {
    nx_u64 best = 0;
    long long from = -1;
    for (p = 0; p < j->parts; p++) {
      const nx_u64 key = head[p] < end[p] ? keys[head[p]] : 0;
      if (key > best) best = key, from = p;
    }
    if (from < 0) break; /* fewer causal records than topk */
    selection[k] = key_record(best);
    head[from]++;
  }
  for (; k < d->topk; k++) selection[k] = -1;
}

void csa4_index_select(const csa_dims *d, const tensor *const *in, tensor *const *out, int *selection,
                       float *query_trace, float *scores_trace) {
  const long long rows = d->batch * d->seq;
  const long long grain = RECORD_WORK_MIN / (d->index_heads * CSA4_INDEX_DIM);
  const int row_workers = oracle_parallel_workers(rows, 1);
  const int record_workers = oracle_parallel_workers(d->index_present_capacity, grain);
  index_job j;
  int w;
  j.d = d, j.in = in, j.key_cache = out[CSA_OUT_PRESENT_INDEX_KEY], j.selection = selection;
  j.query_trace = query_trace, j.scores_trace = scores_trace, j.dots = NULL, j.part_taken = NULL;
  if (row_workers >= record_workers) { /* many rows (or few records): whole rows per worker */
    j.rows = oracle_alloc_or_die((size_t)row_workers, sizeof *j.rows, __FILE__, __LINE__);
    for (w = 0; w < row_workers; w++) scratch_alloc(d, &j.rows[w]);
    oracle_parallel_for(rows, row_workers, index_rows, &j);
    for (w = 0; w < row_workers; w++) scratch_free(&j.rows[w]);
    free(j.rows);
    return;
  }
  /* few rows over many records (long-context decode): rows in turn, each row's records spread */
  j.rows = oracle_alloc_or_die(1, sizeof *j.rows, __FILE__, __LINE__);
  scratch_kept(d, &j.rows[0]);
  j.dot_stride = oracle_worker_stride(d->index_heads, sizeof *j.dots);
  j.dots = oracle_alloc_or_die((size_t)(record_workers * j.dot_stride), sizeof *j.dots, __FILE__, __LINE__);
  /* a row's selection ranges: as many as for Rci records at most, since its limit is at most Rci */
  j.part_taken = oracle_alloc_or_die((size_t)oracle_parallel_workers(d->index_present_capacity, SELECT_RECORDS_MIN),
                                     sizeof *j.part_taken, __FILE__, __LINE__);
  for (j.b = 0; j.b < d->batch; j.b++)
    for (j.s = 0; j.s < d->seq; j.s++) {
      const long long limit = causal_limit(d, j.s);
      finalize_queries(&j, j.b, j.s, &j.rows[0]);
      oracle_parallel_for(limit, oracle_parallel_workers(limit, grain), index_records, &j);
      scores_finish(&j, j.b, j.s, limit, &j.rows[0]);
      select_records(&j, limit);
    }
  free(j.rows);
  free(j.dots);
  free(j.part_taken);
}
