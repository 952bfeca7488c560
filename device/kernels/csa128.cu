/*
** csa128.cu: the CompressedSparseAttention kernels for compression ratio 128
** (seed 003_9308a65268dfd821.txt, the ratio-128 compression and sink
** attention sources; DESIGN.md "The frozen numerics"; oracle/csa.h).
** Launched, in this order, on one stream by device/csa128_device.c:
**
**   csa128_state_copy   present carry <- past carry (or the empty carry when
**                       start == 0); present records [0, start/128) <- past
**                       records; records [total/128, Rc) <- zero bytes;
**   csa128_compress     a cluster of 8 blocks per batch row, 64 dims a block:
**                       each new token's kv into its carry slot, gate + ape
**                       into the slot's score, and at every 128th position
**                       one finished record;
**   csa128_attn_gather, csa_attention_tiles.h's four passes (the candidates
**   csa128_attn_scores, decoded once, tiles of heads x candidates, a block
**   csa128_attn_softmax, per row, tiles of heads x dims) over the dense
**   csa128_attn_values  window, then the finished records, with a sink.
**
** The cursor: every kernel reads total_sequence_length (one i64) on the
** device, never the host, so a captured graph replays whatever cursor the
** buffer holds.  S is query.shape[1]; start = total - S is the first new
** position; kv_used = min(L, total) rows of current_kv are live, the first
** of them at absolute position kv_base = total - kv_used (the oracle's
** trim of current_kv to its logical prefix).  A cursor that breaks
** csa_validate_cursor's rules makes csa128_state_copy raise
** CSA128_LATCH_CURSOR_BIT (when given a latch) and every kernel return at
** once, so a poisoned replay never reads or writes out of bounds.
**
** Arithmetic.  Every + - * / is one IEEE binary32 operation rounded to
** nearest (the pinned --fmad=false keeps them apart; `bitgate audit` checks
** the PTX).  Each formula is the oracle's own text, from
** oracle/numerics/nx_csa.h: the slot pooling (nx_csa_pool over the 128 slots,
** eight threads a dim: a weight per slot, the max reduced order-free, den
** and num each one chain over the slots in order, handed from thread to
** thread), RMSNorm (nx_csa_square_sum in one thread, ascending;
** nx_csa_inv_rms; nx_csa_norm_value per dim), the RoPE tail (nx_csa_rope_pair's
** rotation, one thread per pair, at the block's first position pos - 127,
** its angle computed while the record pools) and the record (seven blocks as
** nx_fp8_block64_quantize, a warp a block with the amax reduced order-free,
** then nx_csa_fp8_record_tail per tail element; the f32 view dequantizes the
** blocks again and keeps the tail as is).  The attention is
** csa_attention_tiles.h, shared with ratio 4.  Every sum keeps the oracle's
** order as one chain.
**
** Floats are moved by their bits where the oracle copies them (carry, kv,
** records), so NaN payloads survive as they do in a memcpy.
**
** All index arithmetic is 64-bit (long long).
*/
#include "csa128_abi.h"
#include "numerics.h"
#include "nx_csa.h"
#include "csa_kernel_common.h"
#include "csa_sink_attention.h"
#include "csa_attention_rows.h"
#include "csa_attention_tiles.h"

#define CSA128_CARRY_ROW (CSA128_RATIO_K * 2 * CSA128_DIM_K) /* floats a batch row */

/* csa_validate_cursor's rules and fields for ratio 128. */
static __device__ __forceinline__ int csa128_cursor(csa_cursor *c, const long long *total_ptr,
                                                    long long seq, long long kv_len,
                                                    long long past_capacity,
                                                    long long present_capacity) {
  *c = csa_cursor_read(total_ptr, seq, kv_len, CSA128_RATIO_K);
  return csa_cursor_fits(c, past_capacity, present_capacity);
}

/* ---- state copy -------------------------------------------------------------------- */

/*
** Carry [B, 128, 2, 512] as 32-bit words: a copy of the past carry, or, when
** start == 0, the empty carry (kv 0.0f, score -inf).  Cache [B, Rc, W bytes]:
** records below start / 128 copied from past [B, Rp, W], records from
** total / 128 on zeroed (csa128_compress writes the ones in between).  Four
** carry words (csa_copy_carry) and a turn of 16-byte cache units
** (csa_copy_cache_rows) a thread, grid-stride.  latch: the capture-error word or NULL.
*/
extern "C" __global__ void __launch_bounds__(CSA128_STATE_THREADS)
    csa128_state_copy(const nx_u32 *past_carry, const nx_u8 *past_cache, nx_u32 *carry,
                      nx_u8 *cache, const long long *total_ptr, unsigned *latch, long long batch,
                      long long seq, long long kv_len, long long past_capacity,
                      long long present_capacity, long long record_bytes) {
  csa_cursor c;
  const int ok = csa128_cursor(&c, total_ptr, seq, kv_len, past_capacity, present_capacity);
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long step = (long long)gridDim.x * blockDim.x;
  const long long carry_words = batch * CSA128_CARRY_ROW;

  if (!ok) {
    if (first == 0 && latch) atomicOr(latch, CSA128_LATCH_CURSOR_BIT);
    return;
  }
  csa_copy_carry(past_carry, carry, carry_words, CSA128_DIM_K, c.start == 0, first, step);
  csa_copy_cache_rows(past_cache, cache, batch, past_capacity, present_capacity, record_bytes, &c, first, step);
}

/* ---- compression ------------------------------------------------------------------- */

/*
** A record is 65,536 exps (512 dims x 128 slots, nx_expf in double
** precision), too many for one SM, while everything after the pool is
** short; so a batch row gets a thread-block cluster of
** CSA128_COMPRESS_CLUSTER blocks (cluster-stride over the rows).  Block r
** pools dims [64r, 64r + 64): pool thread t < CSA128_POOL_THREADS is group g
** = t % 8 of dim d = 64r + t / 8 and owns slots 16g .. 16g + 15 of that dim
** in the carry, so a token's write of a slot, the pool's reads of it and its
** emptying after a record are all one thread's and the carry needs no
** barrier.  The pool of a dim (csa128_pool) spans its eight groups, eight
** neighbouring lanes.  Group 7 pushes the pooled dim into rank 0's shared
** memory; after a cluster barrier rank 0 finishes the record
** (csa128_finish), and its last warp has computed the 32 RoPE angles while
** the record pooled.
*/
#define CSA128_POOL_DIMS 64   /* record dims a cluster rank pools */
#define CSA128_POOL_GROUPS 8  /* threads a dim */
#define CSA128_GROUP_SLOTS (CSA128_RATIO_K / CSA128_POOL_GROUPS)
#define CSA128_POOL_THREADS (CSA128_POOL_DIMS * CSA128_POOL_GROUPS)
#define CSA128_LANES 0xffffffffu

static_assert(CSA128_COMPRESS_THREADS == CSA128_POOL_THREADS + 32 && CSA128_DIM_K <= CSA128_COMPRESS_THREADS,
              "the pool threads and the angle warp, a thread a norm weight");
static_assert(CSA128_COMPRESS_CLUSTER * CSA128_POOL_DIMS == CSA128_DIM_K, "a cluster rank pools 64 dims");


/*
** nx_fp8_block64_quantize of the block whose elements 2 lane and 2 lane + 1
** are x0 and x1, a warp a block: returns the scale byte (nx_fp8_block_scale
** of the one-element block {amax}, whose nx_block_amax is amax itself) and
** sets the two codes.
*/
static __device__ __forceinline__ nx_u8 csa128_fp8_block(float x0, float x1, nx_u8 *c0, nx_u8 *c1) {
  const nx_u32 b0 = csa_amax_bits(x0), b1 = csa_amax_bits(x1);
  float amax = nx_f32_from_bits(__reduce_max_sync(CSA128_LANES, b0 > b1 ? b0 : b1));
  const nx_u8 e = nx_fp8_block_scale(&amax, 1);
  const float inverse = nx_ue8m0_reciprocal(e); /* x * inverse is x / scale to the bit */
  *c0 = nx_e4m3_encode(x0 * inverse);
  *c1 = nx_e4m3_encode(x1 * inverse);
  return e;
}

/*
** nx_csa_pool of dim d over the 128 slots of the carry row, by the eight
** groups of its lanes (this thread is group g); the result is group 7's.
** Slot own (the token's, or -1) is read from own_kv and own_score: the
** token that finishes a record is not stored, as its slot is emptied next.
** Slot own % 16 of group own / 16 (own: the token's slot, or -1) is the
** cell (kv, score) the token has not stored, as the record consumes it.
** The maximum: each group folds its slots into -inf as the oracle's loop
** does, which leaves no NaN, and the groups' maxima are combined by
** shuffles: on non-NaN values nx_maxf is a max under a total order (+0
** above -0), so the order does not matter.  Each group computes its slots'
** weights; den and num then pass from group g to g + 1 (a shuffle) after g
** has added its slots, so each is one chain over the slots in order, empty
** slots skipped.
*/
static __device__ __forceinline__ float csa128_pool(const float *row, int d, int g, int own, nx_u32 own_kv,
                                                   float own_score) {
  float score[CSA128_GROUP_SLOTS], w[CSA128_GROUP_SLOTS], wkv[CSA128_GROUP_SLOTS];
  float m = csa_neg_inf(), den = 0.0f, num = 0.0f;
  unsigned live = 0;
  int i, k;
#pragma unroll
  for (i = 0; i < CSA128_GROUP_SLOTS; i++) { /* slot j: score row[(2j + 1) * 512 + d], kv row[2j * 512 + d] */
    const int j = CSA128_GROUP_SLOTS * g + i;
    score[i] = j == own ? own_score : row[(2 * j + 1) * CSA128_DIM_K + d];
    wkv[i] = j == own ? nx_f32_from_bits(own_kv) : row[(2 * j) * CSA128_DIM_K + d]; /* the kv until its weight */
  }
#pragma unroll
  for (i = 0; i < CSA128_GROUP_SLOTS; i++) m = nx_maxf(m, score[i]);
  for (k = 1; k < CSA128_POOL_GROUPS; k *= 2) m = nx_maxf(m, __shfl_xor_sync(CSA128_LANES, m, k));
#pragma unroll
  for (i = 0; i < CSA128_GROUP_SLOTS; i++) {
    w[i] = 0.0f;
    if (nx_csa_is_neg_inf(score[i])) continue; /* an empty slot */
    live |= 1u << i;
    w[i] = nx_expf(score[i] - m);
    wkv[i] = w[i] * wkv[i];
  }
  for (k = 0; k < CSA128_POOL_GROUPS; k++) {
    float from_den, from_num;
    if (g == k)
#pragma unroll
      for (i = 0; i < CSA128_GROUP_SLOTS; i++)
        if ((live >> i) & 1u) {
          den = den + w[i];
          num = num + wkv[i];
        }
    from_den = __shfl_up_sync(CSA128_LANES, den, 1);
    from_num = __shfl_up_sync(CSA128_LANES, num, 1);
    if (g == k + 1) den = from_den, num = from_num;
  }
  return nx_bf16_round(num / den);
}

/*
** Rank 0's finish of the pooled record (its shared record[512]; the tail is
** rotated in place) into dst, called by all its threads after the cluster
** barrier.  Thread 0 runs the RMS chain (nx_csa_square_sum, d ascending);
** warp w < 7 normalises dims 64w .. 64w + 63 (lane l: 2l, 2l + 1) into FP8
** block w (the f32 view: decoded again, as nx_fp8_block64_dequantize); warp
** 7 rotates the tail (lane p: pair p, at the block's first position) and
** writes it as nx_csa_fp8_record_tail does (the f32 view: the floats' bits).
*/
static __device__ void csa128_finish(float *record, const float *norm, const float2 *angle, float *inv_rms,
                                     nx_u8 *dst, int cache_fp8) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, d = NX_FP8_BLOCK * warp + 2 * lane;
  nx_u32 *view = (nx_u32 *)dst;
  float x0, x1;
  if (threadIdx.x == 0) *inv_rms = nx_csa_inv_rms(nx_csa_square_sum(record, CSA128_DIM_K), CSA128_DIM_K);
  __syncthreads();
  if (warp > CSA128_FP8_BLOCKS_K) return;
  x0 = nx_csa_norm_value(record[d], *inv_rms, norm[d]);
  x1 = nx_csa_norm_value(record[d + 1], *inv_rms, norm[d + 1]);
  if (warp < CSA128_FP8_BLOCKS_K) {
    nx_u8 c0, c1;
    const nx_u8 e = csa128_fp8_block(x0, x1, &c0, &c1);
    nx_u8 *blk = dst + NX_FP8_BLOCK_BYTES * warp;
    if (cache_fp8) {
      if (lane == 0) blk[0] = e;
      blk[1 + 2 * lane] = c0;
      blk[2 + 2 * lane] = c1;
    } else {
      const float scale = nx_ue8m0_decode(e);
      view[d] = nx_f32_bits(nx_e4m3_decode(c0) * scale);
      view[d + 1] = nx_f32_bits(nx_e4m3_decode(c1) * scale);
    }
    return;
  }
  csa_rope_rotate(&x0, &x1, angle[lane]);
  if (!cache_fp8) {
    view[d] = nx_f32_bits(x0);
    view[d + 1] = nx_f32_bits(x1);
    return;
  }
  record[d] = x0, record[d + 1] = x1;
  __syncwarp();
  nx_csa_fp8_record_tail(record, dst, lane);
  nx_csa_fp8_record_tail(record, dst, lane + 32);
}

/*
** The S new tokens of each batch row in order (each may finish a record,
** which the next token's slot depends on).  kv and gate [B, S, 512], ape
** [128, 512], norm [512]; carry [B, 128, 2, 512] already holds the state
** csa128_state_copy left.  Per emission e: the pooled dims go into
** pooled[e % 2] of rank 0 and its angle warp fills angle[e % 2], one
** cluster barrier, rank 0 finishes.  The parity buffers make that one
** barrier enough: a rank writes pooled[e % 2] again at e + 2, after passing
** barrier e + 1, which rank 0 reaches only once it has finished e.
*/
extern "C" __global__ void __cluster_dims__(CSA128_COMPRESS_CLUSTER, 1, 1)
    __launch_bounds__(CSA128_COMPRESS_THREADS)
        csa128_compress(const float *kv, const float *gate, const float *ape, const float *norm,
                        float *carry, nx_u8 *cache, const long long *total_ptr, long long batch,
                        long long seq, long long kv_len, long long past_capacity,
                        long long present_capacity, int cache_fp8) {
  __shared__ float pooled[2][CSA128_DIM_K], norm_s[CSA128_DIM_K], inv_rms;
  __shared__ float2 angle[2][CSA128_ROPE_PAIRS_K];
  const int tid = threadIdx.x, lane = tid % 32, g = tid % CSA128_POOL_GROUPS;
  const int rank = (int)__clusterRelativeBlockRank(), pooler = tid < CSA128_POOL_THREADS;
  const int d = rank * CSA128_POOL_DIMS + tid / CSA128_POOL_GROUPS;
  const long long first = __clusterIdx().x, clusters = __clusterGridDimInClusters().x;
  const long long record_bytes = cache_fp8 ? CSA128_FP8_RECORD_K : CSA128_F32_RECORD_K;
  const float freq = !pooler && rank == 0 ? csa_rope_freq_table[lane] : 0.0f;
  const float norm_w = rank == 0 && tid < CSA128_DIM_K ? norm[tid] : 0.0f; /* rank 0 parks it in norm_s */
  csa_cursor c;
  long long b, s, e = 0;
  int i;

  if (__clusterSizeInBlocks() * CSA128_POOL_DIMS != CSA128_DIM_K) __trap(); /* the launch broke csa128_abi.h */
  if (!csa128_cursor(&c, total_ptr, seq, kv_len, past_capacity, present_capacity)) return;
  for (b = first; b < batch; b += clusters) {
    float *row = carry + b * CSA128_CARRY_ROW;
    for (s = 0; s < seq; s++) {
      const long long pos = c.start + s, in = (b * seq + s) * CSA128_DIM_K;
      const int slot = (int)(pos % CSA128_RATIO_K), emits = (pos + 1) % CSA128_RATIO_K == 0;
      const int mine = pooler && g == slot / CSA128_GROUP_SLOTS; /* the slot is this thread's */
      nx_u32 tok_kv = 0u;
      float tok_score = 0.0f;
      if (mine) {
        tok_kv = ((const nx_u32 *)kv)[in + d];
        tok_score = gate[in + d] + ape[slot * CSA128_DIM_K + d];
        if (!emits) {
          ((nx_u32 *)row)[(2 * slot) * CSA128_DIM_K + d] = tok_kv;
          ((nx_u32 *)row)[(2 * slot + 1) * CSA128_DIM_K + d] = nx_f32_bits(tok_score);
        }
      }
      if (!emits) continue; /* no record finishes here */
      if (pooler) {
        const float v = csa128_pool(row, d, g, mine ? slot : -1, tok_kv, tok_score);
        if (g == CSA128_POOL_GROUPS - 1) ((float *)__cluster_map_shared_rank(pooled[e % 2], 0))[d] = v;
      } else if (rank == 0) {
        angle[e % 2][lane] = csa_rope_angle(freq, pos - (CSA128_RATIO_K - 1));
      }
      if (e == 0 && rank == 0 && tid < CSA128_DIM_K) norm_s[tid] = norm_w; /* here: no wait for it before the pool */
      __cluster_barrier_arrive();
      __cluster_barrier_wait();
      if (rank == 0)
        csa128_finish(pooled[e % 2], norm_s, angle[e % 2], &inv_rms,
                      cache + (b * present_capacity + (pos + 1) / CSA128_RATIO_K - 1) * record_bytes, cache_fp8);
      if (pooler) /* the block is consumed: empty this thread's slots */
        for (i = 0; i < CSA128_GROUP_SLOTS; i++) {
          const int j = CSA128_GROUP_SLOTS * g + i;
          ((nx_u32 *)row)[(2 * j) * CSA128_DIM_K + d] = 0u;
          ((nx_u32 *)row)[(2 * j + 1) * CSA128_DIM_K + d] = NX_CSA_NEG_INF_BITS;
        }
      e++;
    }
  }
}

/* ---- attention --------------------------------------------------------------------- */

/*
** Output rows (b, s, h) of Y [B, S, heads, 512] as csa_attention_tiles.h's
** four passes, each kernel block-stride over its own units.  query [B, S,
** heads, 512]; current_kv [B, L, 512]; cache: the present records [B, Rc,
** W]; sink [heads]; bias as bd0..bd3 (has_bias 0: NULL); scores: [B * S *
** heads, 128 + Rc] f32 scratch, a row's scores, then its exps, then its
** probabilities (weights = scores).  Record candidates: the finished
** records r < min(Rc, (position + 1) / 128).  gathered: [B * S, 128 + Rc,
** 512] f32 scratch, the decoded candidates.  The four take the same
** arguments.
*/
struct csa128_row_at {
  const csa128_attention_shape *shape;
  const csa_cursor *cur;
  const float *query, *current_kv, *sink, *bias;
  const nx_u8 *cache;
  float *y, *scores, *gathered;
  __device__ void operator()(long long row, csa_attention_row *r) const {
    csa128_attention_row_at(r, shape, cur, row, query, current_kv, cache, sink, bias, y, scores);
    csa_attn_locate_gathered(r, gathered, row, shape->heads);
  }
};

#define CSA128_ATTENTION_KERNEL(name, which, bounds, pass)                                                       \
  extern "C" __global__ void __launch_bounds__ bounds name(                       \
      const float *query, const float *current_kv, const nx_u8 *cache, const float *sink,                         \
      const float *bias, int has_bias, long long bd0, long long bd1, long long bd2, long long bd3, float *y,      \
      float *scores, const long long *total_ptr, long long batch, long long seq, long long heads,                 \
      long long kv_len, long long past_capacity, long long present_capacity, int cache_fp8, float scale,          \
      float *gathered, unsigned early_release) {                                                                  \
    const long long bias_dims[4] = {bd0, bd1, bd2, bd3};                                                          \
    const csa128_attention_shape shape = {seq, heads, kv_len, present_capacity,                                   \
                                          cache_fp8 ? CSA128_FP8_RECORD_K : CSA128_F32_RECORD_K, cache_fp8,       \
                                          scale, bias_dims};                                                      \
    csa_cursor cur;                                                                                               \
    if ((early_release >> (which)) & 1u) csa_chain_release(); /* the plan's choice: csa_chain_wait */             \
    if (!csa128_cursor(&cur, total_ptr, seq, kv_len, past_capacity, present_capacity)) return;                    \
    {                                                                                                             \
      const csa128_row_at at = {&shape, &cur, query, current_kv, sink, has_bias ? bias : NULL, cache, y,          \
                                scores, gathered};                                                                \
      pass;                                                                                                       \
    }                                                                                                             \
    csa_chain_release(); /* else at the end: an exit before it releases too */                                    \
  }

CSA128_ATTENTION_KERNEL(csa128_attn_gather, CSA_ATTN_GATHER, CSA_TILE_BOUNDS,
                        csa_attn_gather(at, &cur, batch * seq, heads, CSA128_WINDOW_K + present_capacity))
CSA128_ATTENTION_KERNEL(csa128_attn_scores, CSA_ATTN_SCORES, CSA_TILE_BOUNDS,
                        csa_attn_scores_one(at, &cur, batch * seq, heads, CSA128_WINDOW_K + present_capacity))
CSA128_ATTENTION_KERNEL(csa128_attn_scores_narrow, CSA_ATTN_SCORES, CSA_RESIDENT_BOUNDS,
                        csa_attn_scores_resident(at, &cur, batch * seq, heads, CSA128_WINDOW_K + present_capacity))
CSA128_ATTENTION_KERNEL(csa128_attn_softmax, CSA_ATTN_SOFTMAX, CSA_TILE_BOUNDS,
                        csa_attn_softmax(at, batch * seq * heads))
CSA128_ATTENTION_KERNEL(csa128_attn_values, CSA_ATTN_VALUES, CSA_TILE_BOUNDS,
                        csa_attn_values_narrow(at, batch * seq, heads))
CSA128_ATTENTION_KERNEL(csa128_attn_scores_wide, CSA_ATTN_SCORES, CSA_TILE_BOUNDS,
                        csa_attn_scores<csa_wide_scores>(at, &cur, batch * seq, heads,
                                                         CSA128_WINDOW_K + present_capacity))
CSA128_ATTENTION_KERNEL(csa128_attn_values_wide, CSA_ATTN_VALUES, CSA_TILE_BOUNDS,
                        csa_attn_values<csa_wide_values>(at, batch * seq, heads))
