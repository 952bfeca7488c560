/*
** csa_sink_attention_reference.h: one output row (b, s, h) of the CSA sink
** attention in the seed's serial design (the reference variant of both
** ratios: csa128_reference.cu, csa4_reference.cu).  CUDA C++, included
** after numerics.h, nx_csa.h, csa_kernel_common.h and csa_sink_attention.h,
** whose row description (csa_attention_row), candidate geometry
** (csa_candidate) and record decoding it reuses, so that only the thread
** mapping differs from the fast kernels.
**
** Thread mapping (seed: csa_ratio128_sink_attention and
** csa_ratio4_sink_attention): thread 0 alone computes every candidate's
** score, in candidate order, the row's maximum and the softmax denominator;
** then every thread of the block computes whole output dims, recomputing
** each probability as it goes.  Arithmetic, identical to the fast kernels
** and to the oracle (oracle/SPEC.md C3 and R7):
**   score_c = (sum over d ascending of q[d] * k_c[d]) * scale, + bias(c);
**             -inf when c is not live, and on every column from count to
**             the scores row's stride (the CandidateAssembly payload);
**   m       = nx_maxf over the scores, from -inf;
**   den     = (sum over c ascending, skipping -inf, of nx_expf(score_c - m))
**             + nx_expf(sink - m);
**   y[d]    = sum over c ascending, skipping -inf, of
**             (nx_expf(score_c - m) / den) * v_c[d];  m == -inf: y = +0.
** nx_expf is a pure function, so recomputing p_c per dim (as the seed does)
** gives the bits the fast kernels store once.
*/
#ifndef CSA_SINK_ATTENTION_REFERENCE_H
#define CSA_SINK_ATTENTION_REFERENCE_H

/* Candidate c's score, or -inf when it is not live (or c >= count); in the calling thread. */
static __device__ float csa_ref_score(const csa_attention_row *r, const csa_cursor *cur,
                                      long long c) {
  const float *kv;
  const nx_u8 *rec;
  float acc = 0.0f, score;
  int d;
  if (!csa_candidate(r, cur, c, &kv, &rec)) return csa_neg_inf();
  if (kv)
    for (d = 0; d < CSA_ATTN_DIM; d++) acc = acc + r->query[d] * kv[d];
  else
    for (d = 0; d < CSA_ATTN_DIM; d++)
      acc = acc + r->query[d] * csa_record_value(rec, r->cache_fp8, d);
  score = acc * r->scale;
  if (r->bias) score = score + csa_bias_at(r->bias, r->bias_dims, r->b, r->h, r->s, c);
  return score;
}

/*
** The whole row, by every thread of the block; *row_max and *row_den live
** in shared memory.  Ends with a barrier, so the caller may start the next
** row at once.
*/
static __device__ void csa_ref_attend_row(const csa_attention_row *r, const csa_cursor *cur,
                                          float *row_max, float *row_den) {
  float m, den;
  long long c;
  int d;
  if (threadIdx.x == 0) { /* the seed's serial part: scores, max, denominator */
    m = csa_neg_inf();
    den = 0.0f;
    for (c = 0; c < r->stride; c++) {
      const float score = csa_ref_score(r, cur, c);
      r->scores[c] = score;
      m = nx_maxf(m, score);
    }
    if (!nx_csa_is_neg_inf(m)) {
      for (c = 0; c < r->count; c++)
        if (!nx_csa_is_neg_inf(r->scores[c])) den = den + nx_expf(r->scores[c] - m);
      den = den + nx_expf(r->sink - m);
    }
    *row_max = m;
    *row_den = den;
  }
  __syncthreads(); /* the scores (global) and both scalars are visible to the block */
  m = *row_max;
  den = *row_den;
  for (d = threadIdx.x; d < CSA_ATTN_DIM; d += blockDim.x) {
    float acc = 0.0f; /* stays +0 for a row with no live candidate */
    for (c = 0; !nx_csa_is_neg_inf(m) && c < r->count; c++) {
      const float score = r->scores[c];
      const float *kv;
      const nx_u8 *rec;
      if (nx_csa_is_neg_inf(score)) continue;
      csa_candidate(r, cur, c, &kv, &rec); /* live: its score is not -inf */
      acc = acc + (nx_expf(score - m) / den) * (kv ? kv[d] : csa_record_value(rec, r->cache_fp8, d));
    }
    r->y[d] = acc;
  }
  __syncthreads(); /* the scalars are reused by the next row */
}

#endif /* CSA_SINK_ATTENTION_REFERENCE_H */
