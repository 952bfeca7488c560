/*
** numerics_sweep.h: run the numerics_sweep kernel on the GPU, and the host's
** expected value for each of its functions.
**
** The runner compiles device/kernels/numerics_sweep.cu with NVRTC to a CUBIN
** for the device's sm (pinned options), loads it through cudart's library API
** (cudaLibraryLoadData, no direct libcuda link), and evaluates one function
** over base .. base + n - 1 (float bit patterns) per call, up to
** DEVICE_SWEEP_MAX_N at a time.  It uses device 0.  `bitgate numerics check
** --device` covers all 2^32 inputs in 16 calls.
**
** Without the CUDA toolkit, device_sweep_open fails saying the build has no
** NVRTC; without a GPU it fails with the probe's reason.
*/
#ifndef DEVICE_NUMERICS_SWEEP_H
#define DEVICE_NUMERICS_SWEEP_H

#include "device/kernels/numerics_sweep_funcs.h"
#include "oracle/numerics/numerics.h"
#include "device/kernels/numerics_sweep_eval.h"

#include <stddef.h>

#define DEVICE_SWEEP_MAX_N (1u << 28) /* outputs per call: a 1 GiB device buffer */

typedef struct device_sweep device_sweep;

/* Probes, compiles, loads and allocates; 0 on success, else err says why. */
int device_sweep_open(device_sweep **out, char *err, size_t err_len);

/*
** host_out[i] = the device's f_func(float with bits base + i), i < n.  n may be
** 0 .. DEVICE_SWEEP_MAX_N.  Returns 0, or nonzero on an unknown func, a too
** large n or any CUDA error, with the message in device_sweep_error(s).
*/
int device_sweep_run(device_sweep *s, unsigned func, unsigned base, unsigned n,
                     unsigned *host_out);

/* The last error of device_sweep_run, or "" if none. */
const char *device_sweep_error(const device_sweep *s);

/* Frees everything; s may be NULL. */
void device_sweep_close(device_sweep *s);

/* "exp", "cuda_bf16_rn", ...; "?" for an unknown id. */
static inline const char *device_sweep_func_name(unsigned func) {
  static const char *const names[SWEEP_FUNC_COUNT] = {
      [SWEEP_FUNC_EXP] = "exp",
      [SWEEP_FUNC_SIN] = "sin",
      [SWEEP_FUNC_COS] = "cos",
      [SWEEP_FUNC_SINCOS_PAIR_CONSISTENT] = "sincos_pair_consistent",
      [SWEEP_FUNC_POW_160000] = "pow_160000",
      [SWEEP_FUNC_BF16_ROUND_SEED] = "bf16_round_seed",
      [SWEEP_FUNC_BF16_RN] = "bf16_rn",
      [SWEEP_FUNC_F16_RN] = "f16_rn",
      [SWEEP_FUNC_CUDA_BF16_RN] = "cuda_bf16_rn",
      [SWEEP_FUNC_CUDA_F16_RN] = "cuda_f16_rn",
      [SWEEP_FUNC_E4M3_ENCODE] = "e4m3_encode",
      [SWEEP_FUNC_E2M1_ENCODE] = "e2m1_encode",
      [SWEEP_FUNC_UE8M0_FROM_RATIO] = "ue8m0_from_ratio",
      [SWEEP_FUNC_ORDER_KEY] = "order_key",
      [SWEEP_FUNC_MAX_NEG] = "max_neg",
      [SWEEP_FUNC_CEIL_LOG2] = "ceil_log2",
  };
  return func < SWEEP_FUNC_COUNT && names[func] ? names[func] : "?";
}

/*
** What the device must return for func at the float with bits x_bits: the
** host numerics' result.  CUDA's own conversions must equal the numerics'
** storage conversions, and the sin/cos pair must be consistent (1).
*/
static inline unsigned device_sweep_expected(unsigned func, unsigned x_bits) {
  return sweep_numerics_eval(func, nx_f32_from_bits(x_bits));
}

#endif /* DEVICE_NUMERICS_SWEEP_H */
