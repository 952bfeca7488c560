/*
** csa_attention_chains.h: the scores and values passes of the fast CSA sink
** attention (csa_attention_tiles.h) as templates over the shape of their
** tile: the wide scores and values tiles the launchers choose once they
** fill every SM twice (csa_attention_abi.h), and csa_dot4, which the
** narrow scores pass (csa_attention_resident.h) shares.  CUDA C++, included
** by csa_attention_tiles.h after its softmax.
**
**   csa_attn_scores<T>  a tile of T::heads heads (T::warp_heads a warp) x
**                       CSA_TILE_CANDS candidates (a lane each): a thread
**                       holds one score chain per head of its warp, for
**                       its candidate; q and the gathered keys are staged
**                       T::k dims at a time.
**   csa_attn_values<T>  a tile of T::heads heads (T::warp_heads a warp) x
**                       T::dims dims (a float4 a lane): a thread holds
**                       one y chain per (head, dim) it owns; probabilities
**                       and gathered values are staged T::chunk candidates
**                       at a time.
**
** Why chains a thread: with one chain a thread every multiply-add read both
** operands from shared memory, so the passes were bound by shared-memory
** bandwidth and by the one dependent add a thread could issue at a time
** (docs/SPEED.md, seventh round).  Here a staged key float4 serves a warp's
** heads and a staged value a thread's heads out of registers, the query and
** probability reads are broadcasts, and a thread's chains are independent
** of each other.
**
** Every sum is the oracle's (oracle/SPEC.md C3 and R7), term for term: a
** score is q[d] * k[d] added over d ascending from +0, then * scale (+
** bias), -inf where the candidate is not live, up to the row's stride; y[d]
** is p_c * v_c[d] added over live c ascending from +0, a dead candidate (p_c
** == -inf) skipped.  Only which thread runs a chain differs between shapes.
*/
#ifndef CSA_ATTENTION_CHAINS_H
#define CSA_ATTENTION_CHAINS_H

/* A scores tile: WARPS warps of WARP_HEADS heads, a candidate a lane, K dims staged at once. */
template <int WARPS, int WARP_HEADS, int K> struct csa_score_tile {
  static constexpr int threads = 32 * WARPS, warp_heads = WARP_HEADS, heads = WARPS * WARP_HEADS, k = K;
  static constexpr int q_loads = heads * K / 4 / threads;          /* float4s of the query a thread */
  static constexpr int k_loads = CSA_TILE_CANDS * K / 4 / threads; /* of the keys */
  static_assert(q_loads * 4 * threads == heads * K && k_loads * 4 * threads == CSA_TILE_CANDS * K,
                "a stage is whole float4s for every thread");
};

/* A values tile: WARPS warps of WARP_HEADS heads, 4 dims a lane, CHUNK candidates staged at once. */
template <int WARPS, int WARP_HEADS, int CHUNK> struct csa_value_tile {
  static constexpr int threads = 32 * WARPS, warp_heads = WARP_HEADS, heads = WARPS * WARP_HEADS;
  static constexpr int dims = 32 * 4, chunk = CHUNK;
  static constexpr int p_loads = heads * CHUNK / threads;      /* probabilities a thread */
  static constexpr int v_loads = CHUNK * dims / 4 / threads;   /* float4s of values a thread */
  static_assert(p_loads * threads == heads * CHUNK && v_loads * 4 * threads == CHUNK * dims && CHUNK % 4 == 0,
                "a chunk is whole loads for every thread");
};

/* The shapes of csa_attention_abi.h, which the launchers size grids by. */
typedef csa_score_tile<CSA_TILE_THREADS / 32, CSA_WIDE_SCORE_HEADS / (CSA_TILE_THREADS / 32), 64> csa_wide_scores;
typedef csa_value_tile<CSA_TILE_THREADS / 32, CSA_WIDE_VALUE_HEADS / (CSA_TILE_THREADS / 32), 32>
    csa_wide_values;
static_assert(csa_wide_scores::heads == CSA_WIDE_SCORE_HEADS &&
                  csa_wide_values::heads == CSA_WIDE_VALUE_HEADS && csa_wide_values::dims == CSA_WIDE_VALUE_DIMS,
              "the tiles are the ABI's");

static __device__ __forceinline__ float4 csa_zero4(void) { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }

/* acc + q[0] * k[0] + ... + q[3] * k[3], one term at a time. */
static __device__ __forceinline__ float csa_dot4(float acc, float4 q, float4 k) {
  acc = acc + q.x * k.x;
  acc = acc + q.y * k.y;
  acc = acc + q.z * k.z;
  return acc + q.w * k.w;
}

/*
** The scores pass's loads of dims d0 .. d0 + T::k - 1: float4 i of thread t
** is number t + T::threads * i of the stage, row-major (the query rows of
** heads h0.., zeros past heads; the gathered rows of candidates c0.., zeros
** past count).
*/
template <class T>
static __device__ __forceinline__ void csa_scores_load(float4 *qf, float4 *kf, const csa_attention_row *r,
                                                       long long heads, long long h0, long long c0, int d0) {
  const int per_row = T::k / 4;
  int i;
#pragma unroll
  for (i = 0; i < T::q_loads; i++) {
    const int f = (int)threadIdx.x + T::threads * i, j = f / per_row;
    const float4 *src = (const float4 *)(r->query + j * CSA_ATTN_DIM + d0) + f % per_row;
    qf[i] = h0 + j < heads ? __ldg(src) : csa_zero4();
  }
#pragma unroll
  for (i = 0; i < T::k_loads; i++) {
    const int f = (int)threadIdx.x + T::threads * i, t = f / per_row;
    const float4 *src = (const float4 *)(r->gathered + (c0 + t) * CSA_ATTN_DIM + d0) + f % per_row;
    kf[i] = c0 + t < r->count ? __ldg(src) : csa_zero4();
  }
}

/* Stores a stage's loads (csa_scores_load's qf and kf) into the tile's shared query and key rows. */
template <class T>
static __device__ __forceinline__ void csa_scores_stage(float (*qs)[T::k + 4], float (*ks)[T::k + 4],
                                                        const float4 *qf, const float4 *kf) {
  const int per_row = T::k / 4;
  int i;
#pragma unroll
  for (i = 0; i < T::q_loads; i++) {
    const int f = (int)threadIdx.x + T::threads * i;
    *(float4 *)&qs[f / per_row][4 * (f % per_row)] = qf[i];
  }
#pragma unroll
  for (i = 0; i < T::k_loads; i++) {
    const int f = (int)threadIdx.x + T::threads * i;
    *(float4 *)&ks[f / per_row][4 * (f % per_row)] = kf[i];
  }
}

/*
** Units (bs, head tile, candidate tile), block-stride; warp w scores
** candidate c0 + lane for heads h0 + w * T::warp_heads onwards, one chain
** each: a staged key float4 is read once for the warp's heads, whose query
** float4s are the same for every lane (broadcast reads).  The next stage's
** loads are in flight while this one is multiplied.
*/
template <class T, class RowAt>
static __device__ void csa_attn_scores(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                       long long heads, long long stride) {
  __shared__ __align__(16) float qs[T::heads][T::k + 4];
  __shared__ __align__(16) float ks[CSA_TILE_CANDS][T::k + 4]; /* + 4: a quarter warp's rows on distinct banks */
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int first = T::warp_heads * warp; /* the warp's first head in the tile */
  const long long htiles = (heads + T::heads - 1) / T::heads;
  const long long ctiles = (stride + CSA_TILE_CANDS - 1) / CSA_TILE_CANDS;
  long long unit;
  for (unit = blockIdx.x; unit < bs_rows * htiles * ctiles; unit += gridDim.x) {
    const long long q = csa_div_ll(unit, ctiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * T::heads, c0 = (unit - q * ctiles) * CSA_TILE_CANDS;
    const long long c = c0 + lane;
    csa_attention_row r;
    const float *kv;
    const nx_u8 *rec;
    float acc[T::warp_heads];
    int live, d0, i, j;
#pragma unroll
    for (j = 0; j < T::warp_heads; j++) acc[j] = 0.0f;
    row_at(bs * heads + h0, &r);
    live = csa_candidate(&r, cur, c, &kv, &rec);
    csa_chain_wait();
    __syncthreads(); /* the previous unit is done with qs and ks */
    if (c0 < r.count) { /* else the tile is wholly past the candidates, all -inf (block-uniform) */
      float4 qf[T::q_loads], kf[T::k_loads];
      csa_scores_load<T>(qf, kf, &r, heads, h0, c0, 0);
      for (d0 = 0; d0 < CSA_ATTN_DIM; d0 += T::k) {
        if (d0) __syncthreads(); /* the previous stage is read */
        csa_scores_stage<T>(qs, ks, qf, kf);
        __syncthreads();
        if (d0 + T::k < CSA_ATTN_DIM) csa_scores_load<T>(qf, kf, &r, heads, h0, c0, d0 + T::k);
        if (h0 + first < heads) { /* warp-uniform */
#pragma unroll 4
          for (i = 0; i < T::k; i += 4) {
            const float4 k4 = *(const float4 *)&ks[lane][i];
#pragma unroll
            for (j = 0; j < T::warp_heads; j++) acc[j] = csa_dot4(acc[j], *(const float4 *)&qs[first + j][i], k4);
          }
        }
      }
    }
    if (c >= stride) continue;
#pragma unroll
    for (j = 0; j < T::warp_heads; j++) {
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
** The values pass's loads of candidates c0 .. c0 + T::chunk - 1:
** probability i of thread t is number t + T::threads * i of the chunk's
** [heads][candidates] (-inf past count or heads; the rows are stride
** floats apart, so not 16-byte aligned), and float4 i of the values likewise
** of [candidates][dims] (zeros past count).
*/
template <class T>
static __device__ __forceinline__ void csa_values_load(float *pf, float4 *vf, const csa_attention_row *r,
                                                       long long heads, long long h0, long long c0, int d0) {
  const int per_row = T::dims / 4;
  int i;
#pragma unroll
  for (i = 0; i < T::p_loads; i++) {
    const int f = (int)threadIdx.x + T::threads * i, j = f / T::chunk;
    const long long c = c0 + f % T::chunk;
    pf[i] = h0 + j < heads && c < r->count ? r->weights[j * r->stride + c] : csa_neg_inf();
  }
#pragma unroll
  for (i = 0; i < T::v_loads; i++) {
    const int f = (int)threadIdx.x + T::threads * i, t = f / per_row;
    const float4 *src = (const float4 *)(r->gathered + (c0 + t) * CSA_ATTN_DIM + d0) + f % per_row;
    vf[i] = c0 + t < r->count ? __ldg(src) : csa_zero4();
  }
}

/* acc + p * v, a term of each of a lane's four dims' chains of one head. */
static __device__ __forceinline__ float4 csa_values_term(float4 acc, float p, float4 v) {
  acc.x = acc.x + p * v.x;
  acc.y = acc.y + p * v.y;
  acc.z = acc.z + p * v.z;
  acc.w = acc.w + p * v.w;
  return acc;
}

/*
** Units (bs, head tile, dim tile), block-stride; warp w owns heads h0 +
** w * T::warp_heads onwards, lane l dims d0 + 4l .. d0 + 4l + 3: a
** chain per (head, dim), each over the candidates in order.  Chunks of
** T::chunk candidates are staged with the next chunk's loads in flight.  A
** warp whose heads have no dead candidate in a chunk runs it without the
** per-term test, four candidates a step (each head's four probabilities one
** broadcast read).
*/
template <class T, class RowAt>
static __device__ void csa_attn_values(const RowAt &row_at, long long bs_rows, long long heads) {
  __shared__ __align__(16) float ps[T::heads][T::chunk];
  __shared__ __align__(16) float vs[T::chunk][T::dims];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, per_row = T::dims / 4;
  const int first = T::warp_heads * warp; /* the warp's first head in the tile */
  const long long htiles = (heads + T::heads - 1) / T::heads, dtiles = CSA_ATTN_DIM / T::dims;
  long long unit;
  for (unit = blockIdx.x; unit < bs_rows * htiles * dtiles; unit += gridDim.x) {
    const long long q = csa_div_ll(unit, dtiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * T::heads;
    const int d0 = (int)(unit - q * dtiles) * T::dims, dl = 4 * lane;
    const int heads_here = (int)csa_min_ll(T::warp_heads, csa_max_ll(heads - h0 - first, 0));
    csa_attention_row r;
    float4 acc[T::warp_heads];
    float pf[T::p_loads];
    float4 vf[T::v_loads];
    long long c0;
    int i, j, t;
#pragma unroll
    for (j = 0; j < T::warp_heads; j++) acc[j] = csa_zero4();
    row_at(bs * heads + h0, &r);
    csa_chain_wait();
    csa_values_load<T>(pf, vf, &r, heads, h0, 0, d0);
    for (c0 = 0; c0 < r.count; c0 += T::chunk) {
      const int n = (int)csa_min_ll(T::chunk, r.count - c0);
      __syncthreads(); /* the previous chunk's (or unit's) ps and vs are read */
#pragma unroll
      for (i = 0; i < T::p_loads; i++) {
        const int f = tid + T::threads * i;
        ps[f / T::chunk][f % T::chunk] = pf[i];
      }
#pragma unroll
      for (i = 0; i < T::v_loads; i++) {
        const int f = tid + T::threads * i;
        *(float4 *)&vs[f / per_row][4 * (f % per_row)] = vf[i];
      }
      __syncthreads(); /* ps and vs are filled */
      if (c0 + T::chunk < r.count) csa_values_load<T>(pf, vf, &r, heads, h0, c0 + T::chunk, d0);
      if (heads_here > 0) { /* warp-uniform */
        int dead = 0;
        for (j = 0; j < heads_here; j++)
          for (i = lane; i < n; i += 32) dead |= nx_csa_is_neg_inf(ps[first + j][i]);
        if (__any_sync(0xffffffffu, dead)) {
          for (i = 0; i < n; i++) {
            const float4 v = *(const float4 *)&vs[i][dl];
#pragma unroll
            for (j = 0; j < T::warp_heads; j++) {
              const float p = ps[first + j][i];
              if (!nx_csa_is_neg_inf(p)) acc[j] = csa_values_term(acc[j], p, v);
            }
          }
        } else { /* the heads past heads_here run on -inf and are never stored */
          for (i = 0; i + 4 <= n; i += 4) {
            float4 p4[T::warp_heads];
#pragma unroll
            for (j = 0; j < T::warp_heads; j++) p4[j] = *(const float4 *)&ps[first + j][i];
#pragma unroll
            for (t = 0; t < 4; t++) {
              const float4 v = *(const float4 *)&vs[i + t][dl];
#pragma unroll
              for (j = 0; j < T::warp_heads; j++)
                acc[j] = csa_values_term(acc[j], t == 0 ? p4[j].x : t == 1 ? p4[j].y : t == 2 ? p4[j].z : p4[j].w, v);
            }
          }
          for (; i < n; i++) {
            const float4 v = *(const float4 *)&vs[i][dl];
#pragma unroll
            for (j = 0; j < T::warp_heads; j++) acc[j] = csa_values_term(acc[j], ps[first + j][i], v);
          }
        }
      }
    }
#pragma unroll
    for (j = 0; j < T::warp_heads; j++) /* a constant j keeps acc in registers */
      if (j < heads_here) *(float4 *)(r.y + (first + j) * CSA_ATTN_DIM + d0 + dl) = acc[j];
  }
}

#endif /* CSA_ATTENTION_CHAINS_H */
