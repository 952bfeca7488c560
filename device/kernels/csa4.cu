/*
** csa4.cu: the CompressedSparseAttention kernels for compression ratio 4
** (seed 003_9308a65268dfd821.txt: csa_ratio4_main_compress,
** csa_ratio4_index_compress, csa_ratio4_index_select,
** csa_ratio4_index_replicate, csa_ratio4_sink_attention; DESIGN.md "The
** frozen numerics"; the oracle is oracle_csa4_run, oracle/SPEC.md "ratio 4").
** Launched, in this order, on one stream by device/csa4_device.c:
**
**   csa4_state_copy      both present carries <- past carries (the empty
**                        carry when start == 0); present records [0,
**                        start/4) of both caches <- past records; records
**                        [total/4, capacity) <- zero bytes;
**   csa4_main_compress   a cluster of 8 blocks per batch row, 64 dims a
**                        block: the 8-slot overlapped pool of the main
**                        stream, a 583-byte FP8 record per 4th position
**                        (outputs 1, 2);
**   csa4_index_compress  the same for the index stream (a cluster of 2), with
**                        the Hadamard transform and a 68-byte FP4 record
**                        (outputs 3, 4);
**   csa4_index_query     one block per (b, s, index head), a RoPE warp and a
**                        transform warp: the finalized index query
**                        (IndexQueryFinalize payload);
**   csa4_index_score     a tile of 32 records of one (b, s) row a block: a
**                        record a lane, its index heads spread over the
**                        warps (IndexScoring payload);
**   csa4_select          a cluster of 8 blocks per (b, s) row: the exact
**                        top-k, a radix select then a rank by counting
**                        (csa4_select.h; Selection payload);
**   csa4_broadcast       the selection over the index heads (output 5, only
**                        in the 6-output configuration);
**   csa4_attn_gather,    csa_attention_tiles.h's four passes over the dense
**   csa4_attn_scores,    window and the selected records: the candidates
**   csa4_attn_softmax,   decoded once, tiles of heads x candidates, a block
**   csa4_attn_values     per row, tiles of heads x dims (CandidateAssembly
**                        payload, Y); with many (b, s) rows the scores
**                        and values passes are csa4_attn_scores_wide and
**                        csa4_attn_values_wide (csa_attention_chains.h).
**
** The cursor is read on the device (csa_kernel_common.h).  A cursor that
** breaks csa_validate_cursor's rules for either cache makes csa4_state_copy
** raise CSA4_LATCH_CURSOR_BIT (when given a latch) and every kernel return at
** once, so a poisoned replay never reads or writes out of bounds.
**
** Arithmetic.  Every + - * / is one IEEE binary32 operation rounded to
** nearest (the pinned --fmad=false keeps them apart; `bitgate audit` checks
** the PTX).  Every formula is nx_csa.h's, the oracle's own text; kernels
** split the work only across independent outputs (a dim, a RoPE pair, a
** Hadamard butterfly of one stage, a quantizer element, a record, one index
** head's dot product, a candidate's score, a row), reduce only order-free
** maxima in parallel (a pool's nx_maxf, a quantizer block's amax), and
** every sum runs in one thread in the oracle's order:
**   compression (per emitted record, block_start = pos - 3): record[d] =
**       nx_csa_pool over the 8 slots (slots 4..7 read source dim dim + d);
**       nx_csa_square_sum's chain (one thread) -> nx_csa_inv_rms ->
**       nx_csa_norm_value; nx_csa_rope_pair's rotation on the last 64 dims
**       (its angle computed while the record pools); main: 7 blocks as
**       nx_fp8_block64_quantize (a warp a block) + nx_csa_fp8_record_tail;
**       index: the Hadamard stages (nx_csa_hadamard_pair's butterfly, in
**       one warp), bf16(x * nx_csa_rsqrt_exact(128)), 4 blocks as
**       nx_fp4_block32_quantize (the blocks of nx_csa_fp4_record_write).
**   index query: bf16(q), RoPE at the query position start + s, Hadamard and
**       scale as above, then the FP4 round trip (record write, record value).
**   scoring (record r < limit = min((pos + 1) / 4, Rci)): over index heads
**       ascending, from +0: score += (nx_maxf(dot_h, 0) * weight_h) *
**       nx_csa_weight_scale(128, IH), dot_h = sum over d ascending of
**       q_h[d] * nx_csa_fp4_record_value(key_r, d); records >= limit: -inf.
**   selection: the first min(limit, topk) records in nx_csa_rank_before
**       order (nx_csa_rank_key, a radix select of the k-th key then each
**       chosen key's slot as the count of keys above it), -1 after them.
**       Exact: no float arithmetic.
**
** Floats are moved by their bits where the oracle copies them (carry, kv).
** All index arithmetic is 64-bit (long long).
*/
#include "csa4_abi.h"
#include "numerics.h"
#include "nx_csa.h"
#include "csa_kernel_common.h"
#include "csa_sink_attention.h"
#include "csa_attention_rows.h"
#include "csa_attention_tiles.h"

#define CSA4_MAIN_CARRY_ROW (CSA4_SLOTS_K * 2 * CSA4_SOURCE_K)        /* floats a batch row */
#define CSA4_INDEX_CARRY_ROW (CSA4_SLOTS_K * 2 * CSA4_INDEX_SOURCE_K) /* floats a batch row */

/* The cursor, and csa_validate_cursor's rules for both caches (main, then index). */
static __device__ __forceinline__ int csa4_cursor(csa_cursor *c, const long long *total_ptr,
                                                  const csa4_shape *p) {
  *c = csa_cursor_read(total_ptr, p->seq, p->kv_len, CSA4_RATIO_K);
  return csa_cursor_fits(c, p->past_capacity, p->present_capacity) &&
         csa_cursor_fits(c, p->index_past_capacity, p->index_present_capacity);
}

/* The causal record limit of the query at position: min((position + 1) / 4, Rci). */
static __device__ __forceinline__ long long csa4_record_limit(const csa4_shape *p,
                                                              long long position) {
  return csa_min_ll((position + 1) / CSA4_RATIO_K, p->index_present_capacity);
}

/* ---- state copy -------------------------------------------------------------------- */

/*
** Outputs 2 and 4 (carries, as 32-bit words) and 1 and 3 (caches, bytes),
** grid-stride; the records in between are the compressions'.  latch: the
** capture-error word, or NULL outside capture.
*/
extern "C" __global__ void __launch_bounds__(CSA4_STATE_THREADS)
    csa4_state_copy(csa4_shape p, const nx_u32 *past_carry, const nx_u8 *past_cache,
                    const nx_u32 *past_index_carry, const nx_u8 *past_index_key, nx_u32 *carry,
                    nx_u8 *cache, nx_u32 *index_carry, nx_u8 *index_key,
                    const long long *total_ptr, unsigned *latch) {
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long step = (long long)gridDim.x * blockDim.x;
  csa_cursor c;
  if (!csa4_cursor(&c, total_ptr, &p)) {
    if (first == 0 && latch) atomicOr(latch, CSA4_LATCH_CURSOR_BIT);
    return;
  }
  csa_copy_carry(past_carry, carry, p.batch * CSA4_MAIN_CARRY_ROW, CSA4_SOURCE_K, c.start == 0, first, step);
  csa_copy_carry(past_index_carry, index_carry, p.batch * CSA4_INDEX_CARRY_ROW, CSA4_INDEX_SOURCE_K,
                 c.start == 0, first, step);
  csa_copy_cache_rows(past_cache, cache, p.batch, p.past_capacity, p.present_capacity,
                      CSA4_FP8_RECORD_K, &c, first, step);
  csa_copy_cache_rows(past_index_key, index_key, p.batch, p.index_past_capacity,
                      p.index_present_capacity, CSA4_INDEX_RECORD_K, &c, first, step);
}

/* ---- compression (both streams): csa4_compress.h, csa4_compress_steps.h ------ */

#include "csa4_compress.h"
#include "csa4_compress_steps.h"

/*
** The main stream: kv and gate [B, S, 1024], ape [4, 1024], norm [512];
** carry [B, 8, 2, 1024] and cache [B, Rc, 583] already hold what
** csa4_state_copy left.  A cluster of CSA4_MAIN_CLUSTER blocks a batch row.
*/
extern "C" __global__ void __cluster_dims__(CSA4_MAIN_CLUSTER, 1, 1) __launch_bounds__(CSA4_MAIN_THREADS)
    csa4_main_compress(csa4_shape p, const float *kv, const float *gate, const float *ape,
                       const float *norm, float *carry, nx_u8 *cache, const long long *total_ptr) {
  const csa4_stream st = {kv, gate, ape, norm, carry, cache, CSA4_SOURCE_K, CSA4_MAIN_CARRY_ROW,
                          p.present_capacity, CSA4_FP8_RECORD_K};
  csa4_compress<CSA4_DIM_K, CSA4_MAIN_CLUSTER, CSA4_MAIN_CANDS, csa4_main_finish>(p, st, total_ptr);
}

/*
** The index stream: kv and gate [B, S, 256], ape [4, 256], norm [128];
** carry [B, 8, 2, 256]; key [B, Rci, 68].  As csa4_main_compress, with one
** block a batch row (two threads a dim), the Hadamard stage and the FP4 record.
*/
static_assert(CSA4_INDEX_CLUSTER == 1, "csa4_index_compress is launched without a cluster");
extern "C" __global__ void __launch_bounds__(CSA4_INDEX_THREADS)
    csa4_index_compress(csa4_shape p, const float *kv, const float *gate, const float *ape,
                        const float *norm, float *carry, nx_u8 *key, const long long *total_ptr) {
  const csa4_stream st = {kv, gate, ape, norm, carry, key, CSA4_INDEX_SOURCE_K, CSA4_INDEX_CARRY_ROW,
                          p.index_present_capacity, CSA4_INDEX_RECORD_K};
  csa4_compress<CSA4_INDEX_DIM_K, CSA4_INDEX_CLUSTER, CSA4_INDEX_CANDS, csa4_index_finish>(p, st, total_ptr);
}

/* ---- index query, scoring, selection ----------------------------------------------- */

/*
** One block per (b, s, index head) row of index_query [B, S, IH, 128],
** block-stride: out (the same layout) <- bf16, RoPE at start + s, Hadamard
** and scale, then the FP4 round trip (the 68-byte record, read back with
** nx_csa_fp4_record_value).  Warp 1 computes the row's 32 RoPE angles
** (nx_csa_rope_freq from csa_rope_freq.h) while warp 0 rounds the row; warp 0 then
** runs csa4_index_transform, the compressor's own, into packed.
*/
extern "C" __global__ void __launch_bounds__(CSA4_QUERY_THREADS)
    csa4_index_query(csa4_shape p, const float *index_query, float *out,
                     const long long *total_ptr) {
  __shared__ float2 angle[NX_CSA_ROPE_PAIRS];
  __shared__ nx_u8 packed[CSA4_INDEX_RECORD_K];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long rows = p.batch * p.seq * p.index_heads;
  const float freq = warp == 1 ? csa_rope_freq_table[lane] : 0.0f;
  csa_cursor c;
  long long row;
  int d;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    float *dst = out + row * CSA4_INDEX_DIM_K;
    float src[4], q[4]; /* lane l: dims 4l .. 4l + 3 */
    for (d = 0; d < 4; d++) src[d] = index_query[row * CSA4_INDEX_DIM_K + 4 * lane + d];
    if (row == blockIdx.x && !csa4_cursor(&c, total_ptr, &p)) return; /* src is in bounds whatever the cursor */
    if (warp == 1) angle[lane] = csa_rope_angle(freq, c.start + (row / p.index_heads) % p.seq);
    if (warp == 0)
      for (d = 0; d < 4; d++) q[d] = nx_bf16_round(src[d]);
    __syncthreads();
    if (warp == 0) {
      csa4_index_transform(q, angle, packed);
      __syncwarp();
      for (d = lane; d < CSA4_INDEX_DIM_K; d += 32) dst[d] = nx_csa_fp4_record_value(packed, d);
    }
    __syncthreads(); /* angle and packed are reused by the next row */
  }
}

/*
** scores [B, S, Rci] <- each index record's score for the query row (see
** the top), -inf from the row's causal limit on.  query: the finalized
** queries [B, S, IH, 128]; weight [B, S, IH]; key: the present index
** records [B, Rci, 68].
**
** Work units are (row, tile of CSA4_SCORE_RECORDS records), block-stride.
** A unit decodes its records once into ks (a record a row, padded so that
** a lane's float4 reads meet no bank conflict), then stages the row's
** query CSA4_SCORE_HEAD_CHUNK heads at a time.  Lane l of every warp owns
** record r0 + l; warp w computes the dot products of heads w, w + 8, ...
** of the chunk, each one in one thread with d ascending, and leaves each
** head's term (relu(dot) * weight) * weight_scale in terms.  Warp 0 then
** adds the chunk's terms to its record's score in head order, so the heads
** of a record still add up in ascending order from +0, however the dot
** products were spread.
*/
#define CSA4_SCORE_WARPS (CSA4_SCORE_THREADS / 32)
#define CSA4_SCORE_HEADS_A_WARP (CSA4_SCORE_HEAD_CHUNK / CSA4_SCORE_WARPS)
#define CSA4_SCORE_KEY_STRIDE (CSA4_INDEX_DIM_K + 4)

extern "C" __global__ void __launch_bounds__(CSA4_SCORE_THREADS)
    csa4_index_score(csa4_shape p, const float *query, const float *weight, const nx_u8 *key,
                     float *scores, const long long *total_ptr) {
  __shared__ __align__(16) float qs[CSA4_SCORE_HEAD_CHUNK * CSA4_INDEX_DIM_K];
  __shared__ __align__(16) float ks[CSA4_SCORE_RECORDS * CSA4_SCORE_KEY_STRIDE];
  __shared__ float terms[CSA4_SCORE_HEAD_CHUNK * CSA4_SCORE_RECORDS];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const long long capacity = p.index_present_capacity, ih = p.index_heads;
  const long long tiles = (capacity + CSA4_SCORE_RECORDS - 1) / CSA4_SCORE_RECORDS;
  const long long units = p.batch * p.seq * tiles;
  const float weight_scale = nx_csa_weight_scale(CSA4_INDEX_DIM_K, (int)ih);
  csa_cursor c;
  long long unit;
  if (!csa4_cursor(&c, total_ptr, &p)) return;
  for (unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const long long row = unit / tiles, r0 = (unit % tiles) * CSA4_SCORE_RECORDS, r = r0 + lane;
    const long long limit = csa4_record_limit(&p, c.start + row % p.seq);
    const nx_u8 *tile_key = key + ((row / p.seq) * capacity + r0) * CSA4_INDEX_RECORD_K;
    float score = 0.0f; /* warp 0's: its lane's record */
    long long h0;
    int i;
    if (r0 >= limit) { /* the whole tile is past the limit (block-uniform) */
      if (warp == 0 && r < capacity) scores[row * capacity + r] = csa_neg_inf();
      continue;
    }
    __syncthreads(); /* the previous unit is done with ks and terms */
    for (i = tid; i < CSA4_SCORE_RECORDS * CSA4_INDEX_DIM_K; i += CSA4_SCORE_THREADS) {
      const int rec = i / CSA4_INDEX_DIM_K, d = i % CSA4_INDEX_DIM_K;
      ks[rec * CSA4_SCORE_KEY_STRIDE + d] =
          r0 + rec < limit ? nx_csa_fp4_record_value(tile_key + (long long)rec * CSA4_INDEX_RECORD_K, d) : 0.0f;
    }
    for (h0 = 0; h0 < ih; h0 += CSA4_SCORE_HEAD_CHUNK) {
      const int n_heads = (int)csa_min_ll(CSA4_SCORE_HEAD_CHUNK, ih - h0);
      const float *row_query = query + (row * ih + h0) * CSA4_INDEX_DIM_K;
      float acc[CSA4_SCORE_HEADS_A_WARP];
      int j, d;
      __syncthreads(); /* ks is written; the previous chunk's qs and terms are read */
      for (i = tid; i < n_heads * CSA4_INDEX_DIM_K; i += CSA4_SCORE_THREADS) qs[i] = row_query[i];
      __syncthreads();
#pragma unroll
      for (j = 0; j < CSA4_SCORE_HEADS_A_WARP; j++) acc[j] = 0.0f;
      for (d = 0; d < CSA4_INDEX_DIM_K; d += 4) {
        const float4 k4 = *(const float4 *)&ks[lane * CSA4_SCORE_KEY_STRIDE + d];
#pragma unroll
        for (j = 0; j < CSA4_SCORE_HEADS_A_WARP; j++) {
          const int hl = warp + CSA4_SCORE_WARPS * j;
          if (hl < n_heads) { /* warp-uniform */
            const float4 q4 = *(const float4 *)&qs[hl * CSA4_INDEX_DIM_K + d];
            acc[j] = acc[j] + q4.x * k4.x;
            acc[j] = acc[j] + q4.y * k4.y;
            acc[j] = acc[j] + q4.z * k4.z;
            acc[j] = acc[j] + q4.w * k4.w;
          }
        }
      }
#pragma unroll
      for (j = 0; j < CSA4_SCORE_HEADS_A_WARP; j++) {
        const int hl = warp + CSA4_SCORE_WARPS * j;
        if (hl < n_heads)
          terms[hl * CSA4_SCORE_RECORDS + lane] =
              (nx_maxf(acc[j], 0.0f) * weight[row * ih + h0 + hl]) * weight_scale;
      }
      __syncthreads();
      if (warp == 0)
        for (j = 0; j < n_heads; j++) score = score + terms[j * CSA4_SCORE_RECORDS + lane];
    }
    if (warp == 0 && r < capacity) scores[row * capacity + r] = r < limit ? score : csa_neg_inf();
  }
}

/* ---- top-k: csa4_select.h ------------------------------------------------------------ */

#include "csa4_select.h"

/* selected_indices [B, IH, S, topk] <- selection [B, S, topk], the same for every index head. */
extern "C" __global__ void __launch_bounds__(CSA4_BROADCAST_THREADS)
    csa4_broadcast(csa4_shape p, const int *selection, int *selected, const long long *total_ptr) {
  const long long n = p.batch * p.index_heads * p.seq * p.topk;
  const long long step = (long long)gridDim.x * blockDim.x;
  csa_cursor c;
  long long i;
  if (!csa4_cursor(&c, total_ptr, &p)) return;
  for (i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const long long slot = i % p.topk, s = (i / p.topk) % p.seq;
    const long long b = i / (p.topk * p.seq * p.index_heads);
    selected[i] = selection[(b * p.seq + s) * p.topk + slot];
  }
}

/* ---- attention --------------------------------------------------------------------- */

/*
** Output rows (b, s, h) of Y [B, S, heads, 512] as csa_attention_tiles.h's
** four passes, each kernel block-stride over its own units.  Candidates:
** the dense window, then slot 0..topk of the row's selection (live iff 0 <=
** record < total / 4), read from the packed cache [B, Rc, 583] by the
** gather only.  scores and weights: [B * S * heads, 128 + topk] scratch;
** scores stays the CandidateAssembly payload.  gathered: [B * S, 128 +
** topk, 512] f32 scratch.  The four take the same arguments.
*/
struct csa4_row_at {
  const csa4_shape *p;
  const csa_cursor *cur;
  const float *query, *current_kv, *sink, *bias;
  const nx_u8 *cache;
  const int *selection;
  float *y, *scores, *weights, *gathered;
  __device__ void operator()(long long row, csa_attention_row *r) const {
    csa4_attention_row_at(r, p, cur, row, query, current_kv, cache, selection, sink, bias, y, scores, weights);
    csa_attn_locate_gathered(r, gathered, row, p->heads);
  }
};

#define CSA4_ATTENTION_KERNEL(name, which, bounds, pass)                                                   \
  extern "C" __global__ void __launch_bounds__ bounds                       \
      name(csa4_shape p, const float *query, const float *current_kv, const nx_u8 *cache,                   \
           const int *selection, const float *sink, const float *bias, float *y, float *scores,             \
           float *weights, float *gathered, const long long *total_ptr, unsigned early_release) {           \
    csa_cursor cur;                                                                                         \
    if ((early_release >> (which)) & 1u) csa_chain_release(); /* the plan's choice: csa_chain_wait */       \
    if (!csa4_cursor(&cur, total_ptr, &p)) return;                                                          \
    {                                                                                                       \
      const csa4_row_at at = {&p,   &cur,     query,  current_kv, sink,    bias,                            \
                              cache, selection, y, scores, weights, gathered};                              \
      pass;                                                                                                 \
    }                                                                                                       \
    csa_chain_release(); /* else at the end: an exit before it releases too */                              \
  }

CSA4_ATTENTION_KERNEL(csa4_attn_gather, CSA_ATTN_GATHER, CSA_TILE_BOUNDS,
                      csa_attn_gather(at, &cur, p.batch * p.seq, p.heads, CSA4_WINDOW_K + p.topk))
CSA4_ATTENTION_KERNEL(csa4_attn_scores, CSA_ATTN_SCORES, CSA_TILE_BOUNDS,
                      csa_attn_scores_one(at, &cur, p.batch * p.seq, p.heads, CSA4_WINDOW_K + p.topk))
CSA4_ATTENTION_KERNEL(csa4_attn_scores_narrow, CSA_ATTN_SCORES, CSA_RESIDENT_BOUNDS,
                      csa_attn_scores_resident(at, &cur, p.batch * p.seq, p.heads, CSA4_WINDOW_K + p.topk))
CSA4_ATTENTION_KERNEL(csa4_attn_softmax, CSA_ATTN_SOFTMAX, CSA_TILE_BOUNDS,
                      csa_attn_softmax(at, p.batch * p.seq * p.heads))
CSA4_ATTENTION_KERNEL(csa4_attn_values, CSA_ATTN_VALUES, CSA_TILE_BOUNDS,
                      csa_attn_values_narrow(at, p.batch * p.seq, p.heads))
CSA4_ATTENTION_KERNEL(csa4_attn_scores_wide, CSA_ATTN_SCORES, CSA_TILE_BOUNDS,
                      csa_attn_scores<csa_wide_scores>(at, &cur, p.batch * p.seq, p.heads, CSA4_WINDOW_K + p.topk))
CSA4_ATTENTION_KERNEL(csa4_attn_values_wide, CSA_ATTN_VALUES, CSA_TILE_BOUNDS,
                      csa_attn_values<csa_wide_values>(at, p.batch * p.seq, p.heads))
