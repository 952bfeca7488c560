/*
** csa_attention_tiles.h: the fast CSA sink attention of both compression
** ratios (csa4.cu, csa128.cu) as three passes over every (b, s) row group,
** whose heads share one candidate list.  CUDA C++, included after
** numerics.h, nx_csa.h, csa_kernel_common.h and csa_sink_attention.h, whose
** row description (csa_attention_row), candidate geometry (csa_candidate)
** and record decoding it uses; a ratio hands in a RowAt functor that fills
** the csa_attention_row of output row (b, s, h) = bs * heads + h.
**
**   csa_attn_scores   a tile of CSA_TILE_HEADS heads (a warp each) x
**                     CSA_TILE_CANDS candidates (a lane each) a block:
**                     score = (sum over d ascending of q[d] * k_c[d]) *
**                     scale, + bias; -inf where c is not live, up to the
**                     row's stride (the CandidateAssembly payload).  Each
**                     score is one thread's chain, d ascending; q and the
**                     decoded keys are staged CSA_TILE_K dims at a time.
**   csa_attn_softmax  a block per output row: m = max (nx_maxf, reduced
**                     across the block: order-free), w_c = nx_expf(score -
**                     m) a thread each, den = the w_c summed over c
**                     ascending by thread 0 from shared memory, a block's
**                     worth at a time, + nx_expf(sink - m), p_c = w_c / den
**                     in parallel (nx_expf is a double-double routine: a
**                     warp per row left 640 of them to 32 lanes).  m == -inf makes every weight -inf, which the last pass
**                     reads as "no candidate": y = +0, as the oracle's zero
**                     row.  -inf marks a dead candidate (no exp or
**                     probability is -inf).
**   csa_attn_values   a tile of CSA_TILE_HEADS heads (a warp each) x
**                     CSA_TILE_DIMS dims (a lane each) a block: y[d] = sum
**                     over c ascending of p_c * v_c[d] skipping p_c ==
**                     -inf, each y[d] one thread's chain; CSA_TILE_CHUNK
**                     candidates' values are decoded into shared memory at
**                     once, a warp a candidate row.  Both tiled passes
**                     first resolve their candidates' rows into a shared
**                     table, so no staging load waits on a selection load.
**
** Why this shape: at a decode step with B = 1 there are only 64 rows, so the
** work must spread over candidates and dims to reach the 132 SMs, and every
** chain is long (512 or 640 terms): it is fed from shared memory with wide
** loads, one barrier per staged chunk, never from global memory.  Staging
** runs a warp along one candidate row: a lane per record gathers 32 rows a
** load and was 3x slower at B = 64.
**
** These are the oracle's formulas (oracle/SPEC.md C3 and R7) and the
** reference kernels' (csa_sink_attention_reference.h), term for term.
*/
#ifndef CSA_ATTENTION_TILES_H
#define CSA_ATTENTION_TILES_H

#include "csa_attention_abi.h"

/*
** The rows of candidates c0 .. c0 + n - 1 (NULL, NULL: not live or not below
** limit), resolved a thread each into shared memory: the staging loads that
** follow then depend on no selection load and can all be in flight at once.
** Every thread calls it; a barrier must follow before the table is read.
*/
static __device__ __forceinline__ void csa_cand_table(const float **kv, const nx_u8 **rec, int n,
                                                      const csa_attention_row *r, const csa_cursor *cur,
                                                      long long c0, long long limit) {
  int i;
  for (i = threadIdx.x; i < n; i += blockDim.x) {
    const float *k = NULL;
    const nx_u8 *x = NULL;
    if (c0 + i >= limit || !csa_candidate(r, cur, c0 + i, &k, &x)) k = NULL, x = NULL;
    kv[i] = k;
    rec[i] = x;
  }
}

/* Element d of a table row (0 for no row: never read as a value). */
static __device__ __forceinline__ float csa_row_value(const csa_attention_row *r, const float *kv, const nx_u8 *rec,
                                                      int d) {
  return kv ? kv[d] : rec ? csa_record_value(rec, r->cache_fp8, d) : 0.0f;
}

/*
** Pass 1.  Units (bs, head tile, candidate tile), block-stride; warp w
** scores candidate c0 + lane for head h0 + w.  Warp w stages candidates w,
** w + 8, ... of the tile, its lanes along the dims (one contiguous run of a
** record a load).
*/
template <class RowAt>
static __device__ void csa_attn_scores(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads, long long stride) {
  __shared__ __align__(16) float qs[CSA_TILE_HEADS][CSA_TILE_K + 4];
  __shared__ __align__(16) float ks[CSA_TILE_CANDS][CSA_TILE_K + 4];
  __shared__ const float *tkv[CSA_TILE_CANDS];
  __shared__ const nx_u8 *trec[CSA_TILE_CANDS];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long htiles = csa_attn_head_tiles(heads);
  const long long ctiles = (stride + CSA_TILE_CANDS - 1) / CSA_TILE_CANDS;
  long long unit;
  for (unit = blockIdx.x; unit < csa_attn_score_units(bs_rows, heads, stride); unit += gridDim.x) {
    const long long bs = unit / (htiles * ctiles), h0 = (unit / ctiles) % htiles * CSA_TILE_HEADS;
    const long long c0 = unit % ctiles * CSA_TILE_CANDS, c = c0 + lane, h = h0 + warp;
    csa_attention_row r, rh;
    float acc = 0.0f, score = csa_neg_inf();
    int live, d0, i, u, j;
    row_at(bs * heads + h0, &r);
    __syncthreads(); /* the previous unit is done with the table */
    csa_cand_table(tkv, trec, CSA_TILE_CANDS, &r, cur, c0, r.stride);
    __syncthreads();
    live = tkv[lane] || trec[lane];
    /* a tile wholly past the candidates is all -inf: nothing to stage (block-uniform) */
    for (d0 = 0; c0 < r.count && d0 < CSA_ATTN_DIM; d0 += CSA_TILE_K) {
      if (d0) __syncthreads(); /* the previous chunk is read */
      for (i = threadIdx.x; i < CSA_TILE_HEADS * CSA_TILE_K; i += CSA_TILE_THREADS) {
        const long long hh = h0 + i / CSA_TILE_K;
        qs[i / CSA_TILE_K][i % CSA_TILE_K] = hh < heads ? r.query[(hh - h0) * CSA_ATTN_DIM + d0 + i % CSA_TILE_K] : 0.0f;
      }
#pragma unroll
      for (u = 0; u < CSA_TILE_CANDS / (CSA_TILE_THREADS / 32); u++) {
        const int t = warp + u * (CSA_TILE_THREADS / 32);
        const float *row_kv = tkv[t];
        const nx_u8 *row_rec = trec[t];
#pragma unroll
        for (j = lane; j < CSA_TILE_K; j += 32) ks[t][j] = csa_row_value(&r, row_kv, row_rec, d0 + j);
      }
      __syncthreads();
      if (h < heads) {
#pragma unroll 4
        for (i = 0; i < CSA_TILE_K; i += 4) {
          const float4 q4 = *(const float4 *)&qs[warp][i], k4 = *(const float4 *)&ks[lane][i];
          acc = acc + q4.x * k4.x;
          acc = acc + q4.y * k4.y;
          acc = acc + q4.z * k4.z;
          acc = acc + q4.w * k4.w;
        }
      }
    }
    if (h >= heads || c >= stride) continue;
    row_at(bs * heads + h, &rh);
    if (live) {
      score = acc * rh.scale;
      if (rh.bias) score = score + csa_bias_at(rh.bias, rh.bias_dims, rh.b, rh.h, rh.s, c);
    }
    rh.scores[c] = score;
  }
}

/*
** Pass 2.  A block per output row, block-stride: the max reduced across the
** block, CSA_TILE_THREADS exps at a time, each batch summed by thread 0 from
** shared memory in candidate order, the probabilities in parallel.
*/
template <class RowAt>
static __device__ void csa_attn_softmax(const RowAt &row_at, long long rows) {
  __shared__ float wmax[CSA_TILE_THREADS / 32];
  __shared__ float batch[CSA_TILE_THREADS];
  __shared__ float den;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  long long row;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    csa_attention_row r;
    float m = csa_neg_inf(), sum = 0.0f; /* sum: thread 0's */
    long long c0, c;
    int off, i;
    row_at(row, &r);
    for (c = tid; c < r.stride; c += CSA_TILE_THREADS) m = nx_maxf(m, r.scores[c]);
    for (off = 16; off > 0; off /= 2) m = nx_maxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    __syncthreads(); /* the previous row is done with wmax, batch and den */
    if (lane == 0) wmax[warp] = m;
    __syncthreads();
    for (i = 0; i < CSA_TILE_THREADS / 32; i++) m = nx_maxf(m, wmax[i]);
    if (nx_csa_is_neg_inf(m)) { /* no live candidate: every weight "dead", y = +0 (block-uniform) */
      for (c = tid; c < r.stride; c += CSA_TILE_THREADS) r.weights[c] = csa_neg_inf();
      continue;
    }
    for (c0 = 0; c0 < r.stride; c0 += CSA_TILE_THREADS) {
      const int n = (int)csa_min_ll(CSA_TILE_THREADS, csa_max_ll(r.count - c0, 0));
      float w = csa_neg_inf();
      c = c0 + tid;
      if (c < r.stride) {
        w = r.scores[c];
        if (!nx_csa_is_neg_inf(w)) w = nx_expf(w - m);
        r.weights[c] = w;
      }
      batch[tid] = w;
      __syncthreads();
      if (tid == 0) {
#pragma unroll 8
        for (i = 0; i < n; i++) { /* candidates c0 .. c0 + n - 1, ascending */
          const float x = batch[i];
          if (!nx_csa_is_neg_inf(x)) sum = sum + x;
        }
      }
      __syncthreads(); /* batch is read */
    }
    if (tid == 0) den = sum + nx_expf(r.sink - m);
    __syncthreads();
    for (c = tid; c < r.count; c += CSA_TILE_THREADS) { /* each thread rereads only what it wrote */
      const float w = r.weights[c];
      if (!nx_csa_is_neg_inf(w)) r.weights[c] = w / den;
    }
  }
}

/*
** Pass 3.  Units (bs, head tile, dim tile), block-stride; warp w owns head
** h0 + w, lane l dim d0 + l, and stages the tile's dims of candidates w,
** w + 8, ... of the chunk, lane l dim d0 + l (one contiguous run a load).
*/
template <class RowAt>
static __device__ void csa_attn_values(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads) {
  __shared__ float ps[CSA_TILE_HEADS][CSA_TILE_CHUNK];
  __shared__ float vs[CSA_TILE_CHUNK][CSA_TILE_DIMS];
  __shared__ const float *tkv[CSA_TILE_CHUNK];
  __shared__ const nx_u8 *trec[CSA_TILE_CHUNK];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long htiles = csa_attn_head_tiles(heads), dtiles = CSA_ATTN_DIM / CSA_TILE_DIMS;
  long long unit;
  for (unit = blockIdx.x; unit < csa_attn_value_units(bs_rows, heads); unit += gridDim.x) {
    const long long bs = unit / (htiles * dtiles), h0 = (unit / dtiles) % htiles * CSA_TILE_HEADS;
    const long long h = h0 + warp;
    const int d0 = (int)(unit % dtiles) * CSA_TILE_DIMS;
    csa_attention_row r;
    float acc = 0.0f;
    long long c0;
    int i, u;
    row_at(bs * heads + h0, &r);
    for (c0 = 0; c0 < r.count; c0 += CSA_TILE_CHUNK) {
      const int n = (int)csa_min_ll(CSA_TILE_CHUNK, r.count - c0);
      __syncthreads(); /* the previous chunk (or unit) is read */
      csa_cand_table(tkv, trec, CSA_TILE_CHUNK, &r, cur, c0, r.count);
      for (i = threadIdx.x; i < CSA_TILE_HEADS * CSA_TILE_CHUNK; i += CSA_TILE_THREADS) {
        const long long hh = h0 + i / CSA_TILE_CHUNK, c = c0 + i % CSA_TILE_CHUNK;
        ps[i / CSA_TILE_CHUNK][i % CSA_TILE_CHUNK] =
            hh < heads && c < r.count ? r.weights[(hh - h0) * r.stride + c] : csa_neg_inf();
      }
      __syncthreads(); /* the table is filled */
#pragma unroll
      for (u = 0; u < CSA_TILE_CHUNK / (CSA_TILE_THREADS / 32); u++) {
        const int t = warp + u * (CSA_TILE_THREADS / 32);
        vs[t][lane] = csa_row_value(&r, tkv[t], trec[t], d0 + lane);
      }
      __syncthreads();
      if (h < heads) {
#pragma unroll 4
        for (i = 0; i < n; i++) {
          const float p = ps[warp][i];
          if (!nx_csa_is_neg_inf(p)) acc = acc + p * vs[i][lane];
        }
      }
    }
    if (h < heads) r.y[(h - h0) * CSA_ATTN_DIM + d0 + lane] = acc;
  }
}

#endif /* CSA_ATTENTION_TILES_H */
