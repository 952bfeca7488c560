/*
** csa_sink_attention.h: what one output row (b, s, h) of the CSA sink
** attention reads, shared by both compression ratios and both variants
** (the fast passes of csa_attention_tiles.h, the reference's
** csa_sink_attention_reference.h; the oracle's attend_row in oracle/csa128.c
** and its ratio-4 twin).  CUDA C++, included after numerics.h, nx_csa.h and
** csa_kernel_common.h.
**
** Candidates, c ascending:
**   dense   c < n_dense (128, or min(kv_used, 128) when start == 0): current_kv
**           row absolute - kv_base, absolute = dense_start + c, where
**           dense_start = max(kv_base, max(position - 127, 0)); live when
**           absolute <= position and absolute - kv_base < kv_used;
**   record  c = n_dense + slot, slot < count - n_dense: record `slot` (ratio
**           128: the finished records, all live), or record selection[slot]
**           (ratio 4: live iff 0 <= record < valid_records).
** score_c = (sum over d ascending of q[d] * k_c[d]) * scale, then + bias at
** column c (broadcast); -inf when not live.  Every column of the scores row
** up to its stride is written (-inf past count): ratio 4 keeps the row as its
** CandidateAssembly payload.
** m = max of the scores (order-free); m == -inf gives a zero row.  Otherwise
** w_c = nx_expf(score_c - m) for every score that is not -inf; den = sum of
** the w_c over c ascending, then + nx_expf(sink - m); p_c = w_c / den; y[d] =
** sum over live c ascending of p_c * v_c[d].  -inf marks a dead candidate in
** weights too (neither an exp nor a probability is -inf).
*/
#ifndef CSA_SINK_ATTENTION_H
#define CSA_SINK_ATTENTION_H

#define CSA_ATTN_DIM 512     /* head_dim */
#define CSA_ATTN_WINDOW 128  /* dense sliding-window candidates */

/* One row's inputs, outputs and candidate geometry (the launcher's kernel fills it). */
typedef struct csa_attention_row {
  long long b, s, h, position;
  long long n_dense, dense_start;
  long long count;          /* live-or-not candidates: n_dense + records or + topk */
  long long stride;         /* the scores row's width (>= count) */
  const int *selection;     /* ratio 4: the row's selected records; NULL: record = slot */
  long long valid_records;  /* ratio 4: total / 4 */
  const float *query;       /* the row's 512 query floats */
  float *y;                 /* the row's 512 outputs */
  const float *kv_row0;     /* current_kv [L, 512] of batch b */
  const nx_u8 *rec_row0;    /* the present records of batch b */
  long long record_bytes;   /* 583 (FP8) or 2048 (the f32 view) */
  int cache_fp8;
  float sink, scale;
  const float *bias;        /* NULL: no bias */
  const long long *bias_dims;
  float *scores, *weights;  /* the row's stride floats each; weights may be scores */
  float *gathered;          /* fast passes: the (b, s) row's decoded candidates [stride, 512] */
} csa_attention_row;

/* The dense window of the row at position, as csa128.cu and csa4.cu both lay it out. */
static __device__ __forceinline__ void csa_attention_dense(csa_attention_row *r,
                                                           const csa_cursor *cur) {
  r->n_dense = cur->start == 0 ? csa_min_ll(cur->kv_used, CSA_ATTN_WINDOW) : CSA_ATTN_WINDOW;
  r->dense_start = csa_max_ll(cur->kv_base, csa_max_ll(r->position + 1 - CSA_ATTN_WINDOW, 0));
}

/* Element d of a stored record: the f32 view, or the FP8 record's value. */
static __device__ __forceinline__ float csa_record_value(const nx_u8 *rec, int cache_fp8, int d) {
  return cache_fp8 ? nx_csa_fp8_record_value(rec, d) : ((const float *)rec)[d];
}

/*
** The record index candidate c reads (its selection entry, or the slot
** itself at ratio 128), or -1 for a dense candidate or one beyond count:
** csa_candidate's only load, apart so that a kernel can issue it early.
*/
static __device__ __forceinline__ long long csa_candidate_record(const csa_attention_row *r, long long c) {
  if (c < r->n_dense || c >= r->count) return -1;
  return r->selection ? (long long)r->selection[c - r->n_dense] : c - r->n_dense;
}

/*
** Candidate c's key/value row: *kv (dense) or *rec (record), or 0 when c is
** not live (or beyond count); record is csa_candidate_record(r, c).
*/
static __device__ __forceinline__ int csa_candidate_at(const csa_attention_row *r, const csa_cursor *cur,
                                                       long long c, long long record, const float **kv,
                                                       const nx_u8 **rec) {
  *kv = NULL;
  *rec = NULL;
  if (c < r->n_dense) {
    const long long absolute = r->dense_start + c, relative = absolute - cur->kv_base;
    if (absolute > r->position || relative >= cur->kv_used) return 0;
    *kv = r->kv_row0 + relative * CSA_ATTN_DIM;
    return 1;
  }
  if (c >= r->count) return 0;
  if (r->selection && (record < 0 || record >= r->valid_records)) return 0;
  *rec = r->rec_row0 + record * r->record_bytes;
  return 1;
}

static __device__ __forceinline__ int csa_candidate(const csa_attention_row *r, const csa_cursor *cur,
                                                    long long c, const float **kv, const nx_u8 **rec) {
  return csa_candidate_at(r, cur, c, csa_candidate_record(r, c), kv, rec);
}

#endif /* CSA_SINK_ATTENTION_H */
