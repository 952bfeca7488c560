/*
** index_share.cu: the IndexShare operator's kernels (seed 000_7dfea7c512118af3,
** DESIGN.md "The frozen numerics" and "Error parity").  Launched, in this
** order, by device/index_share_device.c:
**
**   index_share_frontier          capacity mode only: valid_len[b] and
**                                 write_pos[b] from the bias's finite frontier;
**   index_share_validate_rows     the six index-row rules, a block or a thread
**                                 per row;
**   index_share_present           growing present: past ++ current, or
**   index_share_present_capacity  fixed-capacity present: past, with the
**                                 current tokens written at write_pos[b];
**   index_share_rows              attention, one block per tile of heads of one
**   index_share_rows_one          (b, query) sharing a kv head and index row:
**                                 tiles of IS_ROW_HEADS heads, or of one.
** For a growing present the rows kernels gather K and V straight from past
** and current, the rows the present would copy, so the launcher builds the
** present only where it is seen: as outputs, or as the traced launch's
** stage payloads.  (An f16/bf16 NaN so reaches the rows with its payload,
** not the copy's canonical one; it only enters products, and the f16/bf16
** store of Y canonicalises, as does the comparison: DESIGN.md.)
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
** The present builds are a copy of about 270 MB each at B = 64 (2,049
** tokens, 8 kv heads of 128 bf16), bound by memory.  A thread copies one
** item, rarely more: the launcher sizes the grid to the items
** (IS_COPY_MAX_BLOCKS only caps absurd sizes; past it threads walk on by
** the grid's stride).  So a thread's (row, offset in the row) costs one
** division, and moving it on by a stride (is_row_advance) none.  Grids
** capped at 16 blocks a SM, each thread walking about 31 units at B = 64,
** had run at 3.5 TB/s against the 4.1 of a cudaMemcpy; one unit a thread,
** with 32 registers so that a SM holds 2,048 loads in flight
** (IS_COPY_BLOCKS_PER_SM), runs at 4.0 (docs/SPEED.md, tenth round).
*/
static __device__ __forceinline__ void is_row_advance(long long *row, long long *within, long long step_rows,
                                                      long long step_within, long long row_len) {
  *row += step_rows;
  *within += step_within;
  if (*within >= row_len) ++*row, *within -= row_len;
}

/*
** A present build copies items: single elements, or (when a row of D
** elements is whole 16-byte units and every tensor starts on 16 bytes) 16
** bytes at a time, 4 f32 or 8 f16/bf16 elements.  A unit copies exactly as
** its elements would one by one through is_copy: f32 words by their bits,
** f16/bf16 pairs through nx_half2_canonical, the round trip's bits without
** the float work (test_numerics checks the two agree on every half).  A
** unit never straddles the past / current boundary: that lies on a row.
*/
static __device__ __forceinline__ void is_copy_unit(void *dst, long long du, const void *src, long long su,
                                                    int storage) {
  uint4 v = ((const uint4 *)src)[su];
  if (storage != IS_STORAGE_F32) {
    const int is_f16 = storage == IS_STORAGE_F16;
    v.x = nx_half2_canonical(v.x, is_f16);
    v.y = nx_half2_canonical(v.y, is_f16);
    v.z = nx_half2_canonical(v.z, is_f16);
    v.w = nx_half2_canonical(v.w, is_f16);
  }
  ((uint4 *)dst)[du] = v;
}

template <bool UNIT>
static __device__ __forceinline__ void is_copy_item(void *dst, long long di, const void *src, long long si,
                                                    int storage) {
  if (UNIT)
    is_copy_unit(dst, di, src, si, storage);
  else
    is_copy(dst, di, src, si, storage);
}

/* Whether rows of dim elements are whole 16-byte units of PER elements in 16-byte aligned tensors. */
template <int PER>
static __device__ __forceinline__ bool is_units_fit(const void *a, const void *b, const void *c, long long dim) {
  const unsigned long long addr = (unsigned long long)a | (unsigned long long)b | (unsigned long long)c;
  return dim % PER == 0 && (addr & 15) == 0;
}

/*
** a / b for 0 <= a and 0 < b, in 32 bits when both fit: a thread's one
** division is on the way to its load, and the 64-bit routine had cost the
** copy a fifth of its rate.
*/
static __device__ __forceinline__ long long is_quotient(long long a, long long b) {
  if (((unsigned long long)a | (unsigned long long)b) >> 32 == 0) return (long long)((unsigned)a / (unsigned)b);
  return a / b;
}

/*
** A thread's walk over items of rows of row items: its first item's row and
** offset, and (only when it has a second item) the grid stride in rows and
** items.
*/
typedef struct is_walk {
  long long idx, step, row, within, step_rows, step_within;
} is_walk;

static __device__ __forceinline__ is_walk is_walk_start(long long n, long long row) {
  is_walk w;
  w.idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  w.step = (long long)gridDim.x * blockDim.x;
  w.row = is_quotient(w.idx, row);
  w.within = w.idx - w.row * row;
  w.step_rows = w.step_within = 0;
  if (w.idx + w.step < n) {
    w.step_rows = is_quotient(w.step, row);
    w.step_within = w.step - w.step_rows * row;
  }
  return w;
}

static __device__ __forceinline__ void is_walk_next(is_walk *w, long long row) {
  w->idx += w->step;
  is_row_advance(&w->row, &w->within, w->step_rows, w->step_within, row);
}

/*
** Growing present [B, H, past_seq + cur_seq, D]: sequence rows below past_seq
** come from past [B, H, past_seq, D] (absent when past_seq is 0), the rest
** from cur [B, H, cur_seq, D].  One thread per item, grid-stride; past_n
** and cur_n are a (b, h)'s items from each.
*/
template <bool UNIT>
static __device__ __forceinline__ void is_present_walk(const void *past, const void *cur, void *out, int storage,
                                                       long long bhs, long long past_n, long long cur_n) {
  const long long row = past_n + cur_n, n = bhs * row;
  is_walk w;
  for (w = is_walk_start(n, row); w.idx < n; is_walk_next(&w, row)) {
    if (w.within < past_n)
      is_copy_item<UNIT>(out, w.idx, past, w.row * past_n + w.within, storage);
    else
      is_copy_item<UNIT>(out, w.idx, cur, w.row * cur_n + (w.within - past_n), storage);
  }
}

/* PER: the elements of a 16-byte unit of the storage, a constant so that no item count costs a division. */
template <int PER>
static __device__ __forceinline__ void is_present_build(const void *past, const void *cur, void *out, int storage,
                                                        long long bhs, long long past_seq, long long cur_seq,
                                                        long long dim) {
  if (is_units_fit<PER>(past, cur, out, dim))
    is_present_walk<true>(past, cur, out, storage, bhs, past_seq * (dim / PER), cur_seq * (dim / PER));
  else
    is_present_walk<false>(past, cur, out, storage, bhs, past_seq * dim, cur_seq * dim);
}

extern "C" __global__ void __launch_bounds__(IS_COPY_THREADS, IS_COPY_BLOCKS_PER_SM)
    index_share_present(const void *past, const void *cur, void *out, int storage, long long batch, long long heads,
                        long long past_seq, long long cur_seq, long long dim) {
  if (storage == IS_STORAGE_F32)
    is_present_build<4>(past, cur, out, storage, batch * heads, past_seq, cur_seq, dim);
  else
    is_present_build<8>(past, cur, out, storage, batch * heads, past_seq, cur_seq, dim);
}

/*
** Fixed-capacity present [B, H, cache_seq, D]: row t is cur[t - wp] when
** wp <= t < wp + cur_seq (wp = write_pos[b]), else past[t]; rows of the
** current tokens that fall beyond cache_seq are dropped.  Each item is read
** and written by the same thread at the same index, so out may alias past.
** row_n and cur_n are items, per the elements an item holds.
*/
template <bool UNIT>
static __device__ __forceinline__ void is_capacity_walk(const void *past, const void *cur, void *out, int storage,
                                                        const long long *write_pos, long long bhs, long long heads,
                                                        long long row, long long cur_n, long long dim_n) {
  const long long n = bhs * row;
  long long wp_row = -1, wp = 0;
  is_walk w;
  for (w = is_walk_start(n, row); w.idx < n; is_walk_next(&w, row)) {
    if (w.row != wp_row) wp_row = w.row, wp = write_pos[is_quotient(w.row, heads)] * dim_n; /* the current tokens' first item */
    if (w.within >= wp && w.within < wp + cur_n)
      is_copy_item<UNIT>(out, w.idx, cur, w.row * cur_n + (w.within - wp), storage);
    else
      is_copy_item<UNIT>(out, w.idx, past, w.idx, storage);
  }
}

template <int PER>
static __device__ __forceinline__ void is_capacity_build(const void *past, const void *cur, void *out, int storage,
                                                         const long long *write_pos, long long batch,
                                                         long long heads, long long cache_seq, long long cur_seq,
                                                         long long dim) {
  const bool units = is_units_fit<PER>(past, cur, out, dim);
  const long long dim_n = units ? dim / PER : dim;
  if (units)
    is_capacity_walk<true>(past, cur, out, storage, write_pos, batch * heads, heads, cache_seq * dim_n,
                           cur_seq * dim_n, dim_n);
  else
    is_capacity_walk<false>(past, cur, out, storage, write_pos, batch * heads, heads, cache_seq * dim_n,
                            cur_seq * dim_n, dim_n);
}

extern "C" __global__ void __launch_bounds__(IS_COPY_THREADS, IS_COPY_BLOCKS_PER_SM)
    index_share_present_capacity(const void *past, const void *cur, void *out, int storage,
                                 const long long *write_pos, long long batch, long long heads,
                                 long long cache_seq, long long cur_seq, long long dim) {
  if (storage == IS_STORAGE_F32)
    is_capacity_build<4>(past, cur, out, storage, write_pos, batch, heads, cache_seq, cur_seq, dim);
  else
    is_capacity_build<8>(past, cur, out, storage, write_pos, batch, heads, cache_seq, cur_seq, dim);
}

/* ---- index-row validation -------------------------------------------------------------- */

#define IS_FULL_MASK 0xffffffffu

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
** Column s's verdict when no column before it broke a rule (v its value,
** not -1; prev column s - 1's; first_pad the row's first -1 column): then
** each column before s is a value or -1, and after a -1 any value breaks
** one, so with no -1 before s the serial scan's previous value is column s
** - 1's.  The lowest column with a verdict is the one the serial scan
** stops at.
*/
static __device__ __forceinline__ long long is_column_rule(long long v, long long prev, long long s,
                                                           long long first_pad, long long limit, long long *aux) {
  *aux = 0;
  if (v < -1) return IS_RULE_SENTINEL;
  if (first_pad < s) return IS_RULE_AFTER_PADDING;
  if (v >= limit) return *aux = limit, IS_RULE_OUT_OF_RANGE;
  if (s > 0 && v == prev) return *aux = prev, IS_RULE_DUPLICATE;
  if (s > 0 && v < prev) return *aux = prev, IS_RULE_NOT_INCREASING;
  return IS_RULE_NONE;
}

/*
** A block judges one row, all its columns at once (is_column_rule): the
** first -1 and then the first violation are block-wide minima.  The verdict
** is thread 0's.  A warp scanning the row chunk by chunk took 18 us for
** 2,048 columns, each chunk's verdict waiting on the one before.
*/
static __device__ is_verdict is_validate_block(const void *indices, int index_is_i64, long long at,
                                               long long width, long long limit) {
  __shared__ unsigned long long first_pad, first_bad;
  __shared__ int any_value;
  __shared__ is_verdict verdict;
  const long long tid = threadIdx.x;
  long long s, fp, fb, aux;
  if (tid == 0) first_pad = first_bad = (unsigned long long)width, any_value = 0;
  __syncthreads();
  for (s = tid; s < width; s += blockDim.x)
    if (is_load_index(indices, at + s, index_is_i64) == -1) {
      atomicMin(&first_pad, (unsigned long long)s);
      break; /* this thread's later columns cannot be first */
    } else if (!any_value) {
      atomicOr(&any_value, 1);
    }
  __syncthreads();
  fp = (long long)first_pad;
  for (s = tid; s < width; s += blockDim.x) {
    const long long v = is_load_index(indices, at + s, index_is_i64);
    const long long prev = s > 0 ? is_load_index(indices, at + s - 1, index_is_i64) : 0;
    if (v != -1 && is_column_rule(v, prev, s, fp, limit, &aux) != IS_RULE_NONE) {
      atomicMin(&first_bad, (unsigned long long)s);
      break;
    }
  }
  __syncthreads();
  fb = (long long)first_bad;
  if (fb < width && fb % blockDim.x == tid) { /* the owner of the first violation says which */
    const long long v = is_load_index(indices, at + fb, index_is_i64);
    const long long prev = fb > 0 ? is_load_index(indices, at + fb - 1, index_is_i64) : 0;
    verdict.rule = is_column_rule(v, prev, fb, fp, limit, &aux);
    verdict.column = fb, verdict.value = v, verdict.aux = aux;
  } else if (fb == width && tid == 0) {
    verdict.rule = any_value ? IS_RULE_NONE : IS_RULE_ALL_PADDING;
    verdict.column = -1, verdict.value = 0, verdict.aux = 0;
  }
  __syncthreads();
  return verdict;
}

/*
** Every row's record into status, and IS_LATCH_INDEX_BIT atomicOr'ed into
** *latch on a violation when latch is not NULL (the capturing path).  When
** the grid has a block for every row (as the launcher gives decode steps)
** a block takes a row, since one thread's scan of a long row is a chain of
** dependent loads; more rows take a thread each, which then keeps every
** warp busy with fewer instructions.
*/
extern "C" __global__ void __launch_bounds__(IS_VALIDATE_THREADS)
    index_share_validate_rows(const void *indices, int index_is_i64, long long batch,
                              long long index_heads, long long q_seq, long long width,
                              long long bound, const long long *bound_per_batch,
                              long long *status, unsigned *latch) {
  const long long rows = batch * index_heads * q_seq;
  const long long threads = (long long)gridDim.x * blockDim.x;
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int by_block = rows <= gridDim.x;
  const long long stride = by_block ? rows : threads;
  long long row;
  for (row = by_block ? blockIdx.x : tid; row < rows; row += stride) {
    const long long b = row / (index_heads * q_seq);
    const long long limit = bound_per_batch ? bound_per_batch[b] : bound;
    const is_verdict r = by_block ? is_validate_block(indices, index_is_i64, row * width, width, limit)
                                  : is_validate_serial(indices, index_is_i64, row * width, width, limit);
    if (by_block && threadIdx.x) continue;
    status[row * IS_STATUS_WORDS + IS_STATUS_RULE] = r.rule;
    status[row * IS_STATUS_WORDS + IS_STATUS_COLUMN] = r.column;
    status[row * IS_STATUS_WORDS + IS_STATUS_VALUE] = r.value;
    status[row * IS_STATUS_WORDS + IS_STATUS_AUX] = r.aux;
    if (r.rule != IS_RULE_NONE && latch) atomicOr(latch, IS_LATCH_INDEX_BIT);
  }
}

/* ---- attention rows (index_share_rows.h, index_share_row_scores.h, index_share_row_values.h) ---- */

#include "ordered_sum.h"
#include "index_share_rows.h"
#include "index_share_row_scores.h"
#include "index_share_row_values.h"

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
  if (live) is_row_exps(a.scores + t.row0 * a.width, a.q_seq * a.width, t.valid, t.nh, IS_EBUF_FLOATS / HT - 4);
  is_row_probs(a, t);
  if (live)
    is_row_values<EB, HT>(a, t, vec);
  else
    is_row_zero_y(a, t);
}

template <int EB, int HT>
static __device__ __forceinline__ void is_rows_run(const is_row_args &a) {
  /* 16-byte copies need every row to start on 16 bytes */
  const unsigned long long addr = (unsigned long long)a.key_lo | (unsigned long long)a.key_hi |
                                  (unsigned long long)a.value_lo | (unsigned long long)a.value_hi;
  const bool vec = a.head_size * EB % 16 == 0 && (addr & 15) == 0;
  const long long tiles = is_row_tiles(a, HT);
  long long i;
  for (i = blockIdx.x; i < tiles; i += gridDim.x) is_row_tile_run<EB, HT>(a, is_row_tile_at(a, HT, i), vec);
}

/*
** Y [B, N, Sq, D], one tile of tile_heads heads a block (see above); a
** row's selections are the columns of its index row (head qh, or 0 when
** index_heads is 1) before the first -1.  K and V are the present [B,
** kv_heads, cache_seq, D], head qh / group, in the two parts is_row_params
** describes (past and current, or the present whole).  scores is [B * N * Sq, width]
** f32 scratch: scores, then exps, then probabilities; score_trace (NULL:
** off) has the same layout and keeps the scores.  The parameters come as
** one __grid_constant__ block (index_share_abi.h says why).
**
** Two entry points, so that each has its own register budget:
** index_share_rows takes tiles of tile_heads = IS_ROW_HEADS heads (16-bit
** storage, index_heads 1) at two blocks a SM, as the batches that need
** them fill the GPU; index_share_rows_one takes one head a tile (f32, or
** few tiles) at one block a SM, whose 255 registers let the loads run
** further ahead (at B = 1 the tiles fill half the SMs anyway).
*/
extern "C" __global__ void __launch_bounds__(IS_ROW_THREADS, 2)
    index_share_rows(const __grid_constant__ is_row_params a) {
  is_rows_run<2, IS_ROW_HEADS>(a);
}

extern "C" __global__ void __launch_bounds__(IS_ROW_THREADS, 1)
    index_share_rows_one(const __grid_constant__ is_row_params a) {
  if (a.storage == IS_STORAGE_F32)
    is_rows_run<4, 1>(a);
  else
    is_rows_run<2, 1>(a);
}
