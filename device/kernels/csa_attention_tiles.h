/*
** csa_attention_tiles.h: the fast CSA sink attention of both compression
** ratios (csa4.cu, csa128.cu) as three passes over every (b, s) row group,
** whose heads share one candidate list.  CUDA C++, included after
** numerics.h, nx_csa.h, csa_kernel_common.h and csa_sink_attention.h, whose
** row description (csa_attention_row), candidate geometry (csa_candidate)
** and record decoding it uses; a ratio hands in a RowAt functor that fills
** the csa_attention_row of output row (b, s, h) = bs * heads + h.
**
**   csa_attn_scores   a tile of CSA_TILE_HEADS heads x CSA_TILE_CANDS
**                     candidates a block: score = (sum over d ascending of
**                     q[d] * k_c[d]) * scale, + bias; -inf where c is not
**                     live, up to the row's stride (the CandidateAssembly
**                     payload).  Each score is one thread's, d ascending;
**                     the tile only shares the staging of q and k_c.
**   csa_attn_softmax  a warp per output row: m = max (nx_maxf, reduced
**                     across the warp: order-free), w_c = nx_expf(score - m)
**                     in parallel, den = the w_c summed over c ascending in
**                     lane 0, + nx_expf(sink - m), p_c = w_c / den in
**                     parallel.  m == -inf makes every weight -inf, which
**                     the last pass reads as "no candidate": y = +0, as the
**                     oracle's zero row.  -inf marks a dead candidate (no exp
**                     or probability is -inf).
**   csa_attn_values   a tile of CSA_TILE_HEADS heads x CSA_TILE_DIMS dims a
**                     block: y[d] = sum over c ascending of p_c * v_c[d]
**                     skipping p_c == -inf, each y[d] one thread's.
**
** These are the oracle's formulas (oracle/SPEC.md C3 and R7) and the
** reference kernels' (csa_sink_attention_reference.h), term for term.
*/
#ifndef CSA_ATTENTION_TILES_H
#define CSA_ATTENTION_TILES_H

#include "csa_attention_abi.h"

/* Where a tile's candidates lie: shared memory, filled by lanes 0..CSA_TILE_CANDS-1. */
typedef struct csa_tile_cands {
  const float *kv[CSA_TILE_CANDS];
  const nx_u8 *rec[CSA_TILE_CANDS];
  int live[CSA_TILE_CANDS];
} csa_tile_cands;

static __device__ __forceinline__ void csa_tile_resolve(csa_tile_cands *t, const csa_attention_row *r,
                                                        const csa_cursor *cur, long long c0) {
  const int i = threadIdx.x;
  if (i < CSA_TILE_CANDS) {
    const float *kv = NULL;
    const nx_u8 *rec = NULL;
    t->live[i] = c0 + i < r->stride && csa_candidate(r, cur, c0 + i, &kv, &rec);
    t->kv[i] = kv;
    t->rec[i] = rec;
  }
}

/* Element d of tile candidate i (0 when it is not live: never read as a value). */
static __device__ __forceinline__ float csa_tile_value(const csa_tile_cands *t, const csa_attention_row *r,
                                                       int i, int d) {
  if (!t->live[i]) return 0.0f;
  return t->kv[i] ? t->kv[i][d] : csa_record_value(t->rec[i], r->cache_fp8, d);
}

/*
** Pass 1.  Units (bs, head tile, candidate tile), block-stride; thread t
** scores candidate c0 + t % 32 for heads h0 + t / 32 and h0 + t / 32 + 8.
*/
template <class RowAt>
static __device__ void csa_attn_scores(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads, long long stride) {
  __shared__ float qs[CSA_TILE_HEADS][CSA_TILE_K + 1];
  __shared__ float ks[CSA_TILE_CANDS][CSA_TILE_K + 1];
  __shared__ csa_tile_cands cands;
  const int tid = threadIdx.x, cl = tid % CSA_TILE_CANDS, hp = tid / CSA_TILE_CANDS;
  const long long htiles = (heads + CSA_TILE_HEADS - 1) / CSA_TILE_HEADS;
  const long long ctiles = (stride + CSA_TILE_CANDS - 1) / CSA_TILE_CANDS;
  long long unit;
  for (unit = blockIdx.x; unit < bs_rows * htiles * ctiles; unit += gridDim.x) {
    const long long bs = unit / (htiles * ctiles), h0 = (unit / ctiles) % htiles * CSA_TILE_HEADS;
    const long long c0 = unit % ctiles * CSA_TILE_CANDS, c = c0 + cl;
    csa_attention_row r;
    float acc[2] = {0.0f, 0.0f};
    int d0, i, j;
    row_at(bs * heads + h0, &r);
    __syncthreads(); /* the previous unit is done with cands, qs and ks */
    csa_tile_resolve(&cands, &r, cur, c0);
    for (d0 = 0; d0 < CSA_ATTN_DIM; d0 += CSA_TILE_K) {
      __syncthreads(); /* cands is resolved; the previous chunk is read */
      for (i = tid; i < CSA_TILE_HEADS * CSA_TILE_K; i += CSA_TILE_THREADS) {
        const long long h = h0 + i / CSA_TILE_K;
        qs[i / CSA_TILE_K][i % CSA_TILE_K] = h < heads ? r.query[(h - h0) * CSA_ATTN_DIM + d0 + i % CSA_TILE_K] : 0.0f;
      }
      for (i = tid; i < CSA_TILE_CANDS * CSA_TILE_K; i += CSA_TILE_THREADS)
        ks[i / CSA_TILE_K][i % CSA_TILE_K] = csa_tile_value(&cands, &r, i / CSA_TILE_K, d0 + i % CSA_TILE_K);
      __syncthreads();
#pragma unroll 8
      for (i = 0; i < CSA_TILE_K; i++) {
        const float k = ks[cl][i];
        acc[0] = acc[0] + qs[hp][i] * k;
        acc[1] = acc[1] + qs[hp + CSA_TILE_HEADS / 2][i] * k;
      }
    }
    for (j = 0; j < 2; j++) {
      const long long h = h0 + hp + j * (CSA_TILE_HEADS / 2);
      csa_attention_row rh;
      float score = csa_neg_inf();
      if (h >= heads || c >= stride) continue;
      row_at(bs * heads + h, &rh);
      if (cands.live[cl]) {
        score = acc[j] * rh.scale;
        if (rh.bias) score = score + csa_bias_at(rh.bias, rh.bias_dims, rh.b, rh.h, rh.s, c);
      }
      rh.scores[c] = score;
    }
  }
}

/* Pass 2.  A warp per output row, CSA_TILE_ROWS rows a block, block-stride. */
template <class RowAt>
static __device__ void csa_attn_softmax(const RowAt &row_at, long long rows) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  long long unit;
  for (unit = blockIdx.x; unit * CSA_TILE_ROWS < rows; unit += gridDim.x) {
    const long long row = unit * CSA_TILE_ROWS + warp;
    csa_attention_row r;
    float m = csa_neg_inf(), den = 0.0f;
    long long c;
    int off;
    if (row >= rows) continue; /* warp-uniform; this pass has no block barrier */
    row_at(row, &r);
    for (c = lane; c < r.stride; c += 32) m = nx_maxf(m, r.scores[c]);
    for (off = 16; off > 0; off /= 2) m = nx_maxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if (nx_csa_is_neg_inf(m)) { /* no live candidate: every weight "dead", y = +0 */
      for (c = lane; c < r.stride; c += 32) r.weights[c] = csa_neg_inf();
      continue;
    }
    for (c = lane; c < r.stride; c += 32) {
      const float score = r.scores[c];
      r.weights[c] = nx_csa_is_neg_inf(score) ? score : nx_expf(score - m);
    }
    __syncwarp();
    if (lane == 0) {
      float sum = 0.0f;
      for (c = 0; c < r.count; c++) {
        const float w = r.weights[c];
        if (!nx_csa_is_neg_inf(w)) sum = sum + w;
      }
      den = sum + nx_expf(r.sink - m);
    }
    den = __shfl_sync(0xffffffffu, den, 0);
    for (c = lane; c < r.count; c += 32) {
      const float w = r.weights[c];
      if (!nx_csa_is_neg_inf(w)) r.weights[c] = w / den;
    }
  }
}

/*
** Pass 3.  Units (bs, head tile, dim tile), block-stride; thread t owns dim
** d0 + t % 32 of heads h0 + t / 32 and h0 + t / 32 + 8; candidates come
** CSA_TILE_CANDS at a time, in order.
*/
template <class RowAt>
static __device__ void csa_attn_values(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads) {
  __shared__ float ps[CSA_TILE_HEADS][CSA_TILE_CANDS + 1];
  __shared__ float vs[CSA_TILE_CANDS][CSA_TILE_DIMS + 1];
  __shared__ csa_tile_cands cands;
  const int tid = threadIdx.x, dl = tid % CSA_TILE_DIMS, hp = tid / CSA_TILE_DIMS;
  const long long htiles = (heads + CSA_TILE_HEADS - 1) / CSA_TILE_HEADS;
  const long long dtiles = CSA_ATTN_DIM / CSA_TILE_DIMS;
  long long unit;
  for (unit = blockIdx.x; unit < bs_rows * htiles * dtiles; unit += gridDim.x) {
    const long long bs = unit / (htiles * dtiles), h0 = (unit / dtiles) % htiles * CSA_TILE_HEADS;
    const int d0 = (int)(unit % dtiles) * CSA_TILE_DIMS;
    csa_attention_row r;
    float acc[2] = {0.0f, 0.0f};
    long long c0;
    int i, j;
    row_at(bs * heads + h0, &r);
    for (c0 = 0; c0 < r.count; c0 += CSA_TILE_CANDS) {
      const int n = (int)csa_min_ll(CSA_TILE_CANDS, r.count - c0);
      __syncthreads(); /* the previous chunk (or unit) is read */
      csa_tile_resolve(&cands, &r, cur, c0);
      __syncthreads();
      for (i = tid; i < CSA_TILE_HEADS * CSA_TILE_CANDS; i += CSA_TILE_THREADS) {
        const long long h = h0 + i / CSA_TILE_CANDS, c = c0 + i % CSA_TILE_CANDS;
        ps[i / CSA_TILE_CANDS][i % CSA_TILE_CANDS] =
            h < heads && c < r.count ? r.weights[(h - h0) * r.stride + c] : csa_neg_inf();
      }
      for (i = tid; i < CSA_TILE_CANDS * CSA_TILE_DIMS; i += CSA_TILE_THREADS)
        vs[i / CSA_TILE_DIMS][i % CSA_TILE_DIMS] =
            i / CSA_TILE_DIMS < n ? csa_tile_value(&cands, &r, i / CSA_TILE_DIMS, d0 + i % CSA_TILE_DIMS) : 0.0f;
      __syncthreads();
      for (i = 0; i < n; i++) {
        const float v = vs[i][dl];
        const float p0 = ps[hp][i], p1 = ps[hp + CSA_TILE_HEADS / 2][i];
        if (!nx_csa_is_neg_inf(p0)) acc[0] = acc[0] + p0 * v;
        if (!nx_csa_is_neg_inf(p1)) acc[1] = acc[1] + p1 * v;
      }
    }
    for (j = 0; j < 2; j++) {
      const long long h = h0 + hp + j * (CSA_TILE_HEADS / 2);
      if (h < heads) r.y[(h - h0) * CSA_ATTN_DIM + d0 + dl] = acc[j];
    }
  }
}

#endif /* CSA_ATTENTION_TILES_H */
