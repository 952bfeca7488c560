/*
** test_state_copy.c: the CSA state copy's cache bytes (csa_copy_cache_rows,
** csa_kernel_common.h, which csa4_state_copy and csa128_state_copy share),
** through csa128_state_copy, against a byte-at-a-time model of the rule:
** records below start / 128 copied from the past, records from total / 128
** on zeroed, the ones between untouched.  The copy goes in 16-byte units, so
** these cases put the cache and the past at every kind of misalignment, give
** rows a length that is no multiple of 16, let past and present rows differ
** in length, and launch from one block (many turns a thread) to enough for
** one turn each.  The gate's cases all use 256-byte aligned tensors.
*/
#include "device/kernels/csa128_abi.h"
#include "device/kernels/csa_state_abi.h"
#include "device/tests/gpu_test_support.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

typedef struct copy_case {
  long long batch, past_capacity, present_capacity, record_bytes, start;
  size_t cache_offset, past_offset; /* bytes past the buffer's 256-aligned payload */
} copy_case;

/* What the cache's bytes must be after the copy: the junk they held where the rule leaves them. */
static void expected_cache(const copy_case *k, const unsigned char *past, unsigned char *cache) {
  const long long row = k->present_capacity * k->record_bytes, past_row = k->past_capacity * k->record_bytes;
  const long long copied = k->start / CSA128_RATIO_K * k->record_bytes;
  const long long zeroed = (k->start + 1) / CSA128_RATIO_K * k->record_bytes;
  long long b, at;
  for (b = 0; b < k->batch; b++)
    for (at = 0; at < row; at++) {
      if (at < copied) cache[b * row + at] = past[b * past_row + at];
      else if (at >= zeroed) cache[b * row + at] = 0;
    }
}

/* Runs one case at grid blocks; returns the number of cache bytes that differ from the model. */
static long long run_case(device_runtime *rt, void *kernel, const copy_case *k, unsigned long long grid) {
  const long long seq = 1, kv_len = 1, total = k->start + seq;
  const size_t past_bytes = (size_t)(k->batch * k->past_capacity * k->record_bytes);
  const size_t cache_bytes = (size_t)(k->batch * k->present_capacity * k->record_bytes);
  const size_t carry_bytes = (size_t)k->batch * CSA128_RATIO_K * 2 * CSA128_DIM_K * 4;
  unsigned char *past = malloc(past_bytes + k->past_offset + 1), *want = malloc(cache_bytes + 32);
  unsigned char *got = malloc(cache_bytes + 32);
  device_buffer d_past, d_cache, d_carry, d_past_carry, d_total;
  const void *p_past, *p_past_carry, *p_total;
  void *p_cache, *p_carry, *latch = NULL;
  long long batch = k->batch, past_capacity = k->past_capacity, present_capacity = k->present_capacity;
  long long record_bytes = k->record_bytes, differ = 0;
  void *args[] = {&p_past_carry, &p_past, &p_carry, &p_cache, &p_total, &latch,
                  &batch, (void *)&seq, (void *)&kv_len, &past_capacity, &present_capacity, &record_bytes};
  size_t i;
  cr_assert(past && want && got);
  for (i = 0; i < past_bytes + k->past_offset + 1; i++) past[i] = (unsigned char)gpu_test_mix((unsigned)i + 77u);
  GPU_RT_OK(rt, device_buffer_alloc(rt, past_bytes + k->past_offset + 1, &d_past));
  GPU_RT_OK(rt, device_buffer_alloc(rt, cache_bytes + 32, &d_cache));
  GPU_RT_OK(rt, device_buffer_alloc(rt, carry_bytes, &d_carry));
  GPU_RT_OK(rt, device_buffer_alloc(rt, carry_bytes, &d_past_carry));
  GPU_RT_OK(rt, device_buffer_alloc(rt, sizeof total, &d_total));
  GPU_RT_OK(rt, device_buffer_upload(rt, &d_past, past, past_bytes + k->past_offset + 1));
  GPU_RT_OK(rt, device_buffer_upload(rt, &d_total, &total, sizeof total));
  GPU_RT_OK(rt, device_buffer_fill(rt, &d_cache, DEVICE_JUNK_BYTE));
  p_past = (const unsigned char *)d_past.dptr + k->past_offset;
  p_cache = (unsigned char *)d_cache.dptr + k->cache_offset;
  p_carry = d_carry.dptr, p_past_carry = d_past_carry.dptr, p_total = d_total.dptr;
  GPU_RT_OK(rt, device_runtime_launch(rt, kernel, CSA128_KERNEL_STATE, grid, CSA128_STATE_THREADS, args));
  GPU_RT_OK(rt, device_buffer_download(rt, &d_cache, got, cache_bytes + 32));
  memset(want, DEVICE_JUNK_BYTE, cache_bytes + 32);
  expected_cache(k, past + k->past_offset, want + k->cache_offset);
  for (i = 0; i < cache_bytes + 32; i++) differ += got[i] != want[i];
  device_buffer_free(&d_past);
  device_buffer_free(&d_cache);
  device_buffer_free(&d_carry);
  device_buffer_free(&d_past_carry);
  device_buffer_free(&d_total);
  free(past), free(want), free(got);
  return differ;
}

Test(state_copy, cache_bytes_follow_the_rule_at_every_alignment) {
  /* start: records copied = start / 128, zeroed from (start + 1) / 128 on; 383 leaves record 2 untouched */
  static const long long starts[] = {0, 383, 3 * 128 + 5};
  static const long long record_bytes[] = {583, 2048, 100};
  static const size_t offsets[][2] = {{0, 0}, {1, 1}, {5, 0}, {0, 9}, {15, 3}};
  device_runtime *rt = gpu_test_runtime_or_skip();
  void *kernel;
  size_t s, r, o;
  int shape, g;
  GPU_RT_OK(rt, device_runtime_kernel(rt, CSA128_KERNEL_FILE, CSA128_KERNEL_STATE, &kernel));
  for (shape = 0; shape < 2; shape++)
    for (s = 0; s < sizeof starts / sizeof *starts; s++)
      for (r = 0; r < sizeof record_bytes / sizeof *record_bytes; r++)
        for (o = 0; o < sizeof offsets / sizeof *offsets; o++) {
          /* one row, or three whose past rows are shorter than their present ones */
          const copy_case k = {shape ? 3 : 1, shape ? 4 : 5, 5, record_bytes[r], starts[s], offsets[o][0],
                               offsets[o][1]};
          const long long turns = csa_copy_turns(k.batch * k.present_capacity * k.record_bytes);
          const unsigned long long grids[] = {1, 3, (unsigned long long)(turns + CSA128_STATE_THREADS - 1) /
                                                        CSA128_STATE_THREADS};
          for (g = 0; g < 3; g++)
            cr_expect_eq(run_case(rt, kernel, &k, grids[g]), 0,
                         "batch %lld, capacities %lld/%lld, record %lld bytes, start %lld, cache +%zu, "
                         "past +%zu, grid %llu: bytes differ from the rule",
                         k.batch, k.past_capacity, k.present_capacity, k.record_bytes, k.start, k.cache_offset,
                         k.past_offset, grids[g]);
        }
  device_runtime_destroy(rt);
}
