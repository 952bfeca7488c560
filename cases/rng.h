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

/*
** The draws are inline: a fill makes one per element, and inlined, the two
** mixes of (seed, stream, step) are the same for every element of a loop and
** move out of it, so an element costs one mix instead of three.  Inlining
** changes no bit: integer arithmetic, and float operations that the build
** neither fuses nor widens.
*/

/* SplitMix64: add the golden-ratio increment, then the variant-13 finaliser. */
static inline uint64_t cases_rng_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* 64 random bits for element i of stream `stream` at step `step`. */
static inline uint64_t cases_rng_u64(uint64_t seed, uint32_t stream, uint32_t step, uint64_t i) {
  const uint64_t key = cases_rng_mix(cases_rng_mix(seed) ^ ((uint64_t)stream << 32 | step));
  return cases_rng_mix(key ^ i);
}

/* A float in [lo, hi): lo + (hi - lo) * u, u a multiple of 2^-24 in [0, 1). */
static inline float cases_rng_uniform(uint64_t bits, float lo, float hi) {
  const float u = (float)(bits >> 40) * 0x1p-24f; /* exact: 24 bits fit a float */
  return lo + (hi - lo) * u;
}

/*
** A bell-shaped float with mean 0 and variance 1 in [-2*sqrt(3), 2*sqrt(3)]:
** the Irwin-Hall sum of four 16-bit uniforms, centred and scaled.  The sum is
** an exact integer in [0, 262140]; each uniform has variance (2^32 - 1) / 12,
** so the sum's deviation is 65535 / sqrt(3) (to within 2^-16).
*/
static inline float cases_rng_normalish(uint64_t bits) {
  const long long s = (long long)(bits & 0xffff) + (long long)(bits >> 16 & 0xffff) +
                      (long long)(bits >> 32 & 0xffff) + (long long)(bits >> 48);
  return (float)(s - 131070) * (1.7320508f / 65535.0f);
}

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
