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
*/
#include "oracle/csa4_stages.h"
#include "oracle/csa_attention.h"

#include "oracle/numerics/numerics.h"
#include "oracle/numerics/nx_csa.h"

#include <stdlib.h>
#include <string.h>

/* One candidate of the selection. */
typedef struct ranked {
  float score;
  long long record;
} ranked;

void csa4_index_scratch_alloc(const csa_dims *d, csa4_index_scratch *x) {
  x->query_t = csa_alloc_or_die((size_t)(CSA4_INDEX_DIM * d->index_heads), sizeof(float), __LINE__);
  x->dot = csa_alloc_or_die((size_t)d->index_heads, sizeof(float), __LINE__);
  x->scores = csa_alloc_or_die((size_t)d->index_present_capacity, sizeof(float), __LINE__);
  x->order = csa_alloc_or_die((size_t)d->index_present_capacity, sizeof(ranked), __LINE__);
}

void csa4_index_scratch_free(csa4_index_scratch *x) {
  free(x->query_t);
  free(x->dot);
  free(x->scores);
  free(x->order);
}

/*
** R4 (seed:578-620): the row's IH finalized queries, stored dim-major
** (query_t[d * IH + h]) for the scorer, and copied head-major to the trace.
*/
static void finalize_queries(const csa_dims *d, const tensor *const *in, long long b, long long s,
                             csa4_index_scratch *x, float *query_trace) {
  const long long ih = d->index_heads;
  const float *src = (const float *)in[CSA_IN_INDEX_QUERY]->data + (b * d->seq + s) * ih * CSA4_INDEX_DIM;
  float q[CSA4_INDEX_DIM];
  unsigned char packed[CSA4_INDEX_RECORD_BYTES];
  long long h;
  int dd;
  for (h = 0; h < ih; h++) {
    for (dd = 0; dd < CSA4_INDEX_DIM; dd++) q[dd] = nx_bf16_round(src[h * CSA4_INDEX_DIM + dd]);
    csa4_index_rotate(q, d->start + s);
    nx_csa_fp4_record_write(q, packed); /* the FP4 round trip, block by block */
    for (dd = 0; dd < CSA4_INDEX_DIM; dd++) q[dd] = nx_csa_fp4_record_value(packed, dd);
    for (dd = 0; dd < CSA4_INDEX_DIM; dd++) x->query_t[dd * ih + h] = q[dd];
    if (query_trace) memcpy(query_trace + h * CSA4_INDEX_DIM, q, sizeof q);
  }
}

/*
** R5 (seed:621-644): x->scores[r] for r < limit, -inf from there to Rci.
** Returns limit.
*/
static long long score_records(const csa_dims *d, const tensor *const *in, const tensor *key_cache, long long b,
                               long long s, csa4_index_scratch *x) {
  const long long ih = d->index_heads, position = d->start + s;
  const float *weight = (const float *)in[CSA_IN_INDEX_WEIGHT]->data + (b * d->seq + s) * ih;
  const float ws = nx_csa_weight_scale(CSA4_INDEX_DIM, (int)ih);
  long long limit = (position + 1) / CSA4_RATIO, r, h;
  float key[CSA4_INDEX_DIM];
  int dd;
  if (limit > d->index_present_capacity) limit = d->index_present_capacity;
  for (r = 0; r < limit; r++) {
    const unsigned char *rec =
        (const unsigned char *)key_cache->data + (b * d->index_present_capacity + r) * CSA4_INDEX_RECORD_BYTES;
    float score = 0.0f;
    for (dd = 0; dd < CSA4_INDEX_DIM; dd++) key[dd] = nx_csa_fp4_record_value(rec, dd);
    for (h = 0; h < ih; h++) x->dot[h] = 0.0f;
    for (dd = 0; dd < CSA4_INDEX_DIM; dd++) {
      const float *qd = x->query_t + dd * ih, kd = key[dd];
      for (h = 0; h < ih; h++) x->dot[h] = x->dot[h] + qd[h] * kd;
    }
    for (h = 0; h < ih; h++) score = score + (nx_maxf(x->dot[h], 0.0f) * weight[h]) * ws;
    x->scores[r] = score;
  }
  for (r = limit; r < d->index_present_capacity; r++) x->scores[r] = nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
  return limit;
}

/* qsort order: nx_csa_rank_before first.  Records are distinct, so this is a total order. */
static int rank_compare(const void *pa, const void *pb) {
  const ranked *a = pa, *b = pb;
  if (nx_csa_rank_before(a->score, a->record, b->score, b->record)) return -1;
  return nx_csa_rank_before(b->score, b->record, a->score, a->record) ? 1 : 0;
}

/* R6 (seed:646-663): the first topk of the limit causal records, -1 padded. */
static void select_topk(const csa_dims *d, const csa4_index_scratch *x, long long limit, int *selection) {
  ranked *order = x->order;
  long long r, k;
  for (r = 0; r < limit; r++) order[r].score = x->scores[r], order[r].record = r;
  qsort(order, (size_t)limit, sizeof *order, rank_compare);
  for (k = 0; k < d->topk; k++) selection[k] = k < limit ? (int)order[k].record : -1;
}

void csa4_index_select_row(const csa_dims *d, const tensor *const *in, tensor *const *out, long long b, long long s,
                           csa4_index_scratch *x, float *query_trace, int *selection) {
  long long limit;
  finalize_queries(d, in, b, s, x, query_trace);
  limit = score_records(d, in, out[CSA_OUT_PRESENT_INDEX_KEY], b, s, x);
  select_topk(d, x, limit, selection);
}
