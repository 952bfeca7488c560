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
** Cache [B, capacity, record_bytes] bytes after the state copy: records below
** c->past_records from past [B, past_capacity, record_bytes], records from
** c->present_records on zero bytes, the ones between left to the compressor.
** Grid-stride from `first` by `step` over the flat bytes.  A byte's row and
** offset are carried from one stride to the next (one division a thread,
** not three a byte: with them the copy was bound by integer division), and
** its region is two comparisons against the row's runs.
*/
static __device__ __forceinline__ void csa_copy_cache_rows(const nx_u8 *past, nx_u8 *cache, long long batch,
                                                           long long past_capacity, long long capacity,
                                                           long long record_bytes, const csa_cursor *c,
                                                           long long first, long long step) {
  const long long row_bytes = capacity * record_bytes, n = batch * row_bytes;
  const long long copied = c->past_records * record_bytes, zeroed = c->present_records * record_bytes;
  long long i, b, within, step_rows, step_within;
  if (first >= n) return; /* also row_bytes == 0 */
  b = first / row_bytes, within = first % row_bytes;
  step_rows = step / row_bytes, step_within = step % row_bytes;
  for (i = first; i < n; i += step) {
    if (within < copied)
      cache[i] = past[b * past_capacity * record_bytes + within];
    else if (within >= zeroed)
      cache[i] = 0;
    b += step_rows, within += step_within;
    if (within >= row_bytes) b++, within -= row_bytes;
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
