/*
** csa_attention_rows.h: where one attention row's tensors lie, shared by the
** fast and the reference attention kernels of both ratios (csa4.cu,
** csa4_reference.cu, csa128.cu, csa128_reference.cu), which differ only in
** how they compute the row (csa_attention_tiles.h or csa_ref_attend_row).
**
** Rows are the block-stride index over Y [B, S, heads, 512]; Y and the query
** share that layout.  The scratch rows have stride 128 + candidates; weights
** may be scores itself (exps and probabilities overwrite the scores).
*/
#ifndef CSA_ATTENTION_ROWS_H
#define CSA_ATTENTION_ROWS_H

#include "csa128_abi.h"
#include "csa4_abi.h"
#include "csa_sink_attention.h"

/* Ratio 4: the dense window, then the row's topk selected records of the packed FP8 cache. */
static __device__ __forceinline__ void csa4_attention_row_at(
    csa_attention_row *r, const csa4_shape *p, const csa_cursor *cur, long long row, const float *query,
    const float *current_kv, const nx_u8 *cache, const int *selection, const float *sink, const float *bias,
    float *y, float *scores, float *weights) {
  const long long bs = csa_div_ll(row, p->heads), stride = CSA4_WINDOW_K + p->topk;
  r->h = row - bs * p->heads;
  r->b = csa_div_ll(bs, p->seq);
  r->s = bs - r->b * p->seq;
  r->position = cur->start + r->s;
  csa_attention_dense(r, cur);
  r->count = r->n_dense + p->topk;
  r->stride = stride;
  r->selection = selection + bs * p->topk;
  r->valid_records = cur->present_records;
  r->query = query + row * CSA4_DIM_K;
  r->y = y + row * CSA4_DIM_K;
  r->kv_row0 = current_kv + r->b * p->kv_len * CSA4_DIM_K;
  r->rec_row0 = cache + r->b * p->present_capacity * CSA4_FP8_RECORD_K;
  r->record_bytes = CSA4_FP8_RECORD_K;
  r->cache_fp8 = 1;
  r->sink = sink[r->h];
  r->scale = p->scale;
  r->bias = p->has_bias ? bias : NULL;
  r->bias_dims = p->bias_dims;
  r->scores = scores + row * stride;
  r->weights = weights + row * stride;
}

/* Ratio 128's scalar arguments (its kernels take them one by one). */
typedef struct csa128_attention_shape {
  long long seq, heads, kv_len, present_capacity, record_bytes;
  int cache_fp8;
  float scale;
  const long long *bias_dims; /* bias is NULL without one */
} csa128_attention_shape;

/* Ratio 128: the dense window, then every finished record r < min(Rc, (position + 1) / 128). */
static __device__ __forceinline__ void csa128_attention_row_at(
    csa_attention_row *r, const csa128_attention_shape *p, const csa_cursor *cur, long long row,
    const float *query, const float *current_kv, const nx_u8 *cache, const float *sink, const float *bias,
    float *y, float *scores) {
  const long long bs = csa_div_ll(row, p->heads), stride = CSA128_WINDOW_K + p->present_capacity;
  r->h = row - bs * p->heads;
  r->b = csa_div_ll(bs, p->seq);
  r->s = bs - r->b * p->seq;
  r->position = cur->start + r->s;
  csa_attention_dense(r, cur);
  r->count = r->n_dense + csa_min_ll(p->present_capacity, (r->position + 1) / CSA128_RATIO_K);
  r->stride = stride;
  r->selection = NULL;
  r->valid_records = cur->present_records;
  r->query = query + row * CSA128_DIM_K;
  r->y = y + row * CSA128_DIM_K;
  r->kv_row0 = current_kv + r->b * p->kv_len * CSA128_DIM_K;
  r->rec_row0 = cache + r->b * p->present_capacity * p->record_bytes;
  r->record_bytes = p->record_bytes;
  r->cache_fp8 = p->cache_fp8;
  r->sink = sink[r->h];
  r->scale = p->scale;
  r->bias = bias;
  r->bias_dims = p->bias_dims;
  r->scores = r->weights = scores + row * stride;
}

#endif
