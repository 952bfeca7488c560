/*
** index_share_row_scores.h: the scores, max, exps and probabilities of a tile of
** IndexShare attention rows (index_share_rows.h says how the work is split).
** CUDA C++, included by index_share.cu only (after index_share_abi.h,
** numerics.h, index_share_access.h and index_share_rows.h).
*/
#ifndef INDEX_SHARE_ROW_SCORES_H
#define INDEX_SHARE_ROW_SCORES_H

/* ---- scores ---- */

/*
** A warp's next slice into registers: lanes 8j .. 8j + 7 load one row's 128
** bytes (row 4i + j in load i), so each load is four whole lines.  pass is
** the slab at the slice's first dim.
*/
static __device__ __forceinline__ void is_kfetch(uint4 (&r)[8], const is_kv_slab &pass, int key, int nbytes,
                                                 int lane) {
  const int u = lane & 7;
#pragma unroll
  for (int i = 0; i < 8; i++) {
    const int k = __shfl_sync(IS_FULL_MASK, key, 4 * i + (lane >> 3));
    if (u * 16 < nbytes) r[i] = __ldg((const uint4 *)is_slab_row(pass, k) + u);
  }
}

static __device__ __forceinline__ void is_kstore(uint4 *kbuf, const uint4 (&r)[8], int nbytes,
                                                 int lane) {
  const int u = lane & 7;
#pragma unroll
  for (int i = 0; i < 8; i++)
    if (u * 16 < nbytes) kbuf[(4 * i + (lane >> 3)) * IS_KROW_UNITS + u] = r[i];
}

/* Rows that are not 16-byte aligned: element by element, same layout. */
template <int EB>
static __device__ void is_kcopy(uint4 *kbuf, const is_kv_slab &pass, int key, int nd, int lane) {
  for (int rr = 0; rr < 32; rr++) {
    const int k = __shfl_sync(IS_FULL_MASK, key, rr);
    unsigned char *dst = (unsigned char *)(kbuf + rr * IS_KROW_UNITS);
    const unsigned char *src = is_slab_row(pass, k);
    for (int e = lane; e < nd; e += 32) is_copy_elem<EB>(dst + e * EB, src + e * EB);
  }
}

/*
** nd dims of one staged key slice into the lane's HT chains, d ascending:
** acc[h] = acc[h] + qs[d][h] * (k[d] * sqrt_scale).  qs starts at the slice.
*/
template <int EB, int HT, bool F16>
static __device__ __forceinline__ void is_score_slice(const uint4 *krow, const float *qs, int nd,
                                                      float ss, float (&acc)[HT]) {
  constexpr int EPU = is_elem<EB>::per_unit;
  constexpr int QD = is_qbatch<HT>::dims, QV = is_qbatch<HT>::vecs;
  const float4 *q4 = (const float4 *)qs;
  const int units = nd / EPU;
  int dl;
#pragma unroll(HT > 1 ? 1 : 2)
  for (int u = 0; u < units; u++) {
    float k[EPU];
    is_widen_unit<EB, F16>(krow[u], k);
#pragma unroll
    for (int e0 = 0; e0 < EPU; e0 += QD) {
      float q[4 * QV];
#pragma unroll
      for (int i = 0; i < QV; i++) {
        const float4 v = q4[(u * EPU + e0) * HT / 4 + i];
        q[4 * i] = v.x, q[4 * i + 1] = v.y, q[4 * i + 2] = v.z, q[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int e = 0; e < QD; e++) {
        const float ks = k[e0 + e] * ss;
#pragma unroll
        for (int h = 0; h < HT; h++) acc[h] = acc[h] + q[e * HT + h] * ks;
      }
    }
  }
  for (dl = units * EPU; dl < nd; dl++) {
    const float ks = is_widen_at<EB, F16>((const unsigned char *)krow + dl * EB) * ss;
#pragma unroll
    for (int h = 0; h < HT; h++) acc[h] = acc[h] + qs[dl * HT + h] * ks;
  }
}

/* Dims in slice c of a pass of dq dims, dcw a whole slice. */
static __device__ __forceinline__ int is_slice_dims(int dq, int c, int dcw) {
  return dcw < dq - c * dcw ? dcw : dq - c * dcw;
}

/*
** Every selection's score for the tile's heads into the scores row (and the
** trace), and each lane's running max per head into mloc.  Columns, keys and
** row pitches are int: a row of 2^31 columns would need 8 GiB of scratch.
*/
template <int EB, int HT>
static __device__ __forceinline__ void is_row_scores(const is_row_args &a, const is_row_tile &t,
                                                     bool vec, float (&mloc)[HT]) {
  constexpr int DCW = IS_KCHUNK_BYTES / EB, QDIMS = IS_QS_FLOATS / HT;
  constexpr int AHEAD = HT == 1 ? 2 : 1; /* slices in flight: one-head tiles have the registers for two */
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int valid = (int)t.valid, ngroups = (valid + 31) / 32;
  const int my_groups = warp < ngroups ? (ngroups - 1 - warp) / IS_ROW_WARPS + 1 : 0;
  const int row_bytes = (int)(a.head_size * EB);
  const is_kv_slab kslab = is_slab_of(a, a.key_lo, a.key_hi, t.bh, row_bytes);
  const bool f16 = a.storage == IS_STORAGE_F16;
  const void *query = a.query;
  uint4 *kbuf = is_sh.u.score.k[warp];
  float *qs = (float *)is_sh.u.score.q;
  long long d0;

#pragma unroll
  for (int h = 0; h < HT; h++) mloc[h] = nx_f32_from_bits(IS_NEG_INF_BITS);
  for (d0 = 0; d0 < a.head_size; d0 += QDIMS) {
    const int dq = (int)is_min_ll(QDIMS, a.head_size - d0), nchunk = (dq + DCW - 1) / DCW;
    const int nit = my_groups * nchunk;
    const bool last = d0 + dq == a.head_size;
    const is_kv_slab kpass = is_slab_at(kslab, (int)(d0 * EB));
    int key[3], it, c, g, fc, fq; /* key[k]: the lane's key in the warp's group g + k * IS_ROW_WARPS */
    uint4 r[AHEAD][8];               /* slices it .. it + AHEAD - 1, oldest first */
    float acc[HT];

    __syncthreads(); /* the previous pass is done with qs */
    for (int i = tid; i < dq * HT; i += IS_ROW_THREADS) {
      const int h = i % HT;
      const long long at = (t.row0 + h * a.q_seq) * a.head_size + d0 + i / HT;
      float acc = 0.0f; /* 0 + q * s is q * s, but -0 turns +0: no score can tell, since
                           a chain from +0 never holds -0 */
      if (h < t.nh) acc = acc + (is_load(query, at, a.storage) * a.sqrt_scale); /* IS_PLANT_SCORE */
      qs[i] = acc;
    }
    __syncthreads();
    if (nit == 0) continue;
#pragma unroll
    for (int k = 0; k < 3; k++) key[k] = is_lane_key(a, t, (warp + k * IS_ROW_WARPS) * 32 + lane);
    /* slice (fq, fc), fq groups after g, is the next to fetch */
    fq = fc = 0;
#pragma unroll
    for (int k = 0; k < AHEAD; k++)
      if (k < nit) {
        if (vec)
          is_kfetch(r[k], is_slab_at(kpass, fc * IS_KCHUNK_BYTES), fq == 0 ? key[0] : key[1],
                    is_slice_dims(dq, fc, DCW) * EB, lane);
        if (++fc == nchunk) fc = 0, fq++;
      }
    for (it = 0, c = 0, g = warp; it < nit; it++) {
      const int s = g * 32 + lane, nd = is_slice_dims(dq, c, DCW);
      if (c == 0) {
#pragma unroll
        for (int h = 0; h < HT; h++)
          acc[h] = d0 > 0 && h < t.nh && s < valid
                       ? a.scores[(t.row0 + h * a.q_seq) * a.width + s] /* the chain so far */
                       : 0.0f;
      }
      if (vec)
        is_kstore(kbuf, r[0], nd * EB, lane);
      else
        is_kcopy<EB>(kbuf, is_slab_at(kpass, c * IS_KCHUNK_BYTES), key[0], nd, lane);
      __syncwarp();
      if (vec) { /* the next slices fly while this one is summed */
#pragma unroll
        for (int k = 0; k + 1 < AHEAD; k++)
#pragma unroll
          for (int i = 0; i < 8; i++) r[k][i] = r[k + 1][i];
        if (it + AHEAD < nit)
          is_kfetch(r[AHEAD - 1], is_slab_at(kpass, fc * IS_KCHUNK_BYTES),
                    fq == 0 ? key[0] : fq == 1 ? key[1] : key[2], is_slice_dims(dq, fc, DCW) * EB, lane);
        if (++fc == nchunk) fc = 0, fq++;
      }
      if (EB == 2 && f16)
        is_score_slice<EB, HT, true>(kbuf + lane * IS_KROW_UNITS, qs + c * DCW * HT, nd, a.sqrt_scale, acc);
      else
        is_score_slice<EB, HT, false>(kbuf + lane * IS_KROW_UNITS, qs + c * DCW * HT, nd, a.sqrt_scale, acc);
      __syncwarp();
      if (++c < nchunk) continue;
      if (s < valid) {
#pragma unroll
        for (int h = 0; h < HT; h++) {
          const long long at = (t.row0 + h * a.q_seq) * a.width + s;
          float score = acc[h];
          if (h >= t.nh) continue;
          if (last) {
            if (a.has_bias)
              score = score + is_bias_at(a.bias, a.storage, a.bd0, a.bd1, a.bd2, a.bd3, t.b,
                                         t.h0 + h, t.qi, key[0]);
            if (a.score_trace) a.score_trace[at] = score;
            mloc[h] = nx_maxf(mloc[h], score);
          }
          a.scores[at] = score;
        }
      }
      c = 0;
      g += IS_ROW_WARPS;
      fq--;
      key[0] = key[1], key[1] = key[2];
      key[2] = is_lane_key(a, t, (g + 2 * IS_ROW_WARPS) * 32 + lane);
    }
  }
}

/* The block's max per head (order-free); masked[h] when it is -inf. */
template <int HT>
static __device__ __forceinline__ void is_row_max(const is_row_tile &t, float (&mloc)[HT]) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
#pragma unroll
  for (int h = 0; h < HT; h++) {
    float m = mloc[h];
    for (int off = 16; off > 0; off >>= 1) m = nx_maxf(m, __shfl_xor_sync(IS_FULL_MASK, m, off));
    if (lane == 0) is_sh.wmax[warp][h] = m;
  }
  __syncthreads();
  if (tid < t.nh) {
    float m = nx_f32_from_bits(IS_NEG_INF_BITS);
    for (int w = 0; w < IS_ROW_WARPS; w++) m = nx_maxf(m, is_sh.wmax[w][tid]);
    is_sh.m[tid] = m;
    is_sh.masked[tid] = nx_f32_bits(m) == IS_NEG_INF_BITS;
    is_sh.inv[tid] = 0.0f;
  }
  __syncthreads();
}

/* ---- exps, their sums, probabilities ---- */

/*
** sum + e[0] + e[1] + ... + e[n - 1], left to right; e is 16-byte aligned.
** The loads run four float4s ahead of the adds, which are the critical path.
*/
static __device__ __forceinline__ float is_serial_sum(const float *e, int n, float sum) {
  const float4 *e4 = (const float4 *)e;
  const int nq = n >> 2;
  int q = 0, s;
  if (nq >= 4) {
    float4 x0 = e4[0], x1 = e4[1], x2 = e4[2], x3 = e4[3];
    for (q = 4; q + 4 <= nq; q += 4) {
      const float4 y0 = e4[q], y1 = e4[q + 1], y2 = e4[q + 2], y3 = e4[q + 3];
      sum = ordered_add4(ordered_add4(ordered_add4(ordered_add4(sum, x0), x1), x2), x3);
      x0 = y0, x1 = y1, x2 = y2, x3 = y3;
    }
    sum = ordered_add4(ordered_add4(ordered_add4(ordered_add4(sum, x0), x1), x2), x3);
  }
  for (; q < nq; q++) sum = ordered_add4(sum, e4[q]);
  for (s = nq * 4; s < n; s++) sum = sum + e[s];
  return sum;
}

/*
** e_s = exp(score_s - m) into the scores row, a pass of E columns at a time;
** lane h of warp 0 adds head h's exps of each pass in column order, so its
** sum runs over every column ascending; then inv[h] = 1 / sum.  E (columns
** a pass, and the buffer's row stride) is 4 mod 8 floats, so that the lanes'
** float4 reads hit distinct banks.  Head h's row is srow0 + h * head_pitch.
** A thread loads IS_EXP_BATCH of its scores before it exps any: one at a
** time, each waited out a load from L2 (a quarter of the time of 8-head
** tiles; batches of 8 spilled at the 128-register cap).
** Not inlined (one copy of nx_expf), so it takes values: a reference to the
** kernel's arguments would keep them in local memory for the whole kernel.
*/
#define IS_EXP_BATCH 4
static __device__ __noinline__ void is_row_exps(float *srow0, long long head_pitch, long long valid, int nh,
                                                int E) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool chain = warp == 0 && lane < nh && !is_sh.masked[lane];
  float *eb = (float *)is_sh.u.e;
  float sum = 0.0f;
  long long c0;
  for (c0 = 0; c0 < valid; c0 += E) {
    const int kn = (int)is_min_ll(E, valid - c0), per_head = (kn + IS_ROW_THREADS - 1) / IS_ROW_THREADS;
    /* item i is head i / per_head, column tid + threads * (i % per_head); a batch's loads go first */
    for (int i0 = 0; i0 < nh * per_head; i0 += IS_EXP_BATCH) {
      float x[IS_EXP_BATCH];
#pragma unroll
      for (int b = 0; b < IS_EXP_BATCH; b++) {
        const int i = i0 + b, h = i / per_head, s = tid + IS_ROW_THREADS * (i - h * per_head);
        x[b] = i < nh * per_head && s < kn && !is_sh.masked[h] ? srow0[h * head_pitch + c0 + s] : 0.0f;
      }
#pragma unroll
      for (int b = 0; b < IS_EXP_BATCH; b++) {
        const int i = i0 + b, h = i / per_head, s = tid + IS_ROW_THREADS * (i - h * per_head);
        if (i < nh * per_head && s < kn && !is_sh.masked[h]) {
          const float e = nx_expf(x[b] - is_sh.m[h]);
          eb[h * E + s] = e;
          srow0[h * head_pitch + c0 + s] = e;
        }
      }
    }
    __syncthreads();
    if (chain) sum = is_serial_sum(eb + lane * E, kn, sum);
    __syncthreads(); /* before the next pass overwrites eb */
  }
  if (chain) {
    const float inv_sum = 1.0f / sum; /* IS_PLANT_NORM */
    is_sh.inv[lane] = inv_sum;
  }
  __syncthreads();
}

/* p_s = e_s * inv into the scores row; +0 for a masked head (no exps there). */
static __device__ __forceinline__ void is_row_probs(const is_row_args &a, const is_row_tile &t) {
  for (int h = 0; h < t.nh; h++) {
    float *srow = a.scores + (t.row0 + h * a.q_seq) * a.width;
    const float inv = is_sh.inv[h];
    const int masked = is_sh.masked[h];
    for (long long s = threadIdx.x; s < t.valid; s += IS_ROW_THREADS)
      srow[s] = masked ? 0.0f : srow[s] * inv;
  }
  __syncthreads(); /* the value stages copy these */
}

#endif /* INDEX_SHARE_ROW_SCORES_H */
