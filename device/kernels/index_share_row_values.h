/*
** index_share_row_values.h: the P.V phase of a tile of IndexShare attention rows
** (index_share_rows.h says how the work is split).
** CUDA C++, included by index_share.cu only (after index_share_abi.h,
** numerics.h, index_share_access.h and index_share_rows.h).
*/
#ifndef INDEX_SHARE_ROW_VALUES_H
#define INDEX_SHARE_ROW_VALUES_H

/* ---- values ---- */

/*
** One pass over dims [d0, d0 + dn): stages of `keys` keys, each a row slice
** of row_bytes from V's rows (src, at dim d0).  A thread's 16-byte pieces j
** (at most two: IS_VSTAGE_BYTES / 16 / threads) are (key piece_s[j], unit
** piece_u[j]) of every stage, its probability (head prob_h, key prob_s).
*/
struct is_vplan {
  is_kv_slab src;
  int dn, row_bytes, keys, units, stages;
  int piece_s[2], piece_u[2], prob_h, prob_s;
};

/* Stage i's index words into key slot i % IS_VKEY_SLOTS by cp.async: warp 0, a lane a key. */
static __device__ __forceinline__ void is_vkeys_copy(const is_row_args &a, const is_row_tile &t, const is_vplan &p,
                                                     int i) {
  const int s = threadIdx.x;
  const long long k = (long long)i * p.keys + s;
  long long *slot = is_sh.u.value.keys[i % IS_VKEY_SLOTS];
  if (s >= p.keys || k >= t.valid) return;
  if (a.index_is_i64)
    is_cp8(slot + s, (const long long *)a.indices + t.irow + k);
  else
    is_cp4((int *)slot + s, (const int *)a.indices + t.irow + k);
}

/* The clamped keys of this thread's pieces of stage i, from its key slot; row 0 past the selections. */
static __device__ __forceinline__ void is_vkeys(const is_row_args &a, const is_row_tile &t, const is_vplan &p,
                                                int i, int (&vkey)[2]) {
  const long long *slot = is_sh.u.value.keys[i % IS_VKEY_SLOTS];
#pragma unroll
  for (int j = 0; j < 2; j++)
    vkey[j] = p.piece_s[j] < p.keys && (long long)i * p.keys + p.piece_s[j] < t.valid
                  ? (int)is_key_at(slot, p.piece_s[j], a.index_is_i64, a.cache_seq)
                  : 0;
}

/* Stage i into ring slot i % IS_VSTAGES: value row slices, then probabilities [key][head]. */
template <int EB, int HT>
static __device__ __forceinline__ void is_vissue(const is_row_args &a, const is_row_tile &t,
                                                 const is_vplan &p, bool vec, int i,
                                                 const int (&vkey)[2]) {
  const int slot = i % IS_VSTAGES, k0 = i * p.keys;
  const int kn = (int)is_min_ll(p.keys, t.valid - k0);
  unsigned char *vd = (unsigned char *)is_sh.u.value.v[slot];
  float *pd = (float *)is_sh.u.value.p[slot];
  if (vec) {
#pragma unroll
    for (int j = 0; j < 2; j++)
      if (p.piece_s[j] < kn)
        is_cp16(vd + p.piece_s[j] * p.row_bytes + p.piece_u[j] * 16, is_slab_row(p.src, vkey[j]) + p.piece_u[j] * 16);
  } else {
    for (int idx = threadIdx.x; idx < kn * p.dn; idx += IS_ROW_THREADS) {
      const int s = idx / p.dn, dl = idx - s * p.dn;
      is_copy_elem<EB>(vd + s * p.row_bytes + dl * EB, is_slab_row(p.src, is_lane_key(a, t, k0 + s)) + dl * EB);
    }
  }
  if (p.prob_h < t.nh && p.prob_s < kn)
    is_cp4(pd + p.prob_s * HT + p.prob_h,
           a.scores + (t.row0 + p.prob_h * a.q_seq) * a.width + k0 + p.prob_s);
}

/* One step of a y chain: acc + p * v, p = srow_p[s].  IS_PLANT_VALUE */
static __device__ __forceinline__ float is_value_step(float acc, const float *srow_p, int s, float v) {
  acc = acc + srow_p[s] * v;
  return acc;
}

/*
** The stage's keys, in order, into this thread's chains acc[0 .. NHC): heads
** hb .. hb + NHC - 1 of the tile at dim d0 + dim.
*/
template <int EB, int HT, int NHC, bool F16>
static __device__ __forceinline__ void is_vconsume(int slot, int kn, int row_bytes, int dim, int hb,
                                                   float (&acc)[HT]) {
  static_assert(NHC == HT || NHC % 4 == 0, "a split thread's probabilities are whole float4s");
  const unsigned char *vb = (const unsigned char *)is_sh.u.value.v[slot] + dim * EB;
  const float *pb = (const float *)is_sh.u.value.p[slot];
  int s = 0;
  for (; s + 4 <= kn; s += 4) {
    float v[4], p[4 * NHC]; /* p[i * NHC + h]: key s + i, head hb + h */
#pragma unroll
    for (int i = 0; i < 4; i++) v[i] = is_widen_at<EB, F16>(vb + (s + i) * row_bytes);
    if constexpr (NHC == HT) { /* 4 keys x HT heads are contiguous */
#pragma unroll
      for (int i = 0; i < HT; i++) {
        const float4 x = ((const float4 *)(pb + s * HT))[i];
        p[4 * i] = x.x, p[4 * i + 1] = x.y, p[4 * i + 2] = x.z, p[4 * i + 3] = x.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int q = 0; q < NHC / 4; q++) {
          const float4 x = *(const float4 *)(pb + (s + i) * HT + hb + 4 * q);
          p[i * NHC + 4 * q] = x.x, p[i * NHC + 4 * q + 1] = x.y;
          p[i * NHC + 4 * q + 2] = x.z, p[i * NHC + 4 * q + 3] = x.w;
        }
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int h = 0; h < NHC; h++) acc[h] = is_value_step(acc[h], p, i * NHC + h, v[i]);
  }
  for (; s < kn; s++) {
    const float v = is_widen_at<EB, F16>(vb + s * row_bytes);
#pragma unroll
    for (int h = 0; h < NHC; h++) acc[h] = is_value_step(acc[h], pb, s * HT + hb + h, v);
  }
}

/* The thread's consume of stage c (kn keys): one kind and head split, chosen at run time. */
template <int EB, int HT>
static __device__ __forceinline__ void is_vconsume_any(int slot, int kn, int row_bytes, int dim, int hb, bool split,
                                                       bool f16, float (&acc)[HT]) {
  constexpr int HALF = HT % 8 == 0 ? HT / 2 : HT; /* a split thread's heads: whole float4s */
  if (HALF < HT && split) {
    if (EB == 2 && f16)
      is_vconsume<EB, HT, HALF, true>(slot, kn, row_bytes, dim, hb, acc);
    else
      is_vconsume<EB, HT, HALF, false>(slot, kn, row_bytes, dim, hb, acc);
  } else if (EB == 2 && f16) {
    is_vconsume<EB, HT, HT, true>(slot, kn, row_bytes, dim, 0, acc);
  } else {
    is_vconsume<EB, HT, HT, false>(slot, kn, row_bytes, dim, 0, acc);
  }
}

/*
** y[h][d] = sum over s ascending of p_s * v_s[d]; a masked head's y is +0.
** The ring: stage c is consumed after a barrier that also tells that every
** thread is done with stage c - 1, whose slot the copies issued next (stage
** c + IS_VSTAGES - 1) overwrite.  Thread t owns dim t % dn of a pass of dn
** dims; when two passes' worth of threads exist (dn <= IS_ROW_THREADS / 2)
** and the tile has 8 heads, threads t < dn own heads 0..3 and the next dn
** threads heads 4..7, so that no warp waits out the pass at the barrier:
** each chain is still one thread's, in key order.
*/
template <int EB, int HT>
static __device__ __forceinline__ void is_row_values(const is_row_args &a, const is_row_tile &t,
                                                     bool vec) {
  const int tid = threadIdx.x, valid = (int)t.valid;
  const bool f16 = a.storage == IS_STORAGE_F16;
  const is_kv_slab vslab = is_slab_of(a, a.value_lo, a.value_hi, t.bh, (int)(a.head_size * EB));
  is_vplan p;
  long long d0;
  for (d0 = 0; d0 < a.head_size; d0 += IS_ROW_THREADS) {
    float acc[HT];
    int vkey[2], i;
    p.src = is_slab_at(vslab, (int)(d0 * EB));
    p.dn = (int)is_min_ll(IS_ROW_THREADS, a.head_size - d0);
    p.row_bytes = p.dn * EB;
    p.keys = IS_VSTAGE_BYTES / p.row_bytes < IS_VKEYS ? IS_VSTAGE_BYTES / p.row_bytes : IS_VKEYS;
    p.units = p.row_bytes / 16;
    p.stages = (valid + p.keys - 1) / p.keys;
    const bool split = HT % 8 == 0 && 2 * p.dn <= IS_ROW_THREADS;
    const int dim = split ? tid % p.dn : tid, hb = split && tid >= p.dn ? HT / 2 : 0, nhc = split ? HT / 2 : HT;
    const bool consumer = tid < (split ? 2 * p.dn : p.dn);
#pragma unroll
    for (int j = 0; j < 2; j++) {
      const int idx = tid + IS_ROW_THREADS * j;
      p.piece_s[j] = p.units ? idx / p.units : p.keys; /* keys: no piece */
      p.piece_u[j] = p.units ? idx - p.piece_s[j] * p.units : 0;
    }
    /* keys <= IS_VKEYS and IS_ROW_HEADS * IS_VKEYS <= threads: one probability each */
    p.prob_s = tid % IS_VKEYS;
    p.prob_h = p.prob_s < p.keys ? tid / IS_VKEYS : IS_ROW_HEADS;
#pragma unroll
    for (int h = 0; h < HT; h++) acc[h] = 0.0f;
    if (vec) { /* the first stages' keys, waited for once */
      for (int k = 0; k < IS_VKEYS_AHEAD; k++) is_vkeys_copy(a, t, p, k);
      is_cp_commit();
      is_cp_wait<0>();
      __syncthreads();
    }
    /* step i issues stage i and consumes stage c = i - (IS_VSTAGES - 1) */
    for (i = 0; i < p.stages + IS_VSTAGES - 1; i++) {
      const int c = i - (IS_VSTAGES - 1);
      if (c >= 0) {
        is_cp_wait<IS_VSTAGES - 2>(); /* this thread's copies of stage c have landed */
        __syncthreads();              /* and everyone's */
      }
      if (i < p.stages) { /* stage i's key words landed in the group of step i - IS_VKEYS_AHEAD */
        if (vec) is_vkeys(a, t, p, i, vkey);
        is_vissue<EB, HT>(a, t, p, vec, i, vkey);
        if (vec) is_vkeys_copy(a, t, p, i + IS_VKEYS_AHEAD);
      }
      is_cp_commit(); /* empty groups too: the wait counts groups */
      if (c >= 0 && consumer) {
        const int kn = valid - c * p.keys < p.keys ? valid - c * p.keys : p.keys;
        is_vconsume_any<EB, HT>(c % IS_VSTAGES, kn, p.row_bytes, dim, hb, split, f16, acc);
      }
    }
    is_cp_wait<0>();
    __syncthreads(); /* the ring is free for the next pass or tile */
    if (consumer) {
#pragma unroll
      for (int h = 0; h < HT; h++)
        if (h < nhc && hb + h < t.nh)
          is_store(a.y, (t.row0 + (hb + h) * a.q_seq) * a.head_size + d0 + dim,
                   is_sh.masked[hb + h] ? 0.0f : acc[h], a.storage);
    }
  }
}

#endif /* INDEX_SHARE_ROW_VALUES_H */
