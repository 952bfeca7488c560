/*
** numerics_sweep_eval.h: what each sweep function computes, written once for
** the kernel (NVRTC) and the host's expected values (gcc).  For the two
** CUDA_* ids this is the numerics' storage conversion, the value CUDA's own
** conversions must equal; the kernel substitutes the CUDA intrinsics there.
*/
#ifndef NUMERICS_SWEEP_EVAL_H
#define NUMERICS_SWEEP_EVAL_H

#include "numerics.h"
#include "numerics_sweep_funcs.h"

NX_FN unsigned sweep_sincos(unsigned func, float x) {
  float s, c;
  nx_sincosf(x, &s, &c);
  if (func == SWEEP_FUNC_SIN) return nx_f32_bits(s);
  if (func == SWEEP_FUNC_COS) return nx_f32_bits(c);
  return nx_f32_bits(nx_sinf(x)) == nx_f32_bits(s) && nx_f32_bits(nx_cosf(x)) == nx_f32_bits(c);
}

NX_FN unsigned sweep_numerics_eval(unsigned func, float x) {
  switch (func) {
  case SWEEP_FUNC_EXP: return nx_f32_bits(nx_expf(x));
  case SWEEP_FUNC_SIN:
  case SWEEP_FUNC_COS:
  case SWEEP_FUNC_SINCOS_PAIR_CONSISTENT: return sweep_sincos(func, x);
  case SWEEP_FUNC_POW_160000: return nx_f32_bits(nx_powf(160000.0f, x));
  case SWEEP_FUNC_BF16_ROUND_SEED: return nx_bf16_round_bits(x);
  case SWEEP_FUNC_BF16_RN:
  case SWEEP_FUNC_CUDA_BF16_RN: return nx_bf16_from_f32(x);
  case SWEEP_FUNC_F16_RN:
  case SWEEP_FUNC_CUDA_F16_RN: return nx_f16_from_f32(x);
  case SWEEP_FUNC_E4M3_ENCODE: return nx_e4m3_encode(x);
  case SWEEP_FUNC_E2M1_ENCODE: return nx_e2m1_encode(x);
  case SWEEP_FUNC_UE8M0_FROM_RATIO: return nx_ue8m0_from_ratio(x);
  case SWEEP_FUNC_ORDER_KEY: return nx_f32_order_key(x);
  case SWEEP_FUNC_MAX_NEG: return nx_f32_bits(nx_maxf(x, nx_f32_neg(x)));
  case SWEEP_FUNC_CEIL_LOG2: return (unsigned)nx_ceil_log2(x);
  default: return 0xffffffffu;
  }
}

#endif /* NUMERICS_SWEEP_EVAL_H */
