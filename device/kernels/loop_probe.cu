/*
** loop_probe.cu: the B = 1 attention's inner loops alone, for `bitgate bench
** --loops` (harness/bench_loops.c).  Each kernel stages made-up operands in
** shared memory as its pass does, then runs the pass's own loop function
** (csa_attention_tiles.h, csa_attention_resident.h: called, not copied) `reps`
** times on one chain, and thread 0 stamps the loop with clock64.  So a
** figure is the very loop the pass runs, compiled under the pinned options,
** without the pass's staging, barriers and global loads around it: what the
** loop costs a term where nothing else holds it.
**
** Every kernel takes (a, b, n, reps, out, cycles): a and b the operands in
** global memory, n the terms a loop call, out the chains' sums (the host
** redoes them in C and compares bits, so a loop that no longer sums in the
** oracle's order posts no figure), cycles[block] thread 0's loop cycles.
**
**   loop_probe_values_narrow  the narrow values pass's chains (two heads a
**                             thread, up to 128 threads: warp w = heads 2w
**                             and 2w + 1, lane = dim):
**                             csa_weighted_pair_in_order over n <= 256
**                             staged candidates.  a = p [8][n], b = v
**                             [n][32].  Two sums a thread.
**   loop_probe_add_chain      the same threads adding the same products with
**                             every operand in registers (probe_weighted4 on
**                             the first four terms, n / 4 times a call): the
**                             floor the values chain would reach were its
**                             loads free.
**   loop_probe_scores_resident the narrow scores pass's stage (up to 128
**                             threads, its chain warps: 4 heads x 1
**                             candidate a thread as in the pass):
**                             csa_resident_stage over the 32 staged dims.
**                             a = q [32][32], b = k [16][32]; n unused.
**                             Four sums a thread.
**   loop_probe_softmax_sum    the softmax pass's thread 0 sum:
**                             ordered_sum_run over n <= 1,024 staged exps.
**                             a = w [n]; b unused.  One sum a block.
**
** Below them, candidates, checked the same way: a shape of the values loop
** (the values staged transposed), on the same operands; and
** loop_probe_softmax_segments, the softmax's sum taken a segment a
** half-warp (ordered_sum_block.h) over the softmax probe's exps, padded to
** whole segments, the whole block's call stamped (its barrier in it).  256
** threads; the sum restarts from +0 each rep.  One sum a block.
*/
#include "csa_attention_abi.h"
#include "numerics.h"
#include "nx_csa.h"
#include "csa_kernel_common.h"
#include "csa_sink_attention.h"
#include "csa_attention_tiles.h"
#include "ordered_sum_block.h"

/* acc + p.x * v0 + ... + p.w * v3, one term at a time: one head's chain, four terms of it. */
static __device__ __forceinline__ float probe_weighted4(float acc, float4 p, float v0, float v1, float v2,
                                                      float v3) {
  acc = acc + p.x * v0;
  acc = acc + p.y * v1;
  acc = acc + p.z * v2;
  return acc + p.w * v3;
}

/* The values probes' operands into shared memory as the pass stages them: p [8][n], v [n][32]. */
static __device__ void probe_stage_values(float (*ps)[CSA_NARROW_VALUE_CHUNK], float (*vs)[CSA_NARROW_VALUE_DIMS],
                                          const float *a, const float *b, int n) {
  int i;
  for (i = threadIdx.x; i < CSA_NARROW_VALUE_HEADS * n; i += blockDim.x) ps[i / n][i % n] = a[i];
  for (i = threadIdx.x; i < n * CSA_NARROW_VALUE_DIMS; i += blockDim.x)
    vs[i / CSA_NARROW_VALUE_DIMS][i % CSA_NARROW_VALUE_DIMS] = b[i];
  __syncthreads();
}

/*
** A caveat: ptxas schedules the same function differently here.  In the
** pass (128 registers) it issues each load about 24 instructions before its
** use; here (33 registers, with or without the pass's launch bounds) 6 to
** 14.  So this probe reads more cycles a term than the pass's chains take
** (12.4-13.5 in the thirty-seventh round, where the old one-chain loop read
** 13.9 and the pass gained about 3.7 cycles a term over it): an upper bound
** (docs/SPEED.md, thirty-seventh round).
*/
extern "C" __global__ void loop_probe_values_narrow(const float *a, const float *b, int n, int reps, float *out,
                                                    long long *cycles) {
  __shared__ __align__(16) float ps[CSA_NARROW_VALUE_HEADS][CSA_NARROW_VALUE_CHUNK];
  __shared__ __align__(16) float vs[CSA_NARROW_VALUE_CHUNK][CSA_NARROW_VALUE_DIMS];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  float acc0 = 0.0f, acc1 = 0.0f;
  long long t0;
  int r;
  probe_stage_values(ps, vs, a, b, n);
  t0 = clock64();
  for (r = 0; r < reps; r++) csa_weighted_pair_in_order(ps[2 * warp], ps[2 * warp + 1], &vs[0][lane], n, &acc0, &acc1);
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  out[2 * (blockIdx.x * blockDim.x + tid)] = acc0;
  out[2 * (blockIdx.x * blockDim.x + tid) + 1] = acc1;
}

extern "C" __global__ void loop_probe_add_chain(const float *a, const float *b, int n, int reps, float *out,
                                                long long *cycles) {
  __shared__ __align__(16) float ps[CSA_NARROW_VALUE_HEADS][4];
  __shared__ float vs[4][CSA_NARROW_VALUE_DIMS];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  float acc = 0.0f, v0, v1, v2, v3;
  float4 p4;
  long long t0;
  int i, r;
  for (i = tid; i < CSA_NARROW_VALUE_HEADS * 4; i += blockDim.x) ps[i / 4][i % 4] = a[(i / 4) * n + i % 4];
  for (i = tid; i < 4 * CSA_NARROW_VALUE_DIMS; i += blockDim.x) vs[i / CSA_NARROW_VALUE_DIMS][i % CSA_NARROW_VALUE_DIMS] = b[i];
  __syncthreads();
  p4 = *(const float4 *)ps[warp];
  v0 = vs[0][lane], v1 = vs[1][lane], v2 = vs[2][lane], v3 = vs[3][lane];
  t0 = clock64();
  for (r = 0; r < reps; r++) {
#pragma unroll 4
    for (i = 0; i < n; i += 4) acc = probe_weighted4(acc, p4, v0, v1, v2, v3);
  }
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  out[blockIdx.x * blockDim.x + tid] = acc;
}

extern "C" __global__ void loop_probe_scores_resident(const float *a, const float *b, int n, int reps, float *out,
                                                      long long *cycles) {
  __shared__ __align__(16) float qs[CSA_RESIDENT_HEADS][CSA_RESIDENT_K + 4];
  __shared__ __align__(16) float ks[CSA_RESIDENT_CANDS][CSA_ATTN_DIM + 4]; /* the pass's rows: their first stage */
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int hl = 8 * warp + 4 * (lane / 16), cl = lane % 16; /* as csa_attn_scores_resident */
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  long long t0;
  int i, r;
  (void)n;
  for (i = tid; i < CSA_RESIDENT_HEADS * CSA_RESIDENT_K; i += blockDim.x) qs[i / CSA_RESIDENT_K][i % CSA_RESIDENT_K] = a[i];
  for (i = tid; i < CSA_RESIDENT_CANDS * CSA_RESIDENT_K; i += blockDim.x) ks[i / CSA_RESIDENT_K][i % CSA_RESIDENT_K] = b[i];
  __syncthreads();
  t0 = clock64();
  for (r = 0; r < reps; r++) {
    csa_resident_stage(acc, qs, ks[cl], hl);
    __syncwarp(); /* else the compiler keeps the stage's 160 operands in registers across reps: no loads timed */
  }
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  for (i = 0; i < 4; i++) out[4 * (blockIdx.x * blockDim.x + tid) + i] = acc[i];
}

extern "C" __global__ void loop_probe_softmax_sum(const float *a, const float *b, int n, int reps, float *out,
                                                  long long *cycles) {
  __shared__ __align__(16) float batch[CSA_SOFTMAX_BATCH];
  float sum = 0.0f;
  long long t0;
  int i, r;
  (void)b;
  for (i = threadIdx.x; i < n; i += blockDim.x) batch[i] = a[i];
  __syncthreads();
  if (threadIdx.x) return;
  t0 = clock64();
  for (r = 0; r < reps; r++) sum = ordered_sum_run(batch, n, sum);
  cycles[blockIdx.x] = clock64() - t0;
  out[blockIdx.x] = sum;
}

extern "C" __global__ void loop_probe_softmax_segments(const float *a, const float *b, int n, int reps, float *out,
                                                       long long *cycles) {
  __shared__ __align__(16) float batch[CSA_SOFTMAX_BATCH];
  __shared__ ordered_block_scratch scratch;
  const int seg = (n + 4 * ORDERED_BLOCK_SEGMENTS - 1) / (4 * ORDERED_BLOCK_SEGMENTS) * 4;
  float sum = 0.0f;
  long long t0;
  int i, r;
  (void)b;
  for (i = threadIdx.x; i < ORDERED_BLOCK_SEGMENTS * seg; i += blockDim.x) batch[i] = i < n ? a[i] : 0.0f;
  __syncthreads();
  t0 = clock64();
  for (r = 0; r < reps; r++) {
    sum = ordered_block_sum(batch, seg, &scratch);
    __syncthreads(); /* warp 0 is done with the scratch */
  }
  if (threadIdx.x) return;
  cycles[blockIdx.x] = clock64() - t0;
  out[blockIdx.x] = sum;
}

/*
** A candidate: a loop shape the narrow values pass could take instead (the
** ninth round tried it inside the pass, one head a thread; it did not
** shorten it).  Alone, beside the pass's own loop above, it shows whether
** the loop's shape can matter at all.  Same operands as
** loop_probe_values_narrow, each chain p . v over the candidates ascending
** from acc, one chain a thread (warp = head).
*/

/* The values staged transposed (a dim's candidates a shared row), four terms of p and of v two 16-byte reads. */
extern "C" __global__ void loop_probe_values_transposed(const float *a, const float *b, int n, int reps, float *out,
                                                        long long *cycles) {
  __shared__ __align__(16) float ps[CSA_NARROW_VALUE_HEADS][CSA_NARROW_VALUE_CHUNK];
  __shared__ __align__(16) float vt[CSA_NARROW_VALUE_DIMS][CSA_NARROW_VALUE_CHUNK + 4]; /* + 4: rows on other banks */
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const float *p = ps[warp], *v = vt[lane];
  float acc = 0.0f;
  long long t0;
  int i, r;
  for (i = tid; i < CSA_NARROW_VALUE_HEADS * n; i += blockDim.x) ps[i / n][i % n] = a[i];
  for (i = tid; i < n * CSA_NARROW_VALUE_DIMS; i += blockDim.x) vt[i % CSA_NARROW_VALUE_DIMS][i / CSA_NARROW_VALUE_DIMS] = b[i];
  __syncthreads();
  t0 = clock64();
  for (r = 0; r < reps; r++) {
    float4 p4 = *(const float4 *)p, v4 = *(const float4 *)v;
    for (i = 4; i < n; i += 4) {
      const float4 np4 = *(const float4 *)(p + i), nv4 = *(const float4 *)(v + i);
      acc = probe_weighted4(acc, p4, v4.x, v4.y, v4.z, v4.w);
      p4 = np4, v4 = nv4;
    }
    acc = probe_weighted4(acc, p4, v4.x, v4.y, v4.z, v4.w);
  }
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  out[blockIdx.x * blockDim.x + tid] = acc;
}
