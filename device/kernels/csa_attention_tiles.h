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
**                     ascending by thread 0 from shared memory, up to
**                     CSA_SOFTMAX_BATCH at a time, + nx_expf(sink - m),
**                     p_c = w_c / den in parallel (nx_expf is a
**                     double-double routine: a warp per row left 640 of
**                     them to 32 lanes).  m == -inf makes every weight
**                     -inf, which the last pass reads as "no candidate":
**                     y = +0, as the oracle's zero row.  -inf marks a dead
**                     candidate (no exp or probability is -inf).
**   csa_attn_values   a tile of CSA_TILE_HEADS heads (a warp each) x
**                     CSA_TILE_DIMS dims (a lane each) a block: y[d] = sum
**                     over c ascending of p_c * v_c[d] skipping p_c ==
**                     -inf, each y[d] one thread's chain; CSA_TILE_CHUNK
**                     candidates' values are decoded into shared memory at
**                     once, a warp a candidate row, the next chunk's loads
**                     in flight while this one is multiplied.
**
** Both tiled passes first resolve their candidates' rows into a shared
** table, so no staging load waits on a selection load, then fetch every
** byte a chunk needs into registers before decoding any (csa_fetch, then
** csa_fetched_value, in csa_attention_staging.h): a load followed at once
** by its decode and store made each lane wait out its loads one after
** another (docs/SPEED.md, fourth round).
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
#include "csa_attention_staging.h"

#define CSA_TILE_WARPS (CSA_TILE_THREADS / 32)
#define CSA_KEY_ROWS (CSA_TILE_CANDS / CSA_TILE_WARPS)   /* candidates a warp stages a chunk: 4 */
#define CSA_KEY_RUNS (CSA_TILE_K / 32)                   /* runs of 32 dims of each: 8 */
#define CSA_VALUE_ROWS (CSA_TILE_CHUNK / CSA_TILE_WARPS) /* candidates a warp stages a chunk: 32 */
#define CSA_SOFTMAX_BATCH 1024                           /* exps summed from shared memory at once */
#define CSA_SOFTMAX_HELD (CSA_SOFTMAX_BATCH / CSA_TILE_THREADS)

/* Pass 1's staging of dims d0 .. d0 + CSA_TILE_K - 1: warp w's candidates w, w + 8, ..., lanes along the dims. */
static __device__ __forceinline__ void csa_fetch_keys(csa_fetched (*kf)[CSA_KEY_RUNS], const void *const *row,
                                                      const unsigned char *kind, int d0) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int u, k;
#pragma unroll
  for (u = 0; u < CSA_KEY_ROWS; u++) {
    const void *x = row[warp + u * CSA_TILE_WARPS];
    const int kx = kind[warp + u * CSA_TILE_WARPS];
#pragma unroll
    for (k = 0; k < CSA_KEY_RUNS; k++) kf[u][k] = csa_fetch(x, kx, d0 + 32 * k, lane);
  }
}

static __device__ __forceinline__ void csa_store_keys(float (*ks)[CSA_TILE_K + 4], const csa_decode_tables *dt,
                                                      csa_fetched (*kf)[CSA_KEY_RUNS], const unsigned char *kind,
                                                      int d0) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int u, k;
#pragma unroll
  for (u = 0; u < CSA_KEY_ROWS; u++) {
    const int t = warp + u * CSA_TILE_WARPS, kx = kind[t];
#pragma unroll
    for (k = 0; k < CSA_KEY_RUNS; k++) ks[t][lane + 32 * k] = csa_fetched_value(dt, kx, d0 + 32 * k, kf[u][k]);
  }
}

/* The tile's query dims d0 .. d0 + CSA_TILE_K - 1 of each head, a thread a dim. */
static __device__ __forceinline__ void csa_fetch_query(float *qf, const csa_attention_row *r, long long heads,
                                                       long long h0, int d0) {
  int j;
#pragma unroll
  for (j = 0; j < CSA_TILE_HEADS; j++)
    qf[j] = h0 + j < heads ? r->query[j * CSA_ATTN_DIM + d0 + (int)threadIdx.x] : 0.0f;
}

/*
** Pass 1.  Units (bs, head tile, candidate tile), block-stride; warp w
** scores candidate c0 + lane for head h0 + w.  The second chunk of dims is
** fetched while the first is multiplied.
*/
template <class RowAt>
static __device__ void csa_attn_scores(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads, long long stride) {
  __shared__ __align__(16) float qs[CSA_TILE_HEADS][CSA_TILE_K + 4];
  __shared__ __align__(16) float ks[CSA_TILE_CANDS][CSA_TILE_K + 4];
  __shared__ csa_decode_tables dt;
  __shared__ const void *trow[CSA_TILE_CANDS];
  __shared__ unsigned char tkind[CSA_TILE_CANDS];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long htiles = csa_attn_head_tiles(heads);
  const long long ctiles = (stride + CSA_TILE_CANDS - 1) / CSA_TILE_CANDS;
  long long unit;
  static_assert(CSA_TILE_THREADS == CSA_TILE_K, "a thread stages one query dim of each head");
  csa_decode_tables_fill(&dt); /* read after the first candidate table's barrier */
  for (unit = blockIdx.x; unit < csa_attn_score_units(bs_rows, heads, stride); unit += gridDim.x) {
    const long long q = csa_div_ll(unit, ctiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * CSA_TILE_HEADS, c0 = (unit - q * ctiles) * CSA_TILE_CANDS;
    const long long c = c0 + lane, h = h0 + warp;
    csa_attention_row r, rh;
    float acc = 0.0f, score = csa_neg_inf();
    int live, d0, i, j;
    row_at(bs * heads + h0, &r);
    __syncthreads(); /* the previous unit is done with the table */
    if (threadIdx.x < CSA_TILE_CANDS)
      csa_cand_entry(trow, tkind, threadIdx.x, &r, cur, c0 + threadIdx.x, csa_candidate_record(&r, c0 + threadIdx.x));
    __syncthreads();
    live = tkind[lane] != CSA_ROW_NONE;
    if (c0 < r.count) { /* else the tile is wholly past the candidates, all -inf (block-uniform) */
      csa_fetched kf[CSA_KEY_ROWS][CSA_KEY_RUNS];
      float qf[CSA_TILE_HEADS];
      csa_fetch_keys(kf, trow, tkind, 0);
      csa_fetch_query(qf, &r, heads, h0, 0);
#pragma unroll
      for (d0 = 0; d0 < CSA_ATTN_DIM; d0 += CSA_TILE_K) {
        if (d0) __syncthreads(); /* the previous chunk is read */
        csa_store_keys(ks, &dt, kf, tkind, d0);
#pragma unroll
        for (j = 0; j < CSA_TILE_HEADS; j++) qs[j][threadIdx.x] = qf[j];
        __syncthreads();
        if (d0 + CSA_TILE_K < CSA_ATTN_DIM) {
          csa_fetch_keys(kf, trow, tkind, d0 + CSA_TILE_K);
          csa_fetch_query(qf, &r, heads, h0, d0 + CSA_TILE_K);
        }
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
** block, CSA_SOFTMAX_BATCH exps at a time, each batch summed by thread 0
** from shared memory in candidate order, the probabilities in parallel (from
** the exps each thread still holds, for a row of one batch).  A dead
** candidate enters the batch as +0 rather than being skipped: the sum starts
** at +0 and every exp is >= +0 (or NaN), so it is never -0, and adding +0
** leaves it as it is.
*/
template <class RowAt>
static __device__ void csa_attn_softmax(const RowAt &row_at, long long rows) {
  __shared__ float wmax[CSA_TILE_WARPS];
  __shared__ __align__(16) float batch[CSA_SOFTMAX_BATCH];
  __shared__ float den;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  long long row;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    csa_attention_row r;
    float m = csa_neg_inf(), sum = 0.0f, held[CSA_SOFTMAX_HELD]; /* sum: thread 0's */
    long long c0, c;
    int off, i, j;
    row_at(row, &r);
    for (c = tid; c < r.stride; c += CSA_TILE_THREADS) m = nx_maxf(m, r.scores[c]);
    for (off = 16; off > 0; off /= 2) m = nx_maxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    __syncthreads(); /* the previous row is done with wmax, batch and den */
    if (lane == 0) wmax[warp] = m;
    __syncthreads();
    for (i = 0; i < CSA_TILE_WARPS; i++) m = nx_maxf(m, wmax[i]);
    if (nx_csa_is_neg_inf(m)) { /* no live candidate: every weight "dead", y = +0 (block-uniform) */
      for (c = tid; c < r.stride; c += CSA_TILE_THREADS) r.weights[c] = csa_neg_inf();
      continue;
    }
    for (c0 = 0; c0 < r.stride; c0 += CSA_SOFTMAX_BATCH) {
      const int n = (int)csa_min_ll(CSA_SOFTMAX_BATCH, csa_max_ll(r.count - c0, 0));
#pragma unroll
      for (j = 0; j < CSA_SOFTMAX_HELD; j++) {
        float w = csa_neg_inf(), e = 0.0f;
        c = c0 + tid + j * CSA_TILE_THREADS;
        if (c < r.stride) {
          w = r.scores[c];
          if (!nx_csa_is_neg_inf(w)) w = nx_expf(w - m), e = w;
          r.weights[c] = w;
        }
        held[j] = w;
        batch[tid + j * CSA_TILE_THREADS] = e;
      }
      __syncthreads();
      if (tid == 0) { /* candidates c0 .. c0 + n - 1, ascending */
#pragma unroll 4
        for (i = 0; i + 4 <= n; i += 4) {
          const float4 e4 = *(const float4 *)&batch[i];
          sum = sum + e4.x;
          sum = sum + e4.y;
          sum = sum + e4.z;
          sum = sum + e4.w;
        }
        for (; i < n; i++) sum = sum + batch[i];
      }
      __syncthreads(); /* batch is read */
    }
    if (tid == 0) den = sum + nx_expf(r.sink - m);
    __syncthreads();
    if (r.stride <= CSA_SOFTMAX_BATCH) {
#pragma unroll
      for (j = 0; j < CSA_SOFTMAX_HELD; j++) {
        c = tid + j * CSA_TILE_THREADS;
        if (c < r.count && !nx_csa_is_neg_inf(held[j])) r.weights[c] = held[j] / den;
      }
    } else {
      for (c = tid; c < r.count; c += CSA_TILE_THREADS) { /* each thread rereads only what it wrote */
        const float w = r.weights[c];
        if (!nx_csa_is_neg_inf(w)) r.weights[c] = w / den;
      }
    }
  }
}

/* Pass 3's staging of candidates c0 .. c0 + CSA_TILE_CHUNK - 1: thread t's probabilities, warp w's values. */
static __device__ __forceinline__ void csa_fetch_values(float *pf, csa_fetched *vf, const csa_attention_row *r,
                                                        const void *const *row, const unsigned char *kind,
                                                        long long heads, long long h0, long long c0, int d0) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long c = c0 + threadIdx.x;
  int j, u;
#pragma unroll
  for (j = 0; j < CSA_TILE_HEADS; j++)
    pf[j] = h0 + j < heads && c < r->count ? r->weights[j * r->stride + c] : csa_neg_inf();
#pragma unroll
  for (u = 0; u < CSA_VALUE_ROWS; u++)
    vf[u] = csa_fetch(row[warp + u * CSA_TILE_WARPS], kind[warp + u * CSA_TILE_WARPS], d0, lane);
}

/*
** Pass 3.  Units (bs, head tile, dim tile), block-stride; warp w owns head
** h0 + w, lane l dim d0 + l, and stages the tile's dims of candidates w,
** w + 8, ... of the chunk.  Software-pipelined over chunks of candidates:
** while chunk k is multiplied, chunk k + 1's values are in flight (its table,
** of the two that alternate, built from a record index loaded a chunk before
** that).  A head whose chunk has no dead candidate runs its chain without
** the test.
*/
template <class RowAt>
static __device__ void csa_attn_values(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads) {
  __shared__ __align__(16) float ps[CSA_TILE_HEADS][CSA_TILE_CHUNK];
  __shared__ float vs[CSA_TILE_CHUNK][CSA_TILE_DIMS];
  __shared__ csa_decode_tables dt;
  __shared__ const void *trow[2][CSA_TILE_CHUNK];
  __shared__ unsigned char tkind[2][CSA_TILE_CHUNK];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const long long htiles = csa_attn_head_tiles(heads), dtiles = CSA_ATTN_DIM / CSA_TILE_DIMS;
  long long unit;
  static_assert(CSA_TILE_CHUNK == CSA_TILE_THREADS, "a thread resolves one candidate of a chunk");
  csa_decode_tables_fill(&dt); /* read after the first candidate table's barrier */
  for (unit = blockIdx.x; unit < csa_attn_value_units(bs_rows, heads); unit += gridDim.x) {
    const long long q = csa_div_ll(unit, dtiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * CSA_TILE_HEADS, h = h0 + warp;
    const int d0 = (int)(unit - q * dtiles) * CSA_TILE_DIMS;
    csa_attention_row r;
    float acc = 0.0f, pf[CSA_TILE_HEADS];
    csa_fetched vf[CSA_VALUE_ROWS];
    long long c0, next_record;
    int i, j, buf;
    row_at(bs * heads + h0, &r);
    __syncthreads(); /* the previous unit is done with the tables, ps and vs */
    csa_cand_entry(trow[0], tkind[0], tid, &r, cur, tid, csa_candidate_record(&r, tid));
    next_record = csa_candidate_record(&r, CSA_TILE_CHUNK + tid);
    __syncthreads();
    csa_fetch_values(pf, vf, &r, trow[0], tkind[0], heads, h0, 0, d0);
    for (c0 = 0, buf = 0; c0 < r.count; c0 += CSA_TILE_CHUNK, buf ^= 1) {
      const int n = (int)csa_min_ll(CSA_TILE_CHUNK, r.count - c0);
      if (c0) __syncthreads(); /* the previous chunk's ps and vs are read */
#pragma unroll
      for (j = 0; j < CSA_TILE_HEADS; j++) ps[j][tid] = pf[j];
#pragma unroll
      for (i = 0; i < CSA_VALUE_ROWS; i++) {
        const int t = warp + i * CSA_TILE_WARPS;
        vs[t][lane] = csa_fetched_value(&dt, tkind[buf][t], d0, vf[i]);
      }
      csa_cand_entry(trow[buf ^ 1], tkind[buf ^ 1], tid, &r, cur, c0 + CSA_TILE_CHUNK + tid, next_record);
      __syncthreads(); /* ps, vs and the next chunk's table are filled */
      if (c0 + CSA_TILE_CHUNK < r.count) {
        csa_fetch_values(pf, vf, &r, trow[buf ^ 1], tkind[buf ^ 1], heads, h0, c0 + CSA_TILE_CHUNK, d0);
        next_record = csa_candidate_record(&r, c0 + 2 * CSA_TILE_CHUNK + tid);
      }
      if (h < heads) { /* warp-uniform */
        int dead = 0;
        for (i = lane; i < n; i += 32) dead |= nx_csa_is_neg_inf(ps[warp][i]);
        if (__any_sync(0xffffffffu, dead)) {
          for (i = 0; i < n; i++) {
            const float p = ps[warp][i];
            if (!nx_csa_is_neg_inf(p)) acc = acc + p * vs[i][lane];
          }
        } else {
          const float *pp = ps[warp], *vp = &vs[0][lane];
#pragma unroll 4
          for (i = 0; i + 4 <= n; i += 4, vp += 4 * CSA_TILE_DIMS) {
            const float4 p4 = *(const float4 *)(pp + i);
            acc = acc + p4.x * vp[0];
            acc = acc + p4.y * vp[CSA_TILE_DIMS];
            acc = acc + p4.z * vp[2 * CSA_TILE_DIMS];
            acc = acc + p4.w * vp[3 * CSA_TILE_DIMS];
          }
          for (; i < n; i++, vp += CSA_TILE_DIMS) acc = acc + pp[i] * vp[0];
        }
      }
    }
    if (h < heads) r.y[(h - h0) * CSA_ATTN_DIM + d0 + lane] = acc;
  }
}

#endif /* CSA_ATTENTION_TILES_H */
