/*
** index_share.cu: the IndexShare operator's kernels (seed 000_7dfea7c512118af3,
** DESIGN.md "The frozen numerics" and "Error parity").  Launched, in this
** order, by device/index_share_device.c:
**
**   index_share_frontier          capacity mode only: valid_len[b] and
**                                 write_pos[b] from the bias's finite frontier;
**   index_share_validate_rows     the six index-row rules, a warp or a thread
**                                 per row;
**   index_share_present           growing present: past ++ current, or
**   index_share_present_capacity  fixed-capacity present: past, with the
**                                 current tokens written at write_pos[b];
**   index_share_rows              attention, one block per tile of heads of one
**                                 (b, query) sharing a kv head and index row.
**
** Arithmetic: every float reduction keeps the oracle's order.
**   score_s = sum over d ascending, in ONE thread, from 0.0f, of
**             (q[d] * sqrt_scale) * (k_s[d] * sqrt_scale); then + bias;
**   m       = max of the scores by nx_maxf from -inf (order-free, so reduced
**             across the block);
**   e_s     = nx_expf(score_s - m) (element-wise, in parallel);
**   sum     = sum of e_s ascending from 0.0f, in one thread; inv = 1.0f / sum;
**   p_s     = e_s * inv;
**   y[d]    = sum over s ascending from 0.0f of p_s * v_s[d], one thread per
**             (head, d).
** Threads only decide who owns which chain and how its operands get there
** (shared memory, registers, copies); no chain is split or reordered.
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
** Index arithmetic is 64-bit (long long), but for the rows kernel's columns,
** keys and row pitches, which are int (is_row_scores says why that is safe).
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
** Moves a grid-stride walk's (row, offset in the row) on by step elements,
** (step = step_rows rows + step_within elements) for rows of row_len
** elements, without a division: the walk starts from one division a
** thread, and a division per element made the present builds
** compute-bound (about 2 ms at B = 64 for a 2,049-token present).  The
** launcher caps their grids (IS_COPY_MAX_BLOCKS) so each thread walks many
** elements.
*/
static __device__ __forceinline__ void is_row_advance(long long *row, long long *within, long long step_rows,
                                                      long long step_within, long long row_len) {
  *row += step_rows;
  *within += step_within;
  if (*within >= row_len) ++*row, *within -= row_len;
}

/*
** Growing present [B, H, past_seq + cur_seq, D]: sequence rows below past_seq
** come from past [B, H, past_seq, D] (absent when past_seq is 0), the rest
** from cur [B, H, cur_seq, D].  One thread per element, grid-stride.
*/
extern "C" __global__ void index_share_present(const void *past, const void *cur, void *out,
                                               int storage, long long batch, long long heads,
                                               long long past_seq, long long cur_seq,
                                               long long dim) {
  const long long row = (past_seq + cur_seq) * dim, from_past = past_seq * dim;
  const long long n = batch * heads * row;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long step = (long long)gridDim.x * blockDim.x;
  long long idx, bh, within, step_rows, step_within;
  if (first >= n) return;
  bh = first / row, within = first % row;
  step_rows = step / row, step_within = step % row;
  for (idx = first; idx < n; idx += step) {
    if (within < from_past)
      is_copy(out, idx, past, bh * from_past + within, storage);
    else
      is_copy(out, idx, cur, bh * cur_seq * dim + (within - from_past), storage);
    is_row_advance(&bh, &within, step_rows, step_within, row);
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
  const long long row = cache_seq * dim, n = batch * heads * row;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long step = (long long)gridDim.x * blockDim.x;
  long long idx, bh, within, step_rows, step_within, wp_row = -1, wp = 0;
  if (first >= n) return;
  bh = first / row, within = first % row;
  step_rows = step / row, step_within = step % row;
  for (idx = first; idx < n; idx += step) {
    if (bh != wp_row) wp_row = bh, wp = write_pos[bh / heads] * dim; /* the current tokens' first element */
    if (within >= wp && within < wp + cur_seq * dim)
      is_copy(out, idx, cur, bh * cur_seq * dim + (within - wp), storage);
    else
      is_copy(out, idx, past, idx, storage);
    is_row_advance(&bh, &within, step_rows, step_within, row);
  }
}

/* ---- index-row validation -------------------------------------------------------------- */

#define IS_FULL_MASK 0xffffffffu
#define IS_VALIDATE_BATCH 8     /* 32-column chunks a warp loads before judging them */
#define IS_VALIDATE_WARP_ROWS 4 /* most rows a warp takes in warp mode */

/*
** Validation of one row (b, h, q) of selected_indices [B, index_heads, Sq,
** width].  The rules, per column left to right, in the oracle's order:
**   -1                          padding starts (or continues); next column;
**   below -1                    SENTINEL;
**   after padding               AFTER_PADDING;
**   >= the batch's bound        OUT_OF_RANGE (bound_per_batch[b], or bound
**                               when bound_per_batch is NULL);
**   == the previous value       DUPLICATE;
**   <  the previous value       NOT_INCREASING;
** and a row with no value at all is ALL_PADDING (column -1).  The first
** violation ends the row.  The record is index_share_abi.h's.
*/
struct is_verdict {
  long long rule, column, value, aux;
};

/* One thread scans the row. */
static __device__ is_verdict is_validate_serial(const void *indices, int index_is_i64,
                                                long long at, long long width, long long limit) {
  is_verdict r = {IS_RULE_NONE, -1, 0, 0};
  long long previous = 0, count = 0, s;
  int padding = 0;
  for (s = 0; s < width; s++) {
    const long long v = is_load_index(indices, at + s, index_is_i64);
    if (v == -1) {
      padding = 1;
      continue;
    }
    if (v < -1)
      r.rule = IS_RULE_SENTINEL;
    else if (padding)
      r.rule = IS_RULE_AFTER_PADDING;
    else if (v >= limit)
      r.rule = IS_RULE_OUT_OF_RANGE, r.aux = limit;
    else if (count > 0 && v == previous)
      r.rule = IS_RULE_DUPLICATE, r.aux = previous;
    else if (count > 0 && v < previous)
      r.rule = IS_RULE_NOT_INCREASING, r.aux = previous;
    if (r.rule != IS_RULE_NONE) {
      r.column = s;
      r.value = v;
      break;
    }
    previous = v;
    count++;
  }
  if (r.rule == IS_RULE_NONE && count == 0) r.rule = IS_RULE_ALL_PADDING;
  return r;
}

/*
** A warp judges 32 columns at once (every lane gets the verdict).  While no
** column before s broke a rule, each column before s is a value or -1, and
** after a -1 any value breaks one; so column s's verdict needs only its
** value, whether a -1 lies before it (a ballot) and, with none, column s -
** 1's value (a shuffle).  The lowest column judged a violation is the one
** the serial scan stops at.
*/
static __device__ is_verdict is_validate_warp(const void *indices, int index_is_i64,
                                              long long at, long long width, long long limit) {
  const int lane = threadIdx.x & 31;
  const unsigned before = (1u << lane) - 1u; /* the lanes of earlier columns */
  is_verdict r = {IS_RULE_NONE, -1, 0, 0};
  long long last = 0, s0; /* last: the value of the column before this chunk */
  int padding = 0, values = 0;
  for (s0 = 0; s0 < width && r.rule == IS_RULE_NONE; s0 += 32 * IS_VALIDATE_BATCH) {
    long long v[IS_VALIDATE_BATCH];
#pragma unroll
    for (int j = 0; j < IS_VALIDATE_BATCH; j++) { /* every load before the first verdict */
      const long long s = s0 + 32 * j + lane;
      v[j] = s < width ? is_load_index(indices, at + s, index_is_i64) : -1;
    }
#pragma unroll
    for (int j = 0; j < IS_VALIDATE_BATCH; j++) {
      const long long c0 = s0 + 32 * j, s = c0 + lane;
      const long long up = __shfl_up_sync(IS_FULL_MASK, v[j], 1), prev = lane ? up : last;
      const unsigned pads = __ballot_sync(IS_FULL_MASK, s < width && v[j] == -1);
      long long rule = IS_RULE_NONE, aux = 0;
      unsigned bad;
      if (c0 >= width || r.rule != IS_RULE_NONE) break; /* the same in every lane */
      if (s < width && v[j] != -1) {
        if (v[j] < -1)
          rule = IS_RULE_SENTINEL;
        else if (padding || (pads & before))
          rule = IS_RULE_AFTER_PADDING;
        else if (v[j] >= limit)
          rule = IS_RULE_OUT_OF_RANGE, aux = limit;
        else if (s > 0 && v[j] == prev)
          rule = IS_RULE_DUPLICATE, aux = prev;
        else if (s > 0 && v[j] < prev)
          rule = IS_RULE_NOT_INCREASING, aux = prev;
      }
      bad = __ballot_sync(IS_FULL_MASK, rule != IS_RULE_NONE);
      if (bad) {
        const int first = __ffs(bad) - 1;
        r.rule = __shfl_sync(IS_FULL_MASK, rule, first);
        r.value = __shfl_sync(IS_FULL_MASK, v[j], first);
        r.aux = __shfl_sync(IS_FULL_MASK, aux, first);
        r.column = c0 + first;
      } else {
        values |= __ballot_sync(IS_FULL_MASK, s < width && v[j] != -1) != 0;
        padding |= pads != 0;
        last = __shfl_sync(IS_FULL_MASK, v[j], 31);
      }
    }
  }
  if (r.rule == IS_RULE_NONE && !values) r.rule = IS_RULE_ALL_PADDING;
  return r;
}

/*
** Every row's record into status, and IS_LATCH_INDEX_BIT atomicOr'ed into
** *latch on a violation when latch is not NULL (the capturing path).  Few
** rows (at most IS_VALIDATE_WARP_ROWS a warp of the grid, as in decode
** steps) take a warp each, since one thread's scan of a long row is a
** chain of dependent loads; many rows take a thread each, which then keeps
** every warp busy with fewer instructions.  Blocks must be whole warps.
*/
extern "C" __global__ void __launch_bounds__(IS_VALIDATE_THREADS)
    index_share_validate_rows(const void *indices, int index_is_i64, long long batch,
                              long long index_heads, long long q_seq, long long width,
                              long long bound, const long long *bound_per_batch,
                              long long *status, unsigned *latch) {
  const long long rows = batch * index_heads * q_seq;
  const long long threads = (long long)gridDim.x * blockDim.x, warps = threads >> 5;
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int by_warp = rows <= warps * IS_VALIDATE_WARP_ROWS;
  const long long stride = by_warp ? warps : threads;
  long long row;
  for (row = by_warp ? tid >> 5 : tid; row < rows; row += stride) {
    const long long b = row / (index_heads * q_seq);
    const long long limit = bound_per_batch ? bound_per_batch[b] : bound;
    const is_verdict r = by_warp ? is_validate_warp(indices, index_is_i64, row * width, width, limit)
                                 : is_validate_serial(indices, index_is_i64, row * width, width, limit);
    if (by_warp && (threadIdx.x & 31)) continue;
    status[row * IS_STATUS_WORDS + IS_STATUS_RULE] = r.rule;
    status[row * IS_STATUS_WORDS + IS_STATUS_COLUMN] = r.column;
    status[row * IS_STATUS_WORDS + IS_STATUS_VALUE] = r.value;
    status[row * IS_STATUS_WORDS + IS_STATUS_AUX] = r.aux;
    if (r.rule != IS_RULE_NONE && latch) atomicOr(latch, IS_LATCH_INDEX_BIT);
  }
}

/* ---- attention rows ---------------------------------------------------------------------- */

/*
** A block takes a tile: up to HT heads (IS_ROW_HEADS at most) of one (b, qi)
** that share a kv head and an index row, so each gathered key and value row
** is read from memory once for all of them.  The launcher picks HT
** (tile_heads, 1 or IS_ROW_HEADS; index_share_abi.h says when).  Every
** floating sum is one thread's chain in the oracle's order (the top
** comment); the phases only decide which thread owns which chain and how
** its operands reach it:
**
**   scores  warp w owns the key groups g = w, w + 8, ... of 32 keys; lane l
**           owns key 32g + l and all HT heads' chains for it.  The warp
**           stages its keys' rows 128 bytes at a time through a private
**           shared buffer (coalesced loads in, one row per lane out) and
**           fetches the next slice into registers while it computes this
**           one, so no block barrier is needed.  q * sqrt_scale is staged
**           once per tile (IS_QS_FLOATS at a time; a longer head size keeps
**           the partial chains in the scores row between passes).
**   max     order-free: per lane, warp shuffles, then across warps.
**   exps    in parallel into the scores row and a shared buffer; lane h of
**           warp 0 adds head h's exps in column order from shared memory.
**   probs   in parallel, e_s * inv, into the scores row (the payload).
**   values  thread d owns y[h][d] for every head of the tile; the value
**           rows and the probabilities stream through a ring of IS_VSTAGES
**           shared stages filled by cp.async, keys in order.
**
** The block must have IS_ROW_THREADS threads; any grid works (tile stride).
**
** The lines marked IS_PLANT_* keep the text that harness/tests/
** test_index_share_stages.c plants bugs into (BITGATE_PLANT replaces the
** first match in this file): the score's q term, inv_sum, the y step.
*/

#define IS_ROW_WARPS (IS_ROW_THREADS / 32)
#define IS_KCHUNK_BYTES 128 /* a key row's slice per staging step: one cache line */
#define IS_KROW_UNITS 9     /* 16-byte units a staged slice takes: 8, plus 1 so that the
                               8 lanes of a 128-bit shared load hit distinct banks */
#define IS_QS_FLOATS 2048   /* q * sqrt_scale of the tile's heads, [dim][head] */
#define IS_EBUF_FLOATS 4096 /* exps a summing pass holds, all heads */
#define IS_VSTAGES 5        /* value ring depth: 4 stages in flight cover L2 latency */
#define IS_VSTAGE_BYTES 8192
#define IS_VKEYS 32 /* most keys a value stage holds */

static_assert(IS_ROW_THREADS % 32 == 0 && IS_ROW_HEADS <= 32, "warp 0 sums a head a lane");
static_assert(IS_ROW_HEADS * IS_VKEYS <= IS_ROW_THREADS, "a probability a thread a stage");
static_assert(IS_VSTAGE_BYTES / 16 <= 2 * IS_ROW_THREADS, "two 16-byte pieces a thread a stage");
static_assert(IS_ROW_THREADS * 4 <= IS_VSTAGE_BYTES, "a stage holds a key of a pass");
static_assert(IS_EBUF_FLOATS / IS_ROW_HEADS % 8 == 0, "exp rows 4 mod 8 floats apart");
static_assert(IS_QS_FLOATS / IS_ROW_HEADS % 64 == 0, "q passes end on whole key slices");

struct is_row_args {
  const void *query, *present_key, *present_value, *indices, *bias;
  float *scores, *score_trace;
  void *y;
  long long bd0, bd1, bd2, bd3, batch, q_heads, kv_heads, group, q_seq, cache_seq, head_size;
  long long index_heads, width;
  float sqrt_scale;
  int index_is_i64, has_bias, storage;
};

/* Head h of a tile is q head h0 + h, output row row0 + h * q_seq. */
struct is_row_tile {
  long long b, qi, h0, row0, irow, kv_base, valid;
  int nh;
};

/* One block's shared memory; the phases of a tile reuse the union in turn. */
struct is_row_shared {
  union {
    struct {
      uint4 k[IS_ROW_WARPS][32 * IS_KROW_UNITS];
      float4 q[IS_QS_FLOATS / 4];
    } score;
    float4 e[IS_EBUF_FLOATS / 4];
    struct {
      uint4 v[IS_VSTAGES][IS_VSTAGE_BYTES / 16];
      float4 p[IS_VSTAGES][IS_VKEYS * IS_ROW_HEADS / 4];
    } value;
  } u;
  float wmax[IS_ROW_WARPS][IS_ROW_HEADS];
  float m[IS_ROW_HEADS], inv[IS_ROW_HEADS];
  int masked[IS_ROW_HEADS];
  unsigned long long first_pad;
};

/* At file scope so that every helper knows it is shared memory. */
static __shared__ is_row_shared is_sh;

/* Element bytes EB: 4 for f32, 2 for f16 and bf16 (told apart at run time). */
template <int EB> struct is_elem {
  static constexpr int per_unit = 16 / EB; /* elements in 16 bytes */
};

/* q values loaded together: whole float4s of the [dim][head] layout. */
template <int HT> struct is_qbatch {
  static constexpr int dims = HT >= 4 ? 1 : 4 / HT;
  static constexpr int vecs = dims * HT / 4;
};

/* f16 widening is long and off the benchmarked (bf16) path: one copy, called. */
static __device__ __noinline__ float is_f16_widen(nx_u32 bits) {
  return nx_f16_to_f32((nx_u16)bits);
}

static __device__ __forceinline__ float is_half_widen(nx_u32 bits, bool f16) {
  return f16 ? is_f16_widen(bits) : nx_bf16_to_f32((nx_u16)bits);
}

template <int EB> static __device__ __forceinline__ float is_widen_at(const unsigned char *p, bool f16) {
  if constexpr (EB == 4)
    return nx_f32_from_bits(*(const nx_u32 *)p);
  else
    return is_half_widen(*(const nx_u16 *)p, f16);
}

/* The elements of 16 bytes in memory order (little-endian halves). */
template <int EB>
static __device__ __forceinline__ void is_widen_unit(uint4 r, float (&f)[16 / EB], bool f16) {
  const nx_u32 w[4] = {r.x, r.y, r.z, r.w};
  if constexpr (EB == 4) {
#pragma unroll
    for (int i = 0; i < 4; i++) f[i] = nx_f32_from_bits(w[i]);
  } else if (f16) {
#pragma unroll
    for (int i = 0; i < 4; i++) f[2 * i] = is_f16_widen(w[i] & 0xffffu), f[2 * i + 1] = is_f16_widen(w[i] >> 16);
  } else {
#pragma unroll
    for (int i = 0; i < 4; i++)
      f[2 * i] = nx_bf16_to_f32((nx_u16)(w[i] & 0xffffu)), f[2 * i + 1] = nx_bf16_to_f32((nx_u16)(w[i] >> 16));
  }
}

template <int EB>
static __device__ __forceinline__ void is_copy_elem(unsigned char *dst, const unsigned char *src) {
  if constexpr (EB == 4)
    *(nx_u32 *)dst = *(const nx_u32 *)src;
  else
    *(nx_u16 *)dst = *(const nx_u16 *)src;
}

static __device__ __forceinline__ void is_cp16(void *dst, const void *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

static __device__ __forceinline__ void is_cp4(void *dst, const void *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
}

static __device__ __forceinline__ void is_cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int N> static __device__ __forceinline__ void is_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static __device__ __forceinline__ long long is_row_tiles(const is_row_args &a, int ht) {
  if (ht == 1) return a.batch * a.q_heads * a.q_seq;
  return a.batch * a.kv_heads * ((a.group + ht - 1) / ht) * a.q_seq;
}

/* Tiles run (b, kv head, head chunk, query) with the query fastest, so that
** neighbouring blocks gather the same rows while they are in L2. */
static __device__ __forceinline__ is_row_tile is_row_tile_at(const is_row_args &a, int ht, long long i) {
  is_row_tile t;
  long long kvh, ih;
  t.qi = i % a.q_seq;
  if (ht == 1) {
    const long long bq = i / a.q_seq;
    t.h0 = bq % a.q_heads;
    t.b = bq / a.q_heads;
    t.nh = 1;
    kvh = t.h0 / a.group;
    ih = a.index_heads == 1 ? 0 : t.h0;
  } else {
    const long long chunks = (a.group + ht - 1) / ht, r = i / a.q_seq;
    const long long c = r % chunks, bk = r / chunks;
    kvh = bk % a.kv_heads;
    t.b = bk / a.kv_heads;
    t.h0 = kvh * a.group + c * ht;
    t.nh = (int)is_min_ll(ht, a.group - c * ht);
    ih = 0;
  }
  t.row0 = (t.b * a.q_heads + t.h0) * a.q_seq + t.qi;
  t.irow = ((t.b * a.index_heads + ih) * a.q_seq + t.qi) * a.width;
  t.kv_base = (t.b * a.kv_heads + kvh) * a.cache_seq;
  t.valid = 0;
  return t;
}

/* The clamped key of selection s, or row 0 (in bounds) past the selections.
** int: a present of 2^31 rows would not fit a device. */
static __device__ __forceinline__ int is_lane_key(const is_row_args &a, const is_row_tile &t,
                                                  long long s) {
  return s < t.valid ? (int)is_key_at(a.indices, t.irow + s, a.index_is_i64, a.cache_seq) : 0;
}

static __device__ __forceinline__ void is_row_zero_y(const is_row_args &a, const is_row_tile &t) {
  for (int h = 0; h < t.nh; h++)
    for (long long d = threadIdx.x; d < a.head_size; d += IS_ROW_THREADS)
      is_store(a.y, (t.row0 + h * a.q_seq) * a.head_size + d, 0.0f, a.storage);
}

/* ---- scores ---- */

/*
** A warp's next slice into registers: lanes 8j .. 8j + 7 load one row's 128
** bytes (row 4i + j in load i), so each load is four whole lines.  pass is
** the slab at the slice's first dim; row_bytes the present's row pitch.
*/
static __device__ __forceinline__ void is_kfetch(uint4 (&r)[8], const unsigned char *pass, int key,
                                                 int row_bytes, int nbytes, int lane) {
  const int u = lane & 7;
#pragma unroll
  for (int i = 0; i < 8; i++) {
    const int k = __shfl_sync(IS_FULL_MASK, key, 4 * i + (lane >> 3));
    if (u * 16 < nbytes) r[i] = __ldg((const uint4 *)(pass + (long long)k * row_bytes) + u);
  }
}

static __device__ __forceinline__ void is_kstore(uint4 *kbuf, const uint4 (&r)[8], int nbytes,
                                                 int lane) {
  const int u = lane & 7;
#pragma unroll
  for (int i = 0; i < 8; i++)
    if (u * 16 < nbytes) kbuf[(4 * i + (lane >> 3)) * IS_KROW_UNITS + u] = r[i];
}

/* Rows that are not 16-byte aligned: element by element, same layout. */
template <int EB>
static __device__ void is_kcopy(uint4 *kbuf, const unsigned char *pass, int key, int row_bytes,
                                int nd, int lane) {
  for (int rr = 0; rr < 32; rr++) {
    const int k = __shfl_sync(IS_FULL_MASK, key, rr);
    unsigned char *dst = (unsigned char *)(kbuf + rr * IS_KROW_UNITS);
    const unsigned char *src = pass + (long long)k * row_bytes;
    for (int e = lane; e < nd; e += 32) is_copy_elem<EB>(dst + e * EB, src + e * EB);
  }
}

/*
** nd dims of one staged key slice into the lane's HT chains, d ascending:
** acc[h] = acc[h] + qs[d][h] * (k[d] * sqrt_scale).  qs starts at the slice.
*/
template <int EB, int HT>
static __device__ __forceinline__ void is_score_slice(const uint4 *krow, const float *qs, int nd,
                                                      float ss, bool f16, float (&acc)[HT]) {
  constexpr int EPU = is_elem<EB>::per_unit;
  constexpr int QD = is_qbatch<HT>::dims, QV = is_qbatch<HT>::vecs;
  const float4 *q4 = (const float4 *)qs;
  const int units = nd / EPU;
  int dl;
#pragma unroll(HT > 1 ? 1 : 2)
  for (int u = 0; u < units; u++) {
    float k[EPU];
    is_widen_unit<EB>(krow[u], k, f16);
#pragma unroll
    for (int e0 = 0; e0 < EPU; e0 += QD) {
      float q[4 * QV];
#pragma unroll
      for (int i = 0; i < QV; i++) {
        const float4 v = q4[(u * EPU + e0) * HT / 4 + i];
        q[4 * i] = v.x, q[4 * i + 1] = v.y, q[4 * i + 2] = v.z, q[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int e = 0; e < QD; e++) {
        const float ks = k[e0 + e] * ss;
#pragma unroll
        for (int h = 0; h < HT; h++) acc[h] = acc[h] + q[e * HT + h] * ks;
      }
    }
  }
  for (dl = units * EPU; dl < nd; dl++) {
    const float ks = is_widen_at<EB>((const unsigned char *)krow + dl * EB, f16) * ss;
#pragma unroll
    for (int h = 0; h < HT; h++) acc[h] = acc[h] + qs[dl * HT + h] * ks;
  }
}

/*
** Every selection's score for the tile's heads into the scores row (and the
** trace), and each lane's running max per head into mloc.  Columns, keys and
** row pitches are int: a row of 2^31 columns would need 8 GiB of scratch.
*/
template <int EB, int HT>
static __device__ __forceinline__ void is_row_scores(const is_row_args &a, const is_row_tile &t,
                                                     bool vec, float (&mloc)[HT]) {
  constexpr int DCW = IS_KCHUNK_BYTES / EB, QDIMS = IS_QS_FLOATS / HT;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int valid = (int)t.valid, ngroups = (valid + 31) / 32;
  const int my_groups = warp < ngroups ? (ngroups - 1 - warp) / IS_ROW_WARPS + 1 : 0;
  const int row_bytes = (int)(a.head_size * EB);
  const unsigned char *kslab = (const unsigned char *)a.present_key + t.kv_base * row_bytes;
  const bool f16 = a.storage == IS_STORAGE_F16;
  const void *query = a.query;
  uint4 *kbuf = is_sh.u.score.k[warp];
  float *qs = (float *)is_sh.u.score.q;
  long long d0;

#pragma unroll
  for (int h = 0; h < HT; h++) mloc[h] = nx_f32_from_bits(IS_NEG_INF_BITS);
  for (d0 = 0; d0 < a.head_size; d0 += QDIMS) {
    const int dq = (int)is_min_ll(QDIMS, a.head_size - d0), nchunk = (dq + DCW - 1) / DCW;
    const int nit = my_groups * nchunk;
    const bool last = d0 + dq == a.head_size;
    const unsigned char *kpass = kslab + d0 * EB;
    int key_cur, key_next, it, c, g;
    uint4 r[8];
    float acc[HT];

    __syncthreads(); /* the previous pass is done with qs */
    for (int i = tid; i < dq * HT; i += IS_ROW_THREADS) {
      const int h = i % HT;
      const long long at = (t.row0 + h * a.q_seq) * a.head_size + d0 + i / HT;
      float acc = 0.0f; /* 0 + q * s is q * s, but -0 turns +0: no score can tell, since
                           a chain from +0 never holds -0 */
      if (h < t.nh) acc = acc + (is_load(query, at, a.storage) * a.sqrt_scale); /* IS_PLANT_SCORE */
      qs[i] = acc;
    }
    __syncthreads();
    if (nit == 0) continue;
    key_cur = is_lane_key(a, t, warp * 32 + lane);
    key_next = is_lane_key(a, t, (warp + IS_ROW_WARPS) * 32 + lane);
    if (vec) is_kfetch(r, kpass, key_cur, row_bytes, (DCW < dq ? DCW : dq) * EB, lane);
    for (it = 0, c = 0, g = warp; it < nit; it++) {
      const int s = g * 32 + lane, nd = DCW < dq - c * DCW ? DCW : dq - c * DCW;
      if (c == 0) {
#pragma unroll
        for (int h = 0; h < HT; h++)
          acc[h] = d0 > 0 && h < t.nh && s < valid
                       ? a.scores[(t.row0 + h * a.q_seq) * a.width + s] /* the chain so far */
                       : 0.0f;
      }
      if (vec)
        is_kstore(kbuf, r, nd * EB, lane);
      else
        is_kcopy<EB>(kbuf, kpass + c * IS_KCHUNK_BYTES, key_cur, row_bytes, nd, lane);
      __syncwarp();
      if (vec && it + 1 < nit) { /* the next slice flies while this one is summed */
        const int c2 = c + 1 == nchunk ? 0 : c + 1;
        const int nd2 = DCW < dq - c2 * DCW ? DCW : dq - c2 * DCW;
        is_kfetch(r, kpass + c2 * IS_KCHUNK_BYTES, c2 == 0 ? key_next : key_cur, row_bytes,
                  nd2 * EB, lane);
      }
      is_score_slice<EB, HT>(kbuf + lane * IS_KROW_UNITS, qs + c * DCW * HT, nd, a.sqrt_scale, f16,
                             acc);
      __syncwarp();
      if (++c < nchunk) continue;
      if (s < valid) {
#pragma unroll
        for (int h = 0; h < HT; h++) {
          const long long at = (t.row0 + h * a.q_seq) * a.width + s;
          float score = acc[h];
          if (h >= t.nh) continue;
          if (last) {
            if (a.has_bias)
              score = score + is_bias_at(a.bias, a.storage, a.bd0, a.bd1, a.bd2, a.bd3, t.b,
                                         t.h0 + h, t.qi, key_cur);
            if (a.score_trace) a.score_trace[at] = score;
            mloc[h] = nx_maxf(mloc[h], score);
          }
          a.scores[at] = score;
        }
      }
      c = 0;
      g += IS_ROW_WARPS;
      key_cur = key_next;
      key_next = is_lane_key(a, t, (g + IS_ROW_WARPS) * 32 + lane);
    }
  }
}

/* The block's max per head (order-free); masked[h] when it is -inf. */
template <int HT>
static __device__ __forceinline__ void is_row_max(const is_row_tile &t, float (&mloc)[HT]) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
#pragma unroll
  for (int h = 0; h < HT; h++) {
    float m = mloc[h];
    for (int off = 16; off > 0; off >>= 1) m = nx_maxf(m, __shfl_xor_sync(IS_FULL_MASK, m, off));
    if (lane == 0) is_sh.wmax[warp][h] = m;
  }
  __syncthreads();
  if (tid < t.nh) {
    float m = nx_f32_from_bits(IS_NEG_INF_BITS);
    for (int w = 0; w < IS_ROW_WARPS; w++) m = nx_maxf(m, is_sh.wmax[w][tid]);
    is_sh.m[tid] = m;
    is_sh.masked[tid] = nx_f32_bits(m) == IS_NEG_INF_BITS;
    is_sh.inv[tid] = 0.0f;
  }
  __syncthreads();
}

/* ---- exps, their sums, probabilities ---- */

static __device__ __forceinline__ float is_add4(float sum, float4 v) {
  sum = sum + v.x;
  sum = sum + v.y;
  sum = sum + v.z;
  return sum + v.w;
}

/*
** sum + e[0] + e[1] + ... + e[n - 1], left to right; e is 16-byte aligned.
** The loads run four float4s ahead of the adds, which are the critical path.
*/
static __device__ __forceinline__ float is_serial_sum(const float *e, int n, float sum) {
  const float4 *e4 = (const float4 *)e;
  const int nq = n >> 2;
  int q = 0, s;
  if (nq >= 4) {
    float4 x0 = e4[0], x1 = e4[1], x2 = e4[2], x3 = e4[3];
    for (q = 4; q + 4 <= nq; q += 4) {
      const float4 y0 = e4[q], y1 = e4[q + 1], y2 = e4[q + 2], y3 = e4[q + 3];
      sum = is_add4(is_add4(is_add4(is_add4(sum, x0), x1), x2), x3);
      x0 = y0, x1 = y1, x2 = y2, x3 = y3;
    }
    sum = is_add4(is_add4(is_add4(is_add4(sum, x0), x1), x2), x3);
  }
  for (; q < nq; q++) sum = is_add4(sum, e4[q]);
  for (s = nq * 4; s < n; s++) sum = sum + e[s];
  return sum;
}

/*
** e_s = exp(score_s - m) into the scores row, a pass of E columns at a time;
** lane h of warp 0 adds head h's exps of each pass in column order, so its
** sum runs over every column ascending; then inv[h] = 1 / sum.  E (columns
** a pass, and the buffer's row stride) is 4 mod 8 floats, so that the lanes'
** float4 reads hit distinct banks.  Not inlined: one copy of nx_expf.
*/
static __device__ __noinline__ void is_row_exps(const is_row_args &a, const is_row_tile &t, int E) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool chain = warp == 0 && lane < t.nh && !is_sh.masked[lane];
  float *eb = (float *)is_sh.u.e;
  float sum = 0.0f;
  long long c0;
  for (c0 = 0; c0 < t.valid; c0 += E) {
    const int kn = (int)is_min_ll(E, t.valid - c0);
    for (int h = 0; h < t.nh; h++) {
      float *srow = a.scores + (t.row0 + h * a.q_seq) * a.width + c0;
      const float m = is_sh.m[h];
      if (is_sh.masked[h]) continue;
      for (int s = tid; s < kn; s += IS_ROW_THREADS) {
        const float e = nx_expf(srow[s] - m);
        eb[h * E + s] = e;
        srow[s] = e;
      }
    }
    __syncthreads();
    if (chain) sum = is_serial_sum(eb + lane * E, kn, sum);
    __syncthreads(); /* before the next pass overwrites eb */
  }
  if (chain) {
    const float inv_sum = 1.0f / sum; /* IS_PLANT_NORM */
    is_sh.inv[lane] = inv_sum;
  }
  __syncthreads();
}

/* p_s = e_s * inv into the scores row; +0 for a masked head (no exps there). */
static __device__ __forceinline__ void is_row_probs(const is_row_args &a, const is_row_tile &t) {
  for (int h = 0; h < t.nh; h++) {
    float *srow = a.scores + (t.row0 + h * a.q_seq) * a.width;
    const float inv = is_sh.inv[h];
    const int masked = is_sh.masked[h];
    for (long long s = threadIdx.x; s < t.valid; s += IS_ROW_THREADS)
      srow[s] = masked ? 0.0f : srow[s] * inv;
  }
  __syncthreads(); /* the value stages copy these */
}

/* ---- values ---- */

/*
** One pass over dims [d0, d0 + dn): stages of `keys` keys, each a row slice
** of row_bytes from the present (pitch bytes a row, pass at dim d0).  A
** thread's 16-byte pieces j (at most two: IS_VSTAGE_BYTES / 16 / threads)
** are (key piece_s[j], unit piece_u[j]) of every stage, its probability
** (head prob_h, key prob_s).
*/
struct is_vplan {
  const unsigned char *pass;
  int dn, row_bytes, pitch, keys, units, stages;
  int piece_s[2], piece_u[2], prob_h, prob_s;
};

/* Keys of this thread's pieces of stage i: loaded a stage before they are used. */
static __device__ __forceinline__ void is_vkeys(const is_row_args &a, const is_row_tile &t,
                                                const is_vplan &p, int i, int (&vkey)[2]) {
#pragma unroll
  for (int j = 0; j < 2; j++)
    vkey[j] = p.piece_s[j] < p.keys ? is_lane_key(a, t, i * p.keys + p.piece_s[j]) : 0;
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
        is_cp16(vd + p.piece_s[j] * p.row_bytes + p.piece_u[j] * 16,
                p.pass + (long long)vkey[j] * p.pitch + p.piece_u[j] * 16);
  } else {
    for (int idx = threadIdx.x; idx < kn * p.dn; idx += IS_ROW_THREADS) {
      const int s = idx / p.dn, dl = idx - s * p.dn;
      is_copy_elem<EB>(vd + s * p.row_bytes + dl * EB,
                       p.pass + (long long)is_lane_key(a, t, k0 + s) * p.pitch + dl * EB);
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

/* The stage's keys, in order, into this thread's chains acc[h] (dim d0 + tid). */
template <int EB, int HT>
static __device__ __forceinline__ void is_vconsume(int slot, int kn, int row_bytes, bool f16,
                                                   float (&acc)[HT]) {
  const unsigned char *vb = (const unsigned char *)is_sh.u.value.v[slot] + threadIdx.x * EB;
  const float *pb = (const float *)is_sh.u.value.p[slot];
  int s = 0;
  for (; s + 4 <= kn; s += 4) {
    float v[4], p[4 * HT];
#pragma unroll
    for (int i = 0; i < 4; i++) v[i] = is_widen_at<EB>(vb + (s + i) * row_bytes, f16);
#pragma unroll
    for (int i = 0; i < HT; i++) {
      const float4 x = ((const float4 *)(pb + s * HT))[i];
      p[4 * i] = x.x, p[4 * i + 1] = x.y, p[4 * i + 2] = x.z, p[4 * i + 3] = x.w;
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int h = 0; h < HT; h++) acc[h] = is_value_step(acc[h], p, i * HT + h, v[i]);
  }
  for (; s < kn; s++) {
    const float v = is_widen_at<EB>(vb + s * row_bytes, f16);
#pragma unroll
    for (int h = 0; h < HT; h++) acc[h] = is_value_step(acc[h], pb, s * HT + h, v);
  }
}

/*
** y[h][d] = sum over s ascending of p_s * v_s[d]; a masked head's y is +0.
** The ring: stage c is consumed after a barrier that also tells that every
** thread is done with stage c - 1, whose slot the copies issued next (stage
** c + IS_VSTAGES - 1) overwrite.
*/
template <int EB, int HT>
static __device__ __forceinline__ void is_row_values(const is_row_args &a, const is_row_tile &t,
                                                     bool vec) {
  const int tid = threadIdx.x, valid = (int)t.valid;
  const bool f16 = a.storage == IS_STORAGE_F16;
  is_vplan p;
  long long d0;
  p.pitch = (int)(a.head_size * EB);
  for (d0 = 0; d0 < a.head_size; d0 += IS_ROW_THREADS) {
    float acc[HT];
    int vkey[2], i;
    p.pass = (const unsigned char *)a.present_value + t.kv_base * p.pitch + d0 * EB;
    p.dn = (int)is_min_ll(IS_ROW_THREADS, a.head_size - d0);
    p.row_bytes = p.dn * EB;
    p.keys = IS_VSTAGE_BYTES / p.row_bytes < IS_VKEYS ? IS_VSTAGE_BYTES / p.row_bytes : IS_VKEYS;
    p.units = p.row_bytes / 16;
    p.stages = (valid + p.keys - 1) / p.keys;
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
    if (vec) is_vkeys(a, t, p, 0, vkey);
    /* step i issues stage i and consumes stage c = i - (IS_VSTAGES - 1) */
    for (i = 0; i < p.stages + IS_VSTAGES - 1; i++) {
      const int c = i - (IS_VSTAGES - 1);
      if (c >= 0) {
        is_cp_wait<IS_VSTAGES - 2>(); /* this thread's copies of stage c have landed */
        __syncthreads();              /* and everyone's */
      }
      if (i < p.stages) {
        is_vissue<EB, HT>(a, t, p, vec, i, vkey);
        if (vec) is_vkeys(a, t, p, i + 1, vkey);
      }
      is_cp_commit(); /* empty groups too: the wait counts groups */
      if (c >= 0 && tid < p.dn)
        is_vconsume<EB, HT>(c % IS_VSTAGES, valid - c * p.keys < p.keys ? valid - c * p.keys : p.keys,
                            p.row_bytes, f16, acc);
    }
    is_cp_wait<0>();
    __syncthreads(); /* the ring is free for the next pass or tile */
    if (tid < p.dn) {
#pragma unroll
      for (int h = 0; h < HT; h++)
        if (h < t.nh)
          is_store(a.y, (t.row0 + h * a.q_seq) * a.head_size + d0 + tid,
                   is_sh.masked[h] ? 0.0f : acc[h], a.storage);
    }
  }
}

/* ---- one tile, and the kernel ---- */

template <int EB, int HT>
static __device__ __forceinline__ void is_row_tile_run(const is_row_args &a, is_row_tile t,
                                       bool vec) {
  float mloc[HT];
  int live = 0;
  long long s;

  /* the selections: columns before the first -1 (none from an empty cache) */
  __syncthreads(); /* the previous tile is done with shared memory */
  if (threadIdx.x == 0) is_sh.first_pad = (unsigned long long)a.width;
  __syncthreads();
  for (s = threadIdx.x; s < a.width; s += IS_ROW_THREADS)
    if (is_load_index(a.indices, t.irow + s, a.index_is_i64) == -1) {
      atomicMin(&is_sh.first_pad, (unsigned long long)s);
      break; /* this thread's later columns cannot be first */
    }
  __syncthreads();
  t.valid = a.cache_seq > 0 ? (long long)is_sh.first_pad : 0;
  if (t.valid == 0) {
    is_row_zero_y(a, t);
    return;
  }

  is_row_scores<EB, HT>(a, t, vec, mloc);
  is_row_max<HT>(t, mloc);
  for (int h = 0; h < t.nh; h++) live |= !is_sh.masked[h];
  if (live) is_row_exps(a, t, IS_EBUF_FLOATS / HT - 4);
  is_row_probs(a, t);
  if (live)
    is_row_values<EB, HT>(a, t, vec);
  else
    is_row_zero_y(a, t);
}

template <int EB, int HT>
static __device__ __noinline__ void is_rows_run(const is_row_args &a) {
  /* 16-byte copies need every row to start on 16 bytes */
  const bool vec = a.head_size * EB % 16 == 0 && ((unsigned long long)a.present_key & 15) == 0 &&
                   ((unsigned long long)a.present_value & 15) == 0;
  const long long tiles = is_row_tiles(a, HT);
  long long i;
  for (i = blockIdx.x; i < tiles; i += gridDim.x) is_row_tile_run<EB, HT>(a, is_row_tile_at(a, HT, i), vec);
}

/*
** Y [B, N, Sq, D], one tile of tile_heads heads a block (see above); a
** row's selections are the columns of its index row (head qh, or 0 when
** index_heads is 1) before the first -1.  K and V are the present [B,
** kv_heads, cache_seq, D], head qh / group.  scores is [B * N * Sq, width]
** f32 scratch: scores, then exps, then probabilities; score_trace (NULL:
** off) has the same layout and keeps the scores.  tile_heads > 1 needs
** index_heads 1 (heads with their own index rows share nothing) and 16-bit
** storage, and is taken as 1 otherwise.
*/
extern "C" __global__ void __launch_bounds__(IS_ROW_THREADS, 2) index_share_rows(
    const void *query, const void *present_key, const void *present_value, const void *indices,
    int index_is_i64, const void *bias, int has_bias, long long bd0, long long bd1, long long bd2,
    long long bd3, float *scores, float *score_trace, void *y, int storage, long long batch,
    long long q_heads, long long kv_heads, long long group, long long q_seq, long long cache_seq,
    long long head_size, long long index_heads, long long width, float sqrt_scale,
    int tile_heads) {
  is_row_args a;
  const int ht = index_heads == 1 ? tile_heads : 1;
  a.query = query, a.present_key = present_key, a.present_value = present_value;
  a.indices = indices, a.bias = bias, a.scores = scores, a.score_trace = score_trace, a.y = y;
  a.bd0 = bd0, a.bd1 = bd1, a.bd2 = bd2, a.bd3 = bd3, a.batch = batch, a.q_heads = q_heads;
  a.kv_heads = kv_heads, a.group = group, a.q_seq = q_seq, a.cache_seq = cache_seq;
  a.head_size = head_size, a.index_heads = index_heads, a.width = width;
  a.sqrt_scale = sqrt_scale, a.index_is_i64 = index_is_i64, a.has_bias = has_bias;
  a.storage = storage;
  if (storage == IS_STORAGE_F32) /* one head a tile (index_share_abi.h) */
    is_rows_run<4, 1>(a);
  else if (ht > 1)
    is_rows_run<2, IS_ROW_HEADS>(a);
  else
    is_rows_run<2, 1>(a);
}
