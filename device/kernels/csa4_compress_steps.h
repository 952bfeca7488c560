/*
** csa4_compress_steps.h: how a ratio-4 compressor launch walks its rows:
** the emission step both paths share (csa4_emit), the walk over S tokens
** (csa4_walk), the decode step's own path (csa4_decode, one-block form, S
** = 1) and the launch that picks one (csa4_compress).  CUDA C++, included
** by csa4.cu only, after csa4_compress.h, whose pool, finishes and stream
** these use.
*/
#ifndef CSA4_COMPRESS_STEPS_H
#define CSA4_COMPRESS_STEPS_H

/*
** A record's finish (csa4_main_finish, csa4_index_finish): the pooled
** record, the norm weights, the angles, a shared float, the destination.
*/
typedef void (*csa4_finish_fn)(float *, const float *, const float2 *, float *, nx_u8 *);

/* A compressor block's shared memory (rank 0's is the one the finish reads), by emission parity. */
template <int DIM>
struct csa4_smem {
  float pool[2][2 * DIM]; /* the pooled record, then its squares */
  float norm[DIM], scratch;
  float2 angle[2][NX_CSA_ROPE_PAIRS];
};

/* A thread's place in the walk, fixed for the whole launch. */
typedef struct csa4_place {
  int tid, lane, g, d, rank, pooler;
  float freq, norm_w; /* the angle warp's RoPE frequency; rank 0's norm weight tid */
} csa4_place;

/*
** Emission e of the record whose last token is at pos, into dst: the pool
** threads pool cand (theirs) and put the value and its square into rank
** 0's pool[e % 2]; rank 0's angle warp fills angle[e % 2]; one barrier;
** rank 0 finishes.  The parity buffers make that one barrier enough: a
** rank writes pool[e % 2] again at e + 2, after passing barrier e + 1,
** which rank 0 reaches only once it has finished e.  In the one-block form
** that barrier is the pool warps' alone and the angles travel by their own
** pair (CSA4_BAR_ANGLES, csa4_compress.h).
*/
template <int DIM, int CLUSTER, int CANDS, csa4_finish_fn Finish>
static __device__ __forceinline__ void csa4_emit(csa4_smem<DIM> &sm, const csa4_place &t, const csa4_cell *cand,
                                                 long long pos, long long e, nx_u8 *dst) {
  constexpr int G = CSA4_SLOTS_K / CANDS, POOL_THREADS = DIM / CLUSTER * G;
  if (t.pooler) {
    const float v = csa4_pool<CANDS>(cand);
    if (t.g == 0 || t.g == G - 1) { /* two threads of the group, where it has two */
      float *to = CLUSTER > 1 ? (float *)__cluster_map_shared_rank(sm.pool[e % 2], 0) : sm.pool[e % 2];
      if (t.g == 0) to[t.d] = v;
      if (t.g == G - 1) to[DIM + t.d] = v * v;
    }
  } else if (t.rank == 0) {
    const float2 a = csa_rope_angle(t.freq, pos - 3);
    if (CLUSTER == 1 && e > 0) csa_bar_sync(CSA4_BAR_ANGLES_READ, 64);
    sm.angle[e % 2][t.lane] = a;
    if (CLUSTER == 1) csa_bar_arrive(CSA4_BAR_ANGLES, 64);
  }
  if (e == 0 && t.rank == 0 && t.tid < DIM) sm.norm[t.tid] = t.norm_w; /* here: no wait for it before the pool */
  if (CLUSTER > 1) {
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
  } else if (t.pooler) { /* the angle warp goes on to the next emission's angles */
    if (t.tid < 32 && e > 0) csa_bar_arrive(CSA4_BAR_ANGLES_READ, 64);
    csa_bar_sync(CSA4_BAR_POOLED, POOL_THREADS);
  }
  if (t.rank == 0) Finish(sm.pool[e % 2], sm.norm, sm.angle[e % 2], &sm.scratch, dst);
}

/* Where the record finishing at pos goes in batch row b's cache. */
static __device__ __forceinline__ nx_u8 *csa4_record_at(const csa4_stream &st, long long b, long long pos) {
  return st.cache + (b * st.capacity + (pos + 1) / CSA4_RATIO_K - 1) * st.record_bytes;
}

/*
** The walk both compressors share (see the section comment): the S tokens
** of a row in order; at every 4th position the record finishes into cache
** record (pos + 1) / 4 - 1 (csa4_emit) and the carry rotates.  A
** candidate's token loads run four tokens ahead.
*/
template <int DIM, int CLUSTER, int CANDS, csa4_finish_fn Finish>
static __device__ __forceinline__ void csa4_walk(const csa4_shape &p, const csa4_stream &st, const long long *total_ptr,
                                                 csa4_smem<DIM> &sm, const csa4_place &t, const int *x,
                                                 const float *ape, long long first, long long clusters) {
  const csa4_cell empty = {0u, csa_neg_inf()};
  const int width = 2 * DIM;
  csa_cursor c;
  long long b, e = 0;
  int i;
  for (b = first; b < p.batch; b += clusters) {
    float *row = st.carry + b * st.carry_row;
    csa4_cell lo[CANDS], hi[CANDS];
    csa4_token tok[CANDS];
    long long s, s_tok[CANDS];
#pragma unroll
    for (i = 0; i < CANDS; i++) {
      const int lower = (CANDS * t.g + i) % CSA4_RATIO_K;
      lo[i] = empty, hi[i] = empty, tok[i].kv = 0u, tok[i].gate = 0.0f;
      if (t.pooler) { /* in bounds whatever the cursor: issued before it is known */
        lo[i] = csa4_cell_load(row, width, lower, x[i]);
        hi[i] = csa4_cell_load(row, width, lower + CSA4_RATIO_K, x[i]);
        if (p.seq > 0) tok[i] = csa4_token_load(st, p.seq, b, 0, x[i]);
      }
    }
    if (b == first && !csa4_cursor(&c, total_ptr, &p)) return;
#pragma unroll
    for (i = 0; i < CANDS; i++) {
      s_tok[i] = ((CANDS * t.g + i) % CSA4_RATIO_K - c.start) & 3; /* the first token of this phase */
      if (t.pooler && s_tok[i] != 0 && s_tok[i] < p.seq) tok[i] = csa4_token_load(st, p.seq, b, s_tok[i], x[i]);
    }
    for (s = 0; s < p.seq; s++) {
      const long long pos = c.start + s;
#pragma unroll
      for (i = 0; i < CANDS; i++)
        if (t.pooler && s == s_tok[i]) {
          hi[i].kv = tok[i].kv;
          hi[i].score = tok[i].gate + ape[i];
          s_tok[i] += CSA4_RATIO_K;
          if (s_tok[i] < p.seq) tok[i] = csa4_token_load(st, p.seq, b, s_tok[i], x[i]);
        }
      if (((pos + 1) & 3) != 0) continue; /* no record finishes here */
      {
        csa4_cell cand[CANDS];
#pragma unroll
        for (i = 0; i < CANDS; i++) cand[i] = CANDS * t.g + i < CSA4_RATIO_K ? lo[i] : hi[i];
        csa4_emit<DIM, CLUSTER, CANDS, Finish>(sm, t, cand, pos, e, csa4_record_at(st, b, pos));
      }
#pragma unroll
      for (i = 0; i < CANDS; i++) lo[i] = hi[i], hi[i] = empty;
      e++;
    }
    if (t.pooler) {
#pragma unroll
      for (i = 0; i < CANDS; i++) {
        const int lower = (CANDS * t.g + i) % CSA4_RATIO_K;
        csa4_cell_store(row, width, lower, x[i], lo[i]);
        csa4_cell_store(row, width, lower + CSA4_RATIO_K, x[i], hi[i]);
      }
    }
  }
}

/*
** The decode step (S = 1) of the one-block form, its cursor first and the
** walk's bookkeeping left out.  A thread's candidates are one phase each
** (candidate i is phase i), and with one token a record finishes only when
** the token is phase 3; then the pool's candidates are the carry's lower
** slots (thread 0 of the dim, column d), or its upper slots 0..2 and the
** token scored with ape row 3 (thread 1, column DIM + d).  The cursor is
** loaded first, so that it is back with the carry.  Only changed carry
** cells are stored: the token's (upper slot of its phase), or after a
** record the rotation (lower <- upper, the token's included; upper <-
** empty).  (In the walk, the cursor came back behind the carry and the
** bookkeeping for S tokens cost as much again before the pool could start:
** docs/SPEED.md, twenty-second round.)
*/
template <int DIM, int CANDS, csa4_finish_fn Finish>
static __device__ __forceinline__ void csa4_decode(const csa4_shape &p, const csa4_stream &st,
                                                   const long long *total_ptr, csa4_smem<DIM> &sm,
                                                   const csa4_place &t, const int *x, const float *ape) {
  constexpr int LAST = CSA4_RATIO_K - 1; /* the phase that finishes a record */
  static_assert(CANDS == CSA4_RATIO_K, "a thread's candidates are the four phases");
  const csa4_cell empty = {0u, csa_neg_inf()};
  const int width = 2 * DIM;
  const long long total = *total_ptr; /* first, so that it is back with the carry */
  csa_cursor c;
  long long b, e = 0;
  int i;
  for (b = blockIdx.x; b < p.batch; b += gridDim.x) {
    float *row = st.carry + b * st.carry_row;
    csa4_cell cand[CANDS], upper[CANDS]; /* thread 0 of a dim also moves its upper cells down */
    csa4_token tok = {0u, 0.0f};
    int phase;
    if (t.pooler) {
      tok = csa4_token_load(st, 1, b, 0, x[0]);
#pragma unroll
      for (i = 0; i < CANDS; i++) {
        cand[i] = csa4_cell_load(row, width, t.g == 0 ? i : i + CSA4_RATIO_K, x[i]);
        if (t.g == 0 && i < LAST) upper[i] = csa4_cell_load(row, width, i + CSA4_RATIO_K, x[i]);
      }
    }
    {
      long long issued = total; /* ties the cursor's checks to here, after the loads are issued */
      asm volatile("" : "+l"(issued)::"memory");
      if (b == blockIdx.x && !csa4_cursor(&c, &issued, &p)) return;
    }
    phase = (int)(c.start & 3);
    if (phase != LAST) { /* no record: the token takes its phase's upper cell */
      float a = ape[0];
#pragma unroll
      for (i = 1; i < CANDS; i++)
        if (phase == i) a = ape[i];
      if (t.pooler) csa4_cell_store(row, width, phase + CSA4_RATIO_K, x[0], csa4_cell{tok.kv, tok.gate + a});
      continue;
    }
    upper[LAST].kv = tok.kv;
    upper[LAST].score = tok.gate + ape[LAST];
    if (t.g != 0) cand[LAST] = upper[LAST];
    csa4_emit<DIM, 1, CANDS, Finish>(sm, t, cand, c.start, e, csa4_record_at(st, b, c.start));
    e++;
    if (t.pooler) {
#pragma unroll
      for (i = 0; i < CANDS; i++) {
        csa4_cell_store(row, width, i, x[i], t.g == 0 ? upper[i] : cand[i]);
        csa4_cell_store(row, width, i + CSA4_RATIO_K, x[i], empty);
      }
    }
  }
}

/*
** A compressor launch: every thread's fixed part, then the decode step's
** path (csa4_decode, one-block form, S = 1) or the walk.
*/
template <int DIM, int CLUSTER, int CANDS, csa4_finish_fn Finish>
static __device__ __forceinline__ void csa4_compress(const csa4_shape &p, const csa4_stream &st,
                                                     const long long *total_ptr) {
  constexpr int G = CSA4_SLOTS_K / CANDS, POOL_THREADS = DIM / CLUSTER * G;
  __shared__ __align__(16) csa4_smem<DIM> sm;
  const int width = 2 * DIM;
  csa4_place t;
  float ape[CANDS];
  int x[CANDS], i;
  static_assert(POOL_THREADS % 32 == 0 && 32 % G == 0, "a dim's groups in one warp, the angle warp whole");
  if (CLUSTER > 1 && __clusterSizeInBlocks() != CLUSTER) __trap(); /* the launch broke csa4_abi.h */
  t.tid = threadIdx.x, t.lane = t.tid % 32, t.g = t.tid % G;
  t.rank = CLUSTER > 1 ? (int)__clusterRelativeBlockRank() : 0;
  t.pooler = t.tid < POOL_THREADS;
  t.d = t.rank * (DIM / CLUSTER) + t.tid / G;
  t.norm_w = t.rank == 0 && t.tid < DIM ? st.norm[t.tid] : 0.0f; /* rank 0 parks it in sm.norm */
  t.freq = !t.pooler && t.rank == 0 ? csa_rope_freq_table[t.lane] : 0.0f;
#pragma unroll
  for (i = 0; i < CANDS; i++) { /* candidate j = CANDS g + i: phase j % 4 */
    const int j = CANDS * t.g + i;
    x[i] = j < CSA4_RATIO_K ? t.d : DIM + t.d;
    ape[i] = t.pooler ? st.ape[(j % CSA4_RATIO_K) * width + x[i]] : 0.0f;
  }
  if constexpr (CLUSTER == 1 && CANDS == CSA4_RATIO_K) {
    if (p.seq == 1) {
      csa4_decode<DIM, CANDS, Finish>(p, st, total_ptr, sm, t, x, ape);
      return;
    }
  }
  {
    const long long first = CLUSTER > 1 ? __clusterIdx().x : blockIdx.x; /* this cluster's first row */
    const long long clusters = CLUSTER > 1 ? __clusterGridDimInClusters().x : gridDim.x;
    csa4_walk<DIM, CLUSTER, CANDS, Finish>(p, st, total_ptr, sm, t, x, ape, first, clusters);
  }
}

#endif /* CSA4_COMPRESS_STEPS_H */
