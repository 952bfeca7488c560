/*
** numerics_probe.cu: calls every function of the frozen numerics, so that
** `bitgate audit` sees the PTX NVRTC makes of the whole numerics header under
** the pinned options (DESIGN.md "The frozen numerics", point 3).
**
** The kernels compute something well defined, but nothing launches them
** today: their purpose is the audit.  A numerics function that no kernel calls
** emits no PTX, so a new public function in numerics.h belongs here too.
**
** numerics_probe_scalar: for each input x = in[i] and y = in[(i + 1) % n],
** writes PROBE_SCALAR_OUTPUTS words to out[i * PROBE_SCALAR_OUTPUTS ...], in
** the order of the assignments below.
** numerics_probe_blocks: for each block of 64 inputs, the FP8 block-64 record,
** the two FP4 block-32 records, and the values both dequantize to.
*/
#include "numerics.h"

#define PROBE_SCALAR_OUTPUTS 22

extern "C" __global__ void numerics_probe_scalar(const float *in, unsigned n, unsigned *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i], y = in[(i + 1) % n], s, c;
  nx_u32 bits = nx_f32_bits(x);
  unsigned *o = out + (unsigned long long)i * PROBE_SCALAR_OUTPUTS;
  nx_sincosf(x, &s, &c);
  o[0] = nx_f32_bits(nx_expf(x));
  o[1] = nx_f32_bits(nx_sinf(x));
  o[2] = nx_f32_bits(nx_cosf(x));
  o[3] = nx_f32_bits(s);
  o[4] = nx_f32_bits(c);
  o[5] = nx_f32_bits(nx_powf(x, y));
  o[6] = nx_bf16_round_bits(x);
  o[7] = nx_f32_bits(nx_bf16_round(x));
  o[8] = nx_bf16_from_f32(x);
  o[9] = nx_f16_from_f32(x);
  o[10] = nx_f32_bits(nx_bf16_to_f32((nx_u16)bits));
  o[11] = nx_f32_bits(nx_f16_to_f32((nx_u16)bits));
  o[12] = nx_e4m3_encode(x);
  o[13] = nx_f32_bits(nx_e4m3_decode((nx_u8)bits));
  o[14] = nx_e2m1_encode(x);
  o[15] = nx_f32_bits(nx_e2m1_decode((nx_u8)bits));
  o[16] = (unsigned)nx_f32_total_cmp(x, y);
  o[17] = nx_f32_order_key(x);
  o[18] = nx_f32_bits(nx_maxf(x, y));
  o[19] = nx_f32_bits(nx_ue8m0_decode((nx_u8)bits));
  o[20] = nx_ue8m0_from_ratio(x);
  o[21] = (unsigned)nx_ceil_log2(x);
}

extern "C" __global__ void numerics_probe_blocks(const float *in, unsigned n_blocks,
                                                 nx_u8 *fp8_records, nx_u8 *fp4_records,
                                                 float *fp8_values, float *fp4_values) {
  unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n_blocks) return;
  const float *x = in + (unsigned long long)b * NX_FP8_BLOCK;
  nx_u8 *q8 = fp8_records + (unsigned long long)b * NX_FP8_BLOCK_BYTES;
  nx_u8 *q4 = fp4_records + (unsigned long long)b * 2 * NX_FP4_BLOCK_BYTES;
  nx_fp8_block64_quantize(x, q8);
  nx_fp8_block64_dequantize(q8, fp8_values + (unsigned long long)b * NX_FP8_BLOCK);
  nx_fp4_block32_quantize(x, q4);
  nx_fp4_block32_quantize(x + NX_FP4_BLOCK, q4 + NX_FP4_BLOCK_BYTES);
  nx_fp4_block32_dequantize(q4, fp4_values + (unsigned long long)b * NX_FP8_BLOCK);
  nx_fp4_block32_dequantize(q4 + NX_FP4_BLOCK_BYTES,
                            fp4_values + (unsigned long long)b * NX_FP8_BLOCK + NX_FP4_BLOCK);
}
