/*
** csa4_compress.h: the ratio-4 compressors' work (csa4_main_compress and
** csa4_index_compress in csa4.cu): the pool, the record's finish and the
** index transform they share with csa4_index_query; csa4_compress_steps.h
** walks a launch's rows through them.  CUDA C++, included by csa4.cu only,
** after csa4_abi.h, numerics.h, nx_csa.h and csa_kernel_common.h and
** csa4.cu's cursor helpers.
*/
#ifndef CSA4_COMPRESS_H
#define CSA4_COMPRESS_H

/*
** A compressor step is a few microseconds of latency, not of throughput, so
** the record's work is spread over the threads of a block, or of a
** thread-block cluster (one a batch row, cluster-stride), and only what the
** oracle orders stays serial.
**
** Block r of the cluster pools record dims [R r, R r + R), R = DIM /
** CLUSTER: pool thread t is group g = t % G of dim d = R r + t / G, G = 8 /
** CANDS, and holds the dim's candidates j = CANDS g .. CANDS g + CANDS - 1,
** so a dim's groups are G neighbouring lanes.  For each j it owns carry
** column x = d (j < 4) or DIM + d (j >= 4) of slots j % 4 and j % 4 + 4, in
** registers across the step's tokens: a token of phase j % 4 goes into the
** upper slot, the rotation moves upper to lower and empties upper, and the
** candidate the pool reads is lower (j < 4) or upper (j >= 4), the
** oracle's overlapped window.  The pooled dims go into rank 0's shared
** memory with their squares; after the pool warps' (or the cluster's)
** barrier rank 0 finishes the record: the RMS chain over the squares in
** one thread (csa4_square_sum, d ascending), then the norm, RoPE and the
** quantizer blocks a warp each.  The warp after the pool threads computes
** the 32 RoPE angles while the record pools.  A decode step (one token) of
** the one-block form skips the walk's bookkeeping (csa4_decode).
**
** Why two shapes: the main stream's 512 dims take a cluster of 8 blocks, a
** thread a candidate (one exp a thread).  The index stream's 128 dims fit
** one block of two threads a dim, whose 4 exps each run side by side: one
** shuffle for the max, and no cluster barrier.  A thread a dim (8 exps) and
** four threads a dim were slower on an H200 (docs/SPEED.md, seventeenth
** round).
*/
#define CSA4_LANES 0xffffffffu

static_assert(CSA4_DIM_K <= CSA4_MAIN_THREADS && CSA4_INDEX_DIM_K <= CSA4_INDEX_THREADS,
              "a thread a norm weight");

/*
** The one-block form's named barriers (0 is __syncthreads'), so that the
** pool's barrier does not wait on the RoPE angles, which warp 0 needs only
** for the transform, after the RMS chain: the pool warps meet on POOLED;
** the angle warp arrives on ANGLES once it has stored the angles, and warp
** 0 waits on it just before the transform.  From the second emission on,
** warp 0 arrives on ANGLES_READ as it enters the emission (it has left the
** last transform) and the angle warp waits on it before storing, so the
** angle warp neither overwrites angles warp 0 still reads nor arrives on
** ANGLES twice in one phase.  (The angles used to meet the pool at one
** block barrier, which they reached about 300 cycles after the pool's last
** warp; apart, the index compressor's line went from 5.8-5.9 to 5.6 us on
** an H200: docs/SPEED.md, seventeenth and twenty-first rounds.)
*/
enum { CSA4_BAR_POOLED = 1, CSA4_BAR_ANGLES = 2, CSA4_BAR_ANGLES_READ = 3 };

/* One carry cell (slot, column): the kv's bits and the score. */
typedef struct csa4_cell {
  nx_u32 kv;
  float score;
} csa4_cell;

/* A token's column: the kv's bits and the gate (the score is gate + ape). */
typedef struct csa4_token {
  nx_u32 kv;
  float gate;
} csa4_token;

/* Cell (slot, x) of a carry row [8 slots][kv, score][width]. */
static __device__ __forceinline__ csa4_cell csa4_cell_load(const float *row, int width, int slot, int x) {
  csa4_cell c;
  c.kv = ((const nx_u32 *)row)[(2 * slot) * width + x];
  c.score = row[(2 * slot + 1) * width + x];
  return c;
}

static __device__ __forceinline__ void csa4_cell_store(float *row, int width, int slot, int x, csa4_cell c) {
  ((nx_u32 *)row)[(2 * slot) * width + x] = c.kv;
  ((nx_u32 *)row)[(2 * slot + 1) * width + x] = nx_f32_bits(c.score);
}


static __device__ __forceinline__ nx_u32 csa4_max_u32(nx_u32 a, nx_u32 b) { return a > b ? a : b; }

/*
** nx_fp8_block64_quantize of the block whose elements 2 lane and 2 lane + 1
** are x0 and x1, a warp a block, into blk (65 bytes).  The scale byte is
** nx_fp8_block_scale of the one-element block {amax}, whose nx_block_amax
** is amax itself.
*/
static __device__ __forceinline__ void csa4_fp8_block_write(float x0, float x1, nx_u8 *blk) {
  const int lane = threadIdx.x % 32;
  const nx_u32 bits = csa4_max_u32(csa_amax_bits(x0), csa_amax_bits(x1));
  float amax = nx_f32_from_bits(__reduce_max_sync(CSA4_LANES, bits));
  const nx_u8 e = nx_fp8_block_scale(&amax, 1);
  const float inverse = nx_ue8m0_reciprocal(e); /* x * inverse is x / scale to the bit */
  if (lane == 0) blk[0] = e;
  blk[1 + 2 * lane] = nx_e4m3_encode(x0 * inverse);
  blk[2 + 2 * lane] = nx_e4m3_encode(x1 * inverse);
}

/*
** The index stream's transform of a 128-dim vector, held by one warp (lane
** l has dims 4l .. 4l + 3 in x), into the 68-byte FP4 record out: RoPE on
** dims 64..127 by angle[32] (lanes 16..31, two pairs each), the Hadamard
** stages (spans 1 and 2 inside a lane, 4..64 between lanes l and l ^
** span / 4; each butterfly is nx_csa_hadamard_pair's l + r, l - r),
** bf16(x * 1/sqrt(128)), then nx_fp4_block32_quantize of block l / 8 over
** lanes 8k .. 8k + 7 (amax by shuffles; each lane encodes its two bytes).
*/
static __device__ __forceinline__ void csa4_index_transform(float x[4], const float2 *angle, nx_u8 *out) {
  const int lane = threadIdx.x % 32, q = lane % 8;
  const float scale = nx_csa_rsqrt_exact(CSA4_INDEX_DIM_K);
  nx_u8 *blk = out + NX_FP4_BLOCK_BYTES * (lane / 8);
  nx_u32 bits;
  float amax, l, r, inverse;
  nx_u8 e;
  int i, span;
  if (lane >= 16) { /* pairs 2 (lane - 16) and 2 (lane - 16) + 1 of the tail */
    csa_rope_rotate(&x[0], &x[1], angle[2 * lane - 32]);
    csa_rope_rotate(&x[2], &x[3], angle[2 * lane - 31]);
  }
  for (span = 1; span < 4; span *= 2)
    for (i = 0; i < 4; i++)
      if ((i & span) == 0) {
        l = x[i], r = x[i + span];
        x[i] = l + r;
        x[i + span] = l - r;
      }
  for (span = 1; span < 32; span *= 2)
    for (i = 0; i < 4; i++) {
      const float other = __shfl_xor_sync(CSA4_LANES, x[i], span);
      x[i] = (lane & span) ? other - x[i] : x[i] + other;
    }
  for (i = 0; i < 4; i++) x[i] = nx_bf16_round(x[i] * scale);
  bits = csa4_max_u32(csa4_max_u32(csa_amax_bits(x[0]), csa_amax_bits(x[1])),
                      csa4_max_u32(csa_amax_bits(x[2]), csa_amax_bits(x[3])));
  for (span = 1; span < 8; span *= 2) bits = csa4_max_u32(bits, __shfl_xor_sync(CSA4_LANES, bits, span));
  amax = nx_f32_from_bits(bits);
  e = nx_fp4_block_scale(&amax, 1); /* as in csa4_fp8_block_write */
  inverse = nx_ue8m0_reciprocal(e);  /* x * inverse is x / scale to the bit */
  if (q == 0) blk[0] = e;
  blk[1 + 2 * q] = (nx_u8)(nx_e2m1_encode_select(x[0] * inverse) | (nx_e2m1_encode_select(x[1] * inverse) << 4));
  blk[2 + 2 * q] = (nx_u8)(nx_e2m1_encode_select(x[2] * inverse) | (nx_e2m1_encode_select(x[3] * inverse) << 4));
}

/*
** nx_csa_square_sum of a record of N (a multiple of 32) dims from its
** squares, sq[d] = x[d] * x[d] each rounded as the oracle's chain rounds it
** (the pool threads square their own dims), in 16-byte aligned shared
** memory: the same chain, sum = sum + sq[d] from +0 with d ascending, with
** the next 32 squares' loads issued before the current 32 are added, so
** that the chain waits on its adds alone.
*/
template <int N>
static __device__ __forceinline__ float csa4_square_sum(const float *sq) {
  const float4 *sq4 = (const float4 *)sq;
  float4 cur[8], next[8];
  float sum = 0.0f;
  int chunk, k;
#pragma unroll
  for (k = 0; k < 8; k++) cur[k] = sq4[k];
  for (chunk = 0; chunk < N / 32; chunk++) {
    const int ahead = 8 * (chunk + 1 < N / 32 ? chunk + 1 : chunk); /* the last chunk reloads itself */
#pragma unroll
    for (k = 0; k < 8; k++) next[k] = sq4[ahead + k];
#pragma unroll
    for (k = 0; k < 8; k++) {
      sum = sum + cur[k].x;
      sum = sum + cur[k].y;
      sum = sum + cur[k].z;
      sum = sum + cur[k].w;
      cur[k] = next[k];
    }
  }
  return sum;
}

/*
** nx_csa_pool of this thread's dim over its 8 candidates, CANDS of them in
** cand (candidate CANDS g + i in cand[i]) and the rest in the other threads
** of its group of 8 / CANDS lanes; the pooled value in every thread of the
** group.  The max: every thread first folds its scores into -inf as the
** oracle's loop does, which leaves no NaN, and on non-NaN values nx_maxf is
** a max under a total order (+0 above -0), so the order does not matter.
** Each thread computes its own candidates' weights; den and num are then
** summed over the candidates in slot order, skipping the empty ones.
*/
template <int CANDS>
static __device__ __forceinline__ float csa4_pool(const csa4_cell *cand) {
  constexpr int G = CSA4_SLOTS_K / CANDS; /* threads a dim */
  const int base = (threadIdx.x % 32) & ~(G - 1);
  float m = csa_neg_inf(), w[CANDS], wkv[CANDS], num = 0.0f, den = 0.0f;
  unsigned lives[CANDS]; /* bit k of lives[i]: candidate CANDS k + i is live */
  int i, k;
#pragma unroll
  for (i = 0; i < CANDS; i++) m = nx_maxf(m, cand[i].score);
#pragma unroll
  for (k = 1; k < G; k *= 2) m = nx_maxf(m, __shfl_xor_sync(CSA4_LANES, m, k));
#pragma unroll
  for (i = 0; i < CANDS; i++) {
    const int live = !nx_csa_is_neg_inf(cand[i].score);
    lives[i] = G == 1 ? (unsigned)live : __ballot_sync(CSA4_LANES, live) >> base;
    w[i] = 0.0f, wkv[i] = 0.0f;
    if (live) {
      w[i] = nx_expf(cand[i].score - m);
      wkv[i] = w[i] * nx_f32_from_bits(cand[i].kv);
    }
  }
#pragma unroll
  for (k = 0; k < CSA4_SLOTS_K; k++) {
    const int owner = base + k / CANDS, at = k % CANDS;
    const float wk = G == 1 ? w[at] : __shfl_sync(CSA4_LANES, w[at], owner);
    const float wkvk = G == 1 ? wkv[at] : __shfl_sync(CSA4_LANES, wkv[at], owner);
    if ((lives[at] >> (k / CANDS)) & 1u) { /* the oracle skips an empty slot */
      den = den + wk;
      num = num + wkvk;
    }
  }
  return nx_bf16_round(num / den);
}

/*
** Rank 0's finishes, called by all its threads after the barrier: pool
** holds the pooled record (DIM floats; the finish may overwrite them), then
** their squares (DIM floats); norm the norm weights, angle the 32 angles at
** the block start, scratch a shared float, dst the cache record.
**
** Main: thread 0 runs the RMS chain; then warp w < 7 normalises dims 64w ..
** 64w + 63 (lane l: 2l, 2l + 1) into FP8 block w, warp 7 rotates the tail
** pairs (lane p: pair p) and writes them with nx_csa_fp8_record_tail.
*/
static __device__ void csa4_main_finish(float *pool, const float *norm, const float2 *angle, float *scratch,
                                        nx_u8 *dst) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, d = NX_FP8_BLOCK * warp + 2 * lane;
  float x0, x1;
  if (threadIdx.x == 0) *scratch = nx_csa_inv_rms(csa4_square_sum<CSA4_DIM_K>(pool + CSA4_DIM_K), CSA4_DIM_K);
  __syncthreads();
  if (warp > CSA4_FP8_BLOCKS_K) return;
  x0 = nx_csa_norm_value(pool[d], *scratch, norm[d]);
  x1 = nx_csa_norm_value(pool[d + 1], *scratch, norm[d + 1]);
  if (warp < CSA4_FP8_BLOCKS_K) {
    csa4_fp8_block_write(x0, x1, dst + NX_FP8_BLOCK_BYTES * warp);
    return;
  }
  csa_rope_rotate(&x0, &x1, angle[lane]);
  pool[d] = x0, pool[d + 1] = x1;
  __syncwarp();
  nx_csa_fp8_record_tail(pool, dst, lane);
  nx_csa_fp8_record_tail(pool, dst, lane + 32);
}

/*
** Index: warp 0 alone, every lane running the RMS chain itself, then the
** transform once the angle warp has handed over the angles (one block, the
** named barriers above).
*/
static __device__ void csa4_index_finish(float *pool, const float *norm, const float2 *angle, float *scratch,
                                         nx_u8 *dst) {
  const int lane = threadIdx.x % 32;
  float inv_rms, x[4];
  int i;
  (void)scratch;
  if (threadIdx.x >= 32) return;
  inv_rms = nx_csa_inv_rms(csa4_square_sum<CSA4_INDEX_DIM_K>(pool + CSA4_INDEX_DIM_K), CSA4_INDEX_DIM_K);
  for (i = 0; i < 4; i++) x[i] = nx_csa_norm_value(pool[4 * lane + i], inv_rms, norm[4 * lane + i]);
  csa_bar_sync(CSA4_BAR_ANGLES, 64);
  csa4_index_transform(x, angle, dst);
}

/* One compressor stream: its inputs, its carry and its record cache. */
typedef struct csa4_stream {
  const float *kv, *gate, *ape, *norm; /* [B, S, source] twice, [4, source], [dim] */
  float *carry;                        /* [B, 8, 2, source]: carry_row floats a batch row */
  nx_u8 *cache;                        /* [B, capacity, record_bytes] */
  int source;                          /* floats a token: twice the record's dims */
  long long carry_row, capacity, record_bytes;
} csa4_stream;

static __device__ __forceinline__ csa4_token csa4_token_load(const csa4_stream &st, long long seq, long long b,
                                                             long long s, int x) {
  const long long at = (b * seq + s) * st.source + x;
  csa4_token t;
  t.kv = ((const nx_u32 *)st.kv)[at];
  t.gate = st.gate[at];
  return t;
}

#endif /* CSA4_COMPRESS_H */
