/*
** ordered_sum_probe.cu: ordered_block_sum (ordered_sum_block.h) on rows the
** tests choose, so that both of its paths are checked against a plain loop
** whatever the gate's cases happen to reach (device/tests/test_ordered_sum.c).
**
** ordered_sum_probe: block b sums row b, x[b * ORDERED_PROBE_ROW ..], n[b]
** terms (at most ORDERED_PROBE_ROW), padded with +0 to whole segments;
** thread 0 writes the sum to sum[b] and the number of segments warp 0 added
** itself to missed[b].  Launched with 256 threads a block: warp w fills
** segment w.
*/
#include "ordered_sum_block.h"

#define ORDERED_PROBE_ROW 1024

extern "C" __global__ void ordered_sum_probe(const float *x, const int *n, float *sum, int *missed) {
  __shared__ __align__(16) float terms[ORDERED_PROBE_ROW];
  __shared__ ordered_block_scratch scratch;
  const int row = blockIdx.x, count = n[row], lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int seg = (count + 4 * ORDERED_BLOCK_SEGMENTS - 1) / (4 * ORDERED_BLOCK_SEGMENTS) * 4;
  float total;
  int k;
  for (k = lane; k < seg; k += 32) {
    const int i = warp * seg + k;
    terms[i] = i < count ? x[(long long)row * ORDERED_PROBE_ROW + i] : 0.0f;
  }
  __syncthreads();
  total = ordered_block_sum(terms, seg, &scratch);
  if (threadIdx.x == 0) sum[row] = total, missed[row] = scratch.missed;
}
