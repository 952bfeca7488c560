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
#include "numerics_sweep_eval.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

static __device__ unsigned sweep_eval(unsigned func, float x) {
  if (func == SWEEP_FUNC_CUDA_BF16_RN) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  if (func == SWEEP_FUNC_CUDA_F16_RN) return __half_as_ushort(__float2half_rn(x));
  return sweep_numerics_eval(func, x);
}

extern "C" __global__ void numerics_sweep(unsigned func, unsigned base, unsigned n,
                                          unsigned *out) {
  unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = sweep_eval(func, __uint_as_float(base + i));
}
