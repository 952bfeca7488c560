/*
** csa_attention_narrow.h: the narrow scores tile of the fast CSA sink
** attention, the one a decode step with few (b, s) row groups runs (B = 1:
** 64 output rows, 640 candidates).  CUDA C++, included by
** csa_attention_tiles.h after csa_attention_chains.h, whose scores stage
** (csa_narrow_scores, csa_scores_load, csa_scores_stage, csa_dot4) it
** shares.
**
**   csa_attn_scores_pairs  CSA_NARROW_SCORE_HEADS heads x CSA_TILE_CANDS
**                          candidates on 4 warps: lane l of warp w holds
**                          the chains of heads 4w + 2(l / 16) + {0, 1} for
**                          candidates l % 16 + {0, 16}.
**
** Why two by two: at ratio 128, 64K, B = 1 it took the attention 31.1 ->
** 29.6 us against a candidate a lane and 4 heads a warp (csa_attn_scores<T>'s
** tile); at ratio 4 it did not move.  Not by fewer shared-memory
** wavefronts, as first reckoned: ncu counts 2 for a query float4 (every
** lane of a quarter warp on one head) and 4 for a key float4 (a wavefront
** for each quarter warp's 8 rows, though lanes l and l + 16 read the same
** ones), so 16 terms a lane take 12 wavefronts in either tile.  Reordering
** the lanes so that two quarter warps share their rows left it at 4
** (docs/SPEED.md, thirty-third round).  An SM's 4 warps ask for 48
** wavefronts for each 32 cycles of their products: 6,144 an SM a pass, 3.1
** us of shared-memory pipe at 1,980 MHz against 2.1 us of issue.  Yet one
** warp alone runs the stage nearly as slowly (`bench --loops`: 15.2
** cycles a dim against 16.5), held by its loads' latency.
**
** The sums are csa_attention_chains.h's, term for term: a score is q[d] *
** k[d] added over d ascending from +0, then * scale (+ bias), -inf where
** the candidate is not live.
*/
#ifndef CSA_ATTENTION_NARROW_H
#define CSA_ATTENTION_NARROW_H

static_assert(CSA_NARROW_SCORE_THREADS == 128 && CSA_NARROW_SCORE_HEADS == 16, "4 warps of 2 x 16 lanes");

/*
** One staged stage of a pairs thread: acc[e][f] + q[d] * k[d] over the
** stage's dims d ascending, for heads hl + e of qs and candidates cl + 16f
** of ks; the next four dims' four float4s are read while these are
** multiplied.  Apart from the pass so that `bench --loops` times this very
** loop alone (loop_probe.cu).
*/
static __device__ __forceinline__ void csa_pairs_stage(float (*acc)[2], const float (*qs)[csa_narrow_scores::k + 4],
                                                       const float (*ks)[csa_narrow_scores::k + 4], int hl, int cl) {
  const int k = csa_narrow_scores::k;
  float4 qa = *(const float4 *)&qs[hl][0], qb = *(const float4 *)&qs[hl + 1][0];
  float4 ka = *(const float4 *)&ks[cl][0], kb = *(const float4 *)&ks[cl + 16][0];
  int i;
  /* 32 dims an iteration: faster than 16, and than the whole stage (docs/SPEED.md, thirty-second round) */
#pragma unroll 8
  for (i = 0; i < k; i += 4) {
    const int next = i + 4 < k ? i + 4 : 0; /* the last step rereads dims 0..3, unused */
    const float4 nqa = *(const float4 *)&qs[hl][next], nqb = *(const float4 *)&qs[hl + 1][next];
    const float4 nka = *(const float4 *)&ks[cl][next], nkb = *(const float4 *)&ks[cl + 16][next];
    acc[0][0] = csa_dot4(acc[0][0], qa, ka);
    acc[0][1] = csa_dot4(acc[0][1], qa, kb);
    acc[1][0] = csa_dot4(acc[1][0], qb, ka);
    acc[1][1] = csa_dot4(acc[1][1], qb, kb);
    qa = nqa, qb = nqb, ka = nka, kb = nkb;
  }
}

/*
** Units (bs, head tile, candidate tile), block-stride.  The stage is the
** template tile's (csa_narrow_scores: q and the gathered keys staged 64 dims
** at a time, the next stage's loads in flight); within it the next four
** dims' four float4s are read while these are multiplied.
*/
template <class RowAt>
static __device__ void csa_attn_scores_pairs(const RowAt &row_at, const csa_cursor *cur, long long bs_rows,
                                             long long heads, long long stride) {
  typedef csa_narrow_scores T;
  __shared__ __align__(16) float qs[T::heads][T::k + 4];
  __shared__ __align__(16) float ks[CSA_TILE_CANDS][T::k + 4]; /* + 4: a quarter warp's rows on distinct banks */
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int hl = 4 * warp + 2 * (lane / 16), cl = lane % 16; /* the thread's first head and candidate in the tile */
  const long long htiles = (heads + T::heads - 1) / T::heads;
  const long long ctiles = (stride + CSA_TILE_CANDS - 1) / CSA_TILE_CANDS;
  long long unit;
  for (unit = blockIdx.x; unit < bs_rows * htiles * ctiles; unit += gridDim.x) {
    const long long q = csa_div_ll(unit, ctiles), bs = csa_div_ll(q, htiles);
    const long long h0 = (q - bs * htiles) * T::heads, c0 = (unit - q * ctiles) * CSA_TILE_CANDS;
    csa_attention_row r;
    const float *kv;
    const nx_u8 *rec;
    float acc[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}}; /* [head][candidate] */
    int live[2], d0, e, f;
    row_at(bs * heads + h0, &r);
    live[0] = csa_candidate(&r, cur, c0 + cl, &kv, &rec);
    live[1] = csa_candidate(&r, cur, c0 + cl + 16, &kv, &rec);
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
        csa_pairs_stage(acc, qs, ks, hl, cl); /* heads past `heads` read the zero rows staged, never stored */
      }
    }
#pragma unroll
    for (e = 0; e < 2; e++)
#pragma unroll
      for (f = 0; f < 2; f++) {
        const long long h = h0 + hl + e, c = c0 + cl + 16 * f;
        float score = csa_neg_inf();
        if (h >= heads || c >= stride) continue;
        if (live[f]) { /* row h's scale and bias are row h0's; only the head differs */
          score = acc[e][f] * r.scale;
          if (r.bias) score = score + csa_bias_at(r.bias, r.bias_dims, r.b, h, r.s, c);
        }
        r.scores[(hl + e) * stride + c] = score;
      }
  }
}

#endif /* CSA_ATTENTION_NARROW_H */
