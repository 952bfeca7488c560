/*
** rng.c: see rng.h (the per-element draws are inline there).
*/
#include "cases/rng.h"

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
