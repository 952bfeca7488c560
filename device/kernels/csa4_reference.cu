/*
** csa4_reference.cu: the reference variant of the ratio-4 CSA kernels
** (issue 8): the seed's serial design (seed 003_9308a65268dfd821.txt:
** csa_ratio4_main_compress, csa_ratio4_index_compress,
** csa_ratio4_index_select, csa_ratio4_sink_attention), written against the
** shared stage math of oracle/numerics/nx_csa.h so that it produces the
** oracle's bytes (oracle/SPEC.md "ratio 4", R2-R7).  A baseline for `bitgate
** bench` and a second device path the gate holds to the same bytes; the
** production kernels are csa4.cu.
**
** Same names and argument lists as csa4.cu's kernels (csa4_abi.h), so
** device/csa4_device.c only picks this module and the launch geometry.
** One block per unit of work, block-stride, and only thread 0 of a block
** works in the serial kernels (the launcher gives them REF_SERIAL_THREADS):
**
**   csa4_main_compress   a batch row: the tokens in order, and per 4th
**                        position the whole pooled, normalised, rotated
**                        583-byte record, dim after dim;
**   csa4_index_compress  the same for the index stream: Hadamard, scale,
**                        68-byte FP4 record;
**   csa4_index_query     a (b, s) row: every index head's finalized query
**                        in turn (the seed finalizes them in its selection
**                        kernel; here they land in the IndexQueryFinalize
**                        payload, which the next two kernels read);
**   csa4_index_score     a (b, s) row: every causal record, its index heads
**                        summed in ascending order, -inf past the limit;
**   csa4_select          a (b, s) row: top-k by repeated scan, O(topk x
**                        records): slot k takes the best record that ranks
**                        after slot k - 1's pick (nx_csa_rank_before);
**   csa4_attention       a (b, s, head) row with REF_ATTN_THREADS: thread 0
**                        scores every candidate, the block computes the dims
**                        (csa_sink_attention_reference.h).
**
** csa4_state_copy and csa4_broadcast have no twins: the launcher runs
** csa4.cu's for both variants (they move bytes; the seed's replicate kernel
** is already one thread per element).
**
** Arithmetic: one IEEE binary32 operation at a time, rounded to nearest
** (--fmad=false; `bitgate audit` checks the PTX); every formula is nx_csa.h's
** text, every sum in the oracle's order, in one thread.  Floats are moved by
** their bits where the oracle copies them.  All index arithmetic is 64-bit.
*/
#include "csa4_abi.h"
#include "reference_abi.h"
#include "numerics.h"
#include "nx_csa.h"
#include "csa_kernel_common.h"
#include "csa_sink_attention.h"
#include "csa_sink_attention_reference.h"
#include "csa_attention_rows.h"

/* The cursor, and csa_validate_cursor's rules for both caches (main, then index). */
static __device__ __forceinline__ int csa4_ref_cursor(csa_cursor *c, const long long *total_ptr,
                                                      const csa4_shape *p) {
  *c = csa_cursor_read(total_ptr, p->seq, p->kv_len, CSA4_RATIO_K);
  return csa_cursor_fits(c, p->past_capacity, p->present_capacity) &&
         csa_cursor_fits(c, p->index_past_capacity, p->index_present_capacity);
}

/* ---- compression (both streams), one thread per batch row ------------------------------- */

/*
** One compressor stream, as the fast file's: kv and gate [B, S, source],
** ape [4, source], norm [dim]; carry [B, 8, 2, source]; cache [B, capacity,
** record_bytes].  dim = source / 2.
*/
typedef struct csa4_ref_stream {
  const float *kv, *gate, *ape, *norm;
  float *carry;
  nx_u8 *cache;
  int source;
  long long capacity, record_bytes;
} csa4_ref_stream;

/* The pooled, normalised record of a carry row, RoPE on its last 64 dims at block_start. */
static __device__ void csa4_ref_finish(const float *row, int dim, const float *norm,
                                       long long block_start, float *record) {
  const int width = 2 * dim;
  float inv_rms;
  int d;
  for (d = 0; d < dim; d++) /* candidates 4..7 read source dim dim + d */
    record[d] = nx_csa_pool(row + width + d, row + d, CSA4_SLOTS_K, 2 * width, CSA4_RATIO_K, dim);
  inv_rms = nx_csa_inv_rms(nx_csa_square_sum(record, dim), dim);
  for (d = 0; d < dim; d++) record[d] = nx_csa_norm_value(record[d], inv_rms, norm[d]);
  nx_csa_rope_tail(record + dim - CSA4_ROPE_K, block_start);
}

/* Hadamard over 128 dims, then bf16(x * 1/sqrt(128)): the index record's and query's rotation. */
static __device__ void csa4_ref_rotate(float *x) {
  const float scale = nx_csa_rsqrt_exact(CSA4_INDEX_DIM_K);
  int d;
  nx_csa_hadamard(x, CSA4_INDEX_DIM_K);
  for (d = 0; d < CSA4_INDEX_DIM_K; d++) x[d] = nx_bf16_round(x[d] * scale);
}

/*
** Batch rows block-stride, thread 0 only: the tokens in order into slot 4 +
** (pos & 3); at every 4th position the record (record: the thread's scratch
** of dim floats) into cache record (pos + 1) / 4 - 1, then slots 4..7 move
** to 0..3 and empty again.  index_stream: the Hadamard stage and the FP4
** record instead of the FP8 one.
*/
static __device__ void csa4_ref_compress(const csa4_shape &p, const csa4_ref_stream &st,
                                         const long long *total_ptr, int index_stream,
                                         float *record) {
  const int dim = st.source / 2;
  const long long carry_row = CSA4_SLOTS_K * 2 * (long long)st.source;
  csa_cursor c;
  long long b, s;
  int x, j;
  if (threadIdx.x != 0 || !csa4_ref_cursor(&c, total_ptr, &p)) return;
  for (b = blockIdx.x; b < p.batch; b += gridDim.x) {
    float *row = st.carry + b * carry_row;
    nx_u32 *words = (nx_u32 *)row;
    for (s = 0; s < p.seq; s++) {
      const long long pos = c.start + s, in = (b * p.seq + s) * st.source;
      const int phase = (int)(pos & 3), slot = CSA4_RATIO_K + phase;
      nx_u8 *dst;
      for (x = 0; x < st.source; x++) {
        words[(2 * slot) * st.source + x] = ((const nx_u32 *)st.kv)[in + x];
        row[(2 * slot + 1) * st.source + x] = st.gate[in + x] + st.ape[phase * st.source + x];
      }
      if (((pos + 1) & 3) != 0) continue; /* no record finishes here */
      csa4_ref_finish(row, dim, st.norm, pos - 3, record);
      dst = st.cache + (b * st.capacity + (pos + 1) / CSA4_RATIO_K - 1) * st.record_bytes;
      if (index_stream) {
        csa4_ref_rotate(record);
        nx_csa_fp4_record_write(record, dst);
      } else {
        nx_csa_fp8_record_write(record, dst);
      }
      for (j = 0; j < CSA4_RATIO_K; j++) /* rotate: 4..7 -> 0..3, then 4..7 empty */
        for (x = 0; x < st.source; x++) {
          const long long from = 2 * (CSA4_RATIO_K + j) * (long long)st.source + x;
          const long long to = 2 * j * (long long)st.source + x;
          words[to] = words[from];
          words[to + st.source] = words[from + st.source];
          words[from] = 0u;
          words[from + st.source] = NX_CSA_NEG_INF_BITS;
        }
    }
  }
}

/* The main stream (outputs 1, 2): arguments as csa4.cu's csa4_main_compress. */
extern "C" __global__ void __launch_bounds__(REF_SERIAL_THREADS)
    csa4_main_compress(csa4_shape p, const float *kv, const float *gate, const float *ape,
                       const float *norm, float *carry, nx_u8 *cache, const long long *total_ptr) {
  const csa4_ref_stream st = {kv, gate, ape, norm, carry, cache, CSA4_SOURCE_K,
                              p.present_capacity, CSA4_FP8_RECORD_K};
  float record[CSA4_DIM_K];
  csa4_ref_compress(p, st, total_ptr, 0, record);
}

/* The index stream (outputs 3, 4): arguments as csa4.cu's csa4_index_compress. */
extern "C" __global__ void __launch_bounds__(REF_SERIAL_THREADS)
    csa4_index_compress(csa4_shape p, const float *kv, const float *gate, const float *ape,
                        const float *norm, float *carry, nx_u8 *key, const long long *total_ptr) {
  const csa4_ref_stream st = {kv, gate, ape, norm, carry, key, CSA4_INDEX_SOURCE_K,
                              p.index_present_capacity, CSA4_INDEX_RECORD_K};
  float record[CSA4_INDEX_DIM_K];
  csa4_ref_compress(p, st, total_ptr, 1, record);
}

/* ---- index query, scoring, selection: one thread per (b, s) row --------------------------- */

/*
** out [B, S, IH, 128] <- for each (b, s) row, thread 0, every head in turn:
** bf16(q), RoPE at start + s, Hadamard and scale, then the FP4 round trip
** (the 68-byte record written, then read back with nx_csa_fp4_record_value).
*/
extern "C" __global__ void __launch_bounds__(REF_SERIAL_THREADS)
    csa4_index_query(csa4_shape p, const float *index_query, float *out,
                     const long long *total_ptr) {
  const long long rows = p.batch * p.seq;
  float q[CSA4_INDEX_DIM_K];
  nx_u8 packed[CSA4_INDEX_RECORD_K];
  csa_cursor c;
  long long row, h;
  int d;
  if (threadIdx.x != 0 || !csa4_ref_cursor(&c, total_ptr, &p)) return;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long position = c.start + row % p.seq;
    for (h = 0; h < p.index_heads; h++) {
      const long long at = (row * p.index_heads + h) * CSA4_INDEX_DIM_K;
      for (d = 0; d < CSA4_INDEX_DIM_K; d++) q[d] = nx_bf16_round(index_query[at + d]);
      nx_csa_rope_tail(q + CSA4_INDEX_DIM_K - CSA4_ROPE_K, position);
      csa4_ref_rotate(q);
      nx_csa_fp4_record_write(q, packed);
      for (d = 0; d < CSA4_INDEX_DIM_K; d++) out[at + d] = nx_csa_fp4_record_value(packed, d);
    }
  }
}

/*
** scores [B, S, Rci] <- for each (b, s) row, thread 0, record after record:
** score_r = sum over heads ascending of (nx_maxf(dot_h, 0) * weight_h) *
** nx_csa_weight_scale(128, IH), dot_h = sum over d ascending of q_h[d] *
** nx_csa_fp4_record_value(key_r, d), for r < min((position + 1) / 4, Rci);
** -inf from there to Rci.  query: the finalized queries [B, S, IH, 128].
*/
extern "C" __global__ void __launch_bounds__(REF_SERIAL_THREADS)
    csa4_index_score(csa4_shape p, const float *query, const float *weight, const nx_u8 *key,
                     float *scores, const long long *total_ptr) {
  const long long rows = p.batch * p.seq, capacity = p.index_present_capacity;
  const float weight_scale = nx_csa_weight_scale(CSA4_INDEX_DIM_K, (int)p.index_heads);
  csa_cursor c;
  long long row, r, h;
  int d;
  if (threadIdx.x != 0 || !csa4_ref_cursor(&c, total_ptr, &p)) return;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long limit = csa_min_ll((c.start + row % p.seq + 1) / CSA4_RATIO_K, capacity);
    for (r = 0; r < capacity; r++) {
      const nx_u8 *rec = key + ((row / p.seq) * capacity + r) * CSA4_INDEX_RECORD_K;
      float score = 0.0f;
      for (h = 0; r < limit && h < p.index_heads; h++) {
        const float *qh = query + (row * p.index_heads + h) * CSA4_INDEX_DIM_K;
        float dot = 0.0f;
        for (d = 0; d < CSA4_INDEX_DIM_K; d++) dot = dot + qh[d] * nx_csa_fp4_record_value(rec, d);
        score = score + (nx_maxf(dot, 0.0f) * weight[row * p.index_heads + h]) * weight_scale;
      }
      scores[row * capacity + r] = r < limit ? score : csa_neg_inf();
    }
  }
}

/*
** selection [B, S, topk] <- for each (b, s) row, thread 0: slot k holds the
** best record (nx_csa_rank_before: score descending under the total order,
** then ascending record) among those ranking strictly after slot k - 1's;
** -1 once no record is left.  Exact: comparisons of bit patterns only.
*/
extern "C" __global__ void __launch_bounds__(REF_SERIAL_THREADS)
    csa4_select(csa4_shape p, const float *scores, int *selection, const long long *total_ptr) {
  const long long rows = p.batch * p.seq, capacity = p.index_present_capacity;
  csa_cursor c;
  long long row, slot, r;
  if (threadIdx.x != 0 || !csa4_ref_cursor(&c, total_ptr, &p)) return;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long limit = csa_min_ll((c.start + row % p.seq + 1) / CSA4_RATIO_K, capacity);
    const float *row_scores = scores + row * capacity;
    int *out = selection + row * p.topk;
    long long prev = -1, best = -1;
    float prev_score = 0.0f, best_score = 0.0f;
    for (slot = 0; slot < p.topk; slot++) out[slot] = -1;
    for (slot = 0; slot < p.topk; slot++) {
      best = -1;
      for (r = 0; r < limit; r++) {
        const float sr = row_scores[r];
        if (prev >= 0 && !nx_csa_rank_before(prev_score, prev, sr, r)) continue; /* taken already */
        if (best < 0 || nx_csa_rank_before(sr, r, best_score, best)) best = r, best_score = sr;
      }
      if (best < 0) break; /* fewer causal records than topk: the rest stay -1 */
      out[slot] = (int)best;
      prev = best;
      prev_score = best_score;
    }
  }
}

/* ---- attention --------------------------------------------------------------------------- */

/*
** One block per output row (b, s, h) of Y [B, S, heads, 512], block-stride;
** the arguments as csa4.cu's csa4_attention.  Candidates: the dense window,
** then slot 0..topk of the row's selection (live iff 0 <= record < total /
** 4).  scores keeps the CandidateAssembly payload; weights is not used (the
** probabilities are recomputed per dim, as the seed does).
*/
extern "C" __global__ void __launch_bounds__(REF_ATTN_THREADS)
    csa4_attention(csa4_shape p, const float *query, const float *current_kv, const nx_u8 *cache,
                   const int *selection, const float *sink, const float *bias, float *y,
                   float *scores, float *weights, const long long *total_ptr) {
  __shared__ float row_max, row_den;
  const long long rows = p.batch * p.seq * p.heads;
  csa_cursor cur;
  long long row;
  (void)weights; /* the serial row keeps its exps in scores */
  if (!csa4_ref_cursor(&cur, total_ptr, &p)) return;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    csa_attention_row r;
    csa4_attention_row_at(&r, &p, &cur, row, query, current_kv, cache, selection, sink, bias, y, scores, scores);
    csa_ref_attend_row(&r, &cur, &row_max, &row_den);
  }
}
