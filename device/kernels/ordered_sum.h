/*
** ordered_sum.h: the one step every fast kernel's in-order float sums are
** made of, shared by the IndexShare and CSA kernels (index_share_row_scores.h,
** csa_attention_tiles.h).  CUDA C++.
**
** sum + x.x + x.y + x.z + x.w, one IEEE add at a time, left to right: four
** terms of a chain loaded as one float4, added in the oracle's order.
*/
#ifndef ORDERED_SUM_H
#define ORDERED_SUM_H

static __device__ __forceinline__ float ordered_add4(float sum, float4 x) {
  sum = sum + x.x;
  sum = sum + x.y;
  sum = sum + x.z;
  return sum + x.w;
}

#endif /* ORDERED_SUM_H */
