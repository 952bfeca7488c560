/*
** numerics_sweep.cu: evaluates one frozen-numerics function over a contiguous
** range of float bit patterns, for the exhaustive host-vs-device check
** (`bitgate numerics check --device`, device/numerics_sweep.c).
**
** numerics_sweep(func, base, n, out): for i < n, out[i] = f(x) where x is the
** float with bits base + i (wrapping past 0xffffffff) and f is the function
** numbered func in numerics_sweep_funcs.h.  A grid-stride loop, so any launch
** shape covers all n.  An unknown func writes 0xffffffff (the host rejects it
** before launching).
**
** CUDA_BF16_RN and CUDA_F16_RN are CUDA's own conversions, the reference the
** numerics' storage conversions must match bit for bit (DESIGN.md "BF16 and
** f16"); they compile to cvt.rn.bf16.f32 and cvt.rn.f16.f32.
*/
#include "numerics.h"
#include "numerics_sweep_funcs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

static __device__ unsigned sweep_sincos(unsigned func, float x) {
  float s, c;
  nx_sincosf(x, &s, &c);
  if (func == SWEEP_FUNC_SIN) return nx_f32_bits(s);
  if (func == SWEEP_FUNC_COS) return nx_f32_bits(c);
  return nx_f32_bits(nx_sinf(x)) == nx_f32_bits(s) && nx_f32_bits(nx_cosf(x)) == nx_f32_bits(c);
}

static __device__ unsigned sweep_eval(unsigned func, float x) {
  switch (func) {
  case SWEEP_FUNC_EXP: return nx_f32_bits(nx_expf(x));
  case SWEEP_FUNC_SIN:
  case SWEEP_FUNC_COS:
  case SWEEP_FUNC_SINCOS_PAIR_CONSISTENT: return sweep_sincos(func, x);
  case SWEEP_FUNC_POW_160000: return nx_f32_bits(nx_powf(160000.0f, x));
  case SWEEP_FUNC_BF16_ROUND_SEED: return nx_bf16_round_bits(x);
  case SWEEP_FUNC_BF16_RN: return nx_bf16_from_f32(x);
  case SWEEP_FUNC_F16_RN: return nx_f16_from_f32(x);
  case SWEEP_FUNC_CUDA_BF16_RN: return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  case SWEEP_FUNC_CUDA_F16_RN: return __half_as_ushort(__float2half_rn(x));
  case SWEEP_FUNC_E4M3_ENCODE: return nx_e4m3_encode(x);
  case SWEEP_FUNC_E2M1_ENCODE: return nx_e2m1_encode(x);
  case SWEEP_FUNC_UE8M0_FROM_RATIO: return nx_ue8m0_from_ratio(x);
  case SWEEP_FUNC_ORDER_KEY: return nx_f32_order_key(x);
  case SWEEP_FUNC_MAX_NEG: return nx_f32_bits(nx_maxf(x, nx_f32_neg(x)));
  case SWEEP_FUNC_CEIL_LOG2: return (unsigned)nx_ceil_log2(x);
  default: return 0xffffffffu;
  }
}

extern "C" __global__ void numerics_sweep(unsigned func, unsigned base, unsigned n,
                                          unsigned *out) {
  unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = sweep_eval(func, __uint_as_float(base + i));
}
