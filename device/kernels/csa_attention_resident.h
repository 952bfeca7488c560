/*
** csa_attention_resident.h: the scores pass of the fast CSA sink attention
** for few (b, s) row groups (B = 1: 64 output rows, 640 candidates), with
** its candidates' keys decoded by the pass itself and held whole in shared
** memory.  CUDA C++, included by csa_attention_tiles.h after
** csa_attention_chains.h (csa_dot4, csa_zero4) and csa_attention_staging.h
** (the decoding).
**
**   csa_attn_scores_resident  CSA_RESIDENT_HEADS heads x CSA_RESIDENT_CANDS
**                             candidates on 4 consumer warps: lane l of
**                             warp w holds the chains of heads 8w + 4(l /
**                             16) + {0..3} for candidate l % 16; 4
**                             producer warps decode the rows and stage
**                             the query.
**
** Why: where this tile runs (B = 1), the gather pass (csa_attn_gather) was
** a kernel of its own, and the scores pass waited for it to end, about 0.8
** us after its last block, then loaded the decoded rows back 64 dims at a
** time.  Here a block decodes the 16 rows it scores straight from the
** cache into shared memory (33 KB: all 512 dims), so no gather is
** launched; the rows the values pass reads still go to the gathered
** scratch, the head tiles of a candidate tile sharing the writing
** (candidate j by head tile j % tiles).  The decoding is spread over the
** chains' stages by producer warps: decoded whole before the first stage
** (4 warps, 4 rows each), it ended 5.4 us into the pass, where the gather
** had ended at 2.3, and the pass lost 1.3 us; a stage at a time, the first
** stage is ready at about 3.0 us and the pass ends at 9.1 against 10.1
** (docs/SPEED.md, thirty-fourth round).
**
** The sums are csa_attention_chains.h's, term for term: a score is q[d] *
** k[d] added over d ascending from +0, then * scale (+ bias), -inf where
** the candidate is not live; a row's decoded values are the gather's
** (csa_fetched_value), zeros where the candidate is not live.
*/
#ifndef CSA_ATTENTION_RESIDENT_H
#define CSA_ATTENTION_RESIDENT_H

#define CSA_RESIDENT_K 32 /* dims a stage: the query's, staged twice over; the rows' decoded into place */
#define CSA_RESIDENT_STAGES (CSA_ATTN_DIM / CSA_RESIDENT_K)                                   /* 16 */
#define CSA_RESIDENT_PRODUCERS (CSA_RESIDENT_THREADS - CSA_RESIDENT_CONSUMERS)                 /* 128 */
#define CSA_RESIDENT_CONSUMERS 128
#define CSA_RESIDENT_QUERY_LOADS (CSA_RESIDENT_HEADS * CSA_RESIDENT_K / 4 / CSA_RESIDENT_PRODUCERS) /* 2 */
#define CSA_RESIDENT_ROW_THREADS (CSA_RESIDENT_PRODUCERS / CSA_RESIDENT_CANDS)                 /* 8: 4 dims each a stage */
#define CSA_RESIDENT_QUERY_AHEAD 3 /* query stages in flight */
#define CSA_RESIDENT_ROW_AHEAD 8   /* stages of a producer's row bytes in flight */
#define CSA_RESIDENT_BAR_FULL 1    /* + buffer: the stage is staged (named barriers 1, 2) */
#define CSA_RESIDENT_BAR_EMPTY 3   /* + buffer: the consumers are done with its query (3, 4) */

static_assert(CSA_RESIDENT_THREADS == 256 && CSA_RESIDENT_HEADS == 32 && CSA_RESIDENT_CANDS == 16,
              "4 consumer warps of 2 x 16 lanes, 4 heads a lane; 4 producer warps, 8 threads a row");
static_assert(CSA_RESIDENT_ROW_THREADS * 4 == CSA_RESIDENT_K, "a producer decodes a float4 of its row a stage");

/* The query's float4s of stage j for heads h0.. (zeros past heads): float4 i of producer p is number p + 128 i. */
static __device__ __forceinline__ void csa_resident_query(float4 *qf, const csa_attention_row *r, long long heads,
                                                          long long h0, int p, int j) {
  const int per_row = CSA_RESIDENT_K / 4;
  int i;
#pragma unroll
  for (i = 0; i < CSA_RESIDENT_QUERY_LOADS; i++) {
    const int f = p + CSA_RESIDENT_PRODUCERS * i, h = f / per_row;
    const float4 *src = (const float4 *)(r->query + h * CSA_ATTN_DIM + CSA_RESIDENT_K * j) + f % per_row;
    qf[i] = h0 + h < heads ? *src : csa_zero4();
  }
}

/*
** One query stage of a thread's four chains: acc[e] + q[d] * k[d] over the
** stage's dims d ascending, for heads hl + e of qs and the thread's
** candidate's row from the stage's first dim, kr; the next four dims' five
** float4s are read while these are multiplied.  Apart from the pass so
** that `bench --loops` times this very loop alone (loop_probe.cu).
*/
static __device__ __forceinline__ void csa_resident_stage(float *acc, const float (*qs)[CSA_RESIDENT_K + 4],
                                                          const float *kr, int hl) {
  float4 q0 = *(const float4 *)&qs[hl][0], q1 = *(const float4 *)&qs[hl + 1][0];
  float4 q2 = *(const float4 *)&qs[hl + 2][0], q3 = *(const float4 *)&qs[hl + 3][0];
  float4 k4 = *(const float4 *)kr;
  int i;
#pragma unroll
  for (i = 0; i < CSA_RESIDENT_K; i += 4) {
    const int next = i + 4 < CSA_RESIDENT_K ? i + 4 : 0; /* the last step rereads dims 0..3, unused */
    const float4 n0 = *(const float4 *)&qs[hl][next], n1 = *(const float4 *)&qs[hl + 1][next];
    const float4 n2 = *(const float4 *)&qs[hl + 2][next], n3 = *(const float4 *)&qs[hl + 3][next];
    const float4 nk = *(const float4 *)(kr + next);
    acc[0] = csa_dot4(acc[0], q0, k4);
    acc[1] = csa_dot4(acc[1], q1, k4);
    acc[2] = csa_dot4(acc[2], q2, k4);
    acc[3] = csa_dot4(acc[3], q3, k4);
    q0 = n0, q1 = n1, q2 = n2, q3 = n3, k4 = nk;
  }
}

/*
** The producers' side of a unit.  Producer p decodes dims 4 (p % 8) .. + 3
** of every stage of candidate c0 + p / 8: its row's bytes are fetched
** CSA_RESIDENT_ROW_AHEAD stages ahead (half the row at once: one wait on
** the cache before the first stage), and each stage's four values are
** decoded into the row's place in ks (and into the gathered scratch where
** this head tile writes the row) beside that stage's query, which runs
** CSA_RESIDENT_QUERY_AHEAD stages ahead; stage j is released on FULL + j % 2,
** its query buffer reused only past EMPTY + j % 2.
*/
static __device__ __forceinline__ void csa_resident_produce(float (*ks)[CSA_ATTN_DIM + 4],
                                                            float (*qs)[CSA_RESIDENT_HEADS][CSA_RESIDENT_K + 4],
                                                            const csa_decode_tables *dt, const csa_attention_row *r,
                                                            const csa_cursor *cur, long long heads, long long h0,
                                                            long long c0, long long htile, long long htiles) {
  const int p = (int)threadIdx.x - CSA_RESIDENT_CONSUMERS, t = p / CSA_RESIDENT_ROW_THREADS;
  const int dim = 4 * (p % CSA_RESIDENT_ROW_THREADS), per_row = CSA_RESIDENT_K / 4;
  const long long c = c0 + t, slot = c - r->n_dense;
  const int in = c >= r->n_dense && c < r->count;
  const int picked = in && r->selection ? __ldg(r->selection + slot) : 0; /* csa_candidate_record's, unbranched */
  const int writes = c < r->count && t % htiles == htile;
  float4 qf[CSA_RESIDENT_QUERY_AHEAD][CSA_RESIDENT_QUERY_LOADS];
  csa_fetched f[CSA_RESIDENT_ROW_AHEAD][4];
  const void *row;
  unsigned char kind;
  int j, e, i;
#pragma unroll
  for (j = 0; j < CSA_RESIDENT_QUERY_AHEAD; j++) csa_resident_query(qf[j], r, heads, h0, p, j);
  csa_cand_entry(&row, &kind, 0, r, cur, c, !in ? -1 : r->selection ? (long long)picked : slot);
#pragma unroll
  for (j = 0; j < CSA_RESIDENT_ROW_AHEAD; j++)
#pragma unroll
    for (e = 0; e < 4; e++) f[j][e] = csa_fetch(row, kind, CSA_RESIDENT_K * j, dim + e);
#pragma unroll
  for (j = 0; j < CSA_RESIDENT_STAGES; j++) {
    const int base = CSA_RESIDENT_K * j;
    const int d = base + dim;
    float4 v;
    if (j >= 2) csa_bar_sync(CSA_RESIDENT_BAR_EMPTY + j % 2, CSA_RESIDENT_THREADS);
#pragma unroll
    for (i = 0; i < CSA_RESIDENT_QUERY_LOADS; i++) {
      const int g = p + CSA_RESIDENT_PRODUCERS * i;
      *(float4 *)&qs[j % 2][g / per_row][4 * (g % per_row)] = qf[j % CSA_RESIDENT_QUERY_AHEAD][i];
    }
    if (j + CSA_RESIDENT_QUERY_AHEAD < CSA_RESIDENT_STAGES)
      csa_resident_query(qf[j % CSA_RESIDENT_QUERY_AHEAD], r, heads, h0, p, j + CSA_RESIDENT_QUERY_AHEAD);
    v.x = csa_fetched_value(dt, kind, base, f[j % CSA_RESIDENT_ROW_AHEAD][0]);
    v.y = csa_fetched_value(dt, kind, base, f[j % CSA_RESIDENT_ROW_AHEAD][1]);
    v.z = csa_fetched_value(dt, kind, base, f[j % CSA_RESIDENT_ROW_AHEAD][2]);
    v.w = csa_fetched_value(dt, kind, base, f[j % CSA_RESIDENT_ROW_AHEAD][3]);
    if (j + CSA_RESIDENT_ROW_AHEAD < CSA_RESIDENT_STAGES)
#pragma unroll
      for (e = 0; e < 4; e++)
        f[j % CSA_RESIDENT_ROW_AHEAD][e] = csa_fetch(row, kind, CSA_RESIDENT_K * (j + CSA_RESIDENT_ROW_AHEAD), dim + e);
    *(float4 *)&ks[t][d] = v;
    if (writes) *(float4 *)(r->gathered + c * CSA_ATTN_DIM + d) = v;
    csa_bar_arrive(CSA_RESIDENT_BAR_FULL + j % 2, CSA_RESIDENT_THREADS);
  }
}

/*
** Units (bs, head tile, candidate tile), block-stride.  Warps 0-3 (the
** consumers) run the chains, a stage at a time as the producers (warps 4-7,
** csa_resident_produce) release it; the rows stay in ks for the whole
** unit, the query comes in stages of CSA_RESIDENT_K dims, two buffers.
*/
template <class RowAt>
static __device__ void csa_attn_scores_resident(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                                long long heads, long long stride) {
  __shared__ __align__(16) float ks[CSA_RESIDENT_CANDS][CSA_ATTN_DIM + 4]; /* + 4: a quarter warp's rows on distinct banks */
  __shared__ __align__(16) float qs[2][CSA_RESIDENT_HEADS][CSA_RESIDENT_K + 4];
  __shared__ csa_decode_tables dt;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int hl = 8 * warp + 4 * (lane / 16), cl = lane % 16; /* a consumer's first head and its candidate */
  const long long htiles = (heads + CSA_RESIDENT_HEADS - 1) / CSA_RESIDENT_HEADS;
  const long long ctiles = (stride + CSA_RESIDENT_CANDS - 1) / CSA_RESIDENT_CANDS;
  long long unit;
  csa_decode_tables_fill(&dt);
  for (unit = blockIdx.x; unit < bs_rows * htiles * ctiles; unit += gridDim.x) {
    const long long q = csa_div_ll(unit, ctiles), bs = csa_div_ll(q, htiles), htile = q - bs * htiles;
    const long long h0 = htile * CSA_RESIDENT_HEADS, c0 = (unit - q * ctiles) * CSA_RESIDENT_CANDS;
    const int consumer = (int)threadIdx.x < CSA_RESIDENT_CONSUMERS; /* warp-uniform */
    csa_attention_row r;
    const float *kv;
    const nx_u8 *rec;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int live = 0, j, e;
    row_at(bs * heads + h0, &r);
    if (consumer) live = csa_candidate(&r, cur, c0 + cl, &kv, &rec);
    csa_chain_wait();
    __syncthreads(); /* the previous unit is done with qs and ks; dt is filled */
    if (c0 >= r.count) { /* the tile is wholly past the candidates, all -inf (block-uniform) */
    } else if (!consumer) {
      csa_resident_produce(ks, qs, &dt, &r, cur, heads, h0, c0, htile, htiles);
      continue;
    } else {
#pragma unroll 2 /* each buffer's barriers and rows known at compile time: 24.3 -> 24.1 us (thirty-fourth round) */
      for (j = 0; j < CSA_RESIDENT_STAGES; j++) {
        csa_bar_sync(CSA_RESIDENT_BAR_FULL + j % 2, CSA_RESIDENT_THREADS);
        csa_resident_stage(acc, qs[j % 2], &ks[cl][CSA_RESIDENT_K * j], hl);
        if (j + 2 < CSA_RESIDENT_STAGES) csa_bar_arrive(CSA_RESIDENT_BAR_EMPTY + j % 2, CSA_RESIDENT_THREADS);
      }
    }
    if (!consumer) continue;
#pragma unroll
    for (e = 0; e < 4; e++) {
      const long long h = h0 + hl + e, c = c0 + cl;
      float score = csa_neg_inf();
      if (h >= heads || c >= stride) continue;
      if (live) { /* row h's scale and bias are row h0's; only the head differs */
        score = acc[e] * r.scale;
        if (r.bias) score = score + csa_bias_at(r.bias, r.bias_dims, r.b, h, r.s, c);
      }
      r.scores[(hl + e) * stride + c] = score;
    }
  }
}

#endif /* CSA_ATTENTION_RESIDENT_H */
