/*
** ordered_sum_block.h: one in-order float sum, ((+0 + x[0]) + x[1]) + ... +
** x[n - 1], taken by a whole block in about n / ORDERED_BLOCK_WARPS
** dependent adds instead of n.  CUDA C++, included after ordered_sum.h.
**
** Why: at B = 1 the softmax's denominator is one such sum of 640 terms a
** block, and its 640 dependent adds (about 4.8 cycles each: 1.5 us) were
** the largest part of the pass (docs/SPEED.md, fortieth round).
**
** How it stays exact: the terms are cut into one segment a warp.  What a
** segment adds up to depends on the float it starts from, which is only
** known once every segment before it is added; but that float is close to
** the exact (real) sum of the terms before it, which each warp can estimate
** in parallel.  So each warp adds its segment from ORDERED_BLOCK_GUESSES
** consecutive floats around its estimate at once, two a lane.  Then one
** thread walks the segments in order: where the true start is one of the
** segment's guesses, that guess's result is the segment's, bit for bit (the
** same adds, in the same order, from the same float); where it is not,
** the thread adds the segment itself.  The result never depends on the
** estimates, only the time does: a guess misses where rounding drifted the
** ordered sum far from the exact one (tiny terms after a large one).
**
** Every thread of the block calls ordered_block_sum, with blockDim.x ==
** 32 * ORDERED_BLOCK_WARPS; it holds two __syncthreads.
*/
#ifndef ORDERED_SUM_BLOCK_H
#define ORDERED_SUM_BLOCK_H

#define ORDERED_BLOCK_WARPS 8
#define ORDERED_BLOCK_LANE_GUESSES 2
#define ORDERED_BLOCK_GUESSES (32 * ORDERED_BLOCK_LANE_GUESSES) /* a segment's starts: estimate - 32 .. + 31 */

typedef struct ordered_block_scratch {
  double part[ORDERED_BLOCK_WARPS];                       /* each segment's terms, summed in any order */
  unsigned first[ORDERED_BLOCK_WARPS];                    /* the bits of each segment's first guess */
  float end[ORDERED_BLOCK_WARPS][ORDERED_BLOCK_GUESSES]; /* each guess's sum at the segment's end */
  int missed;                                            /* segments whose true start no guess had */
} ordered_block_scratch;

/* sum + x[0] + ... + x[seg - 1], one add at a time; seg a multiple of 4, x 16-byte aligned. */
static __device__ __forceinline__ float ordered_block_serial(const float *x, int seg, float sum) {
  int i;
  for (i = 0; i < seg; i += 4) sum = ordered_add4(sum, *(const float4 *)(x + i));
  return sum;
}

/*
** Warp w's segment, x[w * seg .. w * seg + seg - 1], from its two guesses a
** lane: the bits of the segment's first guess, plus 2 * lane and 2 * lane +
** 1.  Every lane reads the same terms (a broadcast), the next four loaded
** while the last four are added.
*/
static __device__ __forceinline__ void ordered_block_guesses(const float *x, int seg, unsigned first, int lane,
                                                             float *end0, float *end1) {
  float a0 = __uint_as_float(first + 2u * (unsigned)lane), a1 = __uint_as_float(first + 2u * (unsigned)lane + 1u);
  float4 t = *(const float4 *)x;
  int i;
#pragma unroll 4
  for (i = 4; i <= seg; i += 4) {
    const float4 next = *(const float4 *)(x + (i < seg ? i : 0)); /* the last step rereads x[0..3], unused */
    a0 = ordered_add4(a0, t);
    a1 = ordered_add4(a1, t);
    t = next;
  }
  *end0 = a0, *end1 = a1;
}

/*
** The ordered sum of x[0 .. ORDERED_BLOCK_WARPS * seg - 1] (shared memory,
** 16-byte aligned, seg a multiple of 4; pad with +0, which leaves a sum of
** terms >= +0 as it is), returned to thread 0 (the other threads' return is
** not the sum; s->missed counts the segments thread 0 added itself).
** `mine`: the calling thread's share of its warp's segment,
** summed in any order (its lanes' shares cover the segment once), for the
** estimates.  x must be written before the call and is only read by it.
*/
static __device__ float ordered_block_sum(const float *x, int seg, double mine, ordered_block_scratch *s) {
  const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
  double before = 0.0;
  float end0, end1, sum = 0.0f;
  unsigned first;
  int off, w, missed = 0;
  for (off = 16; off > 0; off /= 2) mine += __shfl_xor_sync(0xffffffffu, mine, off);
  if (lane == 0) s->part[warp] = mine;
  __syncthreads(); /* x and the parts */
  for (w = 0; w < warp; w++) before += s->part[w];
  first = __float_as_uint(__double2float_rn(before)) - ORDERED_BLOCK_GUESSES / 2;
  ordered_block_guesses(x + warp * seg, seg, first, lane, &end0, &end1);
  s->end[warp][2 * lane] = end0, s->end[warp][2 * lane + 1] = end1;
  if (lane == 0) s->first[warp] = first;
  __syncthreads(); /* the guesses' ends */
  if (threadIdx.x != 0) return sum;
  for (w = 0; w < ORDERED_BLOCK_WARPS; w++) {
    const unsigned at = __float_as_uint(sum) - s->first[w]; /* guess `at` started from sum's very bits */
    if (at < ORDERED_BLOCK_GUESSES) sum = s->end[w][at];
    else sum = ordered_block_serial(x + w * seg, seg, sum), missed++;
  }
  s->missed = missed; /* for the probe's tests (ordered_sum_probe.cu) */
  return sum;
}

#endif /* ORDERED_SUM_BLOCK_H */
