/*
** numerics_exhaustive.c: `bitgate numerics check --exhaustive`, every binary32
** input of exp, of the sin/cos pair, and of pow(160000, y), against MPFR.
**
** The input range is split into chunks of 2^20 handed to all cores; progress
** goes to stderr.  sin and cos take MPFR once per positive input and check
** both x and -x with it: correct rounding to nearest is symmetric, so
** RN(sin(-x)) = -RN(sin x) and RN(cos(-x)) = RN(cos x) exactly, which halves
** the MPFR work without weakening the check.  --from/--to restrict the range so a long proof can be split
** across machines or sessions; the counts of the pieces add up.
*/
#include "harness/numerics_check.h"
#include "harness/numerics_ref.h"
#include "harness/parallel.h"
#include "oracle/numerics/numerics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (1ull << 20)

typedef struct sweep {
  const char *func;
  unsigned long long from, to;
  check_tally *per_thread;
  atomic_llong chunks_done;
  long long chunk_count;
  double start;
} sweep;

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check_one(const char *func, float x, check_tally *t) {
  if (!strcmp(func, "exp")) {
    float got = nx_expf(x), want = ref_expf(x);
    t->checked++;
    if (!check_same_f32(got, want)) {
      t->incorrect++;
      check_report("expf", "x=%a (0x%08x): got %a, MPFR %a", x, nx_f32_bits(x), got, want);
    }
  } else if (!strcmp(func, "sincos")) {
    float rs, rc;
    int sign;
    ref_sincosf(x, &rs, &rc); /* x >= +0 here: the sweep covers positive patterns */
    for (sign = 0; sign < 2; sign++) {
      float xs = sign ? -x : x, s = 0.0f, c = 0.0f, want_s = sign ? -rs : rs; /* set by nx_sincosf */
      nx_sincosf(xs, &s, &c);
      t->checked += 2;
      if (!check_same_f32(s, want_s)) {
        t->incorrect++;
        check_report("sinf", "x=%a (0x%08x): got %a, MPFR %a", xs, nx_f32_bits(xs), s, want_s);
      }
      if (!check_same_f32(c, rc)) {
        t->incorrect++;
        check_report("cosf", "x=%a (0x%08x): got %a, MPFR %a", xs, nx_f32_bits(xs), c, rc);
      }
    }
  } else { /* pow160000 */
    float got = nx_powf(160000.0f, x), want = ref_powf(160000.0f, x);
    t->checked++;
    if (!check_same_f32(got, want)) {
      t->incorrect++;
      check_report("powf", "pow(160000, %a): got %a, MPFR %a", x, got, want);
    }
  }
}

static void sweep_chunk(void *ctx, long long index, int thread) {
  sweep *s = ctx;
  unsigned long long lo = s->from + (unsigned long long)index * CHUNK, hi = lo + CHUNK, u;
  long long done;
  if (hi > s->to) hi = s->to;
  for (u = lo; u < hi; u++) check_one(s->func, nx_f32_from_bits((nx_u32)u), &s->per_thread[thread]);
  done = atomic_fetch_add(&s->chunks_done, 1) + 1;
  if (done % 64 == 0 || done == s->chunk_count) {
    double el = wall_seconds() - s->start;
    fprintf(stderr, "  %s: %5.1f%% after %.0f s, about %.0f s left\n", s->func,
            100.0 * (double)done / (double)s->chunk_count, el,
            el * (double)(s->chunk_count - done) / (double)done);
  }
}

int numerics_check_exhaustive(const char *func, unsigned long long from, unsigned long long to,
                              int threads, FILE *out, check_tally *total) {
  sweep s;
  check_tally sum = {0, 0};
  int t;
  if (strcmp(func, "exp") && strcmp(func, "sincos") && strcmp(func, "pow160000")) return -1;
  memset(&s, 0, sizeof s);
  s.func = func;
  s.from = from;
  s.to = to;
  if (!strcmp(func, "sincos")) { /* positive patterns; each also checks its negative */
    if (s.to > 0x80000000ull) s.to = 0x80000000ull;
    if (s.from >= s.to) return 0;
  }
  s.chunk_count = (long long)((s.to - s.from + CHUNK - 1) / CHUNK);
  s.per_thread = calloc((size_t)threads, sizeof *s.per_thread);
  if (!s.per_thread) return -1;
  atomic_init(&s.chunks_done, 0);
  s.start = wall_seconds();
  if (parallel_for(s.chunk_count, threads, sweep_chunk, &s, numerics_ref_thread_done) != 0) {
    free(s.per_thread);
    return -1;
  }
  for (t = 0; t < threads; t++) {
    sum.checked += s.per_thread[t].checked;
    sum.incorrect += s.per_thread[t].incorrect;
  }
  fprintf(out, "exhaustive %-9s [0x%08llx, 0x%09llx)%s: %lld checked, %lld incorrect, %.1f s on %d threads\n",
          func, s.from, s.to, strcmp(func, "sincos") ? "" : " and negatives", sum.checked, sum.incorrect,
          wall_seconds() - s.start, threads);
  fflush(out);
  total->checked += sum.checked;
  total->incorrect += sum.incorrect;
  free(s.per_thread);
  return 0;
}
