/*
** f4.h: four float lanes for the oracle's hot loops (csa_attention.c,
** csa4_index.c).  Each lane is one IEEE binary32 operation of its own: gcc
** and clang lower the type to SSE on x86-64 (NEON or scalars elsewhere),
** and -ffp-contract=off keeps a + b * c two roundings there too.  So four
** independent chains in one f4 give the bits of four scalar chains, in a
** quarter of the instructions; a loop that keeps a few f4 accumulators in
** registers runs that many chains side by side, each in its own order.
**
** Internal to oracle/.
*/
#ifndef ORACLE_F4_H
#define ORACLE_F4_H

#include <string.h>

typedef float f4 __attribute__((vector_size(16)));

static inline f4 f4_load(const float *p) { /* any alignment */
  f4 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void f4_store(float *p, f4 v) { memcpy(p, &v, sizeof v); }

static inline f4 f4_splat(float x) {
  const f4 v = {x, x, x, x};
  return v;
}

/* nx_maxf(x, +0.0f) lane by lane: x where x > 0, else +0 (negatives, -0 and NaN alike). */
static inline f4 f4_relu(f4 x) {
  typedef int i4 __attribute__((vector_size(16)));
  const i4 positive = x > f4_splat(0.0f); /* all ones, or zero: false for a NaN */
  return (f4)((i4)x & positive);
}

#endif
