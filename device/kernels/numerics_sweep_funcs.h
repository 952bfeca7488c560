/*
** numerics_sweep_funcs.h: the functions the numerics_sweep kernel can
** evaluate, one id each.  Shared by the kernel (NVRTC, from the embedded copy)
** and the host runner (gcc), so it includes nothing and holds only the enum.
**
** For input x (the float with bits base + i) the kernel writes a 32-bit word;
** 8- and 16-bit results sit in the low bits, the rest are zero.  The host's
** expected value for each id is device_sweep_expected() in
** device/numerics_sweep.h.  Append new ids at the end: values are not stored
** anywhere, but keeping them stable keeps logs comparable.
*/
#ifndef NUMERICS_SWEEP_FUNCS_H
#define NUMERICS_SWEEP_FUNCS_H

enum sweep_func {
  SWEEP_FUNC_EXP = 0,                 /* bits of nx_expf(x) */
  SWEEP_FUNC_SIN = 1,                 /* bits of the sine half of nx_sincosf(x) */
  SWEEP_FUNC_COS = 2,                 /* bits of the cosine half of nx_sincosf(x) */
  SWEEP_FUNC_SINCOS_PAIR_CONSISTENT = 3, /* 1 iff nx_sinf, nx_cosf equal the pair's halves */
  SWEEP_FUNC_POW_160000 = 4,          /* bits of nx_powf(160000.0f, x) */
  SWEEP_FUNC_BF16_ROUND_SEED = 5,     /* nx_bf16_round_bits(x), the seeds' formula */
  SWEEP_FUNC_BF16_RN = 6,             /* nx_bf16_from_f32(x) */
  SWEEP_FUNC_F16_RN = 7,              /* nx_f16_from_f32(x) */
  SWEEP_FUNC_CUDA_BF16_RN = 8,        /* bits of CUDA's __float2bfloat16_rn(x) */
  SWEEP_FUNC_CUDA_F16_RN = 9,         /* bits of CUDA's __float2half_rn(x) */
  SWEEP_FUNC_E4M3_ENCODE = 10,        /* nx_e4m3_encode(x) */
  SWEEP_FUNC_E2M1_ENCODE = 11,        /* nx_e2m1_encode(x) */
  SWEEP_FUNC_UE8M0_FROM_RATIO = 12,   /* nx_ue8m0_from_ratio(x) */
  SWEEP_FUNC_ORDER_KEY = 13,          /* nx_f32_order_key(x) */
  SWEEP_FUNC_MAX_NEG = 14,            /* bits of nx_maxf(x, nx_f32_neg(x)) */
  SWEEP_FUNC_CEIL_LOG2 = 15,          /* (unsigned)nx_ceil_log2(x) */
  SWEEP_FUNC_COUNT = 16
};

#endif /* NUMERICS_SWEEP_FUNCS_H */
