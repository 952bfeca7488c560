/*
** rng.c: see rng.h.
*/
#include "cases/rng.h"

/* SplitMix64: add the golden-ratio increment, then the variant-13 finaliser. */
static uint64_t rng_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t cases_rng_u64(uint64_t seed, uint32_t stream, uint32_t step, uint64_t i) {
  uint64_t h = rng_mix(seed);
  h = rng_mix(h ^ ((uint64_t)stream << 32 | step));
  return rng_mix(h ^ i);
}

float cases_rng_uniform(uint64_t bits, float lo, float hi) {
  float u = (float)(bits >> 40) * 0x1p-24f; /* exact: 24 bits fit a float */
  return lo + (hi - lo) * u;
}

float cases_rng_normalish(uint64_t bits) {
  /* The sum of four 16-bit uniforms is an exact integer in [0, 262140]; each
  ** has variance (2^32 - 1) / 12, so the sum's deviation is 65535 / sqrt(3)
  ** (to within 2^-16). */
  long long s = (long long)(bits & 0xffff) + (long long)(bits >> 16 & 0xffff) +
                (long long)(bits >> 32 & 0xffff) + (long long)(bits >> 48);
  return (float)(s - 131070) * (1.7320508f / 65535.0f);
}

long long cases_rng_range(uint64_t bits, long long lo, long long hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1u;
  if (span == 0) return (long long)bits; /* the whole 64-bit range */
  return (long long)((uint64_t)lo + bits % span);
}

void cases_rng_init(cases_rng *r, uint64_t seed, uint32_t stream, uint32_t step, uint64_t base) {
  r->seed = seed;
  r->stream = stream;
  r->step = step;
  r->counter = base;
}

uint64_t cases_rng_next(cases_rng *r) { return cases_rng_u64(r->seed, r->stream, r->step, r->counter++); }

long long cases_rng_next_range(cases_rng *r, long long lo, long long hi) {
  return cases_rng_range(cases_rng_next(r), lo, hi);
}
