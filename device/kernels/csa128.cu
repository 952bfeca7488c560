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
**   csa128_attention    one block per (batch, query, head) output row: the
**                       dense window, then the finished records, with a sink.
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
** the PTX); exp, pow and sin/cos are the frozen numerics' correctly rounded
** nx_expf, nx_powf and nx_sincosf; bf16 rounding is the seed's formula
** (nx_bf16_round); FP8 blocks are nx_fp8_block64_quantize / _dequantize.
** Every sum keeps the oracle's order, in one thread:
**
**   pooling (dim d, own thread):  m = max over the 128 slot scores (nx_maxf,
**       from -inf); over slots j ascending, skipping scores equal to -inf:
**       w = nx_expf(score_j - m); den += w; num += w * kv_j; pooled[d] =
**       bf16(num / den).
**   RMS (one thread):  sq = sum over d ascending of pooled[d] * pooled[d];
**       inv = 1 / sqrt(sq / 512 + 1e-6f); normed[d] = bf16((pooled[d] * inv)
**       * norm[d]) (element-wise, in parallel).
**   RoPE (pair p = 0..31, dims 448 + 2p and 449 + 2p, one thread each):
**       ramp = clamp((p - 15) / 10, 0, 1); base = nx_powf(160000, -(2p) / 64);
**       freq = base * (1 - ramp) + (base / 16) * ramp;
**       (sin, cos) = nx_sincosf((float)(pos - 127) * freq);
**       re' = bf16(re * cos - im * sin); im' = bf16(re * sin + im * cos).
**   record: FP8 -- seven quantized blocks of dims 0..447, then the BF16 bits
**       of dims 448..511 little-endian (583 bytes); f32 -- the seven blocks
**       quantized and dequantized again, then dims 448..511 as they are.
**
**   attention row (b, s, h), position = start + s:
**       dense candidates c < Nd, Nd = 128, or min(kv_used, 128) when
**       start == 0; absolute = max(kv_base, max(position - 127, 0)) + c; a
**       candidate is live when absolute <= position and absolute - kv_base <
**       kv_used.  Record candidates c = Nd + r, r < min(Rc, (position + 1) /
**       128).  score_c = (sum over d ascending of q[d] * k_c[d]) * scale,
**       then + bias[b, h, s, c] (broadcast); a dead candidate is -inf.
**       m = max of the scores (nx_maxf; order-free, so reduced across the
**       block); m == -inf gives a zero row.  Otherwise e_c = nx_expf(score_c
**       - m) for every score that is not -inf (in parallel); den = sum of the
**       e_c over c ascending (one thread), then + nx_expf(sink[h] - m);
**       p_c = e_c / den (in parallel); y[d] = sum over c ascending of
**       p_c * v_c[d] (one thread per dim).  FP8 record values are
**       decode(code) * 2^(scale byte - 127) and the BF16 tail widened.
**
** Floats are moved by their bits where the oracle copies them (carry, kv,
** records), so NaN payloads survive as they do in a memcpy.
**
** All index arithmetic is 64-bit (long long).
*/
#include "csa128_abi.h"
#include "numerics.h"

#define CSA128_NEG_INF_BITS 0xff800000u
#define CSA128_CARRY_ROW (CSA128_RATIO_K * 2 * CSA128_DIM_K) /* floats a batch row */

static __device__ __forceinline__ int csa128_is_neg_inf(float x) {
  return nx_f32_bits(x) == CSA128_NEG_INF_BITS;
}

static __device__ __forceinline__ long long csa128_min_ll(long long a, long long b) {
  return a < b ? a : b;
}

static __device__ __forceinline__ long long csa128_max_ll(long long a, long long b) {
  return a > b ? a : b;
}

/* ---- the cursor ------------------------------------------------------------------ */

typedef struct csa128_cursor {
  long long total, start, past_records, present_records, kv_used, kv_base;
  int ok; /* 0: the cursor breaks a rule of csa_validate_cursor */
} csa128_cursor;

/* csa_validate_cursor's rules and fields, from the device's total. */
static __device__ __forceinline__ csa128_cursor csa128_read_cursor(const long long *total_ptr,
                                                                   long long seq, long long kv_len,
                                                                   long long past_capacity,
                                                                   long long present_capacity) {
  csa128_cursor c;
  c.total = *total_ptr;
  c.start = c.total - seq;
  c.past_records = c.start / CSA128_RATIO_K;
  c.present_records = c.total / CSA128_RATIO_K;
  c.kv_used = csa128_min_ll(kv_len, c.total);
  c.kv_base = c.total - c.kv_used;
  c.ok = c.total >= 0 && c.start >= 0 && past_capacity >= c.past_records &&
         present_capacity >= c.present_records;
  return c;
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
  const csa128_cursor c =
      csa128_read_cursor(total_ptr, seq, kv_len, past_capacity, present_capacity);
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long step = (long long)gridDim.x * blockDim.x;
  const long long carry_words = batch * CSA128_CARRY_ROW;
  const long long row_bytes = present_capacity * record_bytes;
  const long long cache_bytes = batch * row_bytes;
  long long i;

  if (!c.ok) {
    if (first == 0 && latch) atomicOr(latch, CSA128_LATCH_CURSOR_BIT);
    return;
  }
  for (i = first; i < carry_words; i += step) {
    if (c.start != 0)
      carry[i] = past_carry[i];
    else /* [.., slot, part, d]: part 0 is the kv, part 1 the score */
      carry[i] = (i / CSA128_DIM_K) % 2 == 0 ? 0u : CSA128_NEG_INF_BITS;
  }
  for (i = first; i < cache_bytes; i += step) {
    const long long b = i / row_bytes, within = i % row_bytes;
    const long long record = within / record_bytes;
    if (record < c.past_records)
      cache[i] = past_cache[b * past_capacity * record_bytes + within];
    else if (record >= c.present_records)
      cache[i] = 0;
  }
}

/* ---- compression ------------------------------------------------------------------- */

/*
** The slot-softmax pooling of dim d over the 128 slots of one carry row
** (row points at [slot 0, part 0, dim 0]), then the seed's BF16 rounding.
*/
static __device__ __forceinline__ float csa128_pool_dim(const float *row, int d) {
  float m = nx_f32_from_bits(CSA128_NEG_INF_BITS), den = 0.0f, num = 0.0f;
  int j;
  for (j = 0; j < CSA128_RATIO_K; j++) m = nx_maxf(m, row[(2 * j + 1) * CSA128_DIM_K + d]);
  for (j = 0; j < CSA128_RATIO_K; j++) {
    const float score = row[(2 * j + 1) * CSA128_DIM_K + d];
    float w;
    if (csa128_is_neg_inf(score)) continue; /* an empty slot */
    w = nx_expf(score - m);
    den = den + w;
    num = num + w * row[(2 * j) * CSA128_DIM_K + d];
  }
  return nx_bf16_round(num / den);
}

/* RoPE pair p of the tail (dims 448 + 2p, 449 + 2p) at position pos - 127, in place. */
static __device__ __forceinline__ void csa128_rope_pair(float *record, int pair, long long pos) {
  const float t = ((float)pair - 15.0f) / 10.0f;
  const float ramp = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
  const float base = nx_powf(160000.0f, nx_f32_neg((float)(2 * pair)) / 64.0f);
  const float freq = base * (1.0f - ramp) + (base / 16.0f) * ramp;
  const int d = CSA128_NOPE_K + 2 * pair;
  const float re = record[d], im = record[d + 1];
  float sn, cs;
  nx_sincosf((float)(pos - (CSA128_RATIO_K - 1)) * freq, &sn, &cs);
  record[d] = nx_bf16_round(re * cs - im * sn);
  record[d + 1] = nx_bf16_round(re * sn + im * cs);
}

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

  for (d = tid; d < CSA128_DIM_K; d += nthreads) record[d] = csa128_pool_dim(row, d);
  __syncthreads();
  if (tid == 0) { /* the sum of squares in the oracle's order */
    float sq = 0.0f;
    for (d = 0; d < CSA128_DIM_K; d++) sq = sq + record[d] * record[d];
    *inv_rms = 1.0f / __fsqrt_rn(sq / (float)CSA128_DIM_K + 1e-6f);
  }
  __syncthreads();
  for (d = tid; d < CSA128_DIM_K; d += nthreads)
    record[d] = nx_bf16_round((record[d] * *inv_rms) * norm[d]);
  __syncthreads();
  if (tid < CSA128_ROPE_PAIRS_K) csa128_rope_pair(record, tid, pos);
  __syncthreads();

  if (cache_fp8) {
    nx_u8 *dst = cache + (b * present_capacity + index) * CSA128_FP8_RECORD_K;
    if (tid < CSA128_FP8_BLOCKS_K)
      nx_fp8_block64_quantize(record + NX_FP8_BLOCK * tid, dst + NX_FP8_BLOCK_BYTES * tid);
    if (tid < CSA128_DIM_K - CSA128_NOPE_K) {
      const nx_u16 bits = nx_bf16_round_bits(record[CSA128_NOPE_K + tid]);
      dst[CSA128_FP8_BLOCKS_K * NX_FP8_BLOCK_BYTES + 2 * tid] = (nx_u8)(bits & 0xffu);
      dst[CSA128_FP8_BLOCKS_K * NX_FP8_BLOCK_BYTES + 2 * tid + 1] = (nx_u8)(bits >> 8);
    }
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
      ((nx_u32 *)row)[(2 * j + 1) * CSA128_DIM_K + d] = CSA128_NEG_INF_BITS;
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
  const csa128_cursor c =
      csa128_read_cursor(total_ptr, seq, kv_len, past_capacity, present_capacity);
  const long long b = blockIdx.x;
  float *row = carry + b * CSA128_CARRY_ROW;
  long long s;
  int d;

  if (!c.ok || b >= batch) return; /* uniform across the block */
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

/* The bias at (b, h, s, candidate) of [bd0, bd1, bd2, bd3]; an axis of 1 broadcasts. */
static __device__ __forceinline__ float csa128_bias_at(const float *bias, long long bd0,
                                                       long long bd1, long long bd2,
                                                       long long bd3, long long b, long long h,
                                                       long long s, long long c) {
  long long off = bd0 == 1 ? 0 : b;
  off = off * bd1 + (bd1 == 1 ? 0 : h);
  off = off * bd2 + (bd2 == 1 ? 0 : s);
  off = off * bd3 + (bd3 == 1 ? 0 : c);
  return bias[off];
}

/* Element d of a finished record: f32 view, or FP8 block value / BF16 tail. */
static __device__ __forceinline__ float csa128_record_value(const nx_u8 *rec, int cache_fp8,
                                                            int d) {
  if (!cache_fp8) return ((const float *)rec)[d];
  if (d < CSA128_NOPE_K) {
    const nx_u8 *blk = rec + NX_FP8_BLOCK_BYTES * (d / NX_FP8_BLOCK);
    return nx_e4m3_decode(blk[1 + d % NX_FP8_BLOCK]) * nx_ue8m0_decode(blk[0]);
  }
  {
    const nx_u8 *tail = rec + CSA128_FP8_BLOCKS_K * NX_FP8_BLOCK_BYTES + 2 * (d - CSA128_NOPE_K);
    return nx_bf16_to_f32((nx_u16)(tail[0] | (tail[1] << 8)));
  }
}

/* q . record, d ascending from 0.0f, one thread. */
static __device__ __forceinline__ float csa128_dot_record(const float *q, const nx_u8 *rec,
                                                          int cache_fp8) {
  float acc = 0.0f;
  int d;
  if (!cache_fp8) {
    const float *v = (const float *)rec;
    for (d = 0; d < CSA128_DIM_K; d++) acc = acc + q[d] * v[d];
    return acc;
  }
  for (d = 0; d < CSA128_DIM_K; d++) acc = acc + q[d] * csa128_record_value(rec, 1, d);
  return acc;
}

/*
** One block per output row (b, s, h) of Y [B, S, heads, 512], block-stride.
** query [B, S, heads, 512]; current_kv [B, L, 512]; cache: the present
** records [B, Rc, W]; sink [heads]; bias as bd0..bd3 (has_bias 0: NULL);
** scores: [B * S * heads, 128 + Rc] f32 scratch, a row's scores, then its
** exps, then its probabilities, with -inf marking a dead candidate throughout
** (neither an exp nor a probability can be -inf).
*/
extern "C" __global__ void __launch_bounds__(CSA128_ATTN_THREADS) csa128_attention(
    const float *query, const float *current_kv, const nx_u8 *cache, const float *sink,
    const float *bias, int has_bias, long long bd0, long long bd1, long long bd2, long long bd3,
    float *y, float *scores, const long long *total_ptr, long long batch, long long seq,
    long long heads, long long kv_len, long long past_capacity, long long present_capacity,
    int cache_fp8, float scale) {
  __shared__ float q[CSA128_DIM_K];
  __shared__ float block_max[CSA128_ATTN_THREADS];
  __shared__ float den_shared;
  const csa128_cursor cur =
      csa128_read_cursor(total_ptr, seq, kv_len, past_capacity, present_capacity);
  const long long rows = batch * seq * heads, stride = CSA128_WINDOW_K + present_capacity;
  const long long record_bytes = cache_fp8 ? CSA128_FP8_RECORD_K : CSA128_F32_RECORD_K;
  const int tid = threadIdx.x, nthreads = blockDim.x;
  long long row;

  if (!cur.ok) return;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long h = row % heads, bs = row / heads;
    const long long s = bs % seq, b = bs / seq;
    const long long position = cur.start + s;
    const long long n_dense =
        cur.start == 0 ? csa128_min_ll(cur.kv_used, CSA128_WINDOW_K) : CSA128_WINDOW_K;
    const long long dense_start =
        csa128_max_ll(cur.kv_base, csa128_max_ll(position + 1 - CSA128_WINDOW_K, 0));
    const long long n_records = csa128_min_ll(present_capacity, (position + 1) / CSA128_RATIO_K);
    const long long count = n_dense + n_records;
    const long long qoff = row * CSA128_DIM_K; /* Y and query share the layout */
    const float *kv_row0 = current_kv + b * kv_len * CSA128_DIM_K;
    const nx_u8 *rec_row0 = cache + b * present_capacity * record_bytes;
    float *rs = scores + row * stride;
    float m = nx_f32_from_bits(CSA128_NEG_INF_BITS);
    long long c;
    int d, w;

    for (d = tid; d < CSA128_DIM_K; d += nthreads) q[d] = query[qoff + d];
    __syncthreads();

    /* scores, each in one thread; the block's max */
    for (c = tid; c < count; c += nthreads) {
      float score = nx_f32_from_bits(CSA128_NEG_INF_BITS);
      int live = 1;
      if (c < n_dense) {
        const long long absolute = dense_start + c, relative = absolute - cur.kv_base;
        live = absolute <= position && relative < cur.kv_used;
        if (live) {
          const float *k = kv_row0 + relative * CSA128_DIM_K;
          float acc = 0.0f;
          for (d = 0; d < CSA128_DIM_K; d++) acc = acc + q[d] * k[d];
          score = acc * scale;
        }
      } else {
        score = csa128_dot_record(q, rec_row0 + (c - n_dense) * record_bytes, cache_fp8) * scale;
      }
      if (live && has_bias) score = score + csa128_bias_at(bias, bd0, bd1, bd2, bd3, b, h, s, c);
      rs[c] = score;
      m = nx_maxf(m, score);
    }
    block_max[tid] = m;
    __syncthreads();
    if (tid == 0) {
      for (w = 1; w < nthreads; w++) m = nx_maxf(m, block_max[w]);
      block_max[0] = m;
    }
    __syncthreads();
    m = block_max[0];

    if (csa128_is_neg_inf(m)) { /* no live candidate: a zero row */
      for (d = tid; d < CSA128_DIM_K; d += nthreads) y[qoff + d] = 0.0f;
      __syncthreads();
      continue;
    }

    /* exps in parallel; their sum ascending in one thread, then the sink */
    for (c = tid; c < count; c += nthreads)
      if (!csa128_is_neg_inf(rs[c])) rs[c] = nx_expf(rs[c] - m);
    __syncthreads();
    if (tid == 0) {
      float den = 0.0f;
      for (c = 0; c < count; c++)
        if (!csa128_is_neg_inf(rs[c])) den = den + rs[c];
      den_shared = den + nx_expf(sink[h] - m);
    }
    __syncthreads();
    for (c = tid; c < count; c += nthreads)
      if (!csa128_is_neg_inf(rs[c])) rs[c] = rs[c] / den_shared;
    __syncthreads();

    /* y[d] = sum over live c ascending of p_c * v_c[d], one thread per dim */
    for (d = tid; d < CSA128_DIM_K; d += nthreads) {
      float acc = 0.0f;
      for (c = 0; c < count; c++) {
        const float p = rs[c];
        float v;
        if (csa128_is_neg_inf(p)) continue;
        if (c < n_dense)
          v = kv_row0[(dense_start + c - cur.kv_base) * CSA128_DIM_K + d];
        else
          v = csa128_record_value(rec_row0 + (c - n_dense) * record_bytes, cache_fp8, d);
        acc = acc + p * v;
      }
      y[qoff + d] = acc;
    }
    __syncthreads();
  }
}
