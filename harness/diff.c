/*
** diff.c: see diff.h.
*/
#include "harness/diff.h"
#include "oracle/numerics/numerics.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Element i's bits (esize bytes each); fixed-size copies, so each is a single load. */
static uint64_t element_bits(const tensor *t, long long i, size_t esize) {
  const unsigned char *p = (const unsigned char *)t->data + (size_t)i * esize;
  uint16_t v16;
  uint32_t v32;
  uint64_t v64 = 0;
  switch (esize) { /* little-endian hosts only, as the GPU */
  case 1: return p[0];
  case 2: memcpy(&v16, p, 2); return v16;
  case 4: memcpy(&v32, p, 4); return v32;
  default: memcpy(&v64, p, esize < 8 ? esize : 8); return v64;
  }
}

static int bits_are_nan(dtype dt, uint64_t v) {
  switch (dt) {
  case DTYPE_F32: return (v & 0x7fffffffu) > 0x7f800000u;
  case DTYPE_F16: return (v & 0x7fffu) > 0x7c00u;
  case DTYPE_BF16: return (v & 0x7fffu) > 0x7f80u;
  default: return 0;
  }
}

/* Position in the total order of the format (-0 one step below +0). */
static long long order_position(dtype dt, uint64_t v) {
  int width = dt == DTYPE_F32 ? 32 : 16;
  uint64_t sign = 1ull << (width - 1), mag = v & (sign - 1);
  return (v & sign) ? -(long long)mag - 1 : (long long)mag;
}

static void element_text(dtype dt, uint64_t v, char *out, size_t len) {
  switch (dt) {
  case DTYPE_F32: snprintf(out, len, "%a", (double)nx_f32_from_bits((nx_u32)v)); break;
  case DTYPE_F16: snprintf(out, len, "%a", (double)nx_f16_to_f32((nx_u16)v)); break;
  case DTYPE_BF16: snprintf(out, len, "%a", (double)nx_bf16_to_f32((nx_u16)v)); break;
  case DTYPE_I32: snprintf(out, len, "%d", (int32_t)v); break;
  case DTYPE_I64: snprintf(out, len, "%lld", (long long)v); break;
  default: snprintf(out, len, "%llu", (unsigned long long)v); break;
  }
}

static void coords_text(const tensor *t, long long i, char *out, size_t len) {
  long long c[TENSOR_MAX_RANK];
  int a, n = 0;
  for (a = t->rank - 1; a >= 0; a--) {
    c[a] = t->shape[a] ? i % t->shape[a] : 0;
    i = t->shape[a] ? i / t->shape[a] : 0;
  }
  n += snprintf(out, len, "[");
  for (a = 0; a < t->rank && (size_t)n < len; a++) n += snprintf(out + n, len - (size_t)n, "%s%lld", a ? "," : "", c[a]);
  if ((size_t)n < len) snprintf(out + n, len - (size_t)n, "]");
}

static int same_layout(const tensor *a, const tensor *b) {
  int i;
  if (a->dt != b->dt || a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/*
** Elements compared as one block by memcmp before any is looked at alone: a
** run is nearly all identical bytes, and element by element a 256 MiB u8
** cache took seconds.  Only a block that differs is walked, so the counts
** and the first mismatch are those of the plain walk.
*/
#define DIFF_BLOCK_BYTES 4096

long long tensor_diff_run(const tensor *expected, const tensor *actual, tensor_diff *d) {
  long long n, i, block, end;
  size_t esize;
  int width;
  memset(d, 0, sizeof *d);
  d->first_offset = -1;
  d->ulp_distance = -1;
  if (!same_layout(expected, actual)) {
    d->mismatches = tensor_numel(expected) ? tensor_numel(expected) : 1;
    d->first_offset = 0;
    snprintf(d->coords, sizeof d->coords, "shape");
    return d->mismatches;
  }
  n = tensor_numel(expected);
  esize = dtype_size(expected->dt);
  width = (int)esize * 2;
  block = esize ? (long long)(DIFF_BLOCK_BYTES / esize) : n;
  for (i = 0; i < n; i++) {
    uint64_t e, a;
    if (i % block == 0) { /* at a block's start: skip the block if it is identical */
      end = n - i < block ? n : i + block;
      if (!memcmp((const unsigned char *)expected->data + (size_t)i * esize,
                  (const unsigned char *)actual->data + (size_t)i * esize, (size_t)(end - i) * esize)) {
        i = end - 1;
        continue;
      }
    }
    e = element_bits(expected, i, esize), a = element_bits(actual, i, esize);
    if (e == a) continue;
    if (bits_are_nan(expected->dt, e) && bits_are_nan(expected->dt, a)) {
      d->nan_equivalent++;
      continue;
    }
    if (d->mismatches++ == 0) {
      d->first_offset = i;
      coords_text(expected, i, d->coords, sizeof d->coords);
      snprintf(d->expected_hex, sizeof d->expected_hex, "0x%0*llx", width, (unsigned long long)e);
      snprintf(d->actual_hex, sizeof d->actual_hex, "0x%0*llx", width, (unsigned long long)a);
      element_text(expected->dt, e, d->expected_text, sizeof d->expected_text);
      element_text(expected->dt, a, d->actual_text, sizeof d->actual_text);
      if (dtype_is_float(expected->dt) && !bits_are_nan(expected->dt, e) && !bits_are_nan(expected->dt, a)) {
        long long delta = order_position(expected->dt, e) - order_position(expected->dt, a);
        d->ulp_distance = delta < 0 ? -delta : delta;
      }
    }
  }
  return d->mismatches;
}

void tensor_diff_describe(const tensor_diff *d, const char *name, char *out, unsigned long len) {
  if (d->mismatches == 0) {
    snprintf(out, len, "%s identical (nan_equivalent %lld)", name, d->nan_equivalent);
    return;
  }
  if (!strcmp(d->coords, "shape")) {
    snprintf(out, len, "%s: dtype or shape differs", name);
    return;
  }
  snprintf(out, len, "%s: %lld mismatches (nan_equivalent %lld); first at offset %lld %s: expected %s (%s), got %s (%s)",
           name, d->mismatches, d->nan_equivalent, d->first_offset, d->coords, d->expected_hex, d->expected_text,
           d->actual_hex, d->actual_text);
  if (d->ulp_distance >= 0) {
    size_t used = strlen(out);
    if (used < len) snprintf(out + used, len - used, ", %lld ulp", d->ulp_distance);
  }
}
