/*
** csa_attention_wide.h: the scores and values passes of the fast CSA sink
** attention (csa_attention_tiles.h) for launches with many (b, s) row
** groups, where every SM has several tiles to run and a tile can give each
** thread many chains.  CUDA C++, included by csa_attention_tiles.h after
** its narrow passes, whose helpers (csa_dot4, the row description, the
** gathered rows) it shares.  The launchers pick a pass's wide form when
** csa_attn_wide_scores / csa_attn_wide_values (csa_attention_abi.h) say so.
**
**   csa_attn_scores_wide  a tile of CSA_WIDE_SCORE_HEADS heads (8 a warp) x
**                         CSA_TILE_CANDS candidates (a lane each): each
**                         thread holds 8 score chains, one per head of its
**                         warp, for its candidate.
**   csa_attn_values_wide  a tile of CSA_WIDE_VALUE_HEADS heads (4 a warp)
**                         x CSA_WIDE_VALUE_DIMS dims (4 a lane): each
**                         thread holds 16 y chains, (head, dim) pairs.
**
** Why: the narrow tiles give a thread one chain, so every multiply-add
** reads its two operands from shared memory, and with 8 head tiles reading
** one candidate row each staged float served one multiply.  The passes at
** B = 64 were bound by shared-memory bandwidth and by the one dependent add
** a thread could issue at a time.  Here a staged key float4 serves 8 heads
** and a staged value float4 4 heads, out of registers, and a thread's
** chains are independent of each other.  At B = 1 there are too few tiles
** of this size to reach every SM, so the narrow passes stay for it.
**
** The sums are the narrow passes' term for term: a score is q[d] * k[d]
** added over d ascending from +0, then * scale (+ bias); y[d] is p_c *
** v_c[d] added over live c ascending from +0, a dead candidate (p_c ==
** -inf) skipped.  Only which thread runs a chain differs.
*/
#ifndef CSA_ATTENTION_WIDE_H
#define CSA_ATTENTION_WIDE_H

#define CSA_WIDE_WARP_HEADS (CSA_WIDE_SCORE_HEADS / CSA_TILE_WARPS)      /* score chains a thread: 8 */
#define CSA_WIDE_K 64                                                     /* dims staged at once */
#define CSA_WIDE_Q_LOADS (CSA_WIDE_SCORE_HEADS * CSA_WIDE_K / 4 / CSA_TILE_THREADS) /* float4s a thread: 4 */
#define CSA_WIDE_K_LOADS (CSA_TILE_CANDS * CSA_WIDE_K / 4 / CSA_TILE_THREADS)       /* 2 */
#define CSA_WIDE_VALUE_WARP_HEADS (CSA_WIDE_VALUE_HEADS / CSA_TILE_WARPS)  /* 4 */
#define CSA_WIDE_CHUNK 32                                                 /* candidates staged at once */
#define CSA_WIDE_P_LOADS (CSA_WIDE_VALUE_HEADS * CSA_WIDE_CHUNK / CSA_TILE_THREADS)      /* floats: 4 */
#define CSA_WIDE_V_LOADS (CSA_WIDE_CHUNK * CSA_WIDE_VALUE_DIMS / 4 / CSA_TILE_THREADS)   /* float4s: 4 */

static_assert(CSA_WIDE_VALUE_DIMS == 4 * 32, "a lane of the wide values pass owns one float4 of dims");

/*
** The wide scores pass's loads of dims d0 .. d0 + CSA_WIDE_K - 1: float4 i
** of thread t is number t + CSA_TILE_THREADS * i of the stage, row-major
** (the query rows of heads h0.., zeros past heads; the gathered rows of
** candidates c0.., zeros past count).
*/
static __device__ __forceinline__ void csa_wide_load_scores(float4 *qf, float4 *kf, const csa_attention_row *r,
                                                            long long heads, long long h0, long long c0, int d0) {
  const int per_row = CSA_WIDE_K / 4;
  int i;
#pragma unroll
  for (i = 0; i < CSA_WIDE_Q_LOADS; i++) {
    const int f = (int)threadIdx.x + CSA_TILE_THREADS * i, j = f / per_row;
    const float4 *src = (const float4 *)(r->query + j * CSA_ATTN_DIM + d0) + f % per_row;
    qf[i] = h0 + j < heads ? __ldg(src) : csa_zero4();
  }
#pragma unroll
  for (i = 0; i < CSA_WIDE_K_LOADS; i++) {
    const int f = (int)threadIdx.x + CSA_TILE_THREADS * i, t = f / per_row;
    const float4 *src = (const float4 *)(r->gathered + (c0 + t) * CSA_ATTN_DIM + d0) + f % per_row;
    kf[i] = c0 + t < r->count ? __ldg(src) : csa_zero4();
  }
}

/*
** Units (bs, head tile, candidate tile), block-stride; warp w scores
** candidate c0 + lane for heads h0 + 8w .. h0 + 8w + 7, one chain each:
** a staged key float4 is read once for the 8 heads, whose query float4s
** are the same for every lane (broadcast reads).
*/
template <class RowAt>
static __device__ void csa_attn_scores_wide(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                            long long heads, long long stride) {
  __shared__ __align__(16) float qs[CSA_WIDE_SCORE_HEADS][CSA_WIDE_K + 4];
  __shared__ __align__(16) float ks[CSA_TILE_CANDS][CSA_WIDE_K + 4]; /* + 4: a quarter warp's rows on distinct banks */
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, per_row = CSA_WIDE_K / 4;
  const int first = CSA_WIDE_WARP_HEADS * warp; /* the warp's first head in the tile */
  const long long htiles = (heads + CSA_WIDE_SCORE_HEADS - 1) / CSA_WIDE_SCORE_HEADS;
  const long long ctiles = (stride + CSA_TILE_CANDS - 1) / CSA_TILE_CANDS;
  long long unit;
  for (unit = blockIdx.x; unit < csa_attn_wide_score_units(bs_rows, heads, stride); unit += gridDim.x) {
    const long long q = csa_div_ll(unit, ctiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * CSA_WIDE_SCORE_HEADS, c0 = (unit - q * ctiles) * CSA_TILE_CANDS;
    const long long c = c0 + lane;
    csa_attention_row r;
    const float *kv;
    const nx_u8 *rec;
    float acc[CSA_WIDE_WARP_HEADS];
    int live, d0, i, j;
#pragma unroll
    for (j = 0; j < CSA_WIDE_WARP_HEADS; j++) acc[j] = 0.0f;
    row_at(bs * heads + h0, &r);
    live = csa_candidate(&r, cur, c, &kv, &rec);
    __syncthreads(); /* the previous unit is done with qs and ks */
    if (c0 < r.count) { /* else the tile is wholly past the candidates, all -inf (block-uniform) */
      float4 qf[CSA_WIDE_Q_LOADS], kf[CSA_WIDE_K_LOADS];
      csa_wide_load_scores(qf, kf, &r, heads, h0, c0, 0);
      for (d0 = 0; d0 < CSA_ATTN_DIM; d0 += CSA_WIDE_K) {
        if (d0) __syncthreads(); /* the previous stage is read */
#pragma unroll
        for (i = 0; i < CSA_WIDE_Q_LOADS; i++) {
          const int f = (int)threadIdx.x + CSA_TILE_THREADS * i;
          *(float4 *)&qs[f / per_row][4 * (f % per_row)] = qf[i];
        }
#pragma unroll
        for (i = 0; i < CSA_WIDE_K_LOADS; i++) {
          const int f = (int)threadIdx.x + CSA_TILE_THREADS * i;
          *(float4 *)&ks[f / per_row][4 * (f % per_row)] = kf[i];
        }
        __syncthreads();
        if (d0 + CSA_WIDE_K < CSA_ATTN_DIM) csa_wide_load_scores(qf, kf, &r, heads, h0, c0, d0 + CSA_WIDE_K);
        if (h0 + first < heads) { /* warp-uniform */
#pragma unroll 4
          for (i = 0; i < CSA_WIDE_K; i += 4) {
            const float4 k4 = *(const float4 *)&ks[lane][i];
#pragma unroll
            for (j = 0; j < CSA_WIDE_WARP_HEADS; j++) acc[j] = csa_dot4(acc[j], *(const float4 *)&qs[first + j][i], k4);
          }
        }
      }
    }
    if (c >= stride) continue;
#pragma unroll
    for (j = 0; j < CSA_WIDE_WARP_HEADS; j++) {
      const long long h = h0 + first + j;
      float score = csa_neg_inf();
      if (h >= heads) break;
      if (live) { /* row h's scale and bias are row h0's; only the head differs */
        score = acc[j] * r.scale;
        if (r.bias) score = score + csa_bias_at(r.bias, r.bias_dims, r.b, h, r.s, c);
      }
      r.scores[(first + j) * stride + c] = score;
    }
  }
}

/*
** The wide values pass's loads of candidates c0 .. c0 + CSA_WIDE_CHUNK - 1:
** probability i of thread t is number t + CSA_TILE_THREADS * i of the
** chunk's [heads][candidates] (-inf past count or heads; the rows are
** stride floats apart, so not 16-byte aligned), and float4 i of the values
** likewise of [candidates][dims] (zeros past count).
*/
static __device__ __forceinline__ void csa_wide_load_values(float *pf, float4 *vf, const csa_attention_row *r,
                                                            long long heads, long long h0, long long c0, int d0) {
  const int per_row = CSA_WIDE_VALUE_DIMS / 4;
  int i;
#pragma unroll
  for (i = 0; i < CSA_WIDE_P_LOADS; i++) {
    const int f = (int)threadIdx.x + CSA_TILE_THREADS * i, j = f / CSA_WIDE_CHUNK;
    const long long c = c0 + f % CSA_WIDE_CHUNK;
    pf[i] = h0 + j < heads && c < r->count ? r->weights[j * r->stride + c] : csa_neg_inf();
  }
#pragma unroll
  for (i = 0; i < CSA_WIDE_V_LOADS; i++) {
    const int f = (int)threadIdx.x + CSA_TILE_THREADS * i, t = f / per_row;
    const float4 *src = (const float4 *)(r->gathered + (c0 + t) * CSA_ATTN_DIM + d0) + f % per_row;
    vf[i] = c0 + t < r->count ? __ldg(src) : csa_zero4();
  }
}

/* acc + p * v, a term of each of a lane's four dims' chains. */
static __device__ __forceinline__ float4 csa_wide_term(float4 acc, float p, float4 v) {
  acc.x = acc.x + p * v.x;
  acc.y = acc.y + p * v.y;
  acc.z = acc.z + p * v.z;
  acc.w = acc.w + p * v.w;
  return acc;
}

/*
** Units (bs, head tile, dim tile), block-stride; warp w owns heads h0 + 4w
** .. h0 + 4w + 3, lane l dims d0 + 4l .. d0 + 4l + 3: 16 chains, each over
** the candidates in order.  Chunks of CSA_WIDE_CHUNK candidates are staged
** with the next chunk's loads in flight.  A warp whose heads have no dead
** candidate in a chunk runs it without the per-term test, four candidates
** a step (each head's four probabilities one broadcast read).
*/
template <class RowAt>
static __device__ void csa_attn_values_wide(const RowAt &row_at, long long bs_rows, long long heads) {
  __shared__ __align__(16) float ps[CSA_WIDE_VALUE_HEADS][CSA_WIDE_CHUNK];
  __shared__ __align__(16) float vs[CSA_WIDE_CHUNK][CSA_WIDE_VALUE_DIMS];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, per_row = CSA_WIDE_VALUE_DIMS / 4;
  const int first = CSA_WIDE_VALUE_WARP_HEADS * warp; /* the warp's first head in the tile */
  const long long htiles = (heads + CSA_WIDE_VALUE_HEADS - 1) / CSA_WIDE_VALUE_HEADS;
  const long long dtiles = CSA_ATTN_DIM / CSA_WIDE_VALUE_DIMS;
  long long unit;
  for (unit = blockIdx.x; unit < csa_attn_wide_value_units(bs_rows, heads); unit += gridDim.x) {
    const long long q = csa_div_ll(unit, dtiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * CSA_WIDE_VALUE_HEADS;
    const int d0 = (int)(unit - q * dtiles) * CSA_WIDE_VALUE_DIMS;
    const int heads_here = (int)csa_min_ll(CSA_WIDE_VALUE_WARP_HEADS, csa_max_ll(heads - h0 - first, 0));
    csa_attention_row r;
    float4 acc[CSA_WIDE_VALUE_WARP_HEADS], vf[CSA_WIDE_V_LOADS];
    float pf[CSA_WIDE_P_LOADS];
    long long c0;
    int i, j, t;
#pragma unroll
    for (j = 0; j < CSA_WIDE_VALUE_WARP_HEADS; j++) acc[j] = csa_zero4();
    row_at(bs * heads + h0, &r);
    csa_wide_load_values(pf, vf, &r, heads, h0, 0, d0);
    for (c0 = 0; c0 < r.count; c0 += CSA_WIDE_CHUNK) {
      const int n = (int)csa_min_ll(CSA_WIDE_CHUNK, r.count - c0);
      __syncthreads(); /* the previous chunk's (or unit's) ps and vs are read */
#pragma unroll
      for (i = 0; i < CSA_WIDE_P_LOADS; i++) {
        const int f = tid + CSA_TILE_THREADS * i;
        ps[f / CSA_WIDE_CHUNK][f % CSA_WIDE_CHUNK] = pf[i];
      }
#pragma unroll
      for (i = 0; i < CSA_WIDE_V_LOADS; i++) {
        const int f = tid + CSA_TILE_THREADS * i;
        *(float4 *)&vs[f / per_row][4 * (f % per_row)] = vf[i];
      }
      __syncthreads(); /* ps and vs are filled */
      if (c0 + CSA_WIDE_CHUNK < r.count) csa_wide_load_values(pf, vf, &r, heads, h0, c0 + CSA_WIDE_CHUNK, d0);
      if (heads_here > 0) { /* warp-uniform */
        int dead = 0;
        for (j = 0; j < heads_here; j++)
          for (i = lane; i < n; i += 32) dead |= nx_csa_is_neg_inf(ps[first + j][i]);
        if (__any_sync(0xffffffffu, dead)) {
          for (i = 0; i < n; i++) {
            const float4 v = *(const float4 *)&vs[i][4 * lane];
#pragma unroll
            for (j = 0; j < CSA_WIDE_VALUE_WARP_HEADS; j++) {
              const float p = ps[first + j][i];
              if (!nx_csa_is_neg_inf(p)) acc[j] = csa_wide_term(acc[j], p, v);
            }
          }
        } else { /* the heads past heads_here run on -inf and are never stored */
          for (i = 0; i + 4 <= n; i += 4) {
            float4 p4[CSA_WIDE_VALUE_WARP_HEADS];
#pragma unroll
            for (j = 0; j < CSA_WIDE_VALUE_WARP_HEADS; j++) p4[j] = *(const float4 *)&ps[first + j][i];
#pragma unroll
            for (t = 0; t < 4; t++) {
              const float4 v = *(const float4 *)&vs[i + t][4 * lane];
#pragma unroll
              for (j = 0; j < CSA_WIDE_VALUE_WARP_HEADS; j++)
                acc[j] = csa_wide_term(acc[j], t == 0 ? p4[j].x : t == 1 ? p4[j].y : t == 2 ? p4[j].z : p4[j].w, v);
            }
          }
          for (; i < n; i++) {
            const float4 v = *(const float4 *)&vs[i][4 * lane];
#pragma unroll
            for (j = 0; j < CSA_WIDE_VALUE_WARP_HEADS; j++) acc[j] = csa_wide_term(acc[j], ps[first + j][i], v);
          }
        }
      }
    }
#pragma unroll
    for (j = 0; j < CSA_WIDE_VALUE_WARP_HEADS; j++) /* a constant j keeps acc in registers */
      if (j < heads_here) *(float4 *)(r.y + (first + j) * CSA_ATTN_DIM + d0 + 4 * lane) = acc[j];
  }
}

#endif /* CSA_ATTENTION_WIDE_H */
