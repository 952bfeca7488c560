/*
** csa_kernel_common.h: what the CompressedSparseAttention kernels of both
** compression ratios share (csa128.cu, csa4.cu): the cursor read on the
** device and the bias broadcast.  CUDA C++,
** included by the kernel files after numerics.h and nx_csa.h.
**
** The cursor (oracle/csa.h, csa_validate_cursor): S is query.shape[1];
** start = total - S is the first new position; past_records = start / ratio
** records are copied from the past caches, present_records = total / ratio
** exist after the step; kv_used = min(L, total) rows of current_kv are live,
** the first at absolute position kv_base = total - kv_used.  Every kernel
** reads total_sequence_length (one i64) on the device, never the host, so a
** captured graph replays whatever cursor the buffer holds.
*/
#ifndef CSA_KERNEL_COMMON_H
#define CSA_KERNEL_COMMON_H

#include "csa_rope_freq.h"
#include "csa_state_abi.h"

static __device__ __forceinline__ long long csa_min_ll(long long a, long long b) {
  return a < b ? a : b;
}

static __device__ __forceinline__ long long csa_max_ll(long long a, long long b) {
  return a > b ? a : b;
}

/*
** a / b for a >= 0, b > 0, as 32-bit unsigned arithmetic when
** both fit in 31 bits: a 64-bit division is a software routine of about a
** hundred instructions, which the attention's per-unit index arithmetic
** would otherwise pay several times a thread.
*/
static __device__ __forceinline__ long long csa_div_ll(long long a, long long b) {
  return ((unsigned long long)(a | b) >> 31) == 0 ? (long long)((unsigned)a / (unsigned)b) : a / b;
}

/*
** Chained launches (programmatic dependent launch).  The host may launch an
** attention pass chained to the pass before it (csa_device_attention_plan):
** the pass's blocks then start while the one before still runs, and do the
** work that reads only the step's inputs (the cursor, the row, the
** candidates' indices) meanwhile.  A pass releases the next one at its
** start or at its end, as the plan's early_release mask says (the kernel
** macros of csa4.cu and csa128.cu); a chained pass must reach
** csa_chain_wait, which returns once the pass before has finished and its
** writes are visible, before it reads that pass's output or writes
** anything.  In a pass launched plainly the wait returns at once, and a
** release matters only to a chained next launch.  The wait holds
** transitively: a pass finishes only after its own blocks have waited, so
** the passes before it have finished too.
*/
static __device__ __forceinline__ void csa_chain_release(void) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

static __device__ __forceinline__ void csa_chain_wait(void) { asm volatile("griddepcontrol.wait;" ::: "memory"); }

/*
** Named barriers (0 is __syncthreads'), for a producer and a consumer inside
** one block: `threads` counts both sides, a whole number of warps.  An
** arrive does not wait; what the arriving threads stored to shared memory
** before it is visible to the threads past the matching sync.
*/
static __device__ __forceinline__ void csa_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

static __device__ __forceinline__ void csa_bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

static __device__ __forceinline__ float csa_neg_inf(void) {
  return nx_f32_from_bits(NX_CSA_NEG_INF_BITS);
}

typedef struct csa_cursor {
  long long total, start, past_records, present_records, kv_used, kv_base;
} csa_cursor;

/* The cursor fields of csa_validate_cursor, from the device's total. */
static __device__ __forceinline__ csa_cursor csa_cursor_read(const long long *total_ptr,
                                                             long long seq, long long kv_len,
                                                             long long ratio) {
  csa_cursor c;
  c.total = *total_ptr;
  c.start = c.total - seq;
  c.past_records = c.start / ratio;
  c.present_records = c.total / ratio;
  c.kv_used = csa_min_ll(kv_len, c.total);
  c.kv_base = c.total - c.kv_used;
  return c;
}

/*
** csa_validate_cursor's rules for one cache: total >= 0, start >= 0, the
** past capacity holds the records to copy and the present one the records
** that exist after the step.  Ratio 4 asks it of both of its caches.
*/
static __device__ __forceinline__ int csa_cursor_fits(const csa_cursor *c,
                                                      long long past_capacity,
                                                      long long present_capacity) {
  return c->total >= 0 && c->start >= 0 && past_capacity >= c->past_records &&
         present_capacity >= c->present_records;
}

/*
** n words of carries [.., slot, part, width] after the state copy: the
** past's, or (reset, a step from position 0) kv 0.0f in part 0 and score
** -inf in part 1.  Four words (16 bytes) a thread where both carries are
** 16-byte aligned and width is a multiple of four, so that a group never
** spans two parts; else a word a thread.  Grid-stride from `first` by `step`.
** Four, as the cache's 16-byte units below: the carries then need a quarter
** of the threads (ratio 128's 512 KiB carry a batch row: 128 blocks).
*/
static __device__ __forceinline__ void csa_copy_carry(const nx_u32 *past, nx_u32 *carry, long long n,
                                                      long long width, int reset, long long first,
                                                      long long step) {
  const int wide = (((unsigned long long)past | (unsigned long long)carry) & 15u) == 0 && width % 4 == 0;
  long long i;
  if (wide) {
    for (i = first; i < n / 4; i += step) {
      const nx_u32 empty = (4 * i / width) % 2 == 0 ? 0u : NX_CSA_NEG_INF_BITS;
      ((uint4 *)carry)[i] = reset ? make_uint4(empty, empty, empty, empty) : __ldg((const uint4 *)past + i);
    }
  }
  for (i = (wide ? n / 4 * 4 : 0) + first; i < n; i += step) /* the words a group of four did not take */
    carry[i] = !reset ? past[i] : (i / width) % 2 == 0 ? 0u : NX_CSA_NEG_INF_BITS;
}

/*
** Cache [B, capacity, record_bytes] bytes after the state copy: records below
** c->past_records from past [B, past_capacity, record_bytes], records from
** c->present_records on zero bytes, the ones between left to the compressor.
**
** The flat bytes go in 16-byte units: unit u is bytes [16u - lead, 16u -
** lead + 16) of [0, n), lead the cache's address mod 16, so that a whole
** unit is one aligned 16-byte store.  A thread takes CSA_COPY_UNITS
** consecutive units a turn (csa_state_abi.h), turns grid-stride from
** `first` by `step`, and issues a turn's loads before its stores.  A unit
** wholly inside one row's copied run, with its source 16-byte aligned too,
** is one 16-byte load and store; wholly in the zeroed run, one store; wholly
** between the two, nothing.  Any other unit (the cache's first and last, a
** run's or a row's edge, a source of another alignment) goes byte by byte.
** A unit's row and offset are carried from turn to turn (one division a
** thread, not one a unit).
**
** Why units: a byte a thread, ratio 4's copy at 64K (9.5 MB of records, one
** batch row) took 89 us, 37,000 blocks in waves, each block's threads
** waiting on the cursor and then on one byte's load (docs/SPEED.md).
*/
typedef struct csa_copy_rows {
  const nx_u8 *past;
  nx_u8 *cache;
  long long n, row_bytes, past_row_bytes, copied, zeroed;
} csa_copy_rows;

enum { CSA_UNIT_SKIP, CSA_UNIT_COPY, CSA_UNIT_ZERO, CSA_UNIT_BYTES };

/* What unit [start, start + 16) of row b, at offset within (>= 0 unless start < 0), takes. */
static __device__ __forceinline__ int csa_copy_unit_kind(const csa_copy_rows *k, long long start, long long b,
                                                          long long within) {
  if (start < 0 || start + 16 > k->n || within + 16 > k->row_bytes) return CSA_UNIT_BYTES;
  if (within + 16 <= k->copied)
    return ((unsigned long long)(k->past + b * k->past_row_bytes + within) & 15u) == 0 ? CSA_UNIT_COPY
                                                                                       : CSA_UNIT_BYTES;
  if (within >= k->zeroed) return CSA_UNIT_ZERO;
  return within >= k->copied && within + 16 <= k->zeroed ? CSA_UNIT_SKIP : CSA_UNIT_BYTES;
}

/* The bytes of unit [start, start + 16) within [0, n) one at a time, the unit in row b at offset within. */
static __device__ __forceinline__ void csa_copy_unit_bytes(const csa_copy_rows *k, long long start, long long b,
                                                           long long within) {
  long long i;
  for (i = start < 0 ? 0 : start; i < start + 16 && i < k->n; i++) {
    long long row = b, at = within + (i - start);
    if (at >= k->row_bytes) at -= k->row_bytes, row++; /* a row is longer than a unit */
    if (at < k->copied)
      k->cache[i] = k->past[row * k->past_row_bytes + at];
    else if (at >= k->zeroed)
      k->cache[i] = 0;
  }
}

static __device__ __forceinline__ void csa_copy_cache_rows(const nx_u8 *past, nx_u8 *cache, long long batch,
                                                           long long past_capacity, long long capacity,
                                                           long long record_bytes, const csa_cursor *c,
                                                           long long first, long long step) {
  const csa_copy_rows k = {past,
                           cache,
                           batch * capacity * record_bytes,
                           capacity * record_bytes,
                           past_capacity * record_bytes,
                           c->past_records * record_bytes,
                           c->present_records * record_bytes};
  const long long lead = (long long)((unsigned long long)cache & 15u), turns = csa_copy_turns(k.n);
  const long long stride = step * CSA_COPY_TURN_BYTES;
  long long t, start, b, within, stride_rows, stride_within;
  if (first >= turns) return; /* also n == 0 */
  start = first * CSA_COPY_TURN_BYTES - lead;
  b = start < 0 ? 0 : start / k.row_bytes;
  within = start - b * k.row_bytes;
  stride_rows = stride / k.row_bytes, stride_within = stride - stride_rows * k.row_bytes;
  for (t = first; t < turns; t += step) {
    uint4 v[CSA_COPY_UNITS];
    int kind[CSA_COPY_UNITS], j;
    unsigned bytewise = 0; /* the units to go byte by byte, after the others' stores */
#pragma unroll
    for (j = 0; j < CSA_COPY_UNITS; j++) {
      long long row = b, at = within + 16 * j;
      if (at >= k.row_bytes) at -= k.row_bytes, row++; /* a row is longer than a turn */
      kind[j] = csa_copy_unit_kind(&k, start + 16 * j, row, at);
      if (kind[j] == CSA_UNIT_COPY) v[j] = __ldg((const uint4 *)(past + row * k.past_row_bytes + at));
    }
#pragma unroll
    for (j = 0; j < CSA_COPY_UNITS; j++) {
      if (kind[j] == CSA_UNIT_COPY) *(uint4 *)(cache + start + 16 * j) = v[j];
      if (kind[j] == CSA_UNIT_ZERO) *(uint4 *)(cache + start + 16 * j) = make_uint4(0u, 0u, 0u, 0u);
      if (kind[j] == CSA_UNIT_BYTES) bytewise |= 1u << j;
    }
    for (j = 0; bytewise; j++, bytewise >>= 1)
      if (bytewise & 1u) {
        long long row = b, at = within + 16 * j;
        if (at >= k.row_bytes) at -= k.row_bytes, row++;
        csa_copy_unit_bytes(&k, start + 16 * j, row, at);
      }
    start += stride, b += stride_rows, within += stride_within;
    if (within >= k.row_bytes) within -= k.row_bytes, b++;
    if (within < 0 && b > 0) within += k.row_bytes, b--; /* only the first turn starts before byte 0 */
  }
}

/*
** nx_csa_rope_pair's angle (sin, cos) with freq = nx_csa_rope_freq(pair),
** which the callers read from csa_rope_freq.h, split from its rotation so
** that the compressors compute it while the record pools (csa4.cu,
** csa128.cu).
*/
static __device__ __forceinline__ float2 csa_rope_angle(float freq, long long pos) {
  float2 a;
  nx_sincosf((float)pos * freq, &a.x, &a.y);
  return a;
}

/* nx_csa_rope_pair's rotation of (re, im) by the angle a = (sin, cos). */
static __device__ __forceinline__ void csa_rope_rotate(float *re, float *im, float2 a) {
  const float r = *re, i = *im;
  *re = nx_bf16_round(r * a.y - i * a.x);
  *im = nx_bf16_round(r * a.x + i * a.y);
}

/*
** x's term of nx_block_amax: |x| as bits, 0 for a NaN.  On these
** non-negative non-NaN values nx_maxf is the integer max of the bits (and
** the fold starts from +0), so a block's amax is an order-free integer
** reduction, bit-identical for every input.
*/
static __device__ __forceinline__ nx_u32 csa_amax_bits(float x) {
  return nx_f32_is_nan(x) ? 0u : nx_f32_bits(nx_f32_abs(x));
}

/* The bias at (b, h, s, candidate) of [bd0, bd1, bd2, bd3]; an axis of 1 broadcasts. */
static __device__ __forceinline__ float csa_bias_at(const float *bias, const long long *bd,
                                                    long long b, long long h, long long s,
                                                    long long c) {
  long long off = bd[0] == 1 ? 0 : b;
  off = off * bd[1] + (bd[1] == 1 ? 0 : h);
  off = off * bd[2] + (bd[2] == 1 ? 0 : s);
  off = off * bd[3] + (bd[3] == 1 ? 0 : c);
  return bias[off];
}

#endif /* CSA_KERNEL_COMMON_H */
