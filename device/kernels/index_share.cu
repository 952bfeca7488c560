/*
** index_share.cu: the IndexShare operator's kernels (seed 000_7dfea7c512118af3,
** DESIGN.md "The frozen numerics" and "Error parity").  Launched, in this
** order, by device/index_share_device.c:
**
**   index_share_frontier          capacity mode only: valid_len[b] and
**                                 write_pos[b] from the bias's finite frontier;
**   index_share_validate_rows     the six index-row rules, one thread per row;
**   index_share_present           growing present: past ++ current, or
**   index_share_present_capacity  fixed-capacity present: past, with the
**                                 current tokens written at write_pos[b];
**   index_share_rows              attention, one block per (b, q_head, query).
**
** Arithmetic: every float reduction keeps the oracle's order.
**   score_s = sum over d ascending, in ONE thread, from 0.0f, of
**             (q[d] * sqrt_scale) * (k_s[d] * sqrt_scale); then + bias;
**   m       = max of the scores by nx_maxf from -inf (order-free, so reduced
**             across the block);
**   e_s     = nx_expf(score_s - m) (element-wise, in parallel);
**   sum     = sum of e_s ascending from 0.0f, in one thread; inv = 1.0f / sum;
**   p_s     = e_s * inv;
**   y[d]    = sum over s ascending from 0.0f of p_s * v_s[d], one thread per d.
** A row whose m is -inf (every score -inf or NaN, or no selection at all)
** writes zeros, and zeros as its probabilities (the oracle's trace does too).
**
** Stage payloads (golden boundaries): the scratch row ends holding the row's
** probabilities; its raw scores are overwritten by the exps.  When the
** launcher passes score_trace (its debug mode, never in production), each
** score is also stored there as it is computed, so both payloads survive.
** Columns past the row's selections are written by neither; the launcher
** defines them (index_share_device.h).  Loads widen f16/bf16 with nx_*_to_f32; stores round with
** nx_*_from_f32.  The pinned NVRTC options (--fmad=false) keep every + and *
** a separately rounded add.rn/mul.rn; `bitgate audit` checks the PTX.
**
** Present copies: f32 elements are copied as 32-bit words, so NaN payloads
** survive as they do in the oracle's memcpy-like copy; f16/bf16 elements go
** through widen + round, which canonicalises any NaN to 0x7fff exactly as the
** oracle's load/store does.
**
** Safety on poisoned replays: a captured graph replays whatever indices the
** buffers hold.  The validation kernel latches IS_LATCH_INDEX_BIT, and the row
** kernel clamps every gathered key into [0, cache_seq) (and a cache of zero
** rows yields an all-masked row), so a bad row can never read out of bounds.
** Its output is then garbage by contract; the host discards it on the latch.
**
** All index arithmetic is 64-bit (long long).
*/
#include "index_share_abi.h"
#include "numerics.h"
#include "index_share_access.h"

/* ---- capacity frontier ------------------------------------------------------------- */

/*
** One block per batch b.  valid_len[b] = 1 + the largest column k < cache_seq
** whose bias at (b, h, q, k) is finite for some h < q_heads, q < q_seq (0 if
** none); write_pos[b] = valid_len[b] - current_seq, or 0 when negative.
** Only the bias entries that differ are read: an axis the bias broadcasts is
** visited at index 0 (when its logical extent is not empty), and a broadcast
** last axis makes every column finite together, so the column is cache_seq - 1.
** The integer max is order-free, so threads combine with atomicMax.
*/
extern "C" __global__ void index_share_frontier(const void *bias, int storage, long long bd0,
                                                long long bd1, long long bd2, long long bd3,
                                                long long batch, long long q_heads,
                                                long long q_seq, long long cache_seq,
                                                long long current_seq, long long *valid_len,
                                                long long *write_pos) {
  __shared__ unsigned long long block_valid;
  const long long b = blockIdx.x;
  const long long ext_h = is_min_ll(q_heads, bd1), ext_q = is_min_ll(q_seq, bd2);
  const long long ext_k = is_min_ll(cache_seq, bd3);
  const long long n = ext_h * ext_q * ext_k;
  unsigned long long mine = 0;
  long long i;

  if (b >= batch) return;
  if (threadIdx.x == 0) block_valid = 0;
  __syncthreads();
  for (i = threadIdx.x; i < n; i += blockDim.x) {
    const long long k = i % ext_k, hq = i / ext_k;
    const long long q = hq % ext_q, h = hq / ext_q;
    if (is_finite(is_bias_at(bias, storage, bd0, bd1, bd2, bd3, b, h, q, k))) {
      const long long column = bd3 == 1 ? cache_seq - 1 : k;
      if ((unsigned long long)(column + 1) > mine) mine = (unsigned long long)(column + 1);
    }
  }
  if (mine) atomicMax(&block_valid, mine);
  __syncthreads();
  if (threadIdx.x == 0) {
    const long long valid = (long long)block_valid;
    valid_len[b] = valid;
    write_pos[b] = valid >= current_seq ? valid - current_seq : 0;
  }
}

/* ---- present builds ------------------------------------------------------------------ */

/*
** Growing present [B, H, past_seq + cur_seq, D]: sequence rows below past_seq
** come from past [B, H, past_seq, D] (absent when past_seq is 0), the rest
** from cur [B, H, cur_seq, D].  One thread per element, grid-stride.
*/
extern "C" __global__ void index_share_present(const void *past, const void *cur, void *out,
                                               int storage, long long batch, long long heads,
                                               long long past_seq, long long cur_seq,
                                               long long dim) {
  const long long total_seq = past_seq + cur_seq;
  const long long n = batch * heads * total_seq * dim;
  long long idx;
  for (idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n;
       idx += (long long)gridDim.x * blockDim.x) {
    const long long d = idx % dim, bht = idx / dim;
    const long long t = bht % total_seq, bh = bht / total_seq;
    if (t < past_seq)
      is_copy(out, idx, past, (bh * past_seq + t) * dim + d, storage);
    else
      is_copy(out, idx, cur, (bh * cur_seq + (t - past_seq)) * dim + d, storage);
  }
}

/*
** Fixed-capacity present [B, H, cache_seq, D]: row t is cur[t - wp] when
** wp <= t < wp + cur_seq (wp = write_pos[b]), else past[t]; rows of the
** current tokens that fall beyond cache_seq are dropped.  Each element is read
** and written by the same thread at the same index, so out may alias past.
*/
extern "C" __global__ void index_share_present_capacity(const void *past, const void *cur,
                                                        void *out, int storage,
                                                        const long long *write_pos,
                                                        long long batch, long long heads,
                                                        long long cache_seq, long long cur_seq,
                                                        long long dim) {
  const long long n = batch * heads * cache_seq * dim;
  long long idx;
  for (idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n;
       idx += (long long)gridDim.x * blockDim.x) {
    const long long d = idx % dim, bht = idx / dim;
    const long long t = bht % cache_seq, bh = bht / cache_seq;
    const long long wp = write_pos[bh / heads];
    if (t >= wp && t < wp + cur_seq)
      is_copy(out, idx, cur, (bh * cur_seq + (t - wp)) * dim + d, storage);
    else
      is_copy(out, idx, past, idx, storage);
  }
}

/* ---- index-row validation -------------------------------------------------------------- */

/*
** One thread per row (b, h, q) of selected_indices [B, index_heads, Sq, width].
** The rules, per column left to right, in the oracle's order:
**   -1                          padding starts (or continues); next column;
**   below -1                    SENTINEL;
**   after padding               AFTER_PADDING;
**   >= the batch's bound        OUT_OF_RANGE (bound_per_batch[b], or bound
**                               when bound_per_batch is NULL);
**   == the previous value       DUPLICATE;
**   <  the previous value       NOT_INCREASING;
** and a row with no value at all is ALL_PADDING (column -1).  The first
** violation ends the row.  Writes the row's record (index_share_abi.h) into
** status, and atomicOr's IS_LATCH_INDEX_BIT into *latch on a violation when
** latch is not NULL (the capturing path).
*/
extern "C" __global__ void index_share_validate_rows(const void *indices, int index_is_i64,
                                                     long long batch, long long index_heads,
                                                     long long q_seq, long long width,
                                                     long long bound,
                                                     const long long *bound_per_batch,
                                                     long long *status, unsigned *latch) {
  const long long rows = batch * index_heads * q_seq;
  long long row;
  for (row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < rows;
       row += (long long)gridDim.x * blockDim.x) {
    const long long b = row / (index_heads * q_seq);
    const long long limit = bound_per_batch ? bound_per_batch[b] : bound;
    long long rule = IS_RULE_NONE, column = -1, value = 0, aux = 0;
    long long previous = 0, count = 0, s;
    int padding = 0;
    for (s = 0; s < width; s++) {
      const long long v = is_load_index(indices, row * width + s, index_is_i64);
      if (v == -1) {
        padding = 1;
        continue;
      }
      if (v < -1)
        rule = IS_RULE_SENTINEL;
      else if (padding)
        rule = IS_RULE_AFTER_PADDING;
      else if (v >= limit)
        rule = IS_RULE_OUT_OF_RANGE, aux = limit;
      else if (count > 0 && v == previous)
        rule = IS_RULE_DUPLICATE, aux = previous;
      else if (count > 0 && v < previous)
        rule = IS_RULE_NOT_INCREASING, aux = previous;
      if (rule != IS_RULE_NONE) {
        column = s;
        value = v;
        break;
      }
      previous = v;
      count++;
    }
    if (rule == IS_RULE_NONE && count == 0) rule = IS_RULE_ALL_PADDING;
    status[row * IS_STATUS_WORDS + IS_STATUS_RULE] = rule;
    status[row * IS_STATUS_WORDS + IS_STATUS_COLUMN] = column;
    status[row * IS_STATUS_WORDS + IS_STATUS_VALUE] = value;
    status[row * IS_STATUS_WORDS + IS_STATUS_AUX] = aux;
    if (rule != IS_RULE_NONE && latch) atomicOr(latch, IS_LATCH_INDEX_BIT);
  }
}

/* ---- attention rows ---------------------------------------------------------------------- */

/*
** One block per output row (b, qh, qi) of Y [B, N, Sq, D] (block-stride when
** there are more rows than blocks).  The row's selections are the columns of
** its index row (head qh, or 0 when index_heads is 1) before the first -1.
** K and V are the present [B, kv_heads, cache_seq, D], head qh / group.
** scores is [B * N * Sq, width] f32 scratch: scores, then exps, then probs;
** score_trace (NULL: off) has the same layout and keeps the scores.
*/
extern "C" __global__ void index_share_rows(
    const void *query, const void *present_key, const void *present_value, const void *indices,
    int index_is_i64, const void *bias, int has_bias, long long bd0, long long bd1, long long bd2,
    long long bd3, float *scores, float *score_trace, void *y, int storage, long long batch, long long q_heads,
    long long kv_heads, long long group, long long q_seq, long long cache_seq,
    long long head_size, long long index_heads, long long width, float sqrt_scale) {
  __shared__ unsigned long long first_pad;
  __shared__ float block_max[IS_ROW_THREADS];
  __shared__ float inv_sum;
  const long long rows = batch * q_heads * q_seq;
  const int tid = threadIdx.x, nthreads = blockDim.x;
  long long row;

  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    const long long qi = row % q_seq, bq = row / q_seq;
    const long long qh = bq % q_heads, b = bq / q_heads;
    const long long kvh = qh / group, ih = index_heads == 1 ? 0 : qh;
    const long long irow = ((b * index_heads + ih) * q_seq + qi) * width;
    const long long srow = row * width;
    const long long qoff = row * head_size; /* Y and Q share the layout */
    const long long kv_base = (b * kv_heads + kvh) * cache_seq;
    float *srow_p = scores + srow;
    float m = nx_f32_from_bits(IS_NEG_INF_BITS);
    long long valid, s, d;
    int w;

    /* the selections: columns before the first -1 (none from an empty cache) */
    if (tid == 0) first_pad = (unsigned long long)width;
    __syncthreads();
    for (s = tid; s < width; s += nthreads)
      if (is_load_index(indices, irow + s, index_is_i64) == -1)
        atomicMin(&first_pad, (unsigned long long)s);
    __syncthreads();
    valid = cache_seq > 0 ? (long long)first_pad : 0;

    /* scores, each dot product in one thread, d ascending; the block's max */
    for (s = tid; s < valid; s += nthreads) {
      const long long key = is_key_at(indices, irow + s, index_is_i64, cache_seq);
      const long long koff = (kv_base + key) * head_size;
      float acc = 0.0f;
      for (d = 0; d < head_size; d++)
        acc = acc + (is_load(query, qoff + d, storage) * sqrt_scale) *
                        (is_load(present_key, koff + d, storage) * sqrt_scale);
      if (has_bias) acc = acc + is_bias_at(bias, storage, bd0, bd1, bd2, bd3, b, qh, qi, key);
      srow_p[s] = acc;
      if (score_trace) score_trace[srow + s] = acc;
      m = nx_maxf(m, acc);
    }
    block_max[tid] = m;
    __syncthreads();
    if (tid == 0) {
      for (w = 1; w < nthreads; w++) m = nx_maxf(m, block_max[w]);
      block_max[0] = m;
    }
    __syncthreads();
    m = block_max[0];

    if (nx_f32_bits(m) == IS_NEG_INF_BITS) { /* every score masked (or none) */
      for (s = tid; s < valid; s += nthreads) srow_p[s] = 0.0f; /* its probabilities */
      for (d = tid; d < head_size; d += nthreads) is_store(y, qoff + d, 0.0f, storage);
      __syncthreads();
      continue;
    }

    /* exps element-wise; their sum ascending in one thread */
    for (s = tid; s < valid; s += nthreads) srow_p[s] = nx_expf(srow_p[s] - m);
    __syncthreads();
    if (tid == 0) {
      float sum = 0.0f;
      for (s = 0; s < valid; s++) sum = sum + srow_p[s];
      inv_sum = 1.0f / sum;
    }
    __syncthreads();
    for (s = tid; s < valid; s += nthreads) srow_p[s] = srow_p[s] * inv_sum;
    __syncthreads();

    /* y[d] = sum over s ascending of p_s * v_s[d], one thread per channel */
    for (d = tid; d < head_size; d += nthreads) {
      float acc = 0.0f;
      for (s = 0; s < valid; s++) {
        const long long key = is_key_at(indices, irow + s, index_is_i64, cache_seq);
        acc = acc + srow_p[s] * is_load(present_value, (kv_base + key) * head_size + d, storage);
      }
      is_store(y, qoff + d, acc, storage);
    }
    __syncthreads();
  }
}
