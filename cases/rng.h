/*
** rng.h: the counter-based generator every case tensor is drawn from
** (DESIGN.md "Cases, ids, corpus").
**
** Contract: cases_rng_u64(seed, stream, step, i) is a pure function of its
** four arguments.  There is no state, so element i of a tensor comes out the
** same whatever order, thread or platform computes it in.  The mix is
** SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable
** pseudorandom number generators", 2014) applied once per key word:
**   h = mix(mix(mix(seed) ^ (stream << 32 | step)) ^ i)
** Only 64-bit unsigned integer arithmetic is used, which C defines exactly.
**
** The float helpers turn those bits into floats with exact integer-to-float
** conversions and one rounding per IEEE operation; the build's
** -ffp-contract=off keeps them from being fused, so they too are the same
** everywhere.  They never call libm.
*/
#ifndef CASES_RNG_H
#define CASES_RNG_H

#include <stdint.h>

/* 64 random bits for element i of stream `stream` at step `step`. */
uint64_t cases_rng_u64(uint64_t seed, uint32_t stream, uint32_t step, uint64_t i);

/* A float in [lo, hi): lo + (hi - lo) * u, u a multiple of 2^-24 in [0, 1). */
float cases_rng_uniform(uint64_t bits, float lo, float hi);

/* A bell-shaped float with mean 0 and variance 1 in [-2*sqrt(3), 2*sqrt(3)]:
** the Irwin-Hall sum of four 16-bit uniforms, centred and scaled. */
float cases_rng_normalish(uint64_t bits);

/* An integer in [lo, hi] (inclusive; lo <= hi).  bits mod the span: the bias
** is below 2^-40 for the spans cases use, and it is deterministic. */
long long cases_rng_range(uint64_t bits, long long lo, long long hi);

/*
** A stream cursor for draws that are not tied to one element (configuration
** choices, row lengths): the n-th call to cases_rng_next returns
** cases_rng_u64(seed, stream, step, base + n).
*/
typedef struct cases_rng {
  uint64_t seed, counter;
  uint32_t stream, step;
} cases_rng;

void cases_rng_init(cases_rng *r, uint64_t seed, uint32_t stream, uint32_t step, uint64_t base);
uint64_t cases_rng_next(cases_rng *r);
long long cases_rng_next_range(cases_rng *r, long long lo, long long hi);

#endif
