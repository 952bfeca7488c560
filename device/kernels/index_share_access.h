/*
** index_share_access.h: reading and writing IndexShare's tensors, shared by
** the fast kernels (index_share.cu) and the reference ones
** (index_share_reference.cu): f32/f16/bf16 storage, i32/i64 index rows,
** the broadcasting bias, the clamped selected key.
*/
#ifndef INDEX_SHARE_ACCESS_H
#define INDEX_SHARE_ACCESS_H

#include "index_share_abi.h"
#include "numerics.h"

#define IS_NEG_INF_BITS 0xff800000u

static __device__ __forceinline__ float is_load(const void *p, long long i, int storage) {
  if (storage == IS_STORAGE_F32) return ((const float *)p)[i];
  if (storage == IS_STORAGE_F16) return nx_f16_to_f32(((const nx_u16 *)p)[i]);
  return nx_bf16_to_f32(((const nx_u16 *)p)[i]);
}

static __device__ __forceinline__ void is_store(void *p, long long i, float v, int storage) {
  if (storage == IS_STORAGE_F32)
    ((float *)p)[i] = v;
  else if (storage == IS_STORAGE_F16)
    ((nx_u16 *)p)[i] = nx_f16_from_f32(v);
  else
    ((nx_u16 *)p)[i] = nx_bf16_from_f32(v);
}

/* dst[di] = src[si]: f32 by its bits, f16/bf16 through widen + round. */
static __device__ __forceinline__ void is_copy(void *dst, long long di, const void *src,
                                               long long si, int storage) {
  if (storage == IS_STORAGE_F32)
    ((nx_u32 *)dst)[di] = ((const nx_u32 *)src)[si];
  else
    is_store(dst, di, is_load(src, si, storage), storage);
}

static __device__ __forceinline__ long long is_load_index(const void *p, long long i,
                                                          int index_is_i64) {
  return index_is_i64 ? ((const long long *)p)[i] : (long long)((const int *)p)[i];
}

static __device__ __forceinline__ long long is_min_ll(long long a, long long b) {
  return a < b ? a : b;
}

/*
** The bias at logical (b, h, q, k) of [B, N, Sq, cache_seq]: bd are the bias
** dims right-aligned into rank 4 (1 where absent); an axis of size 1 broadcasts.
*/
static __device__ __forceinline__ float is_bias_at(const void *bias, int storage, long long bd0,
                                                   long long bd1, long long bd2, long long bd3,
                                                   long long b, long long h, long long q,
                                                   long long k) {
  long long off = bd0 == 1 ? 0 : b;
  off = off * bd1 + (bd1 == 1 ? 0 : h);
  off = off * bd2 + (bd2 == 1 ? 0 : q);
  off = off * bd3 + (bd3 == 1 ? 0 : k);
  return is_load(bias, off, storage);
}

static __device__ __forceinline__ int is_finite(float x) {
  return (nx_f32_bits(x) & 0x7f800000u) != 0x7f800000u;
}

/* The selected key of column s, clamped into [0, cache_seq) (cache_seq > 0). */
static __device__ __forceinline__ long long is_key_at(const void *indices, long long at,
                                                      int index_is_i64, long long cache_seq) {
  const long long raw = is_load_index(indices, at, index_is_i64);
  return raw < 0 ? 0 : raw >= cache_seq ? cache_seq - 1 : raw;
}

#endif
