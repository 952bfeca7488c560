/*
** ordered_sum.h: the one step every fast kernel's in-order float sums are
** made of, shared by the IndexShare and CSA kernels (index_share_row_scores.h,
** csa_attention_tiles.h), and a whole run of terms from shared memory added
** by one thread (the softmax's sum, ordered_sum_block.h's fallback).  CUDA
** C++.
**
** ordered_add4: sum + x.x + x.y + x.z + x.w, one IEEE add at a time, left to
** right: four terms of a chain loaded as one float4, added in the oracle's
** order.
*/
#ifndef ORDERED_SUM_H
#define ORDERED_SUM_H

static __device__ __forceinline__ float ordered_add4(float sum, float4 x) {
  sum = sum + x.x;
  sum = sum + x.y;
  sum = sum + x.z;
  return sum + x.w;
}

/*
** sum + x[0] + x[1] + ... + x[n - 1], in that order, x 16-byte aligned: the
** next eight terms are loaded while the last eight are added, so that the
** chain waits on its adds, not on shared-memory loads.
*/
static __device__ __forceinline__ float ordered_sum_run(const float *x, int n, float sum) {
  int i = 0;
  if (n >= 8) {
    float4 a = *(const float4 *)x, b = *(const float4 *)(x + 4);
    for (i = 8; i + 8 <= n; i += 8) {
      const float4 next_a = *(const float4 *)(x + i), next_b = *(const float4 *)(x + i + 4);
      sum = ordered_add4(ordered_add4(sum, a), b);
      a = next_a;
      b = next_b;
    }
    sum = ordered_add4(ordered_add4(sum, a), b);
  }
  for (; i < n; i++) sum = sum + x[i];
  return sum;
}

#endif /* ORDERED_SUM_H */
