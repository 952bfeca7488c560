/*
** numerics_check.c: the stratified numerics check and the check runner.
**
** Sampling (DESIGN.md, issue "Foundation" item 6): every one-argument function
** is evaluated on 2^24 inputs, 32768 in each of the 512 strata that a sign and
** a biased exponent define, so every binade of both signs is covered; stratum
** edges put +-0, the smallest and largest subnormals, +-inf and NaNs in the
** sample; the hard inputs of DESIGN.md are added.  References are MPFR
** (numerics_ref.c).
*/
#include "harness/numerics_check.h"
#include "harness/numerics_ref.h"
#include "harness/parallel.h"
#include "oracle/numerics/numerics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STRATA 512
#define PER_STRATUM 32768 /* 512 * 32768 = 2^24 */
#define MAX_REPORTS 8

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static int reports_shown;

void check_report(const char *check, const char *fmt, ...) {
  va_list ap;
  pthread_mutex_lock(&report_lock);
  if (reports_shown++ < MAX_REPORTS) {
    fprintf(stderr, "  wrong %s: ", check);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
  }
  pthread_mutex_unlock(&report_lock);
}

unsigned long long check_hash(unsigned long long a, unsigned long long b, unsigned long long c) {
  unsigned long long z = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
  z ^= c * 0x94d049bb133111ebull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float check_stratum_sample(unsigned salt, int stratum, long long i) {
  static const nx_u32 edges[4] = {0, 1, 0x7fffff, 0x400000};
  nx_u32 m = i < 4 ? edges[i] : (nx_u32)check_hash(salt, (unsigned long long)stratum, (unsigned long long)i) & 0x7fffffu;
  return nx_f32_from_bits(((nx_u32)(stratum >> 8) << 31) | ((nx_u32)(stratum & 255) << 23) | m);
}

int check_same_f32(float a, float b) {
  return nx_f32_bits(a) == nx_f32_bits(b) || (nx_f32_is_nan(a) && nx_f32_is_nan(b));
}

/* ---- transcendentals ------------------------------------------------------ */

static const float exp_hard[] = {0x1.04845ep+5f, -0x1.d2259ap+3f};
static const float trig_hard[] = {0x1.33333p+13f, 0x1.3170fp+63f, 0x1.2b9622p+67f};

static void check_exp_one(float x, check_tally *t) {
  float got = nx_expf(x), want = ref_expf(x);
  t->checked++;
  if (!check_same_f32(got, want)) {
    t->incorrect++;
    check_report("expf", "x=%a (0x%08x): got %a, MPFR %a", x, nx_f32_bits(x), got, want);
  }
}

static void check_exp_unit(long long unit, check_tally *t) {
  long long i;
  for (i = 0; i < PER_STRATUM; i++) check_exp_one(check_stratum_sample(1, (int)unit, i), t);
  if (unit == 0)
    for (i = 0; i < (long long)(sizeof exp_hard / sizeof *exp_hard); i++) check_exp_one(exp_hard[i], t);
}

static void check_sincos_one(float x, check_tally *t) {
  float s, c, rs, rc;
  nx_sincosf(x, &s, &c);
  ref_sincosf(x, &rs, &rc);
  t->checked += 2;
  if (!check_same_f32(s, rs) || !check_same_f32(nx_sinf(x), s)) {
    t->incorrect++;
    check_report("sinf", "x=%a (0x%08x): got %a / sinf %a, MPFR %a", x, nx_f32_bits(x), s, nx_sinf(x), rs);
  }
  if (!check_same_f32(c, rc) || !check_same_f32(nx_cosf(x), c)) {
    t->incorrect++;
    check_report("cosf", "x=%a (0x%08x): got %a / cosf %a, MPFR %a", x, nx_f32_bits(x), c, nx_cosf(x), rc);
  }
}

static void check_sincos_unit(long long unit, check_tally *t) {
  long long i;
  for (i = 0; i < PER_STRATUM; i++) check_sincos_one(check_stratum_sample(2, (int)unit, i), t);
  if (unit == 0)
    for (i = 0; i < (long long)(sizeof trig_hard / sizeof *trig_hard); i++) {
      check_sincos_one(trig_hard[i], t);
      check_sincos_one(-trig_hard[i], t);
    }
}

static void check_pow_one(float x, float y, check_tally *t) {
  float got = nx_powf(x, y), want = ref_powf(x, y);
  t->checked++;
  if (!check_same_f32(got, want)) {
    t->incorrect++;
    check_report("powf", "x=%a y=%a: got %a, MPFR %a", x, y, got, want);
  }
}

/*
** pow samples, 2^24 in all: half with the RoPE base 160000 and y from every
** stratum; a quarter with x from every stratum and y an integer in [-30, 30] or
** a moderate float; a quarter in the region where results are ordinary
** numbers (x in [2^-30, 2^30], |y| < 4).
*/
static void check_pow_unit(long long unit, check_tally *t) {
  long long i;
  for (i = 0; i < PER_STRATUM; i++) {
    unsigned long long h = check_hash(3, (unsigned long long)unit, (unsigned long long)i);
    float x, y;
    if (i < PER_STRATUM / 2) {
      x = 160000.0f;
      y = check_stratum_sample(4, (int)unit, i);
    } else if (i < PER_STRATUM * 3 / 4) {
      x = check_stratum_sample(5, (int)unit, i);
      y = (h & 1) ? (float)((int)(h >> 8 & 63) - 30)
                  : nx_f32_from_bits(0x3c000000u + (nx_u32)(h >> 9 & 0x05ffffffu)) * ((h & 2) ? -1.0f : 1.0f);
    } else {
      x = nx_f32_from_bits(0x30800000u + (nx_u32)((h >> 4) % 0x1e000000u));
      y = (float)((double)(nx_i32)(h >> 32) * 0x1p-29);
    }
    check_pow_one(x, y, t);
  }
}

/*
** The whole domain of the RoPE frequency formula of the CSA seed,
** pow(160000, -(2p) / D) for every even rope dimension D <= 1024 and every
** pair p < D/2, the exponent computed in binary32 as the seed writes it.
*/
static void check_pow_rope_unit(long long unit, check_tally *t) {
  int dim = 2 * (int)(unit + 1), p;
  for (p = 0; p < dim / 2; p++) check_pow_one(160000.0f, -((float)(2 * p)) / (float)dim, t);
}

static const check_def transcendental_checks[] = {
    {"expf", STRATA, check_exp_unit},
    {"sinf+cosf", STRATA, check_sincos_unit},
    {"powf", STRATA, check_pow_unit},
    {"powf rope", 512, check_pow_rope_unit},
};

/* ---- runner --------------------------------------------------------------- */

typedef struct run_ctx {
  const check_def *def;
  check_tally *per_thread;
} run_ctx;

static void run_unit(void *ctx, long long index, int thread) {
  run_ctx *r = ctx;
  r->def->unit(index, &r->per_thread[thread]);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void check_run_all(const check_def *defs, int n, int threads, FILE *out, check_tally *total) {
  check_tally *per_thread = calloc((size_t)threads, sizeof *per_thread);
  int i, t;
  for (i = 0; i < n && per_thread; i++) {
    run_ctx r = {&defs[i], per_thread};
    check_tally sum = {0, 0};
    double start = now_seconds();
    memset(per_thread, 0, (size_t)threads * sizeof *per_thread);
    if (parallel_for(defs[i].units, threads, run_unit, &r, numerics_ref_thread_done) != 0) {
      fprintf(out, "%-14s could not start threads\n", defs[i].name);
      total->incorrect++;
      continue;
    }
    for (t = 0; t < threads; t++) {
      sum.checked += per_thread[t].checked;
      sum.incorrect += per_thread[t].incorrect;
    }
    fprintf(out, "%-14s %11lld checked, %lld incorrect (%.1f s)\n", defs[i].name, sum.checked,
            sum.incorrect, now_seconds() - start);
    fflush(out);
    total->checked += sum.checked;
    total->incorrect += sum.incorrect;
  }
  if (!per_thread) total->incorrect++;
  free(per_thread);
}

int numerics_check_sample(int threads, FILE *out, check_tally *total) {
  check_run_all(transcendental_checks, (int)(sizeof transcendental_checks / sizeof *transcendental_checks),
                threads, out, total);
  check_run_all(codec_checks, codec_check_count, threads, out, total);
  return total->incorrect != 0;
}
