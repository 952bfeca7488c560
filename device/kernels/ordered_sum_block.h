/*
** ordered_sum_block.h: one in-order float sum, ((+0 + x[0]) + x[1]) + ... +
** x[n - 1], taken by a whole block in about n / ORDERED_BLOCK_SEGMENTS
** dependent adds instead of n.  CUDA C++.
**
** Why: at B = 1 the softmax's denominator is one such sum of 640 terms a
** block, 640 dependent adds (about 4.8 cycles each on an H100: 1.5 us), a
** large part of that pass.  No kernel calls it yet: the fortieth round of
** docs/SPEED.md measured its first form inside the softmax and found it
** too slow to keep; `bench --loops` times this form as a candidate.
**
** How it stays exact: the terms are cut into ORDERED_BLOCK_SEGMENTS
** segments, one a half-warp.  What a segment adds up to depends on the
** float it starts from, which is only known once every segment before it
** is added; but that float is close to the exact (real) sum of the terms
** before it, which the half-warp estimates first.  So it adds its segment
** from ORDERED_BLOCK_GUESSES consecutive floats around the estimate at
** once, four a lane.  Then warp 0 walks the segments in order: where the
** true start is one of the segment's guesses, that guess's result is the
** segment's, bit for bit (the same adds, in the same order, from the same
** float); where it is not, the warp adds the segment itself.  The result
** never depends on the estimates, only the time does: a guess misses where
** rounding drifted the ordered sum far from the exact one (tiny terms
** after a large one).
**
** Every thread of the block calls ordered_block_sum (at least
** ORDERED_BLOCK_SEGMENTS / 2 warps); it holds one __syncthreads.
*/
#ifndef ORDERED_SUM_BLOCK_H
#define ORDERED_SUM_BLOCK_H

#include "ordered_sum.h"

#define ORDERED_BLOCK_SEGMENTS 8
#define ORDERED_BLOCK_GUESSES 64 /* a segment's starts: its estimate - 32 .. + 31 */
#define ORDERED_BLOCK_LANE_GUESSES (ORDERED_BLOCK_GUESSES / 16)

typedef struct ordered_block_scratch {
  unsigned first[ORDERED_BLOCK_SEGMENTS];                 /* the bits of each segment's first guess */
  float end[ORDERED_BLOCK_SEGMENTS][ORDERED_BLOCK_GUESSES]; /* each guess's sum at the segment's end */
  int missed;                                              /* segments whose true start no guess had */
} ordered_block_scratch;

/* x[0] + ... + x[n - 1] in any order (n a multiple of 4), to every lane of a half-warp, l16 its lane. */
static __device__ __forceinline__ float ordered_block_estimate(const float *x, int n, int l16) {
  float a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
  int i, off;
  for (i = 4 * l16; i < n; i += 64) {
    const float4 t = *(const float4 *)(x + i);
    a = a + t.x, b = b + t.y, c = c + t.z, d = d + t.w;
  }
  a = (a + b) + (c + d);
  for (off = 8; off > 0; off /= 2) a = a + __shfl_xor_sync(0xffffffffu, a, off); /* within the half-warp */
  return a;
}

/* A segment's x[0 .. seg - 1] from four consecutive starts, the first with the bits `first`. */
static __device__ __forceinline__ float4 ordered_block_guesses(const float *x, int seg, unsigned first) {
  float4 a = make_float4(__uint_as_float(first), __uint_as_float(first + 1u), __uint_as_float(first + 2u),
                         __uint_as_float(first + 3u));
  float4 t = *(const float4 *)x;
  int i;
#pragma unroll 4
  for (i = 4; i <= seg; i += 4) {
    const float4 next = *(const float4 *)(x + (i < seg ? i : 0)); /* the last step rereads x[0..3], unused */
    a.x = ordered_add4(a.x, t), a.y = ordered_add4(a.y, t), a.z = ordered_add4(a.z, t), a.w = ordered_add4(a.w, t);
    t = next;
  }
  return a;
}

/*
** The ordered sum of x[0 .. ORDERED_BLOCK_SEGMENTS * seg - 1] (shared
** memory, 16-byte aligned, seg a multiple of 4; pad with +0, which leaves a
** sum of terms >= +0 as it is), returned to warp 0's lanes (the others'
** return is not the sum); s->missed counts the segments warp 0 added
** itself.  x must be written, and a barrier passed, before the call.
*/
static __device__ float ordered_block_sum(const float *x, int seg, ordered_block_scratch *s) {
  const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
  float sum = 0.0f;
  if (warp < ORDERED_BLOCK_SEGMENTS / 2) { /* half-warp h: segment h */
    const int segment = 2 * warp + lane / 16, l16 = lane % 16;
    const unsigned first =
        __float_as_uint(ordered_block_estimate(x, segment * seg, l16)) - ORDERED_BLOCK_GUESSES / 2;
    *(float4 *)&s->end[segment][ORDERED_BLOCK_LANE_GUESSES * l16] =
        ordered_block_guesses(x + segment * seg, seg, first + ORDERED_BLOCK_LANE_GUESSES * l16);
    if (l16 == 0) s->first[segment] = first;
  }
  __syncthreads(); /* the guesses' ends */
  if (warp == 0) { /* every lane walks the same way: `at` is the warp's */
    float2 end[ORDERED_BLOCK_SEGMENTS];
    int w, missed = 0;
#pragma unroll
    for (w = 0; w < ORDERED_BLOCK_SEGMENTS; w++) end[w] = *(const float2 *)&s->end[w][2 * lane];
#pragma unroll
    for (w = 0; w < ORDERED_BLOCK_SEGMENTS; w++) {
      const unsigned at = __float_as_uint(sum) - s->first[w]; /* guess `at` started from sum's very bits */
      if (at < ORDERED_BLOCK_GUESSES) {
        const float even = __shfl_sync(0xffffffffu, end[w].x, (int)(at / 2));
        const float odd = __shfl_sync(0xffffffffu, end[w].y, (int)(at / 2));
        sum = at % 2 ? odd : even;
      } else {
        sum = ordered_sum_run(x + w * seg, seg, sum), missed++;
      }
    }
    if (lane == 0) s->missed = missed; /* for the probe's tests (ordered_sum_probe.cu) */
  }
  return sum;
}

#endif /* ORDERED_SUM_BLOCK_H */
