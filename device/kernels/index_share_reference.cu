/*
** index_share_reference.cu: the reference variant of the IndexShare kernels
** (issue 8): the seed's design (seed 000_7dfea7c512118af3.txt,
** capacity_write_pos and index_share_row) where it is serial, written with
** the frozen numerics so that it produces the oracle's bytes
** (oracle/SPEC.md sections 2 and 5-9).  The production kernels are
** index_share.cu.
**
** Same names and argument lists as index_share.cu's kernels
** (index_share_abi.h), so device/index_share_device.c only picks this module
** and the launch geometry:
**
**   index_share_frontier  one thread per batch (REF_IS_FRONTIER_THREADS a
**                         block, grid-stride): every (head, query, column)
**                         of the broadcast bias in turn, the largest finite
**                         column + 1 kept;
**   index_share_rows      one block per output row (b, qh, qi) of
**                         REF_IS_ROW_THREADS, block-stride: thread 0 counts
**                         the selections; the scores in parallel, one per
**                         thread; thread 0 alone takes the max, every exp and
**                         their sum; the probabilities and P.V in parallel.
**
** The present builds and the index-row validation have no twins: the
** launcher runs index_share.cu's for both variants.  The seed ran them one
** thread per element / row; index_share.cu's now walk many elements a
** thread and judge long index rows a warp each, so the reference step is
** faster than the seed's by that much (docs/SPEED.md).
**
** Arithmetic, in the oracle's order (one binary32 operation at a time,
** rounded to nearest; --fmad=false; `bitgate audit` checks the PTX):
**   score_s = sum over d ascending of (q[d] * sqrt_scale) * (k_s[d] *
**             sqrt_scale), then + bias;
**   m = nx_maxf over s ascending from -inf; m == -inf: the row is all
**   masked (probabilities and Y +0);
**   e_s = nx_expf(score_s - m); sum = sum of e_s ascending; inv = 1 / sum;
**   p_s = e_s * inv; y[d] = sum over s ascending of p_s * v_s[d].
** The scratch row holds the scores, then the exps, then the probabilities;
** score_trace (the launcher's debug mode, else NULL) keeps the scores.
**
** The storage helpers repeat index_share.cu's (static there, and that file
** is not to change for this variant); loads widen with nx_*_to_f32, stores
** round with nx_*_from_f32.  Selected keys are clamped into [0, cache_seq)
** as index_share.cu does, so a poisoned captured replay stays in bounds.
*/
#include "index_share_abi.h"
#include "reference_abi.h"
#include "numerics.h"
#include "index_share_access.h"

/*
** valid_len[b] = 1 + the largest k < cache_seq whose bias at (b, h, q, k) is
** finite for some h < q_heads, q < q_seq (0 if none); write_pos[b] =
** valid_len[b] - current_seq, or 0 when that is negative.  One thread per
** batch, grid-stride, scanning every logical element as the seed does.
*/
extern "C" __global__ void __launch_bounds__(REF_IS_FRONTIER_THREADS)
    index_share_frontier(const void *bias, int storage, long long bd0, long long bd1,
                         long long bd2, long long bd3, long long batch, long long q_heads,
                         long long q_seq, long long cache_seq, long long current_seq,
                         long long *valid_len, long long *write_pos) {
  long long b;
  for (b = (long long)blockIdx.x * blockDim.x + threadIdx.x; b < batch;
       b += (long long)gridDim.x * blockDim.x) {
    long long valid = 0, h, q, k;
    for (h = 0; h < q_heads; h++)
      for (q = 0; q < q_seq; q++)
        for (k = 0; k < cache_seq; k++) {
          const float v = is_bias_at(bias, storage, bd0, bd1, bd2, bd3, b, h, q, k);
          if ((nx_f32_bits(v) & 0x7f800000u) != 0x7f800000u && k + 1 > valid) valid = k + 1;
        }
    valid_len[b] = valid;
    write_pos[b] = valid >= current_seq ? valid - current_seq : 0;
  }
}

/*
** One block per output row (b, qh, qi) of Y [B, N, Sq, D], block-stride;
** the arguments and layouts as index_share.cu's index_share_rows.
*/
extern "C" __global__ void __launch_bounds__(REF_IS_ROW_THREADS) index_share_rows(
    const void *query, const void *present_key, const void *present_value, const void *indices,
    int index_is_i64, const void *bias, int has_bias, long long bd0, long long bd1, long long bd2,
    long long bd3, float *scores, float *score_trace, void *y, int storage, long long batch,
    long long q_heads, long long kv_heads, long long group, long long q_seq, long long cache_seq,
    long long head_size, long long index_heads, long long width, float sqrt_scale) {
  __shared__ long long row_valid;
  __shared__ float row_inv;
  __shared__ int row_masked;
  const long long rows = batch * q_heads * q_seq;
  const int tid = threadIdx.x, nthreads = blockDim.x;
  long long row;

  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long qi = row % q_seq, bq = row / q_seq;
    const long long qh = bq % q_heads, b = bq / q_heads;
    const long long kvh = qh / group, ih = index_heads == 1 ? 0 : qh;
    const long long irow = ((b * index_heads + ih) * q_seq + qi) * width;
    const long long qoff = row * head_size; /* Y and Q share the layout */
    const long long kv_base = (b * kv_heads + kvh) * cache_seq;
    float *srow = scores + row * width;
    long long valid, s, d;

    if (tid == 0) { /* the selections: columns before the first -1 (none from an empty cache) */
      for (s = 0; cache_seq > 0 && s < width && is_load_index(indices, irow + s, index_is_i64) != -1; s++) {}
      row_valid = cache_seq > 0 ? s : 0;
    }
    __syncthreads();
    valid = row_valid;

    for (s = tid; s < valid; s += nthreads) { /* stage 1: a score per thread, d ascending */
      const long long key = is_key_at(indices, irow + s, index_is_i64, cache_seq);
      const long long koff = (kv_base + key) * head_size;
      float acc = 0.0f;
      for (d = 0; d < head_size; d++)
        acc = acc + (is_load(query, qoff + d, storage) * sqrt_scale) *
                        (is_load(present_key, koff + d, storage) * sqrt_scale);
      if (has_bias) acc = acc + is_bias_at(bias, storage, bd0, bd1, bd2, bd3, b, qh, qi, key);
      srow[s] = acc;
      if (score_trace) score_trace[row * width + s] = acc;
    }
    __syncthreads();

    if (tid == 0) { /* stage 2, the seed's lead thread: max, every exp, their sum */
      float m = nx_f32_from_bits(IS_NEG_INF_BITS), sum = 0.0f;
      for (s = 0; s < valid; s++) m = nx_maxf(m, srow[s]);
      row_masked = nx_f32_bits(m) == IS_NEG_INF_BITS;
      for (s = 0; !row_masked && s < valid; s++) {
        const float e = nx_expf(srow[s] - m);
        srow[s] = e;
        sum = sum + e;
      }
      row_inv = row_masked ? 0.0f : 1.0f / sum;
    }
    __syncthreads();

    if (row_masked) { /* every score masked (or none): +0 probabilities and Y */
      for (s = tid; s < valid; s += nthreads) srow[s] = 0.0f;
      for (d = tid; d < head_size; d += nthreads) is_store(y, qoff + d, 0.0f, storage);
      __syncthreads();
      continue;
    }
    for (s = tid; s < valid; s += nthreads) srow[s] = srow[s] * row_inv;
    __syncthreads();

    for (d = tid; d < head_size; d += nthreads) { /* stage 3: y[d], s ascending */
      float acc = 0.0f;
      for (s = 0; s < valid; s++) {
        const long long key = is_key_at(indices, irow + s, index_is_i64, cache_seq);
        acc = acc + srow[s] * is_load(present_value, (kv_base + key) * head_size + d, storage);
      }
      is_store(y, qoff + d, acc, storage);
    }
    __syncthreads(); /* row_valid, row_masked and row_inv are reused by the next row */
  }
}
