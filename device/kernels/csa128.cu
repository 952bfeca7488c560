/*
** csa128.cu: the CompressedSparseAttention kernels for compression ratio 128
** (seed 003_9308a65268dfd821.txt, the ratio-128 compression and sink
** attention sources; DESIGN.md "The frozen numerics"; oracle/csa.h).
** Launched, in this order, on one stream by device/csa128_device.c:
**
**   csa128_state_copy   present carry <- past carry (or the empty carry when
**                       start == 0); present records [0, start/128) <- past
**                       records; records [total/128, Rc) <- zero bytes;
**   csa128_compress     one block per batch row: each new token's kv into its
**                       carry slot, gate + ape into the slot's score, and at
**                       every 128th position one finished record;
**   csa128_attn_scores, csa_attention_tiles.h's three passes (tiles of heads
**   csa128_attn_softmax, x candidates, a warp per row, tiles of heads x
**   csa128_attn_values  dims) over the dense window, then the finished
**                       records, with a sink.
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
** one thread per dim), RMSNorm (nx_csa_square_sum in one thread, ascending;
** nx_csa_inv_rms; nx_csa_norm_value per dim), the RoPE tail (nx_csa_rope_pair,
** one thread per pair, at the block's first position pos - 127) and the
** record (seven nx_fp8_block64_quantize blocks, one thread each, then
** nx_csa_fp8_record_tail per tail element; the f32 view dequantizes the
** blocks again and keeps the tail as is).  The attention is
** csa_attention_tiles.h, shared with ratio 4.  Every sum keeps the oracle's
** order, in one thread.
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
** total / 128 on zeroed (csa128_compress writes the ones in between).  One
** thread per word / byte, grid-stride.  latch: the capture-error word or NULL.
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
  long long i;

  if (!ok) {
    if (first == 0 && latch) atomicOr(latch, CSA128_LATCH_CURSOR_BIT);
    return;
  }
  for (i = first; i < carry_words; i += step) {
    if (c.start != 0)
      carry[i] = past_carry[i];
    else /* [.., slot, part, d]: part 0 is the kv, part 1 the score */
      carry[i] = (i / CSA128_DIM_K) % 2 == 0 ? 0u : NX_CSA_NEG_INF_BITS;
  }
  csa_copy_cache_rows(past_cache, cache, batch, past_capacity, present_capacity, record_bytes, &c, first, step);
}

/* ---- compression ------------------------------------------------------------------- */

/*
** Finishes the record of the 128 positions ending at pos from the carry row,
** writes it as present record (pos + 1) / 128 - 1, and empties the carry.
** Called by every thread of the block (it synchronises); thread t owns dims
** t, t + blockDim.x, ... of the carry, as in csa128_compress.
*/
static __device__ void csa128_emit_record(float *row, nx_u8 *cache, float *record,
                                          nx_u8 *staging, float *inv_rms, const float *norm,
                                          long long b, long long pos, long long present_capacity,
                                          int cache_fp8) {
  const int tid = threadIdx.x, nthreads = blockDim.x;
  const long long index = (pos + 1) / CSA128_RATIO_K - 1;
  int d, j;

  /* slot j's score of dim d is row[(2j + 1) * 512 + d], its kv row[2j * 512 + d] */
  for (d = tid; d < CSA128_DIM_K; d += nthreads)
    record[d] = nx_csa_pool(row + CSA128_DIM_K + d, row + d, CSA128_RATIO_K, 2 * CSA128_DIM_K,
                            CSA128_RATIO_K, 0);
  __syncthreads();
  if (tid == 0) *inv_rms = nx_csa_inv_rms(nx_csa_square_sum(record, CSA128_DIM_K), CSA128_DIM_K);
  __syncthreads();
  for (d = tid; d < CSA128_DIM_K; d += nthreads)
    record[d] = nx_csa_norm_value(record[d], *inv_rms, norm[d]);
  __syncthreads();
  if (tid < CSA128_ROPE_PAIRS_K)
    nx_csa_rope_pair(record + CSA128_NOPE_K, tid, pos - (CSA128_RATIO_K - 1));
  __syncthreads();

  if (cache_fp8) {
    nx_u8 *dst = cache + (b * present_capacity + index) * CSA128_FP8_RECORD_K;
    if (tid < CSA128_FP8_BLOCKS_K)
      nx_fp8_block64_quantize(record + NX_FP8_BLOCK * tid, dst + NX_FP8_BLOCK_BYTES * tid);
    if (tid < CSA128_DIM_K - CSA128_NOPE_K) nx_csa_fp8_record_tail(record, dst, tid);
  } else { /* the f32 view: what the FP8 record decodes to */
    float *dst = (float *)(cache + (b * present_capacity + index) * CSA128_F32_RECORD_K);
    if (tid < CSA128_FP8_BLOCKS_K) {
      nx_u8 *blk = staging + NX_FP8_BLOCK_BYTES * tid;
      nx_fp8_block64_quantize(record + NX_FP8_BLOCK * tid, blk);
      nx_fp8_block64_dequantize(blk, dst + NX_FP8_BLOCK * tid);
    }
    if (tid < CSA128_DIM_K - CSA128_NOPE_K)
      ((nx_u32 *)dst)[CSA128_NOPE_K + tid] = nx_f32_bits(record[CSA128_NOPE_K + tid]);
  }

  for (d = tid; d < CSA128_DIM_K; d += nthreads) /* the block is consumed: empty every slot */
    for (j = 0; j < CSA128_RATIO_K; j++) {
      row[(2 * j) * CSA128_DIM_K + d] = 0.0f;
      ((nx_u32 *)row)[(2 * j + 1) * CSA128_DIM_K + d] = NX_CSA_NEG_INF_BITS;
    }
  __syncthreads(); /* record and staging are reused by the next emission */
}

/*
** One block per batch row b; the S new tokens in order (each may finish a
** record, which the next token's slot depends on).  kv and gate [B, S, 512],
** ape [128, 512], norm [512]; carry [B, 128, 2, 512] already holds the state
** csa128_state_copy left.  Thread t owns dims t, t + blockDim.x, ... of every
** slot, so the per-dim carry updates need no synchronisation.
*/
extern "C" __global__ void __launch_bounds__(CSA128_COMPRESS_THREADS)
    csa128_compress(const float *kv, const float *gate, const float *ape, const float *norm,
                    float *carry, nx_u8 *cache, const long long *total_ptr, long long batch,
                    long long seq, long long kv_len, long long past_capacity,
                    long long present_capacity, int cache_fp8) {
  __shared__ float record[CSA128_DIM_K];
  __shared__ nx_u8 staging[CSA128_FP8_BLOCKS_K * NX_FP8_BLOCK_BYTES];
  __shared__ float inv_rms;
  csa_cursor c;
  const int ok = csa128_cursor(&c, total_ptr, seq, kv_len, past_capacity, present_capacity);
  const long long b = blockIdx.x;
  float *row = carry + b * CSA128_CARRY_ROW;
  long long s;
  int d;

  if (!ok || b >= batch) return; /* uniform across the block */
  for (s = 0; s < seq; s++) {
    const long long pos = c.start + s;
    const int slot = (int)(pos % CSA128_RATIO_K);
    const long long in = (b * seq + s) * CSA128_DIM_K;
    for (d = threadIdx.x; d < CSA128_DIM_K; d += blockDim.x) {
      ((nx_u32 *)row)[(2 * slot) * CSA128_DIM_K + d] = ((const nx_u32 *)kv)[in + d];
      row[(2 * slot + 1) * CSA128_DIM_K + d] = gate[in + d] + ape[slot * CSA128_DIM_K + d];
    }
    if ((pos + 1) % CSA128_RATIO_K != 0) continue; /* no record finishes here */
    csa128_emit_record(row, cache, record, staging, &inv_rms, norm, b, pos, present_capacity,
                       cache_fp8);
  }
}

/* ---- attention --------------------------------------------------------------------- */

/*
** Output rows (b, s, h) of Y [B, S, heads, 512] as csa_attention_tiles.h's
** three passes, each kernel block-stride over its own units.  query [B, S,
** heads, 512]; current_kv [B, L, 512]; cache: the present records [B, Rc,
** W]; sink [heads]; bias as bd0..bd3 (has_bias 0: NULL); scores: [B * S *
** heads, 128 + Rc] f32 scratch, a row's scores, then its exps, then its
** probabilities (weights = scores).  Record candidates: the finished
** records r < min(Rc, (position + 1) / 128).  The three take the same
** arguments.
*/
struct csa128_row_at {
  const csa128_attention_shape *shape;
  const csa_cursor *cur;
  const float *query, *current_kv, *sink, *bias;
  const nx_u8 *cache;
  float *y, *scores;
  __device__ void operator()(long long row, csa_attention_row *r) const {
    csa128_attention_row_at(r, shape, cur, row, query, current_kv, cache, sink, bias, y, scores);
  }
};

#define CSA128_ATTENTION_KERNEL(name, pass)                                                                   \
  extern "C" __global__ void __launch_bounds__(CSA_TILE_THREADS) name(                                       \
      const float *query, const float *current_kv, const nx_u8 *cache, const float *sink,                    \
      const float *bias, int has_bias, long long bd0, long long bd1, long long bd2, long long bd3, float *y, \
      float *scores, const long long *total_ptr, long long batch, long long seq, long long heads,           \
      long long kv_len, long long past_capacity, long long present_capacity, int cache_fp8, float scale) {   \
    const long long bias_dims[4] = {bd0, bd1, bd2, bd3};                                                     \
    const csa128_attention_shape shape = {seq, heads, kv_len, present_capacity,                              \
                                          cache_fp8 ? CSA128_FP8_RECORD_K : CSA128_F32_RECORD_K, cache_fp8,  \
                                          scale, bias_dims};                                                 \
    csa_cursor cur;                                                                                           \
    if (!csa128_cursor(&cur, total_ptr, seq, kv_len, past_capacity, present_capacity)) return;               \
    {                                                                                                         \
      const csa128_row_at at = {&shape, &cur, query, current_kv, sink, has_bias ? bias : NULL, cache, y,    \
                                scores};                                                                      \
      pass;                                                                                                   \
    }                                                                                                         \
  }

CSA128_ATTENTION_KERNEL(csa128_attn_scores,
                        csa_attn_scores(at, &cur, batch * seq, heads, CSA128_WINDOW_K + present_capacity))
CSA128_ATTENTION_KERNEL(csa128_attn_softmax, csa_attn_softmax(at, batch * seq * heads))
CSA128_ATTENTION_KERNEL(csa128_attn_values, csa_attn_values(at, &cur, batch * seq, heads))
