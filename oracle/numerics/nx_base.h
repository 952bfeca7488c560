/*
** nx_base.h: the portability floor of the frozen numerics.
**
** Every numerics header is compiled twice: by gcc as C11 for the oracle and the
** harness, and by NVRTC as CUDA C++ for the kernels.  This file hides the few
** differences: function qualifiers, constant tables, fixed-width integers
** (NVRTC has no <stdint.h>) and bit casts.  Nothing here rounds.
**
** Host builds must not evaluate float expressions in wider precision and must
** not contract a*b+c into an FMA; both would change bits.  The build checks the
** flags at configure time (cmake/fp_env_check.c); this header refuses to
** compile where it can see the problem itself.
*/
#ifndef NX_BASE_H
#define NX_BASE_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#  define NX_CUDA 1
#  define NX_FN static __device__ __forceinline__
#  define NX_COLD static __device__ __noinline__
#  define NX_TABLE static __device__ const
#else
#  include <string.h>
#  if defined(__FAST_MATH__)
#    error "the frozen numerics must not be built with -ffast-math"
#  endif
#  if !defined(__FLT_EVAL_METHOD__) || __FLT_EVAL_METHOD__ != 0
#    error "the frozen numerics need __FLT_EVAL_METHOD__ == 0"
#  endif
#  define NX_FN static inline
#  define NX_COLD static inline
#  define NX_TABLE static const
#endif

typedef unsigned char nx_u8;
typedef unsigned short nx_u16;
typedef unsigned int nx_u32;
typedef int nx_i32;
typedef unsigned long long nx_u64;
typedef long long nx_i64;

/* Bumped whenever any function here may return different bits. */
#define NX_NUMERICS_VERSION 1

/* The one NaN the numerics create (returned NaN inputs keep their bits). */
#define NX_NAN_BITS 0x7fc00000u

NX_FN nx_u32 nx_f32_bits(float x) {
#ifdef NX_CUDA
  return __float_as_uint(x);
#else
  nx_u32 u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}

NX_FN float nx_f32_from_bits(nx_u32 u) {
#ifdef NX_CUDA
  return __uint_as_float(u);
#else
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}

NX_FN nx_u64 nx_f64_bits(double x) {
#ifdef NX_CUDA
  return (nx_u64)__double_as_longlong(x);
#else
  nx_u64 u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}

NX_FN double nx_f64_from_bits(nx_u64 u) {
#ifdef NX_CUDA
  return __longlong_as_double((long long)u);
#else
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}

NX_FN int nx_f32_is_nan(float x) {
  return (nx_f32_bits(x) & 0x7fffffffu) > 0x7f800000u;
}

NX_FN float nx_f32_nan(void) { return nx_f32_from_bits(NX_NAN_BITS); }

/*
** Negation by the sign bit.  Use it wherever a NaN may be negated: the GPU's
** neg.f32 returns the canonical NaN 0x7fffffff for any NaN input, while the
** host flips the sign bit (measured on an H200 by `bitgate numerics check
** --device`), so a plain -x is only bit-exact on non-NaN values.
*/
NX_FN float nx_f32_neg(float x) { return nx_f32_from_bits(nx_f32_bits(x) ^ 0x80000000u); }

NX_FN float nx_f32_abs(float x) {
  return nx_f32_from_bits(nx_f32_bits(x) & 0x7fffffffu);
}

/* 2^k as a double, exact for -1022 <= k <= 1023. */
NX_FN double nx_f64_pow2(int k) {
  return nx_f64_from_bits((nx_u64)(k + 1023) << 52);
}

#endif /* NX_BASE_H */
