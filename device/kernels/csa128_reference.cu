/*
** csa128_reference.cu: the reference variant of the ratio-128 CSA kernels
** (issue 8): the seed's serial design (seed 003_9308a65268dfd821.txt,
** csa_ratio128_compress and csa_ratio128_sink_attention), written against
** the shared stage math of oracle/numerics/nx_csa.h, so that it produces
** the oracle's bytes (oracle/SPEC.md "ratio 128").  A baseline for `bitgate
** bench` and a second, independent device path the gate holds to the same
** bytes; the production kernels are csa128.cu.
**
** Same names and argument lists as csa128.cu's kernels (csa128_abi.h), so
** device/csa128_device.c only picks this module and the launch geometry:
**
**   csa128_compress    one thread per batch row (one block each, block_dim
**                      REF_SERIAL_THREADS): every new token into its carry
**                      slot, and at every 128th position the whole record,
**                      dim after dim, in that one thread;
**   csa128_attention   one block per (b, s, head) row, REF_ATTN_THREADS:
**                      thread 0 scores every candidate, then the block
**                      computes the output dims (csa_sink_attention_reference.h).
**
** The state copy has no twin: the launcher runs csa128.cu's for both
** variants (the seed folds it into its compressor; it moves bytes only).
**
** Arithmetic: one IEEE binary32 operation at a time, rounded to nearest
** (--fmad=false; `bitgate audit` checks the PTX), each formula nx_csa.h's
** text in the oracle's order: nx_csa_pool over the 128 slots per dim,
** nx_csa_square_sum, nx_csa_inv_rms and nx_csa_norm_value, nx_csa_rope_tail
** at the block start pos - 127, then nx_csa_fp8_record_write, or (the f32
** view) each FP8 block quantized and dequantized again with the bf16 tail
** kept as it is.  Floats are moved by their bits where the oracle copies
** them.  All index arithmetic is 64-bit.
*/
#include "csa128_abi.h"
#include "reference_abi.h"
#include "numerics.h"
#include "nx_csa.h"
#include "csa_kernel_common.h"
#include "csa_sink_attention.h"
#include "csa_sink_attention_reference.h"
#include "csa_attention_rows.h"

#define CSA128_REF_CARRY_ROW (CSA128_RATIO_K * 2 * CSA128_DIM_K) /* floats a batch row */

/* Every slot of a carry row empty again: kv +0, score -inf. */
static __device__ void csa128_ref_clear(float *row) {
  int j, d;
  for (j = 0; j < CSA128_RATIO_K; j++)
    for (d = 0; d < CSA128_DIM_K; d++) {
      row[(2 * j) * CSA128_DIM_K + d] = 0.0f;
      ((nx_u32 *)row)[(2 * j + 1) * CSA128_DIM_K + d] = NX_CSA_NEG_INF_BITS;
    }
}

/*
** The finished record of the carry row into cache record `index` of batch
** b's row (583 bytes, or 2048 of the f32 view), in the calling thread.
** record: the thread's 512 floats of scratch.
*/
static __device__ void csa128_ref_record(const float *row, const float *norm, long long block_start,
                                         float *record, nx_u8 *dst, int cache_fp8) {
  float inv_rms;
  int d, k;
  for (d = 0; d < CSA128_DIM_K; d++) /* slot j: score at (2j + 1) * 512 + d, kv at 2j * 512 + d */
    record[d] = nx_csa_pool(row + CSA128_DIM_K + d, row + d, CSA128_RATIO_K, 2 * CSA128_DIM_K,
                            CSA128_RATIO_K, 0);
  inv_rms = nx_csa_inv_rms(nx_csa_square_sum(record, CSA128_DIM_K), CSA128_DIM_K);
  for (d = 0; d < CSA128_DIM_K; d++) record[d] = nx_csa_norm_value(record[d], inv_rms, norm[d]);
  nx_csa_rope_tail(record + CSA128_NOPE_K, block_start);
  if (cache_fp8) {
    nx_csa_fp8_record_write(record, dst);
    return;
  }
  for (k = 0; k < CSA128_FP8_BLOCKS_K; k++) { /* the f32 view: what the FP8 blocks decode to */
    nx_u8 block[NX_FP8_BLOCK_BYTES];
    nx_fp8_block64_quantize(record + NX_FP8_BLOCK * k, block);
    nx_fp8_block64_dequantize(block, (float *)dst + NX_FP8_BLOCK * k);
  }
  for (d = CSA128_NOPE_K; d < CSA128_DIM_K; d++) ((nx_u32 *)dst)[d] = nx_f32_bits(record[d]);
}

/*
** Batch row blockIdx.x, by thread 0 of its block; the S new tokens in order.
** kv and gate [B, S, 512], ape [128, 512], norm [512]; carry [B, 128, 2,
** 512] and cache [B, Rc, W] already hold what csa128_state_copy left.
*/
extern "C" __global__ void __launch_bounds__(REF_SERIAL_THREADS)
    csa128_compress(const float *kv, const float *gate, const float *ape, const float *norm,
                    float *carry, nx_u8 *cache, const long long *total_ptr, long long batch,
                    long long seq, long long kv_len, long long past_capacity,
                    long long present_capacity, int cache_fp8) {
  const long long b = blockIdx.x;
  const long long record_bytes = cache_fp8 ? CSA128_FP8_RECORD_K : CSA128_F32_RECORD_K;
  float record[CSA128_DIM_K];
  float *row;
  csa_cursor c;
  long long s;
  int d;
  if (threadIdx.x != 0 || b >= batch) return;
  c = csa_cursor_read(total_ptr, seq, kv_len, CSA128_RATIO_K);
  if (!csa_cursor_fits(&c, past_capacity, present_capacity)) return;
  row = carry + b * CSA128_REF_CARRY_ROW;
  for (s = 0; s < seq; s++) {
    const long long pos = c.start + s, in = (b * seq + s) * CSA128_DIM_K;
    const int slot = (int)(pos % CSA128_RATIO_K);
    for (d = 0; d < CSA128_DIM_K; d++) {
      ((nx_u32 *)row)[(2 * slot) * CSA128_DIM_K + d] = ((const nx_u32 *)kv)[in + d];
      row[(2 * slot + 1) * CSA128_DIM_K + d] = gate[in + d] + ape[slot * CSA128_DIM_K + d];
    }
    if ((pos + 1) % CSA128_RATIO_K != 0) continue; /* no record finishes here */
    csa128_ref_record(row, norm, pos - (CSA128_RATIO_K - 1), record,
                      cache + (b * present_capacity + (pos + 1) / CSA128_RATIO_K - 1) * record_bytes,
                      cache_fp8);
    csa128_ref_clear(row); /* the block is consumed */
  }
}

/*
** One block per output row (b, s, h) of Y [B, S, heads, 512], block-stride;
** the arguments as csa128.cu's csa128_attention (scores: the row's scores,
** stride 128 + Rc).  Record candidates: r < min(Rc, (position + 1) / 128).
*/
extern "C" __global__ void __launch_bounds__(REF_ATTN_THREADS) csa128_attention(
    const float *query, const float *current_kv, const nx_u8 *cache, const float *sink,
    const float *bias, int has_bias, long long bd0, long long bd1, long long bd2, long long bd3,
    float *y, float *scores, const long long *total_ptr, long long batch, long long seq,
    long long heads, long long kv_len, long long past_capacity, long long present_capacity,
    int cache_fp8, float scale) {
  __shared__ float row_max, row_den;
  const long long bias_dims[4] = {bd0, bd1, bd2, bd3};
  const long long rows = batch * seq * heads;
  const csa128_attention_shape shape = {seq, heads, kv_len, present_capacity,
                                        cache_fp8 ? CSA128_FP8_RECORD_K : CSA128_F32_RECORD_K, cache_fp8, scale,
                                        bias_dims};
  csa_cursor cur = csa_cursor_read(total_ptr, seq, kv_len, CSA128_RATIO_K);
  long long row;
  if (!csa_cursor_fits(&cur, past_capacity, present_capacity)) return;
  for (row = blockIdx.x; row < rows; row += gridDim.x) {
    csa_attention_row r;
    csa128_attention_row_at(&r, &shape, &cur, row, query, current_kv, cache, sink, has_bias ? bias : NULL, y, scores);
    csa_ref_attend_row(&r, &cur, &row_max, &row_den);
  }
}
